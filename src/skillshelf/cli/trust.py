"""``skillshelf lock``, ``verify`` and ``scan``: the integrity lockfile and the content scanner.

Registered on the ``skillshelf`` group by importing this module (see ``cli._COMMAND_MODULES``).
Each command opens the skills without a lockfile (it is the lockfile's subject) and exits 1
when there is something to act on: drift for ``verify``, a ``block`` finding for ``scan``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from skillshelf.cli._common import EXIT_FAILED, REPO_KEY, emit_json, root_options

if TYPE_CHECKING:
    from skillshelf.repository import Repository
    from skillshelf.skills.skill import Skill
    from skillshelf.trust.lockfile import LockEntry

__all__ = ["lock", "scan", "verify"]


def _repo(kwargs: dict[str, Any]) -> Repository:
    from skillshelf.repository import Repository

    # The lockfile is what these commands write or check, so it must not hide skills here.
    repo = Repository(
        kwargs.pop("roots") or None,
        include_hidden=kwargs.pop("include_hidden"),
        max_depth=kwargs.pop("max_depth"),
        max_dirs=kwargs.pop("max_dirs"),
        cache_dir=False if kwargs.pop("no_cache") else None,
        lockfile=False,
    )
    for diag in repo.diagnostics:
        click.echo(str(diag), err=True)
    click.get_current_context().meta[REPO_KEY] = repo
    return repo


@click.command()
@root_options
@click.option(
    "--out",
    "out",
    default="skills.lock",
    show_default=True,
    metavar="PATH",
    help="The lockfile to write (or, with --update, to update).",
)
@click.option(
    "--update",
    "update",
    multiple=True,
    metavar="NAME",
    help="Approve only NAME's current content in the existing lockfile. Repeat for several.",
)
def lock(out: str, update: tuple[str, ...], **kwargs: Any) -> None:
    """Record every visible skill's content digest in a lockfile (approve a change: --update)."""
    from skillshelf.skills.walk import walk_skill
    from skillshelf.trust.lockfile import Lockfile

    repo = _repo(kwargs)
    chosen = [repo.get(name) for name in update] if update else repo.skills
    # A skill over the walker's caps has content nobody can verify: say so, never pin it.
    refused = {s.name: why for s in chosen if (why := walk_skill(s.directory).capped)}
    for name, why in refused.items():
        click.echo(f"not locked: {name}: it has {why}", err=True)
    entries = {s.name: _entry(repo, s) for s in chosen if s.name not in refused}
    if update:
        lockfile = Lockfile.load(out)
        lockfile.entries.update(entries)
        lockfile.save(out)
        click.echo(f"approved {', '.join(entries) or 'nothing'} in {out}", err=True)
    else:
        lockfile = Lockfile(entries)
        lockfile.save(out)
        click.echo(f"locked {len(lockfile.entries)} skills in {out}", err=True)
    if refused:
        raise SystemExit(EXIT_FAILED)


def _entry(repo: Repository, skill: Skill) -> LockEntry:
    from skillshelf.trust.lockfile import LockEntry

    return LockEntry.of(skill, repo.root_directories.get(skill.root))


@click.command()
@root_options
@click.option(
    "--lock",
    "lock_path",
    default="skills.lock",
    show_default=True,
    metavar="PATH",
    help="The lockfile to check against.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of drifts.")
def verify(lock_path: str, as_json: bool, **kwargs: Any) -> None:
    """Check every skill against the lockfile; exit 1 on any drift (for CI)."""
    from skillshelf.trust.lockfile import Lockfile

    repo = _repo(kwargs)
    lockfile = Lockfile.load(lock_path)
    drifts = lockfile.verify(repo.skills)
    if as_json:
        emit_json([d.to_dict() for d in drifts])
    else:
        for drift in drifts:
            click.echo(f"{drift.name}\t{drift.kind}\t{drift.summary()}")
        click.echo(
            f"{len(drifts)} drifted of {len(lockfile.entries)} locked skills ({lock_path})",
            err=True,
        )
    if drifts:
        raise SystemExit(EXIT_FAILED)


@click.command()
@root_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON: [{skill, findings}].")
def scan(as_json: bool, **kwargs: Any) -> None:
    """Scan every skill's files for injection, fetch-and-exec, secrets and exfiltration.

    Scans all roots, trusted or not, and every skill the trust gate quarantined (an archive's
    or URL's skills are scanned, and held back, on open). Exits 1 when any finding has
    severity ``block``.
    """
    from skillshelf.trust.scanner import scan_skill

    repo = _repo(kwargs)
    report = [(name, path, scan_skill(path)) for name, path in _scanned(repo)]
    blocked = any(f.severity == "block" for _, _, findings in report for f in findings)
    if as_json:
        emit_json(
            [
                {"skill": name, "path": path, "findings": [f.to_dict() for f in findings]}
                for name, path, findings in report
            ]
        )
    else:
        for name, _, findings in report:
            for f in findings:
                where = f"{f.path}:{f.line}" if f.line else f.path
                click.echo(f"{name}\t{f.severity}\t{f.code}\t{where}\t{f.message}")
        count = sum(len(findings) for _, _, findings in report)
        click.echo(f"{count} findings in {len(report)} skills", err=True)
    if blocked:
        raise SystemExit(EXIT_FAILED)


def _scanned(repo: Repository) -> list[tuple[str, str]]:
    """(name, folder) of every visible skill and every skill held back, sorted by name."""
    found = [(s.name, s.directory) for s in repo.skills]
    found += [(sk.name, os.path.dirname(sk.path)) for sk in repo.skipped if sk.held and sk.name]
    return sorted(found)
