"""Eval cases: a cases file (JSON, YAML or JSONL) parsed once into :class:`EvalCase` values.

A case is ``{"query", "expected_skill", "expected_docs"?, "expected_params"?, "tools"?,
"note"?, "id"?}``. ``expected_skill`` is required: a skill name, or ``null`` for a query that
must load no skill. ``expected_docs`` are paths relative to the expected skill's folder that the
model should request or read; ``expected_params`` is ``{tool: {argument: value}}`` that one of
the model's calls of that tool must match — any tool the agent offers: the skill tools,
``workspace_exec`` (with ``--exec``) and user tools. ``tools`` offers the case's own user
tools: ``"package.module:name"`` (a Tool, a list of Tools or a typed function) or a stub
``{"name", "description"?, "parameters"? (JSON Schema), "result"?}`` answering every call with
``result``.

The simple (seed) shape ``{"user", "tool", "expected_params": {argument: value}}`` (flat, for
that one tool) is accepted too; there ``expected_skill`` may be left out, and then which skill
the model loads is not scored (the case measures the call alone). A skill case in that shape
has no ``tool``: its flat ``expected_params`` are the load's own, ``{"skill": name, "docs"?:
[...], …}`` — ``skill`` is the expected skill, ``docs`` the expected docs, and any other
argument is matched against the ``skill_load`` call. Claude Code's ``Skill`` tool is traced as
``skill_load`` (the tool styles map calls back to the contract), so ``Skill`` in ``tool`` or in
``expected_params`` means ``skill_load``.

``expected_answer`` checks the final answer (:mod:`skillshelf.evals.rubric`: ``contains``,
``regex``, ``json_schema``, ``ignore_case``).

A case without an ``id`` gets ``case-NNN`` (its position). Unknown keys are errors (a
misspelt ``expected_docs`` would otherwise be ignored).

Every problem in a file is reported at once, each with where it is (case number, and the line
where the format gives one) and the field.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from skillshelf.core.search import closest_names
from skillshelf.errors import (
    FileAccessError,
    MissingExtraError,
    SkillshelfError,
    unknown_skill_message,
)
from skillshelf.evals.rubric import AnswerRubric, check_schema
from skillshelf.tools import ALL_TOOLS

__all__ = [
    "UNSCORED",
    "CaseProblem",
    "CasesError",
    "CasesFormat",
    "EvalCase",
    "check_cases",
    "load_cases",
    "parse_cases",
]

CasesFormat = Literal["json", "jsonl", "yaml"]
_SUFFIXES: Final[dict[str, CasesFormat]] = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".yaml": "yaml",
    ".yml": "yaml",
}
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # it names trace files
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what providers accept as a tool name
_TOOL_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
UNSCORED: Final = "*"  # expected_skill of a simple-shape case that does not name one
# Claude Code's tool, as a case may name it: traced under the contract's name.
_TOOL_ALIASES: Final = {"Skill": "skill_load"}


@dataclass(frozen=True, slots=True)
class StubTool:
    """A user tool a case offers without code: checked arguments, a canned result."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    result: Any


@dataclass(frozen=True, slots=True)
class EvalCase:
    """One validated case.

    Attributes:
        id: Unique in the file; names the case's trace files.
        query: The user message.
        expected_skill: The skill the model should load, None when it should load none.
        expected_docs: Normalised paths, relative to the expected skill's folder.
        expected_params: ``{tool: {argument: value}}`` to match against the model's calls.
        tools: User tools the case offers: ``package.module:name`` specs and stubs.
        expected_answer: Checks on the final answer, None when it is not checked.
        note: Free text for people.
        scores_trigger: Whether the skill the model loads is scored (False for a
            simple-shape case without ``expected_skill``; ``expected_skill`` is then None).
    """

    id: str
    query: str
    expected_skill: str | None
    expected_docs: tuple[str, ...] = ()
    expected_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    tools: tuple[str | StubTool, ...] = ()
    expected_answer: AnswerRubric | None = None
    note: str | None = None
    scores_trigger: bool = True

    @property
    def tool_names(self) -> frozenset[str]:
        """Names of the case's stub tools (imported ones are named by their code)."""
        return frozenset(t.name for t in self.tools if isinstance(t, StubTool))

    @property
    def has_param_expectations(self) -> bool:
        """Whether parameter accuracy applies to this case."""
        return bool(self.expected_docs or self.expected_params)


