"""A persistent Python kernel for one CodeAct episode, in a separate OS process.

The agent writes Python in ``<execute>`` blocks; ``Kernel.run`` runs each block in a notebook-like namespace that
survives between blocks, where every tool is a plain Python function (``function_12(...)``). A tool function does
not run the tool: it sends the call to the parent over the protocol channel and waits while the parent runs
``call_tool`` (faults, validation, execution and tracing all stay in the parent, which owns the database and the
gold data). A failed call raises ``ToolError`` in the agent's code, so the message shows in the traceback and can
be caught with ``try``/``except``.

The child is started with ``python -m env_core.sandbox`` (never multiprocessing: the caller may be a Ray worker
whose ``__main__`` must not be re-imported) and imports only the standard library and this module.

Protocol: one JSON object per line. The child keeps private duplicates of its original stdin/stdout for the
protocol; fd 0 then points to /dev/null and fds 1 and 2 to an unlinked capture file, and ``sys.stdout`` and
``sys.stderr`` to a bounded in-memory buffer while user code runs, so nothing the user prints can reach the
channel.

    parent -> child: init{functions, limits, max_output}  (answered by ready{pid})
                     run{code}     (answered by call{name, arguments}* then done{output, error})
                     reply{ok, value, error, notes}        (the answer to one call)
                     get{name}     (answered by value{found, value})
                     define{functions}                     (answered by defined)
                     shutdown                              (answered by bye; the kernel exits)

Isolation is best effort, not a security boundary: resource limits (address space, CPU seconds, file size, no core
files), a fresh temporary working directory deleted on close, an environment built from constants (nothing of the
parent's environment but PATH), and an audit hook that refuses to start processes. The kernel can still read any
file the parent's user can read. POSIX only.

A ``Kernel`` is not thread-safe: use one per episode, from one thread at a time.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import io
import json
import keyword
import linecache
import os
import pprint
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

_THIS_FILE = os.path.abspath(__file__)
_PROJECT_ROOT = str(Path(_THIS_FILE).parent.parent)

START_TIMEOUT_S = 20.0  # generous: a loaded machine can take seconds to start an interpreter
FILE_SIZE_LIMIT_MB = 16
OPEN_FILES_LIMIT = 256
MAX_TRACEBACK_FRAMES = 30


class SandboxError(RuntimeError):
    """The kernel could not be started, or the kernel was used after ``close()``. Infrastructure, not the agent."""


@dataclass
class FunctionStub:
    """A tool as a Python function in the kernel.

    ``parameters`` are the parameter names in order: positional arguments map onto them. ``description`` becomes the
    function's docstring. In the kernel the function is named ``python_name(name)``; calls reach ``call_tool`` with
    the original ``name``.
    """

    name: str
    parameters: list[str] = field(default_factory=list)
    description: str = ""


@dataclass
class ToolReply:
    """What ``call_tool`` returns. ``value`` must be JSON data. ``notes`` are lines the tool prints (hints)."""

    ok: bool
    value: Any = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class CodeResult:
    """The outcome of one ``Kernel.run``.

    ``output``: what the code printed (stdout and stderr), truncated to ``max_output`` characters with a note.
    ``error``: the user-facing traceback text if the code raised (or the kernel timed out or died), else None.
    ``timed_out``: the code exceeded ``step_timeout_s``; the kernel was killed and its variables are lost.
    """

    output: str
    error: str | None
    timed_out: bool
    duration_ms: float


def python_name(tool_name: str) -> str:
    """The identifier of a tool's function in the kernel: non-identifier characters become ``_``."""
    name = re.sub(r"\W", "_", tool_name)
    if not name or name[0].isdigit():
        name = "_" + name
    return name + "_" if keyword.iskeyword(name) else name


# ---------------------------------------------------------------------------------------------------------------
# Parent side


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
        "PYTHONPATH": _PROJECT_ROOT,  # so that `-m env_core.sandbox` imports
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
        self._finalizer: weakref.finalize | None = None
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
            self._send({"op": "define", "functions": [_stub_json(f) for f in functions]}, deadline)
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
                [sys.executable, "-m", "env_core.sandbox"],
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
            "functions": [_stub_json(f) for f in self.functions],
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


def _stub_json(stub: FunctionStub) -> dict[str, Any]:
    return {"name": stub.name, "parameters": list(stub.parameters), "description": stub.description}


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


# ---------------------------------------------------------------------------------------------------------------
# Child side: runs in the kernel process (python -m env_core.sandbox)


class ToolError(Exception):
    """Raised in the agent's code when a tool call fails; the message is the tool's error text."""


