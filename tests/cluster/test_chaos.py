"""Failures of the execution layer: a worker process killed mid-shard loses nothing and doubles nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.scheduler import execute
from undertow.cluster.store import RunStore


def busy_workers() -> list[int]:
    """PIDs of this session's Ray worker processes running a shard (Ray titles them after the actor method). Only
    descendants of this process count: the local Ray the session started is its child, and another run's workers
    on the same machine are not this test's to kill."""
    listing = subprocess.run(["ps", "-eww", "-o", "pid,ppid,args"], capture_output=True, text=True, check=True).stdout
    parent: dict[int, int] = {}
    running: list[int] = []
    for line in listing.splitlines()[1:]:
        pid, ppid, *args = line.split(None, 2)
        parent[int(pid)] = int(ppid)
        if args and "ray::EpisodeWorker.run" in args[0]:
            running.append(int(pid))

    def ours(pid: int) -> bool:
        seen = set()
        while pid not in seen and pid > 1:
            if pid == os.getpid():
                return True
            seen.add(pid)
            pid = parent.get(pid, 0)
        return False

    return [pid for pid in running if ours(pid)]


@pytest.mark.slow
def test_a_worker_killed_mid_shard_is_replaced_and_its_shard_retried(tmp_path: Path, ray_local: None) -> None:
    config = SweepConfig.model_validate(
        {
            "name": "chaos",
            "models": [{"name": "oracle", "latency_s": 0.05}],
            "suites": ["smoke"],
            "settings": ["clean", "first_tried"],
            "seeds": [0, 1, 2],
            "run": {"store": str(tmp_path), "shard_size": 15},
        }
    )
    manifest = plan_sweep(config)
    store = RunStore(tmp_path / manifest.run_id)
    store.write_manifest(manifest)
    killed: list[int] = []

    def kill_one() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            if len(store.committed()) >= 2 and (pids := busy_workers()):
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.05)

    chaos = threading.Thread(target=kill_one)
    chaos.start()
    execution = execute(manifest, store, workers=2)
    chaos.join()
    assert killed, "no worker was busy to kill"
    assert execution.retried, "the killed worker's shard should have been retried"
    planned = [e.episode_id for s in manifest.shards for e in s.episodes]
    recorded = Counter(r.episode_id for r in store.results())
    assert sorted(recorded) == sorted(planned) and set(recorded.values()) == {1}  # all, once each
    assert not [r for r in store.results() if r.outcome.value == "infra_error"]  # the retry succeeded
