"""The host side of the sandbox: ``Kernel`` starts the child process, drives the protocol, enforces the caps on
what crosses the boundary, and cleans up.

Runs in the caller's process (possibly a Ray worker). The kernel is started with ``python -m
env_core.sandbox.child`` (through the namespace launcher of ``isolation`` where the level is ``namespaces``), never
with multiprocessing: the caller's ``__main__`` must not be re-imported.

What the host owns, so that nothing the kernel runs can forge it: the kernel's output is read by the host from an
anonymous file it created (the kernel's fds 1 and 2), the tools' notes are written there by the host, and tool
calls are executed and recorded by the host (``call_tool``). A message from the kernel can only end a cell or ask
for a tool call, which is what the code could do anyway.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import glob
import json
import os
import secrets
import select
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from pydantic import Field

from undertow.env_core import errors
from undertow.env_core.model import Strict
from undertow.env_core.sandbox import isolation, seccomp
from undertow.env_core.sandbox.protocol import MAX_DEPTH, CodeResult, FunctionStub, ToolReply, nesting_depth, stub_json

# undertow/env_core/sandbox/host.py -> the directory that holds the undertow package (site-packages, or the
# repository in an editable install), for the child's PYTHONPATH; hidden from the namespaced kernel. abspath, not
# realpath: in the repository undertow/env_core is a symlink, and the package must be found through undertow/.
_PROJECT_ROOT = str(Path(os.path.abspath(__file__)).parents[3])
_PACKAGE_DIR = str(Path(os.path.abspath(__file__)).parent)
CHILD_MODULE = "undertow.env_core.sandbox.child"
LAUNCHER_MODULE = "undertow.env_core.sandbox.isolation"
WORKDIR_PREFIX = "undertow-kernel-"

START_TIMEOUT_S = 20.0  # generous: a loaded machine can take seconds to start an interpreter
FILE_SIZE_LIMIT_MB = 16
OPEN_FILES_LIMIT = 256
MEMORY_CHECK_S = 0.1  # how often the memory of all the kernel's processes is summed while a cell runs

Level = Literal["rlimits", "namespaces"]


class SandboxError(errors.SandboxError):
    """The kernel could not be started, or the kernel was used after ``close()``. Infrastructure, not the agent."""


class SandboxUnavailable(errors.ConfigError):
    """This machine cannot give the isolation the config requires: the same on every attempt, so a config error."""


class SandboxConfig(Strict):
    """The boundary around model-written code (CodeAct): the isolation it needs and the caps on what crosses it.
    The kernel's step timeout and address space are ``agent.step_timeout_s`` and ``agent.memory_mb``."""

    require: Level = Field(
        default="namespaces",
        description="the weakest isolation CodeAct may run under: namespaces (Linux user/mount/PID/network/IPC "
        "namespaces, a read-only view of the file system) or rlimits (resource limits only: not a security "
        "boundary); a machine that cannot give it refuses to run CodeAct",
    )
    processes: int = Field(default=32, ge=1, le=4096, description="processes and threads the kernel may run at once")
    disk_mb: int = Field(default=64, ge=1, le=65_536, description="size of the kernel's writable /tmp (namespaces)")
    calls_per_cell: int = Field(default=256, ge=1, le=1_000_000, description="tool calls one <execute> may make")
    calls_per_episode: int = Field(default=1024, ge=1, le=10_000_000, description="tool calls one episode may make")
    message_kb: int = Field(
        default=1024,
        ge=1,
        le=1_048_576,
        description="largest message from the kernel: a tool call's arguments or the solution, in KiB",
    )


# -- which isolation this machine gives


@dataclass(frozen=True)
class Isolation:
    """The strongest isolation this process can give a kernel, and why not more."""

    level: Level
    detail: str

    def satisfies(self, required: Level) -> bool:
        return isolation.LEVELS.index(self.level) >= isolation.LEVELS.index(required)


