"""Choosing an executor by name: ``local``, ``bwrap``, ``docker`` or ``auto``.

Kept apart from :mod:`skillshelf.exec.runner` so that the runner never imports the container
executor, which builds on it.
"""

from __future__ import annotations

from skillshelf.errors import UsageError
from skillshelf.exec import runner
from skillshelf.exec.runner import (
    BwrapExecutor,
    Executor,
    ExecutorName,
    LocalExecutor,
    SandboxUnavailableError,
)

__all__ = ["select_executor"]


def select_executor(
    name: ExecutorName, *, image: str | None = None, runtime: str | None = None
) -> tuple[Executor, str | None]:
    """The executor for ``name`` and, for ``auto`` falling back to local, a warning.

    Args:
        name: ``auto`` (bwrap where it works, else local), ``bwrap``, ``local`` or ``docker``.
        image: The image for ``docker`` (default :data:`~skillshelf.exec.container.DEFAULT_IMAGE`).
        runtime: The OCI runtime for ``docker`` (``runsc`` for gVisor); None: the engine's.

    Raises:
        SandboxUnavailableError: ``bwrap`` or ``docker`` was asked for and does not work; the
            message says what to do.
        UsageError: ``image`` or ``runtime`` given for another executor.
    """
    if name != "docker" and (image is not None or runtime is not None):
        raise UsageError("an image and a runtime apply to the docker executor only")
    if name == "local":
        return LocalExecutor(), None
    if name == "docker":
        from skillshelf.exec.container import DEFAULT_IMAGE, DockerExecutor

        executor = DockerExecutor(image=image or DEFAULT_IMAGE, runtime=runtime)
        executor.check()
        return executor, None
    problem = runner.bwrap_available()
    if problem is None:
        return BwrapExecutor(), None
    if name == "bwrap":
        raise SandboxUnavailableError(problem)
    warning = f"{problem}; running with the local executor, which is NOT isolated"
    return LocalExecutor(), warning
