"""The ``skillshelf`` command: translates commands into library calls and errors into exit codes.

Exit codes: 0 ok; 1 the subject failed (invalid skill, unknown skill, refused or missing file);
2 usage error. Results go to stdout, diagnostics to stderr. Tables are drawn with rich on a
terminal and printed as plain text when piped.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from skillshelf import __version__
from skillshelf.errors import FileAccessError, SkillNotFoundError, SkillshelfError, UsageError

if TYPE_CHECKING:
    from skillshelf.diagnostics import Diagnostic
    from skillshelf.frontmatter import Mode
    from skillshelf.repository import Repository

__all__ = ["main"]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_FAILED = 1


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(EXIT_FAILED)


def _emit_json(value: object) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def _is_tty() -> bool:
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


_REPO_KEY = "skillshelf.repository"
# Diagnostic codes that mean a root could not be used (archive and URL roots have their own).
_ROOT_CODES = ("root.", "archive.", "remote.")


def _fail_on_root_errors(func: F) -> F:
    """Exit 1 after the command's output when a root given explicitly could not be used."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        repo = click.get_current_context().meta.get(_REPO_KEY)
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


def _open(
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
        click.echo(str(diag), err=True)
    click.get_current_context().meta[_REPO_KEY] = repo
    if not repo.roots:
        click.echo(
            "note: no skills roots found (pass --root, set SKILLSHELF_ROOTS, or create "
            ".agents/skills)",
            err=True,
        )
    return repo


def _repo_from(kwargs: dict[str, Any]) -> Repository:
    return _open(
        kwargs.pop("roots"),
        kwargs.pop("include_hidden"),
        kwargs.pop("max_depth"),
        kwargs.pop("max_dirs"),
        kwargs.pop("no_cache"),
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillshelf")
def main() -> None:
    """skillshelf — Agent Skills for LLM agents.

    Discover, validate, list, show, search and read skills (folders with a SKILL.md), and
    render the catalog a model sees in its system prompt.
    """


# -- validate ------------------------------------------------------------------------------


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--strict", is_flag=True, help="Exactly skills-ref's rules: unknown keys are errors.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of reports.")
@click.option("--include-hidden", is_flag=True, help="Also walk hidden folders.")
def validate(paths: tuple[str, ...], strict: bool, as_json: bool, include_hidden: bool) -> None:
    """Validate skill folders, SKILL.md files, or every skill under a root.

    Exits 1 when any skill has an error. Lenient mode (the default) reports unknown keys, a
    name/folder mismatch and an over-long description as warnings.
    """
    from skillshelf.validate import validate_path

    mode: Mode = "strict" if strict else "lenient"
    reports = [r for p in paths for r in validate_path(p, mode=mode, include_hidden=include_hidden)]
    if as_json:
        _emit_json([r.to_dict() for r in reports])
    else:
        for report in reports:
            label = report.name or report.path
            verdict = "valid" if report.valid else "INVALID"
            click.echo(f"{verdict:7}  {label}  ({report.path})")
            for diag in report.diagnostics:
                click.echo(f"  {_diag_line(diag)}", err=True)
        valid = sum(r.valid for r in reports)
        click.echo(f"{valid} of {len(reports)} valid ({mode} mode)", err=True)
    if not all(r.valid for r in reports):
        raise SystemExit(EXIT_FAILED)


def _diag_line(diag: Diagnostic) -> str:
    where = f" (line {diag.line})" if diag.line else ""
    return f"{diag.severity}: [{diag.code}] {diag.message}{where}"


# -- list ----------------------------------------------------------------------------------


@main.command(name="list")
@root_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--all", "show_all", is_flag=True, help="Also list skipped and shadowed skills.")
def list_(as_json: bool, show_all: bool, **kwargs: Any) -> None:
    """List the skills a model would see, sorted by name."""
    repo = _repo_from(kwargs)
    rows = [
        {
            "name": s.name,
            "status": "ok",
            "description": s.description,
            "path": s.directory,
            "root": s.root,
            "version": s.version,
            "model_invocable": not s.manifest.disable_model_invocation,
            "user_invocable": s.manifest.user_invocable,
            "warnings": [d.to_dict() for d in s.diagnostics],
        }
        for s in repo.skills
    ]
    if show_all:
        rows += [
            {
                "name": sh.skill.name,
                "status": "shadowed",
                "reason": f"shadowed by {sh.winner}",
                "path": sh.skill.directory,
                "root": sh.skill.root,
            }
            for sh in repo.shadowed
        ]
        rows += [
            {
                "name": None,
                "status": "skipped",
                "reason": sk.reason,
                "path": sk.path,
                "root": sk.root,
                "diagnostics": [d.to_dict() for d in sk.diagnostics],
            }
            for sk in repo.skipped
        ]
    if as_json:
        _emit_json(rows)
        return
    if not rows:
        click.echo("no skills found", err=True)
        return
    _table(
        ["name", "status", "description" if not show_all else "description / reason"],
        [
            [
                str(r["name"] or "-"),
                str(r["status"]),
                _short(str(r.get("description") or r.get("reason") or ""), 100),
            ]
            for r in rows
        ],
    )


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(headers: list[str], rows: list[list[str]]) -> None:
    if _is_tty():
        from rich.console import Console
        from rich.table import Table

        table = Table(*headers)
        for row in rows:
            table.add_row(*row)
        Console().print(table)
    else:
        for row in rows:
            click.echo("\t".join(row))


# -- show / read ---------------------------------------------------------------------------


@main.command()
@click.argument("name")
@root_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(name: str, as_json: bool, **kwargs: Any) -> None:
    """Show a skill as a model gets it on load: metadata, body and file tree."""
    from skillshelf.paths import file_tree

    repo = _repo_from(kwargs)
    try:
        skill = repo.get(name)
        body = skill.body()
    except SkillshelfError as exc:
        _fail(str(exc))
    tree = file_tree(skill.path)
    m = skill.manifest
    if as_json:
        _emit_json(
            {
                "name": m.name,
                "description": m.description,
                "path": skill.directory,
                "license": m.license,
                "compatibility": m.compatibility,
                "version": skill.version,
                "metadata": m.metadata,
                "allowed_tools": list(m.allowed_tools),
                "tags": list(m.tags),
                "triggers": list(m.triggers),
                "body": body,
                "files": [
                    {"path": e.path, "is_dir": e.is_dir, "size": e.size} for e in tree.entries
                ],
            }
        )
        return
    lines = [f"name: {m.name}", f"description: {m.description}", f"path: {skill.directory}"]
    for label, value in (
        ("license", m.license),
        ("compatibility", m.compatibility),
        ("version", skill.version),
        ("allowed-tools", " ".join(m.allowed_tools) or None),
        ("tags", ", ".join(m.tags) or None),
        ("triggers", ", ".join(m.triggers) or None),
    ):
        if value:
            lines.append(f"{label}: {value}")
    click.echo("\n".join(lines))
    click.echo("\n--- body ---\n" + body.rstrip("\n"))
    click.echo("\n--- files ---\n" + tree.render())
    for diag in skill.diagnostics:
        click.echo(_diag_line(diag), err=True)


@main.command()
@click.argument("name")
@click.argument("path")
@root_options
@click.option(
    "--max-chars",
    type=click.IntRange(1),
    default=24_000,
    show_default=True,
    help="Cut text after this many characters (with a marker).",
)
def read(name: str, path: str, max_chars: int, **kwargs: Any) -> None:
    """Print a file of skill NAME, by PATH relative to the skill folder.

    Paths that leave the skill folder (absolute, '..', symlinks out) are refused; binary files
    are described, not printed.
    """
    repo = _repo_from(kwargs)
    try:
        content = repo.read_file(name, path, max_chars=max_chars)
    except (SkillNotFoundError, FileAccessError) as exc:
        _fail(str(exc))
    click.echo(content.render())


# -- prompt / search -----------------------------------------------------------------------


@main.command()
@root_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["xml", "markdown"]),
    default="xml",
    show_default=True,
    help="skills-ref's <available_skills> XML, or compact Markdown.",
)
@click.option(
    "--budget-chars",
    type=click.IntRange(0),
    default=None,
    help="Fit the catalog in N characters: trim descriptions, then names only, then "
    "count what is left out.",
)
def prompt(fmt: str, budget_chars: int | None, **kwargs: Any) -> None:
    """Print the skills catalog for a system prompt (stable order: by name)."""
    repo = _repo_from(kwargs)
    try:
        text = repo.catalog(format="xml" if fmt == "xml" else "markdown", budget_chars=budget_chars)
    except UsageError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(text)


