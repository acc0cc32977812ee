"""Deeply nested and alias-amplified frontmatter: one bad skill never takes the root down.

Every hostile SKILL.md here is small (under 1 MiB) and is refused with a diagnostic naming the
limit (``frontmatter.too_deep`` for nesting past ``MAX_YAML_DEPTH``, ``frontmatter.too_complex``
for aliases expanding past ``MAX_YAML_NODES`` or ``MAX_YAML_EXPANDED_CHARS``), while the good
skill beside it keeps working through the library, the CLI, the model's tools and MCP.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import anyio
import pytest
from mcp import Client

from adversarial.hostile_roots import GOOD, cli, listed_names, root_with_good_skill, write_skill
from adversarial.yaml_bombs import (
    AMPLIFICATION_PEAK_BYTES,
    AMPLIFIED,
    DEEP,
    DEPTHS,
    amplified_tags,
    block_sequence,
    flow_list,
)
from mcpserver.helpers import all_skills, serve_command, server_env, stdio_params
from skillshelf.core import yaml_loader
from skillshelf.core.frontmatter import FrontmatterError, parse_frontmatter
from skillshelf.core.yaml_loader import MAX_YAML_DEPTH, MAX_YAML_EXPANDED_CHARS, MAX_YAML_NODES
from skillshelf.repository import Repository
from skillshelf.tools import SkillTools


def _hostile_root(tmp_path: Path, cases: list[tuple[str, str]]) -> Path:
    root = root_with_good_skill(tmp_path / "skills")
    for folder, yaml_text in cases:
        write_skill(root, folder, f"name: {folder}\ndescription: hostile\n{yaml_text}")
    return root


@pytest.mark.parametrize(("label", "yaml_text"), DEEP, ids=[c[0] for c in DEEP])
def test_deep_nesting_is_frontmatter_too_deep(label: str, yaml_text: str) -> None:
    text = f"---\nname: {label}\ndescription: d\n{yaml_text}\n---\n"
    assert len(text.encode()) < 1 << 20
    with pytest.raises(FrontmatterError) as caught:
        parse_frontmatter(text)
    assert caught.value.code == "frontmatter.too_deep"
    assert str(MAX_YAML_DEPTH) in caught.value.message
    assert caught.value.line is not None


@pytest.mark.parametrize("flavour", ["strings", "strict", "core", "yaml11"])
@pytest.mark.parametrize("depth", DEPTHS)
def test_every_yaml_flavour_refuses_deep_nesting(flavour: yaml_loader.Flavour, depth: int) -> None:
    with pytest.raises(yaml_loader.YamlTooDeepError):
        yaml_loader.load(flow_list(depth), flavour=flavour)
    with pytest.raises(yaml_loader.YamlTooDeepError):
        yaml_loader.load(block_sequence(depth), flavour=flavour)


def test_nesting_at_the_limit_still_loads() -> None:
    depth = MAX_YAML_DEPTH - 1  # plus the top-level mapping
    data = yaml_loader.load(flow_list(depth), flavour="strings")
    assert isinstance(data, dict)


@pytest.mark.parametrize(("label", "yaml_text"), AMPLIFIED, ids=[c[0] for c in AMPLIFIED])
def test_alias_amplification_is_too_complex_and_bounded_in_memory(
    label: str, yaml_text: str
) -> None:
    text = f"---\nname: {label}\ndescription: d\n{yaml_text}\n---\n"
    assert len(text.encode()) < 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(FrontmatterError) as caught:
            parse_frontmatter(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == "frontmatter.too_complex"
    limits = (f"{MAX_YAML_EXPANDED_CHARS:,}", f"{MAX_YAML_NODES:,}")
    assert any(limit in caught.value.message for limit in limits)
    assert peak < AMPLIFICATION_PEAK_BYTES


def test_expanded_characters_are_bounded_for_every_flavour() -> None:
    for flavour in ("strings", "core", "yaml11"):
        with pytest.raises(yaml_loader.YamlTooComplexError, match="characters"):
            yaml_loader.load(amplified_tags(), flavour=flavour)


def test_repository_skips_each_hostile_skill_and_keeps_the_good_one(tmp_path: Path) -> None:
    root = _hostile_root(tmp_path, DEEP + AMPLIFIED)
    repo = Repository([root], cache_dir=False)
    assert repo.names() == [GOOD]
    codes = {Path(s.path).parent.name: {d.code for d in s.diagnostics} for s in repo.skipped}
    for folder, _ in DEEP:
        assert "frontmatter.too_deep" in codes[folder]
    for folder, _ in AMPLIFIED:
        assert "frontmatter.too_complex" in codes[folder]


def test_model_tools_work_beside_hostile_skills(tmp_path: Path) -> None:
    tools = SkillTools(Repository([_hostile_root(tmp_path, DEEP + AMPLIFIED)], cache_dir=False))
    listed = tools.call("skill_list")
    assert listed.status == "ok"
    assert [row["name"] for row in listed.data["skills"]] == [GOOD]  # type: ignore[index]
    assert tools.call("skill_search", {"query": "hostile"}).status == "ok"
    assert tools.call("skill_load", {"skill": GOOD}).status == "ok"
    assert tools.call("skill_load", {"skill": "amp-tags"}).status == "recoverable"


def test_cli_list_validate_and_prompt_survive_hostile_skills(tmp_path: Path) -> None:
    root = _hostile_root(tmp_path, DEEP + AMPLIFIED)
    assert listed_names(root) == [GOOD]
    everything = cli("list", "--root", root, "--no-cache", "--json", "--all")
    assert everything.exit_code == 0
    assert len(json.loads(everything.stdout)) == 1 + len(DEEP) + len(AMPLIFIED)
    validated = cli("validate", root)
    assert validated.exit_code == 1  # invalid skills, reported: not a crash
    assert validated.stderr.count("frontmatter.too_deep") == len(DEEP)
    assert validated.stderr.count("frontmatter.too_complex") == len(AMPLIFIED)
    assert f"valid    {GOOD}" in validated.stdout
    for fmt in ("xml", "markdown"):
        prompt = cli("prompt", "--root", root, "--no-cache", "--format", fmt)
        assert prompt.exit_code == 0
        assert GOOD in prompt.stdout
        assert "hostile" not in prompt.stdout


def test_mcp_server_serves_the_good_skill_beside_hostile_ones(tmp_path: Path) -> None:
    root = _hostile_root(tmp_path, DEEP + AMPLIFIED)

    async def check() -> None:
        params = stdio_params(serve_command("--root", str(root)), server_env())
        with anyio.fail_after(60):
            async with Client(params) as client:
                entries = await all_skills(client)
                assert [entry["frontmatter"]["name"] for entry in entries] == [GOOD]
                prompts = [p.name for p in (await client.list_prompts()).prompts]
                assert prompts == [GOOD]
                result = await client.call_tool("skill_list", {})
                assert not result.is_error

    anyio.run(check)
