"""Executes a planned run on Ray: a pool of worker actors, one shard per actor at a time, results committed to the
store as each shard finishes.

Backpressure is simple and bounded: a shard is submitted only when an actor is idle, so at most ``workers`` shards
are in flight and finished results leave the object store as soon as they are committed. A worker that dies is
replaced and its shard retried; a shard that fails every attempt is recorded with every episode as ``infra_error``
(reason attached), so nothing planned goes missing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections import deque
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import ray

from cluster.deployments import pack, start_replica
from cluster.plan import RunManifest
from cluster.store import RunStore
from retrieval.service import index_actor, release_index_actors
from workers.clients import ModelConfig, probe_endpoint
from workers.runner import ShardOutput, ShardSpec, infra_error_shard, run_shard

LOOPBACK_IP = "127.0.0.2"  # Ray rewrites 127.0.0.1 to the public address; any other loopback address stays local
MAX_ATTEMPTS = 2


@ray.remote(num_cpus=1)
class EpisodeWorker:
    """Runs shards in its own process; suites are loaded once per process and reused across shards."""

    def run(self, shard: ShardSpec) -> ShardOutput:
        output = run_shard(shard)
        where = f"{ray.util.get_node_ip_address()}:{os.getpid()}"  # the node, for placement checks
        output.results = [r.model_copy(update={"worker": where}) for r in output.results]
        return output

    def node_id(self) -> str:
        return ray.get_runtime_context().get_node_id()


class ClusterUnreachable(ConnectionError):
    """No Ray cluster answers at the given address."""


def _check_address(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast and clearly when nothing listens at host:port (Ray itself would retry for a long time)."""
    target = address.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        return  # "auto" and other forms: let Ray resolve them
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return
    except OSError as exc:
        raise ClusterUnreachable(f"no Ray cluster answers at {address} (checked for {timeout_s:.0f} s: {exc})") from exc


def ensure_ray(address: str | None = None) -> bool:
    """Connect to ``address`` or start a local Ray on loopback. True if this call started or joined Ray."""
    if address:
        _check_address(address)
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    else:
        ray.init(
            _node_ip_address=LOOPBACK_IP,
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
            num_cpus=os.cpu_count() or 1,
        )
    return True


@dataclass
class Execution:
    committed: list[str] = field(default_factory=list)
    retried: dict[str, list[str]] = field(default_factory=dict)  # shard id -> errors of failed attempts
    unreachable: dict[str, str] = field(default_factory=dict)  # model name -> why its endpoint is unreachable


def probe_models(shards: list[ShardSpec]) -> dict[str, str]:
    """Why each OpenAI-compatible endpoint in these shards is unreachable (only the unreachable ones)."""
    models = {s.model.name: s.model for s in shards if s.model.served}

    async def probe_all() -> list[str | None]:
        return await asyncio.gather(*(probe_endpoint(m) for m in models.values()))

    reasons = asyncio.run(probe_all()) if models else []
    return {name: reason for name, reason in zip(models, reasons, strict=True) if reason}


def execute(
    manifest: RunManifest,
    store: RunStore,
    workers: int | None = None,
    on_commit: Callable[[ShardOutput], None] | None = None,
    merge: dict[str, tuple[list[Any], list[Any]]] | None = None,
) -> Execution:
    """Run every shard of ``manifest`` that the store has not committed yet. Ray must be initialized.

    Shards of built-in policies and external endpoints run first; then models that undertow serves with vLLM, in
    waves packed onto the free GPUs: each wave's servers start, its shards run, its servers stop."""
    done = store.committed()
    pending = [s for s in manifest.shards if s.shard_id not in done]
    execution = Execution()

    def commit(output: ShardOutput) -> None:
        if merge and output.shard_id in merge:  # a partial rerun: the shard's kept episodes join the new ones
            results, trajectories = merge[output.shard_id]
            output.results = [*results, *output.results]
            output.trajectories = [*trajectories, *output.trajectories]
        store.commit(output)
        execution.committed.append(output.shard_id)
        if on_commit is not None:
            on_commit(output)

    execution.unreachable = probe_models([s for s in pending if s.model.kind == "openai"])
    runnable: list[ShardSpec] = []
    for shard in pending:
        reason = execution.unreachable.get(shard.model.name)
        if reason is not None:
            commit(infra_error_shard(shard, f"endpoint unreachable: {reason}"))
        else:
            runnable.append(shard)
    if not runnable:
        return execution

    start_index_actors(runnable)
    size = max(1, min(workers or int(ray.cluster_resources().get("CPU", 1)), len(runnable)))
    pool = _WorkerPool(size, execution, commit)
    try:
        pool.run([s for s in runnable if s.model.kind != "vllm"])
        served = [s for s in runnable if s.model.kind == "vllm"]
        models = list({s.model.name: s.model for s in served}.values())
        for wave in pack(models, int(ray.cluster_resources().get("GPU", 0))):
            _serve_wave(wave, served, pool, store, size, execution, commit)
    finally:
        pool.close()
        release_index_actors()
    return execution