@main.command()
@click.argument("query")
@root_options
@click.option("--limit", "-n", type=click.IntRange(1), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON: [{name, score, description}].")
def search(query: str, limit: int, as_json: bool, **kwargs: Any) -> None:
    """Rank skills for QUERY: exact name, trigger, name, tags, description, then BM25."""
    repo = _repo_from(kwargs)
    hits = repo.search(query, limit=limit)
    if as_json:
        _emit_json(
            [
                {"name": h.name, "score": round(h.score, 4), "description": h.description}
                for h in hits
            ]
        )
        return
    if not hits:
        click.echo(f"no skill matches {query!r}", err=True)
        return
    _table(
        ["name", "score", "why", "description"],
        [[h.name, f"{h.score:.2f}", h.reason, _short(h.description, 90)] for h in hits],
    )


# -- call / tools --------------------------------------------------------------------------


@main.command()
@click.argument("tool")
@click.argument("json_args", required=False, default=None, metavar="[JSON_ARGS]")
@root_options
@click.option(
    "--session",
    "session_id",
    default="cli",
    show_default=True,
    help="Session id; with a persistent --store, successive calls share it.",
)
@click.option("--agent", default="main", show_default=True, help="Agent name within the session.")
@click.option(
    "--store",
    "store_url",
    default=None,
    metavar="URL",
    help="memory: (default), sqlite:PATH or redis://HOST:PORT/DB.",
)
@click.option(
    "--load-mode",
    type=click.Choice(["once", "turn", "session"]),
    default="session",
    show_default=True,
    help="How long skill_load keeps a skill loaded.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"tool","status":"ok|recoverable|fatal","content"}.',
)
def call(
    tool: str,
    json_args: str | None,
    session_id: str,
    agent: str,
    store_url: str | None,
    load_mode: str,
    as_json: bool,
    **kwargs: Any,
) -> None:
    """Run one model-facing TOOL exactly as a model would call it.

    JSON_ARGS is the arguments object, e.g. '{"skill": "csv-insights"}'. Exit 0 when the tool
    succeeded, 1 when it returned an error (recoverable or fatal).
    """
    from skillshelf.errors import UsageError as _UsageError
    from skillshelf.stores import open_store
    from skillshelf.tools import SkillTools

    repo = _repo_from(kwargs)
    try:
        store = open_store(store_url)
    except (_UsageError, SkillshelfError) as exc:
        raise click.UsageError(str(exc)) from None
    try:
        tools = SkillTools(
            repo,
            store=store,
            session_id=session_id,
            agent=agent,
            load_mode=load_mode,  # type: ignore[arg-type]
        )
        result = tools.call(tool, json_args)
    finally:
        store.close()
    if as_json:
        _emit_json(result.to_dict())
    else:
        click.echo(result.content)
        if result.status != "ok":
            click.echo(f"[{result.status}]", err=True)
    if result.status != "ok":
        raise SystemExit(EXIT_FAILED)


@main.command()
@root_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["openai", "anthropic", "mcp"]),
    default="openai",
    show_default=True,
    help="The provider's tool shape.",
)
@click.option("--with-exec", is_flag=True, help="Include workspace_exec.")
def tools(fmt: str, with_exec: bool, **kwargs: Any) -> None:
    """Print the JSON Schemas of the skill tools (skill is an enum of the visible names)."""
    from skillshelf.tools import SKILL_TOOLS, SkillTools

    repo = _repo_from(kwargs)
    names = [*SKILL_TOOLS, "workspace_exec"] if with_exec else list(SKILL_TOOLS)
    _emit_json(SkillTools(repo).schemas(fmt, tools=names))  # type: ignore[arg-type]


# Commands of larger features live in their own modules (``skillshelf/cli_*.py``) and register
# themselves on ``main`` when imported; add a module here to expose its commands.
_COMMAND_MODULES: tuple[str, ...] = (
    "skillshelf.cli_serve",
    "skillshelf.cli_trust",
    "skillshelf.cli_chat",
    "skillshelf.cli_exec",
    "skillshelf.cli_lint",
    "skillshelf.cli_tokens",
    "skillshelf.cli_eval",
)
for _module in _COMMAND_MODULES:
    importlib.import_module(_module)


if __name__ == "__main__":  # pragma: no cover
    # Run as ``python -m skillshelf.cli`` this file is ``__main__``, while the command modules
    # registered themselves on the importable ``skillshelf.cli``; run that group.
    from skillshelf.cli import main as _registered

    _registered()
