"""The ``docker`` executor: every command in a fresh, locked-down container.

The same contract as :class:`~skillshelf.exec.runner.BwrapExecutor`: the workspace at
:data:`~skillshelf.exec.runner.SANDBOX_ROOT`, no network unless asked, a read-only root with
an empty ``/tmp``, an unprivileged user, the resource limits of
:class:`~skillshelf.exec.runner.Limits`, output captured into the runner's bounded buffers,
and at the time limit SIGTERM, then SIGKILL after
:data:`~skillshelf.exec.runner.KILL_GRACE_S` — to the whole container, so background children
die with it. The container is removed afterwards.

It talks to the Docker Engine API over the engine's socket (``DOCKER_HOST``, default
``unix:///var/run/docker.sock``) through the ``docker`` SDK (the ``docker`` extra), imported
only when this executor is used. The SDK starts no process, so
:mod:`skillshelf.exec.runner` stays the one module that does. The container is described by
:func:`container_config`, a plain Engine API ``/containers/create`` body.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from skillshelf.errors import clip, install_hint
from skillshelf.exec.runner import (
    DRAIN_S,
    KILL_GRACE_S,
    SANDBOX_PATH,
    SANDBOX_ROOT,
    SANDBOX_UID,
    RunOutput,
    RunSpec,
    SandboxUnavailableError,
    _Capture,
    _chown_tree,
)

if TYPE_CHECKING:
    from docker import DockerClient

__all__ = [
    "DEFAULT_IMAGE",
    "DockerExecutor",
    "container_config",
    "docker_available",
]

logger = logging.getLogger(__name__)

# An official image with python3 on Debian; any image with the runtimes your skills need works.
DEFAULT_IMAGE: Final = "python:3.12-slim-bookworm"
# Every Engine API call but the wait for the command; a local engine answers in milliseconds,
# creating a container on a loaded machine can take seconds.
API_TIMEOUT_S: Final = 60.0
# /tmp is a tmpfs; its pages count against the container's memory limit.
TMPFS_OPTIONS: Final = "rw,nosuid,nodev,size=64m,mode=1777"
# Marks the containers this executor creates (find leftovers: docker ps -af label=…).
LABEL: Final = "io.skillshelf.exec"
# Runtimes whose container cgroup holds the runtime's own kernel threads, not the command's
# processes: a pids limit there starves gVisor's kernel (the sandbox dies, exit status 2), and
# gVisor applies RLIMIT_NPROC to the command's processes itself.
USERSPACE_KERNELS: Final = frozenset({"runsc"})
_DOCS: Final = "see docs/executors.md"
# A wait that fails this much before its deadline failed for another reason than the time.
_EARLY_S: Final = 0.05
_DEFAULT_SOCKET: Final = "unix:///var/run/docker.sock"


def container_config(
    spec: RunSpec,
    *,
    image: str,
    user: str,
    runtime: str | None = None,
    cpus: float = 1.0,
) -> dict[str, Any]:
    """The Engine API ``POST /containers/create`` body that runs ``spec`` in ``image``.

    Args:
        spec: The command, its workspace and its limits.
        image: The image (must contain the programs the command starts).
        user: ``uid:gid`` the command runs as.
        runtime: An OCI runtime the engine knows (``runsc`` for gVisor); None: the default.
        cpus: CPUs the container may use at once.
    """
    limits = spec.limits
    ulimits = [
        ("cpu", limits.cpu_s),
        ("fsize", limits.file_size),
        ("nofile", limits.open_files),
        ("nproc", limits.processes),
    ]
    host: dict[str, Any] = {
        "Mounts": [
            {"Type": "bind", "Source": str(spec.root), "Target": str(SANDBOX_ROOT)},
            # Paths the operator's policy adds (ExecPolicy.extra_ro_paths), read-only at the
            # same path, as under bwrap.
            *(
                {"Type": "bind", "Source": path, "Target": path, "ReadOnly": True}
                for path in spec.ro_paths
            ),
        ],
        "NetworkMode": "default" if spec.network else "none",
        "ReadonlyRootfs": True,
        "Tmpfs": {"/tmp": TMPFS_OPTIONS},
        "CapDrop": ["ALL"],
        "SecurityOpt": ["no-new-privileges"],
        "IpcMode": "private",
        "Init": True,  # a real PID 1: zombies reaped, SIGTERM passed on to the command
        "Memory": limits.address_space,
        "MemorySwap": limits.address_space,  # the same figure: no swap on top
        "NanoCpus": int(cpus * 1e9),
        "Ulimits": [{"Name": n, "Soft": v, "Hard": v} for n, v in ulimits],
        # The output reaches skillshelf through the attach stream, capped; no log on the
        # engine's disk (100 MB printed would otherwise be 100 MB of JSON there).
        "LogConfig": {"Type": "none", "Config": {}},
    }
    if runtime is not None:
        host["Runtime"] = runtime
    if runtime not in USERSPACE_KERNELS:
        host["PidsLimit"] = limits.processes
    env = {"PATH": SANDBOX_PATH, "HOME": str(SANDBOX_ROOT), "LANG": "C.UTF-8", "TERM": "dumb"}
    env |= spec.env
    with_stdin = spec.stdin is not None
    return {
        "Image": image,
        "Entrypoint": [""],  # the argument vector as given, whatever the image declares
        "Cmd": list(spec.argv),
        "User": user,
        "WorkingDir": str(SANDBOX_ROOT / spec.cwd.relative_to(spec.root)),
        "Env": [f"{k}={v}" for k, v in env.items()],
        "AttachStdin": with_stdin,
        "OpenStdin": with_stdin,
        "StdinOnce": with_stdin,
        "AttachStdout": True,
        "AttachStderr": True,
        "Tty": False,
        "Labels": {LABEL: "1"},
        "HostConfig": host,
    }


class DockerExecutor:
    """Runs each command in a new container of ``image`` on a Docker engine.

    Args:
        image: The image to run (default :data:`DEFAULT_IMAGE`); it must be present on the
            engine (nothing is pulled).
        runtime: The engine's OCI runtime to use, e.g. ``runsc`` (gVisor); None: its default.
        cpus: CPUs a command may use at once.
        base_url: The engine's address; None: ``DOCKER_HOST`` or the default socket.

    Raises:
        SandboxUnavailableError: The SDK is not installed or the engine does not answer.
    """

    name = "docker"
    isolated = True

    def __init__(
        self,
        *,
        image: str = DEFAULT_IMAGE,
        runtime: str | None = None,
        cpus: float = 1.0,
        base_url: str | None = None,
    ) -> None:
        self.image = image
        self.runtime = runtime
        self.cpus = cpus
        self.client = _connect(base_url)

    def close(self) -> None:
        """Close the connections to the engine (the executor is not used afterwards)."""
        self.client.close()

    def visible(self, spec_root: Path, path: Path) -> str:
        """The workspace is mounted at :data:`~skillshelf.exec.runner.SANDBOX_ROOT`."""
        return str(SANDBOX_ROOT / path.relative_to(spec_root))

    def check(self) -> None:
        """Confirm the image is present and the runtime known, without starting anything.

        Raises:
            SandboxUnavailableError: Either is missing; the message says what to do.
        """
        from docker.errors import DockerException, ImageNotFound

        try:
            self.client.images.get(self.image)
        except ImageNotFound:
            raise _no_image(self.image) from None
        except DockerException as exc:
            raise SandboxUnavailableError(f"the Docker engine failed: {clip(str(exc))}") from exc
        if self.runtime is not None:
            runtimes = self.client.info().get("Runtimes") or {}
            if self.runtime not in runtimes:
                known = ", ".join(sorted(runtimes)) or "none"
                raise SandboxUnavailableError(
                    f"the Docker engine has no runtime {clip(self.runtime)!r} (it has: {known});"
                    f" register it in the engine's daemon.json ({_DOCS})"
                )

    def run(self, spec: RunSpec) -> RunOutput:
        """Run ``spec.argv`` in a fresh container, then remove the container.

        Raises:
            SandboxUnavailableError: The engine refused the container (image or runtime
                missing, engine gone).
        """
        config = container_config(
            spec, image=self.image, user=_user(spec.root), runtime=self.runtime, cpus=self.cpus
        )
        from docker.errors import DockerException
        from requests.exceptions import RequestException

        container_id = self._create(config)
        try:
            return self._supervise(container_id, spec)
        except (DockerException, RequestException) as exc:
            raise SandboxUnavailableError(
                f"the Docker engine failed during the run: {clip(str(exc))}"
            ) from exc
        finally:
            self._remove(container_id)

    def _create(self, config: dict[str, Any]) -> str:
        from docker.errors import APIError, DockerException, ImageNotFound

        try:
            created = self.client.api.create_container_from_config(config)  # type: ignore[no-untyped-call]
        except ImageNotFound:
            raise _no_image(self.image) from None
        except APIError as exc:
            raise SandboxUnavailableError(
                f"the Docker engine refused the container: {clip(exc.explanation or str(exc))}"
            ) from exc
        except DockerException as exc:
            raise SandboxUnavailableError(f"the Docker engine failed: {clip(str(exc))}") from exc
        return str(created["Id"])

    def _supervise(self, container_id: str, spec: RunSpec) -> RunOutput:
        from docker.errors import APIError

        api = self.client.api
        params = {"stdin": int(spec.stdin is not None), "stdout": 1, "stderr": 1, "stream": 1}
        stream = api.attach_socket(container_id, params=params)
        out, err = _Capture(spec.output_cap), _Capture(spec.output_cap)
        reader = threading.Thread(target=_read_frames, args=(stream, out, err), daemon=True)
        started = time.monotonic()
        try:
            try:
                api.start(container_id)
            except APIError as exc:
                raise SandboxUnavailableError(
                    f"the container did not start: {clip(exc.explanation or str(exc))}"
                ) from exc
            reader.start()
            if spec.stdin is not None:
                _feed_stdin(stream, spec.stdin)
            status = self._wait(container_id, started + spec.timeout_s)
            timed_out = status is None
            if status is None:
                # SIGTERM to the container's init, SIGKILL to everything after the grace.
                api.stop(container_id, timeout=max(int(KILL_GRACE_S), 1))
                status = self._wait(container_id, time.monotonic() + API_TIMEOUT_S)
            reader.join(DRAIN_S)
        finally:
            _close(stream)  # ends a reader still blocked on it
            if reader.is_alive():
                reader.join(DRAIN_S)
        if self._oom_killed(container_id):
            limit = spec.limits.address_space
            err.feed(f"\n[killed: out of memory (the container may use {limit} bytes)]\n".encode())
        code = -1 if status is None else status
        if timed_out and code > 128:
            code = 128 - code  # killed by signal N: -N, as the other executors report it
        return RunOutput(
            exit_code=code,
            timed_out=timed_out,
            duration_s=time.monotonic() - started,
            stdout=out.text(),
            stderr=err.text(),
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
        )

    def _wait(self, container_id: str, deadline: float) -> int | None:
        """The container's exit status, or None when it still runs at ``deadline``."""
        from requests.exceptions import ConnectionError as RequestsConnectionError
        from requests.exceptions import ReadTimeout

        remaining = max(deadline - time.monotonic(), 0.01)
        try:
            # requests takes fractions of a second; the SDK's annotation says int.
            result = self.client.api.wait(container_id, timeout=remaining)  # type: ignore[arg-type]
        except (ReadTimeout, RequestsConnectionError):
            # The SDK reports its read timeout as a connection error: only one that comes
            # before the deadline means the engine went away.
            if time.monotonic() + _EARLY_S < deadline:
                raise
            return None
        return int(result.get("StatusCode", -1))

    def _oom_killed(self, container_id: str) -> bool:
        from docker.errors import DockerException

        try:
            state = self.client.api.inspect_container(container_id).get("State") or {}
        except DockerException:
            logger.warning("could not inspect container %s", container_id[:12], exc_info=True)
            return False
        return bool(state.get("OOMKilled"))

    def _remove(self, container_id: str) -> None:
        from docker.errors import DockerException, NotFound

        try:
            self.client.api.remove_container(container_id, force=True)
        except NotFound:
            pass
        except DockerException:
            logger.warning("could not remove container %s", container_id[:12], exc_info=True)


