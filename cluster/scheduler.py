"""Executes a planned run on Ray: a pool of worker actors, one shard per actor at a time, results committed to the
store as each shard finishes.

Backpressure is simple and bounded: a shard is submitted only when an actor is idle and placed, so at most
``workers`` shards are in flight and finished results leave the object store as soon as they are committed. A worker
that dies is replaced and its shard retried; a shard that fails every attempt is recorded with every episode as
``infra_error`` (reason attached), so nothing planned goes missing. Served models run in waves of vLLM deployments
(``undertow.cluster.deployments``); every wait on Ray for them has a deadline that ends in an error naming the model.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import ray

from undertow.cluster.deployments import (
    GROUP_EXIT_S,
    RAY_CLEANUP_VARIABLE,
    Placement,
    cluster_nodes,
    plan_waves,
    start_replica,
)
from undertow.cluster.pairing import run_pairing
from undertow.cluster.plan import RunManifest
from undertow.cluster.store import RunStore
from undertow.env_core.errors import TRACE_FRAMES, InfraError, UndertowError, describe, rerunnable, strip_ansi
from undertow.env_core.model import Outcome
from undertow.retrieval.service import index_actor, release_index_actors
from undertow.workers.clients import EndpointModel, ServedModel, VLLMModel, probe_endpoint
from undertow.workers.runner import ShardOutput, ShardSpec, infra_error_shard, run_shard

LOOPBACK_IP = "127.0.0.2"  # Ray rewrites 127.0.0.1 to the public address; any other loopback address stays local
MAX_ATTEMPTS = 2
WORKER_PLACEMENT_S = 300.0  # how long a run waits for Ray to place its first episode worker


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


class ClusterUnreachable(InfraError, ConnectionError):
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


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to ``address`` or start a local Ray on loopback. True if this call started or joined Ray.

    A local Ray is started with per-worker process-group cleanup (``RAY_CLEANUP_VARIABLE``): whatever a dead worker
    started ends with it. On a cluster, ``ray start`` needs the same variable on every node."""
    if address:
        _check_address(address)
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    else:
        os.environ.setdefault(RAY_CLEANUP_VARIABLE, "true")  # read by the raylet this call starts
        ray.init(
            _node_ip_address=LOOPBACK_IP,
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
            num_cpus=num_cpus or os.cpu_count() or 1,
        )
    return True


@dataclass
class Execution:
    committed: list[str] = field(default_factory=list)
    retried: dict[str, list[str]] = field(default_factory=dict)  # shard id -> errors of failed attempts
    unreachable: dict[str, str] = field(default_factory=dict)  # model name -> why its endpoint is unreachable
    warnings: list[str] = field(default_factory=list)  # trouble that did not stop the run (a replica lost, ...)


def probe_models(shards: list[ShardSpec]) -> dict[str, str]:
    """Why each OpenAI-compatible endpoint in these shards is unreachable (only the unreachable ones)."""
    models = {s.model.name: s.model for s in shards if isinstance(s.model, ServedModel)}

    async def probe_all() -> list[str | None]:
        return await asyncio.gather(*(probe_endpoint(m) for m in models.values()))

    reasons = asyncio.run(probe_all()) if models else []
    return {name: reason for name, reason in zip(models, reasons, strict=True) if reason}


def plan_deployments(shards: Iterable[ShardSpec]) -> list[list[Placement]]:
    """The waves of vLLM deployments these shards need on the connected cluster. Raises ``PlacementError`` (before
    anything runs) for a model the cluster can never hold."""
    models = list({s.model.name: s.model for s in shards if isinstance(s.model, VLLMModel)}.values())  # sweep order
    return plan_waves(models, cluster_nodes()) if models else []


