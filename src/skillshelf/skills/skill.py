"""One skill on disk: reading a SKILL.md into a :class:`Skill` or into diagnostics."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Final

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.core.frontmatter import (
    FrontmatterError,
    Mode,
    decode_skill_md,
    parse_frontmatter,
)
from skillshelf.core.manifest import Manifest, build_manifest
from skillshelf.core.verdict import is_valid
from skillshelf.errors import SkillshelfError, clip
from skillshelf.skills.walk import open_beneath, resolve_inside

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
        real_directory: The skill directory with symbolic links resolved at discovery (equal
            to ``directory`` unless a link was on the way to it).
    """

    __slots__ = (
        "_diag_rows",
        "_diagnostics",
        "_manifest",
        "_manifest_row",
        "_real",
        "description",
        "directory",
        "mtime_ns",
        "name",
        "root",
        "size",
        "skill_md_name",
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
    ) -> None:
        self.name = manifest.name
        self.description = manifest.description
        self.directory = directory
        self.skill_md_name = skill_md_name
        self.root = root
        self.mtime_ns = mtime_ns
        self.size = size
        self._manifest: Manifest | None = manifest
        self._manifest_row: tuple[object, ...] | None = None
        self._diagnostics: tuple[Diagnostic, ...] | None = diagnostics
        self._diag_rows: tuple[tuple[object, ...], ...] = ()
        self._real = real_directory

    @classmethod
    def from_row(
        cls,
        manifest_row: tuple[object, ...],
        diag_rows: tuple[tuple[object, ...], ...],
        *,
        directory: str,
        skill_md_name: str,
        root: str,
        mtime_ns: int,
        size: int,
        real_directory: str | None = None,
    ) -> Skill:
        """Build a skill from an index row without decoding its manifest yet."""
        skill = cls.__new__(cls)
        skill.name = manifest_row[0]  # type: ignore[assignment]
        skill.description = manifest_row[1]  # type: ignore[assignment]
        skill.directory = directory
        skill.skill_md_name = skill_md_name
        skill.root = root
        skill.mtime_ns = mtime_ns
        skill.size = size
        skill._manifest = None
        skill._manifest_row = manifest_row
        skill._diagnostics = None
        skill._diag_rows = diag_rows
        skill._real = real_directory
        return skill

    def __repr__(self) -> str:
        return f"Skill(name={self.name!r}, directory={self.directory!r})"

    @property
    def manifest(self) -> Manifest:
        """The typed frontmatter."""
        if self._manifest is None:
            self._manifest = Manifest(*self._manifest_row)  # type: ignore[misc]
        return self._manifest

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Warnings (and non-fatal errors) found while loading it."""
        if self._diagnostics is None:
            self._diagnostics = tuple(Diagnostic(*d) for d in self._diag_rows)  # type: ignore[arg-type]
        return self._diagnostics

    @property
    def model_invocable(self) -> bool:
        """False when only the user may invoke it (``disable-model-invocation: true``)."""
        if self._manifest is None:
            return not self._manifest_row[_DISABLE_MODEL_INVOCATION]  # type: ignore[index]
        return not self._manifest.disable_model_invocation

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


_DISABLE_MODEL_INVOCATION: Final = [f.name for f in fields(Manifest)].index(
    "disable_model_invocation"
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
    directory, name = os.path.split(os.path.abspath(os.fspath(path)))
    try:
        return open_beneath(directory, name)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
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
    return open_beneath(real, target)


def read_skill_md(path: Path | str, *, full: bool) -> tuple[bytes, int, int]:
    """Read a SKILL.md's bytes: all of them, or a prefix cut at a line end.

    Returns:
        ``(data, mtime_ns, size)``; ``len(data) < size`` means a prefix was read.

    Raises:
        OSError: The file cannot be opened or read.
        FrontmatterError: ``file.too_large`` when it is over :data:`MAX_SKILL_MD_BYTES`.
    """
    fd = open_skill_md(path)
    try:
        st = os.fstat(fd)
        if st.st_size > MAX_SKILL_MD_BYTES:
            raise FrontmatterError(
                "file.too_large",
                f"SKILL.md is {st.st_size:,} bytes; the limit is {MAX_SKILL_MD_BYTES:,}",
            )
        if not full:
            data = os.read(fd, _PREFIX_BYTES)
            if len(data) < _PREFIX_BYTES:
                return data, st.st_mtime_ns, len(data)
            # Cut at the last line end so a split UTF-8 sequence is never decoded.
            return data[: data.rfind(b"\n") + 1], st.st_mtime_ns, st.st_size
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_SKILL_MD_BYTES:
                raise FrontmatterError(
                    "file.too_large", f"SKILL.md grew past {MAX_SKILL_MD_BYTES:,} bytes"
                )
        return b"".join(chunks), st.st_mtime_ns, total
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