# Process creation in the kernel: refused by an audit hook (works for root too, unlike RLIMIT_NPROC, and leaves
# threads alone). Best effort: ctypes could get around it.
_BLOCKED_EVENTS = frozenset(
    {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen"}
)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in _BLOCKED_EVENTS:
        raise PermissionError(f"starting processes is not allowed in this kernel ({event})")


class _Capture(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` for user code: keeps the first ``limit`` characters, counts the rest."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.total += len(text)
        room = self.limit - self.kept
        if room > 0:
            piece = text[:room]
            self.parts.append(piece)
            self.kept += len(piece)
        return len(text)


def _jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data: containers converted recursively, anything else by ``repr``."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if depth > 100:  # also ends reference cycles
        return repr(value)
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        try:
            items = sorted(value)
        except TypeError:
            items = list(value)
        return [_jsonable(v, depth + 1) for v in items]
    if hasattr(type(value), "tolist"):  # numpy arrays and scalars
        try:
            return _jsonable(value.tolist(), depth + 1)
        except Exception:
            pass
    return repr(value)


def _argument_json(value: Any) -> Any:
    """``default`` for encoding tool arguments: sets and numpy values convert, anything else is refused."""
    if isinstance(value, set | frozenset):
        return list(value)
    if hasattr(type(value), "tolist"):
        return value.tolist()
    raise TypeError(f"an argument of type {type(value).__name__} cannot be passed to a tool")


def _strip_kernel_frames(exc: traceback.TracebackException, seen: set[int] | None = None) -> None:
    """Keep the user-facing frames of a traceback (and of its chained ones): the last frames from the first cell on."""
    seen = set() if seen is None else seen
    if id(exc) in seen:
        return
    seen.add(id(exc))
    frames = [frame for frame in exc.stack if frame.filename != _THIS_FILE]
    # Frames before the first cell frame are the kernel's machinery (exec, ast.parse): a SyntaxError has none left.
    first_cell = next((i for i, frame in enumerate(frames) if frame.filename.startswith("<cell-")), len(frames))
    frames = frames[first_cell:]
    exc.stack = traceback.StackSummary.from_list(frames[-MAX_TRACEBACK_FRAMES:])
    for chained in (exc.__cause__, exc.__context__, *(getattr(exc, "exceptions", None) or ())):
        if chained is not None:
            _strip_kernel_frames(chained, seen)


_CELL_FRAME = re.compile(r'File "<cell-(\d+)>", line (\d+)(, in <module>)?')


def _format_error(exc: BaseException) -> str:
    summary = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    _strip_kernel_frames(summary)
    text = "".join(summary.format())
    # Jupyter-style frame headers for the agent's own cells.
    return _CELL_FRAME.sub(lambda m: f"Cell In[{m.group(1)}], line {m.group(2)}", text).rstrip("\n")


def _truncate(text: str, total: int, limit: int) -> str:
    if total <= limit:
        return text
    return text[:limit] + f"\n[output truncated: showing the first {limit} of {total} characters]"


class _Session:
    """The kernel's side of the protocol: the namespace, the tool functions and the request loop."""

    def __init__(self, inbound: IO[bytes], outbound: IO[bytes], capture_fd: int):
        self.inbound = inbound
        self.outbound = outbound
        self.capture_fd = capture_fd
        self.namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins, "ToolError": ToolError}
        self.cell = 0
        self.max_output = 20_000

    def send(self, message: dict[str, Any]) -> None:
        self.outbound.write(json.dumps(message).encode() + b"\n")
        self.outbound.flush()

    def receive(self) -> dict[str, Any]:
        line = self.inbound.readline()
        if not line:  # the parent is gone
            os._exit(0)
        return json.loads(line)

    def serve(self) -> None:
        init = self.receive()
        _apply_limits(init["limits"])
        sys.addaudithook(_audit)
        self.max_output = int(init["max_output"])
        self.define(init["functions"])
        self.send({"op": "ready", "pid": os.getpid()})
        while True:
            message = self.receive()
            op = message["op"]
            if op == "run":
                self.send(self.run(message["code"]))
            elif op == "get":
                found = message["name"] in self.namespace
                value = _jsonable(self.namespace[message["name"]]) if found else None
                self.send({"op": "value", "found": found, "value": value})
            elif op == "define":
                self.define(message["functions"])
                self.send({"op": "defined"})
            elif op == "shutdown":
                self.send({"op": "bye"})
                return

    def define(self, functions: list[dict[str, Any]]) -> None:
        for spec in functions:
            stub = self.stub(spec["name"], list(spec["parameters"]), spec.get("description") or "")
            self.namespace[stub.__name__] = stub

    def stub(self, tool: str, parameters: list[str], description: str) -> Callable[..., Any]:
        name = python_name(tool)
        session = self

        def function(*args: Any, **kwargs: Any) -> Any:
            # Bind like Python would, so that a bad call fails here without reaching the tool.
            if len(args) > len(parameters):
                noun = "argument" if len(parameters) == 1 else "arguments"
                raise TypeError(f"{name}() takes {len(parameters)} positional {noun} but {len(args)} were given")
            arguments = dict(zip(parameters, args, strict=False))
            for key, value in kwargs.items():
                if key not in parameters:
                    raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
                if key in arguments:
                    raise TypeError(f"{name}() got multiple values for argument '{key}'")
                arguments[key] = value
            return session.call(tool, arguments)

        function.__name__ = function.__qualname__ = name
        function.__doc__ = description
        try:  # so that help() and inspect show the parameters
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            function.__signature__ = inspect.Signature([inspect.Parameter(p, kind) for p in parameters])  # type: ignore[attr-defined]
        except ValueError:  # a parameter name that is not an identifier
            pass
        return function

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        try:  # encode before writing anything: a refused argument must not leave half a message
            data = json.dumps({"op": "call", "name": tool, "arguments": arguments}, default=_argument_json)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{python_name(tool)}(): {exc}") from None
        self.outbound.write(data.encode() + b"\n")
        self.outbound.flush()
        reply = self.receive()
        for note in reply.get("notes") or ():
            print(note)  # the tool's own prints, where the user's code prints
        if not reply.get("ok"):
            raise ToolError(reply.get("error") or f"{tool} failed")
        return reply.get("value")

    def run(self, code: str) -> dict[str, Any]:
        self.cell += 1
        filename = f"<cell-{self.cell}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)  # source lines in tracebacks
        capture = _Capture(self.max_output)
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        error = None
        try:
            self.execute(code, filename)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the kernel keeps going, like Jupyter
            text = _format_error(exc)
            error = _truncate(text, len(text), self.max_output)
        finally:
            sys.stdout, sys.stderr = saved
        output = "".join(capture.parts)
        total = capture.total
        raw = self.drain_fd_output()
        if raw:  # written to fds 1/2 directly (sys.__stdout__, os.write): after the rest
            output += raw[0]
            total += raw[1]
        return {"op": "done", "output": _truncate(output, total, self.max_output), "error": error}

    def execute(self, code: str, filename: str) -> None:
        """Run a cell; if it ends with an expression, print its value (pretty-printed), as a notebook does."""
        tree = ast.parse(code, filename, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, filename, "exec"), self.namespace)
        if last is not None:
            value = eval(compile(last, filename, "eval"), self.namespace)
            if value is not None:
                self.namespace["_"] = value
                print(pprint.pformat(value))

    def drain_fd_output(self) -> tuple[str, int] | None:
        for stream in (sys.__stdout__, sys.__stderr__):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        size = os.fstat(self.capture_fd).st_size
        if not size:
            return None
        data = os.pread(self.capture_fd, min(size, self.max_output), 0)
        os.ftruncate(self.capture_fd, 0)
        os.lseek(self.capture_fd, 0, os.SEEK_SET)  # the offset is shared with fds 1 and 2
        return data.decode("utf-8", "replace"), size


def _apply_limits(limits: dict[str, Any]) -> None:
    import resource

    def limit(which: int, soft: int, hard: int) -> None:
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:  # never try to raise a hard limit
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        resource.setrlimit(which, (soft, hard))

    memory = int(limits["memory_mb"]) * 1024 * 1024
    limit(resource.RLIMIT_AS, memory, memory)
    cpu = int(limits["cpu_s"])
    limit(resource.RLIMIT_CPU, cpu, cpu + 5)  # SIGXCPU first, SIGKILL 5 s later
    size = int(limits["file_size_mb"]) * 1024 * 1024
    limit(resource.RLIMIT_FSIZE, size, size)
    limit(resource.RLIMIT_CORE, 0, 0)
    files = int(limits["open_files"])
    limit(resource.RLIMIT_NOFILE, files, files)


def _open_capture_file() -> int:
    """An anonymous file in the working directory for output written to fds 1 and 2."""
    try:
        return os.open(".", os.O_TMPFILE | os.O_RDWR, 0o600)
    except (AttributeError, OSError):  # no O_TMPFILE: a named file, unlinked at once
        fd, path = tempfile.mkstemp(dir=".")
        os.unlink(path)
        return fd


def _child_main() -> None:
    # The protocol keeps private copies of the original stdin/stdout (not inherited by anything the code starts);
    # fds 0, 1 and 2 are then pointed away from them, so no write to fd 1 can reach the parent.
    inbound = os.fdopen(os.dup(0), "rb")
    outbound = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.close(devnull)
    capture_fd = _open_capture_file()
    os.dup2(capture_fd, 1)
    os.dup2(capture_fd, 2)
    _Session(inbound, outbound, capture_fd).serve()


if __name__ == "__main__":
    _child_main()