def _serve_wave(
    wave: list[ModelConfig],
    served: list[ShardSpec],
    pool: _WorkerPool,
    store: RunStore,
    workers: int,
    execution: Execution,
    commit: Callable[[ShardOutput], None],
) -> None:
    """Start the wave's vLLM replicas, run their shards (a shard stays on one replica: prefix-cache reuse), stop
    them. A model whose servers cannot start gets every episode recorded as infra_error, with the reason."""
    replicas: dict[str, list[Any]] = {}
    urls: dict[str, list[str]] = {}
    for model in wave:
        max_num_seqs = model.max_num_seqs or min(256, model.concurrency * workers)
        actors = [start_replica(model, str(store.folder / "deployments"), max_num_seqs) for _ in range(model.replicas)]
        replicas[model.name] = actors
        try:
            urls[model.name] = ray.get([actor.start.remote() for actor in actors])
        except ray.exceptions.RayError as exc:
            cause = str(exc.cause) if isinstance(exc, ray.exceptions.RayTaskError) else str(exc)
            execution.unreachable[model.name] = f"vLLM deployment failed: {cause}"
    try:
        shards = []
        for model in wave:
            own = [s for s in served if s.model.name == model.name]
            if model.name not in urls:
                for shard in own:
                    commit(infra_error_shard(shard, execution.unreachable[model.name]))
                continue
            for i, shard in enumerate(own):
                url = urls[model.name][i % len(urls[model.name])]
                shards.append(shard.model_copy(update={"model": model.model_copy(update={"base_url": url})}))
        pool.run(shards)
    finally:
        for actors in replicas.values():
            for actor in actors:
                with suppress(ray.exceptions.RayError):
                    ray.get(actor.stop.remote(), timeout=60)
                ray.kill(actor, no_restart=True)


class _WorkerPool:
    """Worker actors that take one shard at a time: a shard is submitted only to an idle actor (bounded work in
    flight), a dead actor is replaced and its shard retried, a shard that fails every attempt is recorded."""

    def __init__(self, size: int, execution: Execution, commit: Callable[[ShardOutput], None]):
        self.idle = [EpisodeWorker.remote() for _ in range(size)]
        self.execution = execution
        self.commit = commit
        self.attempts: dict[str, int] = {}

    def run(self, shards: list[ShardSpec]) -> None:
        runnable = deque(shards)
        in_flight: dict[ray.ObjectRef, tuple[ShardSpec, Any]] = {}
        while runnable or in_flight:
            while runnable and self.idle:
                shard, actor = runnable.popleft(), self.idle.pop()
                self.attempts[shard.shard_id] = self.attempts.get(shard.shard_id, 0) + 1
                in_flight[actor.run.remote(shard)] = (shard, actor)
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            shard, actor = in_flight.pop(ready[0])
            try:
                output = ray.get(ready[0])
            except ray.exceptions.RayError as exc:
                error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
                self.execution.retried.setdefault(shard.shard_id, []).append(error)
                ray.kill(actor, no_restart=True)
                # Replace the worker only where it can run: if its node is gone, a replacement that cannot be
                # placed would hold the shard forever. An empty pool always gets one (it waits for capacity).
                if ray.available_resources().get("CPU", 0) >= 1 or not (self.idle or in_flight):
                    self.idle.append(EpisodeWorker.remote())
                if self.attempts[shard.shard_id] < MAX_ATTEMPTS:
                    runnable.append(shard)
                else:
                    self.commit(infra_error_shard(shard, f"worker failed {MAX_ATTEMPTS} times; last error: {error}"))
                continue
            self.idle.append(actor)
            self.commit(output)

    def close(self) -> None:
        for actor in self.idle:
            ray.kill(actor, no_restart=True)
        self.idle = []


def start_index_actors(shards: Iterable[ShardSpec]) -> None:
    """One retrieval index actor per alive node for each retrieval config that open-world shards use, created
    (and so owned) by the driver: workers find them by name, and they outlive any single worker."""
    configs = {
        s.retrieval.model_dump_json(): s.retrieval
        for s in shards
        if s.suite.access.mode == "open" and s.suite.access.search != "lexical" and s.retrieval.service == "actor"
    }
    for config in configs.values():
        for node in ray.nodes():
            if node.get("Alive"):
                index_actor(config, node["NodeID"])