@functools.cache
def available_isolation() -> Isolation:
    """Probe once per process: start a kernel in namespaces and run a cell there. Cached."""
    if not sys.platform.startswith("linux"):
        return Isolation("rlimits", f"Linux namespaces are not available on {sys.platform}")
    try:
        with Kernel([], _no_tools, step_timeout_s=START_TIMEOUT_S, level="namespaces") as kernel:
            result = kernel.run("import os\nprint(os.getuid(), os.getpid())")
    except (SandboxError, OSError) as exc:
        text = str(exc)
        why = text.split(isolation.SETUP_FAILED, 1)[1] if isolation.SETUP_FAILED in text else text
        return Isolation("rlimits", f"namespaces unavailable ({why.strip()})")
    if result.error is not None or result.output.split() != [str(isolation.SANDBOX_UID), "1"]:
        return Isolation("rlimits", f"namespaces unavailable: the probe kernel answered {result.output!r}")
    uid, _ = isolation.outside_ids()
    return Isolation(
        "namespaces", f"user, mount, PID, network, IPC and UTS namespaces; {seccomp.describe()}; uid {uid} outside"
    )


def check_isolation(required: Level) -> Isolation:
    """The isolation in force, or ``SandboxUnavailable`` when it is weaker than ``required``."""
    found = available_isolation()
    if not found.satisfies(required):
        raise SandboxUnavailable(
            f"CodeAct needs sandbox isolation '{required}' but this machine gives '{found.level}' ({found.detail})",
            field="sandbox.require",
            hint="run workers where unprivileged user namespaces are allowed (e.g. sysctl "
            "kernel.unprivileged_userns_clone=1, a container with --security-opt seccomp=unconfined), or accept "
            "weaker isolation with sandbox.require: rlimits (see SECURITY.md)",
        )
    return found


def _no_tools(name: str, arguments: dict[str, Any]) -> ToolReply:
    return ToolReply(ok=False, error="no tools")


# -- the kernel


class _Timeout(Exception):
    pass


class _Died(Exception):
    pass


class _Violation(Exception):
    """``stray``: the channel is out of step with the cell (a message for another cell, or outside any request), so
    what the output file holds may be another cell's output."""

    def __init__(self, what: str, *, stray: bool = False):
        super().__init__(what)
        self.stray = stray


@dataclass
class _Process:
    """One started kernel: the process the host started (the launcher, or the kernel itself), the kernel's pidfd
    (namespaces: killing it ends the whole PID namespace) and its folder (rlimits only)."""

    proc: subprocess.Popen[bytes]
    kernel_pid: int
    pidfd: int | None
    workdir: str | None


def _kill_and_clean(process: _Process) -> int | None:
    """Kill the kernel and everything it started, reap, close, delete its folder. Idempotent.

    With namespaces, SIGKILL to the namespace's PID 1 makes the kernel kill every process in it, including any
    that left the process group; the pidfd makes sure the signal reaches that process and no later one with its
    PID. Without namespaces, the process group is killed (a process that called setsid escapes it)."""
    proc = process.proc
    if process.pidfd is not None:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(process.pidfd, signal.SIGKILL)
            select.select([process.pidfd], [], [], 5.0)  # readable once it (and so its whole namespace) is gone
        with contextlib.suppress(OSError):
            os.close(process.pidfd)
        process.pidfd = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5.0)  # the launcher reaps the kernel, then exits with its status
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # before reaping: until then the group id cannot be reused
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    try:
        returncode: int | None = proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:  # unkillable (D state): Popen reaps it later; never hang here
        returncode = None
    if process.workdir is not None:
        shutil.rmtree(process.workdir, ignore_errors=True)
    return returncode


