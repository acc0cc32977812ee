"""The scenario table: scripts written once, run unchanged through every face.

A :class:`Scenario` is a name, the skill options it needs, a script of user messages and, for
each, the model's steps (tool calls with their arguments as the raw JSON text a model sends,
then a final text), and a check over the :class:`~conformance.record.Record` a face gives back.
The checks speak only of what a model can see: the instructions and messages of each request,
the text (and, where the face shows it, the grade) of each tool result, and the trace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from conformance.record import Record, Result
from skillshelf.core.session import LoadMode
from skillshelf.harness import SkillSession, Switch, TurnOptions
from skillshelf.testing import make_skill

# -- the skills every scenario sees --------------------------------------------------------

NOTES_BODY: Final = "RELEASE-NOTES-BODY: group the commits by type."
STYLE_DOC: Final = "STYLE-DOC: write in the past tense."
TICKET_BODY: Final = "TICKET-BODY: look the ticket up before answering."
GIT_BODY: Final = "GIT-BODY: run git log first."
CJK_NAME: Final = "目录浏览"
CJK_BODY: Final = "CJK-BODY 目录 args=$ARGUMENTS"
FORK_BODY: Final = "FORK-TASK-BODY: square the number $ARGUMENTS."
RUNNER_BODY: Final = "RUNNER-BODY: run the scripts."
SCRIPT_OUTPUT: Final = "HELLO-FROM-SCRIPT"
FAIL_STDERR: Final = "FAIL-STDERR: the input is missing"
FATAL_MARK: Final = "Stop retrying it"  # in core.session.FATAL_REPEAT_MESSAGE

SKILLS: Final[Mapping[str, Mapping[str, Any]]] = {
    "release-notes": {
        "description": "Draft release notes from commits. Use when preparing a release.",
        "body": f"# Release notes\n\n{NOTES_BODY}\n",
        "files": {"references/style.md": f"{STYLE_DOC}\n"},
    },
    "ticket-lookup": {
        "description": "Look up support tickets. Use when a ticket id is mentioned.",
        "body": f"# Tickets\n\n{TICKET_BODY}\n",
        "frontmatter": {"allowed-tools": "lookup"},
    },
    "git-helper": {
        "description": "Inspect a git repository. Use when asked about its history.",
        "body": f"# Git\n\n{GIT_BODY}\n",
        "frontmatter": {"allowed-tools": "Bash(git:*) Read"},
    },
    CJK_NAME: {
        "description": "浏览目录并列出文件。Use when asked to browse a folder.",
        "body": f"# 目录\n\n{CJK_BODY}\n",
    },
    "fork-task": {
        "description": "Square a number in a sub-agent. Use when asked to square a number.",
        "body": f"{FORK_BODY}\n",
        "frontmatter": {"context": "fork"},
    },
    "runner": {
        "description": "Run the bundled scripts. Use when asked to run the demo scripts.",
        "body": f"# Runner\n\n{RUNNER_BODY}\n",
        "files": {
            "scripts/hello.py": f"print({SCRIPT_OUTPUT!r})\n",
            "scripts/fail.py": f"import sys\nsys.stderr.write({FAIL_STDERR!r})\nsys.exit(3)\n",
            "scripts/slow.py": "import time\ntime.sleep(60)\n",
        },
    },
}


def write_skills(root: Path) -> Path:
    """The scenario skills, written under ``root``."""
    for name, spec in SKILLS.items():
        make_skill(
            root,
            name,
            spec["description"],
            body=spec["body"],
            files=spec.get("files"),
            frontmatter=spec.get("frontmatter"),
        )
    return root


# -- user tools (each face wraps the same functions in its own tool type) -------------------

DEPLOYED: list[str] = []  # deploy's side effect: what a refused call must not reach


def lookup(ticket: str) -> str:
    """Look a support ticket up by its id."""
    return f"TICKET {ticket}: open"


def deploy(target: str) -> str:
    """Deploy the service to a target."""
    DEPLOYED.append(target)
    return f"DEPLOYED {target}"


USER_TOOLS: Final[Mapping[str, Callable[..., str]]] = {"lookup": lookup, "deploy": deploy}


@dataclass(frozen=True, slots=True)
class UserTool:
    """A user tool a scenario offers: always, or only while a skill naming it in its
    ``allowed-tools`` is loaded (``activated``)."""

    name: str
    activated: bool = False

    @property
    def function(self) -> Callable[..., str]:
        return USER_TOOLS[self.name]


# -- scripts -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call as the model sends it: a name and the arguments' raw JSON text."""

    tool: str
    arguments: str

    def parsed(self) -> dict[str, Any] | None:
        """The arguments as an object, or None when the text is no JSON object."""
        try:
            value = json.loads(self.arguments)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


