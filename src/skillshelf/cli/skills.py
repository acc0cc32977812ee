"""The commands for reading skills: validate, list, show, read, prompt, search, call, tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from skillshelf.cli._common import (
    EXIT_FAILED,
    emit_json,
    repo_from,
    root_options,
    short,
    table,
)

if TYPE_CHECKING:
    from skillshelf.core.diagnostics import Diagnostic
    from skillshelf.core.frontmatter import Mode


# -- validate ------------------------------------------------------------------------------


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--strict", is_flag=True, help="Exactly skills-ref's rules: unknown keys are errors.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of reports.")
@click.option("--include-hidden", is_flag=True, help="Also walk hidden folders.")
def validate(paths: tuple[str, ...], strict: bool, as_json: bool, include_hidden: bool) -> None:
    """Validate skill folders, SKILL.md files, or every skill under a root.

    Exits 1 when any skill is invalid. The verdict is the one list, prompt and serve apply:
    lenient mode (the default) fails only what a model cannot use (unreadable or non-YAML
    frontmatter, no name or description, a name unsafe as a folder or command) and reports
    name format, name/folder mismatch, lengths and unknown keys as warnings.
    """
    from skillshelf.skills.validate import validate_path

    mode: Mode = "strict" if strict else "lenient"
    reports = [r for p in paths for r in validate_path(p, mode=mode, include_hidden=include_hidden)]
    if as_json:
        emit_json([r.to_dict() for r in reports])
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


@click.command(name="list")
@root_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Also list shadowed skills and skipped candidates (invalid SKILL.md files, a SKILL.MD "
    "in the wrong case, dangling links, SKILL.md files nested in a skill), each with why.",
)
def list_(as_json: bool, show_all: bool, **kwargs: Any) -> None:
    """List the skills a model would see, sorted by name."""
    repo = repo_from(kwargs)
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
                "name": sk.name,
                "status": "skipped",
                "held": sk.held,
                "reason": sk.reason,
                "path": sk.path,
                "root": sk.root,
                "diagnostics": [d.to_dict() for d in sk.diagnostics],
            }
            for sk in repo.skipped
        ]
        rows += [
            {
                "name": None,
                "status": "skipped",
                "held": False,
                "reason": ig.reason,
                "path": ig.path,
                "root": ig.root,
                "diagnostics": [ig.diagnostic().to_dict()],
            }
            for ig in [*repo.ignored, *repo.nested()]
        ]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no skills found", err=True)
        return
    table(
        ["name", "status", "description" if not show_all else "description / reason"],
        [
            [
                str(r["name"] or "-"),
                str(r["status"]),
                short(str(r.get("description") or r.get("reason") or ""), 100),
            ]
            for r in rows
        ],
    )


# -- show / read ---------------------------------------------------------------------------


@click.command()
@click.argument("name")
@root_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(name: str, as_json: bool, **kwargs: Any) -> None:
    """Show a skill as a model gets it on load: metadata, body and file tree."""
    from skillshelf.skills.paths import file_tree

    repo = repo_from(kwargs)
    skill = repo.get(name)
    body = skill.body()
    tree = file_tree(skill.path)
    m = skill.manifest
    if as_json:
        emit_json(
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


@click.command()
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
    repo = repo_from(kwargs)
    content = repo.read_file(name, path, max_chars=max_chars)
    click.echo(content.render())


# -- prompt / search -----------------------------------------------------------------------


@click.command()
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
    repo = repo_from(kwargs)
    text = repo.catalog(format="xml" if fmt == "xml" else "markdown", budget_chars=budget_chars)
    click.echo(text)


@click.command()
@click.argument("query")
@root_options
@click.option("--limit", "-n", type=click.IntRange(1), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON: [{name, score, description}].")
def search(query: str, limit: int, as_json: bool, **kwargs: Any) -> None:
    """Rank skills for QUERY: exact name, trigger, name, tags, description, then BM25."""
    repo = repo_from(kwargs)
    hits = repo.search(query, limit=limit)
    if as_json:
        emit_json(
            [
                {"name": h.name, "score": round(h.score, 4), "description": h.description}
                for h in hits
            ]
        )
        return
    if not hits:
        click.echo(f"no skill matches {query!r}", err=True)
        return
    table(
        ["name", "score", "why", "description"],
        [[h.name, f"{h.score:.2f}", h.reason, short(h.description, 90)] for h in hits],
    )


# -- call / tools --------------------------------------------------------------------------


@click.command()
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
    default="turn",
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
    from skillshelf.stores import open_store
    from skillshelf.tools import SkillTools

    repo = repo_from(kwargs)
    store = open_store(store_url)
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
        emit_json(result.to_dict())
    else:
        click.echo(result.content)
        if result.status != "ok":
            click.echo(f"[{result.status}]", err=True)
    if result.status != "ok":
        raise SystemExit(EXIT_FAILED)


@click.command()
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
    from skillshelf.tools import ALL_TOOLS, SKILL_TOOLS, SkillTools

    repo = repo_from(kwargs)
    names = list(ALL_TOOLS if with_exec else SKILL_TOOLS)
    emit_json(SkillTools(repo).schemas(fmt, tools=names))  # type: ignore[arg-type]
