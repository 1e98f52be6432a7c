"""Child side: what confines the kernel process. Best effort, not a security boundary.

Resource limits (address space, CPU seconds, file size, open files, no core files) and an audit hook that refuses
to start processes. Installed by the child before it answers ``init``, so they cover all the agent's code.
"""

from __future__ import annotations

import resource
from typing import Any

# Process creation in the kernel: refused by an audit hook (works for root too, unlike RLIMIT_NPROC, and leaves
# threads alone). Best effort: ctypes could get around it.
BLOCKED_EVENTS = frozenset(
    {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen"}
)


def audit(event: str, args: tuple[Any, ...]) -> None:
    """The kernel's audit hook (``sys.addaudithook``): raises ``PermissionError`` for process creation."""
    if event in BLOCKED_EVENTS:
        raise PermissionError(f"starting processes is not allowed in this kernel ({event})")


def apply_limits(limits: dict[str, Any]) -> None:
    """Lower this process's rlimits to the ``limits`` of the ``init`` message (never above a hard limit)."""

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