Step = Call | str  # a tool call, or a reply in text (the final answer of a run or a sub-agent)


def call(tool: str, arguments: Mapping[str, Any] | str | None = None) -> Call:
    """A call; a string is sent verbatim (to script malformed JSON)."""
    if isinstance(arguments, str):
        return Call(tool, arguments)
    return Call(tool, json.dumps(dict(arguments or {}), ensure_ascii=False))


@dataclass(frozen=True, slots=True)
class Turn:
    """One user message of a conversation and the model's steps until its answer; the host
    application's options for the message, and skills it switches before it, if any."""

    message: str
    steps: tuple[Step, ...]
    conversation: str = "a"
    options: TurnOptions | None = None
    switches: tuple[tuple[str, Switch], ...] = ()

    def prepare(self, session: SkillSession) -> None:
        """What the host application does before sending the message (every face alike)."""
        for name, switch in self.switches:
            session.switch([name], switch)
        if self.options is not None:
            session.next_turn(self.options)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A script, the options it runs with, and what must come back."""

    name: str
    summary: str
    turns: tuple[Turn, ...]
    check: Callable[[Record], None]
    load_mode: LoadMode = "turn"
    enforce_allowed_tools: bool = False
    user_tools: tuple[UserTool, ...] = ()
    workspace: bool = False
    catalog_budget: int | None = None  # None: each face's default

    @property
    def calls(self) -> list[Call]:
        return [s for t in self.turns for s in t.steps if isinstance(s, Call)]


def one(
    message: str,
    *steps: Step,
    conversation: str = "a",
    options: TurnOptions | None = None,
    switches: tuple[tuple[str, Switch], ...] = (),
) -> Turn:
    return Turn(message, steps, conversation, options, switches)


# -- assertions every check uses ------------------------------------------------------------


def graded(record: Record, result: Result, expected: str) -> None:
    """``result`` carries the grade ``expected`` as far as the face shows grades."""
    if record.grading == "full":
        assert result.status == expected, (result.status, result.text)
    elif record.grading == "ok_or_error":
        assert result.status == ("ok" if expected == "ok" else "error"), (result.status, result)
    else:
        assert result.status is None


def answered(record: Record, *answers: str) -> None:
    """Every turn ended with its scripted final answer (no crash, no empty answer)."""
    assert [t.answer for t in record.turns] == list(answers)


def results_of(record: Record, count: int) -> list[Result]:
    results = record.results
    assert len(results) == count, [(r.tool, r.text[:200]) for r in results]
    return results


def useful(result: Result) -> None:
    """A failure the model can act on: words, not an empty or internal answer."""
    assert len(result.text.strip()) > 20, result
    assert "Traceback" not in result.text


# -- the scenarios --------------------------------------------------------------------------

# The budget of the cut-catalog scenario: room for the names and a few short descriptions,
# never for every description.
CUT_BUDGET: Final = 400
NOTES_DESCRIPTION: Final = "Draft release notes from commits. Use when preparing a release."
SEARCH_FIRST_MARK: Final = "call skill_search with words from the task"

LOAD_NOTES = call("skill_load", {"skill": "release-notes"})
MODEL_SKILLS = ["release-notes", "ticket-lookup", "git-helper", CJK_NAME, "fork-task", "runner"]


def check_catalog_cut(record: Record) -> None:
    """A catalog the budget cuts: the model is told to search first and can; the skill that
    fits each message is shown with its whole description beside the message (a face with
    user messages) or by the search (serve); the stable part of the prompt does not move."""
    answered(record, "Searched.", "Second.")
    first, second = record.turns[0].requests[0], record.turns[1].requests[0]
    assert SEARCH_FIRST_MARK in first.instructions
    assert "skill_search" in first.tools
    (search,) = [r for r in record.results if r.tool == "skill_search"]
    graded(record, search, "ok")
    assert NOTES_DESCRIPTION in search.text  # whole, not cut at 200 characters
    # What stays byte-stable for prompt caching: everything up to the per-message block.
    assert (
        first.instructions.split("<system-reminder>")[0]
        == (second.instructions.split("<system-reminder>")[0])
    )
    if record.face == "serve":
        return  # serve sees no user messages: the search above is its way (docs/catalog.md)
    block = first.context[first.context.index("Skills that match this message") :]
    assert NOTES_DESCRIPTION in block, first.context
    assert "git-helper" in second.context[second.context.index("Skills that match this") :]


def check_controls(record: Record) -> None:
    """The host's switches and per-message options reach what the model is offered; the
    options lapse with their message, the switches stay."""
    answered(record, "Controlled.", "Lapsed.")
    first, second = record.turns[0].requests[0], record.turns[1].requests[0]
    assert "git-helper" not in first.instructions  # disabled
    assert "runner" not in first.instructions  # hidden
    assert "ticket-lookup" not in first.instructions  # outside the turn's only
    assert "release-notes" in first.instructions
    assert "HOST-GUIDANCE" in first.instructions
    assert NOTES_BODY in first.context  # the turn's load
    assert "skill_search" not in first.tools and "skill_load" in first.tools
    (disabled,) = record.results
    assert "git-helper" in disabled.text and disabled.status in ("recoverable", "error", None)
    assert GIT_BODY not in disabled.text
    # Next message: the options have lapsed; the switches hold.
    assert "ticket-lookup" in second.instructions and "HOST-GUIDANCE" not in second.instructions
    assert "git-helper" not in second.instructions and "runner" not in second.instructions
    assert "skill_search" in second.tools


def check_catalog(record: Record) -> None:
    answered(record, "Hello.")
    (first,) = record.requests
    for name in MODEL_SKILLS:
        assert name in first.instructions, name
    assert SKILLS["release-notes"]["description"] in first.instructions
    assert NOTES_BODY not in first.context  # only the catalog: bodies wait for a load
    assert {"skill_load", "skill_read_file", "skill_list"} <= set(first.tools)


def check_load(record: Record) -> None:
    answered(record, "Loaded.")
    (load,) = results_of(record, 1)
    graded(record, load, "ok")
    assert NOTES_BODY in load.text and "style.md" in load.text  # the body and the file tree
    before, after = record.requests
    assert NOTES_BODY not in before.context
    assert NOTES_BODY in after.context


def check_read_doc(record: Record) -> None:
    answered(record, "Read.")
    _load, read = results_of(record, 2)
    graded(record, read, "ok")
    assert STYLE_DOC in read.text
    assert STYLE_DOC in record.requests[-1].context


def check_select_docs(record: Record) -> None:
    answered(record, "Selected.")
    _load, listed, selected = results_of(record, 3)
    graded(record, listed, "ok")
    assert "references/style.md" in listed.text
    graded(record, selected, "ok")
    assert "references/style.md" in selected.text


def check_unload(record: Record) -> None:
    answered(record, "Unloaded.")
    first, unload, again = results_of(record, 3)
    assert NOTES_BODY in first.text
    graded(record, unload, "ok")
    assert "unloaded" in unload.text.lower() and "not loaded" not in unload.text.lower()
    assert NOTES_BODY in again.text  # delivered in full again, not "already loaded"


def check_session_lifetime(record: Record) -> None:
    answered(record, "One.", "Two.")
    first, second = results_of(record, 2)
    assert NOTES_BODY in first.text
    assert "already loaded" in second.text.lower() and NOTES_BODY not in second.text
    assert NOTES_BODY in record.turns[1].requests[0].context  # still in the history


def check_turn_lifetime(record: Record) -> None:
    answered(record, "One.", "Two.")
    first, second = results_of(record, 2)
    assert NOTES_BODY in first.text
    assert NOTES_BODY in second.text  # the turn ended: a new load delivers the body again


def check_once_lifetime(record: Record) -> None:
    answered(record, "One.", "Two.")
    first, _listed, again, later = results_of(record, 4)
    assert NOTES_BODY in first.text
    assert NOTES_BODY in again.text  # the request after the load ended it
    assert NOTES_BODY in later.text


def check_activation(record: Record) -> None:
    answered(record, "Looked up.")
    before, load, after = results_of(record, 3)
    assert "TICKET T-1: open" not in before.text  # not run before the skill is loaded
    graded(record, before, "recoverable")
    useful(before)
    assert TICKET_BODY in load.text
    graded(record, after, "ok")
    assert "TICKET T-1: open" in after.text


def check_activation_offer(record: Record) -> None:
    answered(record, "Loaded.")
    before, after = record.requests
    assert "lookup" not in before.tools
    assert "lookup" in after.tools


def check_allowed_tools(record: Record) -> None:
    answered(record, "Refused.")
    assert DEPLOYED == ["web"]  # the call before the load ran, the one after did not
    ran, _load, refused = results_of(record, 3)
    assert "DEPLOYED web" in ran.text
    graded(record, refused, "recoverable")
    assert "DEPLOYED" not in refused.text
    useful(refused)


def check_allowed_exec(record: Record) -> None:
    answered(record, "Refused.")
    _load, refused = results_of(record, 2)
    graded(record, refused, "recoverable")
    assert SCRIPT_OUTPUT not in refused.text
    assert "git-helper" in refused.text and "allow" in refused.text


def check_missing(record: Record) -> None:
    answered(record, "Asked.")
    (missing,) = results_of(record, 1)
    graded(record, missing, "recoverable")
    assert "ask the user" in missing.text.lower()


def check_invalid(record: Record) -> None:
    answered(record, "Fixed.")
    _load, invalid, fixed = results_of(record, 3)
    graded(record, invalid, "recoverable")
    assert "mode" in invalid.text and "sideways" in invalid.text
    graded(record, fixed, "ok")


def check_unknown_argument(record: Record) -> None:
    answered(record, "Loaded.")
    (load,) = results_of(record, 1)
    graded(record, load, "ok")
    assert NOTES_BODY in load.text


def check_malformed(record: Record) -> None:
    answered(record, "Retried.")
    bad, good = results_of(record, 2)
    graded(record, bad, "recoverable")
    assert "JSON" in bad.text
    useful(bad)
    assert NOTES_BODY in good.text


def check_unknown_tool(record: Record) -> None:
    answered(record, "Corrected.")
    unknown, good = results_of(record, 2)
    graded(record, unknown, "recoverable")
    assert "skill_loda" in unknown.text and "skill_load" in unknown.text.replace("skill_loda", "")
    assert NOTES_BODY in good.text


def check_unknown_tool_repeat(record: Record) -> None:
    answered(record, "Gave up.")
    _fatal_third(record)


def _fatal_third(record: Record) -> None:
    first, second, third = results_of(record, 3)
    graded(record, first, "recoverable")
    graded(record, second, "recoverable")
    graded(record, third, "fatal")
    assert FATAL_MARK not in first.text + second.text
    assert FATAL_MARK in third.text


def check_fatal(record: Record) -> None:
    answered(record, "Gave up.")
    _fatal_third(record)
    assert "missing.md" in record.results[0].text


def check_fatal_respelt(record: Record) -> None:
    answered(record, "Gave up.")
    _fatal_third(record)
    assert "release-notes" in record.results[0].text  # the closest name is suggested


def check_exec_output(record: Record) -> None:
    answered(record, "Ran.")
    (ran,) = results_of(record, 1)
    graded(record, ran, "ok")
    assert SCRIPT_OUTPUT in ran.text
    assert re.search(r"exit[ _]code:? 0\b", ran.text.lower()), ran.text


def check_exec_nonzero(record: Record) -> None:
    answered(record, "Failed.")
    (ran,) = results_of(record, 1)
    assert FAIL_STDERR in ran.text
    assert re.search(r"exit[ _]code:? 3\b", ran.text.lower()), ran.text


def check_exec_timeout(record: Record) -> None:
    answered(record, "Too slow.")
    (ran,) = results_of(record, 1)
    assert "timed out" in ran.text.lower() or "time limit" in ran.text.lower()


def check_isolation(record: Record) -> None:
    answered(record, "A.", "B.")
    in_a, in_b = results_of(record, 2)
    assert NOTES_BODY in in_a.text
    assert NOTES_BODY in in_b.text  # not "already loaded": b never loaded it
    assert NOTES_BODY not in record.turns[1].requests[0].context


def check_slash(record: Record) -> None:
    answered(record, "Browsed.")
    first = record.requests[0]
    assert CJK_BODY.replace("$ARGUMENTS", "src/文档") in first.context


def check_fork(record: Record) -> None:
    answered(record, "It is 49.")
    (forked,) = results_of(record, 1)
    graded(record, forked, "ok")
    assert "sub-agent" in forked.text and "FORK-ANSWER 49" in forked.text
    last = record.requests[-1]
    assert "FORK-ANSWER 49" in last.context and "FORK-TASK-BODY" not in last.context


def _traced(record: Record, tool: str) -> list[dict[str, Any]]:
    return [r for r in record.tool_traces() if r.get("tool") == tool]


def check_trace_calls(record: Record) -> None:
    answered(record, "Traced.")
    loads = _traced(record, "skill_load")
    assert [r["status"] for r in loads] == ["ok", "recoverable"], record.trace
    assert loads[0]["arguments"]["skill"] == "release-notes"
    assert loads[1]["error_kind"] and loads[1]["retry_count"] == 0
    assert "release-notes" in loads[1]["message"]


def check_trace_exec(record: Record) -> None:
    answered(record, "Traced.")
    runs = _traced(record, "workspace_exec")
    assert [r["status"] for r in runs] == ["ok", "nonzero_exit", "timed_out"], runs
    assert [r.get("exit_code") for r in runs][:2] == [0, 3]
    assert runs[2].get("timed_out") is True


RUN = {"skill": "runner"}
SLOW = {"command": "python3 scripts/slow.py", "timeout_s": 1, **RUN}

SCENARIOS: Final[tuple[Scenario, ...]] = (
    Scenario(
        "catalog",
        "the catalog (names and descriptions) is in what the model sees; bodies are not",
        (one("hi", "Hello."),),
        check_catalog,
    ),
    Scenario(
        "load",
        "skill_load: the next request has the full body",
        (one("notes please", LOAD_NOTES, "Loaded."),),
        check_load,
    ),
    Scenario(
        "read_doc",
        "skill_read_file returns a document of the skill",
        (
            one(
                "notes please",
                LOAD_NOTES,
                call("skill_read_file", {"skill": "release-notes", "path": "references/style.md"}),
                "Read.",
            ),
        ),
        check_read_doc,
    ),
    Scenario(
        "select_docs",
        "skill_list_docs lists the documents; skill_select_docs selects one",
        (
            one(
                "notes please",
                LOAD_NOTES,
                call("skill_list_docs", {"skill": "release-notes"}),
                call(
                    "skill_select_docs",
                    {"skill": "release-notes", "docs": ["references/style.md"]},
                ),
                "Selected.",
            ),
        ),
        check_select_docs,
    ),
    Scenario(
        "unload",
        "skill_unload frees the skill: a new load delivers the body again",
        (
            one(
                "notes please",
                LOAD_NOTES,
                call("skill_unload", {"skill": "release-notes"}),
                LOAD_NOTES,
                "Unloaded.",
            ),
        ),
        check_unload,
    ),
    Scenario(
        "lifetime_session",
        "load_mode session: the load outlives the user message (a second load is a stub)",
        (one("notes", LOAD_NOTES, "One."), one("again", LOAD_NOTES, "Two.")),
        check_session_lifetime,
        load_mode="session",
    ),
    Scenario(
        "lifetime_turn",
        "load_mode turn: the next user message starts without the load",
        (one("notes", LOAD_NOTES, "One."), one("again", LOAD_NOTES, "Two.")),
        check_turn_lifetime,
        load_mode="turn",
    ),
    Scenario(
        "lifetime_once",
        "load_mode once: the load lasts for the one request after it",
        (
            one("notes", LOAD_NOTES, call("skill_list"), LOAD_NOTES, "One."),
            one("again", LOAD_NOTES, "Two."),
        ),
        check_once_lifetime,
        load_mode="once",
    ),
    Scenario(
        "activation",
        "a user tool runs only while a loaded skill's allowed-tools names it",
        (
            one(
                "what about T-1?",
                call("lookup", {"ticket": "T-1"}),
                call("skill_load", {"skill": "ticket-lookup"}),
                call("lookup", {"ticket": "T-1"}),
                "Looked up.",
            ),
        ),
        check_activation,
        user_tools=(UserTool("lookup", activated=True),),
    ),
    Scenario(
        "activation_offer",
        "an activated tool is offered only from the request after the load",
        (one("T-1?", call("skill_load", {"skill": "ticket-lookup"}), "Loaded."),),
        check_activation_offer,
        user_tools=(UserTool("lookup", activated=True),),
    ),
    Scenario(
        "allowed_tools_refusal",
        "enforce_allowed_tools: a user tool outside the active skill's allowed-tools is refused",
        (
            one(
                "ship it",
                call("deploy", {"target": "web"}),
                call("skill_load", {"skill": "ticket-lookup"}),
                call("deploy", {"target": "web"}),
                "Refused.",
            ),
        ),
        check_allowed_tools,
        enforce_allowed_tools=True,
        user_tools=(UserTool("deploy"), UserTool("lookup", activated=True)),
    ),
    Scenario(
        "allowed_tools_exec",
        "enforce_allowed_tools: workspace_exec outside Bash(git:*) is refused",
        (
            one(
                "run it",
                call("skill_load", {"skill": "git-helper"}),
                call("workspace_exec", {"command": "python3 scripts/hello.py", **RUN}),
                "Refused.",
            ),
        ),
        check_allowed_exec,
        enforce_allowed_tools=True,
        workspace=True,
    ),
    Scenario(
        "missing_argument",
        "a missing required argument tells the model to ask the user",
        (one("load it", call("skill_load", {}), "Asked."),),
        check_missing,
    ),
    Scenario(
        "invalid_argument",
        "an invalid argument says what to fix; the corrected call works",
        (
            one(
                "select",
                LOAD_NOTES,
                call(
                    "skill_select_docs",
                    {"skill": "release-notes", "docs": ["references/style.md"], "mode": "sideways"},
                ),
                call(
                    "skill_select_docs",
                    {"skill": "release-notes", "docs": ["references/style.md"], "mode": "add"},
                ),
                "Fixed.",
            ),
        ),
        check_invalid,
    ),
    Scenario(
        "unknown_argument",
        "an unknown argument does not stop the call",
        (
            one(
                "notes please",
                call("skill_load", {"skill": "release-notes", "colour": "blue"}),
                "Loaded.",
            ),
        ),
        check_unknown_argument,
    ),
    Scenario(
        "malformed_json",
        "arguments that are not JSON are answered with a graded message, and the run goes on",
        (
            one(
                "notes please",
                call("skill_load", '{"skill": "release-notes" "docs": [}'),
                LOAD_NOTES,
                "Retried.",
            ),
        ),
        check_malformed,
    ),
    Scenario(
        "unknown_tool",
        "a call to a tool that does not exist names the real ones; the run goes on",
        (one("notes", call("skill_loda", {"skill": "release-notes"}), LOAD_NOTES, "Corrected."),),
        check_unknown_tool,
    ),
    Scenario(
        "unknown_tool_repeat",
        "the same call to a tool that does not exist three times: the third answer is fatal",
        (one("notes", *[call("skill_loda", {"skill": "release-notes"})] * 3, "Gave up."),),
        check_unknown_tool_repeat,
    ),
    Scenario(
        "fatal_repeat",
        "the same failing call three times: the third answer is fatal",
        (
            one(
                "read it",
                *[call("skill_read_file", {"skill": "release-notes", "path": "missing.md"})] * 3,
                "Gave up.",
            ),
        ),
        check_fatal,
    ),
    Scenario(
        "fatal_repeat_respelt",
        'a respelt key ({"Skill": …}) is the same call: the third is fatal',
        (
            one(
                "load nope",
                call("skill_load", {"skill": "release-note"}),
                call("skill_load", {"Skill": "release-note"}),
                call("skill_load", {"skill": "release-note"}),
                "Gave up.",
            ),
        ),
        check_fatal_respelt,
    ),
    Scenario(
        "exec_output",
        "workspace_exec: the command's output and exit code reach the model",
        (
            one(
                "run it",
                call("workspace_exec", {"command": "python3 scripts/hello.py", **RUN}),
                "Ran.",
            ),
        ),
        check_exec_output,
        workspace=True,
    ),
    Scenario(
        "exec_nonzero_exit",
        "workspace_exec: a non-zero exit code and stderr reach the model",
        (
            one(
                "run it",
                call("workspace_exec", {"command": "python3 scripts/fail.py", **RUN}),
                "Failed.",
            ),
        ),
        check_exec_nonzero,
        workspace=True,
    ),
    Scenario(
        "exec_timeout",
        "workspace_exec: a command past its time limit is stopped and the model told",
        (one("run it", call("workspace_exec", SLOW), "Too slow."),),
        check_exec_timeout,
        workspace=True,
    ),
    Scenario(
        "catalog_cut",
        "a catalog over its budget: search-first rule, skill_search offered with whole "
        "descriptions, the skills matching each message shown beside it",
        (
            one(
                "please draft the release notes from the commits",
                call("skill_search", {"query": "release notes"}),
                "Searched.",
            ),
            one("show me the git history of this repository", "Second."),
        ),
        check_catalog_cut,
        catalog_budget=CUT_BUDGET,
    ),
    Scenario(
        "controls",
        "the host's per-conversation switches (disable, hide) and per-message options (load, "
        "only, guidance, skill tools) shape what the model is offered; the options lapse",
        (
            one(
                "write the notes",
                call("skill_load", {"skill": "git-helper"}),
                "Controlled.",
                switches=(("git-helper", "disabled"), ("runner", "hidden")),
                options=TurnOptions(
                    load=["release-notes"],
                    only=["release-notes", "git-helper", "runner", CJK_NAME, "fork-task"],
                    guidance="HOST-GUIDANCE",
                    skill_tools=["skill_load", "skill_read_file"],
                ),
            ),
            one("and now?", "Lapsed."),
        ),
        check_controls,
    ),
    Scenario(
        "isolation",
        "two conversations: a load in one is not loaded in the other",
        (
            one("notes", LOAD_NOTES, "A.", conversation="a"),
            one("notes", LOAD_NOTES, "B.", conversation="b"),
        ),
        check_isolation,
        load_mode="session",
    ),
    Scenario(
        "slash_command",
        f"a user message /{CJK_NAME} ARGS loads that skill, arguments substituted",
        (one(f"/{CJK_NAME} src/文档", "Browsed."),),
        check_slash,
    ),
    Scenario(
        "fork",
        "a context: fork skill runs in a sub-agent; only its answer comes back",
        (
            one(
                "square 7",
                call("skill_load", {"skill": "fork-task", "args": "7"}),
                "FORK-ANSWER 49",  # the sub-agent's final answer
                "It is 49.",
            ),
        ),
        check_fork,
    ),
    Scenario(
        "trace_calls",
        "the trace records each call with its validated arguments, grade and retry count",
        (
            one(
                "notes",
                LOAD_NOTES,
                call("skill_load", {"skill": "release-note"}),
                "Traced.",
            ),
        ),
        check_trace_calls,
    ),
    Scenario(
        "trace_exec",
        "the trace says how each command ended: ok, nonzero_exit, timed_out",
        (
            one(
                "run them",
                call("workspace_exec", {"command": "python3 scripts/hello.py", **RUN}),
                call("workspace_exec", {"command": "python3 scripts/fail.py", **RUN}),
                call("workspace_exec", SLOW),
                "Traced.",
            ),
        ),
        check_trace_exec,
        workspace=True,
    ),
)

BY_NAME: Final = {s.name: s for s in SCENARIOS}