def docker_available(
    *, image: str = DEFAULT_IMAGE, runtime: str | None = None, base_url: str | None = None
) -> str | None:
    """None when the docker executor can run ``image`` here, else why it cannot."""
    try:
        executor = DockerExecutor(image=image, runtime=runtime, base_url=base_url)
    except SandboxUnavailableError as exc:
        return str(exc)
    try:
        executor.check()
    except SandboxUnavailableError as exc:
        return str(exc)
    finally:
        executor.close()
    return None


def _connect(base_url: str | None) -> DockerClient:
    try:
        import docker
    except ImportError:
        raise SandboxUnavailableError(
            f"the docker executor needs the Docker SDK: {install_hint('docker')}"
        ) from None
    where = base_url or os.environ.get("DOCKER_HOST") or _DEFAULT_SOCKET
    if where.startswith("unix://") and not os.path.exists(where.removeprefix("unix://")):
        # Checked first: the SDK leaks the socket of a connection that found nobody.
        raise SandboxUnavailableError(
            f"no Docker engine at {clip(where)} (no such socket); start dockerd or point "
            f"DOCKER_HOST at it ({_DOCS})"
        )
    client = None
    try:
        if base_url is not None:
            client = docker.DockerClient(base_url=base_url, timeout=int(API_TIMEOUT_S))
        else:
            client = docker.from_env(timeout=int(API_TIMEOUT_S))
        client.ping()
    except docker.errors.DockerException as exc:
        if client is not None:
            client.close()
        raise SandboxUnavailableError(
            f"cannot reach a Docker engine at {clip(where)}: {clip(str(exc))}; start dockerd "
            f"or point DOCKER_HOST at it ({_DOCS})"
        ) from exc
    return client


