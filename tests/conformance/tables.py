"""The faces, and the (face, scenario) pairs that do not pass today, each with its reason.

``UNSUPPORTED``: the face cannot express the scenario (its protocol or framework has no place
for it); these are not run. ``KNOWN_BUGS``: the face should pass and does not; these run as
strict xfails, so a fix flips them and says so. Both tables are printed in
docs/conformance.md, and a test holds the page to them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from conformance.face_agent import AgentFace
from conformance.face_langchain import LangChainFace
from conformance.face_mcp import MCPFace
from conformance.face_openai_agents import OpenAIAgentsFace
from conformance.face_pydantic_ai import PydanticAIFace
from conformance.faces import Face

FACES: Final[Mapping[str, Callable[[], Face]]] = {
    "agent": AgentFace,
    "serve": MCPFace,
    "pydantic-ai": PydanticAIFace,
    "openai-agents": OpenAIAgentsFace,
    "langchain": LangChainFace,
}

_NO_USER_MESSAGES = (
    "an MCP server sees tool calls, never the user's messages: no turn boundary to end a "
    "turn or once load at (serve documents that turn lasts like session)"
)
_NO_USER_TOOLS = "the MCP client owns its own tools; serve offers no user tools to activate"

UNSUPPORTED: Final[Mapping[tuple[str, str], str]] = {
    ("serve", "lifetime_turn"): _NO_USER_MESSAGES,
    ("serve", "lifetime_once"): _NO_USER_MESSAGES,
    ("serve", "activation"): _NO_USER_TOOLS,
    ("serve", "activation_offer"): _NO_USER_TOOLS,
    ("serve", "allowed_tools_refusal"): _NO_USER_TOOLS,
    ("serve", "malformed_json"): (
        "tools/call carries the arguments as a JSON object: a client cannot send text that "
        "does not parse"
    ),
    ("serve", "unknown_tool"): (
        "an unknown tool name is a JSON-RPC error (-32602) by the MCP spec, answered by the "
        "client host, which offers its model only the tools/list names"
    ),
    ("serve", "unknown_tool_repeat"): (
        "an unknown tool name is a JSON-RPC error (-32602) by the MCP spec, not a graded result"
    ),
    ("serve", "fork"): (
        "the server runs no model, so it has no sub-agent to fork; the client's model gets the "
        "body as for any load"
    ),
    ("serve", "controls"): (
        "switches and per-message options are the host application's calls on its harness "
        "session; an MCP client has no call for them (serve applies its own settings only)"
    ),
    ("openai-agents", "activation_offer"): (
        "the SDK ends the run (ModelBehaviorError) on a call to a tool it did not declare, so "
        "SkillKit.activate keeps the tool declared and refuses calls with a guardrail instead "
        "(the activation scenario covers that)"
    ),
}

KNOWN_BUGS: Final[Mapping[tuple[str, str], str]] = {}


def cell(face: str, scenario: str) -> str:
    """A pair's verdict: ``pass``, ``known bug`` or ``unsupported``."""
    if (face, scenario) in UNSUPPORTED:
        return "unsupported"
    return "known bug" if (face, scenario) in KNOWN_BUGS else "pass"


def render() -> str:
    """The generated part of docs/conformance.md: the matrix and every reason."""
    from conformance.scenarios import SCENARIOS

    faces = list(FACES)
    lines = [
        "| scenario | what it checks | " + " | ".join(f"`{f}`" for f in faces) + " |",
        "|---|---|" + "---|" * len(faces),
    ]
    for s in SCENARIOS:
        verdicts = " | ".join(cell(f, s.name) for f in faces)
        lines.append(f"| `{s.name}` | {s.summary} | {verdicts} |")
    for title, table in (("Unsupported", UNSUPPORTED), ("Known bugs (strict xfail)", KNOWN_BUGS)):
        lines += ["", f"### {title}", ""]
        for (face, scenario), reason in sorted(table.items()):
            lines.append(f"- `{face}` × `{scenario}`: {reason}.")
        if not table:
            lines.append("None.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # prints the generated part of docs/conformance.md
    print(render(), end="")
