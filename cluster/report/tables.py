"""Terminal tables (rich): the run summary, paired comparisons, recovery gaps, and any :class:`ReportTable` a family
or a build hands over, rendered without knowing what it holds.

Every name and value in a table (models, suites, settings, run ids, a family's cells) is shown as plain text, never
read as rich markup: a model called ``[bold]x`` or a setting called ``[/oracle]`` prints as it is written. Cells,
titles and notes pass :func:`~undertow.cluster.report.text.printable` too, since some hold what a model wrote (an
episode's error): a control character in them is shown escaped, never sent to the terminal."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from undertow.cluster.report.text import printable
from undertow.env_core.families import FamilySummary, ReportTable
from undertow.env_core.model import Outcome
from undertow.scoring.analysis import NO_RECOVERY, Analysis
from undertow.scoring.formatting import MISSING, ci_range, number, p_value, pct, points, signed_interval
from undertow.scoring.summary import SummaryRow

_SHORT = {
    Outcome.scored.value: "scored",
    Outcome.model_error.value: "model",
    Outcome.parse_error.value: "parse",
    Outcome.infra_error.value: "infra",
    Outcome.budget_exhausted.value: "budget",
    Outcome.config_error.value: "config",
    Outcome.sandbox_violation.value: "sandbox",
}


# Longest model name a comparison or gap table shows whole (two fit a 160-column log line); longer ones are
# shortened in the middle, as long as the shortened names stay distinct.
MODEL_LABEL_LIMIT = 26
# Names pooled from runs of one config (name@run_id) differ only in their run id's end, time and fingerprint
# (``-090052-fd49cf``): a shortened name keeps at least that much of its end.
MODEL_LABEL_TAIL = 13


def new_table(title: str, columns: list[tuple[str, str]]) -> Table:
    """The house table style; ``columns`` are (header, "left" | "right"), headers and title as plain text.
    Right-aligned columns hold numbers and intervals, which never wrap: narrow terminals squeeze the text columns
    instead, folding a long name onto the next line rather than cutting it (two names cut alike would look equal)."""
    table = Table(
        title=Text(printable(title, one_line=True)) if title else None,
        title_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for column, justify in columns:
        right = justify == "right"
        table.add_column(
            Text(printable(column, one_line=True)),
            justify=justify,  # type: ignore[arg-type]
            no_wrap=right,
            overflow="ellipsis" if right else "fold",
        )
    return table


def add_row(table: Table, *cells: object) -> None:
    """A row of plain-text cells (never rich markup), each on one line: a newline in a cell shows as ``⏎``."""
    table.add_row(*(Text(printable(str(cell), one_line=True)) for cell in cells))


def model_labels(names: Iterable[str], limit: int = MODEL_LABEL_LIMIT) -> dict[str, str]:
    """How each model name is shown in a narrow column: as it is when it fits ``limit``, else its start and its
    end around "…", keeping enough of the end that no two labels are equal; whole names when none would do."""
    names = list(dict.fromkeys(names))
    if all(len(n) <= limit for n in names):
        return {n: n for n in names}
    for tail in range(min(MODEL_LABEL_TAIL, limit - 2), limit - 1):
        head = limit - 1 - tail
        labels = {n: n if len(n) <= limit else f"{n[:head]}…{n[-tail:]}" for n in names}
        if len(set(labels.values())) == len(names):
            return labels
    return {n: n for n in names}


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
        add_row(out, *row)
    return out


def print_report_table(table: ReportTable, console: Console) -> None:
    """The table, then its note; a table without rows prints only its note."""
    if table.rows:
        console.print(report_table(table))
    if table.note:
        console.print(Text(printable(table.note)), highlight=False, soft_wrap=True)


def print_tables(tables: Iterable[ReportTable], console: Console) -> None:
    """Tables in order (what a family's build returns, say)."""
    for table in tables:
        print_report_table(table, console)


def print_family_summaries(summaries: Mapping[str, FamilySummary], console: Console) -> None:
    """Every family analysis's tables, suite by suite."""
    for suite, summary in summaries.items():
        print_tables(summary.tables(suite), console)


@dataclass(frozen=True)
class LayoutView:
    """A family's named layout applied to a run (``undertow report --layout NAME``): its tables, and the families
    whose per-suite tables they stand in for (other families' tables are shown as usual)."""

    name: str
    tables: Sequence[ReportTable]
    families: frozenset[str]


def print_layout(layout: LayoutView, summaries: Mapping[str, FamilySummary], console: Console) -> None:
    """The layout's tables, then the per-suite tables of the families it does not cover."""
    print_tables(layout.tables, console)
    print_family_summaries({k: v for k, v in summaries.items() if v.family not in layout.families}, console)


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
        add_row(
            table,
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


def print_summary(rows: list[SummaryRow], console: Console, title: str = "", status: str = "undertow status") -> None:
    """The summary table and what its infra_error and config_error episodes mean; ``status`` is the command that
    shows their errors (with the run and its store, where the caller knows them)."""
    console.print(summary_table(rows, title))
    infra = sum(r.outcomes.get(Outcome.infra_error.value, 0) for r in rows)
    if infra:
        console.print(
            f"[yellow]{infra} episode(s) ended in infra_error: they are excluded from the rates above "
            "and can be rerun.[/yellow]"
        )
    config = sum(r.outcomes.get(Outcome.config_error.value, 0) for r in rows)
    if config:
        console.print(
            f"[yellow]{config} episode(s) ended in config_error: they are excluded from the rates above; a rerun "
            f"fails the same way, so fix the config or data (see `{escape(printable(status))}`) and start a new "
            "run.[/yellow]"
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
    label = model_labels(analysis.models + [n for c in analysis.comparisons for n in (c.model_a, c.model_b)])
    previous = None
    for c in analysis.comparisons:
        if previous is not None and (c.suite, c.setting) != previous:
            table.add_section()
        previous = (c.suite, c.setting)
        add_row(
            table,
            c.suite,
            c.setting,
            label[c.model_a],
            label[c.model_b],
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
    label = model_labels(analysis.models + [g.model for g in analysis.gaps])
    previous = None
    for g in analysis.gaps:
        if previous is not None and g.model != previous:
            table.add_section()
        previous = g.model
        if not g.recoverable:  # giving up is right there: no gap to report (the note under the table says why)
            gap, interval, n = "n/a", MISSING, MISSING
        else:
            gap, interval = points(g.estimate), signed_interval(g.ci_low, g.ci_high)
            n = str(g.n_paired) if g.paired else f"unpaired ({g.n_clean}/{g.n_faulted})"
        add_row(
            table,
            label[g.model],
            g.suite,
            g.setting,
            pct(analysis.accuracy(g.model, g.suite, g.baseline)),
            pct(analysis.accuracy(g.model, g.suite, g.setting)),
            gap,
            interval,
            n,
        )
    return table


def no_recovery_note(analysis: Analysis) -> str | None:
    """The line under the gap table that explains its "n/a" rows, naming their settings; None without any."""
    settings = list(dict.fromkeys(g.setting for g in analysis.gaps if not g.recoverable))
    if not settings:
        return None
    names = ", ".join(f"'{s}'" for s in settings)
    return f"{NO_RECOVERY} under {names}: every episode there expects the model to give up (see Gave up)."


def shortened_note(analysis: Analysis) -> str | None:
    """The line saying that long model names were shortened in the tables, and where the whole names are."""
    label = model_labels(analysis.models)
    if all(label[m] == m for m in analysis.models):
        return None
    return "Long model names are shortened in the middle above; --format json gives them whole."


def print_comparison(analysis: Analysis, console: Console) -> None:
    """The `undertow compare` output: every model pair per suite × setting, then the recovery gaps."""
    if analysis.comparisons:
        console.print(comparison_table(analysis))
    else:
        console.print("[yellow]No two models share a valid episode: nothing to compare pairwise.[/yellow]")
    if analysis.gaps:
        console.print(gap_table(analysis))
        note = no_recovery_note(analysis)
        if note:
            console.print(Text(printable(note)), highlight=False, soft_wrap=True)
    else:
        console.print(
            "[yellow]No recovery gaps: no model has valid episodes under both "
            f"'{escape(printable(analysis.baseline))}' and a faulted setting.[/yellow]"
        )
    shortened = shortened_note(analysis)
    if shortened and (analysis.comparisons or analysis.gaps):
        console.print(Text(shortened, style="dim"), highlight=False, soft_wrap=True)
    if analysis.n_infra_errors:
        console.print(
            f"[yellow]{analysis.n_infra_errors} episode(s) ended in infra_error: they are excluded from every "
            "number above and can be rerun.[/yellow]"
        )
    if analysis.n_config_errors:
        console.print(
            f"[yellow]{analysis.n_config_errors} episode(s) ended in config_error: they are excluded from every "
            "number above; fix the config or data and start a new run.[/yellow]"
        )