def execute(
    manifest: RunManifest,
    store: RunStore,
    workers: int | None = None,
    on_commit: Callable[[ShardOutput], None] | None = None,
    merge: dict[str, tuple[list[Any], list[Any]]] | None = None,
    notify: Callable[[str], None] | None = None,
) -> Execution:
    """Run every shard of ``manifest`` that the store has not committed yet. Ray must be initialized.

    Shards of built-in policies and external endpoints run first; then models that undertow serves with vLLM, in
    waves packed onto the GPUs of each node: each wave's servers start together, its shards run, its servers stop.
    ``notify`` hears about deployments as they start and stop. Raises ``PlacementError`` before running anything
    when a served model cannot fit the cluster.

    A shard whose episodes a family pairs with other episodes (``Family.pairs_with``: the judge reads their
    answers) runs after the shards holding those are committed, and is handed their answers from the store
    (``ShardSpec.paired_answers``), in the first pool and in every wave alike."""
    done = store.committed()
    pending = [s for s in manifest.shards if s.shard_id not in done]
    execution = Execution()
    waves = plan_deployments(pending)

    by_id = {s.shard_id: s for s in pending}

    def commit(output: ShardOutput) -> None:
        if merge and output.shard_id in merge:  # a partial rerun: the shard's kept episodes join the new ones
            results, trajectories = merge[output.shard_id]
            output.results = [*results, *output.results]
            output.trajectories = [*trajectories, *output.trajectories]
        try:
            store.commit(output)
        except OSError:  # the store itself is down or full (StorageUnavailable too): the driver cannot go on
            raise
        except Exception as exc:  # content that could not be written: the shard fails alone, with why
            reason = f"the shard's results could not be stored: {describe(exc)}"
            execution.warnings.append(f"shard {output.shard_id}: {reason}")
            output = infra_error_shard(by_id[output.shard_id], reason)
            store.commit(output)
        execution.committed.append(output.shard_id)
        if on_commit is not None:
            on_commit(output)

    execution.unreachable = probe_models([s for s in pending if isinstance(s.model, EndpointModel)])
    runnable: list[ShardSpec] = []
    for shard in pending:
        reason = execution.unreachable.get(shard.model.name)
        if reason is not None:
            commit(infra_error_shard(shard, f"endpoint unreachable: {reason}"))
        else:
            runnable.append(shard)
    if not runnable:
        return execution

    pairing = run_pairing(manifest, store)
    pending_ids = {s.shard_id for s in pending}

    def blocked(shard: ShardSpec) -> bool:
        # waits while a shard it is paired with is still to run in this execution (a paired shard is the same
        # model's, so it runs in the same pool or wave)
        waiting = pairing.needs(shard.shard_id) & pending_ids
        return bool(waiting - set(execution.committed))

    def paired(shard: ShardSpec) -> ShardSpec:
        return pairing.fill(shard, store)

    start_index_actors(runnable)
    size = max(1, min(workers or int(ray.cluster_resources().get("CPU", 1)), len(runnable)))
    pool = _WorkerPool(size, execution, commit)
    try:
        pool.run([s for s in runnable if not isinstance(s.model, VLLMModel)], prepare=paired, blocked=blocked)
        served = [s for s in runnable if isinstance(s.model, VLLMModel)]
        for wave in waves:
            _serve_wave(
                wave, served, pool, store, size, execution, notify or (lambda _: None), prepare=paired, blocked=blocked
            )
    finally:
        pool.close()
        release_index_actors()
    return execution


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
ERROR_CHARS = 1000  # an error's text as kept on an episode: enough for a message, not for a whole log


@dataclass(frozen=True)
class Failure:
    """Why a remote call failed: ``Type: message`` (one line, no colour codes), the last frames of the remote
    traceback, and whether running it again could end differently (by the exception's type)."""

    text: str
    trace: str | None
    rerunnable: bool


def failure(exc: BaseException) -> Failure:
    cause = exc.cause if isinstance(exc, ray.exceptions.RayTaskError) and exc.cause is not None else exc
    frames = [f"{path}:{line} in {name}" for path, line, name in _FRAME.findall(strip_ansi(str(exc)))]
    text = describe(cause)
    if len(text) > ERROR_CHARS:
        text = text[: ERROR_CHARS - 1] + "…"
    return Failure(text, "\n".join(frames[-TRACE_FRAMES:]) or None, rerunnable(cause))


