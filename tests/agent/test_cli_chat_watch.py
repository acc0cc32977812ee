"""``skillshelf chat --watch``: skill edits made during a chat reach the model.

The chat runs as a real subprocess against the fake OpenAI-compatible server on 127.0.0.1,
with real watchfiles on a temporary folder; the test waits (bounded) for the chat's status
lines on stderr before it sends the next message, and reads what the model received from the
server's recorded requests.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from click.testing import CliRunner
from fake_providers import FakeOpenAI, Scripted

from skillshelf.cli import main
from skillshelf.core import search
from skillshelf.errors import install_hint
from skillshelf.models import ModelResponse
from skillshelf.repository import Repository
from skillshelf.testing import make_skill, reply

pytest.importorskip("watchfiles")

# Starting Python and importing the OpenAI SDK; generous so a busy machine does not flake.
START_WAIT_S = 30.0
# Bounded wait for a line the test expects (an edit is picked up in well under a second).
EVENT_WAIT_S = 10.0
# Closing stdin ends the chat; the watcher thread stops within its idle timeout.
EXIT_WAIT_S = 15.0


def _broken(skill: Path) -> None:
    (skill / "SKILL.md").write_text("---\nname: alpha\ndescription: [unclosed\n---\nbody\n")


class LiveChat:
    """An interactive ``skillshelf chat --watch`` subprocess, its output read line by line."""

    def __init__(self, root: Path, server: FakeOpenAI, *extra: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        command = [sys.executable, "-c", "from skillshelf.cli import main; main()", "chat"]
        command += ["--root", str(root), "--no-cache", "--watch", "--no-stream"]
        command += ["--model", "openai:any", "--base-url", f"{server.url}/v1", *extra]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.stdout: queue.Queue[str | None] = queue.Queue()
        self.stderr: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        for stream, lines in (
            (self.process.stdout, self.stdout),
            (self.process.stderr, self.stderr),
        ):
            threading.Thread(target=_pump, args=(stream, lines), daemon=True).start()

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def expect(self, lines: queue.Queue[str | None], text: str, timeout_s: float) -> str:
        """The first line containing ``text`` (bounded wait; fails listing what was seen)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"no line with {text!r}; output so far: {self.seen}")
            self.seen.append(line)
            if text in line:
                return line

    def answer(self, text: str, timeout_s: float = START_WAIT_S) -> None:
        self.expect(self.stdout, text, timeout_s)

    def status(self, text: str) -> str:
        return self.expect(self.stderr, text, EVENT_WAIT_S)

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(EXIT_WAIT_S)


def _pump(stream: IO[str] | None, lines: queue.Queue[str | None]) -> None:
    assert stream is not None
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


class PausingScript:
    """Replies in order; before the reply at index ``pause_at`` it waits for :meth:`resume`.

    The chat is then blocked inside one turn, waiting for the model, while the test edits
    the skills.
    """

    def __init__(self, replies: list[ModelResponse], *, pause_at: int) -> None:
        self.replies = replies
        self.pause_at = pause_at
        self.paused = threading.Event()
        self._resume = threading.Event()
        self._count = 0

    def __call__(self, _body: dict[str, Any]) -> Scripted:
        index, self._count = self._count, self._count + 1
        if index == self.pause_at:
            self.paused.set()
            self._resume.wait(EVENT_WAIT_S)
        return self.replies[index]

    def wait_paused(self) -> None:
        assert self.paused.wait(START_WAIT_S), "the chat never reached the paused request"

    def resume(self) -> None:
        self._resume.set()


@pytest.fixture
def live() -> Iterator[Callable[..., tuple[LiveChat, FakeOpenAI]]]:
    started: list[tuple[LiveChat, FakeOpenAI]] = []

    def start(root: Path, script: Any, *extra: str) -> tuple[LiveChat, FakeOpenAI]:
        server = FakeOpenAI(script).start()
        chat = LiveChat(root, server, *extra)
        started.append((chat, server))
        return chat, server

    yield start
    for chat, server in started:
        if chat.process.poll() is None:
            chat.process.kill()
            chat.process.wait(EXIT_WAIT_S)
        for stream in (chat.process.stdin, chat.process.stdout, chat.process.stderr):
            if stream is not None:
                stream.close()
        server.stop()


def _system(body: dict[str, Any]) -> str:
    content = body["messages"][0]
    assert content["role"] == "system"
    return str(content["content"])


def _skill_enum(body: dict[str, Any]) -> list[str]:
    [load] = [t for t in body["tools"] if t["function"]["name"] == "skill_load"]
    return list(load["function"]["parameters"]["properties"]["skill"]["enum"])


