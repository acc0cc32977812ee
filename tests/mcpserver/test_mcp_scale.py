"""What a request costs does not grow with the repository: lists page by skill, the
instructions are rendered once per scan, and tool schemas stop listing names past a cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcpserver.helpers import INVALID_PARAMS, error_code
from skillshelf.mcpserver import SkillServer, _content, shelf
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

NAMES = [f"skill-{i}" for i in range(7)]


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    for name in NAMES:
        make_skill(tmp_path, name, files={"notes.md": name})
    # A skill only the model may invoke: no prompt.
    make_skill(tmp_path, "skill-3b", frontmatter={"user-invocable": False})
    return Repository([tmp_path], cache_dir=False)


def test_resources_list_pages_hold_whole_skills_and_resume_after_the_last(
    repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_content, "RESOURCES_PAGE", 5)

    async def check() -> None:
        async with Client(SkillServer(repo).server) as client:
            pages: list[list[str]] = []
            cursor: str | None = None
            while True:
                page = await client.list_resources(cursor=cursor)
                pages.append([str(r.uri) for r in page.resources])
                cursor = page.next_cursor
                if cursor is None:
                    break
            # Two files a skill (one for skill-3b): whole skills, at least 5 a page.
            assert [len(p) for p in pages] == [6, 5, 4]
            flat = [uri for page in pages for uri in page]
            assert len(flat) == len(set(flat)) == 15
            assert "skill://skill-6/notes.md" in flat
            assert await error_code(client, "resources/list", {"cursor": "junk"}) == INVALID_PARAMS

    anyio.run(check)


def test_a_resources_page_reads_the_files_of_its_own_skills_only(
    repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_content, "RESOURCES_PAGE", 2)
    listed: list[str] = []
    files = shelf.Shelf.files

    def counting(self: shelf.Shelf, skill: Any) -> Any:
        listed.append(skill.name)
        return files(self, skill)

    monkeypatch.setattr(shelf.Shelf, "files", counting)

    async def check() -> None:
        async with Client(SkillServer(repo).server) as client:
            await client.list_resources()

    anyio.run(check)
    assert listed == ["skill-0"]


def test_prompts_list_pages_resume_after_the_last_name(
    repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_content, "PROMPTS_PAGE", 3)

    async def check() -> None:
        async with Client(SkillServer(repo).server) as client:
            names: list[str] = []
            cursor: str | None = None
            while True:
                page = await client.list_prompts(cursor=cursor)
                assert len(page.prompts) <= 3
                names += [p.name for p in page.prompts]
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert names == NAMES  # skill-3b is the model's only
            assert await error_code(client, "prompts/list", {"cursor": "junk"}) == INVALID_PARAMS

    anyio.run(check)


def test_instructions_are_rendered_once_per_scan(
    tmp_path: Path, repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillshelf.core.catalog import CatalogFit, fit_catalog

    renders: list[int] = []

    def counting(entries: Any, **kwargs: Any) -> CatalogFit:
        entries = list(entries)
        renders.append(len(entries))
        return fit_catalog(entries, **kwargs)

    monkeypatch.setattr("skillshelf.mcpserver.server.fit_catalog", counting)
    skill_server = SkillServer(repo)

    async def connect_twice() -> str | None:
        for _ in range(2):
            async with Client(skill_server.server) as client:
                instructions = client.instructions
        return instructions

    first = anyio.run(connect_twice)
    assert renders == [8]
    make_skill(tmp_path, "skill-new")
    anyio.run(skill_server.refresh)
    second = anyio.run(connect_twice)
    assert renders == [8, 9]
    assert first is not None and second is not None
    assert "skill-new" in second and "skill-new" not in first


def test_above_the_enum_limit_the_skill_argument_is_a_string_checked_by_the_server(
    tmp_path: Path,
) -> None:
    for i in range(3):
        make_skill(tmp_path, f"skill-{i}")
    repo = Repository([tmp_path], cache_dir=False)

    async def check(limit: int) -> tuple[dict[str, Any], str, str]:
        async with Client(SkillServer(repo, enum_limit=limit).server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            prop = tools["skill_load"].input_schema["properties"]["skill"]
            unknown = await client.call_tool("skill_load", {"skill": "skill-9"})
            known = await client.call_tool("skill_load", {"skill": "skill-2"})
            assert unknown.is_error and not known.is_error
            return prop, unknown.content[0].text, known.content[0].text  # type: ignore[union-attr]

    prop, unknown, known = anyio.run(check, 3)
    assert prop["enum"] == ["skill-0", "skill-1", "skill-2"]
    prop, unknown_past_cap, known_past_cap = anyio.run(check, 2)
    assert "enum" not in prop and prop["type"] == "string"
    assert "skill-0" in unknown_past_cap  # the closest names, as with the enum
    assert (unknown_past_cap, known_past_cap) == (unknown, known)
