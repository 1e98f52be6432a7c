"""Report figures as PNG bytes: accuracy vs size, baseline vs faulted, outcome classes, and each family's figures
(its :class:`StackedBars` and :class:`BoxPlots`, drawn without knowing what they count).

Figures are built on :class:`matplotlib.figure.Figure` directly, never through pyplot: nothing is registered in
pyplot's global figure list (so nothing can leak, and threads do not share state), no GUI backend is touched, and
``savefig`` renders with Agg. Colours are the Okabe–Ito palette, which stays distinguishable with the common forms of
colour blindness; series are also told apart by marker or hatch, so a grey-scale print still reads.
"""

from __future__ import annotations

import io
import math
import re
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from undertow.env_core.families import BoxPlots, FamilyFigure, StackedBars
from undertow.env_core.model import Outcome
from undertow.scoring.analysis import Analysis
from undertow.scoring.summary import SummaryRow

# Okabe & Ito (2008), "Color Universal Design"; black first is left out so lines never look like axes.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
HATCHES = ["", "//", "..", "xx", "\\\\", "++", "oo", "--"]
BASELINE_COLOUR = "#555555"
OUTCOME_COLOURS = {
    Outcome.scored.value: "#009E73",
    Outcome.budget_exhausted.value: "#E69F00",
    Outcome.parse_error.value: "#CC79A7",
    Outcome.model_error.value: "#D55E00",
    Outcome.infra_error.value: "#BBBBBB",  # greys: not the model's doing
    Outcome.config_error.value: "#777777",
    Outcome.sandbox_violation.value: "#882255",  # the model's doing, like the warm colours
}
DPI = 100

# What the run-level figures show: the HTML page's alt text and caption.
CAPTIONS = {
    "accuracy_vs_size.png": "Accuracy (solved) against model size, one line per setting, with Wilson intervals",
    "clean_vs_faulted.png": "Accuracy (solved) per model under the baseline and each faulted setting, "
    "with Wilson intervals",
    "outcomes.png": "Episode outcome classes per model and setting (stacked counts)",
}


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def _grid(n: int, width: float = 5.2, height: float = 3.4, max_cols: int = 2) -> tuple[Figure, list[Axes]]:
    """A figure with ``n`` subplots (one per suite), ``max_cols`` to a row."""
    n = max(n, 1)
    cols = min(n, max_cols)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for extra in axes[n:]:
        extra.set_visible(False)
    return fig, axes[:n]


def _legend(fig: Figure, axes: list[Axes], title: str) -> None:
    """One legend for the whole figure, outside the panels (so it never covers a bar), with every label any panel
    drew, in drawing order."""
    seen: dict[str, Any] = {}
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        for handle, label in zip(handles, labels, strict=True):
            seen.setdefault(label, handle)
    if seen:
        fig.legend(
            list(seen.values()), list(seen), title=title, loc="outside right upper", fontsize=8, title_fontsize=8
        )


def _no_data(ax: Axes, text: str = "no valid episodes") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#666666")
    ax.set_xticks([])
    ax.set_yticks([])


def _row_index(analysis: Analysis) -> dict[tuple[str, str, str], SummaryRow]:
    return {(r.model, r.suite, r.setting): r for r in analysis.rows}


def _setting_style(analysis: Analysis) -> dict[str, tuple[str, str, str]]:
    """(colour, marker, hatch) per setting, fixed across figures: the baseline grey, faulted settings in palette
    order."""
    styles = {}
    faulted = 0
    for setting in analysis.settings:
        if setting == analysis.baseline:
            styles[setting] = (BASELINE_COLOUR, "o", "")
        else:
            i = faulted % len(PALETTE)
            styles[setting] = (PALETTE[i], MARKERS[(i + 1) % len(MARKERS)], HATCHES[(i + 1) % len(HATCHES)])
            faulted += 1
    return styles


def _accuracy(row: SummaryRow | None) -> tuple[float, float, float]:
    """(accuracy, lower error, upper error) in percent; NaN where there is no valid episode."""
    if row is None or row.accuracy is None:
        return math.nan, math.nan, math.nan
    acc = 100 * row.accuracy
    return acc, max(0.0, acc - 100 * row.ci_low), max(0.0, 100 * row.ci_high - acc)