def _error_text(exc: BaseException) -> str:
    """What went wrong inside a deployment's actor, without Ray's traceback wrapping: our own errors are phrased
    already (``vLLM exited with code 1 …``), anything else keeps its type."""
    cause = exc.cause if isinstance(exc, ray.exceptions.RayTaskError) and exc.cause is not None else exc
    return str(cause) if isinstance(cause, UndertowError) else failure(exc).text


def _wait_all(refs: dict[Any, Any], deadline_of: Callable[[Any], float]) -> tuple[dict[Any, Any], dict[Any, str]]:
    """The value of each ref (keyed by ``refs[ref]``), or why there is none: the error it raised, or "" when its
    deadline (monotonic seconds) passed first. Never waits past the latest deadline."""
    values: dict[Any, Any] = {}
    errors: dict[Any, str] = {}
    waiting = dict(refs)
    while waiting:
        ready, _ = ray.wait(list(waiting), num_returns=len(waiting), timeout=1.0)
        for ref in ready:
            key = waiting.pop(ref)
            try:
                values[key] = ray.get(ref)
            except ray.exceptions.RayError as exc:
                errors[key] = _error_text(exc)
        now = time.monotonic()
        for ref, key in list(waiting.items()):
            if now > deadline_of(key):
                del waiting[ref]
                errors[key] = ""
    return values, errors


class _Replicas:
    """The started replicas of a wave. ``assign`` gives a shard the next replica of its model that still serves
    (a shard stays on one replica: its episodes reuse the prefix cache), or why none does."""

    REFRESH_S = 5.0

    def __init__(self, started: dict[str, list[tuple[Any, str]]], execution: Execution, notify: Callable[[str], None]):
        self.started = started
        self.execution = execution
        self.notify = notify
        self.failures: dict[Any, str] = {}  # replica actor -> why it no longer serves
        self.turn: dict[str, int] = {}
        self.checked = time.monotonic()

    def _refresh(self) -> None:
        if time.monotonic() - self.checked < self.REFRESH_S:
            return
        self.checked = time.monotonic()
        actors = [actor for replicas in self.started.values() for actor, _ in replicas if actor not in self.failures]
        states, errors = _wait_all({actor.info.remote(): actor for actor in actors}, lambda _: self.checked + 30)
        for actor, info in states.items():
            if info["state"] == "failed":
                self.failures[actor] = info["failure"]
        for actor, error in errors.items():
            if error:  # the actor itself is gone; a slow answer is no verdict
                self.failures[actor] = f"its replica actor died: {error}"
        for name, replicas in self.started.items():
            if name not in self.execution.unreachable and all(a in self.failures for a, _ in replicas):
                why = self.failures[replicas[0][0]]
                self.execution.unreachable[name] = f"vLLM deployment failed: {why}"
                self.notify(f"model '{name}': vLLM deployment failed, its remaining shards are infra_error: {why}")

    def assign(self, shard: ShardSpec) -> ShardSpec | str:
        name = shard.model.name
        if name not in self.started:  # none of its replicas started
            return self.execution.unreachable[name]
        self._refresh()
        serving = [url for actor, url in self.started[name] if actor not in self.failures]
        if not serving:
            return self.execution.unreachable.get(name, "vLLM deployment failed")
        turn = self.turn.get(name, 0)
        self.turn[name] = turn + 1
        assert isinstance(shard.model, VLLMModel)  # only shards of vLLM models are assigned a replica
        return shard.model_copy(update={"model": shard.model.at(serving[turn % len(serving)])})


