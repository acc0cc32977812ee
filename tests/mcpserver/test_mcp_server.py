"""SkillServer in process: paging, the per-skill limits, the exec hook."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcpserver.helpers import INVALID_PARAMS, all_skills, error_code, request, server_env
from skillshelf.mcpserver import SkillServer, Viewer, files
from skillshelf.repository import Repository
from skillshelf.testing import age_tree, make_skill


def test_exec_offers_and_runs_workspace_exec(tmp_path: Path) -> None:
    from skillshelf.exec.runner import LocalExecutor
    from skillshelf.exec.workspace import WorkspaceManager

    make_skill(tmp_path / "skills", "demo", files={"scripts/hi.py": "print('hi from demo')"})
    repo = Repository([tmp_path / "skills"], cache_dir=False)
    plain = SkillServer(repo)
    assert "workspace_exec" not in plain.tool_names
    workspaces = WorkspaceManager(tmp_path / "ws")
    server = SkillServer(repo, enable_exec=True, executor=LocalExecutor(), workspaces=workspaces)

    async def check() -> None:
        async with Client(server.server) as client:
            listed = await client.list_tools()
            assert "workspace_exec" in [t.name for t in listed.tools]
            args = {"command": "python3 scripts/hi.py", "skill": "demo"}
            result = await client.call_tool("workspace_exec", args)
            assert not result.is_error
            assert result.structured_content is not None
            assert result.structured_content["exit_code"] == 0
            assert "hi from demo" in result.structured_content["stdout"]

    anyio.run(check)


def test_skills_list_pages_never_split_entries(tmp_path: Path) -> None:
    for i in range(120):
        make_skill(tmp_path, f"skill-{i:03d}", files={"notes.md": str(i)})
    server = SkillServer(Repository([tmp_path], cache_dir=False))

    async def check() -> None:
        async with Client(server.server) as client:
            entries = await all_skills(client)
            assert [e["frontmatter"]["name"] for e in entries] == [
                f"skill-{i:03d}" for i in range(120)
            ]
            assert all(len(e["resources"]) == 2 for e in entries)
            bad = await error_code(client, "skills/list", {"cursor": "not-a-cursor"})
            assert bad == INVALID_PARAMS

    anyio.run(check)


def test_skill_over_the_limits_is_reported_and_not_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "MAX_FILES", 3)
    make_skill(tmp_path, "small", files={"a.md": "a"})
    make_skill(tmp_path, "huge", files={f"f{i}.md": "x" for i in range(5)})
    server = SkillServer(Repository([tmp_path], cache_dir=False))
    assert server.report_limits() == ["huge: more than 3 files"]

    async def check() -> None:
        async with Client(server.server) as client:
            assert [e["frontmatter"]["name"] for e in await all_skills(client)] == ["small"]
            uri = "skill://huge/SKILL.md"
            assert await error_code(client, "skills/get", {"uri": uri}) == INVALID_PARAMS
            assert await error_code(client, "resources/read", {"uri": uri}) == INVALID_PARAMS
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert not any(u.startswith("skill://huge/") for u in listed)
            small = await request(client, "skills/get", {"uri": "skill://small/SKILL.md"})
            assert len(small["skill"]["resources"]) == 2

    anyio.run(check)


def test_an_unreadable_file_is_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_skill(tmp_path, "demo", files={"notes.md": "n"})
    server = SkillServer(Repository([tmp_path], cache_dir=False))

    def fail(*_args: object) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("skillshelf.mcpserver._content.read_bytes", fail)

    async def check() -> None:
        async with Client(server.server) as client:
            uri = "skill://demo/notes.md"
            assert await error_code(client, "resources/read", {"uri": uri}) == -32603

    anyio.run(check)


def test_instructions_stay_within_the_budget(tmp_path: Path) -> None:
    for i in range(300):
        make_skill(tmp_path, f"skill-{i:03d}", f"Does thing {i} in a long-winded way. " * 5)
    server = SkillServer(Repository([tmp_path], cache_dir=False), instructions_budget=4_000)
    text = server.instructions(Viewer())
    assert len(text) <= 4_000
    assert "<name>\nskill-000\n</name>" in text
    assert "more skills are not listed" in text


def test_the_cli_imports_no_mcp_sdk_until_serve_runs() -> None:
    # Even with serve's own module loaded (its --help), the SDK waits for serve to run.
    code = (
        "import sys, click, skillshelf.cli\n"
        "main = skillshelf.cli.main\n"
        "assert main.get_command(click.Context(main), 'serve') is not None, 'no serve'\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'uvicorn', 'watchfiles')]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=server_env()
    )
    assert done.returncode == 0, done.stderr


def test_skills_get_and_resources_read_follow_files_changed_between_requests(
    tmp_path: Path,
) -> None:
    make_skill(tmp_path, "demo", files={"notes.md": "old"})
    age_tree(tmp_path / "demo")  # its walk can be kept (see skills.walk_cache)
    server = SkillServer(Repository([tmp_path], cache_dir=False))
    uri = "skill://demo/SKILL.md"

    async def check() -> None:
        async with Client(server.server) as client:
            await client.read_resource(uri)  # the second request about it keeps the walk
            first = await request(client, "skills/get", {"uri": uri})
            assert [r["uri"] for r in first["skill"]["resources"]] == [
                uri,
                "skill://demo/notes.md",
            ]
            (tmp_path / "demo" / "notes.md").write_text("new")
            (tmp_path / "demo" / "more.md").write_text("more")
            again = await request(client, "skills/get", {"uri": uri})
            digests = {r["uri"]: r["digest"] for r in again["skill"]["resources"]}
            assert list(digests) == [uri, "skill://demo/more.md", "skill://demo/notes.md"]
            notes = digests["skill://demo/notes.md"]
            assert notes != first["skill"]["resources"][1]["digest"]
            read = await client.read_resource("skill://demo/notes.md")
            assert [getattr(c, "text", None) for c in read.contents] == ["new"]

    anyio.run(check)


@pytest.mark.parametrize("store_url", ["memory:", "sqlite"])
def test_tool_calls_run_on_the_event_loop_only_when_nothing_can_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_url: str
) -> None:
    import threading

    from skillshelf.exec.runner import LocalExecutor
    from skillshelf.exec.workspace import WorkspaceManager
    from skillshelf.stores import open_store
    from skillshelf.tools import SkillTools

    make_skill(tmp_path / "skills", "demo")
    repo = Repository([tmp_path / "skills"], cache_dir=False)
    url = f"sqlite:{tmp_path / 'state.db'}" if store_url == "sqlite" else store_url
    store = open_store(url)
    server = SkillServer(
        repo,
        store=store,
        enable_exec=True,
        executor=LocalExecutor(),
        workspaces=WorkspaceManager(tmp_path / "ws"),
    )
    ran_on: dict[str, bool] = {}
    real_call = SkillTools.call

    def call(self: SkillTools, tool: str, *args: object, **kwargs: object) -> object:
        ran_on[tool] = threading.current_thread() is threading.main_thread()
        return real_call(self, tool, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(SkillTools, "call", call)

    async def check() -> None:
        async with Client(server.server) as client:
            for tool, args in (
                ("skill_load", {"skill": "demo"}),
                ("skill_search", {"query": "demo"}),
                ("workspace_exec", {"command": "true"}),
            ):
                assert not (await client.call_tool(tool, args)).is_error

    try:
        anyio.run(check)  # the event loop runs in this, the main, thread
    finally:
        store.close()
    # A memory store answers at once: the hop to a thread would cost more than the call.
    # SQLite may wait on another process's lock, and commands on processes: a thread.
    inline = store_url == "memory:"
    assert ran_on == {"skill_load": inline, "skill_search": inline, "workspace_exec": False}


def test_serve_flag_default_budget_is_the_servers_own() -> None:
    from skillshelf.cli.serve import SERVE_CATALOG_BUDGET
    from skillshelf.mcpserver.server import INSTRUCTIONS_BUDGET

    assert SERVE_CATALOG_BUDGET == INSTRUCTIONS_BUDGET


def test_instructions_over_budget_end_with_the_search_first_rule(tmp_path: Path) -> None:
    from skillshelf.harness import SEARCH_FIRST

    for i in range(300):
        make_skill(tmp_path, f"skill-{i:03d}", f"Does chore {i} for the team. Use when asked.")
    server = SkillServer(Repository([tmp_path], cache_dir=False), instructions_budget=4_000)
    text = server.instructions(Viewer())
    assert len(text) <= 4_000
    assert text.endswith(SEARCH_FIRST)
    whole = SkillServer(Repository([tmp_path], cache_dir=False), instructions_budget=None)
    assert SEARCH_FIRST not in whole.instructions(Viewer())
    assert whole.instructions(Viewer()).count("<description>") == 300
