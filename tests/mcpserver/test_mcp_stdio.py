"""The server as a client launches it: a real ``skillshelf serve`` subprocess over stdio."""

from __future__ import annotations

import base64
import hashlib
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp_types import BlobResourceContents, TextResourceContents

from mcpserver.helpers import (
    INVALID_PARAMS,
    all_skills,
    error_code,
    request,
    serve_command,
    server_env,
    stdio_params,
)

# A re-scan after an edit lands within a second; the margin is for slow, busy CI machines.
NOTIFY_TIMEOUT_S = 20.0
EXAMPLE_NAMES = ["api-error-triage", "commit-message", "csv-insights", "release-notes"]


def _client(root: Path, *extra: str, mode: str = "auto", **kwargs: Any) -> Client:
    command = serve_command("--root", str(root), *extra)
    return Client(stdio_params(command, server_env()), mode=mode, **kwargs)


def _disk_files(skill_dir: Path) -> dict[str, bytes]:
    return {
        p.relative_to(skill_dir).as_posix(): p.read_bytes()
        for p in sorted(skill_dir.rglob("*"))
        if p.is_file()  # __pycache__ too: what is served is what is locked
    }


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_every_example_skill_and_file_is_listed_with_true_digests(
    skills_root: Path, mode: str
) -> None:
    async def check() -> None:
        async with _client(skills_root, mode=mode) as client:
            extension = client.server_capabilities.extensions or {}
            assert extension["io.modelcontextprotocol/skills"] == {"directoryRead": True}
            assert client.server_capabilities.resources is not None
            entries = await all_skills(client)
            assert [e["frontmatter"]["name"] for e in entries] == EXAMPLE_NAMES
            for entry in entries:
                name = entry["frontmatter"]["name"]
                assert entry["uri"] == f"skill://{name}/SKILL.md"
                on_disk = _disk_files(skills_root / name)
                listed = {r["uri"].removeprefix(f"skill://{name}/"): r for r in entry["resources"]}
                assert set(listed) == set(on_disk)
                for relative, data in on_disk.items():
                    assert listed[relative]["size"] == len(data)
                    assert (
                        listed[relative]["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
                    )
                    read = await client.read_resource(listed[relative]["uri"])
                    assert _content_bytes(read.contents[0]) == data
                got = await request(client, "skills/get", {"uri": entry["uri"]})
                assert got["skill"] == entry

    anyio.run(check)


def _content_bytes(content: TextResourceContents | BlobResourceContents) -> bytes:
    if isinstance(content, TextResourceContents):
        return content.text.encode()
    return base64.b64decode(content.blob)


def test_frontmatter_is_verbatim_and_skill_md_resource_is_described(skills_root: Path) -> None:
    async def check() -> None:
        async with _client(skills_root) as client:
            got = await request(client, "skills/get", {"uri": "skill://release-notes/SKILL.md"})
            frontmatter = got["skill"]["frontmatter"]
            assert frontmatter["name"] == "release-notes"
            assert set(frontmatter) >= {"name", "description"}
            resources = (await client.list_resources()).resources
            skill_md = next(r for r in resources if r.uri == "skill://release-notes/SKILL.md")
            assert (skill_md.name, skill_md.mime_type) == ("release-notes", "text/markdown")
            assert skill_md.description == frontmatter["description"]
            assert len(resources) == sum(len(_disk_files(skills_root / n)) for n in EXAMPLE_NAMES)

    anyio.run(check)


def test_directory_read_lists_direct_children(skills_root: Path) -> None:
    async def check() -> None:
        async with _client(skills_root) as client:
            top = await request(
                client, "resources/directory/read", {"uri": "skill://release-notes"}
            )
            shown = {r["name"]: r.get("mimeType") for r in top["resources"]}
            assert shown["references"] == "inode/directory"
            assert shown["SKILL.md"] == "text/markdown"
            nested = await request(
                client, "resources/directory/read", {"uri": "skill://release-notes/references"}
            )
            assert [r["uri"] for r in nested["resources"]] == [
                "skill://release-notes/references/templates"
            ]
            leaf = await request(
                client,
                "resources/directory/read",
                {"uri": "skill://release-notes/references/templates"},
            )
            assert [r["name"] for r in leaf["resources"]] == ["standard.md"]
            for bad in (
                "skill://release-notes/SKILL.md",
                "skill://release-notes/nope",
                "skill://nope",
            ):
                assert (
                    await error_code(client, "resources/directory/read", {"uri": bad})
                    == INVALID_PARAMS
                )

    anyio.run(check)


TRAVERSALS = [
    "skill://x/../../etc/passwd",
    "skill://release-notes/../../etc/passwd",
    "skill://release-notes/..%2F..%2F..%2Fetc%2Fpasswd",
    "skill://release-notes/%2e%2e/%2e%2e/etc/passwd",
    "skill://release-notes/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
    "skill://release-notes/..%5C..%5Cetc%5Cpasswd",
    "skill://release-notes/%252e%252e/etc/passwd",
    "skill://release-notes/references/%00",
    "skill://%2e%2e/etc/passwd",
]


def test_traversal_uris_are_refused_with_invalid_params(skills_root: Path) -> None:
    async def check() -> None:
        async with _client(skills_root) as client:
            for uri in TRAVERSALS:
                for method in ("resources/read", "skills/get", "resources/directory/read"):
                    code = await error_code(client, method, {"uri": uri})
                    assert code == INVALID_PARAMS, (method, uri)

    anyio.run(check)


def test_unknown_skill_and_file_are_invalid_params(skills_root: Path) -> None:
    async def check() -> None:
        async with _client(skills_root) as client:
            for method, uri in [
                ("skills/get", "skill://no-such-skill/SKILL.md"),
                ("skills/get", "skill://release-notes/references/templates/standard.md"),
                ("resources/read", "skill://release-notes/missing.md"),
                ("resources/read", "skill://release-notes/references"),
            ]:
                assert await error_code(client, method, {"uri": uri}) == INVALID_PARAMS

    anyio.run(check)


def test_every_tool_works_over_stdio(skills_root: Path) -> None:
    async def check() -> None:
        async with _client(skills_root) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == [
                "skill_search",
                "skill_list",
                "skill_load",
                "skill_list_docs",
                "skill_select_docs",
                "skill_read_file",
                "skill_unload",
            ]

            async def call(tool: str, args: dict[str, Any]) -> tuple[bool, str]:
                result = await client.call_tool(tool, args)
                text = result.content[0].text  # type: ignore[union-attr]
                return result.is_error, text

            assert (await call("skill_search", {"query": "csv"}))[1].startswith("- csv-insights")
            assert "release-notes" in (await call("skill_list", {}))[1]
            failed, body = await call("skill_load", {"skill": "release-notes"})
            assert not failed and '<skill_content name="release-notes">' in body
            assert "already loaded" in (await call("skill_load", {"skill": "release-notes"}))[1]
            docs = (await call("skill_list_docs", {"skill": "release-notes"}))[1]
            assert "references/templates/standard.md" in docs
            selected = await call(
                "skill_select_docs",
                {"skill": "release-notes", "docs": ["references/templates/standard.md"]},
            )
            assert selected == (
                False,
                "Docs selected for 'release-notes': references/templates/standard.md",
            )
            failed, text = await call(
                "skill_read_file",
                {"skill": "release-notes", "path": "references/templates/standard.md"},
            )
            on_disk = (skills_root / "release-notes/references/templates/standard.md").read_text()
            assert (failed, text) == (False, on_disk)
            failed, text = await call(
                "skill_read_file", {"skill": "release-notes", "path": "../../etc/passwd"}
            )
            assert failed and "Refused path" in text
            assert await call("skill_unload", {"skill": "release-notes"}) == (
                False,
                "Skill 'release-notes' unloaded.",
            )
            failed, text = await call("skill_load", {"skill": "no-such-skill"})
            assert failed

    anyio.run(check)


def test_user_invocable_skills_are_prompts_with_arguments(skills_root: Path) -> None:
    async def check() -> None:
        async with _client(skills_root) as client:
            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            assert sorted(prompts) == EXAMPLE_NAMES
            assert [a.name for a in prompts["commit-message"].arguments or []] == ["arguments"]
            result = await client.get_prompt("commit-message", {"arguments": "only the docs"})
            text = result.messages[0].content.text  # type: ignore[union-attr]
            assert "only the docs" in text
            assert await error_code(client, "prompts/get", {"name": "nope"}) == INVALID_PARAMS

    anyio.run(check)


def test_catalog_is_offered_as_instructions(skills_root: Path) -> None:
    async def check() -> None:
        async with _client(skills_root, mode="legacy") as client:
            instructions = client.instructions or ""
            for name in EXAMPLE_NAMES:
                assert f"skill://{name}/SKILL.md" in instructions

    anyio.run(check)


def test_an_edit_under_watch_sends_list_changed(skills_root: Path) -> None:
    async def check() -> None:
        seen: list[str] = []
        arrived = anyio.Event()

        async def on_message(message: IncomingMessage) -> None:
            method = getattr(message, "method", None)
            if isinstance(method, str):
                seen.append(method)
                if {
                    "notifications/resources/list_changed",
                    "notifications/tools/list_changed",
                } <= set(seen):
                    arrived.set()

        async with _client(
            skills_root, "--watch", mode="legacy", message_handler=on_message
        ) as client:
            assert (client.server_capabilities.resources or None) is not None
            skill_md = skills_root / "csv-insights" / "SKILL.md"
            skill_md.write_text(skill_md.read_text().replace("Profiles a CSV", "Profiles any CSV"))
            with anyio.fail_after(NOTIFY_TIMEOUT_S):
                await arrived.wait()
            got = await request(client, "skills/get", {"uri": "skill://csv-insights/SKILL.md"})
            assert got["skill"]["frontmatter"]["description"].startswith("Profiles any CSV")

    anyio.run(check)


def test_an_edit_under_watch_reaches_a_2026_listener(skills_root: Path) -> None:
    async def check() -> None:
        async with _client(skills_root, "--watch") as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(resources_list_changed=True, tools_list_changed=True) as sub:
                (skills_root / "csv-insights" / "references").mkdir()
                (skills_root / "csv-insights" / "references" / "new.md").write_text("# New\n")
                with anyio.fail_after(NOTIFY_TIMEOUT_S):
                    event = await sub.__anext__()
            assert type(event).__name__ == "ResourcesListChanged"
            got = await request(client, "skills/get", {"uri": "skill://csv-insights/SKILL.md"})
            uris = [r["uri"] for r in got["skill"]["resources"]]
            assert "skill://csv-insights/references/new.md" in uris

    anyio.run(check)


def test_stdout_carries_nothing_but_the_protocol(skills_root: Path) -> None:
    done = subprocess.run(
        serve_command("--root", str(skills_root)),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "serving 4 skills on stdio" in done.stderr


def test_serve_exec_runs_the_example_script_in_a_workspace(skills_root: Path) -> None:
    args = {
        "command": "python3 scripts/summarize_csv.py scripts/sample.csv --out out/summary.md",
        "skill": "csv-insights",
        "collect": ["out/*.md"],
    }

    async def check() -> None:
        async with _client(skills_root, "--exec", "--sandbox", "local") as client:
            listed = await client.list_tools()
            assert "workspace_exec" in [t.name for t in listed.tools]
            result = await client.call_tool("workspace_exec", args)
            assert not result.is_error
            assert result.structured_content is not None
            assert result.structured_content["exit_code"] == 0
            assert result.structured_content["files"][0]["path"] == "out/summary.md"

    anyio.run(check)
    assert not (skills_root / "csv-insights" / "out").exists()
