"""Runs a model server as its child and ends the server's whole process group when the process that started the
guard (a replica actor) dies.

``python -m cluster.server_guard -- COMMAND ...`` is started by the replica actor as the leader of a new process
group. The server (and the engine and tensor-parallel processes it starts) stay in that group, so the actor can end
them all with one ``killpg``. If the actor itself dies — killed, crashed, its node's raylet gone — nobody would:
Ray cleans up a dead worker's own process group, and the server deliberately left it. So the guard watches its
parent; once it is gone, the guard ends the group (SIGTERM, then SIGKILL). It exits with the server's exit status
otherwise. Standard library only: it starts in a fraction of a second and holds a few MB.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

GRACE_S = 30.0


def group_members(pgid: int) -> list[int]:
    """PIDs of the live processes of a process group (zombies excluded: they hold no memory and no GPU)."""
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended while we looked
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(name))
    return members


def _end_group() -> None:
    os.killpg(0, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and len(group_members(os.getpgid(0))) > 1:
        time.sleep(0.2)
    os.killpg(0, signal.SIGKILL)  # the guard included


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1 :] if "--" in argv else argv
    if not command:
        print("usage: python -m undertow.cluster.server_guard -- COMMAND [ARG ...]", file=sys.stderr)
        return 2
    parent = os.getppid()
    # a group-wide SIGTERM (the actor stopping the server) must not end the guard before the server: it reports
    # the server's exit status
    signal.signal(signal.SIGTERM, lambda *_: None)
    server = subprocess.Popen(command)
    while True:
        code = server.poll()
        if code is not None:
            return code if code >= 0 else 128 - code
        if os.getppid() != parent:  # the actor is gone: nobody else will end the server
            _end_group()
        time.sleep(0.5)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
