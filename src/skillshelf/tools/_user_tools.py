"""The agent's own tools: user tools and activations on skill load.

Pure decisions over values: which tools the model sees given what is loaded. Whether a call is
inside a skill's ``allowed-tools`` is :mod:`skillshelf.core.allowed_tools`.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio
from pydantic import BaseModel, create_model

from skillshelf.core.allowed_tools import pattern_tool
from skillshelf.core.tooldef import ToolDef
from skillshelf.errors import ToolError, UsageError, clip
from skillshelf.tools._parse import ParsedModelArgs, failure_signature, parse_model_arguments
from skillshelf.tools._problems import ArgumentProblem
from skillshelf.tools._spec import SKILL_TOOLS

__all__ = [
    "Activation",
    "ActivationLifetime",
    "ActivationMode",
    "Tool",
    "ToolRun",
    "activated_tools",
    "check_names",
    "inactive_tool_message",
    "result_text",
    "run_tool",
    "tool_set",
]

logger = logging.getLogger("skillshelf.agent.loop")

ActivationMode = Literal["include", "only"]
ActivationLifetime = Literal["invocation", "session"]
MAX_NAMED_SKILLS: Final = 5  # skills an inactive tool's refusal names, so it stays short


@dataclass(frozen=True, eq=False)
class Tool:
    """A tool the caller gives the agent.

    Args:
        name: The name the model calls.
        description: When to call it.
        parameters: JSON Schema of the arguments (an object schema).
        fn: Called with the arguments as keywords; may be async; returns text (other values
            are sent as JSON). Raise :class:`~skillshelf.errors.ToolRetry` when the model may
            fix its arguments and call again, :class:`~skillshelf.errors.ToolFailed` when it
            should stop; any other exception is logged with its traceback and answered as
            fatal.
        timeout_s: Seconds a call may take before the model is told it timed out (None: the
            agent's ``tool_timeout_s``). A plain function that overruns keeps its worker
            thread until it returns; its result is dropped.
        retries: Identical failing calls the model may retry before being told to stop
            (None: the agent's ``tool_retries``).
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    fn: Callable[..., Any]
    _validator: Any = field(default=None, repr=False)
    timeout_s: float | None = field(default=None, kw_only=True)
    retries: int | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise UsageError(f"Tool {self.name!r}: timeout_s must be positive")
        if self.retries is not None and self.retries < 0:
            raise UsageError(f"Tool {self.name!r}: retries must not be negative")

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout_s: float | None = None,
        retries: int | None = None,
    ) -> Tool:
        """Build a tool from a typed function: its signature is the schema and the validation."""
        fields: dict[str, Any] = {}
        for param in inspect.signature(fn).parameters.values():
            annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (annotation, default)
        model = create_model(f"{fn.__name__}_args", **fields)
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        doc = description or inspect.getdoc(fn) or fn.__name__
        return cls(
            name or fn.__name__,
            doc.strip(),
            schema,
            fn,
            model,
            timeout_s=timeout_s,
            retries=retries,
        )

    def definition(self) -> ToolDef:
        """The provider-neutral definition."""
        return ToolDef(self.name, self.description, dict(self.parameters))

    def validate(
        self, arguments: Mapping[str, Any] | str | None
    ) -> ParsedModelArgs | ArgumentProblem:
        """Validated arguments (with the slips forgiven), or the problem to tell the model:
        graded like the skill tools' (:func:`~skillshelf.tools.parse_model_arguments`).
        A tool built from a bare schema only has its required arguments checked."""
        if self._validator is not None:
            return parse_model_arguments(self.name, self._validator, arguments)
        return parse_model_arguments(self.name, self._model(), arguments, only_sent=True)

    def signature(self, arguments: Mapping[str, Any] | str | None) -> str:
        """The key the repeated-failure counter counts a call of this tool under: the call
        as :meth:`validate` reads it, so a respelt call (``{"X": "1"}`` for ``{"x": 1}``) is
        the same call (:func:`~skillshelf.tools.failure_signature`)."""
        return failure_signature(self.name, arguments, model=self._model())

    def _model(self) -> type[BaseModel]:
        if self._validator is not None:
            return self._validator  # type: ignore[no-any-return]
        return _schema_model(self.name, self.parameters)

    async def invoke(self, arguments: Mapping[str, Any], context: Any) -> Any:
        """Run the tool (``context`` is for tools that need the caller's session).

        A plain function runs in a worker thread, so a slow one does not hold up the others;
        when the call is cancelled (its timeout) the thread is abandoned, not waited for.
        """
        if inspect.iscoroutinefunction(self.fn):
            return await self.fn(**arguments)
        call = functools.partial(self.fn, **arguments)
        result = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        if inspect.isawaitable(result):
            result = await result
        return result


@dataclass(frozen=True, slots=True)
class Activation:
    """Tools that enter the model's tool list only once a skill is loaded.

    Args:
        tools: The tools.
        skill: The skill whose load activates them; None: any loaded skill whose
            ``allowed-tools`` names one of them activates that one.
        mode: ``include`` adds them to the user tools; ``only`` replaces the user tools
            (the built-in skill tools stay).
        lifetime: ``invocation`` — while that load of the skill lasts; ``session`` — from the
            load until the session ends.
    """

    tools: Sequence[Tool]
    skill: str | None = None
    mode: ActivationMode = "include"
    lifetime: ActivationLifetime = "invocation"


@functools.lru_cache(maxsize=256)
def _schema_model_cached(name: str, required: tuple[str, ...], optional: tuple[str, ...]) -> Any:
    fields: dict[str, Any] = dict.fromkeys(required, (Any, ...))
    fields.update(dict.fromkeys(optional, (Any, None)))
    return create_model(f"{name}_args", **fields)


def _schema_model(name: str, parameters: Mapping[str, Any]) -> type[BaseModel]:
    """A model with the schema's property names (any values): enough to read slipped keys
    and missing required ones for a tool given only as a JSON Schema."""
    required = tuple(str(k) for k in parameters.get("required", ()))
    optional = tuple(str(k) for k in parameters.get("properties", {}) if k not in required)
    return _schema_model_cached(name, required, optional)  # type: ignore[no-any-return]


def activated_tools(activation: Activation, skill: str, allowed_tools: Sequence[str]) -> list[Tool]:
    """The tools ``activation`` brings in when ``skill`` (with its allowed-tools) is loaded."""
    if activation.skill is not None:
        return list(activation.tools) if activation.skill == skill else []
    named = {pattern_tool(p) for p in allowed_tools}
    return [t for t in activation.tools if t.name in named]


def inactive_tool_message(name: str, skills: Sequence[str] = ()) -> str:
    """What the model reads when it calls an activated tool while no load activates it.

    Args:
        name: The tool called (as sent).
        skills: Skills whose load would activate it, when the face knows them.
    """
    if skills:
        shown = ", ".join(clip(s, 80) for s in skills[:MAX_NAMED_SKILLS])
        more = " (or another)" if len(skills) > MAX_NAMED_SKILLS else ""
        load = f"Load one of these skills first: {shown}{more};"
    else:
        load = "Load that skill first,"
    return (
        f"The tool {clip(name)} is not available now: it works only while a skill that "
        f"activates it is loaded. {load} or use another tool."
    )


def tool_set(
    user_tools: Sequence[Tool], in_force: Sequence[tuple[Activation, Sequence[Tool]]]
) -> list[Tool]:
    """The user-side tools the model sees, given the activations in force.

    An activated tool named like a user tool replaces it; when an ``only`` activation is in
    force, only ``only`` tools are offered (``only`` wins over ``include``); identical tools
    from several activations appear once.
    """
    onlys = [t for a, tools in in_force if a.mode == "only" for t in tools]
    if onlys:
        return list(_by_name(onlys).values())
    merged = _by_name(user_tools)
    merged.update(_by_name([t for a, tools in in_force if a.mode == "include" for t in tools]))
    return list(merged.values())


def _by_name(tools: Sequence[Tool]) -> dict[str, Tool]:
    out: dict[str, Tool] = {}
    for tool in tools:
        if tool.name in SKILL_TOOLS:
            continue  # checked with a warning when the agent is built
        out[tool.name] = tool
    return out


def check_names(tools: Sequence[Tool], activations: Sequence[Activation]) -> list[str]:
    """Warnings for tools that can never be offered; raises for user tools that clash."""
    clashing = [t.name for t in tools if t.name in SKILL_TOOLS]
    if clashing:
        raise UsageError(f"User tools may not take a built-in skill tool's name: {clashing}")
    warnings = []
    for activation in activations:
        for tool in activation.tools:
            if tool.name in SKILL_TOOLS:
                message = (
                    f"Activated tool {tool.name!r} is named like a built-in skill tool; "
                    "it is ignored."
                )
                logger.warning(message)
                warnings.append(message)
    return warnings


# -- running a caller's tool ------------------------------------------------------------------

MAX_RESULT_CHARS: Final = 24_000  # of a user tool's result sent back to the model


@dataclass(frozen=True, slots=True)
class ToolRun:
    """A caller's tool, run: the status and text for the model, and the failure kind
    (``tool_error``: the tool graded its own result; ``internal``: it crashed; ``timeout``)."""

    status: Literal["ok", "recoverable", "fatal"]
    text: str
    kind: Literal["tool_error", "internal", "timeout"] | None = None


async def run_tool(
    tool: Tool,
    arguments: Mapping[str, Any],
    context: Any,
    *,
    timeout_s: float,
    session: str | None = None,
) -> ToolRun:
    """Run ``tool`` on validated ``arguments`` within ``timeout_s``, grading whatever happens:
    the one way every face (the agent loop, the framework integrations) calls a caller's tool.

    A crash is logged with its traceback and told to the model clipped; a timeout abandons the
    call; a result that is not text is sent as JSON, cut at :data:`MAX_RESULT_CHARS`.
    """
    try:
        with anyio.move_on_after(timeout_s) as scope:
            value = await tool.invoke(arguments, context)
    except ToolError as exc:  # ToolRetry / ToolFailed: the tool graded its own result
        return ToolRun("recoverable" if exc.recoverable else "fatal", str(exc), "tool_error")
    except Exception as exc:  # broad on purpose: a caller's tool must not crash the run
        logger.exception("user tool %s failed (session %r)", tool.name, session)
        message = (
            f"The tool {tool.name} failed: {type(exc).__name__}: {clip(str(exc))}. Stop "
            "retrying it and tell the user it failed."
        )
        return ToolRun("fatal", message, "internal")
    if scope.cancelled_caught:
        logger.warning("user tool %s timed out after %gs", tool.name, timeout_s)
        message = (
            f"The tool {tool.name} timed out after {timeout_s:g}s and was abandoned; it "
            "returned nothing. Try a smaller request, or tell the user it did not finish."
        )
        return ToolRun("recoverable", message, "timeout")
    return ToolRun("ok", result_text(value))


def result_text(value: Any) -> str:
    """A tool's result as the model reads it: text as is, anything else as JSON, cut at
    :data:`MAX_RESULT_CHARS`."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n[… cut: the result had {len(text)} characters]"
    return text
