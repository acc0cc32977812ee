"""Archive and URL roots: turn one into an extracted folder, whichever kind it is.

The one entry point for the repository: :mod:`skillshelf.skills.archive` extracts files,
:mod:`skillshelf.skills.remote` downloads URLs (then extracts them with the archive module).
"""

from __future__ import annotations

from pathlib import Path

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.skills.archive import (
    ArchiveError,
    ArchiveLimits,
    Materialized,
    materialize_archive,
)
from skillshelf.skills.remote import materialize_url
from skillshelf.skills.roots import is_url_root

__all__ = ["materialize"]


def materialize(root: str, cache_dir: Path, *, limits: ArchiveLimits | None = None) -> Materialized:
    """Turn an archive or URL root into an extracted folder under ``cache_dir``.

    Never raises for bad input: every problem becomes a diagnostic on ``root``.

    Raises:
        MissingExtraError: A URL root without httpx (the ``remote`` extra): an installation
            problem, not one of the root's.
    """
    limits = limits or ArchiveLimits()
    try:
        if is_url_root(root):
            return materialize_url(root, cache_dir, limits)
        return materialize_archive(root, cache_dir, limits)
    except ArchiveError as exc:
        return Materialized(None, (Diagnostic(exc.code, "error", str(exc), None, root),))
