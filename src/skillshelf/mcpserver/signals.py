"""Process signals for a running server: recorded by handlers that never raise, acted on in
the event loop.

A handler that raises (``KeyboardInterrupt`` style) lands at whatever bytecode the main
thread is running. Under CPU load that is often inside the event loop's own machinery — a
callback or a task step that catches, stores or logs the exception — and the server keeps
serving (4 of 50 stops hung with three busy loops running). asyncio's own signal handlers
avoid that, but removing one resets the signal to its default action, so a second SIGTERM
during clean-up would kill the process with its workspaces still on disk.

:class:`ServerSignals` installs plain handlers that only record what arrived and wake the
event loop through ``call_soon_threadsafe``; :func:`~skillshelf.mcpserver.run.serve` waits on
them. From ``__enter__`` until ``__exit__`` no stop or re-scan signal interrupts anything:
a stop that arrives before serving starts stops the server as soon as it starts, and one that
arrives after it ended (during clean-up) is recorded and otherwise ignored.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any, Final

__all__ = ["RESCAN_SIGNAL", "STOP_SIGNALS", "ServerSignals"]

logger = logging.getLogger("skillshelf.mcp")

STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)
RESCAN_SIGNAL: Final = signal.SIGHUP

_Handler = Callable[[int, FrameType | None], Any] | int | None


class ServerSignals:
    """SIGTERM and SIGINT stop the server, SIGHUP re-scans its roots.

    Use it in the main thread, around the event loop::

        with ServerSignals() as signals:
            anyio.run(functools.partial(serve, server, signals=signals))
        if signals.stopped_by is not None: ...

    Attributes:
        stopped_by: The first stop signal that arrived (``signal.SIGTERM`` …), None if none.
    """

    def __init__(self, *, rescan: bool = True) -> None:
        self.stopped_by: int | None = None
        self._signals = (*STOP_SIGNALS, RESCAN_SIGNAL) if rescan else STOP_SIGNALS
        self._rescans = 0
        self._previous: dict[int, _Handler] = {}
        self._stop_wakers: list[Callable[[], object]] = []
        self._rescan_wakers: list[Callable[[], object]] = []

    def __enter__(self) -> ServerSignals:
        for sig in self._signals:
            self._previous[sig] = signal.signal(sig, self._record)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _record(self, signum: int, _frame: FrameType | None) -> None:
        # Runs between two bytecodes of the main thread: record and wake, nothing else.
        if signum == RESCAN_SIGNAL:
            self._rescans += 1
            wakers = self._rescan_wakers
        else:
            if self.stopped_by is None:
                self.stopped_by = signum
            wakers = self._stop_wakers
        for wake in tuple(wakers):
            try:
                wake()
            except RuntimeError:  # the loop closed between the wait ending and the handler
                logger.debug("signal %s arrived as the event loop closed", signum)

    async def wait_for_stop(self) -> int:
        """Return the stop signal once one has arrived (at once if one already has)."""
        await self._wait(self._stop_wakers, lambda: self.stopped_by is not None)
        assert self.stopped_by is not None
        return self.stopped_by

    async def wait_for_rescan(self, seen: int) -> int:
        """Wait until more than ``seen`` re-scan signals have arrived; return how many have."""
        await self._wait(self._rescan_wakers, lambda: self._rescans > seen)
        return self._rescans

    async def _wait(self, wakers: list[Callable[[], object]], done: Callable[[], bool]) -> None:
        event = asyncio.Event()
        # Registered before the check, so a signal between the check and the wait still wakes.
        wake = functools.partial(asyncio.get_running_loop().call_soon_threadsafe, event.set)
        wakers.append(wake)
        try:
            while not done():
                await event.wait()
                event.clear()
        finally:
            wakers.remove(wake)
