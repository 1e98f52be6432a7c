"""The self-contained HTML report: the views the template shows (numbers already formatted), and the page itself.

The template is ``cluster/templates/report.html.j2`` (shipped as package data). Family analyses are shown
generically: each family summary's :meth:`~env_core.families.FamilySummary.tables` and its figures, whatever the
family."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from undertow.cluster.report.plots import CAPTIONS, family_charts
from undertow.cluster.report.plots import figures as draw_figures
from undertow.cluster.report.tables import LayoutView
from undertow.cluster.report.text import printable
from undertow.cluster.report.traces import pick_trace, trace_view
from undertow.env_core.families import ReportTable
from undertow.env_core.model import EpisodeResult, Outcome, Trajectory
from undertow.scoring.analysis import NO_RECOVERY, Analysis
from undertow.scoring.formatting import MISSING, ci_range, number, p_value, pct, points, signed_interval

if TYPE_CHECKING:
    import jinja2

TEMPLATE = "report.html.j2"

_SHORT_OUTCOMES = {o.value: o.value.replace("_", " ") for o in Outcome}


def _summary_view(analysis: Analysis) -> list[dict[str, Any]]:
    return [
        {
            "model": row.model,
            "suite": row.suite,
            "setting": row.setting,
            "n": row.n,
            "n_valid": row.n_valid,
            "accuracy": pct(row.accuracy),
            "ci": MISSING if row.accuracy is None else ci_range(row.ci_low, row.ci_high),
            "correct_rate": pct(row.correct_rate),
            "gave_up_rate": pct(row.gave_up_rate),
            "outcomes": [(_SHORT_OUTCOMES.get(k, k), v, k) for k, v in row.outcomes.items() if v],
            "tokens": row.prompt_tokens + row.completion_tokens,
            "mean_turns": number(row.mean_turns),
            "infra": row.outcomes.get(Outcome.infra_error.value, 0),
        }
        for row in analysis.rows
    ]


def _sign(low: float | None, high: float | None) -> str:
    """CSS class: 'pos' / 'neg' when the interval excludes zero, '' otherwise."""
    if low is None or high is None:
        return ""
    return "pos" if low > 0 else "neg" if high < 0 else ""


def _gap_view(analysis: Analysis) -> list[dict[str, Any]]:
    rows = []
    for g in analysis.gaps:
        row: dict[str, Any] = {
            "model": g.model,
            "suite": g.suite,
            "setting": g.setting,
            "baseline_accuracy": pct(analysis.accuracy(g.model, g.suite, g.baseline)),
            "faulted_accuracy": pct(analysis.accuracy(g.model, g.suite, g.setting)),
            "estimate": points(g.estimate),
            "ci": signed_interval(g.ci_low, g.ci_high),
            "n": g.n_paired if g.paired else f"unpaired ({g.n_clean} / {g.n_faulted})",
            "sign": _sign(g.ci_low, g.ci_high),
        }
        if not g.recoverable:  # giving up is right under this setting: the row says so instead of a gap
            na, reason = NO_RECOVERY.split(": ", 1)
            row.update(estimate=na, ci=reason, n=MISSING, sign="")
        rows.append(row)
    return rows


def _comparison_view(analysis: Analysis) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for c in analysis.comparisons:
        groups.setdefault((c.suite, c.setting), []).append(
            {
                "model_a": c.model_a,
                "model_b": c.model_b,
                "n": c.n,
                "unpaired": c.only_in_a + c.only_in_b,
                "accuracy_a": pct(c.accuracy_a),
                "accuracy_b": pct(c.accuracy_b),
                "difference": points(c.difference),
                "ci": signed_interval(c.ci_low, c.ci_high),
                "both_right": c.mcnemar_both_right,
                "only_a": c.mcnemar_only_a,
                "only_b": c.mcnemar_only_b,
                "both_wrong": c.mcnemar_both_wrong,
                "p": p_value(c.mcnemar_p_value),
                "method": c.mcnemar_method,
                "sign": _sign(c.ci_low, c.ci_high),
            }
        )
    return [{"suite": s, "setting": t, "pairs": pairs} for (s, t), pairs in groups.items()]


def table_view(table: ReportTable) -> dict[str, Any]:
    """A :class:`ReportTable` for the template: cells with their alignment, the first row of each section marked."""
    right = [*table.right, *[False] * (len(table.columns) - len(table.right))]
    sections = set(table.sections) - {0}
    return {
        "title": table.title,
        "columns": list(zip(table.columns, right, strict=False)),
        "rows": [
            # as in the terminal: a cell may quote a model (per-episode details), and a bidi override in it would
            # reorder the page's text
            {
                "first": i in sections,
                "cells": [(printable(c, one_line=True), r) for c, r in zip(row, right, strict=False)],
            }
            for i, row in enumerate(table.rows)
        ],
        "note": table.note,
    }


def _image(name: str, alt: str, png: bytes) -> dict[str, str]:
    return {"name": name, "alt": alt, "src": "data:image/png;base64," + base64.b64encode(png).decode()}


def render_html(
    analysis: Analysis,
    title: str,
    figures: Mapping[str, bytes],
    trace: Trajectory | None = None,
    meta: Mapping[str, str] | None = None,
    layout: LayoutView | None = None,
) -> str:
    """The self-contained HTML report: summary, plots (embedded PNG data URIs), recovery gaps, paired
    comparisons, each family's tables and figures, one episode's trace and the run's metadata. No external
    resources, no scripts. ``figures`` are :func:`undertow.cluster.report.plots.figures` (a family's figures go to its
    section, the others to the plots). With ``layout`` (``undertow report --layout NAME``), the family section
    opens with the layout's tables, which stand in for the per-suite tables of the families it covers (their
    figures stay)."""
    charts = family_charts(analysis)
    families = []
    if layout is not None:
        families.append(
            {
                "suite": f"layout {layout.name}",
                "family": ", ".join(sorted(layout.families)),
                "tables": [table_view(t) for t in layout.tables if t.rows or t.note],
                "figures": [],
            }
        )
    for suite, summary in analysis.families.items():
        covered = layout is not None and summary.family in layout.families
        shown = {
            "suite": suite,
            "family": summary.family,
            "tables": [] if covered else [table_view(t) for t in summary.tables(suite) if t.rows or t.note],
            "figures": [
                _image(name, chart.alt, figures[name])
                for name, (chart_suite, chart) in charts.items()
                if chart_suite == suite and name in figures
            ],
        }
        if shown["tables"] or shown["figures"] or not covered:
            families.append(shown)
    template = _environment().get_template(TEMPLATE)
    return template.render(
        title=title,
        analysis=analysis,
        level=f"{100 * analysis.confidence:.0f}%",
        summary=_summary_view(analysis),
        figures=[_image(name, CAPTIONS.get(name, name), png) for name, png in figures.items() if name not in charts],
        gaps=_gap_view(analysis),
        comparisons=_comparison_view(analysis),
        families=families,
        trace=None if trace is None else trace_view(trace),
        meta=[(str(k), str(v)) for k, v in (meta or {}).items()],
        sizes=list(analysis.sizes.items()),
        any_size=any(size for size in analysis.sizes.values()),
    )


def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("undertow.cluster", "templates"),
        autoescape=True,  # every string in the report is user- or model-derived until proven otherwise
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def run_meta(manifests: Iterable[Any], locations: Iterable[str]) -> dict[str, str]:
    """The "about" lines of a report on one or more runs (``manifests`` are :class:`cluster.plan.RunManifest`)."""
    manifests = list(manifests)
    return {
        "runs": ", ".join(m.run_id for m in manifests),
        "created": ", ".join(m.created for m in manifests),
        "code version": ", ".join(sorted({m.versions.get("undertow", "") for m in manifests})),
        "store": ", ".join(locations),
    }


def report_page(
    analysis: Analysis,
    results: Iterable[EpisodeResult],
    load_trajectories: Callable[[str], Iterable[Trajectory]],
    title: str,
    meta: Mapping[str, str],
    layout: LayoutView | None = None,
) -> tuple[str, dict[str, bytes]]:
    """The HTML report and the figures it embeds (also logged as files to MLflow), with an instructive trace;
    ``layout``: a family layout's tables in place of the families' own (see :func:`render_html`)."""
    images = draw_figures(analysis)
    trace = pick_trace(results, load_trajectories)
    return render_html(analysis, title, images, trace, meta, layout), images