def _serve_wave(
    wave: list[Placement],
    served: list[ShardSpec],
    pool: _WorkerPool,
    store: RunStore,
    workers: int,
    execution: Execution,
    notify: Callable[[str], None],
    prepare: Callable[[ShardSpec], ShardSpec] = lambda shard: shard,
    blocked: Callable[[ShardSpec], bool] | None = None,
) -> None:
    """Start every replica of the wave at once, run their shards, stop them. A model none of whose replicas can
    be placed or started within its deadlines gets every episode recorded as infra_error, with the reason.
    ``prepare`` and ``blocked`` are the pool's (:meth:`_WorkerPool.run`); a shard is given its replica after
    ``prepare``."""
    workdir = str((store.folder / "deployments").resolve())  # absolute: replicas on other nodes write there too
    models = {p.model.name: p.model for p in wave}
    actors: dict[tuple[str, int], Any] = {}
    for placement in wave:
        model = placement.model
        max_num_seqs = model.max_num_seqs or min(256, model.concurrency * workers)
        for i, node in enumerate(placement.nodes):
            actors[(model.name, i)] = start_replica(model, workdir, max_num_seqs, node)
        notify(
            f"model '{model.name}': starting {model.replicas} vLLM replica(s) "
            f"(start-up limit {model.startup_limit_s:.0f} s; logs in {workdir})"
        )
    placed: dict[tuple[str, int], str] = {}
    try:
        # Placement (Ray finds each replica its node and GPUs), then start-up, each under the model's own deadline.
        began = time.monotonic()
        placed, unplaced = _wait_all(
            {actor.node.remote(): key for key, actor in actors.items()},
            lambda key: began + models[key[0]].placement_timeout_s,
        )
        began = time.monotonic()
        urls, failed = _wait_all(
            {actors[key].start.remote(): key for key in placed},
            lambda key: began + models[key[0]].startup_limit_s + 2 * GROUP_EXIT_S,  # the actor's limit comes first
        )
        for key, error in unplaced.items():
            model = models[key[0]]
            failed[key] = error or (
                f"Ray could not place replica {key[1] + 1} ({model.tensor_parallel if model.device == 'cuda' else 0} "
                f"GPU(s)) within placement_timeout_s = {model.placement_timeout_s:.0f} s"
            )
        for key, error in failed.items():
            failed[key] = error or f"the replica did not report within {models[key[0]].startup_limit_s:.0f} s"
        started: dict[str, list[tuple[Any, str]]] = {}
        for name, model in models.items():
            ok = [(actors[(name, i)], urls[(name, i)]) for i in range(model.replicas) if (name, i) in urls]
            lost = [failed[(name, i)] for i in range(model.replicas) if (name, i) in failed]
            if ok:
                started[name] = ok
                notify(f"model '{name}': {len(ok)} replica(s) ready after {time.monotonic() - began:.0f} s")
                if lost:
                    execution.warnings.append(f"model '{name}': {len(lost)} replica(s) did not start: {lost[0]}")
            else:
                execution.unreachable[name] = f"vLLM deployment failed: {lost[0]}"
                notify(f"model '{name}': vLLM deployment failed, its episodes are infra_error")
        replicas = _Replicas(started, execution, notify)
        shards = [s for s in served if s.model.name in models]
        pool.run(shards, prepare=lambda shard: replicas.assign(prepare(shard)), blocked=blocked)
    finally:
        # stop ends every server's process group (an actor never placed has none); then the actors go
        stopping = time.monotonic()
        _wait_all({actors[key].stop.remote(): key for key in placed}, lambda _: stopping + GROUP_EXIT_S + 30)
        for actor in actors.values():
            ray.kill(actor, no_restart=True)
        notify(f"stopped vLLM: {', '.join(models)}")


