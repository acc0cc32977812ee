"""The pure core: frontmatter, manifest and verdicts, catalog, search, session transitions,
slash substitution. Nothing here opens a file, walks a folder or touches a socket."""
