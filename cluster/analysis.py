"""Run analysis for reports: summaries, recovery gaps, paired model comparisons, and the HTML report.

Everything here works on the flat :class:`EpisodeResult` rows of a run. Accuracy is always ``solved`` (the answer
matched the gold answer), over episodes that did not end in ``infra_error``: an infrastructure failure says nothing
about the model, so it is neither a success nor a failure. Episodes are paired across settings and models on
``(scenario_id, seed)``, and intervals resample clusters (``cluster_id``, or the scenario itself when empty), because
seeds and augmentations of one original scenario are not independent.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from cluster.report import family_summaries, new_table
from env_core.model import EpisodeResult, Outcome, Trajectory
from scoring.stats import Gap, PairedComparison, compare_paired, recovery_gap
from scoring.summary import summarize

Key = tuple[str, int]  # (scenario_id, seed): the unit paired across settings and models

METRIC = "solved"  # the accuracy used throughout: reports say so, so nobody mixes it up with ``correct``


@dataclass(frozen=True)
class GapRow:
    """Recovery gap of one model on one suite: baseline accuracy minus accuracy under ``setting``."""

    model: str
    suite: str
    setting: str
    baseline: str
    gap: Gap

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "suite": self.suite,
            "setting": self.setting,
            "baseline": self.baseline,
            **self.gap.as_dict(),
        }


@dataclass(frozen=True)
class ComparisonRow:
    """Paired comparison of two models on the episodes they share in one suite × setting (``a`` minus ``b``)."""

    suite: str
    setting: str
    model_a: str
    model_b: str
    comparison: PairedComparison

    def as_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "setting": self.setting,
            "model_a": self.model_a,
            "model_b": self.model_b,
            **self.comparison.as_dict(),
        }


@dataclass
class Analysis:
    """What a report shows. ``rows`` are :func:`scoring.summary.summarize` rows, ``families`` the family analyses
    (:func:`cluster.report.family_summaries`), ``sizes`` the model sizes in billions of parameters (None: unknown)."""

    rows: list[dict[str, Any]]
    families: dict[str, Any]
    gaps: list[GapRow]
    comparisons: list[ComparisonRow]
    sizes: dict[str, float | None]
    baseline: str = "clean"
    confidence: float = 0.95
    metric: str = METRIC
    n_episodes: int = 0
    n_infra_errors: int = 0
    models: list[str] = field(default_factory=list)
    suites: list[str] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)  # the baseline first, then the others as they appear

    def as_dict(self) -> dict[str, Any]:
        """Everything as JSON-able data (NaN and infinities become None), e.g. for an MLflow artifact."""
        return _json_safe(
            {
                "metric": self.metric,
                "baseline": self.baseline,
                "confidence": self.confidence,
                "n_episodes": self.n_episodes,
                "n_infra_errors": self.n_infra_errors,
                "models": self.models,
                "suites": self.suites,
                "settings": self.settings,
                "sizes": self.sizes,
                "rows": self.rows,
                "gaps": [g.as_dict() for g in self.gaps],
                "comparisons": [c.as_dict() for c in self.comparisons],
                "families": self.families,
            }
        )

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.as_dict(), indent=indent, allow_nan=False)

    def metrics(self) -> dict[str, float]:
        """Flat numeric metrics with MLflow-safe keys, e.g. ``accuracy/oracle/smoke/clean`` and
        ``gap/naive/smoke/first_tried``; undefined values (no valid episode) are left out."""
        out: dict[str, float] = {}

        def put(name: str, value: Any, *parts: str) -> None:
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                out["/".join([name, *(_metric_part(p) for p in parts)])] = float(value)

        for row in self.rows:
            key = (row["model"], row["suite"], row["setting"])
            put("accuracy", row["accuracy"], *key)
            if row["accuracy"] is not None:
                put("accuracy_ci_low", row["ci_low"], *key)
                put("accuracy_ci_high", row["ci_high"], *key)
            put("correct_rate", row["correct_rate"], *key)
            put("gave_up_rate", row["gave_up_rate"], *key)
            put("n_valid", row["n_valid"], *key)
            put("infra_errors", row["outcomes"]["infra_error"], *key)
        for g in self.gaps:
            key = (g.model, g.suite, g.setting)
            put("gap", g.gap.estimate, *key)
            put("gap_ci_low", g.gap.ci_low, *key)
            put("gap_ci_high", g.gap.ci_high, *key)
        for c in self.comparisons:
            key = (c.suite, c.setting, f"{c.model_a}-vs-{c.model_b}")
            put("difference", c.comparison.difference, *key)
            put("mcnemar_p", c.comparison.mcnemar.p_value, *key)
        return out


def _metric_part(text: str) -> str:
    """One component of an MLflow metric key: model names may hold ``/`` or ``:``, which would change its shape."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", text).strip(".") or "_"


