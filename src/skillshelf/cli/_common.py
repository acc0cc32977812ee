"""What every ``skillshelf`` command shares: options, output helpers, exit codes.

Exit codes: 0 ok; 1 the subject failed (invalid skill, unknown skill, refused or missing file);
2 usage error. Results go to stdout, diagnostics to stderr. Tables are drawn with rich on a
terminal and printed as plain text when piped.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from skillshelf.cli.errors import EXIT_FAILED as EXIT_FAILED
from skillshelf.cli.errors import EXIT_USAGE

if TYPE_CHECKING:
    from skillshelf.exec.runner import Executor
    from skillshelf.repository import Repository


F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(EXIT_FAILED)


def usage_fail(message: str) -> NoReturn:
    """``error: message`` on stderr and exit 2 (bad input), for problems found after parsing."""
    click.echo(f"error: {message}", err=True)
    raise SystemExit(EXIT_USAGE)


def emit_json(value: object) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def is_tty() -> bool:
    return sys.stdout.isatty()


@contextlib.contextmanager
def progress_bar(total: int, label: str, *, enabled: bool = True) -> Iterator[Callable[..., None]]:
    """A rich progress bar on stderr, only when stderr is a terminal (never corrupts stdout).

    Yields a function to call once per finished item (its arguments are ignored).
    """
    if not (enabled and sys.stderr.isatty()):
        yield lambda *_args: None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda *_args: bar.advance(task)


REPO_KEY = "skillshelf.repository.repository"
# Library messages name no CLI flags; the CLI adds the flag that changes the outcome.
_FLAG_HINTS = {"discovery.dir_cap": " (see --max-dirs)"}
# Diagnostic codes that mean a root could not be used (archive and URL roots have their own).
_ROOT_CODES = ("root.", "archive.", "remote.")


def _fail_on_root_errors(func: F) -> F:
    """Exit 1 after the command's output when a root given explicitly could not be used."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        repo = click.get_current_context().meta.get(REPO_KEY)
        if repo is not None and any(
            d.severity == "error" and d.code.startswith(_ROOT_CODES) for d in repo.diagnostics
        ):
            raise SystemExit(EXIT_FAILED)
        return result

    return wrapper  # type: ignore[return-value]


