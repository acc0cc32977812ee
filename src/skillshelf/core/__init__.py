"""The pure core: frontmatter, manifest and verdicts, catalog, search, session transitions,
slash substitution, and the rendering of what a model reads of a loaded skill (with the
escaping it needs). Nothing here opens a file, walks a folder or touches a socket."""