def _json_safe(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "value") and isinstance(value.value, str):  # enums
        return value.value
    return value


def _key(r: EpisodeResult) -> Key:
    return (r.scenario_id, r.seed)


def _cluster(r: EpisodeResult) -> str:
    return r.cluster_id or r.scenario_id


def analyse(
    results: Iterable[EpisodeResult],
    model_sizes: Mapping[str, float | None] | None = None,
    baseline: str = "clean",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Analysis:
    """Summaries, family analyses, recovery gaps and pairwise model comparisons of a run's results.

    Recovery gap: for each model × suite and each setting other than ``baseline``, baseline accuracy minus
    accuracy under that setting, paired on ``(scenario_id, seed)`` and clustered by ``cluster_id``. Left out when
    the model has no valid baseline or no valid faulted episode on that suite. Comparisons: every pair of models
    (in order of first appearance) on each suite × setting, on the episodes both have (``a`` minus ``b``); pairs
    that share no valid episode are left out. ``infra_error`` episodes count in ``n`` only.
    """
    results = list(results)
    valid = [r for r in results if r.outcome != Outcome.infra_error]
    models = list(dict.fromkeys(r.model for r in results))
    suites = list(dict.fromkeys(r.suite for r in results))
    seen_settings = list(dict.fromkeys(r.setting for r in results))
    settings = ([baseline] if baseline in seen_settings else []) + [s for s in seen_settings if s != baseline]

    # solved per (model, suite, setting) -> {key: value}; clusters per suite, shared by every model and setting
    outcomes: dict[tuple[str, str, str], dict[Key, bool]] = {}
    clusters: dict[str, dict[Key, str]] = {}
    for r in valid:
        outcomes.setdefault((r.model, r.suite, r.setting), {})[_key(r)] = r.solved
        clusters.setdefault(r.suite, {})[_key(r)] = _cluster(r)
    stats = {"confidence": confidence, "resamples": resamples, "seed": seed}

    gaps: list[GapRow] = []
    for model, suite in itertools.product(models, suites):
        clean = outcomes.get((model, suite, baseline))
        if not clean:
            continue
        for setting in settings:
            faulted = outcomes.get((model, suite, setting))
            if setting == baseline or not faulted:
                continue
            gap = recovery_gap(
                {k: float(v) for k, v in clean.items()},
                {k: float(v) for k, v in faulted.items()},
                clusters=clusters[suite],
                **stats,
            )
            gaps.append(GapRow(model, suite, setting, baseline, gap))

    comparisons: list[ComparisonRow] = []
    for suite, setting in itertools.product(suites, settings):
        for model_a, model_b in itertools.combinations(models, 2):
            a = outcomes.get((model_a, suite, setting), {})
            b = outcomes.get((model_b, suite, setting), {})
            if not a.keys() & b.keys():
                continue
            comparison = compare_paired(a, b, clusters=clusters[suite], **stats)
            comparisons.append(ComparisonRow(suite, setting, model_a, model_b, comparison))

    given = dict(model_sizes or {})
    return Analysis(
        rows=summarize(results, confidence),
        families=family_summaries(results),
        gaps=gaps,
        comparisons=comparisons,
        sizes={m: given.get(m) for m in models},
        baseline=baseline,
        confidence=confidence,
        n_episodes=len(results),
        n_infra_errors=len(results) - len(valid),
        models=models,
        suites=suites,
        settings=settings,
    )


# ---------------------------------------------------------------------------------------------------------------
# Terminal: `undertow compare`


def _pct(value: float | None) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{100 * value:.1f}%"


def _points(value: float | None, signed: bool = True) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "—"
    return f"{100 * low:+.1f} … {100 * high:+.1f}"


def _p(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _row_accuracy(analysis: Analysis, model: str, suite: str, setting: str) -> float | None:
    for row in analysis.rows:
        if (row["model"], row["suite"], row["setting"]) == (model, suite, setting):
            return row["accuracy"]
    return None


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
    for row in analysis.comparisons:
        c = row.comparison
        if previous is not None and (row.suite, row.setting) != previous:
            table.add_section()
        previous = (row.suite, row.setting)
        table.add_row(
            row.suite,
            row.setting,
            row.model_a,
            row.model_b,
            str(c.n),
            _pct(c.accuracy_a),
            _pct(c.accuracy_b),
            _points(c.difference),
            _interval(c.ci_low, c.ci_high),
            str(c.mcnemar.only_a),
            str(c.mcnemar.only_b),
            _p(c.mcnemar.p_value),
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
    for row in analysis.gaps:
        g = row.gap
        if previous is not None and row.model != previous:
            table.add_section()
        previous = row.model
        table.add_row(
            row.model,
            row.suite,
            row.setting,
            _pct(_row_accuracy(analysis, row.model, row.suite, row.baseline)),
            _pct(_row_accuracy(analysis, row.model, row.suite, row.setting)),
            _points(g.estimate),
            _interval(g.ci_low, g.ci_high),
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


# ---------------------------------------------------------------------------------------------------------------
# Picking the episode the report shows


def pick_trace(
    results: Iterable[EpisodeResult],
    load_trajectories: Callable[[str], Iterable[Trajectory]],
) -> Trajectory | None:
    """An instructive episode to show: one where an injected fault fired and the model still solved the task,
    else one where a fault fired, else the first episode that did not end in ``infra_error``, else the first.
    ``load_trajectories(shard_id)`` yields a shard's trajectories; None when no candidate's trajectory is found."""
    results = list(results)
    fired = [r for r in results if r.faults_fired > 0 and r.outcome != Outcome.infra_error]
    tiers = [
        [r for r in fired if r.solved],
        fired,
        [r for r in results if r.outcome != Outcome.infra_error],
        results,
    ]
    loaded: dict[str, dict[str, Trajectory]] = {}
    tried: set[str] = set()
    for tier in tiers:
        for r in tier:
            if r.episode_id in tried:
                continue
            tried.add(r.episode_id)
            if r.shard_id not in loaded:
                loaded[r.shard_id] = {t.episode_id: t for t in load_trajectories(r.shard_id)}
            if r.episode_id in loaded[r.shard_id]:
                return loaded[r.shard_id][r.episode_id]
    return None


# ---------------------------------------------------------------------------------------------------------------
# HTML


_SHORT_OUTCOMES = {o.value: o.value.replace("_", " ") for o in Outcome}

_FIGURE_TEXT = {
    "accuracy_vs_size.png": "Accuracy (solved) against model size, one line per setting, with Wilson intervals",
    "clean_vs_faulted.png": "Accuracy (solved) per model under the baseline and each faulted setting, "
    "with Wilson intervals",
    "outcomes.png": "Episode outcome classes per model and setting (stacked counts)",
}


def _figure_alt(name: str) -> str:
    if name in _FIGURE_TEXT:
        return _FIGURE_TEXT[name]
    if name.startswith("errors_"):
        return f"Failure categories (share of failed episodes) per model and setting, suite {name[7:-4]}"
    return name


def _ci_text(low: float | None, high: float | None) -> str:
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "—"
    return f"{100 * low:.1f}–{100 * high:.1f}"


def _json_text(value: Any, limit: int = 4000) -> str:
    """Pretty JSON of a tool result or arguments, cut at ``limit`` characters so one huge result cannot bury the
    page."""
    text = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def _summary_view(analysis: Analysis) -> list[dict[str, Any]]:
    view = []
    for row in analysis.rows:
        view.append(
            {
                "model": row["model"],
                "suite": row["suite"],
                "setting": row["setting"],
                "n": row["n"],
                "n_valid": row["n_valid"],
                "accuracy": _pct(row["accuracy"]),
                "ci": "—" if row["accuracy"] is None else _ci_text(row["ci_low"], row["ci_high"]),
                "correct_rate": _pct(row["correct_rate"]),
                "gave_up_rate": _pct(row["gave_up_rate"]),
                "outcomes": [(_SHORT_OUTCOMES[k], v, k) for k, v in row["outcomes"].items() if v],
                "tokens": row["prompt_tokens"] + row["completion_tokens"],
                "mean_turns": "—" if row["mean_turns"] is None else f"{row['mean_turns']:.1f}",
                "infra": row["outcomes"]["infra_error"],
            }
        )
    return view


def _gap_view(analysis: Analysis) -> list[dict[str, Any]]:
    return [
        {
            "model": g.model,
            "suite": g.suite,
            "setting": g.setting,
            "baseline_accuracy": _pct(_row_accuracy(analysis, g.model, g.suite, g.baseline)),
            "faulted_accuracy": _pct(_row_accuracy(analysis, g.model, g.suite, g.setting)),
            "estimate": _points(g.gap.estimate),
            "ci": _interval(g.gap.ci_low, g.gap.ci_high),
            "n": g.gap.n_paired if g.gap.paired else f"unpaired ({g.gap.n_clean} / {g.gap.n_faulted})",
            "sign": _sign(g.gap.estimate, g.gap.ci_low, g.gap.ci_high),
        }
        for g in analysis.gaps
    ]


def _sign(estimate: float | None, low: float | None, high: float | None) -> str:
    """CSS class: 'pos' / 'neg' when the interval excludes zero, '' otherwise."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return ""
    return "pos" if low > 0 else "neg" if high < 0 else ""


def _comparison_view(analysis: Analysis) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in analysis.comparisons:
        c, m = row.comparison, row.comparison.mcnemar
        groups.setdefault((row.suite, row.setting), []).append(
            {
                "model_a": row.model_a,
                "model_b": row.model_b,
                "n": c.n,
                "unpaired": c.only_in_a + c.only_in_b,
                "accuracy_a": _pct(c.accuracy_a),
                "accuracy_b": _pct(c.accuracy_b),
                "difference": _points(c.difference),
                "ci": _interval(c.ci_low, c.ci_high),
                "both_right": m.both_right,
                "only_a": m.only_a,
                "only_b": m.only_b,
                "both_wrong": m.both_wrong,
                "p": _p(m.p_value),
                "method": m.method,
                "sign": _sign(c.difference, c.ci_low, c.ci_high),
            }
        )
    return [{"suite": s, "setting": t, "pairs": pairs} for (s, t), pairs in groups.items()]


def _family_view(analysis: Analysis) -> list[dict[str, Any]]:
    """Per suite with a family analysis: accuracy per model × setting, the decrease, and failure categories."""
    view = []
    for suite, summary in analysis.families.items():
        models = summary.get("models", {})
        settings = list(dict.fromkeys(s for m in models.values() for s in m["settings"]))
        categories: list[str] = []
        for data in models.values():
            for row in data["settings"].values():
                for category, count in row["errors"]["counts"].items():
                    if count and category not in categories:
                        categories.append(category)
        accuracy_rows, failure_rows = [], []
        for model, data in models.items():
            decrease = data.get("decrease")
            accuracy_rows.append(
                {
                    "model": model,
                    "cells": [
                        {
                            "accuracy": _pct(data["settings"].get(s, {}).get("accuracy")),
                            "ci": _ci_text(
                                data["settings"].get(s, {}).get("ci_low"), data["settings"].get(s, {}).get("ci_high")
                            ),
                        }
                        for s in settings
                    ],
                    "decrease": "—"
                    if decrease is None
                    else f"{decrease['absolute_points']:.1f} pts "
                    f"[{decrease['ci_low_points']:.1f}, {decrease['ci_high_points']:.1f}]",
                }
            )
            for setting, row in data["settings"].items():
                errors = row["errors"]
                if errors["n_failures"]:
                    failure_rows.append(
                        {
                            "model": model,
                            "setting": setting,
                            "n_failures": errors["n_failures"],
                            "cells": [
                                (errors["counts"].get(c, 0), _share(errors["percent"].get(c))) for c in categories
                            ],
                        }
                    )
        view.append(
            {
                "suite": suite,
                "baseline": summary.get("baseline"),
                "faulted": summary.get("faulted"),
                "settings": settings,
                "accuracy_rows": accuracy_rows,
                "categories": categories,
                "failure_rows": failure_rows,
            }
        )
    return view


def _share(percent: float | None) -> str:
    return "—" if percent is None else f"{percent:.0f}%"


def _trace_view(trace: Trajectory) -> dict[str, Any]:
    steps_by_turn: dict[int, list[dict[str, Any]]] = {}
    for step in trace.steps:
        obs = step.observation
        action = step.action
        item: dict[str, Any] = {"kind": action.kind, "content": action.content, "call": None, "observation": None}
        if action.tool_call is not None:
            item["call"] = {
                "name": action.tool_call.name,
                "arguments": action.tool_call.unparsed_arguments or _json_text(action.tool_call.arguments),
            }
        if obs is not None:
            item["observation"] = {
                "tool": obs.tool,
                "ok": obs.ok,
                "body": _json_text(obs.result) if obs.ok else None,
                "error": None if obs.error is None else f"{obs.error.type}: {obs.error.message}",
                "fault": None if obs.fault is None else obs.fault.kind.value,
                "fault_detail": None if obs.fault is None else obs.fault.detail,
                "disclosed": obs.disclosed,
                "notes": obs.notes,
                "latency_ms": f"{obs.latency_ms:.1f}",
            }
        steps_by_turn.setdefault(step.turn, []).append(item)
    stepped = {s.action.tool_call.id for s in trace.steps if s.action.tool_call is not None}
    turns = [
        {
            "index": turn.index,
            "content": turn.content,
            # Calls the model made that never became a step (e.g. past a per-turn limit): shown, not dropped.
            "tool_calls": [
                (c.name, c.unparsed_arguments or _json_text(c.arguments))
                for c in turn.tool_calls
                if c.id not in stepped
            ],
            "parse_error": turn.parse_error,
            "finish_reason": turn.finish_reason,
            "tokens": turn.usage.prompt_tokens + turn.usage.completion_tokens,
            "steps": steps_by_turn.pop(turn.index, []),
        }
        for turn in trace.turns
    ]
    # Steps whose turn was not recorded (should not happen) are still shown rather than silently dropped.
    for index, steps in sorted(steps_by_turn.items()):
        turns.append(
            {
                "index": index,
                "content": None,
                "tool_calls": [],
                "parse_error": None,
                "finish_reason": None,
                "tokens": 0,
                "steps": steps,
            }
        )
    return {
        "episode_id": trace.episode_id,
        "scenario_id": trace.scenario_id,
        "model": trace.model,
        "setting": trace.setting,
        "seed": trace.seed,
        "outcome": trace.outcome.value,
        "gave_up": trace.gave_up,
        # The final answer is usually the last turn's text, already shown: repeat it only when it differs.
        "final_answer": None if trace.turns and trace.final_answer == trace.turns[-1].content else trace.final_answer,
        "error": trace.error,
        "faults": [
            {
                "kind": f.kind.value,
                "targets": ", ".join(f.targets),
                "persistence": f.persistence.mode
                + (f" (first {f.persistence.after} calls)" if f.persistence.after else ""),
            }
            for f in trace.faults
        ],
        "n_fired": sum(1 for s in trace.steps if s.observation is not None and s.observation.fault is not None),
        "turns": turns,
    }


def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("cluster", "templates"),
        autoescape=True,  # every string in the report is user- or model-derived until proven otherwise
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(
    analysis: Analysis,
    title: str,
    figures: Mapping[str, bytes],
    trace: Trajectory | None = None,
    meta: Mapping[str, str] | None = None,
) -> str:
    """The self-contained HTML report: summary, plots (embedded PNG data URIs), recovery gaps, paired
    comparisons, family tables, one episode's trace and the run's metadata. No external resources, no scripts."""
    template = _environment().get_template("report.html.j2")
    return template.render(
        title=title,
        analysis=analysis,
        level=f"{100 * analysis.confidence:.0f}%",
        summary=_summary_view(analysis),
        figures=[
            {"name": name, "alt": _figure_alt(name), "src": "data:image/png;base64," + base64.b64encode(png).decode()}
            for name, png in figures.items()
        ],
        gaps=_gap_view(analysis),
        comparisons=_comparison_view(analysis),
        families=_family_view(analysis),
        trace=None if trace is None else _trace_view(trace),
        meta=[(str(k), str(v)) for k, v in (meta or {}).items()],
        sizes=list(analysis.sizes.items()),
        any_size=any(size for size in analysis.sizes.values()),
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
) -> tuple[str, dict[str, bytes]]:
    """The HTML report and the figures it embeds (also logged as files to MLflow), with an instructive trace."""
    from cluster.plots import figures  # plots draws an Analysis: imported here, not at the top

    images = figures(analysis)
    trace = pick_trace(results, load_trajectories)
    return render_html(analysis, title, images, trace, meta), images
