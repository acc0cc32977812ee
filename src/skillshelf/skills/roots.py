"""What kind of root a string names: a folder, an archive file, or a URL (cheap to import)."""

from __future__ import annotations

from typing import Final

__all__ = ["ARCHIVE_SUFFIXES", "is_archive_root", "is_url_root"]

ARCHIVE_SUFFIXES: Final = (".zip", ".skill", ".tar", ".tar.gz", ".tgz")


def is_url_root(root: str) -> bool:
    """True for ``http://`` and ``https://`` roots."""
    return root.startswith(("http://", "https://"))


def is_archive_root(root: str) -> bool:
    """True for roots named like an archive (or a URL)."""
    return is_url_root(root) or root.lower().endswith(ARCHIVE_SUFFIXES)
