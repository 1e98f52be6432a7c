"""Rendering summaries: a rich table for people, JSON for scripts."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

_SHORT = {
    "scored": "scored",
    "model_error": "model",
    "parse_error": "parse",
    "infra_error": "infra",
    "budget_exhausted": "budget",
}


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def new_table(title: str, columns: list[tuple[str, str]]) -> Table:
    """The house table style; ``columns`` are (header, "left" | "right"). Right-aligned columns hold numbers and
    intervals, which never wrap: narrow terminals squeeze the text columns instead."""
    table = Table(title=title or None, title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for column, justify in columns:
        table.add_column(column, justify=justify, no_wrap=justify == "right")  # type: ignore[arg-type]
    return table


def summary_table(rows: list[dict[str, Any]], title: str = "") -> Table:
    columns = [("Model", "left"), ("Suite", "left"), ("Setting", "left"), ("n", "right"), ("Accuracy", "right")]
    columns += [("95% CI", "right"), ("Gave up", "right"), ("Outcomes", "left"), ("Turns", "right")]
    table = new_table(title, columns)
    previous_model = None
    for row in rows:
        if previous_model is not None and row["model"] != previous_model:
            table.add_section()
        previous_model = row["model"]
        interval = "—" if row["accuracy"] is None else f"{100 * row['ci_low']:.0f}–{100 * row['ci_high']:.0f}"
        outcomes = " · ".join(f"{_SHORT[k]} {v}" for k, v in row["outcomes"].items() if v)
        turns = "—" if row["mean_turns"] is None else f"{row['mean_turns']:.1f}"
        table.add_row(
            row["model"],
            row["suite"],
            row["setting"],
            str(row["n"]),
            _pct(row["accuracy"]),
            interval,
            _pct(row["gave_up_rate"]),
            outcomes,
            turns,
        )
    return table


def print_summary(rows: list[dict[str, Any]], console: Console, title: str = "") -> None:
    console.print(summary_table(rows, title))
    infra = sum(r["outcomes"]["infra_error"] for r in rows)
    if infra:
        console.print(
            f"[yellow]{infra} episode(s) ended in infra_error: they are excluded from the rates above "
            "and can be rerun.[/yellow]"
        )


def summary_json(rows: list[dict[str, Any]]) -> str:
    return json.dumps(rows, indent=2)


def print_build_summary(stats: dict[str, Any], problems: list[Any], console: Console, shown: int = 10) -> None:
    """The sqlfuncs build summary: what each filter kept, functions by argument count, skipped items."""
    table = Table(title="sqlfuncs build", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("stage")
    table.add_column("count", justify="right")
    for stage, count in stats["stages"].items():
        table.add_row(stage, str(count))
    table.add_row("scenarios (with augmentation)", str(stats["scenarios"]))
    table.add_row("  of which augmented", str(stats["scenarios_augmented"]))
    table.add_row("functions", str(stats["functions"]))
    for arity, count in stats["functions_by_arguments"].items():
        table.add_row(f"  with {arity} argument(s)", str(count))
    table.add_row("skipped items", str(stats["skipped"]))
    for kind, count in stats["skipped_by_kind"].items():
        table.add_row(f"  {kind}", str(count))
    console.print(table)
    for problem in problems[:shown]:
        console.print(
            f"[yellow]skipped[/yellow] {problem.item}: {problem.kind}: {problem.reason}",
            highlight=False,
            soft_wrap=True,
        )
    if len(problems) > shown:
        console.print(f"... and {len(problems) - shown} more (all listed in build.json)")


def family_summaries(results: Iterable[Any]) -> dict[str, Any]:
    """Family-specific analyses of a run, keyed by suite label (sqlfuncs: the HoHW tables)."""
    from scoring.sqlfuncs import summarize_sqlfuncs

    by_suite: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if r.family == "sqlfuncs":
            row = {
                "model": r.model,
                "setting": r.setting,
                "correct": r.correct,
                "outcome": r.outcome.value,
                "n_turns": r.n_turns,
                **r.details,
            }
            by_suite.setdefault(r.suite, []).append(row)
    return {suite: summarize_sqlfuncs(rows) for suite, rows in by_suite.items()}


def _ci(row: dict[str, Any]) -> str:
    if row.get("accuracy") is None:
        return "—"
    return f"{100 * row['accuracy']:.1f}% [{100 * row['ci_low']:.0f}–{100 * row['ci_high']:.0f}]"


def print_family_summaries(summaries: dict[str, Any], console: Console) -> None:
    """Per suite: accuracy with bootstrap CI per setting, the clean → first_tried decrease, failure categories,
    and accuracy by the size of the backup plan that was left."""
    for suite, summary in summaries.items():
        settings = list(dict.fromkeys(s for m in summary["models"].values() for s in m["settings"]))
        title = f"{suite}: right behaviour — solved, or gave up when impossible (bootstrap 95% CI)"
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
        table.add_column("Model")
        for setting in settings:
            table.add_column(setting, justify="right")
        table.add_column(f"{summary['baseline']} → {summary['faulted']}", justify="right")
        table.add_column("backup: single / multi", justify="right")
        for model, data in summary["models"].items():
            decrease = data["decrease"]
            drop = (
                "—"
                if decrease is None
                else (
                    f"−{decrease['absolute_points']:.1f} pts"
                    + (f" ({decrease['relative_percent']:.0f}%)" if decrease["relative_percent"] is not None else "")
                )
            )
            strata = data["by_backup_plan_calls"]
            backup = f"{_ci(strata['single']).split(' ')[0]} / {_ci(strata['multi']).split(' ')[0]}"
            table.add_row(model, *(_ci(data["settings"].get(s, {})) for s in settings), drop, backup)
        console.print(table)
        failures = Table(
            title=f"{suite}: failures by category (% of failures)", title_justify="left", box=box.SIMPLE_HEAD
        )
        failures.add_column("Model")
        failures.add_column("Setting")
        failures.add_column("failures", justify="right")
        categories = [c for c in ("search", "id", "chaining", "tool_use", "no_give_up", "other", "uncategorized")]
        for category in categories:
            failures.add_column(category, justify="right")
        for model, data in summary["models"].items():
            for setting, row in data["settings"].items():
                errors = row["errors"]
                if not errors["n_failures"]:
                    continue
                shares = [errors["percent"].get(c) for c in categories]
                failures.add_row(
                    model, setting, str(errors["n_failures"]), *("—" if v is None else f"{v:.0f}" for v in shares)
                )
        if failures.row_count:
            console.print(failures)
