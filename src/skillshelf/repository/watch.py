"""Hot reload: watch a repository's folder roots and refresh it when files change.

Events are debounced (a burst of saves becomes one refresh). Added, changed and removed skills
appear in the next catalog; a skill edited into an invalid state keeps its last good version
(see :meth:`~skillshelf.repository.Repository.refresh`) and the error is in
``repo.skipped``. Archive and URL roots are not watched: their content only changes when they
are fetched again. Needs the ``watch`` extra (watchfiles), imported on first use.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final

from skillshelf.errors import MissingExtraError, SkillshelfError
from skillshelf.skills.roots import is_archive_root

if TYPE_CHECKING:
    from skillshelf.repository import Changes, Repository

__all__ = ["DEFAULT_DEBOUNCE_MS", "Watcher", "watch", "watched_paths"]

logger = logging.getLogger("skillshelf.repository")

# Editors save in bursts (write, rename, chmod); 100 ms merges a burst yet keeps reloads quick.
DEFAULT_DEBOUNCE_MS: Final = 100
# How often the watcher wakes without events, so a stop request is seen promptly.
_IDLE_TIMEOUT_MS: Final = 200

OnChange = Callable[["Changes"], None]


def watched_paths(repo: Repository) -> list[str]:
    """The folders watched for ``repo``: its folder roots that exist (not archives or URLs)."""
    return sorted({d for root, d in repo.root_directories.items() if not is_archive_root(root)})


def watch(
    repo: Repository,
    *,
    stop_event: threading.Event | None = None,
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    ready: threading.Event | None = None,
) -> Iterator[Changes]:
    """Refresh ``repo`` after each debounced batch of file changes and yield what changed.

    Blocks between batches; ends when ``stop_event`` is set. Batches that change no skill
    (an edit to a resource file, say) yield an empty :class:`Changes`.

    Raises:
        MissingExtraError: watchfiles is not installed (the ``watch`` extra).

    Args:
        repo: The repository to keep fresh.
        stop_event: Set it to stop watching.
        debounce_ms: How long a burst of events is collected before refreshing.
        ready: Set once the watcher is installed (events from then on are seen).
    """
    try:
        import watchfiles
    except ImportError as exc:
        raise MissingExtraError("watch", module="watchfiles", feature="Watch mode") from exc

    paths = watched_paths(repo)
    if not paths:
        return
    for events in watchfiles.watch(
        *paths,
        debounce=debounce_ms,
        step=min(50, debounce_ms),
        stop_event=stop_event,
        rust_timeout=_IDLE_TIMEOUT_MS,
        yield_on_timeout=True,
        raise_interrupt=False,
    ):
        if ready is not None:
            ready.set()
        if events:
            yield repo.refresh()


class Watcher:
    """Watch a repository in a background thread (for servers and the chat CLI).

    Use as a context manager, or call :meth:`start` and :meth:`stop`::

        with Watcher(repo, on_change=print):
            serve()

    Args:
        repo: The repository to keep fresh.
        on_change: Called from the watcher thread after each refresh with its
            :class:`Changes` (empty when no skill changed: a resource file was edited, or a
            skill was edited into an invalid state and kept at its last good version).
        debounce_ms: How long a burst of events is collected before refreshing.
    """

    def __init__(
        self,
        repo: Repository,
        *,
        on_change: OnChange | None = None,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    ) -> None:
        self.repo = repo
        self.on_change = on_change
        self.debounce_ms = debounce_ms
        self.error: BaseException | None = None
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, *, timeout_s: float = 5.0) -> Watcher:
        """Start watching; returns once the watcher sees events (or after ``timeout_s``)."""
        self._thread = threading.Thread(target=self._run, name="skillshelf-watch", daemon=True)
        self._thread.start()
        self.ready.wait(timeout_s)
        return self

    def stop(self, *, timeout_s: float = 5.0) -> None:
        """Stop watching and wait for the thread to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            for changes in watch(
                self.repo, stop_event=self._stop, debounce_ms=self.debounce_ms, ready=self.ready
            ):
                if self.on_change is not None:
                    self.on_change(changes)
        except SkillshelfError as exc:  # a missing extra, a root gone: the caller reports it
            self.error = exc
        except Exception as exc:  # broad on purpose: a watcher thread must not die silently
            logger.exception("the skill watcher stopped")
            self.error = exc
        finally:
            self.ready.set()
