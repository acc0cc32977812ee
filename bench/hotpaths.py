"""Benchmark the per-call hot paths at 100, 1,000, 10,000 (and 100,000) skills, beside their floor.

Generates (or reuses, with ``--trees``) one root per size with ``bench/mcp.py``'s generator
(SKILL.md + a reference + a script per skill) and measures, per size, the median of each call
cycling through skills spread over the whole repository:

* floors: ``Skill.body()`` and a plain open + read of SKILL.md; and ``Skill.body()`` timed
  again interleaved with ``skill_load`` of the same skill (in a fresh session and in one
  holding three loaded skills), so that the ratio is not at the mercy of the load changing
  between two rows;
* in process, through :class:`SkillTools` (memory store, a fresh session per load so every
  load delivers full content; and again in sessions holding three, and nineteen, other
  loaded skills):
  ``skill_load``, ``skill_read_file``, ``skill_list_docs``,
  ``skill_select_docs``, ``skill_unload``, ``skill_search`` (beside ``Repository.search``,
  its floor; "task N" matches every skill, the worst case, and the labelled queries of
  ``bench/data/search_queries.jsonl`` are a realistic mix), ``skill_list`` and
  ``workspace_exec`` set-up (the call up to the executor, which here returns at once: the
  command itself is ``bench/exec.py``'s business);
* over MCP stdio, against a real ``skillshelf serve --exec --sandbox local`` per size (its
  start-up is not timed), through the SDK's client (``bench/mcp.py``'s machinery): every
  tool (``skill_load`` cycling through 50 skills in one session that keeps 20, so every load
  is a full one; ``workspace_exec`` runs ``true``), ``resources/read``, ``skills/get``,
  ``prompts/get``, ``skills/list``, ``resources/list`` and ``prompts/list`` pages resumed
  from a cursor (per entry returned), and ``tools/list``; beside
  ``bench/minimal_mcp_server.py`` (an SDK server returning the same SKILL.md with no checks)
  for the calls it has an equivalent of, with the ratio serve / minimal per size;
  ``skill_search`` both with "task N" and with the labelled queries.

Each row prints the median per size and the growth ratio against 100 skills (the target is
≤ 1.5× at 10,000 and 100,000), and ``skill_load`` over ``Skill.body()`` of the same skills
(target ≤ 5× at 10,000). The machine may be loaded: read the ratios, measured minutes apart
in the same process.

With ``--rss N`` it also starts ``skillshelf serve`` over N generated skills, performs a
few calls and a full ``skills/list`` page, reads its peak RSS (``VmHWM``), and breaks the
memory of the same set-up down in process with :mod:`tracemalloc`.

Usage: ``python bench/hotpaths.py [--sizes 100,1000,10000] [--large] [--rounds 300]
[--trees DIR] [--no-mcp] [--rss 100000] [--json]``
(``--large`` adds 100,000; generating that tree takes several minutes, so ``--trees``
keeps it between runs).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench import mcp as mcp_bench  # noqa: E402
from skillshelf.exec.runner import RunOutput, RunSpec  # noqa: E402
from skillshelf.repository import Repository  # noqa: E402
from skillshelf.stores import open_store  # noqa: E402
from skillshelf.tools import SkillTools  # noqa: E402

GUIDE = "references/guide.md"
LABELLED = ROOT / "bench" / "data" / "search_queries.jsonl"


def tree(base: Path, count: int) -> Path:
    """The generated root of ``count`` skills under ``base`` (made on first use)."""
    root = base / f"t{count}"
    if not root.exists():
        scratch = base / f"partial-{count}-{os.getpid()}"
        mcp_bench.make_root(scratch, count)
        scratch.rename(root)
    return root


def open_repo(root: Path, count: int) -> Repository:
    return Repository([root], cache_dir=False, max_dirs=max(2000, 4 * count))


def _median_us(rounds: int, names: list[str], call: Callable[[int, str], object]) -> float:
    samples: list[float] = []
    for i in range(rounds):
        name = names[i % len(names)]
        start = time.perf_counter()
        call(i, name)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def _interleaved_loads(
    rounds: int,
    names: list[str],
    skills: dict[str, Any],
    fresh: Callable[[int], SkillTools],
    loaded: list[SkillTools],
    first: int,
) -> dict[str, float]:
    """``Skill.body()``, ``skill_load`` and ``skill_load`` with 3 loaded, one after the other
    for each skill: their ratio does not depend on the load swinging between two rows."""
    samples: dict[str, list[float]] = {
        "interleaved: Skill.body()": [],
        "interleaved: skill_load": [],
        "interleaved: skill_load (3 loaded)": [],
    }
    body, load, busy = samples.values()
    for i in range(rounds):
        name = names[i % len(names)]
        start = time.perf_counter()
        skills[name].body()
        body.append(time.perf_counter() - start)
        tools = fresh(first + i)
        start = time.perf_counter()
        _ok(tools.call("skill_load", {"skill": name}))
        load.append(time.perf_counter() - start)
        start = time.perf_counter()
        _ok(loaded[i].call("skill_load", {"skill": name}))
        busy.append(time.perf_counter() - start)
    return {label: statistics.median(values) * 1e6 for label, values in samples.items()}


class _NoRun:
    """An executor that returns at once: ``workspace_exec`` timed up to the command."""

    name = "none"
    isolated = True

    def visible(self, spec_root: Path, path: Path) -> str:
        return str(path)

    def run(self, spec: RunSpec) -> RunOutput:
        return RunOutput(0, False, 0.0, "", "", False, False)


def _ok(result: Any) -> Any:
    if result.status != "ok":
        raise RuntimeError(f"{result.tool} failed: {result.content[:300]}")
    return result


def measure_in_process(repo: Repository, count: int, rounds: int, work: Path) -> dict[str, float]:
    from skillshelf.exec.workspace import WorkspaceManager

    # Skills spread over the whole repository (the first, the last and between).
    names = [mcp_bench.skill_name(i * (count - 1) // 49) for i in range(50)]
    store = open_store(None)
    out: dict[str, float] = {}
    skills = {n: repo.get(n) for n in names}

    def fresh(i: int) -> SkillTools:
        return SkillTools(repo, store=store, session_id=f"s{count}-{i}")

    def floor_read(_i: int, name: str) -> None:
        with open(skills[name].skill_md, "rb") as file:
            file.read()

    out["floor: Skill.body()"] = _median_us(rounds, names, lambda _i, n: skills[n].body())
    out["floor: open+read SKILL.md"] = _median_us(rounds, names, floor_read)
    out["skill_load"] = _median_us(
        rounds, names, lambda i, n: _ok(fresh(i).call("skill_load", {"skill": n}))
    )

    def busy(first: int, others: int = 3) -> list[SkillTools]:
        # Sessions holding other skills already (their entries beside the one loaded), and
        # the load of names[i] still delivers full content.
        sessions = [fresh(first + i) for i in range(rounds)]
        for i, session in enumerate(sessions):
            for k in range(1, others + 1):
                _ok(session.call("skill_load", {"skill": names[(i + k) % len(names)]}))
        return sessions

    loaded = busy(rounds)
    out["skill_load (3 loaded)"] = _median_us(
        rounds, names, lambda i, n: _ok(loaded[i].call("skill_load", {"skill": n}))
    )
    # A session at the default limit (20 loaded, so no eviction): what a load costs does not
    # grow with what the session holds.
    full = busy(4 * rounds, others=19)
    out["skill_load (19 loaded)"] = _median_us(
        rounds, names, lambda i, n: _ok(full[i].call("skill_load", {"skill": n}))
    )
    out |= _interleaved_loads(rounds, names, skills, fresh, busy(2 * rounds), 3 * rounds)
    # One session of a few loaded skills (a session holds at most 20): the calls below cycle
    # through them.
    tools = SkillTools(repo, store=store, session_id=f"main-{count}")
    names = names[::5]
    for name in names:
        _ok(tools.call("skill_load", {"skill": name}))
    out["skill_read_file"] = _median_us(
        rounds, names, lambda _i, n: _ok(tools.call("skill_read_file", {"skill": n, "path": GUIDE}))
    )
    out["skill_list_docs"] = _median_us(
        rounds, names, lambda _i, n: _ok(tools.call("skill_list_docs", {"skill": n}))
    )
    out["skill_select_docs"] = _median_us(
        rounds,
        names,
        lambda _i, n: _ok(tools.call("skill_select_docs", {"skill": n, "docs": [GUIDE]})),
    )
    out["skill_unload"] = _median_us(
        rounds, names, lambda _i, n: _ok(tools.call("skill_unload", {"skill": n}))
    )
    queries = {n: f"task {n.rsplit('-', 1)[1].lstrip('0') or '0'}" for n in names}
    out["floor: Repository.search"] = _median_us(
        rounds, names, lambda _i, n: repo.search(queries[n], limit=5)
    )
    out["skill_search"] = _median_us(
        rounds,
        names,
        lambda _i, n: _ok(tools.call("skill_search", {"query": queries[n], "limit": 5})),
    )
    # A realistic mix: the labelled queries of bench/search.py's quality set, as users type.
    lines = LABELLED.read_text(encoding="utf-8").splitlines()
    mix = {n: json.loads(lines[i % len(lines)])["query"] for i, n in enumerate(names)}
    out["Repository.search (labelled queries)"] = _median_us(
        rounds, names, lambda _i, n: repo.search(mix[n], limit=5)
    )
    out["skill_search (labelled queries)"] = _median_us(
        rounds, names, lambda _i, n: _ok(tools.call("skill_search", {"query": mix[n], "limit": 5}))
    )
    out["skill_list (every skill)"] = _median_us(
        max(rounds // 10, 5), names, lambda _i, _n: _ok(tools.call("skill_list"))
    )
    runner = SkillTools(
        repo,
        store=store,
        session_id=f"exec-{count}",
        workspace=WorkspaceManager(work / f"ws-{count}"),
        executor=_NoRun(),
    )
    out["workspace_exec set-up"] = _median_us(
        rounds,
        names,
        lambda _i, n: _ok(runner.call("workspace_exec", {"skill": n, "command": "true"})),
    )
    out["schemas (openai)"] = _median_us(rounds, names, lambda _i, _n: tools.schemas("openai"))
    return out


_WARM_UP = 3  # untimed calls before each MCP path, on the last skills of the cycle


async def _amedian_us(
    rounds: int,
    names: list[str],
    call: Callable[[str], Awaitable[object]],
    *,
    warm_up: int = _WARM_UP,
) -> float:
    """The median of ``call(name)`` cycling through ``names``, in µs; when the call returns
    a number of items (a list page), the median per item."""
    for name in names[-warm_up:]:  # the first calls of a path pay for lazy imports
        await call(name)
    samples: list[float] = []
    for i in range(rounds):
        name = names[i % len(names)]
        start = time.perf_counter()
        items = await call(name)
        elapsed = time.perf_counter() - start
        samples.append(elapsed / max(items, 1) if isinstance(items, int) else elapsed)
    return statistics.median(samples) * 1e6


async def _serve_paths(client: Any, count: int, rounds: int) -> dict[str, float]:
    """Every per-call path of ``skillshelf serve``, through a connected SDK client."""
    import mcp_types as types
    from pydantic import BaseModel, ConfigDict

    from skillshelf.mcpserver.extension import encode_cursor

    class Raw(BaseModel):
        model_config = ConfigDict(extra="allow")

    async def ext(method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = types.Request[dict[str, Any], str](method=method, params=params)
        return dict((await client.session.send_request(message, Raw)).model_extra or {})

    def tool(name: str, **arguments: Any) -> Awaitable[str]:
        return mcp_bench._tool_text(client, name, arguments)

    names = [mcp_bench.skill_name(i * (count - 1) // 49) for i in range(50)]
    queries = {n: f"task {n.rsplit('-', 1)[1].lstrip('0') or '0'}" for n in names}
    out: dict[str, float] = {}
    listed = await client.list_tools()
    out["tools/list JSON chars"] = float(sum(len(json.dumps(t.input_schema)) for t in listed.tools))
    out["MCP tools/list"] = await _amedian_us(
        max(rounds // 10, 5), names, lambda _n: client.list_tools()
    )
    # 50 skills cycled through one session that keeps at most 20: every load is a full one.
    out["MCP skill_load"] = await _amedian_us(rounds, names, lambda n: tool("skill_load", skill=n))
    loaded = names[::5]
    for name in loaded:
        await tool("skill_load", skill=name)
    out["MCP skill_read_file SKILL.md"] = await _amedian_us(
        rounds, loaded, lambda n: tool("skill_read_file", skill=n, path="SKILL.md")
    )
    out["MCP skill_list_docs"] = await _amedian_us(
        rounds, loaded, lambda n: tool("skill_list_docs", skill=n)
    )
    out["MCP skill_select_docs"] = await _amedian_us(
        rounds, loaded, lambda n: tool("skill_select_docs", skill=n, docs=[GUIDE])
    )
    out["MCP skill_unload"] = await _amedian_us(
        rounds, loaded, lambda n: tool("skill_unload", skill=n)
    )
    out["MCP skill_search"] = await _amedian_us(
        rounds, loaded, lambda n: tool("skill_search", query=queries[n], limit=5)
    )
    labelled = [json.loads(line)["query"] for line in LABELLED.read_text("utf-8").splitlines()]
    out["MCP skill_search (labelled queries)"] = await _amedian_us(
        rounds, labelled, lambda q: tool("skill_search", query=q, limit=5)
    )
    # Every skill, as text and rows: megabytes at 100,000, so only a few calls.
    out["MCP skill_list (every skill)"] = await _amedian_us(
        max(rounds // 100, 3), loaded, lambda _n: tool("skill_list")
    )
    out["MCP workspace_exec (runs true)"] = await _amedian_us(
        max(rounds // 3, 5), loaded, lambda n: tool("workspace_exec", skill=n, command="true")
    )
    out["MCP resources/read"] = await _amedian_us(
        rounds, names, lambda n: mcp_bench._resource_text(client, n)
    )
    out["MCP skills/get"] = await _amedian_us(
        rounds, names, lambda n: ext("skills/get", {"uri": f"skill://{n}/SKILL.md"})
    )
    out["MCP prompts/get"] = await _amedian_us(
        rounds, names, lambda n: client.get_prompt(n, {"arguments": "x"})
    )

    def page(kind: str) -> Callable[[str], Awaitable[int]]:
        async def items(name: str) -> int:
            found = await ext(f"{kind}/list", {"cursor": encode_cursor(kind, name)})
            return len(found[kind])

        return items

    # Per entry: the page after a skill near the end of the repository holds fewer entries,
    # and at 100 skills no page is full. Every page is read once untimed (digests, the
    # frontmatter and the folders' metadata are then cached, as on a server that has run).
    for kind in ("skills", "resources", "prompts"):
        out[f"MCP {kind}/list page, per entry"] = await _amedian_us(
            max(rounds // 3, 5), names, page(kind), warm_up=len(names)
        )
    return out


async def _minimal_paths(client: Any, count: int, rounds: int) -> dict[str, float]:
    """The same files from ``bench/minimal_mcp_server.py``: its tool, resource and prompt."""
    names = [mcp_bench.skill_name(i * (count - 1) // 49) for i in range(50)]
    return {
        "MCP minimal: read_skill tool": await _amedian_us(
            rounds, names, lambda n: mcp_bench._tool_text(client, "read_skill", {"skill": n})
        ),
        "MCP minimal: resources/read": await _amedian_us(
            rounds, names, lambda n: mcp_bench._resource_text(client, n)
        ),
        "MCP minimal: prompts/get": await _amedian_us(
            rounds, names, lambda n: client.get_prompt("skill", {"skill": n})
        ),
    }


_Paths = Callable[[Any, int, int], Awaitable[dict[str, float]]]


def measure_mcp_stdio(root: Path, count: int, rounds: int) -> dict[str, float]:
    """Every path over stdio against a real ``skillshelf serve --exec --sandbox local``, and
    the minimal SDK server's equivalents (``bench/mcp.py``'s machinery)."""
    import anyio

    mcp_bench._SERVE_ARGS[:] = [
        *("--max-dirs", str(max(2000, 4 * count))),
        *("--exec", "--sandbox", "local"),
    ]

    async def run(server: str, paths: _Paths) -> dict[str, float]:
        async with mcp_bench._client(server, "stdio", root, count) as client:
            return await paths(client, count, rounds)

    return anyio.run(run, "serve", _serve_paths) | anyio.run(run, "minimal", _minimal_paths)


def _vm(pid: int | str, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {key}")


def measure_rss(root: Path, count: int) -> dict[str, Any]:
    """Peak RSS of a real ``serve`` process, and a tracemalloc breakdown in this one."""
    import anyio
    from mcp import Client, StdioServerParameters

    command = mcp_bench._command("serve", root, "--max-dirs", str(max(2000, 4 * count)))
    pid: list[int] = []

    async def drive() -> None:
        params = StdioServerParameters(command=command[0], args=command[1:], env=mcp_bench._env())
        async with Client(params) as client:
            found = subprocess.run(
                ["pgrep", "-n", "-f", str(root)], capture_output=True, text=True, check=False
            ).stdout.split()
            pid.extend(int(p) for p in found)
            for i in range(0, count, max(1, count // 50)):
                name = mcp_bench.skill_name(i)
                await client.call_tool("skill_load", {"skill": name})
                await client.call_tool("skill_search", {"query": f"task {i}"})
                await client.read_resource(f"skill://{name}/SKILL.md")
            if count <= 10_000:  # a full listing digests every file: minutes at 100,000
                await mcp_bench._list_all(client)
            if pid:
                out["serve_peak_rss_bytes"] = _vm(pid[0], "VmHWM")
                out["serve_rss_bytes"] = _vm(pid[0], "VmRSS")

    out: dict[str, Any] = {"skills": count}
    anyio.run(drive)

    # The same set-up in process: what holds the memory.
    gc.collect()
    tracemalloc.start(1)
    before = tracemalloc.take_snapshot()
    repo = open_repo(root, count)
    after_scan = tracemalloc.get_traced_memory()[0]
    repo.search("task 1", limit=5)
    after_search = tracemalloc.get_traced_memory()[0]
    from skillshelf.mcpserver.server import SkillServer

    server = SkillServer(repo)
    tools = server._tools_for(_viewer())
    for i in range(0, count, max(1, count // 50)):
        tools.call("skill_load", {"skill": mcp_bench.skill_name(i)})
    tools.schemas("mcp")
    after_calls = tracemalloc.get_traced_memory()[0]
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    top = snapshot.compare_to(before, "filename")[:8]
    out["traced_after_scan_bytes"] = after_scan
    out["traced_search_index_bytes"] = after_search - after_scan
    out["traced_server_and_calls_bytes"] = after_calls - after_search
    out["traced_by_file"] = [
        (str(s.traceback[0].filename).replace(str(ROOT) + "/", ""), s.size_diff) for s in top
    ]
    out["bench_process_rss_bytes"] = _vm("self", "VmRSS")
    return out


def _viewer() -> Any:
    from skillshelf.mcpserver.shelf import Viewer

    return Viewer()


def _fmt_us(value: float) -> str:
    return f"{value / 1000:.2f} ms" if value >= 1000 else f"{value:.1f} µs"


# serve's call over MCP -> the minimal server's call that returns the same file
_MCP_PAIRS = (
    ("skill_load", "read_skill tool"),
    ("skill_read_file SKILL.md", "read_skill tool"),
    ("resources/read", "resources/read"),
    ("prompts/get", "prompts/get"),
)


def print_report(results: dict[str, Any]) -> None:
    sizes: list[int] = results["sizes"]
    rows: dict[int, dict[str, float]] = {n: results["by_size"][str(n)] for n in sizes}
    labels = list(rows[sizes[0]])
    print(
        f"skillshelf hot paths (CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}), {results['rounds']} calls each, medians"
    )
    head = "".join(f"{n:>12,}" for n in sizes)
    growth = "".join(f"{'×' + format(n, ','):>10}" for n in sizes[1:])
    print(f"{'call':<38}{head}   growth vs {sizes[0]:,}:{growth}")
    for label in labels:
        values = [rows[n].get(label) for n in sizes]
        cells = "".join(f"{_fmt_us(v):>12}" if v is not None else f"{'-':>12}" for v in values)
        base = values[0]
        ratios = "".join(
            f"{v / base:>9.2f}×" if v is not None and base else f"{'-':>10}" for v in values[1:]
        )
        print(f"{label:<38}{cells}{'':17}{ratios}")
    print(
        "skill_load / Skill.body() of the same skills (fresh session, 3 skills loaded), "
        "from the rows above and interleaved:"
    )
    for n in sizes:
        r = rows[n]
        body, inter = r["floor: Skill.body()"], r.get("interleaved: Skill.body()")
        shown = f"{r['skill_load'] / body:.2f}×"
        if "skill_load (3 loaded)" in r:
            shown += f", {r['skill_load (3 loaded)'] / body:.2f}×"
        if inter:
            shown += (
                f"; interleaved {r['interleaved: skill_load'] / inter:.2f}×, "
                f"{r['interleaved: skill_load (3 loaded)'] / inter:.2f}×"
            )
        print(f"  {n:>8,} skills: {shown}")
    print("SkillTools skill_search / Repository.search:")
    for n in sizes:
        r = rows[n]
        print(f"  {n:>8,} skills: {r['skill_search'] / r['floor: Repository.search']:.2f}×")
    if f"MCP {_MCP_PAIRS[0][0]}" in rows[sizes[0]]:
        print("MCP stdio, serve / bench/minimal_mcp_server.py (the same file, no checks):")
        print(f"  {'':<44}" + "".join(f"{n:>10,}" for n in sizes))
        for call, floor in _MCP_PAIRS:
            ratios = "".join(
                f"{rows[n][f'MCP {call}'] / rows[n][f'MCP minimal: {floor}']:>9.2f}×" for n in sizes
            )
            print(f"  {call + ' / ' + floor:<44}{ratios}")
        chars = results.get("tools_list_chars", {})
        if chars:
            print(
                "  tools/list input schemas: "
                + ", ".join(f"{int(chars[str(n)]):,} chars at {n:,}" for n in sizes)
            )
    rss = results.get("rss")
    if rss:
        mib = 1024 * 1024
        print(f"skillshelf serve at {rss['skills']:,} skills:")
        if "serve_peak_rss_bytes" in rss:
            print(f"  peak RSS (VmHWM) {rss['serve_peak_rss_bytes'] / mib:.0f} MiB")
        print(
            f"  traced in process: scan {rss['traced_after_scan_bytes'] / mib:.1f} MiB, "
            f"search index {rss['traced_search_index_bytes'] / mib:.1f} MiB, "
            f"server + calls {rss['traced_server_and_calls_bytes'] / mib:.1f} MiB"
        )
        for name, size in rss["traced_by_file"]:
            print(f"    {size / mib:7.1f} MiB  {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="100,1000,10000", help="comma-separated skill counts")
    parser.add_argument("--large", action="store_true", help="add 100,000 skills")
    parser.add_argument("--rounds", type=int, default=300, help="calls of each kind per size")
    parser.add_argument("--trees", type=Path, help="keep generated trees here between runs")
    parser.add_argument("--no-mcp", action="store_true", help="skip the MCP stdio section")
    parser.add_argument("--rss", type=int, default=0, help="peak RSS of serve at N skills")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",")} | ({100_000} if args.large else set()))
    results: dict[str, Any] = {
        "sizes": sizes,
        "rounds": args.rounds,
        "by_size": {},
        "tools_list_chars": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        base = args.trees or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        for count in sizes:
            root = tree(base, count)
            repo = open_repo(root, count)
            if len(repo) != count:
                raise RuntimeError(f"found {len(repo)} skills under {root}, expected {count}")
            row = measure_in_process(repo, count, args.rounds, Path(tmp))
            del repo
            gc.collect()
            if not args.no_mcp:
                row |= measure_mcp_stdio(root, count, args.rounds)
                chars = row.pop("tools/list JSON chars")
                results["tools_list_chars"][str(count)] = chars
            results["by_size"][str(count)] = row
        if args.rss:
            results["rss"] = measure_rss(tree(base, args.rss), args.rss)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print_report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
