"""Running sweeps: :func:`run` plans and executes one on Ray (results committed to the store shard by shard)
and publishes it; :func:`resume` finishes one whose driver stopped; :func:`rerun` runs its failed shards again."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from undertow.cluster.api.hooks import Hooks, is_user_error
from undertow.cluster.api.outcomes import Kept, NothingToRerun, RunOutcome, RunProgress, RunStart
from undertow.cluster.api.planning import ConfigSource, load, plan
from undertow.cluster.api.publishing import publish, tracker_for
from undertow.cluster.config import ConfigError, SweepConfig
from undertow.cluster.plan import RunManifest
from undertow.cluster.store import RunStore, StoreError
from undertow.env_core.families import family_summaries
from undertow.env_core.model import Outcome
from undertow.scoring.summary import SummaryRow, summarize
from undertow.storage import StorageUnavailable

if TYPE_CHECKING:
    from undertow.workers.runner import ShardOutput

TEXT_CALL_THRESHOLD = 0.25


def run(
    config: ConfigSource,
    overrides: Sequence[str] | None = None,
    *,
    skip_invalid: bool = False,
    store: str | None = None,
    address: str | None = None,
    workers: int | None = None,
    hooks: Hooks | None = None,
) -> RunOutcome:
    """Run a sweep: plan it, write its manifest, run every shard on Ray (the cluster at ``address``, or a local
    Ray started for it) with results committed to the store as shards finish, then publish (S3, MLflow)."""
    hooks = hooks or Hooks()
    planned = plan(config, overrides, skip_invalid=skip_invalid, store=store, address=address, workers=workers)
    hooks.planned(planned)
    sweep, manifest = planned.config, planned.manifest
    owns_ray = _connect(sweep.run.ray_address)
    try:
        _check_deployments(manifest)
        run_store = RunStore.create(sweep.run.store, manifest.run_id, sweep.run.local_copy, sweep.run.s3_endpoint_url)
        run_store.write_manifest(manifest)
    except BaseException as exc:
        if owns_ray:
            _disconnect()
        if isinstance(exc, StorageUnavailable):
            raise StoreError(f"{exc}; nothing was run") from None
        if is_user_error(exc):
            raise
        if isinstance(exc, OSError):
            raise StoreError(f"store folder {sweep.run.store} is not writable: {exc}") from None
        raise
    hooks.started(RunStart(manifest.run_id, run_store.location, planned.n_shards, planned.n_shards, planned.n_episodes))
    return _execute(manifest, run_store, sweep.run.ray_address, sweep.run.workers, hooks, owns_ray=owns_ray)


def resume(
    run: str,
    config: ConfigSource | None = None,
    overrides: Sequence[str] | None = None,
    *,
    store: str | None = None,
    address: str | None = None,
    workers: int | None = None,
    hooks: Hooks | None = None,
) -> RunOutcome:
    """Finish a run whose driver stopped: only shards without a committed result run, committed ones never twice.
    With ``config`` (and the dotted ``overrides`` the run was started with), refuse, naming the difference, if it
    is not the config the run was planned from."""
    hooks = hooks or Hooks()
    if overrides and config is None:
        raise ConfigError("overrides apply to the run's config: give CONFIG before them")
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    if config is not None:
        from undertow.workers.replay import first_difference

        given = load(config, overrides).model_dump(mode="json", exclude={"run"})
        planned = {k: v for k, v in manifest.config.items() if k != "run"}
        # a section added since the run was planned (say, sandbox) differs only if it is set to something else
        default = SweepConfig.model_construct().model_dump(mode="json")
        given = {k: v for k, v in given.items() if k in planned or v != default.get(k)}
        difference = first_difference(planned, given, names=("the run has", "the config has"))
        if difference:
            where = "the config" if isinstance(config, SweepConfig) else str(config)
            raise ConfigError(f"{where} differs from the run's config, refusing to resume: {difference}")
    pending = [s for s in manifest.shards if s.shard_id not in run_store.committed()]
    episodes = sum(len(s.episodes) for s in pending)
    hooks.started(RunStart(manifest.run_id, run_store.location, len(manifest.shards), len(pending), episodes))
    return _execute(manifest, run_store, address or manifest.config["run"].get("ray_address"), workers, hooks)


def failed_shards(run_store: RunStore, manifest: RunManifest | None = None) -> list[str]:
    """Committed shards with at least one infra_error episode, in manifest order."""
    manifest = manifest or run_store.manifest()
    committed = run_store.committed()
    return [
        s.shard_id
        for s in manifest.shards
        if s.shard_id in committed
        and any(r.outcome == Outcome.infra_error for r in run_store.shard_results(s.shard_id))
    ]


def partial_manifest(manifest: RunManifest, kept: Kept) -> RunManifest:
    """The manifest with each shard of ``kept`` reduced to the episodes it does not keep (a partial rerun)."""
    shards = []
    for shard in manifest.shards:
        if shard.shard_id in kept:
            done = {r.episode_id for r in kept[shard.shard_id][0]}
            shard = shard.model_copy(update={"episodes": [e for e in shard.episodes if e.episode_id not in done]})
        shards.append(shard)
    return manifest.model_copy(update={"shards": shards})


def rerun(
    run: str,
    *,
    infra_only: bool = False,
    store: str | None = None,
    address: str | None = None,
    workers: int | None = None,
    hooks: Hooks | None = None,
) -> RunOutcome | NothingToRerun:
    """Run the failed shards of a run (those with infra_error episodes) again; their previous results move to
    ``history/`` and every other shard stays untouched. ``infra_only``: keep each failed shard's other episodes
    as they were and run only its infra_error ones."""
    hooks = hooks or Hooks()
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    shards = failed_shards(run_store, manifest)
    if not shards:
        return NothingToRerun(manifest.run_id)
    kept: Kept = {}
    if infra_only:  # keep each shard's good episodes; run only the ones the infrastructure lost
        for shard_id in shards:
            good = [r for r in run_store.shard_results(shard_id) if r.outcome != Outcome.infra_error]
            ids = {r.episode_id for r in good}
            kept[shard_id] = (good, [t for t in run_store.trajectories(shard_id) if t.episode_id in ids])
    for shard_id in shards:
        run_store.supersede(shard_id)
    todo = partial_manifest(manifest, kept) if infra_only else manifest
    episodes = sum(len(s.episodes) for s in todo.shards if s.shard_id in shards)
    hooks.started(RunStart(manifest.run_id, run_store.location, len(manifest.shards), len(shards), episodes))
    address = address or manifest.config["run"].get("ray_address")
    return _execute(todo, run_store, address, workers, hooks, merge=kept)


def _connect(address: str | None) -> bool:
    """Join the cluster at ``address`` or start a local Ray; True when this process owns the connection."""
    from undertow.cluster.scheduler import ensure_ray

    return ensure_ray(address)


def _disconnect() -> None:
    import ray

    ray.shutdown()


def _check_deployments(manifest: RunManifest) -> None:
    """Refuse, before anything runs, a served model that the connected cluster cannot hold (GPUs per node)."""
    from undertow.cluster.deployments import PlacementError
    from undertow.cluster.scheduler import plan_deployments

    try:
        plan_deployments(manifest.shards)
    except PlacementError as exc:
        raise ConfigError(f"cannot serve on this cluster: {exc}") from None


def _execute(
    manifest: RunManifest,
    run_store: RunStore,
    address: str | None,
    workers: int | None,
    hooks: Hooks,
    merge: Kept | None = None,
    owns_ray: bool | None = None,
) -> RunOutcome:
    """Run the uncommitted shards of a run, summarize it and publish it (run, resume, rerun). ``merge``: results
    and traces kept from earlier attempts, committed together with each shard's new ones. ``owns_ray``: the
    caller already connected (and whether it started Ray)."""
    from undertow.cluster.scheduler import execute

    merge = merge or {}
    pending = [s for s in manifest.shards if s.shard_id not in run_store.committed()]
    total = sum(len(s.episodes) for s in pending)
    started = time.perf_counter()
    if owns_ray is None:
        owns_ray = _connect(address)
        try:
            _check_deployments(manifest)
        except ConfigError:
            if owns_ray:
                _disconnect()
            raise
    run_store.warn = hooks.warning
    tracker = tracker_for(run_store, None, hooks.warning)
    if tracker is not None:
        tracker.start()
    counts: Counter[str] = Counter()

    def on_commit(output: ShardOutput) -> None:
        new = output.results[len(merge.get(output.shard_id, ([], []))[0]) :]  # kept ones come first
        counts.update(r.outcome.value for r in new)
        done = sum(counts.values())
        elapsed = time.perf_counter() - started
        infra = counts[Outcome.infra_error.value]
        hooks.progress(RunProgress(done, total, infra, elapsed, done / max(elapsed, 1e-9), output.shard_id))
        if tracker is not None:
            tracker.shard_committed(output.shard_id, output.results)

    try:
        hooks.progress(RunProgress(0, total, 0, time.perf_counter() - started, None))
        execution = execute(manifest, run_store, workers, on_commit, merge, notify=hooks.notice)
    finally:
        if owns_ray:
            _disconnect()
    elapsed = time.perf_counter() - started
    # every planned episode ends in exactly one outcome class: a run that loses or repeats one fails here, loudly
    run_store.check_accounting()
    # two streaming passes over the shard files: the driver never holds every result of a large run
    rows = summarize(run_store.iter_results())
    outcome = RunOutcome(
        run_id=manifest.run_id,
        location=run_store.location,
        manifest=manifest,
        elapsed_s=elapsed,
        ran=sum(counts.values()),
        outcomes=dict(counts),
        rows=rows,
        families=family_summaries(run_store.iter_results()),
        unreachable=dict(execution.unreachable),
        retried=dict(execution.retried),
        warnings=list(execution.warnings),
        text_call_warnings=text_call_warnings(rows),
    )
    hooks.executed(outcome)
    return replace(outcome, publish=publish(run_store, tracker, hooks))


def text_call_warnings(rows: Iterable[SummaryRow], threshold: float = TEXT_CALL_THRESHOLD) -> list[str]:
    """A warning for each model whose tool calls mostly came as text: they were read and run, but the server's
    parser (or chat template) probably does not match the model, and the model sees its calls in a format it was
    not trained on."""
    shares: dict[str, float] = {}
    for row in rows:
        if row.text_call_rate is not None:
            shares[row.model] = max(shares.get(row.model, 0.0), row.text_call_rate)
    return [
        f"model '{model}': {share:.0%} of its replies carried their tool calls as text rather than structured "
        "calls; they were read and run, but check the model's tool_call_parser and chat template (README: "
        "the parser table)"
        for model, share in shares.items()
        if share >= threshold
    ]