def _no_image(image: str) -> SandboxUnavailableError:
    return SandboxUnavailableError(
        f"the Docker image {clip(image)!r} is not on the engine: `docker pull {clip(image)}`, or "
        f"build one with the runtimes your skills need and use that image ({_DOCS})"
    )


def _user(root: Path) -> str:
    """``uid:gid`` for the command: the workspace owner's, never root's.

    A root-owned workspace is handed to :data:`~skillshelf.exec.runner.SANDBOX_UID` first,
    the way the bwrap executor does it as root.
    """
    info = root.stat()
    if info.st_uid == 0:
        _chown_tree(root, SANDBOX_UID)
        return f"{SANDBOX_UID}:{SANDBOX_UID}"
    return f"{info.st_uid}:{info.st_gid}"


def _read_frames(stream: Any, out: _Capture, err: _Capture) -> None:
    """Feed the attach stream's stdout and stderr frames into their captures until EOF."""
    from docker.utils.socket import STDERR, SocketError, frames_iter

    try:
        for kind, chunk in frames_iter(stream, tty=False):  # type: ignore[no-untyped-call]
            (err if kind == STDERR else out).feed(chunk)
    except (OSError, ValueError, SocketError):
        # The stream was closed under the reader (time limit, drain over): the output so far
        # is what the run produced.
        logger.debug("attach stream closed while reading", exc_info=True)


def _feed_stdin(stream: Any, data: bytes) -> None:
    """Write ``data`` to the command's stdin from a thread, then close it (EOF)."""
    raw = _raw_socket(stream)

    def feed() -> None:
        try:
            raw.sendall(data)
            raw.shutdown(socket.SHUT_WR)
        except OSError:
            logger.debug("stdin not fully delivered (the command exited)", exc_info=True)

    threading.Thread(target=feed, daemon=True).start()


def _raw_socket(stream: Any) -> socket.socket:
    raw = getattr(stream, "_sock", stream)
    if not isinstance(raw, socket.socket):
        raise SandboxUnavailableError("this Docker connection cannot carry stdin")
    return raw


def _close(stream: Any) -> None:
    """Close the attach stream: the socket is shut down first, which wakes a blocked reader."""
    raw = getattr(stream, "_sock", None)
    response = getattr(stream, "_response", None)
    with contextlib.suppress(OSError):
        if isinstance(raw, socket.socket):
            raw.shutdown(socket.SHUT_RDWR)
    for closable in (response, stream, raw):
        if closable is not None:
            with contextlib.suppress(OSError, ValueError):
                closable.close()
