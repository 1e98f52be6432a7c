"""Child side: the traceback the agent sees when its code raises.

Only the agent's own frames are kept (the kernel's machinery, i.e. every frame in this package and the ``exec`` and
``ast.parse`` frames before the first cell, is dropped), and cell frames get Jupyter-style headers.
"""

from __future__ import annotations

import os
import re
import traceback

MAX_TRACEBACK_FRAMES = 30

# Every module of the sandbox package: frames in any of them are the kernel's, not the agent's.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_CELL_FRAME = re.compile(r'File "<cell-(\d+)>", line (\d+)(, in <module>)?')


def _is_kernel_frame(frame: traceback.FrameSummary) -> bool:
    return os.path.dirname(frame.filename) == _PACKAGE_DIR


def _strip_kernel_frames(exc: traceback.TracebackException, seen: set[int] | None = None) -> None:
    """Keep the user-facing frames of a traceback (and of its chained ones): the last frames from the first cell on."""
    seen = set() if seen is None else seen
    if id(exc) in seen:
        return
    seen.add(id(exc))
    frames = [frame for frame in exc.stack if not _is_kernel_frame(frame)]
    # Frames before the first cell frame are the kernel's machinery (exec, ast.parse): a SyntaxError has none left.
    first_cell = next((i for i, frame in enumerate(frames) if frame.filename.startswith("<cell-")), len(frames))
    frames = frames[first_cell:]
    exc.stack = traceback.StackSummary.from_list(frames[-MAX_TRACEBACK_FRAMES:])
    for chained in (exc.__cause__, exc.__context__, *(getattr(exc, "exceptions", None) or ())):
        if chained is not None:
            _strip_kernel_frames(chained, seen)


def format_error(exc: BaseException) -> str:
    """The agent-facing traceback text of ``exc``, without a trailing newline."""
    summary = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    _strip_kernel_frames(summary)
    text = "".join(summary.format())
    # Jupyter-style frame headers for the agent's own cells.
    return _CELL_FRAME.sub(lambda m: f"Cell In[{m.group(1)}], line {m.group(2)}", text).rstrip("\n")
