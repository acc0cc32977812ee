"""The generic tool definition in each provider's shape, from values alone."""

from __future__ import annotations

from skillshelf.core.tooldef import ToolDef, to_anthropic, to_mcp, to_openai

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = ToolDef("get_weather", "The weather in a city.", SCHEMA)


def test_each_provider_gets_name_description_and_schema_under_its_own_key() -> None:
    assert to_openai([WEATHER]) == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": SCHEMA,
            },
        }
    ]
    assert to_anthropic([WEATHER])[0]["input_schema"] == SCHEMA
    assert to_mcp([WEATHER])[0]["inputSchema"] == SCHEMA
    assert {e["name"] for e in (*to_anthropic([WEATHER]), *to_mcp([WEATHER]))} == {"get_weather"}


def test_an_exported_schema_is_a_copy_the_caller_may_change() -> None:
    for entry in (to_anthropic([WEATHER])[0]["input_schema"], to_mcp([WEATHER])[0]["inputSchema"]):
        entry["properties"].clear()
    to_openai([WEATHER])[0]["function"]["parameters"]["required"].clear()
    assert WEATHER.parameters == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }


def test_definitions_keep_their_order() -> None:
    other = ToolDef("b", "Another.", {"type": "object", "properties": {}})
    assert [e["name"] for e in to_mcp([other, WEATHER])] == ["b", "get_weather"]
