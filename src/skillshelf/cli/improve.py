"""``skillshelf improve``: better descriptions from eval failures, judged on held-out cases.

Exit codes: 0 done (whether or not a change was kept); 1 the proposer or the evaluated model
failed, or ``--write`` found a SKILL.md changed since it was read; 2 a usage error (bad
options or cases file, unknown skill, an empty split).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from skillshelf.agent.results import DEFAULT_MAX_STEPS
from skillshelf.cli._agent import CATALOG_SETTINGS
from skillshelf.cli._common import emit_json, model_options, repo_from, root_options, usage_fail
from skillshelf.cli._settings import settings_options, settings_values
from skillshelf.evals.split import DEFAULT_HOLDOUT

__all__ = ["improve"]


@click.command("improve")
@root_options
@click.argument("cases_path", metavar="CASES", type=click.Path(dir_okay=False, path_type=Path))
@model_options
@click.option(
    "--proposer",
    "proposer_spec",
    metavar="SPEC",
    help="The model that writes descriptions, in --model's form (default: --model; required "
    "when --model is baseline:search, which cannot write).",
)
@click.option(
    "--holdout",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=DEFAULT_HOLDOUT,
    show_default=True,
    help="Share of each skill's cases held out to judge proposals (never shown to the proposer).",
)
@click.option(
    "--seed", default="", help="Changes which cases are held out (the split is a hash of it)."
)
@click.option(
    "--skill",
    "skills",
    multiple=True,
    metavar="NAME",
    help="Only change this skill (repeatable; default: every skill failing on the training split).",
)
@click.option(
    "--attempts",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Proposals per skill; a rejected one is shown to the proposer with why.",
)
@click.option("--runs", type=click.IntRange(1), default=1, show_default=True, help="Runs per case.")
@click.option(
    "--concurrency", type=click.IntRange(1), default=4, show_default=True, help="Runs at once."
)
@click.option(
    "--max-steps",
    type=click.IntRange(1),
    default=DEFAULT_MAX_STEPS,
    show_default=True,
    help="Model requests per run before the run counts as errored.",
)
@click.option(
    "--write",
    is_flag=True,
    help="Apply the kept changes to the SKILL.md files (only the description).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report and the diff as JSON.")
@settings_options(*CATALOG_SETTINGS)
def improve(
    cases_path: Path,
    model_spec: str,
    base_url: str | None,
    api_key_env: str | None,
    proposer_spec: str | None,
    holdout: float,
    seed: str,
    skills: tuple[str, ...],
    attempts: int,
    runs: int,
    concurrency: int,
    max_steps: int,
    write: bool,
    as_json: bool,
    **kwargs: Any,
) -> None:
    """Rewrite the descriptions of skills that fail the evals in CASES, keeping only what helps.

    CASES is an eval cases file (as for `skillshelf eval`). The cases are split, by a hash,
    into a training and a held-out split within each expected skill. Every case runs through
    the agent loop with --model; for each skill with a training failure, the --proposer model
    is shown those failures and proposes a new description; it is kept only if that skill's
    F1 on the held-out split rises and no other skill's held-out F1 falls. Both the current
    and the proposed descriptions are judged with the catalog options given here (format,
    budget, placement, relevant skills, guidance, skill tools, tool style), as the agent will
    show them. Prints the
    before/after report of both splits and a unified diff of the SKILL.md files; --write
    applies it (nothing but the description value changes).

    Exit codes: 0 done; 1 a model failed, or a SKILL.md changed before --write; 2 a usage
    error (bad options or cases file, unknown skill, an empty split).
    """
    from skillshelf.evals.cases import CasesError, check_cases, load_cases

    repo = repo_from(kwargs)
    shown = settings_values(kwargs, CATALOG_SETTINGS)
    try:
        cases = load_cases(cases_path)
        check_cases(
            cases, {s.name: (Path(s.directory) if s.model_invocable else None) for s in repo}
        )
    except CasesError as exc:
        usage_fail(str(exc))
    unknown = [name for name in skills if name not in repo]
    if unknown:
        from skillshelf.core.search import closest_names
        from skillshelf.errors import unknown_skill_message

        usage_fail(unknown_skill_message(unknown[0], closest_names(unknown[0], repo.names())))
    if proposer_spec is None and model_spec.startswith("baseline:"):
        usage_fail("baseline:search cannot write descriptions: pass --proposer SPEC")
    model, proposer = _models(model_spec, proposer_spec, base_url, api_key_env)
    result = _run(
        cases,
        repo,
        model,
        proposer,
        holdout,
        seed,
        skills,
        (attempts, runs, concurrency, max_steps),
        shown,
    )
    here = os.getcwd()
    if as_json:
        emit_json(result.to_json(relative_to=here))
    else:
        from skillshelf.evals.improve_render import render_text

        click.echo(render_text(result, relative_to=here), nl=False)
    if write and result.changes:
        for path in result.write():
            click.echo(f"wrote {path}", err=True)
    elif write:
        click.echo("nothing to write: no change was kept", err=True)


def _models(
    model_spec: str, proposer_spec: str | None, base_url: str | None, api_key_env: str | None
) -> tuple[Any, Any]:
    from skillshelf.models import open_model

    model = open_model(model_spec, base_url=base_url, api_key_env=api_key_env)
    if proposer_spec is None or proposer_spec == model_spec:
        return model, model
    return model, open_model(proposer_spec, base_url=base_url, api_key_env=api_key_env)


def _run(
    cases: Any,
    repo: Any,
    model: Any,
    proposer: Any,
    holdout: float,
    seed: str,
    skills: tuple[str, ...],
    counts: tuple[int, int, int, int],
    shown: dict[str, Any],
) -> Any:
    import anyio

    from skillshelf.evals.improve import improve_descriptions

    # Errors of the models (ProposerError, EvalAbortedError, ModelAuthError) exit 1 with their
    # message, like every library error (skillshelf.cli.errors); UsageError exits 2.
    attempts, runs, concurrency, max_steps = counts
    return anyio.run(
        lambda: improve_descriptions(
            cases,
            repo,
            model,
            proposer=proposer,
            holdout=holdout,
            seed=seed,
            skills=skills or None,
            attempts=attempts,
            runs=runs,
            concurrency=concurrency,
            max_steps=max_steps,
            agent_options=shown,
        )
    )