def _short(text: str, limit: int = 18) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def accuracy_vs_size(analysis: Analysis) -> bytes:
    """Accuracy against model size, one line per setting and one panel per suite, Wilson error bars. The x axis is
    size in billions of parameters (log) when every model has one, else the models in run order."""
    rows = _row_index(analysis)
    styles = _setting_style(analysis)
    models = analysis.models
    sized = bool(models) and all(analysis.sizes.get(m) for m in models)
    fig, axes = _grid(len(analysis.suites))
    for ax, suite in zip(axes, analysis.suites or [""], strict=False):
        drawn = False
        n_settings = max(len(analysis.settings), 1)
        for i, setting in enumerate(analysis.settings):
            values = np.array([_accuracy(rows.get((m, suite, setting))) for m in models]).reshape(-1, 3)
            if np.all(np.isnan(values[:, 0])):
                continue
            # A small horizontal offset per setting keeps error bars of equal accuracies from hiding each other.
            offset = (i - (n_settings - 1) / 2) * 0.06
            if sized:
                x = np.array([analysis.sizes[m] for m in models], dtype=float) * (10 ** (offset / 2))
            else:
                x = np.arange(len(models), dtype=float) + offset
            order = np.argsort(x)
            colour, marker, _ = styles[setting]
            ax.errorbar(
                x[order],
                values[order, 0],
                yerr=values[order, 1:].T,
                label=setting,
                color=colour,
                marker=marker,
                markersize=5,
                capsize=3,
                linewidth=1.5,
            )
            drawn = True
        if not drawn:
            _no_data(ax)
        else:
            if sized:
                ax.set_xscale("log")
                ax.set_xlabel("model size (billions of parameters, log scale)")
                ticks = sorted({float(analysis.sizes[m]) for m in models})  # type: ignore[arg-type]
                ax.set_xticks(ticks, [f"{t:g}B" for t in ticks])
                ax.set_xlim(ticks[0] / 2, ticks[-1] * 2)  # room around a single size, too
                ax.minorticks_off()
            else:
                ax.set_xticks(range(len(models)), [_short(m) for m in models], rotation=20, ha="right")
                ax.set_xlabel("model (sizes unknown: run order)")
                ax.set_xlim(-0.5, len(models) - 0.5)
            ax.set_ylim(-3, 103)
            ax.set_ylabel("accuracy, solved (%)")
            ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"Accuracy vs size — {_short(suite, 40)}", fontsize=10)
    _legend(fig, axes, "setting")
    return _png(fig)


def clean_vs_faulted(analysis: Analysis) -> bytes:
    """Per model, grouped bars: the baseline and every faulted setting, with Wilson error bars; one panel per
    suite."""
    rows = _row_index(analysis)
    styles = _setting_style(analysis)
    models, settings = analysis.models, analysis.settings
    fig, axes = _grid(len(analysis.suites), width=max(5.2, 1.0 + 0.45 * len(models) * max(len(settings), 1)))
    for ax, suite in zip(axes, analysis.suites or [""], strict=False):
        width = min(0.8 / max(len(settings), 1), 0.3)  # a single setting's bars stay bar-shaped
        drawn = False
        for i, setting in enumerate(settings):
            values = np.array([_accuracy(rows.get((m, suite, setting))) for m in models]).reshape(-1, 3)
            if np.all(np.isnan(values[:, 0])):
                continue
            x = np.arange(len(models)) + (i - (len(settings) - 1) / 2) * width
            colour, _, hatch = styles[setting]
            heights = np.nan_to_num(values[:, 0])
            ax.bar(x, heights, width, label=setting, color=colour, hatch=hatch, edgecolor="white", linewidth=0.5)
            # Error bars drawn separately from an ndarray: bar() converts yerr to a list, and matplotlib then trips
            # over a single bar's (2, 1) error array (a NumPy deprecation today, an error tomorrow).
            ax.errorbar(x, heights, yerr=values[:, 1:].T, fmt="none", capsize=2, elinewidth=1, ecolor="#222222")
            for xi, value in zip(x, values[:, 0], strict=True):
                if value < 0.5:  # a 0% bar has no height: say so, or it reads as a missing setting
                    ax.text(xi, 0.8, "0%", ha="center", va="bottom", fontsize=7, color=colour, fontweight="bold")
            drawn = True
        if not drawn:
            _no_data(ax)
        else:
            ax.set_xticks(range(len(models)), [_short(m) for m in models], rotation=20 if len(models) > 3 else 0)
            pad = max(0.0, (2 - len(models)) / 2)
            ax.set_xlim(-0.5 - pad, len(models) - 0.5 + pad)
            ax.set_ylim(0, 105)
            ax.set_ylabel("accuracy, solved (%)")
            ax.set_xlabel("model")
            ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"{analysis.baseline} vs faulted — {_short(suite, 40)}", fontsize=10)
    _legend(fig, axes, "setting")
    return _png(fig)


