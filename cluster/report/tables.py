"""Terminal tables (rich): the run summary, paired comparisons, recovery gaps, and any :class:`ReportTable` a family
or a build hands over, rendered without knowing what it holds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich import box
from rich.console import Console
from rich.table import Table

from env_core.families import FamilySummary, ReportTable
from env_core.model import Outcome
from scoring.analysis import Analysis
from scoring.formatting import MISSING, ci_range, number, p_value, pct, points, signed_interval
from scoring.summary import SummaryRow

_SHORT = {
    Outcome.scored.value: "scored",
    Outcome.model_error.value: "model",
    Outcome.parse_error.value: "parse",
    Outcome.infra_error.value: "infra",
    Outcome.budget_exhausted.value: "budget",
}


def new_table(title: str, columns: list[tuple[str, str]]) -> Table:
    """The house table style; ``columns`` are (header, "left" | "right"). Right-aligned columns hold numbers and
    intervals, which never wrap: narrow terminals squeeze the text columns instead."""
    table = Table(title=title or None, title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for column, justify in columns:
        table.add_column(column, justify=justify, no_wrap=justify == "right")  # type: ignore[arg-type]
    return table


# ---------------------------------------------------------------------------------------------------------------
# Generic: a ReportTable


def report_table(table: ReportTable) -> Table:
    """A :class:`ReportTable` in the house style: its right-aligned columns, a separator before each section."""
    right = [*table.right, *[False] * (len(table.columns) - len(table.right))]
    out = new_table(table.title, [(c, "right" if r else "left") for c, r in zip(table.columns, right, strict=False)])
    sections = set(table.sections)
    for i, row in enumerate(table.rows):
        if i in sections and i > 0:
            out.add_section()
        out.add_row(*row)
    return out


def print_report_table(table: ReportTable, console: Console) -> None:
    """The table, then its note; a table without rows prints only its note."""
    if table.rows:
        console.print(report_table(table))
    if table.note:
        console.print(table.note, highlight=False, soft_wrap=True)


def print_tables(tables: Iterable[ReportTable], console: Console) -> None:
    """Tables in order (what a family's build returns, say)."""
    for table in tables:
        print_report_table(table, console)


def print_family_summaries(summaries: Mapping[str, FamilySummary], console: Console) -> None:
    """Every family analysis's tables, suite by suite."""
    for suite, summary in summaries.items():
        print_tables(summary.tables(suite), console)


# ---------------------------------------------------------------------------------------------------------------
# The run summary: `undertow run` and `undertow report`


def summary_table(rows: list[SummaryRow], title: str = "") -> Table:
    columns = [("Model", "left"), ("Suite", "left"), ("Setting", "left"), ("n", "right"), ("Accuracy", "right")]
    columns += [("95% CI", "right"), ("Gave up", "right"), ("Outcomes", "left"), ("Turns", "right")]
    table = new_table(title, columns)
    previous_model = None
    for row in rows:
        if previous_model is not None and row.model != previous_model:
            table.add_section()
        previous_model = row.model
        table.add_row(
            row.model,
            row.suite,
            row.setting,
            str(row.n),
            pct(row.accuracy),
            MISSING if row.accuracy is None else ci_range(row.ci_low, row.ci_high, digits=0),
            pct(row.gave_up_rate),
            " · ".join(f"{_SHORT.get(k, k)} {v}" for k, v in row.outcomes.items() if v),
            number(row.mean_turns),
        )
    return table


def print_summary(rows: list[SummaryRow], console: Console, title: str = "") -> None:
    console.print(summary_table(rows, title))
    infra = sum(r.outcomes.get(Outcome.infra_error.value, 0) for r in rows)
    if infra:
        console.print(
            f"[yellow]{infra} episode(s) ended in infra_error: they are excluded from the rates above "
            "and can be rerun.[/yellow]"
        )


# ---------------------------------------------------------------------------------------------------------------
# `undertow compare`


def comparison_table(analysis: Analysis) -> Table:
    level = f"{100 * analysis.confidence:.0f}%"
    columns = [
        ("Suite", "left"),
        ("Setting", "left"),
        ("Model A", "left"),
        ("Model B", "left"),
        ("n", "right"),
        ("Acc A", "right"),
        ("Acc B", "right"),
        ("Δ pts", "right"),
        (f"{level} CI", "right"),
        ("only A", "right"),
        ("only B", "right"),
        ("McNemar p", "right"),
    ]
    table = new_table(
        f"Paired model comparisons (accuracy = solved; Δ = A − B in points, {level} cluster-bootstrap CI)",
        columns,
    )
    previous = None
    for c in analysis.comparisons:
        if previous is not None and (c.suite, c.setting) != previous:
            table.add_section()
        previous = (c.suite, c.setting)
        table.add_row(
            c.suite,
            c.setting,
            c.model_a,
            c.model_b,
            str(c.n),
            pct(c.accuracy_a),
            pct(c.accuracy_b),
            points(c.difference),
            signed_interval(c.ci_low, c.ci_high),
            str(c.mcnemar_only_a),
            str(c.mcnemar_only_b),
            p_value(c.mcnemar_p_value),
        )
    return table


def gap_table(analysis: Analysis) -> Table:
    level = f"{100 * analysis.confidence:.0f}%"
    columns = [
        ("Model", "left"),
        ("Suite", "left"),
        ("Setting", "left"),
        (analysis.baseline, "right"),
        ("faulted", "right"),
        ("Gap pts", "right"),
        (f"{level} CI", "right"),
        ("paired n", "right"),
    ]
    table = new_table(
        f"Recovery gaps: {analysis.baseline} accuracy − faulted accuracy (points, {level} CI)",
        columns,
    )
    previous = None
    for g in analysis.gaps:
        if previous is not None and g.model != previous:
            table.add_section()
        previous = g.model
        table.add_row(
            g.model,
            g.suite,
            g.setting,
            pct(analysis.accuracy(g.model, g.suite, g.baseline)),
            pct(analysis.accuracy(g.model, g.suite, g.setting)),
            points(g.estimate),
            signed_interval(g.ci_low, g.ci_high),
            str(g.n_paired) if g.paired else f"unpaired ({g.n_clean}/{g.n_faulted})",
        )
    return table


def print_comparison(analysis: Analysis, console: Console) -> None:
    """The `undertow compare` output: every model pair per suite × setting, then the recovery gaps."""
    if analysis.comparisons:
        console.print(comparison_table(analysis))
    else:
        console.print("[yellow]No two models share a valid episode: nothing to compare pairwise.[/yellow]")
    if analysis.gaps:
        console.print(gap_table(analysis))
    else:
        console.print(
            f"[yellow]No recovery gaps: no model has valid episodes under both '{analysis.baseline}' "
            "and a faulted setting.[/yellow]"
        )
    if analysis.n_infra_errors:
        console.print(
            f"[yellow]{analysis.n_infra_errors} episode(s) ended in infra_error: they are excluded from every "
            "number above and can be rerun.[/yellow]"
        )
