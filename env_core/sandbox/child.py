"""Child side: the kernel process itself, run as ``python -m undertow.env_core.sandbox.child`` by ``Kernel``.

It imports only the standard library and the light modules of this package (never the host module), so that it
starts fast. It runs as ``__main__``: that is why ``ToolError`` is defined here, so that tracebacks show a bare
``ToolError`` (a class of ``__main__``), not a module path.

The protocol keeps private duplicates of the original stdin/stdout; fd 0 then points to /dev/null and fds 1 and 2
to the output file the host gave (its fd number is the only argument), read by the host after each cell. While
user code runs, ``sys.stdout`` and ``sys.stderr`` write there directly, up to the output limit, counting the rest;
nothing the user prints can reach the channel.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import io
import json
import linecache
import os
import pprint
import select
import signal
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from undertow.env_core.sandbox import seccomp
from undertow.env_core.sandbox.isolation import apply_limits
from undertow.env_core.sandbox.protocol import MAX_DEPTH, RAISABLE, argument_json, jsonable, nesting_depth, python_name
from undertow.env_core.sandbox.tracebacks import format_error

# Process creation where no PID namespace bounds it (the rlimits level): refused by an audit hook. Best effort only:
# ctypes and _posixsubprocess walk around it, which is why the namespaces level exists.
BLOCKED_EVENTS = frozenset(
    {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen"}
)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in BLOCKED_EVENTS:
        raise PermissionError(f"starting processes is not allowed in this kernel ({event})")


class ToolError(Exception):
    """Raised in the agent's code when a tool call fails (unless the reply names a builtin exception to raise
    instead); the message is the tool's error text."""


class _Output(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` for user code: writes the first ``limit`` characters of a cell to fd 1 (the
    host's file), counts the rest."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit
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
            self.kept += len(piece)
            data = piece.encode("utf-8", "replace")
            try:
                while data:
                    data = data[os.write(1, data) :]
            except OSError:  # the file-size limit: the host shows what it has
                self.kept = self.limit
        return len(text)


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[traceback truncated: showing the first {limit} of {len(text)} characters]"


class _Session:
    """The kernel's side of the protocol: the namespace, the tool functions and the request loop."""

    def __init__(self, inbound: IO[bytes], outbound: IO[bytes]):
        self.inbound = inbound
        self.outbound = outbound
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
        message: dict[str, Any] = json.loads(line)  # the parent only ever sends JSON objects
        return message

    def serve(self) -> None:
        init = self.receive()
        apply_limits(init["limits"])
        if init.get("without_namespaces"):  # with them, the PID namespace and its launcher do both jobs
            # (and the launcher installs the filter); here it is best effort, like the rest of this level
            with contextlib.suppress(OSError):
                seccomp.install()
            threading.Thread(target=_end_with_the_host, args=(self.inbound.fileno(),), daemon=True).start()
            sys.addaudithook(_audit)
        self.max_output = int(init["max_output"])
        self.define(init["functions"])
        self.send({"op": "ready", "pid": os.getpid()})
        while True:
            message = self.receive()
            op = message["op"]
            if op == "run":
                self.send({**self.run(message["code"]), "cell": message.get("cell")})
            elif op == "get":
                found = message["name"] in self.namespace
                try:
                    value = jsonable(self.namespace[message["name"]]) if found else None
                    self.send({"op": "value", "found": found, "value": value})
                except MemoryError:  # a value too large to encode here is too large to send: the host decides
                    self.send({"op": "value", "found": found, "too_large": True})
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
        if nesting_depth(arguments, MAX_DEPTH - 1) > MAX_DEPTH - 1:  # the host would take it for a forged message
            raise ValueError(f"{python_name(tool)}(): arguments nested deeper than {MAX_DEPTH - 1} levels")
        try:  # encode before writing anything: a refused argument must not leave half a message
            data = json.dumps({"op": "call", "name": tool, "arguments": arguments}, default=argument_json)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{python_name(tool)}(): {exc}") from None
        self.outbound.write(data.encode() + b"\n")
        self.outbound.flush()
        reply = self.receive()  # the tool's notes, if any, are already in the output: the host wrote them
        if not reply.get("ok"):
            # the builtin class the host named (a disabled function raises ValueError), else the kernel's own
            name = reply.get("exception")
            failure = getattr(builtins, name) if name in RAISABLE else ToolError
            raise failure(reply.get("error") or f"{tool} failed")
        return reply.get("value")

    def run(self, code: str) -> dict[str, Any]:
        self.cell += 1
        filename = f"<cell-{self.cell}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)  # source lines in tracebacks
        output = _Output(self.max_output)
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = output
        error = None
        try:
            self.execute(code, filename)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the kernel keeps going, like Jupyter
            error = _truncate(format_error(exc), self.max_output)
        finally:
            sys.stdout, sys.stderr = saved
        for stream in (sys.__stdout__, sys.__stderr__):  # code that wrote to them directly: into the file now
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        return {"op": "done", "error": error, "printed": output.total}

    def execute(self, code: str, filename: str) -> None:
        """Run a cell; if it ends with an expression, print its value (pretty-printed), as a notebook does."""
        tree = ast.parse(code, filename, "exec")
        last = None
        tail = tree.body[-1] if tree.body else None
        if isinstance(tail, ast.Expr) and not code.rstrip().endswith(";"):
            tree.body.pop()
            last = ast.Expression(tail.value)
        exec(compile(tree, filename, "exec"), self.namespace)
        if last is not None:
            value = eval(compile(last, filename, "eval"), self.namespace)
            if value is not None:
                self.namespace["_"] = value
                print(pprint.pformat(value))


def _end_with_the_host(fd: int) -> None:
    """Without namespaces: end this kernel and its process group when the host's end of the channel closes (a
    worker killed mid-cell) while the kernel is busy and not reading. (With namespaces the launcher does this for the
    whole PID namespace.)"""
    poller = select.poll()
    poller.register(fd, 0)  # hang-ups only: the messages are the session's to read
    while not poller.poll():
        pass
    with contextlib.suppress(OSError):
        os.killpg(0, signal.SIGKILL)
    os._exit(1)


def _child_main() -> None:
    """The kernel's entry point: move the protocol off fds 0-2, then serve requests until shutdown."""
    # The protocol keeps private copies of the original stdin/stdout (not inherited by anything the code starts);
    # fd 0 is then /dev/null and fds 1 and 2 the host's output file, so no write to fd 1 can reach the parent.
    output_fd = int(sys.argv[1])
    inbound = os.fdopen(os.dup(0), "rb")
    outbound = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    os.close(output_fd)
    _Session(inbound, outbound).serve()


if __name__ == "__main__":
    _child_main()
