"""A persistent index of parsed SKILL.md files, keyed by path, mtime and size.

Re-opening an unchanged tree of 10,000 skills then costs a ``stat`` per skill instead of a read
and a parse. The file lives in the user's cache folder (created private); it is a cache, so any
problem reading or writing it is ignored and the tree is simply read again.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import operator
import os
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any, Final

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.core.manifest import Manifest
from skillshelf.skills.skill import ParsedSkillMd

__all__ = [
    "Index",
    "Row",
    "decode_diagnostics",
    "default_cache_dir",
    "encode_row",
    "load_index",
    "save_index",
]

# Bump when the parsed form changes, so stale caches are ignored rather than misread.
_FORMAT: Final = "skillshelf-index-7"
_manifest_row: Final = operator.attrgetter(*(f.name for f in fields(Manifest)))

# (mtime_ns, size, manifest fields in order or None when not valid, diagnostics as tuples)
Row = tuple[int, int, tuple[Any, ...] | None, tuple[tuple[Any, ...], ...]]
Index = dict[str, Row]


def default_cache_dir() -> Path:
    """Where the index lives: ``$SKILLSHELF_CACHE_DIR``, ``$XDG_CACHE_HOME/skillshelf``, or
    ``~/.cache/skillshelf``, first one set wins."""
    explicit = os.environ.get("SKILLSHELF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "skillshelf")


def _cache_file(cache_dir: Path, key: str) -> Path:
    digest = hashlib.sha256(f"{_FORMAT}\0{key}".encode()).hexdigest()[:32]
    return cache_dir / f"index-{digest}.bin"


def load_index(cache_dir: Path, key: str) -> Index:
    """Load the index stored under ``key``; an empty one if there is none or it is unreadable.

    Rows are returned undecoded: a skill's manifest is only built when it is used.
    """
    try:
        with open(_cache_file(cache_dir, key), "rb") as fh:
            payload = marshal.loads(fh.read())
        fmt, stored_key, rows = payload
        if fmt != _FORMAT or stored_key != key or not isinstance(rows, dict):
            return {}
        return rows
    except (OSError, ValueError, EOFError, TypeError):
        return {}


def save_index(cache_dir: Path, key: str, index: Index) -> None:
    """Store ``index`` under ``key`` atomically; failures are silent (it is only a cache)."""
    try:
        cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".index-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                marshal.dump((_FORMAT, key, index), fh)
            os.replace(tmp, _cache_file(cache_dir, key))
        except BaseException:  # broad on purpose: no temporary file survives, ^C too; re-raised
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except (OSError, ValueError):
        return


def encode_row(parsed: ParsedSkillMd) -> Row:
    """The index row for a parse result: ``(mtime_ns, size, manifest_row, diagnostic_rows)``.

    The manifest is stored only for a valid skill, so a reused row gives the same verdict
    without decoding its diagnostics.
    """
    manifest = _manifest_row(parsed.manifest) if parsed.valid and parsed.manifest else None
    diags = tuple(
        (d.code, d.severity, d.message, d.field, d.path, d.line) for d in parsed.diagnostics
    )
    return (parsed.mtime_ns, parsed.size, manifest, diags)


def decode_diagnostics(rows: tuple[tuple[object, ...], ...]) -> tuple[Diagnostic, ...]:
    """Diagnostics from their index rows."""
    return tuple(Diagnostic(*d) for d in rows)  # type: ignore[arg-type]
