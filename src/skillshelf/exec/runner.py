"""The one module that starts processes: the ``local`` and ``bwrap`` executors.

Both executors take a :class:`RunSpec` (an argument vector, never a shell line: a shell runs
only when the argument vector itself names one, inside the sandbox) and return a
:class:`RunOutput`. Both apply the same resource limits, read stdout and stderr incrementally
into bounded buffers (head and tail kept), and kill the whole process tree on timeout:
SIGTERM, then SIGKILL after :data:`KILL_GRACE_S`.

``local`` isolates nothing but the environment (an allowlist), resources (rlimits) and the
process group. ``bwrap`` runs the command in bubblewrap: a read-only minimal root (what it
holds is :mod:`skillshelf.exec.bwrap_profile`), the workspace bound read-write at
:data:`SANDBOX_ROOT`, new namespaces (no network unless asked), and, when skillshelf runs as
root, an unprivileged uid/gid (:data:`SANDBOX_UID`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Final, Literal, Protocol

from skillshelf.errors import SkillshelfError
from skillshelf.exec import bwrap_profile

__all__ = [
    "BwrapExecutor",
    "Executor",
    "ExecutorName",
    "Limits",
    "LocalExecutor",
    "RunOutput",
    "RunSpec",
    "SandboxUnavailableError",
    "bwrap_available",
]

ExecutorName = Literal["auto", "bwrap", "local", "docker"]
DEFAULT_OUTPUT_CAP: Final = 64 * 1024
# A script asked to stop gets this long to flush files and exit before SIGKILL.
KILL_GRACE_S: Final = 2.0
# After the command exits, leftover writers (background children) get this long to hit EOF.
DRAIN_S: Final = 1.0
# How often the supervisor checks the process while no output arrives.
POLL_S: Final = 0.05
# Checking that bwrap works starts one sandbox; bwrap normally answers in well under a second.
PROBE_TIMEOUT_S: Final = 10.0
SANDBOX_ROOT: Final = PurePosixPath("/workspace")
SANDBOX_UID: Final = 65534  # "nobody" on Debian and most distributions
SANDBOX_PATH: Final = bwrap_profile.SANDBOX_PATH
_READ_CHUNK: Final = 64 * 1024
_SETPRIV: Final = "/usr/bin/setpriv"
_DIR_OPEN: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
# O_NONBLOCK: opening a FIFO planted in the workspace must not block the harness.
_FILE_OPEN: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
# Folders deeper than this are not handed to the sandbox user (the walk holds one fd per level).
_CHOWN_MAX_DEPTH: Final = 128


class SandboxUnavailableError(SkillshelfError):
    """The requested executor cannot run on this machine."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits applied to every process the command starts.

    Attributes:
        address_space: Bytes of virtual memory per process (RLIMIT_AS).
        cpu_s: CPU seconds per process (RLIMIT_CPU).
        file_size: Largest file a process may write, bytes (RLIMIT_FSIZE).
        open_files: Open file descriptors per process (RLIMIT_NOFILE).
        processes: Processes of the running user (RLIMIT_NPROC; not enforced for root).
    """

    address_space: int = 1 << 30
    cpu_s: int = 600
    file_size: int = 256 << 20
    open_files: int = 256
    processes: int = 256

    def capped(self) -> list[tuple[int, str, int]]:
        """``(resource, prlimit option, value)`` per limit, each within this process's hard
        limit (which a child inherits)."""
        values = []
        for which, option, value in (
            (resource.RLIMIT_AS, "--as", self.address_space),
            (resource.RLIMIT_CPU, "--cpu", self.cpu_s),
            (resource.RLIMIT_FSIZE, "--fsize", self.file_size),
            (resource.RLIMIT_NOFILE, "--nofile", self.open_files),
            (resource.RLIMIT_NPROC, "--nproc", self.processes),
        ):
            _soft, hard = resource.getrlimit(which)
            values.append(
                (which, option, value if hard == resource.RLIM_INFINITY else min(value, hard))
            )
        return values

    def apply(self) -> None:
        """Set the limits on the calling process (runs in the child before exec)."""
        for which, _option, value in self.capped():
            resource.setrlimit(which, (value, value))

    def prlimit_argv(self, prlimit: str) -> list[str]:
        """The util-linux ``prlimit`` command that sets these limits and then executes the
        rest of the argument vector."""
        return [
            prlimit,
            *(f"{option}={value}:{value}" for _w, option, value in self.capped()),
            "--",
        ]


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One command to run.

    Attributes:
        argv: The argument vector; ``argv[0]`` is looked up on the environment's PATH.
        root: The workspace directory on the host (bound read-write by the sandbox).
        cwd: The working directory on the host; inside ``root``.
        env: Extra environment (the workspace variables, already in the executor's view,
            see :meth:`Executor.visible`, and any passthrough names the policy allows).
        timeout_s: Wall-clock limit.
        stdin: Bytes fed to standard input (none: ``/dev/null``).
        network: Give the command network access (``bwrap`` only shares the host network
            when this is true; ``local`` never restricts it).
        limits: Resource limits.
        output_cap: Bytes kept per stream (head and tail halves).
        ro_paths: Host paths (absolute) a sandbox shows read-only at the same path, on top of
            its own set (``local`` shows everything anyway).
    """

    argv: Sequence[str]
    root: Path
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 60.0
    stdin: bytes | None = None
    network: bool = False
    limits: Limits = Limits()
    output_cap: int = DEFAULT_OUTPUT_CAP
    ro_paths: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What a run produced.

    Attributes:
        exit_code: The command's exit status; ``-N`` when killed by signal N.
        timed_out: The command was killed at its time limit.
        duration_s: Wall-clock time from start to the end of its output.
        stdout: Standard output as text (undecodable bytes replaced); head and tail when cut.
        stderr: Standard error, the same way.
        stdout_truncated: Part of stdout was dropped.
        stderr_truncated: Part of stderr was dropped.
    """

    exit_code: int
    timed_out: bool
    duration_s: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool


class Executor(Protocol):
    """Runs a :class:`RunSpec`; see :class:`LocalExecutor` and :class:`BwrapExecutor`."""

    name: str
    isolated: bool

    def visible(self, spec_root: Path, path: Path) -> str:
        """``path`` (inside ``spec_root``) as the command sees it."""
        ...

    def run(self, spec: RunSpec) -> RunOutput:
        """Run the command to completion or to its time limit."""
        ...


class LocalExecutor:
    """A plain child process: environment allowlist, rlimits, own process group.

    Not isolated: the command sees the host's files and network with the caller's rights.
    """

    name = "local"
    isolated = False

    def visible(self, spec_root: Path, path: Path) -> str:
        """Host paths are what the command sees."""
        return str(path)

    def run(self, spec: RunSpec) -> RunOutput:
        """Run ``spec.argv`` directly (no shell) in ``spec.cwd``."""
        env = {
            "PATH": os.environ.get("PATH", SANDBOX_PATH),
            "HOME": str(spec.root),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "TERM": os.environ.get("TERM", "dumb"),
            **spec.env,
        }
        return _supervise(list(spec.argv), spec, env=env, cwd=spec.cwd)


class BwrapExecutor:
    """bubblewrap: a minimal read-only root, the workspace read-write, new namespaces.

    Args:
        bwrap: The bwrap binary (default: found on PATH).
    """

    name = "bwrap"
    isolated = True

    def __init__(self, bwrap: str | None = None) -> None:
        found = bwrap or shutil.which("bwrap")
        if found is None:
            raise SandboxUnavailableError("bubblewrap (bwrap) is not installed")
        self.bwrap = found

    def visible(self, spec_root: Path, path: Path) -> str:
        """The workspace is mounted at :data:`SANDBOX_ROOT`."""
        return str(SANDBOX_ROOT / path.relative_to(spec_root))

    def run(self, spec: RunSpec) -> RunOutput:
        """Run ``spec.argv`` inside a fresh sandbox.

        Raises:
            FileNotFoundError: A path of ``spec.ro_paths`` does not exist.
        """
        as_root = os.geteuid() == 0
        if as_root:
            _chown_tree(spec.root, SANDBOX_UID)
        shim = bwrap_profile.python_shim()
        read_fd: int | None = None
        if shim is not None:
            # bwrap copies the shim from this pipe into the sandbox; it fits the pipe's buffer.
            read_fd, write_fd = os.pipe()
            os.write(write_fd, shim)
            os.close(write_fd)
        try:
            options = self.command(spec, as_root=as_root, shim_fd=read_fd)
            argv = [*options, "--", *_drop(as_root), *spec.argv]
            # The environment reaches the command through bwrap's own environment, never its
            # argument vector: /proc/PID/cmdline (what `ps` shows) is readable by every user.
            fds = () if read_fd is None else (read_fd,)
            return _supervise(argv, spec, env=self.environment(spec), cwd=spec.root, pass_fds=fds)
        finally:
            if read_fd is not None:
                os.close(read_fd)

    def environment(self, spec: RunSpec) -> dict[str, str]:
        """The command's whole environment (bwrap passes its own environment on)."""
        return {
            "PATH": bwrap_profile.sandbox_path(),
            "HOME": str(SANDBOX_ROOT),
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            **spec.env,
        }

    def command(self, spec: RunSpec, *, as_root: bool, shim_fd: int | None = None) -> list[str]:
        """The bwrap options (everything before ``--``) for ``spec``.

        Raises:
            FileNotFoundError: A path of ``spec.ro_paths`` does not exist.
        """
        args = [self.bwrap]
        args += bwrap_profile.filesystem_args(
            network=spec.network,
            extra=spec.ro_paths,
            shim_fd=shim_fd,
            tmp_size=bwrap_supports(self.bwrap, "--size"),
        )
        args += ["--bind", str(spec.root), str(SANDBOX_ROOT)]
        args += ["--chdir", self.visible(spec.root, spec.cwd)]
        args += _namespaces(as_root=as_root, network=spec.network)
        args += ["--die-with-parent", "--new-session"]
        return args


