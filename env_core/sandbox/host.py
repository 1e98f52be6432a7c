"""The host side of the sandbox: ``Kernel`` starts the child process, drives the protocol and cleans up.

Runs in the caller's process (possibly a Ray worker). The child is started with ``python -m env_core.sandbox.child``,
never with multiprocessing: the caller's ``__main__`` must not be re-imported.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from env_core import errors
from env_core.sandbox.protocol import CodeResult, FunctionStub, ToolReply, stub_json

# env_core/sandbox/host.py -> the directory that holds env_core, for the child's PYTHONPATH.
_PROJECT_ROOT = str(Path(os.path.abspath(__file__)).parents[2])
CHILD_MODULE = "env_core.sandbox.child"

START_TIMEOUT_S = 20.0  # generous: a loaded machine can take seconds to start an interpreter
FILE_SIZE_LIMIT_MB = 16
OPEN_FILES_LIMIT = 256


class SandboxError(errors.SandboxError):
    """The kernel could not be started, or the kernel was used after ``close()``. Infrastructure, not the agent."""


class _Timeout(Exception):
    pass


class _Died(Exception):
    pass


def _kill_and_clean(proc: subprocess.Popen[bytes], workdir: str) -> int | None:
    """Kill the kernel's process group, reap the kernel, close its pipes, delete its directory. Idempotent.

    The group is killed before reaping: until then the kernel's PID (the group id) cannot be reused.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    try:
        returncode: int | None = proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:  # unkillable (D state): Popen reaps it later; never hang here
        returncode = None
    shutil.rmtree(workdir, ignore_errors=True)
    return returncode


