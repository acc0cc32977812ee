"""A persistent index of parsed SKILL.md files, keyed by path and ``stat`` data.

Re-opening an unchanged tree of 10,000 skills then costs a ``stat`` per skill instead of a read
and a parse. A row is reused when the file's modification time (ns), size, inode number and
status-change time (ns) are all what they were when it was read: an edit (even one that keeps
the size and puts the old modification time back, which changes the status-change time), a
file replaced by another (a new inode), a removed or new SKILL.md are all noticed. A file
changed in the :data:`RACY_NS` before it was read is not kept (:func:`reusable`): a second
edit within the file system's timestamp granularity could otherwise keep every stamp.

Rows are flat and cheap to load (``marshal``): the stamps, the name, the description and
whether the model may invoke the skill, which is all the catalog needs, and the rest of the
manifest and the diagnostics as one ``marshal`` blob decoded when a skill is used. The file
lives in the user's cache folder (created private); it is a cache, so any problem reading or
writing it is ignored and the tree is simply read again.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import tempfile
from pathlib import Path
from typing import Final

from skillshelf.skills.skill import ParsedSkillMd, decode_blob, encode_blob

__all__ = [
    "RACY_NS",
    "Index",
    "Row",
    "decode_blob",
    "default_cache_dir",
    "encode_row",
    "load_index",
    "reusable",
    "save_index",
]

# Bump when the row layout changes, so stale caches are ignored rather than misread.
_FORMAT: Final = "skillshelf-index-8"
# A file changed this recently when read may change again within the same timestamp tick
# without any stamp moving, so its row is not reused (the next scan reads it again).
RACY_NS: Final = 2_000_000_000

# (mtime_ns, size, inode, ctime_ns, name or None when not valid,
#  description or None, model-invocable, marshal blob of (manifest fields after the
#  description or None, diagnostics as tuples))
Row = tuple[int, int, int, int, str | None, str | None, bool, bytes]
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


def encode_row(parsed: ParsedSkillMd, st: os.stat_result) -> Row:
    """The index row for a parse result and the ``stat`` of the file it was read from.

    The manifest is stored only for a valid skill, so a reused row gives the same verdict
    without decoding its diagnostics.
    """
    manifest = parsed.manifest if parsed.valid else None
    blob = encode_blob(manifest, parsed.diagnostics)
    if manifest is None:
        return (parsed.mtime_ns, parsed.size, st.st_ino, st.st_ctime_ns, None, None, False, blob)
    return (
        parsed.mtime_ns,
        parsed.size,
        st.st_ino,
        st.st_ctime_ns,
        manifest.name,
        manifest.description,
        not manifest.disable_model_invocation,
        blob,
    )


def reusable(st: os.stat_result, now_ns: int) -> bool:
    """Whether a row read from a file with this ``stat`` at ``now_ns`` may be reused later."""
    trusted_before = now_ns - RACY_NS
    return st.st_mtime_ns < trusted_before and st.st_ctime_ns < trusted_before
