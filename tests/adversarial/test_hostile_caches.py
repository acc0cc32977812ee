"""Caches are hints: a hostile row is a miss, and another user's cache folder is never used.

Every field of every kind of discovery-index row (a plain skill, one with extensions, one
that is not valid) is swapped for each other marshal type, truncated, lengthened, made deep,
or given a name or shown field no SKILL.md could give; each mutation sits in its own skill's
row of one real index, and every face — ``Repository()``, ``list``, ``prompt``, ``show``,
``SkillTools`` calls, ``serve`` — must see exactly what it sees without a cache. Cache folders
and files of another user (uid 65534), world-writable ones and links are neither read nor
written, for the index, the token counts, tiktoken's rank file and archive roots. The MCP
digest cache sees a same-size edit whose modification time was put back.
"""

from __future__ import annotations

import json
import logging
import marshal
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from adversarial.hostile_cache_rows import (
    KINDS,
    Row,
    index_files,
    mutations,
    rewrite_rows,
    seen,
    truth,
    write_kind,
)
from adversarial.hostile_roots import cli
from mcpserver.helpers import all_skills, server_env, stdio_params
from skillshelf.mcpserver.files import DigestCache
from skillshelf.repository import Repository
from skillshelf.skills import cache_files
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools

NOBODY = 65534
MUTATIONS = list(mutations())


# -- hostile rows ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[Path], Path]]:
    """One root per kind of row, a skill per mutation, and a cache whose every row carries
    its skill's mutation (written for real first, through the library and the CLI)."""
    base = tmp_path_factory.mktemp("hostile-caches")
    roots = []
    for kind in KINDS:
        root = base / kind
        for i in range(len(MUTATIONS)):
            write_kind(root, kind, f"{kind}-m{i}")
        roots.append(root)
    cache = base / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache_files, "RACY_NS", 1)  # keep rows of files written just now
        patch.setenv("SKILLSHELF_CACHE_DIR", str(cache))
        Repository(roots, cache_dir=cache)
        assert cli("list", *_root_args(roots), "--json").exit_code == 0

    def change(path: str, row: Row) -> object:
        return MUTATIONS[_mutation_of(path.rsplit(os.sep, 2)[-2])][1](row)

    assert rewrite_rows(cache, change) >= len(KINDS) * len(MUTATIONS)
    yield roots, cache


def _mutation_of(skill: str) -> int:
    return int(skill.rpartition("-m")[2])


def _must_miss(skill: str) -> bool:
    return MUTATIONS[_mutation_of(skill)][2]


def _no_forged_lines(text: str) -> None:
    forged = [line for line in text.splitlines() if re.match(r"\s*[-*]\s*\**forged", line)]
    assert not forged, forged


def _root_args(roots: list[Path]) -> list[str]:
    return [arg for root in roots for arg in ("--root", str(root))]


@pytest.fixture
def hostile_cache(
    hostile: tuple[list[Path], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Path], Path]:
    """A fresh copy of the hostile cache (a face rewrites the index after its misses)."""
    roots, cache = hostile
    copy = tmp_path / "cache"
    shutil.copytree(cache, copy)
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(copy))
    return roots, copy


def _expected(roots: list[Path]) -> dict[str, Any]:
    """What the roots hold without a cache: skills by name, and "<skipped>" paths."""
    expected: dict[str, Any] = {"<skipped>": []}
    for root in roots:
        found = truth(root)
        expected["<skipped>"].extend(found.pop("<skipped>")[1])
        expected.update(found)
    return expected


def _skills(roots: list[Path]) -> dict[str, Any]:
    return {k: v for k, v in _expected(roots).items() if k != "<skipped>"}