def root_options(func: F) -> F:
    """The options every command that opens skills shares (a missing root makes it exit 1)."""
    func = _fail_on_root_errors(func)
    options = [
        click.option(
            "--root",
            "-r",
            "roots",
            multiple=True,
            metavar="PATH",
            help="A skills root (folder of skill folders, or one skill). Repeat for several; "
            "the first root that defines a name wins. Default: $SKILLSHELF_ROOTS, else "
            ".agents/skills and .claude/skills in the project and home.",
        ),
        click.option(
            "--include-hidden",
            is_flag=True,
            help="Also walk hidden folders (.curated/, .system/, …) and node_modules.",
        ),
        click.option(
            "--max-depth",
            type=click.IntRange(0, 64),
            default=6,
            show_default=True,
            help="Folder levels searched below each root.",
        ),
        click.option(
            "--max-dirs",
            type=click.IntRange(1),
            default=2000,
            show_default=True,
            help="Folders visited per root before the scan stops (with a warning).",
        ),
        click.option(
            "--no-cache",
            is_flag=True,
            help="Do not read or write the index cache ($SKILLSHELF_CACHE_DIR).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def model_options(func: F) -> F:
    """``--model``, ``--base-url`` and ``--api-key-env``: what :func:`~skillshelf.models.open_model`
    takes, for every command that talks to a model."""
    options = [
        click.option(
            "--model",
            "model_spec",
            required=True,
            metavar="SPEC",
            help="openai:NAME, anthropic:NAME, scripted:FILE (a JSON list of replies), or "
            "baseline:search — an offline lexical baseline (skillshelf's own search over the "
            "catalog; not a model) that shows whether the descriptions can be told apart at "
            "all. baseline:search?min_score=X sets its load threshold.",
        ),
        click.option(
            "--base-url", help="The provider's URL, e.g. http://127.0.0.1:8000/v1 for vLLM."
        ),
        click.option(
            "--api-key-env",
            metavar="VAR",
            help="Environment variable holding the API key "
            "(default OPENAI_API_KEY / ANTHROPIC_API_KEY).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def open_repository(
    roots: Sequence[str],
    include_hidden: bool,
    max_depth: int,
    max_dirs: int,
    no_cache: bool,
) -> Repository:
    from skillshelf.repository import Repository

    repo = Repository(
        roots or None,
        include_hidden=include_hidden,
        max_depth=max_depth,
        max_dirs=max_dirs,
        cache_dir=False if no_cache else None,
    )
    for diag in repo.diagnostics:
        hint = _FLAG_HINTS.get(diag.code, "")
        click.echo(f"{diag}{hint}", err=True)
    click.get_current_context().meta[REPO_KEY] = repo
    if not repo.roots:
        click.echo(
            "note: no skills roots found (pass --root, set SKILLSHELF_ROOTS, or create "
            ".agents/skills)",
            err=True,
        )
    return repo


def repo_from(kwargs: dict[str, Any]) -> Repository:
    return open_repository(
        kwargs.pop("roots"),
        kwargs.pop("include_hidden"),
        kwargs.pop("max_depth"),
        kwargs.pop("max_dirs"),
        kwargs.pop("no_cache"),
    )


def short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(headers: list[str], rows: list[list[str]]) -> None:
    if is_tty():
        from rich.console import Console
        from rich.table import Table

        table = Table(*headers)
        for row in rows:
            table.add_row(*row)
        Console().print(table)
    else:
        for row in rows:
            click.echo("\t".join(row))


# -- running scripts: serve --exec, chat --exec, eval --exec, exec ---------------------------

SANDBOXES: tuple[str, ...] = ("auto", "bwrap", "local", "docker")


def sandbox_option(*, default: str | None, help: str) -> Callable[[F], F]:
    """``--sandbox``: which executor runs commands (one definition for every command)."""
    return click.option(
        "--sandbox",
        type=click.Choice(SANDBOXES),
        default=default,
        show_default=default is not None,
        help=help,
    )


def docker_options(func: F) -> F:
    """``--image`` and ``--runtime``: the container executor's settings (``--sandbox docker``)."""
    options = [
        click.option(
            "--image",
            default=None,
            metavar="IMAGE",
            help="--sandbox docker: the image commands run in; it must hold the programs the "
            "skills need (default: python:3.12-slim-bookworm).",
        ),
        click.option(
            "--runtime",
            default=None,
            metavar="NAME",
            help="--sandbox docker: the engine's OCI runtime, e.g. runsc (gVisor).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def ro_path_option(*, help: str) -> Callable[[F], F]:
    """``--ro-path``: host paths a sandbox shows read-only (``ExecPolicy.extra_ro_paths``)."""
    return click.option("--ro-path", "ro_paths", multiple=True, metavar="PATH", help=help)


def exec_options(func: F) -> F:
    """``--exec``, ``--sandbox``, ``--image``/``--runtime`` and ``--ro-path``: offer
    ``workspace_exec`` and choose what runs it."""
    func = ro_path_option(
        help="--exec: also show host PATH read-only at the same path in the sandbox (e.g. a "
        "runtime the skills need); repeatable."
    )(func)
    func = docker_options(func)
    func = sandbox_option(
        default=None,
        help="Executor for --exec (default auto: bwrap where it works, else local; docker = a "
        "container, see --image, --runtime).",
    )(func)
    return click.option(
        "--exec",
        "enable_exec",
        is_flag=True,
        help="Offer workspace_exec (per-session workspaces).",
    )(func)


def checked_ro_paths(ro_paths: tuple[str, ...]) -> tuple[str, ...]:
    """``--ro-path`` values, each checked to exist (click.UsageError otherwise)."""
    for path in ro_paths:
        if not os.path.exists(path):
            raise click.UsageError(f"--ro-path {path}: no such file or folder")
    return ro_paths


def open_executor(
    enable_exec: bool,
    sandbox: str | None,
    *,
    image: str | None = None,
    runtime: str | None = None,
    ro_paths: tuple[str, ...] = (),
) -> Executor | None:
    """The executor ``--exec``/``--sandbox`` ask for (None without ``--exec``); a warning on
    stderr when ``auto`` falls back to the local executor.

    Raises:
        click.UsageError: ``--sandbox``, ``--image``, ``--runtime`` or ``--ro-path`` without
            ``--exec``, or a sandbox that does not work.
    """
    if not enable_exec:
        given = {"--sandbox": sandbox, "--image": image, "--runtime": runtime}
        names = [name for name, value in given.items() if value is not None]
        names += ["--ro-path"] if ro_paths else []
        if names:
            verb = "applies" if len(names) == 1 else "apply"
            raise click.UsageError(f"{' and '.join(names)} only {verb} with --exec")
        return None
    from skillshelf.exec.runner import SandboxUnavailableError

    checked_ro_paths(ro_paths)
    try:
        return choose_executor(sandbox or "auto", image=image, runtime=runtime)
    except SandboxUnavailableError as exc:
        raise click.UsageError(f"--exec: {exc}") from None


def choose_executor(sandbox: str, *, image: str | None, runtime: str | None) -> Executor:
    """The executor ``--sandbox`` names, a fallback warning printed (SandboxUnavailableError
    and misused options propagate: exit 1 and 2)."""
    from skillshelf.exec.executors import select_executor

    if sandbox != "docker" and (image is not None or runtime is not None):
        raise click.UsageError("--image and --runtime apply to --sandbox docker only")
    executor, warning = select_executor(sandbox, image=image, runtime=runtime)  # type: ignore[arg-type]
    if warning:
        click.echo(f"warning: {warning}", err=True)
    return executor