@dataclass(frozen=True, slots=True)
class CaseProblem:
    """Something wrong with one case (or the whole file).

    Attributes:
        where: ``"case 3 (line 12)"``, ``"line 5"`` or ``"file"``.
        field: The field at fault, None when it is the case as a whole.
        message: What is wrong and how to fix it.
    """

    where: str
    field: str | None
    message: str

    def __str__(self) -> str:
        at = f", field {self.field!r}" if self.field else ""
        return f"{self.where}{at}: {self.message}"


class CasesError(SkillshelfError):
    """A cases file that cannot be used; ``problems`` lists everything found."""

    def __init__(self, source: str, problems: Sequence[CaseProblem]) -> None:
        self.source = source
        self.problems = list(problems)
        count = f"{len(self.problems)} problem" + ("s" if len(self.problems) != 1 else "")
        lines = [f"{source}: {count}", *(f"  {p}" for p in self.problems)]
        super().__init__("\n".join(lines))


class _StubIn(BaseModel):
    """A stub tool as a case writes it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = {}
    result: Any = "ok"

    @field_validator("name")
    @classmethod
    def _name_is_a_tool_name(cls, value: str) -> str:
        if not _TOOL_NAME.fullmatch(value):
            raise ValueError("must be 1-64 letters, digits, '_' or '-'")
        return value


def _tool_item(number: int, item: Any) -> str | _StubIn:
    """One entry of a case's ``tools``: a module path, or a stub mapping."""
    if isinstance(item, str):
        if not _TOOL_SPEC.fullmatch(item):
            raise ValueError(f"tool {number}: {item!r} is not of the form package.module:name")
        return item
    if not isinstance(item, dict):
        raise ValueError(f"tool {number}: give package.module:name or a stub mapping")
    try:
        return _StubIn.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "stub"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ValueError(f"tool {number}, {where}: {message}") from None