def _kernel_env(home: str, pythonpath: str) -> dict[str, str]:
    """The kernel's whole environment: constants and its folders. Nothing of the worker's is inherited (no
    credentials, no tokens)."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": pythonpath,
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",  # set and dict-of-set orders the agent prints are the same in every run
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        # Numerical libraries otherwise start a thread pool per core, each reserving memory under RLIMIT_AS.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


@functools.cache
def _view_spec() -> dict[str, Any]:
    """What the namespace launcher shows and hides (see ``isolation.build_view``)."""
    # The base interpreter, not the virtual environment's: a venv made with --copies has its own binary, in a
    # folder the view hides
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    base = os.path.realpath(sys.base_prefix)
    packages = {sysconfig.get_paths(vars={"base": base, "platbase": base})[k] for k in ("purelib", "platlib")}
    packages.update(site.getsitepackages([base]))
    hidden = sorted({*packages, _PROJECT_ROOT, os.path.realpath(sys.prefix)})
    return {
        "python": python,
        "python_paths": sorted({base, os.path.dirname(os.path.dirname(python))}),
        "hidden_paths": hidden,
        "package_dir": _PACKAGE_DIR,
    }


_swept = False


def _sweep_stale_workdirs() -> None:
    """Delete kernel folders left by processes that died (they are named after their worker's PID)."""
    global _swept
    if _swept:
        return
    _swept = True
    for path in glob.glob(os.path.join(tempfile.gettempdir(), WORKDIR_PREFIX + "*-*")):
        owner = os.path.basename(path)[len(WORKDIR_PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or int(owner) == os.getpid():
            continue
        try:
            os.kill(int(owner), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except PermissionError:  # alive, someone else's
            pass


def _tree_usage(pid: int) -> tuple[int, float]:
    """Resident bytes and CPU seconds of ``pid`` and all its descendants (children reaped by them included in
    the CPU time); what /proc cannot tell counts as 0."""
    page, tick = os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_CLK_TCK")
    rss, cpu, stack, seen = 0, 0.0, [pid], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
            # fields[0] is the state (field 3 of proc(5)): utime..cstime are fields 14-17, rss field 24
            cpu += sum(int(fields[i]) for i in range(11, 15)) / tick
            rss += int(fields[21]) * page
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return rss, cpu


class Kernel:
    """A persistent Python kernel in a child process, with the tools as functions. Not thread-safe.

    ``call_tool(name, arguments)`` runs in the caller's process whenever the code calls a tool; an exception from
    it kills the kernel and propagates out of ``run`` (an infrastructure error, not the agent's). ``run`` never
    raises for anything the code does: errors, timeouts and crashes come back in the ``CodeResult``; after a
    timeout or a crash the next ``run`` starts a fresh kernel (variables lost). A cap or a limit hit comes back as
    ``CodeResult.violation`` (``get`` raises ``SandboxViolation``). Use as a context manager or call ``close()``;
    a kernel left open is killed when it is garbage-collected or at interpreter exit.

    ``level``: the isolation to use; None takes the strongest this machine gives, refused
    (``SandboxUnavailable``) when it is weaker than ``sandbox.require``.
    """

    def __init__(
        self,
        functions: Sequence[FunctionStub],
        call_tool: Callable[[str, dict[str, Any]], ToolReply],
        *,
        step_timeout_s: float = 10.0,
        memory_mb: int = 1024,
        max_output: int = 20_000,
        sandbox: SandboxConfig | None = None,
        level: Level | None = None,
    ):
        self.functions: list[FunctionStub] = list(functions)
        self.call_tool = call_tool
        self.step_timeout_s = step_timeout_s
        self.memory_mb = memory_mb
        self.max_output = max_output
        self.sandbox = sandbox or SandboxConfig()
        self.level: Level = level or check_isolation(self.sandbox.require).level
        # A ceiling on the kernel's total CPU time: a backstop for a kernel whose parent died mid-loop.
        self.cpu_limit_s = int(max(300.0, 60.0 * step_timeout_s))
        self.calls = 0  # tool calls this episode, across restarts
        self._cell = ""  # the token of the cell running or last run, which its done message must carry
        self._memory_checked = -MEMORY_CHECK_S  # when the kernel's processes were last measured (monotonic)
        self._process: _Process | None = None
        self._finalizer: weakref.finalize[[_Process], Kernel] | None = None
        self._buffer = bytearray()
        self._closed = False
        # The kernel's fds 1 and 2, for its whole life (restarts too): the host reads and empties it each cell
        self._capture = _capture_file()
        self._release_capture = weakref.finalize(self, os.close, self._capture)
        self._start()

    # -- public API

    @property
    def pid(self) -> int | None:
        """The host PID of the running kernel process, or None when none runs (closed, or waiting for a restart)."""
        return self._process.kernel_pid if self._process is not None else None

    def run(self, code: str) -> CodeResult:
        """Run one cell of code; variables persist between calls. Starts a fresh kernel if the last one is gone."""
        self._check_open()
        if self._process is None:
            self._start()
        started = time.perf_counter()
        deadline = time.monotonic() + self.step_timeout_s
        calls = 0

        def result(
            error: str | None, *, timed_out: bool = False, violation: str | None = None, printed: int = 0
        ) -> CodeResult:
            return CodeResult(self._take_output(printed), error, timed_out, _ms_since(started), violation)

        try:
            # What the kernel left running between cells counts too; and nothing may be waiting on the channel (a
            # message sent outside a request is forged: answering it would shift every later cell's result)
            self._check_usage()
            self._check_channel_is_quiet()
            # Random, so that code cannot end a later cell by guessing its number
            self._cell = secrets.token_hex(8)
            self._send({"op": "run", "code": code, "cell": self._cell}, deadline)
            while True:
                message = self._receive(deadline, watch_memory=True)
                if message.get("op") == "call":
                    if time.monotonic() >= deadline:  # tool time counts: no call starts after the deadline
                        raise _Timeout
                    calls += 1
                    self.calls += 1
                    if calls > self.sandbox.calls_per_cell:
                        raise _Violation(
                            f"tool calls: more than {self.sandbox.calls_per_cell} in one cell (sandbox.calls_per_cell)"
                        )
                    if self.calls > self.sandbox.calls_per_episode:
                        raise _Violation(
                            f"tool calls: more than {self.sandbox.calls_per_episode} in one episode "
                            "(sandbox.calls_per_episode)"
                        )
                    self._serve_call(message, deadline)
                elif message.get("op") == "done":
                    if message.get("cell") != self._cell:  # a guess, or the real end of a cell a forged one cut short
                        raise _Violation(
                            "protocol: the kernel ended a cell it was not running (a forged message)", stray=True
                        )
                    error = message.get("error")
                    printed = message.get("printed")
                    return result(
                        error if isinstance(error, str) else None,
                        printed=printed if isinstance(printed, int) else 0,
                    )
                else:
                    raise _Violation(f"protocol: an unexpected message from the kernel ({str(message.get('op'))[:40]})")
        except _Timeout:
            error = (
                f"TimeoutError: the code ran longer than {self.step_timeout_s:g} s and was stopped. The kernel was "
                "restarted: all variables were lost; define them again."
            )
            self._stop()
            return result(error, timed_out=True)
        except _Violation as exc:
            self._stop()
            if exc.stray:  # what is in the output file may be the forging cell's: never show it as this one's
                os.ftruncate(self._capture, 0)
            return result(f"SandboxViolation: {exc}", violation=str(exc))
        except _Died:
            if self._process is not None:  # let it report how the kernel ended before killing what is left
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.proc.wait(timeout=1.0)
            how = _describe_exit(self._stop())
            if "CPU time limit" in how:
                violation = f"CPU time: the kernel used its {self.cpu_limit_s} CPU seconds"
                return result(f"SandboxViolation: {violation}", violation=violation)
            error = (
                f"KernelDied: the Python kernel died while running this code ({how}). It was restarted: all "
                "variables were lost; define them again."
            )
            return result(error)
        except BaseException:  # call_tool failed, or the caller was interrupted: the kernel is mid-cell, drop it
            self._stop()
            raise

    def get(self, name: str) -> tuple[bool, Any]:
        """``(found, value)`` of a kernel variable as JSON data (containers converted, other objects by ``repr``).

        ``(False, None)`` when the name is not defined, or no kernel runs (after a crash or a timeout). A value
        over ``sandbox.message_kb`` raises ``SandboxViolation``.
        """
        self._check_open()
        if self._process is None:
            return False, None
        deadline = time.monotonic() + self.step_timeout_s
        try:
            self._send({"op": "get", "name": name}, deadline)
            message = self._receive(deadline)
        except (_Timeout, _Died):  # e.g. a __repr__ that never returns
            self._stop()
            return False, None
        except _Violation as exc:
            self._stop()
            raise errors.SandboxViolation(f"{exc} (the value of `{name}`)") from None
        except BaseException:
            self._stop()
            raise
        if message.get("op") != "value":
            self._stop()
            raise errors.SandboxViolation(f"protocol: an unexpected message from the kernel while reading `{name}`")
        if message.get("too_large"):
            self._stop()
            raise errors.SandboxViolation(
                f"message size: the value of `{name}` is too large to encode within the kernel's memory"
            )
        return bool(message.get("found")), message.get("value")

    def add_functions(self, functions: Sequence[FunctionStub]) -> None:
        """Define more tool functions (e.g. tools disclosed mid-episode); they survive restarts."""
        self._check_open()
        self.functions.extend(functions)
        if self._process is None:
            return
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            self._send({"op": "define", "functions": [stub_json(f) for f in functions]}, deadline)
            self._receive(deadline)
        except (_Timeout, _Died, _Violation):
            self._stop()  # the next run() starts a kernel with every function

    def close(self) -> None:
        """Stop the kernel and everything it started, and delete its folder. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._process is not None:
            try:  # let it exit by itself first; _stop kills whatever is left
                self._send({"op": "shutdown"}, time.monotonic() + 0.5)
                self._receive(time.monotonic() + 0.5)
            except (_Timeout, _Died, _Violation):
                pass
            self._stop()
        self._release_capture()

    def __enter__(self) -> Kernel:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- process management

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError("the kernel is closed")

    def _start(self) -> None:
        capture = self._capture
        os.ftruncate(capture, 0)  # what a dead kernel wrote as it died is not the next cell's output
        process = self._spawn_namespaced(capture) if self.level == "namespaces" else self._spawn_plain(capture)
        self._process = process
        self._finalizer = weakref.finalize(self, _kill_and_clean, process)
        init = {
            "op": "init",
            "functions": [stub_json(f) for f in self.functions],
            "max_output": self.max_output,
            # what stands in, best effort, for a PID namespace: see child.py
            "without_namespaces": self.level == "rlimits",
            "limits": {
                "memory_mb": self.memory_mb,
                "cpu_s": self.cpu_limit_s,
                "file_size_mb": FILE_SIZE_LIMIT_MB,
                "open_files": OPEN_FILES_LIMIT,
                "processes": self.sandbox.processes if self.level == "namespaces" else 0,
            },
        }
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            self._send(init, deadline)
            ready = self._receive(deadline)
            if ready.get("op") != "ready":
                raise _Died("unexpected first message")
        except (_Timeout, _Died, _Violation) as exc:
            self._start_failed(type(exc).__name__)

    def _start_failed(self, why: str) -> None:
        process = self._process
        stderr = b""
        if process is not None:
            with contextlib.suppress(OSError, ValueError):
                os.killpg(process.proc.pid, signal.SIGKILL)
                if process.proc.stderr is not None:
                    stderr = process.proc.stderr.read()[-2000:]
        self._stop()
        detail = stderr.decode("utf-8", "replace").strip()
        raise SandboxError(f"the Python kernel did not start ({why}): {detail}") from None

    def _popen(self, argv: list[str], env: dict[str, str], cwd: str, capture: int) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,  # only start-up errors land here: the kernel then points fd 2 elsewhere
                cwd=cwd,
                env=env,
                close_fds=True,
                pass_fds=(capture,),
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as exc:
            raise SandboxError(f"could not start the Python kernel: {exc}") from exc
        assert proc.stdin is not None
        os.set_blocking(proc.stdin.fileno(), False)  # writes wait in poll() with a deadline, never block forever
        self._buffer.clear()
        return proc

    def _spawn_plain(self, capture: int) -> _Process:
        _sweep_stale_workdirs()
        workdir = tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")
        argv = [sys.executable, "-s", "-m", CHILD_MODULE, str(capture)]
        try:
            proc = self._popen(argv, _kernel_env(workdir, _PROJECT_ROOT), workdir, capture)
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        return _Process(proc, proc.pid, None, workdir)

    def _spawn_namespaced(self, capture: int) -> _Process:
        view = _view_spec()
        spec = {
            **view,
            "disk_mb": self.sandbox.disk_mb,
            "argv": [view["python"], "-s", "-m", CHILD_MODULE, str(capture)],
            "env": _kernel_env("/tmp", "/kernel"),
        }
        env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONPATH": _PROJECT_ROOT, "LANG": "C.UTF-8"}
        argv = [sys.executable, "-s", "-m", LAUNCHER_MODULE, json.dumps(spec)]
        proc = self._popen(argv, env, "/", capture)
        process = _Process(proc, proc.pid, None, None)
        self._process = process  # so that a failed handshake is cleaned up
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            if self._receive(deadline).get("op") != "unshared":
                raise _Died("the launcher did not create namespaces")
            isolation.write_id_maps(proc.pid)
            self._send({"op": "mapped"}, deadline)
            launched = self._receive(deadline)
            pid = launched.get("pid")
            if launched.get("op") != "launched" or not isinstance(pid, int):
                raise _Died("the launcher did not start the kernel")
            process.kernel_pid = pid
            process.pidfd = os.pidfd_open(pid)
        except (_Timeout, _Died, _Violation, OSError) as exc:
            self._start_failed(f"namespaces: {type(exc).__name__} {exc}".strip())
        self._process = None
        return process

    def _stop(self) -> int | None:
        """Kill and reap the kernel; the next run() starts a new one. Returns its exit status."""
        process, finalizer = self._process, self._finalizer
        self._process = self._finalizer = None
        self._buffer.clear()
        if process is None or finalizer is None:
            return None
        finalizer()
        return process.proc.returncode

    # -- output: read by the host from the file it gave the kernel as fds 1 and 2

    def _take_output(self, printed: int) -> str:
        """The cell's output (its first ``max_output`` characters, with a note when there was more), and an empty
        file for the next cell."""
        fd = self._capture
        size = os.fstat(fd).st_size
        data = os.pread(fd, min(size, 4 * self.max_output + 4), 0)
        os.ftruncate(fd, 0)  # O_APPEND: the kernel's next write lands at the start
        text = data.decode("utf-8", "replace")
        total = max(len(text), printed, size if size > len(data) else 0)
        if total <= self.max_output:
            return text
        return (
            text[: self.max_output] + f"\n[output truncated: showing the first {self.max_output} of {total} characters]"
        )

    # -- the protocol channel

    def _send(self, message: dict[str, Any], deadline: float) -> None:
        assert self._process is not None and self._process.proc.stdin is not None
        data = memoryview(json.dumps(message, default=str).encode() + b"\n")
        fd = self._process.proc.stdin.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        while data:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout
            events = poller.poll(remaining * 1000.0)
            if not events:
                raise _Timeout
            if events[0][1] & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                raise _Died("the kernel closed its input")
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                continue
            except OSError as exc:  # BrokenPipeError: it died
                raise _Died(str(exc)) from None
            data = data[written:]

    def _receive(self, deadline: float, watch_memory: bool = False) -> dict[str, Any]:
        assert self._process is not None and self._process.proc.stdout is not None
        fd = self._process.proc.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        cap = self.sandbox.message_kb * 1024
        too_large = _Violation(
            f"message size: the kernel sent more than {self.sandbox.message_kb} KiB in one message (sandbox.message_kb)"
        )
        while (end := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > cap:
                raise too_large
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout
            # Sampled while a cell runs, whether or not it talks: a cell that calls tools often is checked too
            if watch_memory:
                self._check_usage()
            wait = min(remaining, MEMORY_CHECK_S) if watch_memory else remaining
            if not poller.poll(wait * 1000.0):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise _Died("end of the kernel's output")
            self._buffer += chunk
        if end > cap:
            raise too_large
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            message = json.loads(line)
        except RecursionError:
            raise _Violation(f"protocol: a message from the kernel nested deeper than {MAX_DEPTH} levels") from None
        except ValueError as exc:  # UnicodeDecodeError too
            what = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else "not JSON"
            raise _Violation(f"protocol: a message from the kernel that is {what}") from None
        if not isinstance(message, dict):
            raise _Violation("protocol: a message from the kernel that is not a JSON object")
        if nesting_depth(message) > MAX_DEPTH:
            raise _Violation(f"protocol: a message from the kernel nested deeper than {MAX_DEPTH} levels")
        return message

    def _check_usage(self) -> None:
        """The address-space and CPU limits hold per process; these hold for all the kernel's processes together.
        Sampled at most every ``MEMORY_CHECK_S``: while a cell runs, and when one starts (what children took while
        the model was thinking)."""
        assert self._process is not None
        if time.monotonic() - self._memory_checked < MEMORY_CHECK_S:
            return
        self._memory_checked = time.monotonic()
        rss, cpu = _tree_usage(self._process.kernel_pid)
        if rss > self.memory_mb * 1024 * 1024:
            raise _Violation(
                f"memory: the kernel's processes held {rss / 2**20:.0f} MiB together, over the "
                f"{self.memory_mb} MiB limit (agent.memory_mb)"
            )
        if cpu > self.cpu_limit_s:
            raise _Violation(f"CPU time: the kernel's processes used {cpu:.0f} CPU seconds, over {self.cpu_limit_s}")

    def _check_channel_is_quiet(self) -> None:
        assert self._process is not None and self._process.proc.stdout is not None
        fd = self._process.proc.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not self._buffer and not poller.poll(0):
            return
        chunk = os.read(fd, 1 << 16) if not self._buffer else b"?"
        if not chunk:
            raise _Died("end of the kernel's output")
        raise _Violation("protocol: the kernel sent a message outside any request (a forged message)", stray=True)

    def _serve_call(self, message: dict[str, Any], deadline: float) -> None:
        name, arguments = message.get("name"), message.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise _Violation("protocol: a malformed tool call from the kernel")
        # A tool runs in this thread and cannot be interrupted: the cell ends as soon as it returns past the deadline
        reply = self.call_tool(name, arguments)
        if time.monotonic() >= deadline:
            raise _Timeout
        for note in reply.notes or ():  # the tool's own lines, where the code's output is, written by the host
            os.write(self._capture, (note + "\n").encode())
        answer = {
            "op": "reply",
            "ok": bool(reply.ok),
            "value": reply.value,
            "error": reply.error,
            "exception": reply.exception,
        }
        self._send(answer, deadline)


def _capture_file() -> int:
    """An anonymous file for the kernel's fds 1 and 2, in append mode (the host empties it between cells)."""
    try:
        fd = os.memfd_create("undertow-kernel-output", os.MFD_CLOEXEC)
    except (AttributeError, OSError):  # not Linux: a named file, unlinked at once
        fd, path = tempfile.mkstemp(prefix=WORKDIR_PREFIX)
        os.unlink(path)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
    return fd


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "exit status unknown"
    if returncode >= 128 and returncode < 160:  # the launcher reports a killed kernel as 128 + signal
        returncode = -(returncode - 128)
    if returncode >= 0:
        return f"exit code {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    hint = {"SIGKILL": ", e.g. out of memory", "SIGXCPU": ": CPU time limit", "SIGSEGV": ": a crash"}.get(name, "")
    return f"killed by {name}{hint}"
