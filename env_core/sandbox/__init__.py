"""A persistent Python kernel for one CodeAct episode, in a separate OS process.

The agent writes Python in ``<execute>`` blocks; ``Kernel.run`` runs each block in a notebook-like namespace that
survives between blocks, where every tool is a plain Python function (``function_12(...)``). A tool function does
not run the tool: it sends the call to the parent over the protocol channel and waits while the parent runs
``call_tool`` (faults, validation, execution and tracing all stay in the parent, which owns the database and the
gold data). A failed call raises ``ToolError`` in the agent's code, so the message shows in the traceback and can
be caught with ``try``/``except``.

Isolation is best effort, not a security boundary: resource limits (address space, CPU seconds, file size, open
files, no core files), a fresh temporary working directory deleted on close, an environment built from constants
(nothing of the parent's environment but PATH), an audit hook that refuses to start processes, and a protocol
channel that the agent's prints cannot reach. The kernel can still read any file the parent's user can read. POSIX
only. A ``Kernel`` is not thread-safe: use one per episode, from one thread at a time.

Modules:
    ``protocol``   the wire format and the data types both sides share (stdlib only);
    ``host``       ``Kernel``: starts, drives, times out and cleans up the child process;
    ``child``      the kernel process itself (``python -m env_core.sandbox.child``);
    ``isolation``  child side: rlimits and the audit hook;
    ``tracebacks`` child side: the agent-facing traceback text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from env_core.sandbox.protocol import CodeResult, FunctionStub, ToolReply, python_name

if TYPE_CHECKING:
    from env_core.sandbox.host import FILE_SIZE_LIMIT_MB, OPEN_FILES_LIMIT, START_TIMEOUT_S, Kernel, SandboxError
    from env_core.sandbox.tracebacks import MAX_TRACEBACK_FRAMES

__all__ = [
    "FILE_SIZE_LIMIT_MB",
    "MAX_TRACEBACK_FRAMES",
    "OPEN_FILES_LIMIT",
    "START_TIMEOUT_S",
    "CodeResult",
    "FunctionStub",
    "Kernel",
    "SandboxError",
    "ToolReply",
    "python_name",
]

# The host names load on first use: ``python -m env_core.sandbox.child`` imports this package first, and the child
# must not pay for (or depend on) the host module.
_LAZY = {
    "Kernel": "env_core.sandbox.host",
    "SandboxError": "env_core.sandbox.host",
    "START_TIMEOUT_S": "env_core.sandbox.host",
    "FILE_SIZE_LIMIT_MB": "env_core.sandbox.host",
    "OPEN_FILES_LIMIT": "env_core.sandbox.host",
    "MAX_TRACEBACK_FRAMES": "env_core.sandbox.tracebacks",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
