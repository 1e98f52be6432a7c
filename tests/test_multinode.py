"""A real two-node Ray cluster on this machine (127.0.0.2 head, 127.0.0.3 worker): a sweep spreads over both
nodes and records every episode exactly once, also when the second node dies mid-run."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.2", 0))
        return int(probe.getsockname()[1])


def _pids(marker: str, extra: str = "") -> list[int]:
    """PIDs of this test's Ray processes: every one carries the cluster's own temp dir in its command line."""
    listing = subprocess.run(["ps", "-eww", "-o", "pid,args"], capture_output=True, text=True, check=True).stdout
    return [
        int(line.split()[0])
        for line in listing.splitlines()
        if marker in line and extra in line and "ps -eww" not in line
    ]


def _children(parents: list[int]) -> list[int]:
    listing = subprocess.run(["ps", "-eww", "-o", "pid,ppid"], capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in listing.splitlines()[1:]]
    return [int(pid) for pid, ppid in rows if int(ppid) in parents]


@pytest.fixture
def cluster() -> Iterator[tuple[str, str, dict[str, str]]]:
    # unique, and short: Ray's socket paths live under it and Unix sockets take at most 107 bytes
    temp = Path(tempfile.mkdtemp(prefix="uray", dir="/tmp"))
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}  # the same for every process of this cluster
    port = _free_port()
    common = ["--num-cpus=1", "--memory=1500000000", "--object-store-memory=150000000", "--disable-usage-stats"]
    head = [
        str(BIN / "ray"),
        "start",
        "--head",
        "--node-ip-address=127.0.0.2",
        f"--port={port}",
        "--include-dashboard=false",
        f"--temp-dir={temp}",
        *common,
    ]
    worker = [
        str(BIN / "ray"),
        "start",
        f"--address=127.0.0.2:{port}",
        "--node-ip-address=127.0.0.3",
        f"--dashboard-agent-listen-port={_free_port()}",
        *common,
    ]
    try:
        for command in (head, worker):
            subprocess.run(command, env=env, check=True, timeout=120, capture_output=True)
        yield f"127.0.0.2:{port}", str(temp), env
    finally:
        for pid in _pids(str(temp)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


def _sweep(tmp_path: Path, **run: object) -> Path:
    config = {
        "name": "two-nodes",
        "models": [{"name": "oracle", "latency_s": 0.01}, "naive"],
        "suites": ["smoke"],
        "settings": ["clean", "first_tried"],
        "seeds": [0, 1],
        "run": {"store": str(tmp_path / "runs"), **run},
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _report(tmp_path: Path) -> list[dict]:
    from cluster.store import parquet_rows

    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return [r for p in (run_dir / "results").glob("*.parquet") for r in parquet_rows(p.read_bytes())], run_dir


def test_a_sweep_spreads_over_both_nodes_and_records_each_episode_once(
    cluster: tuple[str, str, dict[str, str]], tmp_path: Path
) -> None:
    address, _, env = cluster
    done = subprocess.run(
        [str(BIN / "undertow"), "run", str(_sweep(tmp_path, shard_size=10)), "--address", address, "--workers", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows, run_dir = _report(tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    planned = [e["episode_id"] for s in manifest["shards"] for e in s["episodes"]]
    assert Counter(r["episode_id"] for r in rows) == Counter(planned)  # every episode, exactly once
    nodes = Counter(r["worker"].split(":")[0] for r in rows)
    assert set(nodes) == {"127.0.0.2", "127.0.0.3"}, nodes


def test_the_second_node_dying_mid_run_loses_nothing(cluster: tuple[str, str, dict[str, str]], tmp_path: Path) -> None:
    address, temp, env = cluster
    driver = subprocess.Popen(
        [str(BIN / "undertow"), "run", str(_sweep(tmp_path, shard_size=10)), "--address", address, "--workers", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((tmp_path / "runs").glob("*/results/*.parquet"))) < 2:
        time.sleep(0.1)
    second = _pids(temp, "node_ip_address=127.0.0.3")
    second += _children(second)  # the node's worker processes (their titles do not carry the marker)
    assert second, "the second node's processes were not found"
    for pid in second:  # the worker node dies: its raylet and its workers
        os.kill(pid, signal.SIGKILL)
    stdout, stderr = driver.communicate(timeout=300)
    assert driver.returncode == 0, stderr
    rows, run_dir = _report(tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    planned = [e["episode_id"] for s in manifest["shards"] for e in s["episodes"]]
    assert Counter(r["episode_id"] for r in rows) == Counter(planned)
    assert "was retried after" in " ".join(stderr.split()), stdout[-500:]  # a shard lost with the node ran again


@pytest.fixture
def job_cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """A one-node cluster with its dashboard (the Ray Jobs server), on ports of its own."""
    temp = Path(tempfile.mkdtemp(prefix="uray", dir="/tmp"))
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    dashboard = _free_port()
    command = [
        str(BIN / "ray"),
        "start",
        "--head",
        "--node-ip-address=127.0.0.2",
        f"--port={_free_port()}",
        "--include-dashboard=true",
        "--dashboard-host=127.0.0.2",
        f"--dashboard-port={dashboard}",
        f"--dashboard-agent-listen-port={_free_port()}",
        f"--temp-dir={temp}",
        "--num-cpus=2",
        "--memory=2000000000",
        "--object-store-memory=150000000",
        "--disable-usage-stats",
    ]
    try:
        subprocess.run(command, env=env, check=True, timeout=120, capture_output=True)
        yield f"http://127.0.0.2:{dashboard}", env
    finally:
        for pid in _pids(str(temp)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


def test_submit_runs_the_sweep_on_the_cluster_as_a_ray_job(
    job_cluster: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    address, env = job_cluster
    folder = tmp_path / "job"
    folder.mkdir()
    store = tmp_path / "cluster-store"  # shared storage, as far as this one-machine cluster is concerned
    config = {
        "name": "submitted",
        "models": ["oracle"],
        "suites": [{"name": "smoke", "limit": 5}],
        "run": {"store": str(store)},
    }
    (folder / "sweep.yaml").write_text(yaml.safe_dump(config))
    done = None
    for _ in range(20):  # the job server needs a few seconds after the head starts
        done = subprocess.run(
            [str(BIN / "undertow"), "submit", str(folder / "sweep.yaml"), "--address", address, "--wait"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if "No available agent" not in done.stderr + done.stdout:
            break
        time.sleep(2)
    assert done is not None and done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "SUCCEEDED" in done.stdout
    (run_dir,) = [p for p in store.iterdir() if p.is_dir()]
    assert len(list((run_dir / "results").glob("*.parquet"))) == 1


def test_submit_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump({"models": ["oracle"], "suites": ["smoke"], "run": {"store": "runs"}}))
    done = subprocess.run(
        [str(BIN / "undertow"), "submit", str(path), "--address", "http://127.0.0.2:9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "needs a store that outlives the job" in " ".join(done.stderr.split())
    done = subprocess.run([str(BIN / "undertow"), "submit", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--address: give the cluster's dashboard address" in " ".join(done.stderr.split())