def _child_env(workdir: str) -> dict[str, str]:
    """The kernel's whole environment: constants, PATH and the temporary directory. Nothing else is inherited."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "PYTHONPATH": _PROJECT_ROOT,  # so that `-m env_core.sandbox.child` imports
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",  # set and dict-of-set orders the agent prints are the same in every run
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        # Numerical libraries otherwise start a thread pool per core, each reserving memory under RLIMIT_AS.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


class Kernel:
    """A persistent Python kernel in a child process, with the tools as functions. Not thread-safe.

    ``call_tool(name, arguments)`` runs in the caller's process whenever the code calls a tool; an exception from
    it kills the kernel and propagates out of ``run`` (an infrastructure error, not the agent's). ``run`` never
    raises for anything the code does: errors, timeouts and crashes come back in the ``CodeResult``; after a
    timeout or a crash the next ``run`` starts a fresh kernel (variables lost). Use as a context manager or call
    ``close()``; a kernel left open is killed when it is garbage-collected or at interpreter exit.
    """

    def __init__(
        self,
        functions: Sequence[FunctionStub],
        call_tool: Callable[[str, dict[str, Any]], ToolReply],
        *,
        step_timeout_s: float = 10.0,
        memory_mb: int = 1024,
        max_output: int = 20_000,
    ):
        self.functions: list[FunctionStub] = list(functions)
        self.call_tool = call_tool
        self.step_timeout_s = step_timeout_s
        self.memory_mb = memory_mb
        self.max_output = max_output
        # A ceiling on the kernel's total CPU time: a backstop for a kernel whose parent died mid-loop.
        self.cpu_limit_s = int(max(300.0, 60.0 * step_timeout_s))
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes], str], Kernel] | None = None
        self._buffer = bytearray()
        self._closed = False
        self._start()

    # -- public API

    @property
    def pid(self) -> int | None:
        """The PID of the running kernel process, or None when none runs (closed, or waiting for a restart)."""
        return self._proc.pid if self._proc is not None else None

    def run(self, code: str) -> CodeResult:
        """Run one cell of code; variables persist between calls. Starts a fresh kernel if the last one is gone."""
        self._check_open()
        if self._proc is None:
            self._start()
        started = time.perf_counter()
        deadline = time.monotonic() + self.step_timeout_s
        try:
            self._send({"op": "run", "code": code}, deadline)
            while True:
                message = self._receive(deadline)
                if message.get("op") == "call":
                    self._serve_call(message, deadline)
                elif message.get("op") == "done":
                    return CodeResult(
                        output=str(message.get("output", "")),
                        error=message.get("error"),
                        timed_out=False,
                        duration_ms=_ms_since(started),
                    )
                else:
                    raise _Died("unexpected message from the kernel")
        except _Timeout:
            self._stop()
            error = (
                f"TimeoutError: the code ran longer than {self.step_timeout_s:g} s and was stopped. The kernel was "
                "restarted: all variables were lost; define them again."
            )
            return CodeResult(output="", error=error, timed_out=True, duration_ms=_ms_since(started))
        except _Died:
            how = _describe_exit(self._stop())
            error = (
                f"KernelDied: the Python kernel died while running this code ({how}). It was restarted: all "
                "variables were lost; define them again."
            )
            return CodeResult(output="", error=error, timed_out=False, duration_ms=_ms_since(started))
        except BaseException:  # call_tool failed, or the caller was interrupted: the kernel is mid-cell, drop it
            self._stop()
            raise

    def get(self, name: str) -> tuple[bool, Any]:
        """``(found, value)`` of a kernel variable as JSON data (containers converted, other objects by ``repr``).

        ``(False, None)`` when the name is not defined, or no kernel runs (after a crash or a timeout).
        """
        self._check_open()
        if self._proc is None:
            return False, None
        deadline = time.monotonic() + self.step_timeout_s
        try:
            self._send({"op": "get", "name": name}, deadline)
            message = self._receive(deadline)
        except (_Timeout, _Died):  # e.g. a __repr__ that never returns
            self._stop()
            return False, None
        except BaseException:
            self._stop()
            raise
        return bool(message.get("found")), message.get("value")

    def add_functions(self, functions: Sequence[FunctionStub]) -> None:
        """Define more tool functions (e.g. tools disclosed mid-episode); they survive restarts."""
        self._check_open()
        self.functions.extend(functions)
        if self._proc is None:
            return
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            self._send({"op": "define", "functions": [stub_json(f) for f in functions]}, deadline)
            self._receive(deadline)
        except (_Timeout, _Died):
            self._stop()  # the next run() starts a kernel with every function

    def close(self) -> None:
        """Stop the kernel and delete its directory. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._proc is not None:
            try:  # let it exit by itself first; _stop kills whatever is left
                self._send({"op": "shutdown"}, time.monotonic() + 0.5)
                self._receive(time.monotonic() + 0.5)
            except (_Timeout, _Died):
                pass
            self._stop()

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
        workdir = tempfile.mkdtemp(prefix="undertow-kernel-")
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", CHILD_MODULE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,  # only start-up errors land here: the kernel then points fd 2 elsewhere
                cwd=workdir,
                env=_child_env(workdir),
                close_fds=True,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as exc:
            shutil.rmtree(workdir, ignore_errors=True)
            raise SandboxError(f"could not start the Python kernel: {exc}") from exc
        self._proc = proc
        self._buffer.clear()
        self._finalizer = weakref.finalize(self, _kill_and_clean, proc, workdir)
        assert proc.stdin is not None
        os.set_blocking(proc.stdin.fileno(), False)  # writes wait in poll() with a deadline, never block forever
        init = {
            "op": "init",
            "functions": [stub_json(f) for f in self.functions],
            "max_output": self.max_output,
            "limits": {
                "memory_mb": self.memory_mb,
                "cpu_s": self.cpu_limit_s,
                "file_size_mb": FILE_SIZE_LIMIT_MB,
                "open_files": OPEN_FILES_LIMIT,
            },
        }
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            self._send(init, deadline)
            ready = self._receive(deadline)
            if ready.get("op") != "ready":
                raise _Died("unexpected first message")
        except (_Timeout, _Died) as exc:
            stderr = b""
            try:
                os.killpg(proc.pid, signal.SIGKILL)
                if proc.stderr is not None:
                    stderr = proc.stderr.read()[-2000:]
            except (OSError, ValueError):
                pass
            self._stop()
            detail = stderr.decode("utf-8", "replace").strip()
            raise SandboxError(f"the Python kernel did not start ({type(exc).__name__}): {detail}") from None

    def _stop(self) -> int | None:
        """Kill and reap the kernel; the next run() starts a new one. Returns its exit status."""
        proc, finalizer = self._proc, self._finalizer
        self._proc = self._finalizer = None
        self._buffer.clear()
        if proc is None or finalizer is None:
            return None
        finalizer()
        return proc.returncode

    # -- the protocol channel

    def _send(self, message: dict[str, Any], deadline: float) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        data = memoryview(json.dumps(message, default=str).encode() + b"\n")
        fd = self._proc.stdin.fileno()
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

    def _receive(self, deadline: float) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while (end := self._buffer.find(b"\n")) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout
            if not poller.poll(remaining * 1000.0):
                raise _Timeout
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise _Died("end of the kernel's output")
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            message = json.loads(line)
        except ValueError:
            raise _Died("corrupt message from the kernel") from None
        if not isinstance(message, dict):
            raise _Died("corrupt message from the kernel")
        return message

    def _serve_call(self, message: dict[str, Any], deadline: float) -> None:
        name, arguments = message.get("name"), message.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise _Died("malformed call from the kernel")
        reply = self.call_tool(name, arguments)
        if time.monotonic() >= deadline:  # time spent in the tool counts toward the step
            raise _Timeout
        answer = {"op": "reply", "ok": bool(reply.ok), "value": reply.value, "error": reply.error}
        self._send({**answer, "notes": list(reply.notes or [])}, deadline)


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "exit status unknown"
    if returncode >= 0:
        return f"exit code {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    hint = {"SIGKILL": ", e.g. out of memory", "SIGXCPU": ": CPU time limit", "SIGSEGV": ": a crash"}.get(name, "")
    return f"killed by {name}{hint}"
