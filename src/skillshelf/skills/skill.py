"""One skill on disk: reading a SKILL.md into a :class:`Skill` or into diagnostics."""

from __future__ import annotations

import errno
import marshal
import operator
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Final

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.core.frontmatter import (
    FrontmatterError,
    Mode,
    decode_skill_md,
    parse_frontmatter,
)
from skillshelf.core.manifest import Manifest, build_manifest
from skillshelf.core.verdict import is_valid
from skillshelf.core.yaml_loader import MAX_YAML_DEPTH, MAX_YAML_NODES
from skillshelf.errors import SkillshelfError, clip
from skillshelf.skills.walk import open_beneath, open_regular, resolve_inside

__all__ = [
    "MAX_SKILL_MD_BYTES",
    "SKILL_MD_NAMES",
    "DanglingSkillMdError",
    "ParsedSkillMd",
    "Skill",
    "parse_skill_md",
    "read_skill_md",
]

# A SKILL.md is instructions for a model; over a mebibyte it is a mistake or an attack.
MAX_SKILL_MD_BYTES: Final = 1024 * 1024
SKILL_MD_NAMES: Final = ("SKILL.md", "skill.md")
# Discovery reads only this much of each SKILL.md: the frontmatter is nearly always inside it,
# and reading whole bodies of 10,000 skills would double the cold-open time.
_PREFIX_BYTES: Final = 4096