class _AnswerIn(BaseModel):
    """An ``expected_answer`` as a case writes it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    contains: str | list[str] = []
    regex: str | None = None
    json_schema: dict[str, Any] | None = None
    ignore_case: bool = False

    @field_validator("contains")
    @classmethod
    def _strings_not_empty(cls, value: str | list[str]) -> str | list[str]:
        if any(not text for text in ([value] if isinstance(value, str) else value)):
            raise ValueError("an empty string is in every answer: give words to look for")
        return value

    @field_validator("regex")
    @classmethod
    def _regex_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    @field_validator("json_schema")
    @classmethod
    def _schema_is_valid(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            try:
                problem = check_schema(value)
            except MissingExtraError as exc:
                raise ValueError(str(exc)) from None
            if problem is not None:
                raise ValueError(f"not a valid JSON Schema: {problem}")
        return value

    def rubric(self) -> AnswerRubric:
        contains = [self.contains] if isinstance(self.contains, str) else self.contains
        return AnswerRubric(tuple(contains), self.regex, self.json_schema, self.ignore_case)


class _CaseIn(BaseModel):
    """The accepted shape of one case, before ids are assigned."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str
    expected_skill: str | None
    expected_docs: list[str] = []
    expected_params: dict[str, dict[str, Any]] = {}
    tools: list[Any] = []
    expected_answer: _AnswerIn | None = None
    note: str | None = None
    id: str | None = None

    @field_validator("expected_answer")
    @classmethod
    def _checks_something(cls, value: _AnswerIn | None) -> _AnswerIn | None:
        if value is not None and not (value.contains or value.regex or value.json_schema):
            raise ValueError("give contains, regex or json_schema (or leave expected_answer out)")
        return value

    @field_validator("tools")
    @classmethod
    def _tool_specs(cls, value: list[Any]) -> list[str | _StubIn]:
        return [_tool_item(number, item) for number, item in enumerate(value, start=1)]

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("id")
    @classmethod
    def _id_is_a_file_name(cls, value: str | None) -> str | None:
        if value is not None and not _ID.fullmatch(value):
            raise ValueError(
                "must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        return value

    @field_validator("expected_docs")
    @classmethod
    def _docs_are_relative(cls, value: list[str]) -> list[str]:
        return [_normalise_doc(doc) for doc in value]


def _normalise_doc(doc: str) -> str:
    path = posixpath.normpath(doc.replace("\\", "/"))
    if not doc.strip() or path.startswith(("/", "../")) or path in ("..", "."):
        raise ValueError(f"{doc!r} must be a file path relative to the skill's folder")
    return path


# -- parsing --------------------------------------------------------------------------------


def load_cases(path: str | Path) -> list[EvalCase]:
    """Read and validate a cases file; the format follows the suffix.

    Raises:
        CasesError: The file cannot be read, is not valid JSON/YAML, or has bad cases.
    """
    source = str(path)
    fmt = _SUFFIXES.get(Path(path).suffix.lower())
    if fmt is None:
        problem = CaseProblem("file", None, "use a .json, .jsonl, .yaml or .yml file")
        raise CasesError(source, [problem])
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CasesError(source, [CaseProblem("file", None, f"cannot read it: {exc}")]) from None
    return parse_cases(text, fmt, source=source)


def parse_cases(text: str, fmt: CasesFormat, *, source: str = "<cases>") -> list[EvalCase]:
    """Validate cases from text in ``fmt``.

    Raises:
        CasesError: Every problem found, each with its case number (and line) and field.
    """
    items, problems = _items(text, fmt)
    if not problems and not items:
        problems = [CaseProblem("file", None, "no cases: the file holds an empty list")]
    cases: list[EvalCase] = []
    seen: dict[str, str] = {}
    for index, (line, raw) in enumerate(items):
        where = f"case {index + 1}" + (f" (line {line})" if line is not None else "")
        case = _validate(raw, index, where, problems)
        if case is None:
            continue
        if case.id in seen:
            problems.append(CaseProblem(where, "id", f"duplicate id {case.id!r} ({seen[case.id]})"))
            continue
        seen[case.id] = where
        cases.append(case)
    if problems:
        raise CasesError(source, problems)
    return cases


def _items(text: str, fmt: CasesFormat) -> tuple[list[tuple[int | None, Any]], list[CaseProblem]]:
    """The raw cases, each with its line when the format gives one."""
    if fmt == "jsonl":
        return _jsonl_items(text)
    if fmt == "json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            return [], [CaseProblem("file", None, f"not valid JSON: {exc}")]
        return _top_level(data, [None] * _length(data))
    return _yaml_items(text)


def _length(data: Any) -> int:
    cases = data.get("cases") if isinstance(data, dict) else data
    return len(cases) if isinstance(cases, list) else 0


def _top_level(
    data: Any, lines: Sequence[int | None]
) -> tuple[list[tuple[int | None, Any]], list[CaseProblem]]:
    if isinstance(data, dict) and set(data) == {"cases"}:
        data = data["cases"]
    if not isinstance(data, list):
        message = 'the file must hold a list of cases, or {"cases": [...]}'
        return [], [CaseProblem("file", None, message)]
    return list(zip(lines, data, strict=True)), []


def _jsonl_items(text: str) -> tuple[list[tuple[int | None, Any]], list[CaseProblem]]:
    items: list[tuple[int | None, Any]] = []
    problems: list[CaseProblem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append((number, json.loads(line)))
        except ValueError as exc:
            problems.append(CaseProblem(f"line {number}", None, f"not valid JSON: {exc}"))
    return items, problems


def _yaml_items(text: str) -> tuple[list[tuple[int | None, Any]], list[CaseProblem]]:
    from skillshelf.core import yaml_loader  # PyYAML loads only when a YAML file is read

    try:
        node = yaml_loader.compose(text, flavour="yaml11")
        data = yaml_loader.construct(node, flavour="yaml11")
    except yaml_loader.YAMLError as exc:
        return [], [CaseProblem("file", None, f"not valid YAML: {exc}")]
    return _top_level(data, _yaml_lines(node, _length(data)))


def _yaml_lines(node: Any, count: int) -> list[int | None]:
    """The first line of each case in the composed YAML document."""
    if getattr(node, "id", None) == "mapping":
        node = next((v for k, v in node.value if getattr(k, "value", None) == "cases"), None)
    if getattr(node, "id", None) == "sequence" and len(node.value) == count:
        return [item.start_mark.line + 1 for item in node.value]
    return [None] * count


def _simple_shape(raw: dict[str, Any]) -> dict[str, Any]:
    """``{"user", "tool"?, "expected_params": {argument: value}}`` → the full shape.

    Raises:
        ValueError: A flat ``expected_params`` that names neither its tool nor a skill, or a
            ``skill`` in it that contradicts ``expected_skill``.
    """
    if "user" not in raw and "tool" not in raw:
        return raw
    out = dict(raw)
    if "user" in out:
        out.setdefault("query", out.pop("user"))
    tool = out.pop("tool", None)
    params = out.get("expected_params", {})
    if tool is not None:
        tool = _TOOL_ALIASES.get(tool, tool)
        out["expected_params"] = {tool: params}
        out.setdefault("expected_skill", UNSCORED)
    elif isinstance(params, dict) and isinstance(params.get("skill"), str):
        out.update(_skill_case(out, dict(params)))
    elif isinstance(params, dict) and any(not isinstance(v, dict) for v in params.values()):
        raise ValueError(
            "flat expected_params need the tool they are for: add tool, or give skill "
            "(the skill to load) for a skill case"
        )
    return out


def _skill_case(case: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """A seed-shape skill case: its flat load parameters as expected skill, docs and params."""
    skill = params.pop("skill")
    if case.get("expected_skill", skill) != skill:
        raise ValueError(
            f"expected_params.skill {skill!r} and expected_skill "
            f"{case['expected_skill']!r} disagree: keep one"
        )
    docs = params.pop("docs", [])
    out: dict[str, Any] = {
        "expected_skill": skill,
        "expected_docs": [
            *case.get("expected_docs", []),
            *(docs if isinstance(docs, list) else [docs]),
        ],
        "expected_params": {"skill_load": params} if params else {},
    }
    return out


def _aliased(params: Any) -> Any:
    """``expected_params`` with Claude Code's tool names as the contract's."""
    if not isinstance(params, dict) or not any(name in params for name in _TOOL_ALIASES):
        return params
    return {_TOOL_ALIASES.get(name, name): value for name, value in params.items()}


def _validate(raw: Any, index: int, where: str, problems: list[CaseProblem]) -> EvalCase | None:
    if not isinstance(raw, dict):
        problems.append(CaseProblem(where, None, "a case must be an object (a mapping)"))
        return None
    if not isinstance(raw.get("tool", ""), str):
        problems.append(CaseProblem(where, "tool", "must be the name of one tool"))
        return None
    try:
        raw = _simple_shape(raw)
    except ValueError as exc:
        problems.append(CaseProblem(where, "expected_params", str(exc)))
        return None
    raw = {**raw, "expected_params": _aliased(raw.get("expected_params", {}))}
    try:
        parsed = _CaseIn.model_validate(raw)
    except ValidationError as exc:
        problems.extend(_problem(where, error) for error in exc.errors())
        return None
    scores_trigger = parsed.expected_skill != UNSCORED
    expected_skill = parsed.expected_skill if scores_trigger else None
    if expected_skill is None and parsed.expected_docs:
        message = "needs an expected_skill: the docs are paths inside that skill"
        problems.append(CaseProblem(where, "expected_docs", message))
        return None
    tools = tuple(
        t if isinstance(t, str) else StubTool(t.name, t.description, t.parameters, t.result)
        for t in parsed.tools
    )
    return EvalCase(
        id=parsed.id or f"case-{index + 1:03d}",
        query=parsed.query,
        expected_skill=expected_skill,
        expected_docs=tuple(parsed.expected_docs),
        expected_params=parsed.expected_params,
        tools=tools,
        expected_answer=parsed.expected_answer.rubric() if parsed.expected_answer else None,
        note=parsed.note,
        scores_trigger=scores_trigger,
    )


def _problem(where: str, error: Any) -> CaseProblem:
    location = ".".join(str(part) for part in error["loc"]) or None
    kind = error["type"]
    if kind == "missing" and location == "expected_skill":
        message = "missing: give the skill's name, or null for a query that must load no skill"
    elif kind == "extra_forbidden" and (location or "").startswith("expected_answer."):
        message = "unknown key; expected_answer has contains, regex, json_schema and ignore_case"
    elif kind == "extra_forbidden":
        message = (
            "unknown key; a case has query (or user), expected_skill, expected_docs, "
            "expected_params, expected_answer, tool, tools, note and id"
        )
    else:
        message = str(error["msg"]).removeprefix("Value error, ")
    return CaseProblem(where, location, message)


# -- checks against the skills --------------------------------------------------------------


def check_cases(
    cases: Iterable[EvalCase],
    skills: Mapping[str, Path | None],
    *,
    tools: Iterable[str] = (),
    exec_enabled: bool | None = None,
) -> None:
    """Check cases against the skills the model can load and the tools it is offered.

    Args:
        cases: Validated cases.
        skills: Every visible skill's name → its folder, or None when the model may not
            load it (``disable-model-invocation``).
        tools: Names of the user tools every run offers.
        exec_enabled: Whether ``workspace_exec`` is offered (None: not checked).

    Raises:
        CasesError: An unknown or model-invisible expected skill (with the closest names),
            an expected doc that is not a file of the skill, a tool spec that cannot be
            imported, an unknown tool in ``expected_params``, ``workspace_exec`` expected
            while it is not offered.
    """
    problems: list[CaseProblem] = []
    loadable = [name for name, folder in skills.items() if folder is not None]
    offered = set(tools)
    for number, case in enumerate(cases, start=1):
        where = f"case {number} ({case.id})"
        problems.extend(_skill_problems(case, where, skills, loadable))
        names, tool_problems = _case_tool_names(case, where)
        problems.extend(tool_problems)
        known = [*ALL_TOOLS, *sorted(offered | names)]
        for tool in case.expected_params:
            if tool == "workspace_exec" and exec_enabled is False:
                message = "workspace_exec is offered only when running commands is enabled"
                problems.append(CaseProblem(where, f"expected_params.{tool}", message))
            elif tool not in known:
                hint = _did_you_mean(tool, known)
                message = f"unknown tool {tool!r}{hint}"
                problems.append(CaseProblem(where, f"expected_params.{tool}", message))
    if problems:
        raise CasesError("cases", problems)


def _case_tool_names(case: EvalCase, where: str) -> tuple[set[str], list[CaseProblem]]:
    """The names of the tools a case offers; importing its specs finds the broken ones."""
    from skillshelf.errors import UsageError
    from skillshelf.tools import import_tools

    names = set(case.tool_names)
    problems = []
    for spec in case.tools:
        if isinstance(spec, str):
            try:
                names.update(t.name for t in import_tools(spec))
            except UsageError as exc:
                problems.append(CaseProblem(where, "tools", str(exc)))
    return names, problems


def _skill_problems(
    case: EvalCase, where: str, skills: Mapping[str, Path | None], loadable: Sequence[str]
) -> list[CaseProblem]:
    name = case.expected_skill
    if name is None:
        return []
    if name not in skills:
        message = unknown_skill_message(name, closest_names(name, loadable))
        return [CaseProblem(where, "expected_skill", message)]
    folder = skills[name]
    if folder is None:
        message = f"{name!r} sets disable-model-invocation: true, so no model can load it"
        return [CaseProblem(where, "expected_skill", message)]
    return [
        CaseProblem(where, "expected_docs", f"{doc!r} is not a file of the skill {name!r}")
        for doc in case.expected_docs
        if not _is_file_in(folder, doc)
    ]


def _is_file_in(folder: Path, relative: str) -> bool:
    from skillshelf.skills.paths import safe_join

    try:
        return safe_join(folder, relative).is_file()
    except FileAccessError:
        return False


def _did_you_mean(name: str, names: Iterable[str]) -> str:
    close = closest_names(name, names)
    return f"; did you mean {', '.join(close)}?" if close else ""
