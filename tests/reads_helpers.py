"""Helpers for the adversarial reading tests: deadlines, a CLI subprocess, swapping threads.

Every call that could hang on a hostile file (a FIFO, a device, a huge file) runs under a
hard deadline, so a regression fails the test instead of hanging CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import skillshelf

T = TypeVar("T")

# Every face answers a hostile skill in well under a second; the margin is for busy CI.
DEADLINE_S = 60.0
REAL_DWELL_S = 0.0002  # how long a Swapper leaves the real file in place between swaps
_SRC = str(Path(skillshelf.__file__).resolve().parents[1])


def within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``'s result, failing the test when it has not returned after ``seconds``.

    The call runs in a daemon thread: one blocked forever (the bug under test) is left
    behind, never waited for.
    """
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the test thread, re-raised there
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise AssertionError(f"still running after {seconds} s: it blocks")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def cli(
    *args: str | os.PathLike[str], timeout: float = DEADLINE_S, cache: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``skillshelf ARGS`` in a subprocess with this package first, under a deadline.

    ``cache`` is the archive cache folder (``SKILLSHELF_CACHE_DIR``), for archive roots.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_SRC, env.get("PYTHONPATH")) if p)
    if cache is not None:
        env["SKILLSHELF_CACHE_DIR"] = str(cache)
    command = [sys.executable, "-c", "from skillshelf.cli import main; main()", *map(str, args)]
    try:
        return subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"skillshelf {args} still running after {timeout} s") from exc


class Swapper:
    """A thread that keeps swapping a path between its real self and a link to a secret.

    Used as a context manager; ``swaps`` counts completed swaps.
    """

    def __init__(self, path: Path, secret: Path) -> None:
        self.path = path
        self.secret = secret
        self.swaps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._is_dir = path.is_dir()

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(DEADLINE_S)

    def _run(self) -> None:
        path, parked = self.path, self.path.with_name(self.path.name + ".parked")
        link = self.path.with_name(self.path.name + ".link")
        while not self._stop.is_set():
            os.rename(path, parked)
            os.symlink(self.secret, link)
            os.rename(link, path)  # now a link to the secret
            os.unlink(path)
            os.rename(parked, path)  # the real file or folder again
            self.swaps += 1
            # Stay real for a moment (the wait lets go of the GIL): on a loaded two-core machine
            # a reader could otherwise meet the link or the gap on every read, and the test
            # could not tell a refused race from a face that always refuses.
            self._stop.wait(REAL_DWELL_S)
