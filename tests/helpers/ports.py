"""Free loopback ports for the servers the tests start.

They are taken from between Ray's worker ports (10002–19999) and the kernel's ephemeral range (32768 and up on
Linux): a port found free there cannot be taken by another process's outgoing connection (xdist runs two test
processes side by side, each with Ray, vLLM and HTTP clients) before the server binds it. Each process starts at
its own random place in the range, so two workers rarely probe the same ports."""

from __future__ import annotations

import random
import socket
from pathlib import Path

LOWEST = 20000


def _ephemeral_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


HIGHEST = max(_ephemeral_start() - 1, LOWEST + 1000)
_ORDER = random.Random()


def is_free(port: int) -> bool:
    """Nothing holds ``port`` on any local address (a bind to all of them fails if one does)."""
    with socket.socket() as probe:
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True


def free_port_block(count: int = 1) -> int:
    """The first of ``count`` consecutive free ports."""
    span = HIGHEST - LOWEST - count
    start = _ORDER.randrange(span)
    for offset in range(0, span, count):
        base = LOWEST + (start + offset) % span
        if all(is_free(base + i) for i in range(count)):
            return base
    raise RuntimeError(f"no {count} consecutive free ports between {LOWEST} and {HIGHEST}")


def free_port() -> int:
    return free_port_block(1)