class Skill:
    """A discovered, usable skill (read-only).

    Built by discovery; the manifest of a skill taken from the persistent index is decoded
    on first use, so opening 10,000 unchanged skills costs little more than a ``stat`` each.

    Attributes:
        name: The skill's name.
        description: Its description.
        manifest: The typed frontmatter.
        directory: Absolute path of the skill directory (the parent of its SKILL.md).
        skill_md_name: ``"SKILL.md"`` or ``"skill.md"``.
        root: The root it was found under, as given.
        diagnostics: Warnings (and non-fatal errors) found while loading it.
        mtime_ns: SKILL.md's modification time when read.
        size: SKILL.md's size in bytes when read.
        stamp: SKILL.md's ``(mtime_ns, size, inode, ctime_ns)`` when read: a change to any
            of them is a change of the skill.
        real_directory: The skill directory with symbolic links resolved at discovery (equal
            to ``directory`` unless a link was on the way to it).
        untrusted: Found under a root the trust gate scans (archive and URL roots,
            ``ScanPolicy.untrusted_roots``); set by the repository. Its files are read only
            while they have one name: a hard link planted after the scan is refused at read
            time, as a symbolic link out of the skill is.
    """

    __slots__ = (
        "_diagnostics",
        "_manifest",
        "_real",
        "_row",
        "_stamp",
        "description",
        "directory",
        "model_invocable",
        "name",
        "root",
        "skill_md_name",
        "untrusted",
    )

    def __init__(
        self,
        manifest: Manifest,
        directory: str,
        skill_md_name: str,
        root: str,
        diagnostics: tuple[Diagnostic, ...] = (),
        mtime_ns: int = 0,
        size: int = 0,
        *,
        real_directory: str | None = None,
        stamp: tuple[int, int, int, int] | None = None,
    ) -> None:
        self.name = manifest.name
        self.description = manifest.description
        self.directory = directory
        self.skill_md_name = skill_md_name
        self.root = root
        self._stamp: tuple[int, int, int, int] | None = stamp or (mtime_ns, size, 0, 0)
        self.model_invocable = not manifest.disable_model_invocation
        self._manifest: Manifest | None = manifest
        self._diagnostics: tuple[Diagnostic, ...] | None = diagnostics
        self._row: tuple[object, ...] | None = None
        self._real = real_directory
        self.untrusted = False

    @classmethod
    def from_row(
        cls,
        row: tuple[Any, ...],
        directory: str,
        skill_md_name: str,
        root: str,
        real_directory: str | None = None,
    ) -> Skill:
        """Build a skill from a valid index row without decoding its manifest yet."""
        skill = cls.__new__(cls)
        skill._stamp = None  # row[:4], sliced when asked: one tuple less per skill
        skill.name = row[4]
        skill.description = row[5]
        skill.model_invocable = row[6]
        skill.directory = directory
        skill.skill_md_name = skill_md_name
        skill.root = root
        skill._manifest = None
        skill._diagnostics = None
        skill._row = row
        skill._real = real_directory
        skill.untrusted = False
        return skill

    def __repr__(self) -> str:
        return f"Skill(name={self.name!r}, directory={self.directory!r})"

    def built_from(self, row: tuple[Any, ...], real_directory: str | None) -> bool:
        """Whether :meth:`from_row` built this skill from this very row (the same object)
        and folder: then a re-scan that found the same row may keep it as it is."""
        return self._row is row and self._real == real_directory

    def _decode(self) -> None:
        manifest, self._diagnostics = decode_blob(self._row)  # type: ignore[arg-type]
        assert manifest is not None  # only valid rows become skills
        self._manifest = manifest

    @property
    def manifest(self) -> Manifest:
        """The typed frontmatter."""
        if self._manifest is None:
            self._decode()
        return self._manifest  # type: ignore[return-value]

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Warnings (and non-fatal errors) found while loading it."""
        if self._diagnostics is None:
            self._decode()
        return self._diagnostics  # type: ignore[return-value]

    @property
    def stamp(self) -> tuple[int, int, int, int]:
        """SKILL.md's ``(mtime_ns, size, inode, ctime_ns)`` when read."""
        if self._stamp is None:
            return self._row[:4]  # type: ignore[index,return-value]
        return self._stamp

    @property
    def mtime_ns(self) -> int:
        """SKILL.md's modification time when read."""
        return self.stamp[0]

    @property
    def size(self) -> int:
        """SKILL.md's size in bytes when read."""
        return self.stamp[1]

    @property
    def path(self) -> Path:
        """The skill directory."""
        return Path(self.directory)

    @property
    def real_directory(self) -> str:
        """The skill directory with links resolved at discovery."""
        return self._real or self.directory

    @property
    def real_path(self) -> Path:
        """:attr:`real_directory` as a path: what reads open without following any link."""
        return Path(self._real or self.directory)

    @property
    def skill_md(self) -> Path:
        """The SKILL.md file."""
        return Path(self.directory, self.skill_md_name)

    @property
    def triggers(self) -> tuple[str, ...]:
        """Trigger phrases (for search)."""
        return self.manifest.triggers

    @property
    def tags(self) -> tuple[str, ...]:
        """Tags (for search)."""
        return self.manifest.tags

    @property
    def version(self) -> str | None:
        """The ``version`` key, else ``metadata.version``."""
        return self.manifest.version or self.manifest.metadata.get("version")

    def body(self) -> str:
        """Read the Markdown body from disk (it is not kept in memory).

        Raises:
            SkillshelfError: The file vanished, grew past the size cap or no longer parses.
        """
        # Only the frontmatter's split and parse: the manifest was built at discovery.
        try:
            raw, _, _ = read_skill_md(self.skill_md, full=True)
            return parse_frontmatter(decode_skill_md(raw)[0]).body
        except FrontmatterError as exc:
            problem = exc.message
        except OSError as exc:
            problem = f"Cannot read SKILL.md: {exc.strerror}"
        raise SkillshelfError(f"Cannot read the body of skill {self.name!r}: {problem}")


_MANIFEST_TAIL: Final = operator.attrgetter(*[f.name for f in fields(Manifest)][2:])
# The fields after the description of a manifest that has nothing else.
PLAIN_TAIL: Final[tuple[Any, ...]] = _MANIFEST_TAIL(Manifest("plain", "plain"))