def _sample(names: dict[str, Any]) -> list[str]:
    """A dozen names spread over the mutations (one call per skill would take minutes)."""
    return sorted(names)[:: max(1, len(names) // 12)]


def test_hostile_rows_are_misses_through_the_repository(
    hostile_cache: tuple[list[Path], Path],
) -> None:
    roots, cache = hostile_cache
    got = seen(Repository(roots, cache_dir=cache))
    expected = _expected(roots)
    assert sorted(got.pop("<skipped>")[1]) == sorted(expected.pop("<skipped>"))
    assert sorted(got) == sorted(expected)
    missed = {name: value for name, value in got.items() if _must_miss(name)}
    assert missed == {name: expected[name] for name in missed}
    assert len(missed) > len(got) // 2


def test_hostile_rows_are_misses_through_list_prompt_and_show(
    hostile_cache: tuple[list[Path], Path],
) -> None:
    roots, _ = hostile_cache
    expected = _skills(roots)
    listed = cli("list", *_root_args(roots), "--json")
    assert listed.exit_code == 0, listed.output
    entries = json.loads(listed.stdout)
    assert sorted(e["name"] for e in entries) == sorted(expected)
    for entry in entries:
        if _must_miss(entry["name"]):
            assert entry["description"] == expected[entry["name"]][0]
    plain = cli("list", *_root_args(roots))
    assert plain.exit_code == 0
    _no_forged_lines(plain.stdout)
    prompt = cli("prompt", *_root_args(roots), "--format", "xml")
    assert prompt.exit_code == 0
    names = [(e.findtext("name") or "").strip() for e in ET.fromstring(prompt.stdout).iter("skill")]
    assert sorted(names) == sorted(expected)
    for name in _sample(expected):
        shown = cli("show", name, *_root_args(roots), "--json")
        assert shown.exit_code == 0, shown.output
        if _must_miss(name):
            assert json.loads(shown.stdout)["description"] == expected[name][0]


def test_hostile_rows_are_misses_through_skill_tools(
    hostile_cache: tuple[list[Path], Path],
) -> None:
    roots, cache = hostile_cache
    expected = _skills(roots)
    tools = SkillTools(Repository(roots, cache_dir=cache))
    listed = tools.call("skill_list")
    assert listed.status == "ok", listed.content
    _no_forged_lines(listed.content)
    lines = [line for line in listed.content.splitlines() if line.startswith("- ")]
    assert lines  # the list is capped; each entry it shows is one of the real skills
    assert {line[2:].split(" ", 1)[0].rstrip(":") for line in lines} <= set(expected)
    for name in _sample(expected):
        loaded = tools.call("skill_load", {"skill": name})
        assert loaded.status == "ok", loaded.content
        assert loaded.content.count("<skill_content ") == 1


def test_hostile_rows_are_misses_through_serve(hostile_cache: tuple[list[Path], Path]) -> None:
    roots, cache = hostile_cache
    expected = _skills(roots)
    command = [
        sys.executable,
        "-c",
        "from skillshelf.cli import main; main()",
        "serve",
        *_root_args(roots),
    ]

    async def check() -> None:
        params = stdio_params(command, server_env(SKILLSHELF_CACHE_DIR=str(cache)))
        with anyio.fail_after(120):
            async with Client(params) as client:
                entries = await all_skills(client)
                assert sorted(e["frontmatter"]["name"] for e in entries) == sorted(expected)
                listed = await client.call_tool("skill_list", {})
                text = listed.content[0].text  # type: ignore[union-attr]
                _no_forged_lines(text)

    anyio.run(check)


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\x00",
        marshal.dumps(None),
        marshal.dumps(("skillshelf-index-8",)),
        marshal.dumps(("skillshelf-index-8", "key", [])),
        marshal.dumps([[[[[]]]]]),
    ],
    ids=["empty", "nul", "none", "short", "rows-a-list", "deep"],
)
def test_a_corrupt_index_file_is_an_empty_index(
    payload: bytes, tmp_path: Path, settled_stamps: None
) -> None:
    root = tmp_path / "root"
    make_skill(root, "alpha")
    cache = tmp_path / "cache"
    Repository([root], cache_dir=cache)
    for file in index_files(cache):
        file.write_bytes(payload)
    assert [s.name for s in Repository([root], cache_dir=cache).skills] == ["alpha"]
    # Truncated at every length, the real file is a miss too.
    Repository([root], cache_dir=cache)
    (file,) = index_files(cache)
    data = file.read_bytes()
    for cut in range(0, len(data), max(1, len(data) // 40)):
        file.write_bytes(data[:cut])
        assert [s.name for s in Repository([root], cache_dir=cache).skills] == ["alpha"]


# -- cache folders and files that are not ours ------------------------------------------------


def _forged_cache(root: Path, cache: Path) -> None:
    """An index of ``root`` in ``cache`` whose rows are well formed but forged."""
    Repository([root], cache_dir=cache)
    rewrite_rows(cache, lambda _path, row: (*row[:5], "FORGED description", *row[6:]))
    assert "FORGED" in Repository([root], cache_dir=cache).skills[0].description


def _chown_tree(path: Path, uid: int) -> None:
    for folder, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)
    os.chown(path, uid, uid, follow_symlinks=False)


def _listing(path: Path) -> list[tuple[str, int]]:
    return sorted((p.name, p.stat().st_mtime_ns) for p in path.iterdir())


@pytest.fixture
def forged(tmp_path: Path, settled_stamps: None) -> tuple[Path, Path]:
    root = tmp_path / "root"
    make_skill(root, "alpha", "The real description.")
    cache = tmp_path / "cache"
    _forged_cache(root, cache)
    return root, cache


def _assert_not_used(root: Path, cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    before = _listing(cache)
    with caplog.at_level(logging.WARNING, logger="skillshelf.cache"):
        first = Repository([root], cache_dir=cache)
        second = Repository([root], cache_dir=cache)
    assert first.skills[0].description == "The real description."
    assert second.skills[0].description == "The real description."
    assert _listing(cache) == before  # nothing written there either
    warnings = [r for r in caplog.records if "is not used" in r.getMessage()]
    assert len(warnings) == 1, warnings  # said once, not on every open


def test_a_cache_folder_of_another_user_is_neither_read_nor_written(
    forged: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    root, cache = forged
    _chown_tree(cache, NOBODY)
    _assert_not_used(root, cache, caplog)


def test_a_world_writable_cache_folder_is_neither_read_nor_written(
    forged: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    root, cache = forged
    cache.chmod(0o777)
    _assert_not_used(root, cache, caplog)


def test_a_cache_folder_that_is_a_link_is_neither_read_nor_written(
    forged: tuple[Path, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root, theirs = forged
    link = tmp_path / "linked-cache"
    link.symlink_to(theirs)
    before = _listing(theirs)
    _assert_not_used(root, link, caplog)
    assert _listing(theirs) == before


@pytest.mark.parametrize("how", ["other-owner", "link", "group-writable"])
def test_an_index_file_that_is_not_ours_is_not_read(
    how: str, forged: tuple[Path, Path], tmp_path: Path
) -> None:
    root, cache = forged
    (file,) = index_files(cache)
    if how == "other-owner":
        os.chown(file, NOBODY, NOBODY)
    elif how == "group-writable":
        file.chmod(0o660)
    else:
        elsewhere = tmp_path / "elsewhere.bin"
        file.rename(elsewhere)
        file.symlink_to(elsewhere)
    assert Repository([root], cache_dir=cache).skills[0].description == "The real description."


def test_a_cache_folder_created_by_another_user_under_setpriv_is_not_used(
    tmp_path: Path, settled_stamps: None
) -> None:
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is not installed")
    root = tmp_path / "root"
    make_skill(root, "alpha", "The real description.")
    # A folder every user may reach and write (a shared XDG_CACHE_HOME, /tmp); pytest's own
    # temporary folders are private to us.
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="skillshelf-shared-") as shared:
        os.chmod(shared, 0o1777)
        cache = Path(shared, "cache")
        # Another local user creates the cache folder first.
        as_nobody = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
        subprocess.run([*as_nobody, "mkdir", "-m", "755", str(cache)], check=True)
        assert cache.stat().st_uid == NOBODY
        repo = Repository([root], cache_dir=cache)
        assert repo.skills[0].description == "The real description."
        assert list(cache.iterdir()) == []


# -- the other caches -------------------------------------------------------------------------


def test_forged_token_counts_in_another_users_folder_are_not_reported(tmp_path: Path) -> None:
    from skillshelf.reports import tokens

    counter = tokens.get_counter("o200k_base")
    if not counter.exact:
        pytest.skip("no exact token counter installed")
    cache = tmp_path / "tokens"
    first = tokens.CountCache(cache)
    assert counter.count_many(["hello world"], cache=first) == [2]
    first.save()
    (file,) = cache.iterdir()
    fmt, counts = marshal.loads(file.read_bytes())
    file.write_bytes(marshal.dumps((fmt, dict.fromkeys(counts, 999))))
    assert counter.count_many(["hello world"], cache=tokens.CountCache(cache)) == [999]
    _chown_tree(cache, NOBODY)
    before = _listing(cache)
    theirs = tokens.CountCache(cache)
    assert counter.count_many(["hello world"], cache=theirs) == [2]
    theirs.save()
    assert _listing(cache) == before


def test_tiktoken_is_seeded_in_our_own_cache_never_in_a_shared_tmp_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tiktoken")
    pytest.importorskip("bpe_openai")
    import tiktoken.registry

    from skillshelf.reports import tokens

    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    # Another user pre-creates tiktoken's default folder as a link to where they choose.
    (shared_tmp / "data-gym-cache").symlink_to(victim)
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "ours"))
    monkeypatch.setattr(tokens, "_COUNTERS", {})
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.delenv(tokens.BACKEND_ENV, raising=False)

    counter = tokens.get_counter("cl100k_base")

    assert (counter.backend, counter.count("hello world")) == ("tiktoken", 2)
    assert list(victim.iterdir()) == []
    assert len(list((tmp_path / "ours" / "tiktoken").iterdir())) == 1
    assert "TIKTOKEN_CACHE_DIR" not in os.environ


def test_a_tiktoken_cache_folder_of_another_user_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tiktoken")
    import tiktoken.registry

    from skillshelf.reports import tokens

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(theirs))
    monkeypatch.setattr(tokens, "_COUNTERS", {})
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.delenv(tokens.BACKEND_ENV, raising=False)

    counter = tokens.get_counter("o200k_base")

    assert counter.backend != "tiktoken"
    assert "cannot write its cache" in counter.note
    assert list(theirs.iterdir()) == []


def test_an_archive_root_with_another_users_cache_folder_is_a_clear_diagnostic(
    tmp_path: Path,
) -> None:
    import zipfile

    archive = tmp_path / "skills.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("alpha/SKILL.md", "---\nname: alpha\ndescription: d\n---\nbody\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chown(cache, NOBODY, NOBODY)
    repo = Repository([str(archive)], cache_dir=cache)
    assert repo.skills == []
    codes = [d.code for d in repo.diagnostics]
    assert "cache.not_private" in codes
    message = next(d.message for d in repo.diagnostics if d.code == "cache.not_private")
    assert "SKILLSHELF_CACHE_DIR" in message
    assert list(cache.iterdir()) == []


def test_a_same_size_edit_with_the_time_put_back_changes_the_digest(
    tmp_path: Path, settled_stamps: None
) -> None:
    skill = make_skill(tmp_path, "alpha", files={"doc.md": "version one\n"})
    doc = skill / "doc.md"
    old = doc.stat()
    cache = DigestCache()
    first = cache.digest(str(skill), "doc.md", doc.stat())
    doc.write_text("version two\n")  # same size
    os.utime(doc, ns=(old.st_atime_ns, old.st_mtime_ns))  # the time put back
    assert doc.stat().st_size == old.st_size
    assert doc.stat().st_mtime_ns == old.st_mtime_ns
    assert cache.digest(str(skill), "doc.md", doc.stat()) != first


def test_a_digest_of_a_file_changed_just_now_is_not_kept(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "alpha", files={"doc.md": "version one\n"})
    doc = skill / "doc.md"
    cache = DigestCache()
    stamp = doc.stat()
    first = cache.digest(str(skill), "doc.md", stamp)
    # Rewritten within the same clock tick, every stamp could be what it was: the first
    # digest was not kept, so the file is hashed again.
    doc.write_text("version two\n")
    assert cache.digest(str(skill), "doc.md", stamp) != first
