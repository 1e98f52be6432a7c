"""A real two-node Ray cluster on this machine (127.0.0.2 head, 127.0.0.3 worker): a sweep spreads over both
nodes and records every episode exactly once, also when the second node dies mid-run."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers.ports import free_port_block
from helpers.processes import children_of, processes_with

BIN = Path(sys.executable).parent


def node_ports(head: bool, *also: str) -> dict[str, int]:
    """Every port a node would otherwise pick itself, chosen outside the ephemeral range (helpers.ports): Ray picks
    free ephemeral ports and binds them later, and under xdist another test's connections can take one between."""
    names = ["node-manager-port", "object-manager-port", "metrics-export-port", "dashboard-agent-listen-port"]
    names += ["dashboard-agent-grpc-port", "runtime-env-agent-port"]
    if head:
        names.append("ray-client-server-port")  # 10001 by default: one head per machine
    names += also
    base = free_port_block(len(names))  # consecutive, so no two of them are the same
    return {name: base + i for i, name in enumerate(names)}


def flags(ports: dict[str, int]) -> list[str]:
    return [f"--{name}={port}" for name, port in ports.items()]


def start_node(command: list[str], env: dict[str, str], temp: Path) -> None:
    """``ray start``; when it fails, the error carries what it printed and the end of its logs."""
    done = subprocess.run(command, env=env, timeout=120, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        logs = sorted((temp / "session_latest" / "logs").glob("*.err")) if (temp / "session_latest").exists() else []
        tails = "".join(f"\n--- {log.name}:\n{log.read_text(errors='replace')[-1500:]}" for log in logs)
        raise AssertionError(
            f"{' '.join(command[:3])} exited with {done.returncode}:\n{done.stdout[-2000:]}"
            f"\n{done.stderr[-3000:]}{tails}"
        )


@contextlib.contextmanager
def two_nodes(head_gpus: int = 0, worker_gpus: int = 0) -> Iterator[tuple[str, str, dict[str, str]]]:
    """A head on 127.0.0.2 and a worker on 127.0.0.3, one CPU each, with as many logical GPUs as asked, started the
    way the README tells cluster users to (per-worker process-group cleanup on)."""
    # unique, and short: Ray's socket paths live under it and Unix sockets take at most 107 bytes
    temp = Path(tempfile.mkdtemp(prefix="uray", dir="/tmp"))
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_process_group_cleanup_enabled": "true"}
    head_ports = node_ports(True, "port")
    port = head_ports["port"]
    common = ["--num-cpus=1", "--memory=1500000000", "--object-store-memory=150000000", "--disable-usage-stats"]
    head = [
        str(BIN / "ray"),
        "start",
        "--head",
        "--node-ip-address=127.0.0.2",
        "--include-dashboard=false",
        f"--temp-dir={temp}",
        f"--num-gpus={head_gpus}",
        *flags(head_ports),
        *common,
    ]

    def worker() -> list[str]:  # its ports are chosen once the head holds its own
        return [
            str(BIN / "ray"),
            "start",
            f"--address=127.0.0.2:{port}",
            "--node-ip-address=127.0.0.3",
            f"--num-gpus={worker_gpus}",
            *flags(node_ports(False)),
            *common,
        ]

    try:
        start_node(head, env, temp)
        start_node(worker(), env, temp)
        yield f"127.0.0.2:{port}", str(temp), env
    finally:
        for pid in processes_with(str(temp)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


Cluster = tuple[str, str, dict[str, str]]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """One two-node cluster, with 2 and 4 logical GPUs (what Ray schedules against, without GPUs on this machine),
    for the tests in this file's order: a sweep spreads over it, replicas are placed on it, and last a sweep loses
    its second node."""
    with two_nodes(head_gpus=2, worker_gpus=4) as running:
        yield running


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


def _two_worker_run(tmp_path: Path, address: str) -> list[str]:
    """The command that runs the sweep (shards of 10 episodes) on the cluster at ``address`` with two workers."""
    return [str(BIN / "undertow"), "run", str(_sweep(tmp_path, shard_size=10)), "--address", address, "--workers", "2"]


def _report(tmp_path: Path) -> list[dict]:
    from undertow.cluster.store import parquet_rows

    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return [r for p in (run_dir / "results").glob("*.parquet") for r in parquet_rows(p.read_bytes())], run_dir


@pytest.mark.cluster
def test_a_sweep_spreads_over_both_nodes_and_records_each_episode_once(cluster: Cluster, tmp_path: Path) -> None:
    address, _, env = cluster
    done = subprocess.run(_two_worker_run(tmp_path, address), env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows, run_dir = _report(tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    planned = [e["episode_id"] for s in manifest["shards"] for e in s["episodes"]]
    assert Counter(r["episode_id"] for r in rows) == Counter(planned)  # every episode, exactly once
    nodes = Counter(r["worker"].split(":")[0] for r in rows)
    assert set(nodes) == {"127.0.0.2", "127.0.0.3"}, nodes


def _ran_on(tmp_path: Path, node: str) -> bool:
    from undertow.cluster.store import parquet_rows

    for path in (tmp_path / "runs").glob("*/results/*.parquet"):
        with contextlib.suppress(OSError, ValueError):  # a file being renamed into place
            if any(row["worker"].startswith(f"{node}:") for row in parquet_rows(path.read_bytes())):
                return True
    return False


@pytest.fixture
def job_cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """A one-node cluster with its dashboard (the Ray Jobs server), on ports of its own."""
    temp = Path(tempfile.mkdtemp(prefix="uray", dir="/tmp"))
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    ports = node_ports(True, "port", "dashboard-port")
    dashboard = ports["dashboard-port"]
    command = [
        str(BIN / "ray"),
        "start",
        "--head",
        "--node-ip-address=127.0.0.2",
        "--include-dashboard=true",
        "--dashboard-host=127.0.0.2",
        *flags(ports),
        f"--temp-dir={temp}",
        "--num-cpus=2",
        "--memory=2000000000",
        "--object-store-memory=150000000",
        "--disable-usage-stats",
    ]
    try:
        start_node(command, env, temp)
        yield f"http://127.0.0.2:{dashboard}", env
    finally:
        for pid in processes_with(str(temp)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.cluster
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
        "suites": [{"family": "smoke", "limit": 5}],
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


PLACE = """
import json, sys, time
import ray
from undertow.cluster.deployments import cluster_nodes, plan_waves, start_replica
from undertow.workers.clients import VLLMModel

ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
def model(name, tp, replicas=1):
    return VLLMModel(name=name, weights=f"org/{name}", tensor_parallel=tp, replicas=replicas,
                     tool_call_parser="hermes")
nodes = cluster_nodes()
address = {n.node_id: n.address for n in nodes}
waves = plan_waves([model("a", 3), model("b", 2), model("c", 2)], nodes)
planned = [[(p.model.name, [address[n] for n in p.nodes]) for p in wave] for wave in waves]
# the first wave's replica actors, pinned where the plan put them: where does Ray run them, with which GPUs?
actors = [(p.model.name, start_replica(p.model, sys.argv[2], 4, node)) for p in waves[0] for node in p.nodes]
placed = {}
for name, actor in actors:
    node = ray.get(actor.node.remote(), timeout=60)
    placed[name] = address[node]
free = ray.available_resources().get("GPU", 0)
try:
    plan_waves([model("d", 2, replicas=4)], nodes)
    refusal = None
except Exception as exc:
    refusal = str(exc)
print(json.dumps({"planned": planned, "placed": placed, "free": free, "refusal": refusal}))
"""


@pytest.mark.cluster
def test_replicas_are_packed_and_placed_per_node_and_oversized_models_refused(cluster: Cluster, tmp_path: Path) -> None:
    address, _, env = cluster
    done = subprocess.run(
        [sys.executable, "-c", PLACE, address, str(tmp_path)], env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    # 6 GPUs in all, 4 and 2 per node: the 3-GPU model takes the larger node, the first 2-GPU model the smaller
    # one, and the second (which the cluster's 3 free GPUs in total would have admitted) waits for the next wave
    assert found["planned"] == [[["a", ["127.0.0.3"]], ["b", ["127.0.0.2"]]], [["c", ["127.0.0.3"]]]]
    assert found["placed"] == {"a": "127.0.0.3", "b": "127.0.0.2"}  # Ray placed each where the plan said
    assert found["free"] == 1  # 6 - 3 - 2: each replica holds its tensor-parallel GPUs
    assert found["refusal"] == (
        "model 'd': tensor_parallel 2 × 4 replicas: the cluster holds at most 3 such replicas at once "
        "(GPUs per node: 127.0.0.2: 2, 127.0.0.3: 4); lower replicas to 3"
    )

    # through the CLI: a model larger than any node is refused before anything runs, and no run is created
    config = {
        "name": "too-big",
        "models": [
            "oracle",
            {
                "name": "llama-70b",
                "kind": "vllm",
                "weights": "org/llama-70b",
                "tensor_parallel": 8,
                "tool_call_parser": "llama3_json",
            },
        ],
        "suites": [{"family": "smoke", "limit": 2}],
        "run": {"store": str(tmp_path / "runs")},
    }
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(config))
    refused = subprocess.run(
        [str(BIN / "undertow"), "run", str(tmp_path / "sweep.yaml"), "--address", address],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert " ".join(refused.stderr.split()) == (
        "error: cannot serve on this cluster: model 'llama-70b': tensor_parallel 8 needs 8 GPUs on one node, and the "
        "largest node has 4 (GPUs per node: 127.0.0.2: 2, 127.0.0.3: 4); lower tensor_parallel, or add a node with 8 "
        "GPUs"
    )
    assert not (tmp_path / "runs").exists()


@pytest.mark.cluster
def test_the_second_node_dying_mid_run_loses_nothing(cluster: Cluster, tmp_path: Path) -> None:
    """Last: the cluster's second node does not come back."""
    address, temp, env = cluster
    driver = subprocess.Popen(
        _two_worker_run(tmp_path, address), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    # the second node has committed a shard, so it is working on the next one when it dies
    while time.monotonic() < deadline and not _ran_on(tmp_path, "127.0.0.3"):
        time.sleep(0.1)
    second = processes_with(temp, "node_ip_address=127.0.0.3")
    second += children_of(*second)  # the node's worker processes (their titles do not carry the marker)
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
