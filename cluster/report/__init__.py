"""Presenting a run: terminal tables (:mod:`.tables`), figures (:mod:`.plots`), the episode shown (:mod:`.traces`)
and the HTML page (:mod:`.html`); :mod:`.text` makes what a model wrote safe to show. The numbers come from
:mod:`undertow.scoring.analysis`; nothing here names a family.

The modules import one way: ``html`` → ``plots``, ``traces``, ``text``; ``tables`` and ``traces`` → ``text``;
``text`` and ``plots`` import none of the others. ``plots`` and ``html`` (matplotlib, jinja2) load on first use of
their names, so the CLI starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from undertow.cluster.report.tables import (
    LayoutView,
    comparison_table,
    gap_table,
    new_table,
    print_comparison,
    print_family_summaries,
    print_layout,
    print_report_table,
    print_summary,
    print_tables,
    report_table,
    summary_table,
)
from undertow.cluster.report.traces import pick_trace, trace_view

if TYPE_CHECKING:
    from undertow.cluster.report.html import render_html, report_page, run_meta
    from undertow.cluster.report.plots import figure_captions, figures, stacked_bars

_LAZY = {
    "render_html": "undertow.cluster.report.html",
    "report_page": "undertow.cluster.report.html",
    "run_meta": "undertow.cluster.report.html",
    "figures": "undertow.cluster.report.plots",
    "figure_captions": "undertow.cluster.report.plots",
    "stacked_bars": "undertow.cluster.report.plots",
}

__all__ = [
    "LayoutView",
    "comparison_table",
    "figure_captions",
    "figures",
    "gap_table",
    "new_table",
    "pick_trace",
    "print_comparison",
    "print_family_summaries",
    "print_layout",
    "print_report_table",
    "print_summary",
    "print_tables",
    "render_html",
    "report_page",
    "report_table",
    "run_meta",
    "stacked_bars",
    "summary_table",
    "trace_view",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
