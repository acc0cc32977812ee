"""A persistent index of parsed SKILL.md files, keyed by path and ``stat`` data.

Re-opening an unchanged tree of 10,000 skills then costs a ``stat`` per skill instead of a read
and a parse. A row is reused when the file's modification time (ns), size, inode number and
status-change time (ns) are all what they were when it was read: an edit (even one that keeps
the size and puts the old modification time back, which changes the status-change time), a
file replaced by another (a new inode), a removed or new SKILL.md are all noticed. A file
changed in the :data:`RACY_NS` before it was read is not kept (:func:`settled`): a second
edit within the file system's timestamp granularity could otherwise keep every stamp.

Rows are flat and cheap to load (``marshal``): the stamps, the name, the description and
whether the model may invoke the skill, which is all the catalog needs, and the rest of the
manifest and the diagnostics as one ``marshal`` blob decoded when a skill is used. The file
lives in the user's cache folder, used only when it is the user's own
(:mod:`skillshelf.skills.cache_files`).

It is a hint, never trusted: :func:`valid_row` checks every row on load — its shape, the types
of the blob's values, and its name, description and shown fields against the rules SKILL.md
values pass (:func:`~skillshelf.core.manifest.sound_manifest`). A row that fails is a miss (its
SKILL.md is read again), a file that fails is an empty index; both are logged at debug level.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
from pathlib import Path
from typing import Final

from skillshelf.core.frontmatter import Mode
from skillshelf.core.manifest import Manifest, sound_manifest, sound_name
from skillshelf.skills.cache_files import (
    RACY_NS,
    default_cache_dir,
    read_cache_file,
    settled,
    write_cache_file,
)
from skillshelf.skills.skill import PLAIN_TAIL, ParsedSkillMd, check_blob, decode_blob, encode_blob

__all__ = [
    "RACY_NS",
    "Index",
    "Row",
    "decode_blob",
    "default_cache_dir",
    "encode_row",
    "load_index",
    "save_index",
    "settled",
    "valid_row",
]

logger = logging.getLogger("skillshelf.cache")

# Bump when the row layout changes, so stale caches are ignored rather than misread.
_FORMAT: Final = "skillshelf-index-8"

# (mtime_ns, size, inode, ctime_ns, name or None when not valid,
#  description or None, model-invocable, marshal blob of (manifest fields after the
#  description or None, diagnostics as tuples))
Row = tuple[int, int, int, int, str | None, str | None, bool, bytes]
Index = dict[str, Row]


def _cache_name(key: str) -> str:
    digest = hashlib.sha256(f"{_FORMAT}\0{key}".encode()).hexdigest()[:32]
    return f"index-{digest}.bin"


def load_index(cache_dir: Path, key: str, *, mode: Mode) -> Index:
    """Load the index stored under ``key``: its valid rows (:func:`valid_row`), or an empty
    index if there is none, it is not the user's own or it does not decode.

    Rows are returned undecoded: a skill's manifest is only built when it is used.
    """
    data = read_cache_file(cache_dir, _cache_name(key))
    if data is None:
        return {}
    try:
        payload = marshal.loads(data)
    except (ValueError, EOFError, TypeError) as exc:
        logger.debug("index cache %s ignored: %s", cache_dir / _cache_name(key), exc)
        return {}
    if (
        type(payload) is not tuple
        or len(payload) != 3
        or payload[0] != _FORMAT
        or payload[1] != key
        or type(payload[2]) is not dict
    ):
        logger.debug("index cache %s ignored: not this format", cache_dir / _cache_name(key))
        return {}
    rows: dict[object, object] = payload[2]
    index = {p: r for p, r in rows.items() if type(p) is str and valid_row(p, r, mode=mode)}
    if len(index) != len(rows):
        logger.debug("index cache: %d of %d rows ignored", len(rows) - len(index), len(rows))
    return index  # type: ignore[return-value]


def valid_row(skill_md: str, row: object, *, mode: Mode) -> bool:
    """Whether ``row`` is one :func:`encode_row` could have written for the SKILL.md at
    ``skill_md`` read in ``mode``: the validator of this cache's format."""
    if type(row) is not tuple or len(row) != 8:
        return False
    mtime_ns, size, ino, ctime_ns, _, _, invocable, blob = row
    if not (
        type(mtime_ns) is int
        and type(size) is int
        and type(ino) is int
        and type(ctime_ns) is int
        and min(mtime_ns, size, ino, ctime_ns) >= 0
        and type(invocable) is bool
        and type(blob) is bytes
    ):
        return False
    try:
        tail, _ = check_blob(row)
    except (ValueError, EOFError, TypeError):
        return False
    if tail is None:
        return row[4] is None and row[5] is None and row[6] is False
    dir_name = skill_md.rpartition(os.sep)[0].rpartition(os.sep)[2]
    if tail == PLAIN_TAIL:  # of its types already: nothing but a name and a description
        return row[6] is True and sound_name(row[4], row[5], dir_name=dir_name, mode=mode)
    manifest = Manifest(row[4], row[5], *tail)
    return row[6] is not manifest.disable_model_invocation and sound_manifest(
        manifest, dir_name=dir_name, mode=mode
    )


def save_index(cache_dir: Path, key: str, index: Index) -> None:
    """Store ``index`` under ``key`` atomically; failures are logged at debug level and
    otherwise ignored (it is only a cache)."""
    try:
        data = marshal.dumps((_FORMAT, key, index))
    except ValueError:  # a value marshal cannot write: nothing to keep
        logger.debug("index cache not written", exc_info=True)
        return
    write_cache_file(cache_dir, _cache_name(key), data)


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