def encode_blob(manifest: Manifest | None, diagnostics: tuple[Diagnostic, ...]) -> bytes:
    """The part of an index row decoded only when a skill is used: the manifest's fields
    after the description (None for a skill that is not valid) and the diagnostics."""
    diags = (
        tuple((d.code, d.severity, d.message, d.field, d.path, d.line) for d in diagnostics)
        if diagnostics
        else ()
    )
    return marshal.dumps((None if manifest is None else _MANIFEST_TAIL(manifest), diags))


def decode_blob(row: tuple[Any, ...]) -> tuple[Manifest | None, tuple[Diagnostic, ...]]:
    """The manifest (None for a skill that is not valid) and diagnostics of an index row
    (name and description at 4 and 5, :func:`encode_blob`'s bytes at 7).

    Raises:
        ValueError: The blob is not what :func:`encode_blob` writes (see :func:`check_blob`).
    """
    tail, diags = check_blob(row)
    manifest = None if tail is None else Manifest(row[4], row[5], *tail)
    return manifest, tuple(Diagnostic(*d) for d in diags)


def check_blob(row: tuple[Any, ...]) -> tuple[tuple[Any, ...] | None, tuple[Any, ...]]:
    """An index row's blob decoded, with every value checked to have the type
    :func:`encode_blob` wrote (the manifest is a plain dataclass: nothing else would).

    Returns:
        The manifest's fields after the description (None for a skill that is not valid) and
        the diagnostics, as tuples.

    Raises:
        ValueError: The blob does not decode, or not to what :func:`encode_blob` writes
            (``EOFError`` and ``TypeError`` from ``marshal`` are raised as they are).
    """
    decoded = marshal.loads(row[7])
    if type(decoded) is not tuple or len(decoded) != 2:
        raise ValueError("not an index blob")
    tail, diags = decoded
    if type(diags) is not tuple or not all(map(_is_diagnostic, diags)):
        raise ValueError("malformed diagnostics")
    if tail is None:
        return None, diags
    if type(row[4]) is not str or type(row[5]) is not str or type(tail) is not tuple:
        raise ValueError("malformed manifest")
    # Equal to the plain tail, the flags aside (False == 0), is of its types: the common case.
    if tail == PLAIN_TAIL and type(tail[8]) is bool and type(tail[9]) is bool:
        return tail, diags
    if len(tail) != len(_TAIL_SHAPE) or not all(
        check(value) for check, value in zip(_TAIL_SHAPE, tail, strict=True)
    ):
        raise ValueError("malformed manifest")
    return tail, diags


def _optional_str(value: object) -> bool:
    return value is None or type(value) is str


def _strs(value: object) -> bool:
    return type(value) is tuple and all(type(v) is str for v in value)


def _str_map(value: object) -> bool:
    return type(value) is dict and all(type(k) is str and type(v) is str for k, v in value.items())


def _flag(value: object) -> bool:
    return type(value) is bool


