"""Start-up of the ``skillshelf`` command: ``--version``, ``--help`` and a command's ``--help``.

Each is a whole process (``python -m skillshelf …``), timed interleaved with the floor every
Python command pays (``python -c pass``) in the same run; medians and the excess over the
floor are printed. The group imports a command's module only when that command runs, so the
first two should cost little more than the floor.

    python bench/startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "floor (python -c pass)": [sys.executable, "-c", "pass"],
    "skillshelf --version": [sys.executable, "-m", "skillshelf", "--version"],
    "skillshelf --help": [sys.executable, "-m", "skillshelf", "--help"],
    "skillshelf list --help": [sys.executable, "-m", "skillshelf", "list", "--help"],
    "skillshelf serve --help": [sys.executable, "-m", "skillshelf", "serve", "--help"],
}


def _once(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs of each (default 20)")
    args = parser.parse_args()
    for command in CASES.values():
        _once(command)  # warm the page cache and the bytecode
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):
        for name, command in CASES.items():
            times[name].append(_once(command))
    floor = statistics.median(times["floor (python -c pass)"])
    print(f"{'command':28} {'median ms':>10} {'over floor ms':>14} {'x floor':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:28} {median * 1000:10.1f} {(median - floor) * 1000:14.1f} {median / floor:8.2f}"
        )


if __name__ == "__main__":
    main()
