"""What the edge found in a skill folder, as values: a file tree and a file's text.

The edge (:mod:`skillshelf.skills.paths`) walks and reads; these types hold the result and
render it, so the text a model sees is decided here, without a filesystem.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skillshelf.core.markup import neutralize_tags, one_line
from skillshelf.errors import UsageError

__all__ = ["FileText", "FileTree", "TreeEntry", "human_size", "tree_order"]


def human_size(n: int) -> str:
    """Format a byte count for people: ``812 B``, ``1.2 KB``, ``3.4 MB`` (powers of 1000)."""
    if n < 0:
        raise UsageError(f"a size cannot be negative, got {n}")
    if n < 1000:
        return f"{n} B"
    value, unit = float(n), "B"
    for unit in ("KB", "MB", "GB", "TB"):  # noqa: B007 - the unit reached is the answer
        value /= 1000
        if round(value, 1) < 1000:
            break
    return f"{value:.1f} {unit}"


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One file or directory in a :class:`FileTree`.

    Attributes:
        path: POSIX path relative to the skill directory.
        is_dir: True for a directory (a symbolically linked one is listed, not entered).
        size: Size in bytes for files; None for directories.
        depth: 0 for the skill directory's own entries, 1 one level down, and so on.
    """

    path: str
    is_dir: bool
    size: int | None
    depth: int


def tree_order(entry: TreeEntry) -> tuple[tuple[bool, str, str], ...]:
    """Sort key of tree order: files before directories, by name, each directory's children
    right after it."""
    # A directory's key is a prefix of its children's keys, so it sorts right before them.
    parents = entry.path.split("/")
    name = parents.pop()
    last = (entry.is_dir, name.casefold(), name)
    if not parents:  # most entries of a skill: spare building the tuple from a list
        return (last,)
    return (*[(True, p.casefold(), p) for p in parents], last)


@dataclass(frozen=True, slots=True)
class FileTree:
    """A capped listing of a skill's files, in tree order (files before directories).

    The entries are put in tree order on construction, so the order a walk produced them in
    never reaches the rendered text.

    Attributes:
        entries: The entries shown.
        omitted: Entries left out by the depth or entry caps.
        omitted_is_lower_bound: True when the walk itself stopped, so more may exist.
    """

    entries: tuple[TreeEntry, ...]
    omitted: int
    omitted_is_lower_bound: bool = False
    # The rendered text, kept once made: a tree kept across calls (skills.walk_cache) is
    # rendered into every skill_load result.
    _text: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", tuple(sorted(self.entries, key=tree_order)))

    def render(self) -> str:
        """Return an indented tree, one entry a line, ending with a note on what was left out."""
        text = self._text
        if text is None:
            text = self._render()
            object.__setattr__(self, "_text", text)
        return text

    def _render(self) -> str:
        lines = [_render_entry(entry) for entry in self.entries]
        if self.omitted:
            count = ("at least " if self.omitted_is_lower_bound else "") + f"{self.omitted:,}"
            noun = "entry" if self.omitted == 1 else "entries"
            lines.append(f"[… {count} more {noun} not shown]")
        return "\n".join(lines) if lines else "(no files)"


def _render_entry(entry: TreeEntry) -> str:
    # A file name may hold a line break or a tag: one entry must stay one line of the tree
    # (each check first, as both functions do, so that a plain name costs no call).
    name = entry.path.rpartition("/")[2]
    if not name.isprintable():
        name = one_line(name)
    if "<" in name:
        name = neutralize_tags(name)
    indent = "  " * entry.depth
    if entry.is_dir:
        return f"{indent}{name}/"
    return f"{indent}{name}" + (f" ({human_size(entry.size)})" if entry.size is not None else "")


@dataclass(frozen=True, slots=True)
class FileText:
    """A file as read for a model: its text (cut to a limit), or what it is when binary.

    Attributes:
        relative: The path as shown, relative to the skill directory.
        size: Size in bytes.
        mime: MIME type.
        binary: True when the content is not shown.
        text: The decoded text, cut to the character limit; None for binary files.
        truncated: True when ``text`` is only the beginning of the file.
        total_chars: Characters in the whole file when known; None for binary files and for
            text files too large to decode whole (then the marker reports bytes).
    """

    relative: str
    size: int
    mime: str
    binary: bool
    text: str | None
    truncated: bool
    total_chars: int | None = None

    def render(self) -> str:
        """Return what a model should see: the text with a visible cut marker, or a description."""
        if self.binary or self.text is None:
            shown = one_line(self.relative)
            return f"[binary file: {shown}, {self.size:,} bytes, {self.mime} — not shown]"
        if not self.truncated:
            return self.text
        shown = f"{len(self.text):,}"
        if self.total_chars is not None:
            marker = f"showed {shown} of {self.total_chars:,} characters"
        else:
            marker = f"showed {shown} characters of a {self.size:,}-byte file"
        return f"{self.text}\n[truncated: {marker}]"
