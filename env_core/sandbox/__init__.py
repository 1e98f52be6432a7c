"""A persistent Python kernel for one CodeAct episode, in a separate OS process.

The agent writes Python in ``<execute>`` blocks; ``Kernel.run`` runs each block in a notebook-like namespace that
survives between blocks, where every tool is a plain Python function (``function_12(...)``). A tool function does
not run the tool: it sends the call to the parent over the protocol channel and waits while the parent runs
``call_tool`` (faults, validation, execution and tracing all stay in the parent, which owns the database and the
gold data). A failed call raises ``ToolError`` in the agent's code (or the builtin exception the reply names:
``ValueError`` for a disabled function, ``AssertionError`` for an argument of the wrong type, as the HoHW agent saw
them), so the message shows in the traceback and can be caught with ``try``/``except``.

A boundary on Linux (``isolation``; what it guarantees, and does not, is in SECURITY.md): by default each kernel
runs in fresh user, mount, PID, network, IPC and UTS namespaces, as an unprivileged user without capabilities, in a
read-only view of the file system that holds the OS and the interpreter but no suite, gold answer, run store,
project source or worker environment, with no network, resource limits (address space, CPU seconds, processes,
file size, open files), a seccomp filter (x86-64 and ARM64) and a memory cap over all its processes. Where
namespaces are unavailable the ``rlimits`` level (resource limits only) runs only if the config accepts it
(``sandbox.require: rlimits``). The host owns the channel: it reads the output from a file it gave the kernel,
executes and records tool calls, and caps tool calls per cell and per episode and the size of every message
(``SandboxConfig``). A ``Kernel`` is not thread-safe: use one per episode, from one thread at a time.

Modules:
    ``protocol``   the wire format and the data types both sides share (stdlib only);
    ``host``       ``Kernel``: starts, drives, caps, times out and cleans up the kernel; ``SandboxConfig``; which
                   isolation this machine gives (``available_isolation``, probed once per process);
    ``child``      the kernel process itself (``python -m undertow.env_core.sandbox.child``);
    ``isolation``  the namespace launcher and the file-system view; rlimits (stdlib only);
    ``seccomp``    the seccomp filter the kernel starts under on x86-64 and ARM64 (stdlib only);
    ``tracebacks`` child side: the agent-facing traceback text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from undertow.env_core.sandbox.protocol import CodeResult, FunctionStub, ToolReply, python_name

if TYPE_CHECKING:
    from undertow.env_core.sandbox.host import (
        FILE_SIZE_LIMIT_MB,
        OPEN_FILES_LIMIT,
        START_TIMEOUT_S,
        Isolation,
        Kernel,
        SandboxConfig,
        SandboxError,
        SandboxUnavailable,
        available_isolation,
        check_isolation,
    )
    from undertow.env_core.sandbox.tracebacks import MAX_TRACEBACK_FRAMES

__all__ = [
    "FILE_SIZE_LIMIT_MB",
    "MAX_TRACEBACK_FRAMES",
    "OPEN_FILES_LIMIT",
    "START_TIMEOUT_S",
    "CodeResult",
    "FunctionStub",
    "Isolation",
    "Kernel",
    "SandboxConfig",
    "SandboxError",
    "SandboxUnavailable",
    "ToolReply",
    "available_isolation",
    "check_isolation",
    "python_name",
]

# The host names load on first use: ``python -m env_core.sandbox.child`` imports this package first, and the child
# must not pay for (or depend on) the host module.
_LAZY = {
    "Kernel": "undertow.env_core.sandbox.host",
    "Isolation": "undertow.env_core.sandbox.host",
    "SandboxConfig": "undertow.env_core.sandbox.host",
    "SandboxError": "undertow.env_core.sandbox.host",
    "SandboxUnavailable": "undertow.env_core.sandbox.host",
    "available_isolation": "undertow.env_core.sandbox.host",
    "check_isolation": "undertow.env_core.sandbox.host",
    "START_TIMEOUT_S": "undertow.env_core.sandbox.host",
    "FILE_SIZE_LIMIT_MB": "undertow.env_core.sandbox.host",
    "OPEN_FILES_LIMIT": "undertow.env_core.sandbox.host",
    "MAX_TRACEBACK_FRAMES": "undertow.env_core.sandbox.tracebacks",
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