def _yaml_map(value: object) -> bool:
    """A mapping of YAML values as the frontmatter loader builds them (strings, lists and
    string-keyed mappings, within its depth and node caps), checked without recursion."""
    if type(value) is not dict:
        return False
    stack: list[tuple[object, int]] = [(value, 1)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if depth > MAX_YAML_DEPTH or nodes > MAX_YAML_NODES:
            return False
        if type(item) is dict:
            if not all(type(k) is str for k in item):
                return False
            stack.extend((v, depth + 1) for v in item.values())
        elif type(item) is list:
            stack.extend((v, depth + 1) for v in item)
        elif type(item) is not str:
            return False
    return True


def _is_diagnostic(value: object) -> bool:
    return (
        type(value) is tuple
        and len(value) == 6
        and type(value[0]) is str
        and value[1] in _SEVERITIES
        and type(value[2]) is str
        and _optional_str(value[3])
        and _optional_str(value[4])
        and (value[5] is None or (type(value[5]) is int and value[5] >= 0))
    )


_SEVERITIES: Final = ("error", "warning", "info")
# The type of each manifest field after the description, in field order (what encode_blob
# writes); tests hold it to Manifest's fields.
_TAIL_SHAPE: Final = (
    _optional_str,  # license
    _optional_str,  # compatibility
    _str_map,  # metadata
    _strs,  # allowed_tools
    _optional_str,  # allowed_tools_raw
    _strs,  # not_tools
    _optional_str,  # context
    _optional_str,  # agent
    _flag,  # disable_model_invocation
    _flag,  # user_invocable
    _optional_str,  # argument_hint
    _optional_str,  # when_to_use
    _optional_str,  # version
    _strs,  # tags
    _strs,  # triggers
    _yaml_map,  # extra
)


@dataclass(slots=True)
class ParsedSkillMd:
    """The outcome of reading one SKILL.md.

    Attributes:
        manifest: The manifest, or None when none could be built.
        diagnostics: Everything found, errors first in skills-ref's order.
        mtime_ns: Modification time of the file read (0 if it could not be opened).
        size: Size of the file read.
        body: The body, when the whole file was read and the frontmatter parsed.
        valid: The verdict (:func:`~skillshelf.core.verdict.is_valid`) in the mode it was
            read in: only a valid skill is usable, and a manifest may exist without it.
    """

    manifest: Manifest | None
    diagnostics: tuple[Diagnostic, ...]
    mtime_ns: int = 0
    size: int = 0
    body: str | None = None
    valid: bool = False


class DanglingSkillMdError(FileNotFoundError):
    """SKILL.md is a symbolic link to something that does not exist (``strerror`` says so)."""


def open_skill_md(path: Path | str) -> int:
    """Open a SKILL.md the way every face reads it: the bytes served are the bytes pinned.

    Opened relative to its folder with :func:`~skillshelf.skills.walk.open_beneath` (no link
    followed, never blocks, regular files only). A SKILL.md that is a symbolic link is read
    only when it leads to a file inside the skill folder — that target is a walked file, so
    the lockfile pins and the scanner reads exactly these bytes; one leading outside is
    refused, since nothing would pin what it says.

    Raises:
        DanglingSkillMdError: It is a link leading nowhere.
        OSError: It is missing, not a regular file (``EINVAL``, e.g. a FIFO), a folder, or a
            link leading outside the skill (``ELOOP``).
    """
    fd, _ = _open_skill_md(os.fspath(path))
    os.set_blocking(fd, True)
    return fd


def _open_skill_md(path: str) -> tuple[int, os.stat_result]:
    """:func:`open_skill_md` without restoring blocking reads, with the file's ``fstat``."""
    if not path.startswith(os.sep) or f"{os.sep}." in path or os.sep * 2 in path:
        path = os.path.abspath(path)  # discovery's paths are already absolute and normal
    try:
        return open_regular(path)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
    directory, name = os.path.split(path)
    real = os.path.realpath(directory)
    target, kind = resolve_inside(os.path.join(real, name), real)
    if target is None and not os.path.exists(path):
        try:
            text = os.readlink(path)
        except OSError:  # swapped out meanwhile
            text = "?"
        raise DanglingSkillMdError(
            errno.ENOENT,
            f"{name} is a symbolic link to {clip(text, 200, quoted=True)}, which does not "
            "exist; the folder is not a skill",
            os.fspath(path),
        )
    if target is None or kind != "file":
        raise OSError(
            errno.ELOOP,
            f"{name} is a symbolic link leading outside its skill folder (not read: the "
            "lockfile and scanner could not cover it)",
            os.fspath(path),
        )
    fd = open_beneath(real, target)
    return fd, os.fstat(fd)


def read_skill_md(path: Path | str, *, full: bool) -> tuple[bytes, int, int]:
    """Read a SKILL.md's bytes: all of them, or a prefix cut at a line end.

    Returns:
        ``(data, mtime_ns, size)``; ``len(data) < size`` means a prefix was read.

    Raises:
        OSError: The file cannot be opened or read.
        FrontmatterError: ``file.too_large`` when it is over :data:`MAX_SKILL_MD_BYTES`.
    """
    data, mtime_ns, size, _ = read_skill_md_stat(path, full=full)
    return data, mtime_ns, size


def read_skill_md_stat(path: Path | str, *, full: bool) -> tuple[bytes, int, int, os.stat_result]:
    """:func:`read_skill_md`, plus the file's ``stat`` (from the one ``fstat`` of the read)."""
    fd, st = _open_skill_md(os.fspath(path))
    try:
        if st.st_size > MAX_SKILL_MD_BYTES:
            raise FrontmatterError(
                "file.too_large",
                f"SKILL.md is {st.st_size:,} bytes; the limit is {MAX_SKILL_MD_BYTES:,}",
            )
        if not full:
            data = os.read(fd, _PREFIX_BYTES)
            if len(data) < _PREFIX_BYTES:
                return data, st.st_mtime_ns, len(data), st
            # Cut at the last line end so a split UTF-8 sequence is never decoded.
            return data[: data.rfind(b"\n") + 1], st.st_mtime_ns, st.st_size, st
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_SKILL_MD_BYTES:
                raise FrontmatterError(
                    "file.too_large", f"SKILL.md grew past {MAX_SKILL_MD_BYTES:,} bytes"
                )
        return b"".join(chunks), st.st_mtime_ns, total, st
    finally:
        os.close(fd)


def parse_skill_md(
    path: Path | str,
    *,
    mode: Mode = "lenient",
    full: bool = True,
    dir_name: str | None = None,
    preread: tuple[bytes, int, int] | None = None,
) -> ParsedSkillMd:
    """Read and validate one SKILL.md; never raises for bad content.

    Args:
        path: The SKILL.md file.
        mode: ``"strict"`` (skills-ref's rules) or ``"lenient"``.
        full: Read the whole file (validation), or only enough for the frontmatter (discovery;
            the body is then not returned).
        dir_name: Name to compare with the skill name; defaults to the parent directory's name.
        preread: ``read_skill_md``'s result when the caller already read the file.
    """
    path_str = os.fspath(path)
    if dir_name is None:
        dir_name = os.path.basename(os.path.dirname(os.path.abspath(path_str)))
    mtime_ns = size = 0
    try:
        if preread is None or ((full or mode == "strict") and len(preread[0]) < preread[2]):
            preread = read_skill_md(path_str, full=full or mode == "strict")
        raw, mtime_ns, size = preread
        partial = len(raw) < size
        try:
            text, problem = decode_skill_md(raw, mode=mode)
            fm = parse_frontmatter(text, mode=mode)
        except FrontmatterError as exc:
            if not partial or exc.code != "frontmatter.unclosed":
                raise
            # The frontmatter is longer than the prefix: read it all.
            raw, mtime_ns, size = read_skill_md(path_str, full=True)
            partial = False
            text, problem = decode_skill_md(raw, mode=mode)
            fm = parse_frontmatter(text, mode=mode)
    except FrontmatterError as exc:
        diag = Diagnostic(exc.code, "error", exc.message, None, path_str, exc.line)
        return ParsedSkillMd(None, (diag,), mtime_ns, size)
    except OSError as exc:
        diag = Diagnostic(
            "file.unreadable", "error", f"Cannot read SKILL.md: {exc.strerror}", None, path_str
        )
        return ParsedSkillMd(None, (diag,))
    manifest, diagnostics = build_manifest(fm, dir_name=dir_name, mode=mode, path=path_str)
    if problem is not None:
        diagnostics.append(
            Diagnostic(
                problem.code,
                "warning",
                f"{problem.message}; decoded with replacement characters",
                None,
                path_str,
                problem.line,
            )
        )
    return ParsedSkillMd(
        manifest,
        tuple(diagnostics),
        mtime_ns,
        size,
        None if partial else fm.body,
        is_valid(manifest, diagnostics, mode=mode),
    )