def _bar_labels(pairs: list[tuple[str, str]]) -> list[str]:
    return [f"{_short(model, 14)}\n{_short(setting, 14)}" for model, setting in pairs]


def outcomes(analysis: Analysis) -> bytes:
    """Stacked counts of outcome classes per model × setting; one panel per suite."""
    rows = _row_index(analysis)
    classes = [o.value for o in Outcome]
    widest = max(
        (sum(1 for k in rows if k[1] == suite) for suite in analysis.suites),
        default=1,
    )
    fig, axes = _grid(len(analysis.suites), width=max(5.2, 1.0 + 0.55 * widest), max_cols=1)
    for ax, suite in zip(axes, analysis.suites or [""], strict=False):
        pairs = [(m, s) for m in analysis.models for s in analysis.settings if (m, suite, s) in rows]
        if not pairs:
            _no_data(ax, "no episodes")
            ax.set_title(f"Outcomes — {_short(suite, 40)}", fontsize=10)
            continue
        bottom = np.zeros(len(pairs))
        x = np.arange(len(pairs))
        for outcome in classes:
            counts = np.array([rows[(m, suite, s)].outcomes.get(outcome, 0) for m, s in pairs], dtype=float)
            if not counts.any():
                continue
            ax.bar(
                x,
                counts,
                0.7,
                bottom=bottom,
                label=outcome.replace("_", " "),
                color=OUTCOME_COLOURS[outcome],
                edgecolor="white",
                linewidth=0.5,
            )
            bottom += counts
        ax.set_xticks(x, _bar_labels(pairs), fontsize=7)
        pad = max(0.0, (2 - len(pairs)) / 2)  # a lone bar stays bar-shaped instead of filling the panel
        ax.set_xlim(-0.5 - pad, len(pairs) - 0.5 + pad)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("episodes")
        ax.set_xlabel("model / setting")
        ax.set_ylim(0, max(bottom.max(), 1) * 1.05)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"Outcomes — {_short(suite, 40)}", fontsize=10)
    _legend(fig, axes, "outcome")
    return _png(fig)


def stacked_bars(chart: StackedBars) -> bytes:
    """A family's stacked-share chart: one bar per label (``model\\nsetting``, say), its categories stacked in the
    chart's order, each bar's ``n`` above it."""
    bars = chart.bars
    fig = Figure(figsize=(max(5.2, 1.6 + 0.6 * len(bars)), 3.6), layout="constrained")
    ax = fig.subplots()
    if not bars:
        _no_data(ax, "nothing to show")
    x = np.arange(len(bars))
    bottom = np.zeros(len(bars))
    for i, category in enumerate(chart.categories):
        shares = np.array([bar.shares.get(category, 0.0) for bar in bars], dtype=float)
        ax.bar(
            x,
            shares,
            0.7,
            bottom=bottom,
            label=category,
            color=PALETTE[i % len(PALETTE)],
            hatch=HATCHES[i % len(HATCHES)],
            edgecolor="white",
            linewidth=0.5,
        )
        bottom += shares
    if bars:
        for xi, bar in enumerate(bars):
            ax.text(xi, 101, f"n={bar.n}", ha="center", va="bottom", fontsize=7)
        labels = ["\n".join(_short(part, 14) for part in bar.label.split("\n")) for bar in bars]
        ax.set_xticks(x, labels, fontsize=7)
        ax.set_ylim(0, 110)
        ax.set_ylabel(chart.y_label)
        ax.set_xlabel(chart.x_label)
    _legend(fig, [ax], "category")
    ax.set_title(_short(chart.title, 60), fontsize=10)
    return _png(fig)