class _WorkerPool:
    """Worker actors that take one shard at a time: a shard goes only to an idle, placed actor (bounded work in
    flight; an actor Ray cannot place never holds a shard), a dead actor is replaced and its shard retried, and a
    shard that fails every attempt, or finds no worker placed within WORKER_PLACEMENT_S, is recorded. A shard that
    raises a config or data error (``env_core.errors``) is recorded as ``config_error`` at once: it would fail the
    same way again."""

    def __init__(self, size: int, execution: Execution, commit: Callable[[ShardOutput], None]):
        self.execution = execution
        self.commit = commit
        self.attempts: dict[str, int] = {}
        self.idle: list[Any] = []
        self.unplaced: dict[ray.ObjectRef, Any] = {}  # readiness ping -> actor not placed yet
        for _ in range(size):
            self._add()

    def _add(self) -> None:
        actor = EpisodeWorker.remote()
        self.unplaced[actor.node_id.remote()] = actor

    def _admit(self, timeout: float) -> None:
        """Workers Ray has placed since the last look become idle; with a ``timeout``, wait that long for one."""
        if not self.unplaced:
            return
        if timeout > 0:
            ray.wait(list(self.unplaced), num_returns=1, timeout=timeout)
        ready, _ = ray.wait(list(self.unplaced), num_returns=len(self.unplaced), timeout=0)
        for ref in ready:
            actor = self.unplaced.pop(ref)
            try:
                ray.get(ref)
            except ray.exceptions.RayError:
                continue  # died before its first shard (its node went away)
            self.idle.append(actor)

    def run(
        self,
        shards: list[ShardSpec],
        prepare: Callable[[ShardSpec], ShardSpec | str] | None = None,
        blocked: Callable[[ShardSpec], bool] | None = None,
    ) -> None:
        """Run ``shards``; ``prepare`` may rewrite a shard just before it is submitted, or say (a string) why it
        cannot run: it is then recorded as infra_error. A shard ``blocked`` says must wait is passed over until
        it no longer must (a shard committed since), or until nothing else is in flight or could run."""
        runnable = deque(shards)
        in_flight: dict[ray.ObjectRef, tuple[ShardSpec, Any]] = {}
        while runnable or in_flight:
            self._admit(timeout=0 if (self.idle or in_flight) else WORKER_PLACEMENT_S)
            if not self.idle and not in_flight:
                reason = f"no episode worker could be placed within {WORKER_PLACEMENT_S:.0f} s"
                while runnable:
                    self.commit(infra_error_shard(runnable.popleft(), reason))
                return
            while runnable and self.idle:
                shard = _next(runnable, blocked, waiting=bool(in_flight))
                if shard is None:
                    break  # every shard left waits for one in flight
                ready = prepare(shard) if prepare is not None else shard
                if isinstance(ready, str):
                    self.commit(infra_error_shard(shard, ready))
                    continue
                actor = self.idle.pop()
                self.attempts[shard.shard_id] = self.attempts.get(shard.shard_id, 0) + 1
                in_flight[actor.run.remote(ready)] = (shard, actor)
            if not in_flight:
                continue
            # wake for a finished shard, or, while shards wait, for a worker Ray has just placed
            done, _ = ray.wait([*in_flight, *(self.unplaced if runnable else ())], num_returns=1)
            if done[0] not in in_flight:
                continue  # the next pass admits it
            shard, actor = in_flight.pop(done[0])
            try:
                output = ray.get(done[0])
            except ray.exceptions.RayError as exc:
                why = failure(exc)
                if isinstance(exc, ray.exceptions.RayTaskError):
                    self.idle.append(actor)  # the shard raised; the worker itself is fine
                else:
                    ray.kill(actor, no_restart=True)
                    self._add()  # placed wherever Ray can; until then it takes no shard
                if not why.rerunnable:  # a config or data problem fails the same way on every attempt
                    self.commit(infra_error_shard(shard, why.text, Outcome.config_error, why.trace))
                elif self.attempts[shard.shard_id] < MAX_ATTEMPTS:
                    self.execution.retried.setdefault(shard.shard_id, []).append(why.text)
                    runnable.append(shard)
                else:
                    reason = f"worker failed {MAX_ATTEMPTS} times; last error: {why.text}"
                    self.commit(infra_error_shard(shard, reason, trace=why.trace))
                continue
            self.idle.append(actor)
            self.commit(output)

    def close(self) -> None:
        for actor in [*self.idle, *self.unplaced.values()]:
            ray.kill(actor, no_restart=True)
        self.idle, self.unplaced = [], {}


def _next(runnable: deque[ShardSpec], blocked: Callable[[ShardSpec], bool] | None, waiting: bool) -> ShardSpec | None:
    """Take the first shard of ``runnable`` that ``blocked`` lets run. None when every one must wait and some
    shard is in flight (``waiting``); with nothing in flight, the first one: what it waits for will not come."""
    for index, shard in enumerate(runnable):
        if blocked is None or not blocked(shard):
            del runnable[index]
            return shard
    return None if waiting else runnable.popleft()


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
