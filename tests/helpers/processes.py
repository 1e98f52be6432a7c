"""Finding the processes a test started, by what their command lines carry: never another test's, which may run
beside it under xdist (each test marks its own with a model name, a port or a temp folder)."""

from __future__ import annotations

import subprocess


def _listing(columns: str) -> list[list[str]]:
    text = subprocess.run(["ps", "-eww", "-o", columns], capture_output=True, text=True, check=True).stdout
    return [line.split(None, columns.count(",")) for line in text.splitlines()[1:]]


def processes_with(*markers: str) -> list[int]:
    """PIDs of the processes whose command line carries every marker (ps itself excluded)."""
    return [
        int(row[0])
        for row in _listing("pid,args")
        if len(row) > 1 and all(marker in row[1] for marker in markers) and not row[1].startswith("ps -eww")
    ]


def children_of(*parents: int) -> list[int]:
    """PIDs of the direct children of these processes."""
    return [int(pid) for pid, ppid in _listing("pid,ppid") if int(ppid) in parents]
