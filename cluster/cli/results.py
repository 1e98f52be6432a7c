"""Commands that read (and finish) stored runs: status, report, compare, sync, replay, episodes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from undertow.cluster import api
from undertow.cluster.cli.common import Format, RunArg, StoreOpt, console, errors, info, plain, run_command, warn
from undertow.cluster.cli.errors import OptionError, check_format, user_errors
from undertow.cluster.report import print_comparison, print_family_summaries, print_layout, print_summary
from undertow.cluster.report.layout_json import layout_json
from undertow.cluster.report.tables import add_row, new_table
from undertow.cluster.report.text import printable, printable_json
from undertow.env_core.untrusted import clean_value
from undertow.scoring.analysis import families_json, report_json

RunOrUri = Annotated[str, typer.Argument(metavar="RUN", help="run id under the store, a run folder, or s3:// URI")]
Store = Annotated[str, typer.Option("--store", help="run store folder or s3://bucket/prefix")]


@user_errors
def status(run_id: RunArg, store: StoreOpt = None) -> None:
    """Done / failed / pending shards and episodes per model × suite × setting, with the errors."""
    found = api.status(run_id, store)
    table = Table(title=plain(found.run_id, one_line=True), title_justify="left", box=box.SIMPLE_HEAD)
    columns = ("Model", "Suite", "Setting", "shards done", "failed", "pending", "episodes", "infra errors")
    config_errors = any(row.config_errors for row in found.rows)
    violations = any(row.violations for row in found.rows)
    columns += ("config errors",) * config_errors + ("sandbox violations",) * violations
    for column in columns:
        table.add_column(column, justify="left" if column in ("Model", "Suite", "Setting") else "right")
    for row in found.rows:
        numbers = [row.shards_done, row.shards_failed, row.shards_pending, row.episodes, row.infra_errors]
        numbers += [row.config_errors] * config_errors + [row.violations] * violations
        names = (plain(name, one_line=True) for name in (row.model, row.suite, row.setting))
        table.add_row(*names, *(str(n) for n in numbers))
    console.print(table)
    for group in found.groups[:10]:
        # the error and its frames may quote the model (a forged protocol message, its code's traceback): one
        # line each, so that a newline in them cannot make a line that looks like the command's own
        count = plain(f"{group.episodes} × {group.outcome}", "yellow", one_line=True)
        errors.print(Text.assemble(count, " ", plain(group.error, one_line=True)), highlight=False, soft_wrap=True)
        for frame in group.trace.split("\n") if group.trace else ():  # not splitlines: it breaks at \r too
            errors.print(plain(f"    {frame}", "dim", one_line=True), highlight=False, soft_wrap=True)
    if any(g.rerunnable for g in found.groups):
        where = f" --store {store}" if store else ""
        errors.print(plain(f"infra_error episodes can run again: undertow rerun {run_id} --failed{where}"))
    if any(g.outcome == "config_error" for g in found.groups):
        errors.print(
            "config_error episodes fail the same way on every attempt: fix the config or data and start a new run",
            soft_wrap=True,
        )
    if violations:
        errors.print(
            "sandbox_violation episodes are the model's doing (its code hit a limit of the sandbox, named above): "
            "they count as failures and are not rerun; the limits are under sandbox: in the config (SECURITY.md)",
            soft_wrap=True,
        )


@user_errors
def report(
    run_id: RunOrUri,
    format: Format = "table",
    store: Store = "runs",
    families: Annotated[
        bool, typer.Option("--families", help="json: the family analyses (HoHW tables) instead of the rows")
    ] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="also write a self-contained HTML report (tables, plots, a trace)")
    ] = None,
    layout: Annotated[
        str | None,
        typer.Option(
            "--layout",
            metavar="NAME",
            help="a family's report layout (e.g. hohw: a paper's tables) instead of the family tables; in --html "
            "too; with --format json its tables as JSON (docs/schema/report_layout.json)",
        ),
    ] = None,
) -> None:
    """Print the summary of a finished (or partly finished) run from its store."""
    check_format(format)
    if layout is not None and families:
        raise OptionError("--families: the family analyses or a layout's tables, not both; drop one")
    shown = api.report(run_id, store, html=html, layout=layout)
    if html is not None:
        errors.print(f"wrote {html}", markup=False, highlight=False, soft_wrap=True)
    if format == "json" and shown.layout_view is not None:
        laid_out = shown.layout_view
        print(printable_json(json.dumps(layout_json(shown.run_id, laid_out.name, laid_out.tables), indent=2)))
        return
    if format == "json":
        print(printable_json(families_json(shown.families) if families else report_json(shown.rows)))
        return
    print_summary(shown.rows, console, title=shown.run_id, status=run_command("status", shown.run_id, shown.location))
    view = shown.layout_view
    if view is not None:
        print_layout(view, shown.families, console)
    else:
        print_family_summaries(shown.families, console)
    if shown.pending:
        resume = run_command("resume", shown.run_id, shown.location)
        console.print(
            f"[yellow]{shown.pending} of {shown.n_shards} shard(s) have no committed results yet (if its driver "
            f"stopped, finish the run with: {escape(printable(resume))}).[/yellow]",
            soft_wrap=True,
        )


@user_errors
def compare(
    runs: Annotated[list[str], typer.Argument(metavar="RUN...", help="one run (its models) or several runs")],
    store: Store = "runs",
    html: Annotated[Path | None, typer.Option("--html", help="also write the comparison as an HTML report")] = None,
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="setting the recovery gap is measured from (default: clean)")
    ] = None,
    format: Format = "table",
) -> None:
    """Paired comparison of models on the same episodes (paired bootstrap CI and McNemar), and each model's
    recovery gap (baseline minus faulted accuracy). Models of several runs are told apart by run when their
    names collide."""
    check_format(format)
    compared = api.compare(runs, store, baseline=baseline, html=html)
    if compared.nothing_to_compare:
        warn(
            "nothing to compare: need two models with valid episodes on the same scenarios and seeds, or a "
            f"model run under '{compared.analysis.baseline}' and a faulted setting"
        )
    if format == "json":
        print(printable_json(compared.analysis.to_json()))
    else:
        print_comparison(compared.analysis, console)
    if html is not None:
        errors.print(f"wrote {html}", markup=False, highlight=False, soft_wrap=True)


@user_errors
def sync(
    run_id: RunOrUri,
    store: StoreOpt = None,
    mlflow: Annotated[
        str | None, typer.Option("--mlflow", help="MLflow tracking URI (default: the run's tracking config)")
    ] = None,
) -> None:
    """Upload what S3 lacks and log what MLflow lacks, after an outage. Safe to repeat: current objects and
    numbers are left alone. Exit status 1 while a service is still unreachable."""
    synced = api.sync(run_id, store, mlflow=mlflow, hooks=api.Hooks(info=info, warning=warn))
    if not synced.complete:
        raise typer.Exit(code=1)
    info(f"{synced.run_id}: in sync")


@user_errors
def replay(
    run_id: RunArg,
    episode: Annotated[str, typer.Argument(metavar="EPISODE", help="episode id (a unique prefix is enough)")],
    store: Annotated[str, typer.Option("--store", help="run store folder")] = "runs",
) -> None:
    """Re-run one episode from its recorded model replies; it must reproduce the trajectory and the score."""
    replayed = api.replay(run_id, episode, store)
    summary = (
        f"{replayed.episode_id} ({replayed.model}, {replayed.suite}, {replayed.setting}, {replayed.scenario_id}): "
        f"{replayed.n_turns} turns, {replayed.n_steps} steps, outcome {replayed.outcome}, score {replayed.score}"
    )
    if replayed.differences:
        errors.print(Text.assemble(("replay differs", "red"), " — ", plain(summary, one_line=True)), soft_wrap=True)
        for difference in replayed.differences:  # quotes the recorded trajectory: what the model wrote
            errors.print(plain(f"  {difference}", one_line=True), highlight=False, soft_wrap=True)
        raise typer.Exit(code=1)
    console.print(
        Text.assemble(("identical", "green"), " trajectory and score — ", plain(summary, one_line=True)), soft_wrap=True
    )


@user_errors
def episodes(
    run_id: RunArg,
    store: StoreOpt = None,
    model: Annotated[str | None, typer.Option("--model", help="only this model's episodes")] = None,
    setting: Annotated[str | None, typer.Option("--setting", help="only episodes under this setting")] = None,
    outcome: Annotated[
        str | None,
        typer.Option("--outcome", help="only episodes that ended so: scored, infra_error, config_error, pending..."),
    ] = None,
    format: Format = "table",
) -> None:
    """List a run's episodes (id, model, suite, setting, seed, scenario, outcome, error): the ids `undertow replay`
    takes."""
    check_format(format)
    rows = api.episodes(run_id, store, model=model, setting=setting, outcome=outcome)
    if format == "json":
        print(json.dumps(clean_value([row.as_dict() for row in rows]), indent=2))  # ASCII: \u escapes
        return
    columns = ["Episode", "Model", "Suite", "Setting", "Seed", "Scenario", "Outcome", "Error"]
    table = new_table("", [(c, "right" if c == "Seed" else "left") for c in columns])
    for row in rows:
        shown = (row.model, row.suite, row.setting, row.seed, row.scenario_id, row.outcome, row.error or "")
        add_row(table, row.episode_id, *shown)
    console.print(table)
    info(f"{len(rows)} episode(s)")