def _namespaces(*, as_root: bool, network: bool) -> list[str]:
    # As root, a user namespace would map the sandbox user back to root outside; instead the
    # other namespaces are unshared and the command drops to SANDBOX_UID itself (see _drop).
    if as_root:
        spaces = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        return spaces if network else [*spaces, "--unshare-net"]
    return ["--unshare-all", "--share-net"] if network else ["--unshare-all"]


def _drop(as_root: bool) -> list[str]:
    if not as_root:
        return []
    uid = str(SANDBOX_UID)
    return [
        _SETPRIV,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


@functools.cache
def bwrap_supports(bwrap: str, option: str) -> bool:
    """Whether this bwrap binary lists ``option`` in its ``--help``."""
    try:
        shown = subprocess.run(
            [bwrap, "--help"], capture_output=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option.encode() in shown.stdout + shown.stderr


def _chown_tree(root: Path, uid: int) -> None:
    """Give the sandbox user the workspace's own folders and files, nothing else.

    A path is changed only through a descriptor opened without following links, and only
    when it is a folder, or a regular file with one link, on the workspace's device: a hard
    link planted to a file outside (``work/x`` → ``/etc/shadow``) keeps its owner and stays
    read-only to the sandbox; links, FIFOs and devices are never touched.
    """
    fd = os.open(root, _DIR_OPEN)
    try:
        device = os.fstat(fd).st_dev
        _chown_dir(fd, uid, device, depth=0)
    finally:
        os.close(fd)


def _chown_dir(fd: int, uid: int, device: int, *, depth: int) -> None:
    info = os.fstat(fd)
    if info.st_dev != device or depth > _CHOWN_MAX_DEPTH:
        return  # a mount or an absurdly deep tree: left as it is
    if info.st_uid != uid:
        os.fchown(fd, uid, uid)
    with os.scandir(fd) as listing:
        entries = [
            (e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False))
            for e in listing
        ]
    for name, is_dir, is_file in entries:
        if not (is_dir or is_file):
            continue  # links, FIFOs, sockets, devices: never changed
        try:
            child = os.open(name, _DIR_OPEN if is_dir else _FILE_OPEN, dir_fd=fd)
        except OSError:  # swapped for a link or removed meanwhile: not followed, not changed
            continue
        try:
            if is_dir:
                _chown_dir(child, uid, device, depth=depth + 1)
            else:
                _chown_file(child, uid, device)
        finally:
            os.close(child)


def _chown_file(fd: int, uid: int, device: int) -> None:
    info = os.fstat(fd)
    ours = stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_dev == device
    if ours and info.st_uid != uid:
        os.fchown(fd, uid, uid)


@functools.cache
def _prlimit() -> str | None:
    """util-linux ``prlimit`` from the system folders, if present. With it a command starts
    without running Python in the child (``preexec_fn``), so the child is spawned by vfork:
    a fork of a large harness (an MCP server over 100,000 skills) copies its page tables,
    which made every spawn slower as the harness grew."""
    return shutil.which("prlimit", path="/usr/bin:/bin")


@functools.cache
def bwrap_available() -> str | None:
    """None when a bwrap sandbox starts here, else why it does not."""
    try:
        executor = BwrapExecutor()
    except SandboxUnavailableError as exc:
        return str(exc)
    with tempfile.TemporaryDirectory(prefix="skillshelf-probe-") as tmp:
        root = Path(tmp)
        spec = RunSpec(["true"], root=root, cwd=root, timeout_s=PROBE_TIMEOUT_S)
        try:
            result = executor.run(spec)
        except OSError as exc:
            return f"bubblewrap cannot start: {exc}"
    if result.exit_code != 0:
        return f"bubblewrap does not work here: {result.stderr.strip()[:300]}"
    return None


class _Capture:
    """Keeps the first and last ``cap // 2`` bytes of a stream and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > 2 * self.half:
            del self.tail[: len(self.tail) - self.half]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + min(len(self.tail), self.half)

    def text(self) -> str:
        tail = self.tail[-self.half :] if self.truncated else self.tail
        head = self.head.decode("utf-8", "replace")
        if not self.truncated:
            return head + tail.decode("utf-8", "replace")
        omitted = self.total - len(self.head) - len(tail)
        marker = f"\n[... {omitted} bytes omitted ...]\n"
        return head + marker + tail.decode("utf-8", "replace")


def _supervise(
    argv: list[str],
    spec: RunSpec,
    *,
    env: dict[str, str],
    cwd: Path,
    pass_fds: Sequence[int] = (),
) -> RunOutput:
    stdin: IO[bytes] | int = subprocess.DEVNULL
    if spec.stdin is not None:
        stdin = tempfile.TemporaryFile()  # noqa: SIM115 - closed below once the child has it
        stdin.write(spec.stdin)
        stdin.seek(0)
    started = time.monotonic()
    prlimit = _prlimit()
    if prlimit is not None:  # no Python in the child: spawned by vfork, whatever our size
        argv = [*spec.limits.prlimit_argv(prlimit), *argv]
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
            pass_fds=tuple(pass_fds),
            preexec_fn=None if prlimit is not None else spec.limits.apply,
        )
    finally:
        if not isinstance(stdin, int):
            stdin.close()
    out, err = _Capture(spec.output_cap), _Capture(spec.output_cap)
    timed_out = _pump(proc, out, err, deadline=started + spec.timeout_s)
    code = proc.wait()
    return RunOutput(
        exit_code=code,
        timed_out=timed_out,
        duration_s=time.monotonic() - started,
        stdout=out.text(),
        stderr=err.text(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
    )


def _pump(proc: subprocess.Popen[bytes], out: _Capture, err: _Capture, *, deadline: float) -> bool:
    """Read both pipes until EOF; kill the tree at ``deadline`` or once the command exits."""
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, out)
    sel.register(proc.stderr, selectors.EVENT_READ, err)
    timed_out = False
    drain_until: float | None = None
    try:
        while sel.get_map():
            now = time.monotonic()
            if drain_until is None and proc.poll() is not None:
                _kill_group(proc.pid, signal.SIGKILL)  # background children die with it
                drain_until = now + DRAIN_S
            elif drain_until is None and now >= deadline:
                timed_out = True
                _terminate(proc)
                drain_until = time.monotonic() + DRAIN_S
            if drain_until is not None and now >= drain_until:
                break
            for key, _ in sel.select(POLL_S):
                chunk = os.read(key.fd, _READ_CHUNK)
                if chunk:
                    key.data.feed(chunk)
                else:
                    sel.unregister(key.fileobj)
        if proc.poll() is None and not timed_out:
            # Both pipes closed but the command still runs: it keeps its time limit.
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
        if proc.poll() is None:
            _terminate(proc)
        _kill_group(proc.pid, signal.SIGKILL)
    return timed_out


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    _kill_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_S)
    _kill_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