def _last_tool_result(body: dict[str, Any]) -> str:
    return str(next(m for m in reversed(body["messages"]) if m["role"] == "tool")["content"])


# -- the chat subprocess -------------------------------------------------------------------


def test_skill_created_during_a_chat_is_in_the_next_requests_catalog(
    live: Callable[..., tuple[LiveChat, FakeOpenAI]], tmp_path: Path
) -> None:
    make_skill(tmp_path, "alpha", "Write alpha reports. Use when asked for a report.")
    chat, server = live(tmp_path, [reply("First."), reply("Second."), reply("Third.")])
    chat.send("one")
    chat.answer("First.")
    make_skill(tmp_path, "beta", "Brew coffee. Use when asked for coffee.")
    assert chat.status("skills changed:") == "skills changed: +beta"
    chat.send("two")
    chat.answer("Second.")
    (tmp_path / "alpha" / "notes.md").write_text("a resource file, not the catalog")
    chat.send("three")
    chat.answer("Third.")
    assert chat.close() == 0
    first, second, third = server.bodies()
    assert "beta" not in _system(first) and _skill_enum(first) == ["alpha"]
    assert "<name>\nbeta\n</name>" in _system(second) and "Brew coffee." in _system(second)
    assert _skill_enum(second) == ["alpha", "beta"]
    # Nothing in the catalog changed: the system prompt keeps its bytes (prompt cache).
    assert _system(third) == _system(second)
    assert not [line for line in chat.seen if "skills changed" in line and "beta" not in line]


def test_loaded_skill_edited_during_a_turn_is_delivered_again_with_the_new_body(
    live: Callable[..., tuple[LiveChat, FakeOpenAI]], tmp_path: Path
) -> None:
    description = "Write alpha reports. Use when asked for a report."
    make_skill(tmp_path, "alpha", description, body="Version one of the steps.\n")
    load = reply(tools=[("skill_load", {"skill": "alpha"})])
    script = PausingScript([load, load, load, reply("Done.")], pause_at=2)
    chat, server = live(tmp_path, script)
    chat.send("write the report")
    script.wait_paused()  # the model has the body and the "already loaded" stub
    make_skill(tmp_path, "alpha", description, body="Version two of the steps.\n")
    assert chat.status("skills changed:") == "skills changed: ~alpha"
    script.resume()
    chat.answer("Done.")
    assert chat.close() == 0
    bodies = server.bodies()
    assert "Version one of the steps." in _last_tool_result(bodies[1])
    assert "already loaded and unchanged" in _last_tool_result(bodies[2])
    redelivered = _last_tool_result(bodies[3])
    assert "Version two of the steps." in redelivered
    assert "already loaded" not in redelivered
    # Only the body changed: the system prompt is the same bytes in every request.
    assert len({_system(body) for body in bodies}) == 1


def test_loaded_skill_removed_during_a_turn_is_unknown_with_the_closest_names(
    live: Callable[..., tuple[LiveChat, FakeOpenAI]], tmp_path: Path
) -> None:
    make_skill(tmp_path, "release-draft", "Draft release notes. Use for a draft.")
    make_skill(tmp_path, "release-notes", "Write release notes. Use for final notes.")
    load = reply(tools=[("skill_load", {"skill": "release-draft"})])
    script = PausingScript([load, load, reply("Gone.")], pause_at=1)
    chat, server = live(tmp_path, script)
    chat.send("release notes please")
    script.wait_paused()
    shutil.rmtree(tmp_path / "release-draft")
    assert chat.status("skills changed:") == "skills changed: -release-draft"
    script.resume()
    chat.answer("Gone.")
    assert chat.close() == 0
    bodies = server.bodies()
    assert "<skill_content" in _last_tool_result(bodies[1])
    unknown = _last_tool_result(bodies[2])
    assert 'Unknown skill "release-draft"' in unknown and "Did you mean: release-notes?" in unknown
    assert _skill_enum(bodies[2]) == ["release-notes"]
    assert "release-draft" not in _system(bodies[2])


def test_invalid_edit_keeps_the_last_good_version_and_warns(
    live: Callable[..., tuple[LiveChat, FakeOpenAI]], tmp_path: Path
) -> None:
    alpha = make_skill(tmp_path, "alpha", "Good description. Use when testing.")
    chat, server = live(tmp_path, [reply("First."), reply("Second."), reply("Third.")])
    chat.send("one")
    chat.answer("First.")
    _broken(alpha)
    warning = chat.status("warning:")
    assert "skill 'alpha' was edited into an invalid state" in warning
    assert "last good version stays" in warning and str(alpha / "SKILL.md") in warning
    chat.send("two")
    chat.answer("Second.")
    make_skill(tmp_path, "alpha", "Fixed description. Use when testing.")
    assert chat.status("skills changed:") == "skills changed: ~alpha"
    chat.send("three")
    chat.answer("Third.")
    assert chat.close() == 0
    first, second, third = server.bodies()
    assert _system(second) == _system(first)  # the last good version, byte for byte
    assert "Good description." in _system(second)
    assert "Fixed description." in _system(third) and "Good description." not in _system(third)


