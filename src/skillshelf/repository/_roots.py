"""Which roots a repository scans: the caller's, ``SKILLSHELF_ROOTS`` or the conventional ones."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["resolve_roots"]

_CONVENTIONAL = (".agents/skills", ".claude/skills")


def resolve_roots(
    roots: Sequence[str | os.PathLike[str]] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[list[str], bool]:
    """Work out which roots to scan.

    Returns:
        ``(roots, explicit)``; ``explicit`` is False for the conventional roots, which are
        listed only when they exist.
    """
    if roots:
        return [os.fspath(r) for r in roots], True
    env = os.environ if environ is None else environ
    from_env = env.get("SKILLSHELF_ROOTS", "")
    if from_env.strip():
        return [r for r in from_env.split(os.pathsep) if r.strip()], True
    start = Path(cwd or os.getcwd()).resolve()
    found: list[str] = []
    for directory in (start, *start.parents):
        found.extend(str(directory / c) for c in _CONVENTIONAL if (directory / c).is_dir())
        if (directory / ".git").exists():
            break
    user = Path(home or os.path.expanduser("~"))
    found.extend(str(user / c) for c in _CONVENTIONAL if (user / c).is_dir())
    return list(dict.fromkeys(found)), False
