"""The visibility hook hides a skill from one client in every list, get, read, prompt and tool."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mcp_types import Implementation

from mcpserver.helpers import EXAMPLES, INVALID_PARAMS, all_skills, error_code
from skillshelf.mcpserver import SkillServer, Viewer
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill

HIDDEN = "release-notes"


def _hide_from_restricted(skill: Skill, viewer: Viewer) -> bool:
    return not (viewer.client == "restricted" and skill.name == HIDDEN)


def _server() -> SkillServer:
    repo = Repository([EXAMPLES], cache_dir=False)
    return SkillServer(repo, visible=_hide_from_restricted)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_hidden_skill_is_absent_everywhere_for_that_client(mode: str) -> None:
    async def check() -> None:
        info = Implementation(name="restricted", version="1")
        async with Client(_server().server, mode=mode, client_info=info) as client:
            names = [e["frontmatter"]["name"] for e in await all_skills(client)]
            assert HIDDEN not in names and len(names) == 3
            uris = [r.uri for r in (await client.list_resources()).resources]
            assert not any(u.startswith(f"skill://{HIDDEN}/") for u in uris)
            assert HIDDEN not in [p.name for p in (await client.list_prompts()).prompts]
            for method, uri in [
                ("skills/get", f"skill://{HIDDEN}/SKILL.md"),
                ("resources/read", f"skill://{HIDDEN}/SKILL.md"),
                ("resources/directory/read", f"skill://{HIDDEN}"),
            ]:
                assert await error_code(client, method, {"uri": uri}) == INVALID_PARAMS
            assert await error_code(client, "prompts/get", {"name": HIDDEN}) == INVALID_PARAMS
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert HIDDEN not in str(tools["skill_load"].input_schema)
            listed = await client.call_tool("skill_list", {})
            assert HIDDEN not in listed.content[0].text  # type: ignore[union-attr]
            loaded = await client.call_tool("skill_load", {"skill": HIDDEN})
            assert loaded.is_error
            assert "skill://commit-message/SKILL.md" in (client.instructions or "")
            assert HIDDEN not in (client.instructions or "")

    anyio.run(check)


def test_other_clients_still_see_the_skill() -> None:
    async def check() -> None:
        info = Implementation(name="trusted", version="1")
        async with Client(_server().server, mode="legacy", client_info=info) as client:
            names = [e["frontmatter"]["name"] for e in await all_skills(client)]
            assert HIDDEN in names
            assert HIDDEN in (client.instructions or "")

    anyio.run(check)
