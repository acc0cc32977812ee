"""The harness: one home for what the model sees on each request and what happens on each
tool call, shared by the agent loop, ``serve`` and every framework integration.

:class:`SkillSettings` holds every option; :class:`Harness` is what one face's conversations
share; :class:`SkillSession` is the harness of one conversation. The modules of this package
are private: import from here.
"""

from skillshelf.harness._controls import Switch, TurnOptions
from skillshelf.harness._forks import MAX_FORK_AGENTS, MAX_FORK_DEPTH, ForkTree
from skillshelf.harness._harness import Harness, HarnessFace
from skillshelf.harness._materialize import (
    LOADED_CONTEXT_HEADER,
    ContextSnapshot,
    Placement,
    assemble,
    gather_context,
    materialize,
)
from skillshelf.harness._prompt import Prompt, skills_catalog, skills_prompt
from skillshelf.harness._recent import Recent
from skillshelf.harness._records import (
    DEFAULT_TOOL_RETRIES,
    DEFAULT_TOOL_TIMEOUT_S,
    ToolContext,
    ToolRecord,
    ToolSink,
)
from skillshelf.harness._relevant import RELEVANT_CHARS, RELEVANT_QUERY_CHARS, relevant_block
from skillshelf.harness._session import Fork, Offer, SkillSession, fork_result
from skillshelf.harness._settings import (
    DEFAULT_CATALOG_BUDGET,
    DEFAULT_RELEVANT_SKILLS,
    MAX_RELEVANT_SKILLS,
    CatalogPlacement,
    DeclaredLoad,
    SettingsOptions,
    SkillSettings,
)
from skillshelf.harness._tool_style import (
    CLAUDE_CODE_GUIDANCE,
    GUIDANCE,
    LOAD_TOOL_NAMES,
    SEARCH_FIRST,
    TOOL_STYLES,
    ToolStyle,
    canonical_call,
    guidance,
    styled_definitions,
)
from skillshelf.harness._trace import Trace, digest, span

__all__ = [
    "CLAUDE_CODE_GUIDANCE",
    "DEFAULT_CATALOG_BUDGET",
    "DEFAULT_RELEVANT_SKILLS",
    "DEFAULT_TOOL_RETRIES",
    "DEFAULT_TOOL_TIMEOUT_S",
    "GUIDANCE",
    "LOADED_CONTEXT_HEADER",
    "LOAD_TOOL_NAMES",
    "MAX_FORK_AGENTS",
    "MAX_FORK_DEPTH",
    "MAX_RELEVANT_SKILLS",
    "RELEVANT_CHARS",
    "RELEVANT_QUERY_CHARS",
    "SEARCH_FIRST",
    "TOOL_STYLES",
    "CatalogPlacement",
    "ContextSnapshot",
    "DeclaredLoad",
    "Fork",
    "ForkTree",
    "Harness",
    "HarnessFace",
    "Offer",
    "Placement",
    "Prompt",
    "Recent",
    "SettingsOptions",
    "SkillSession",
    "SkillSettings",
    "Switch",
    "ToolContext",
    "ToolRecord",
    "ToolSink",
    "ToolStyle",
    "Trace",
    "TurnOptions",
    "assemble",
    "canonical_call",
    "digest",
    "fork_result",
    "gather_context",
    "guidance",
    "materialize",
    "relevant_block",
    "skills_catalog",
    "skills_prompt",
    "span",
    "styled_definitions",
]
