"""Tools named by ``package.module:name`` and schema stubs with canned results."""

from __future__ import annotations

import anyio
import pytest

from skillshelf.errors import UsageError
from skillshelf.tools import ArgumentProblem, ParsedModelArgs, import_tools, stub_tool


def test_a_function_becomes_a_tool_with_its_signature_as_schema() -> None:
    (tool,) = import_tools("textwrap:dedent")
    assert tool.name == "dedent"
    assert tool.parameters["required"] == ["text"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-colon", "not of the form"),
        ("os.path:", "not of the form"),
        ("no_such_module_zz:f", "cannot import 'no_such_module_zz'"),
        ("textwrap:no_such_name", "has no attribute 'no_such_name'"),
        ("textwrap:__doc__", "neither a Tool"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        import_tools(spec)


def test_a_stub_checks_required_arguments_and_returns_its_result() -> None:
    tool = stub_tool(
        "list_files",
        "List files.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        ["a.txt"],
    )
    missing = tool.validate({})
    assert isinstance(missing, ArgumentProblem) and missing.kind == "missing"
    assert "'path'" in missing.message and "Ask the user" in missing.message
    valid = tool.validate({"path": "."})
    assert isinstance(valid, ParsedModelArgs) and valid.values == {"path": "."}
    assert anyio.run(lambda: tool.invoke({"path": "."}, None)) == ["a.txt"]
