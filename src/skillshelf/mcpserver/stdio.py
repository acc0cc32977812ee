"""The client's stdin for the stdio transport, read so that a stop never waits on it.

The SDK reads stdin line by line in a worker thread that cancellation waits for, so a server
told to stop while its client is silent would wait for the client's next line. Here each read
is abandoned on cancellation instead: the stop goes ahead, and the thread, still blocked in
``readline``, ends with the process.

As the SDK does, fd 0 itself points at the null device while serving, so a tool handler or a
child process that reads stdin gets end-of-file instead of the client's protocol bytes.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import logging
import os
import sys
from collections.abc import Iterator

import anyio.to_thread

__all__ = ["StdinLines", "claimed_stdin"]

logger = logging.getLogger("skillshelf.mcp")


class StdinLines:
    """The lines of a text stream as an async iterator, each read abandoned on cancel."""

    def __init__(self, stream: io.TextIOBase) -> None:
        self._stream = stream
        self.reading = False

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        self.reading = True
        line = await anyio.to_thread.run_sync(self._stream.readline, abandon_on_cancel=True)
        self.reading = False  # not reached when the read was abandoned
        if not line:
            raise StopAsyncIteration
        return str(line)


@contextlib.contextmanager
def claimed_stdin() -> Iterator[StdinLines | None]:
    """The process's stdin for the protocol alone, or None when it has no file descriptor.

    Reads go through a private duplicate of fd 0; fd 0 is restored on exit. The duplicate is
    closed unless a read was abandoned on it (that thread may still be blocked there).
    """
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        yield None  # a replaced sys.stdin (an embedding, a test runner): the SDK reads it
        return
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
    stream = open(private, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    lines = StdinLines(stream)
    try:
        yield lines
    finally:
        os.dup2(private, fd)
        if not lines.reading:
            os.close(private)
        else:
            logger.debug("stdin: a read was abandoned; its descriptor stays open")