def box_plots(chart: BoxPlots) -> bytes:
    """A family's box plots: one panel per ``panel``, boxes grouped by label on the x axis, a colour (and hatch)
    per series, each drawn from its five numbers (whiskers at min and max), its mean a white diamond and its ``n``
    under the group's label."""
    panels = list(dict.fromkeys(box.panel for box in chart.boxes)) or [""]
    # a panel's width follows its number of groups, with room for its title when it has few
    widths = [max(2, len({b.label for b in chart.boxes if b.panel == p})) for p in panels]
    fig = Figure(figsize=(max(5.2, 1.8 + 0.9 * sum(widths)), 3.8), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False, width_ratios=widths).ravel().tolist()
    series = list(dict.fromkeys(box.series for box in chart.boxes))
    for ax, panel in zip(axes, panels, strict=True):
        boxes = [b for b in chart.boxes if b.panel == panel]
        if not boxes:
            _no_data(ax, "nothing to show")
            continue
        labels = list(dict.fromkeys(b.label for b in boxes))
        here = [name for name in series if any(b.series == name for b in boxes)]  # offsets count this panel's only
        width = 0.8 / max(len(here), 1)
        for j, name in enumerate(here):
            i = series.index(name)  # colours follow the figure's series, so one legend serves every panel
            mine = [b for b in boxes if b.series == name]
            stats = [
                {
                    "med": b.median,
                    "q1": b.q1,
                    "q3": b.q3,
                    "whislo": b.low,
                    "whishi": b.high,
                    "mean": b.mean if b.mean is not None else b.median,
                    "fliers": [],
                }
                for b in mine
            ]
            x = [labels.index(b.label) + (j - (len(here) - 1) / 2) * width for b in mine]
            drawn = ax.bxp(
                stats,
                positions=x,
                widths=width * 0.85,
                showmeans=any(b.mean is not None for b in mine),
                meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "#222222", "markersize": 4},
                medianprops={"color": "#222222"},
                patch_artist=True,
                manage_ticks=False,
            )
            for patch in drawn["boxes"]:
                patch.set(facecolor=PALETTE[i % len(PALETTE)], hatch=HATCHES[i % len(HATCHES)], edgecolor="#222222")
            drawn["boxes"][0].set_label(name or "all")
        counts = {label: "/".join(str(b.n) for b in boxes if b.label == label) for label in labels}
        ticks = ["\n".join(_short(part, 16) for part in label.split("\n")) + f"\nn={counts[label]}" for label in labels]
        ax.set_xticks(range(len(labels)), ticks, fontsize=7)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(chart.y_label)
        ax.set_xlabel(chart.x_label)
        ax.grid(axis="y", alpha=0.3)
        if panel:
            ax.set_title(_short(panel, 48), fontsize=9)
    if len(series) > 1 or (series and series[0]):
        _legend(fig, axes, "")
    fig.suptitle(_short(chart.title, 80), fontsize=10)
    return _png(fig)


def family_figure(chart: FamilyFigure) -> bytes:
    """A family figure as PNG bytes, whichever kind it is."""
    return box_plots(chart) if isinstance(chart, BoxPlots) else stacked_bars(chart)


def figure_name(name: str, suite: str) -> str:
    """``<name>_<suite>.png``, made file-name safe (suite labels may hold ``:`` or ``/``)."""
    return f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', f'{name}_{suite}').strip('_.') or 'figure'}.png"


def family_charts(analysis: Analysis) -> dict[str, tuple[str, FamilyFigure]]:
    """Every family figure of the analysis as (suite, chart) by file name, suite by suite; two titles that differ
    only in unsafe characters get distinct names, and none takes the name of a run-level figure."""
    out: dict[str, tuple[str, FamilyFigure]] = {}
    for suite, summary in analysis.families.items():
        for chart in summary.figures(suite):
            name = figure_name(chart.name, suite)
            stem, n = name[:-4], 2
            while name in out or name in CAPTIONS:
                name, n = f"{stem}_{n}.png", n + 1
            out[name] = (suite, chart)
    return out


def figure_captions(analysis: Analysis) -> dict[str, str]:
    """What each figure of :func:`figures` shows, by file name (the HTML page's alt text)."""
    return {**CAPTIONS, **{name: chart.alt for name, (_, chart) in family_charts(analysis).items()}}


def figures(analysis: Analysis) -> dict[str, bytes]:
    """Every report figure as PNG bytes keyed by file name: ``accuracy_vs_size.png``, ``clean_vs_faulted.png``,
    ``outcomes.png`` and one file per family figure (see :func:`family_charts`)."""
    out = {
        "accuracy_vs_size.png": accuracy_vs_size(analysis),
        "clean_vs_faulted.png": clean_vs_faulted(analysis),
        "outcomes.png": outcomes(analysis),
    }
    for name, (_, chart) in family_charts(analysis).items():
        out[name] = family_figure(chart)
    return out
