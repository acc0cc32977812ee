"""The model-facing tools: the skill tools (:class:`SkillTools`), their argument models and
schemas, the one argument parser with its repairs, and the caller's own tools with their
activations.

The modules of this package are private: import from here. The generic tool definition the
model adapters share, :class:`~skillshelf.core.tooldef.ToolDef` with its provider exporters,
lives in :mod:`skillshelf.core.tooldef`.
"""

from skillshelf.tools._catalog import LIST_CHARS, LIST_PAGE
from skillshelf.tools._imported import import_tools, stub_tool
from skillshelf.tools._parse import (
    ParsedArgs,
    ParsedModelArgs,
    failure_signature,
    parse_arguments,
    parse_model_arguments,
)
from skillshelf.tools._problems import ArgumentProblem
from skillshelf.tools._read import skill_uri
from skillshelf.tools._repair import normalise_tool_name
from skillshelf.tools._results import (
    FATAL_INTERNAL_MESSAGE,
    FATAL_STORE_MESSAGE,
    ErrorKind,
    ToolResult,
    ToolStatus,
)
from skillshelf.tools._skill_tools import DeclaredLoadError, SchemaFormat, SkillTools
from skillshelf.tools._spec import (
    ALL_TOOLS,
    ENUM_LIMIT,
    SKILL_TOOLS,
    STATEFUL_TOOLS,
    SkillListArgs,
    SkillListDocsArgs,
    SkillLoadArgs,
    SkillReadFileArgs,
    SkillSearchArgs,
    SkillSelectDocsArgs,
    SkillUnloadArgs,
    ToolArgs,
    WorkspaceExecArgs,
    tool_definitions,
)
from skillshelf.tools._user_tools import (
    Activation,
    ActivationLifetime,
    ActivationMode,
    Tool,
    activated_tools,
    check_names,
    inactive_tool_message,
    result_text,
    run_tool,
    tool_set,
)

__all__ = [
    "ALL_TOOLS",
    "ENUM_LIMIT",
    "FATAL_INTERNAL_MESSAGE",
    "FATAL_STORE_MESSAGE",
    "LIST_CHARS",
    "LIST_PAGE",
    "SKILL_TOOLS",
    "STATEFUL_TOOLS",
    "Activation",
    "ActivationLifetime",
    "ActivationMode",
    "ArgumentProblem",
    "DeclaredLoadError",
    "ErrorKind",
    "ParsedArgs",
    "ParsedModelArgs",
    "SchemaFormat",
    "SkillListArgs",
    "SkillListDocsArgs",
    "SkillLoadArgs",
    "SkillReadFileArgs",
    "SkillSearchArgs",
    "SkillSelectDocsArgs",
    "SkillTools",
    "SkillUnloadArgs",
    "Tool",
    "ToolArgs",
    "ToolResult",
    "ToolStatus",
    "WorkspaceExecArgs",
    "activated_tools",
    "check_names",
    "failure_signature",
    "import_tools",
    "inactive_tool_message",
    "normalise_tool_name",
    "parse_arguments",
    "parse_model_arguments",
    "result_text",
    "run_tool",
    "skill_uri",
    "stub_tool",
    "tool_definitions",
    "tool_set",
]
