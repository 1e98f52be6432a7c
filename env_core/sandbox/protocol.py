"""What crosses the channel between the host (``Kernel``) and the child kernel, and the types the API returns.

Imported by both sides, so it uses the standard library only and stays cheap to import.

Protocol: one JSON object per line, on the child's original stdin (parent -> child) and stdout (child -> parent).
The code's output does not travel here: the kernel's fds 1 and 2 are a file the parent owns and reads.

    parent -> child: init{functions, limits, max_output, without_namespaces}  (answered by ready{pid})
                     run{code, cell}  (answered by call{name, arguments}* then done{error, printed, cell})
                     reply{ok, value, error, exception}    (the answer to one call; its notes go to the output)
                     get{name}     (answered by value{found, value}, or value{found, too_large})
                     define{functions}                     (answered by defined)
                     shutdown                              (answered by bye; the kernel exits)

A function in ``init`` and ``define`` is ``stub_json(FunctionStub)``: ``{name, parameters, description}``. The
``cell`` of ``run`` is a random token the kernel echoes in ``done``. No message nests deeper than ``MAX_DEPTH``.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from typing import Any


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


# Builtin exceptions a failed call may raise in the agent's code instead of the kernel's ``ToolError``: a closed
# list, so that the host names a class and the kernel never looks up an arbitrary attribute of ``builtins``.
RAISABLE = frozenset({"AssertionError", "RuntimeError", "TypeError", "ValueError"})

# Levels of arrays and objects in one message, the message object included. Deeper is refused by both sides: the
# kernel's values are cut to fit (``jsonable``), its tool arguments refused, and the host takes a deeper message
# for a forged one (it would also strain every recursive consumer of the data after it).
MAX_DEPTH = 100


@dataclass
class ToolReply:
    """What ``call_tool`` returns. ``value`` must be JSON data. ``notes`` are lines the tool prints (hints).

    A failed call (``ok`` false) raises ``ToolError(error)`` in the agent's code, or, when ``exception`` names one of
    ``RAISABLE``, that builtin exception with the same message (e.g. ``ValueError`` for a disabled function, as the
    HoHW paper's agent saw it)."""

    ok: bool
    value: Any = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    exception: str | None = None

    def __post_init__(self) -> None:
        if self.exception is not None and self.exception not in RAISABLE:
            raise ValueError(f"ToolReply.exception: {self.exception!r} is not one of {', '.join(sorted(RAISABLE))}")


@dataclass
class CodeResult:
    """The outcome of one ``Kernel.run``.

    ``output``: what the code printed (stdout and stderr), truncated to ``max_output`` characters with a note.
    ``error``: the user-facing traceback text if the code raised (or the kernel timed out or died), else None.
    ``timed_out``: the code exceeded ``step_timeout_s``; the kernel was killed and its variables are lost.
    ``violation``: what cap or limit of the sandbox the code hit (the kernel was killed), else None.
    """

    output: str
    error: str | None
    timed_out: bool
    duration_ms: float
    violation: str | None = None


def python_name(tool_name: str) -> str:
    """The identifier of a tool's function in the kernel: non-identifier characters become ``_``."""
    name = re.sub(r"\W", "_", tool_name)
    if not name or name[0].isdigit():
        name = "_" + name
    return name + "_" if keyword.iskeyword(name) else name


def stub_json(stub: FunctionStub) -> dict[str, Any]:
    """A ``FunctionStub`` as it travels in ``init`` and ``define``."""
    return {"name": stub.name, "parameters": list(stub.parameters), "description": stub.description}


def jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data: containers converted recursively, anything else by ``repr``; a container too deep to
    travel inside a message (``MAX_DEPTH``) by its ``repr`` too."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if depth >= MAX_DEPTH - 2:  # room for the message object; also ends reference cycles
        return repr(value)
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v, depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        try:
            items = sorted(value)
        except TypeError:
            items = list(value)
        return [jsonable(v, depth + 1) for v in items]
    if hasattr(type(value), "tolist"):  # numpy arrays and scalars
        try:
            return jsonable(value.tolist(), depth + 1)
        except Exception:
            pass
    return repr(value)


def argument_json(value: Any) -> Any:
    """``default`` for encoding tool arguments: sets and numpy values convert, anything else is refused."""
    if isinstance(value, set | frozenset):
        return list(value)
    if hasattr(type(value), "tolist"):
        return value.tolist()
    raise TypeError(f"an argument of type {type(value).__name__} cannot be passed to a tool")


def nesting_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Levels of containers (dicts, lists, tuples, sets) in ``value``: 0 for a scalar. Counts no further than
    ``limit + 1``, so that a reference cycle or a hostile depth ends the walk early. Iterative: no recursion limit."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple | set | frozenset):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest
