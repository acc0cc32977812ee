"""Every Agent option has a ``chat`` and an ``eval`` flag with the same name and default (the
table in docs/agent.md), so nothing is library-only by accident."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import click
import pytest

from skillshelf.agent.config import AgentConfig
from skillshelf.agent.results import RetryPolicy
from skillshelf.cli.chat import chat
from skillshelf.cli.eval import eval_
from skillshelf.exec.workspace import ExecPolicy
from skillshelf.harness import SkillSettings

# Agent option → the click parameter that sets it, where the names differ.
RENAMED = {
    "model": "model_spec",  # --model SPEC (openai:NAME, anthropic:NAME, scripted:FILE…)
    "repo": "roots",  # --root PATH (and the other root options)
    "workspace": "enable_exec",  # --exec (with --workspace DIR for where)
    "executor": "sandbox",  # --sandbox auto|bwrap|local|docker
    "exec_policy": "exec_timeout",  # --exec-timeout, --allow-network, --allow-command
}
# Options that cannot be flags: Python objects the caller builds.
NOT_FLAGS = {
    "description",  # only meaningful when the agent is another agent's tool (as_tool)
    "activations",  # Activation objects: callables deciding which tools a loaded skill brings
}
# chat keeps state and a trace file per conversation; every eval run has its own in-memory
# store, and --out keeps each run's trace.
CHAT_ONLY = {"store", "trace"}
# The CLI's default differs on purpose: a terminal chat gets a short persona.
DIFFERENT_DEFAULT = {"instructions"}


def agent_options() -> dict[str, inspect.Parameter]:
    """The Agent's own arguments and every harness option (SkillSettings' fields; the Agent's
    ``name`` is a shortcut for ``agent``), each with its default."""
    own = inspect.signature(AgentConfig.__init__).parameters
    options = {n: p for n, p in own.items() if n not in ("self", "settings", "options", "name")}
    for field in dataclasses.fields(SkillSettings):
        if field.name in ("fork_of", "fork_tree"):  # set by the harness on a fork's own settings
            continue
        options[field.name] = inspect.Parameter(
            field.name, inspect.Parameter.KEYWORD_ONLY, default=field.default
        )
    return options


def click_params(command: click.Command) -> dict[str, click.Parameter]:
    return {str(p.name): p for p in command.params}


@pytest.mark.parametrize("command", [chat, eval_], ids=["chat", "eval"])
def test_every_agent_option_has_a_flag(command: click.Command) -> None:
    params = click_params(command)
    skipped = NOT_FLAGS | (CHAT_ONLY if command is eval_ else set())
    missing = [
        name
        for name in agent_options()
        if name not in skipped and RENAMED.get(name, name) not in params
    ]
    assert missing == []


@pytest.mark.parametrize("command", [chat, eval_], ids=["chat", "eval"])
def test_flags_default_as_the_agent_does(command: click.Command) -> None:
    params = click_params(command)
    context = click.Context(command)
    options = agent_options()
    checked = 0
    for name, option in options.items():
        flag = params.get(RENAMED.get(name, name))
        if flag is None or name in DIFFERENT_DEFAULT or option.default is inspect.Parameter.empty:
            continue
        default = option.default
        given = flag.get_default(context)
        if name == "retry":
            default = RetryPolicy().max_retries
        elif name == "exec_policy":
            default = ExecPolicy().default_timeout_s
        elif default is None or default == ():
            # Unset: a flag off, an option not given, a repeatable option given no times.
            # (click ≥ 8.2 reports an option without a default as its UNSET sentinel.)
            assert given in (None, False, ()) or type(given).__name__ == "Sentinel", name
            continue
        assert given == default, name
        checked += 1
    assert checked >= 10


def test_allow_lists_name_real_options() -> None:
    names = set(agent_options())
    assert set(RENAMED) | NOT_FLAGS | CHAT_ONLY | DIFFERENT_DEFAULT <= names


def test_docs_table_lists_every_agent_option_beside_its_flag() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "agent.md").read_text()
    cell = r"((?:[^|\\]|\\.)+)"  # a table cell; \| is a pipe inside it
    rows = dict(re.findall(rf"^\| `(\w+)` \| {cell} \|", text, flags=re.MULTILINE))
    assert set(rows) == set(agent_options())
    params = click_params(chat)
    for name, flags in rows.items():
        if name in NOT_FLAGS:
            assert "—" in flags, name
            continue
        option = params[str(RENAMED.get(name, name))]
        assert any(f"`{o}" in flags for o in option.opts), (name, flags)


def test_every_settings_flag_sets_a_skillsettings_field() -> None:
    from skillshelf.cli._settings import FLAGS

    fields = {f.name for f in dataclasses.fields(SkillSettings)}
    assert set(FLAGS) <= fields