# -- in process: options and errors ---------------------------------------------------------


def _scripted(tmp_path: Path, replies: list[Any]) -> str:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    return f"scripted:{script}"


def test_watch_without_watchfiles_is_a_usage_error_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_skill(tmp_path / "skills", "alpha")
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # `import watchfiles` now fails
    model = _scripted(tmp_path, ["never sent"])
    args = ["chat", "--root", str(tmp_path / "skills"), "--no-cache", "--model", model]
    out = CliRunner().invoke(main, [*args, "--watch", "-m", "hi"])
    assert out.exit_code == 2
    assert "--watch needs the 'watchfiles' package" in out.stderr
    assert install_hint("watch") in out.stderr
    assert "Traceback" not in out.output and out.stdout == ""


def test_one_message_with_watch_answers_and_exits(tmp_path: Path) -> None:
    make_skill(tmp_path / "skills", "alpha")
    model = _scripted(tmp_path, ["Watched hello."])
    args = ["chat", "--root", str(tmp_path / "skills"), "--no-cache", "--model", model]
    out = CliRunner().invoke(main, [*args, "--watch", "-m", "hi"])
    assert out.exit_code == 0, out.output
    assert out.stdout == "Watched hello.\n"
    assert "warning" not in out.stderr
    assert not [t for t in threading.enumerate() if t.name == "skillshelf-watch"]


def test_watch_with_only_an_archive_root_warns_that_nothing_is_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cache"))
    archive = tmp_path / "skills.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        text = "---\nname: alpha\ndescription: Archived. Use when testing.\n---\nBody.\n"
        bundle.writestr("alpha/SKILL.md", text)
    model = _scripted(tmp_path, ["Hello."])
    args = ["chat", "--root", str(archive), "--no-cache", "--model", model]
    out = CliRunner().invoke(main, [*args, "--watch", "-m", "hi"])
    assert out.exit_code == 0, out.output
    assert "no skill folder to watch" in out.stderr


def test_help_explains_watch() -> None:
    out = CliRunner().invoke(main, ["chat", "--help"])
    assert out.exit_code == 0
    assert "--watch" in out.stdout and "'watch'" in out.stdout


# -- the status lines (pure) -----------------------------------------------------------------


def test_change_line_lists_added_edited_and_removed_skills() -> None:
    from skillshelf.cli.chat import _change_line
    from skillshelf.repository import Changes

    assert _change_line(Changes(("new",), ("edited",), ("gone", "old"))) == (
        "skills changed: +new ~edited -gone -old"
    )
    assert _change_line(Changes()) is None


def test_each_unusable_skill_is_warned_about_once_per_reason(tmp_path: Path) -> None:
    from skillshelf.cli.chat import _problems, _skipped_warnings

    alpha = make_skill(tmp_path, "alpha")
    repo = Repository([tmp_path], cache_dir=False)
    _broken(alpha)
    make_skill(tmp_path, "beta", raw="no frontmatter here\n")
    repo.refresh()
    first = _skipped_warnings(repo.skipped, {})
    assert len(first) == 2
    stale = next(line for line in first if "'alpha'" in line)
    assert "last good version stays" in stale and "line" in stale
    assert any(line.startswith("warning: not a usable skill: ") for line in first)
    assert _skipped_warnings(repo.skipped, _problems(repo.skipped)) == []


# -- the repository under a watcher thread ---------------------------------------------------


def test_search_index_built_while_a_refresh_lands_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_skill(tmp_path, "alpha", "Write alpha reports.")
    repo = Repository([tmp_path], cache_dir=False)
    real = search.SearchIndex
    interleaved: list[bool] = []

    def build_then_refresh(skills: Any) -> search.SearchIndex:
        index = real(skills)
        if not interleaved:  # the watcher thread's refresh lands while the index is built
            interleaved.append(True)
            make_skill(tmp_path, "beta", "Brew coffee.")
            repo.refresh()
        return index

    monkeypatch.setattr(search, "SearchIndex", build_then_refresh)
    assert [hit.name for hit in repo.search("coffee")] == []
    assert [hit.name for hit in repo.search("coffee")] == ["beta"]
