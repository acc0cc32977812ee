"""Benchmark workspace execution.

Measures:

* per-call wall time of ``true`` through the bwrap and local executors against a bare
  ``subprocess.run(["true"])`` (the difference is the executor's overhead);
* staging a 1 MB / 200-file skill into a fresh workspace, and re-staging it unchanged
  (the content digest only).

bwrap is skipped (and said so) where it does not work.

Usage: ``python bench/exec.py [--calls 100] [--json]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from skillshelf.exec.runner import (  # noqa: E402
    BwrapExecutor,
    Executor,
    LocalExecutor,
    RunSpec,
    bwrap_available,
)
from skillshelf.exec.workspace import Workspace  # noqa: E402
from skillshelf.repository import Repository  # noqa: E402
from skillshelf.testing import make_skill  # noqa: E402


def _median_ms(fn: Callable[[], object], calls: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def _executor_ms(executor: Executor, root: Path, calls: int) -> float:
    spec = RunSpec(["true"], root=root, cwd=root, timeout_s=30)

    def once() -> None:
        if executor.run(spec).exit_code != 0:
            raise SystemExit(f"{executor.name}: `true` failed")

    return _median_ms(once, calls)


def _staging_ms(base: Path) -> tuple[float, float]:
    files = {f"scripts/f{i:03}.txt": "x" * 5000 for i in range(199)}
    make_skill(base / "skills", "big", files=files)
    skill = Repository([base / "skills"], cache_dir=False).find("big")
    assert skill is not None
    workspace = Workspace(base / "ws")
    started = time.perf_counter()
    workspace.stage(skill)
    first = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    workspace.stage(skill)
    again = (time.perf_counter() - started) * 1000
    return first, again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "root")
        root.mkdir()
        figures["bare_subprocess_ms"] = _median_ms(
            lambda: subprocess.run(["true"], check=True), args.calls
        )
        figures["local_ms"] = _executor_ms(LocalExecutor(), root, args.calls)
        problem = bwrap_available()
        figures["bwrap_ms"] = None if problem else _executor_ms(BwrapExecutor(), root, args.calls)
        figures["stage_first_ms"], figures["stage_unchanged_ms"] = _staging_ms(Path(tmp))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    bare = figures["bare_subprocess_ms"]
    print(f"bare subprocess.run(['true']): {bare:7.2f} ms (median of {args.calls})")
    print(
        f"local executor `true`:         {figures['local_ms']:7.2f} ms "
        f"(+{figures['local_ms'] - bare:.2f} ms)"
    )
    if figures["bwrap_ms"] is None:
        print(f"bwrap executor: skipped ({problem})")
    else:
        print(
            f"bwrap executor `true`:         {figures['bwrap_ms']:7.2f} ms "
            f"(+{figures['bwrap_ms'] - bare:.2f} ms)"
        )
    print(
        f"stage 1 MB / 200-file skill:   {figures['stage_first_ms']:7.2f} ms first, "
        f"{figures['stage_unchanged_ms']:.2f} ms unchanged (digest only)"
    )


if __name__ == "__main__":
    main()
