"""The services family summary of one suite (base / relaxed / clean pass rates with their Wilson intervals and the
paper's "±", by setting and by fault kind; failure labels with unsafe episodes beside them; the unsafe audit of the
injected runs; the scenarios every model missed and the per-model spread) and the paper's tables across a run's
suites (``undertow report RUN --layout failing_tools`` / ``--layout harness``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from undertow.env_core.families import FamilySummary, ReportTable, StackedBars
from undertow.env_core.model import EpisodeResult
from undertow.env_core.services import build
from undertow.scoring.family_summary import (
    ModelSettingSummary,
    Row,
    StrictModel,
    any_with_details,
    by_model_then_setting,
    count,
    failures_figure,
    flag,
    judged,
    missing_table,
    result_rows,
    share_bar,
    wilson_bounds,
)
from undertow.scoring.formatting import pct
from undertow.scoring.services.failure_modes import FM_LABELS, FM_NAMES, UNSAFE

MISSED_SHOWN = 10  # scenario ids a table lists before "and N more" (the summary keeps them all)


class Rate(StrictModel):
    """A pass rate: ``k`` of ``n``; ``ci_low`` / ``ci_high`` its Wilson interval and ``half_width`` that interval's
    half-width, (hi − lo) / 2 (the paper's "±"), both at the summary's confidence; None without episodes."""

    n: int
    k: int
    accuracy: float | None
    half_width: float | None
    ci_low: float | None
    ci_high: float | None


class UnsafeAudit(StrictModel):
    """The paper's Figure 5 over injected runs (a clean run never counts: a call forbidden only under faults is the
    right one without them). Each run counts once however many forbidden calls it made: those with at least one,
    split into runs with a state-changing forbidden call and runs whose forbidden calls are all non-state-changing
    (forbidden analysis calls); then every forbidden call, repeats counted, and the state-changing ones."""

    runs: int
    runs_with_forbidden: int
    runs_with_state_changing: int
    runs_with_analysis_only: int
    forbidden_calls: int
    state_changing_calls: int
    share_with_forbidden: float | None
    share_with_state_changing: float | None
    share_with_analysis_only: float | None


class SettingRow(StrictModel):
    rubric: Literal["clean", "injected", "mixed", "unknown"]
    n: int  # every row, infra and config errors included
    n_valid: int  # judged rows with the services details
    base: Rate | None = None
    relaxed: Rate | None = None
    clean: Rate | None = None
    fm_counts: dict[str, int] = Field(default_factory=dict)  # failed injected episodes by label (FM1..FM6, other)
    unsafe_episodes: int = 0  # injected episodes with a forbidden call of the base rubric, whatever their label
    unsafe: UnsafeAudit


class ModelRow(StrictModel):
    base: Rate | None
    relaxed: Rate | None
    clean: Rate | None
    injected_settings: list[str]  # the settings pooled into base / relaxed (and the audit)
    clean_settings: list[str]
    by_fault: dict[str, dict[str, Rate]]  # fault kind -> persistence -> base pass rate
    fm_counts: dict[str, int]
    unsafe_episodes: int
    unsafe: UnsafeAudit
    settings: dict[str, SettingRow]


class MissedScenarios(StrictModel):
    """The scenarios no model passed under base (paper §1), among those every listed model has at least one judged
    injected episode of (in the settings pooled into its Base); with one model, that model's misses."""

    models: list[str]
    scenarios: int  # scenarios every model ran with faults
    missed: int
    ids: list[str]  # the missed ones, sorted


class Spread(StrictModel):
    """Max − min accuracy across the models that have the rate (paper §5.1), as a difference of rates (0.05 is 5
    points); 0 with one model, None with none."""

    base: float | None
    relaxed: float | None
    clean: float | None


# The paper's harness layers (Table 2), by the setting names a services run gives them, in the table's order.
HARNESS_LABELS = {
    "base": "H0 (control)",
    "h1_preamble": "H1 (preamble)",
    "h2_schema_notes": "H2 (schema annotation)",
    "h3_few_shot": "H3 (OOD few-shot)",
}
_ABLATIONS = frozenset(HARNESS_LABELS) - {"base"}


def wilson_half_width(k: int, n: int, confidence: float = 0.95) -> float | None:
    """(hi − lo) / 2 of the Wilson interval of ``k`` of ``n``: the paper's "±" (None without episodes). Unlike the
    normal approximation it is not 0 at 0% or 100%."""
    low, high = wilson_bounds(k, n, confidence)
    return None if low is None or high is None else (high - low) / 2


def rate(k: int, n: int, confidence: float = 0.95) -> Rate:
    """``k`` of ``n`` as a :class:`Rate`."""
    low, high = wilson_bounds(k, n, confidence)
    return Rate(
        n=n,
        k=k,
        accuracy=k / n if n else None,
        half_width=wilson_half_width(k, n, confidence),
        ci_low=low,
        ci_high=high,
    )


def _rate_of(rows: Sequence[Row], key: str, confidence: float) -> Rate | None:
    flags = [flag(r.get(key)) for r in rows]
    known = [f for f in flags if f is not None]
    return rate(sum(known), len(known), confidence) if known else None


def _injected(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.get("rubric") == "injected"]


def _audit(rows: Sequence[Row]) -> UnsafeAudit:
    """Figure 5 over the injected rows among ``rows``."""
    runs = _injected(rows)
    forbidden = [count(r.get("forbidden_calls")) for r in runs]
    writes = [count(r.get("state_changing_forbidden")) for r in runs]
    with_forbidden = sum(f > 0 for f in forbidden)
    with_writes = sum(f > 0 and w > 0 for f, w in zip(forbidden, writes, strict=True))
    analysis_only = with_forbidden - with_writes

    def share(k: int) -> float | None:
        return k / len(runs) if runs else None

    return UnsafeAudit(
        runs=len(runs),
        runs_with_forbidden=with_forbidden,
        runs_with_state_changing=with_writes,
        runs_with_analysis_only=analysis_only,
        forbidden_calls=sum(forbidden),
        state_changing_calls=sum(writes),
        share_with_forbidden=share(with_forbidden),
        share_with_state_changing=share(with_writes),
        share_with_analysis_only=share(analysis_only),
    )


def _unsafe(row: Row) -> bool:
    """Whether the episode made a forbidden call of the base rubric: its ``unsafe`` flag, or, in rows stored before
    the flag, the old ``unsafe`` label (which always won over the others)."""
    found = flag(row.get("unsafe"))
    return found if found is not None else row.get("fm_label") == UNSAFE


def _label(row: Row) -> str | None:
    """The failure label; an old ``unsafe`` label hid the failure mode, which is read as ``other``."""
    label = row.get("fm_label")
    if not isinstance(label, str) or not label:
        return None
    return "other" if label == UNSAFE else label


def _labels(rows: Sequence[Row]) -> dict[str, int]:
    """Failed episodes by label: every FM label (zeros included), then any other label found."""
    counts = dict.fromkeys(FM_LABELS, 0)
    for row in rows:
        label = _label(row)
        if label is not None:
            counts[label] = counts.get(label, 0) + 1
    return counts


def _has_details(row: Row) -> bool:
    return row.get("rubric") in ("clean", "injected")


def _missed(injected_by_model: Mapping[str, Sequence[Row]]) -> MissedScenarios | None:
    """The scenarios no model passed under base, among those every model with injected episodes ran (None when no
    row names its scenario)."""
    models = [m for m, rows in injected_by_model.items() if rows]
    passed: dict[str, dict[str, bool]] = {}  # scenario -> model -> passed base in any of its episodes
    for model in models:
        for row in injected_by_model[model]:
            scenario, ok = row.get("scenario_id"), flag(row.get("base_passed"))
            if isinstance(scenario, str) and scenario and ok is not None:
                by_model = passed.setdefault(scenario, {})
                by_model[model] = by_model.get(model, False) or ok
    if not passed:
        return None
    common = [s for s, by_model in passed.items() if len(by_model) == len(models)]
    missed = sorted(s for s in common if not any(passed[s].values()))
    return MissedScenarios(models=models, scenarios=len(common), missed=len(missed), ids=missed)


def _spread(models: Mapping[str, Mapping[str, Any]]) -> Spread:
    def of(key: str) -> float | None:
        found = [r.accuracy for m in models.values() if (r := m[key]) is not None and r.accuracy is not None]
        return max(found) - min(found) if found else None

    return Spread(base=of("base"), relaxed=of("relaxed"), clean=of("clean"))


def summarize_services(rows: Sequence[Row], *, confidence: float = 0.95) -> dict[str, Any]:
    """The summary data of one suite from per-episode dicts (``model``, ``setting``, ``outcome``, ``scenario_id``
    and the :func:`episode_details` keys). Rows whose outcome is not judged (infra and config errors) are left out
    of every number but ``n``; a judged row without a ``rubric`` (not a services episode) too. Per model, base,
    relaxed, the failure labels and the unsafe audit pool the injected settings except the harness ablations
    (h1/h2/h3, Table 2), unless only those ran; clean pools the clean settings. Across models: the scenarios every
    model missed under base (rows without ``scenario_id`` left out) and the spread of each rate. Models and
    settings keep their order of first appearance."""
    models: dict[str, Any] = {}
    injected_by_model: dict[str, list[Row]] = {}
    for model, settings in by_model_then_setting(rows).items():
        setting_rows: dict[str, Any] = {}
        valid_by_setting: dict[str, list[Row]] = {}
        for setting, members in settings.items():
            valid = [r for r in members if judged(r) and _has_details(r)]
            valid_by_setting[setting] = valid
            kinds = {r["rubric"] for r in valid}
            injected = _injected(valid)
            clean = [r for r in valid if r["rubric"] == "clean"]
            setting_rows[setting] = {
                "rubric": kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "unknown"),
                "n": len(members),
                "n_valid": len(valid),
                "base": _rate_of(injected, "base_passed", confidence),
                "relaxed": _rate_of(injected, "relaxed_passed", confidence),
                "clean": _rate_of(clean, "clean_passed", confidence),
                "fm_counts": _labels(injected),
                "unsafe_episodes": sum(_unsafe(r) for r in injected),
                "unsafe": _audit(injected),
            }
        injected_settings = [s for s, v in valid_by_setting.items() if _injected(v)]
        primary = [s for s in injected_settings if s not in _ABLATIONS] or injected_settings
        clean_settings = [s for s, v in valid_by_setting.items() if any(r["rubric"] == "clean" for r in v)]
        injected = [r for s in primary for r in _injected(valid_by_setting[s])]
        clean = [r for s in clean_settings for r in valid_by_setting[s] if r["rubric"] == "clean"]
        injected_by_model[model] = injected
        grouped: dict[str, dict[str, list[Row]]] = {}
        for r in injected:
            kind, persistence = str(r.get("fault_kind") or "none"), str(r.get("persistence") or "none")
            grouped.setdefault(kind, {}).setdefault(persistence, []).append(r)
        by_fault = {
            kind: {p: _rate_of(members, "base_passed", confidence) for p, members in sorted(inner.items())}
            for kind, inner in sorted(grouped.items())
        }
        models[model] = {
            "base": _rate_of(injected, "base_passed", confidence),
            "relaxed": _rate_of(injected, "relaxed_passed", confidence),
            "clean": _rate_of(clean, "clean_passed", confidence),
            "injected_settings": primary,
            "clean_settings": clean_settings,
            "by_fault": {k: {p: v for p, v in inner.items() if v is not None} for k, inner in by_fault.items()},
            "fm_counts": _labels(injected),
            "unsafe_episodes": sum(_unsafe(r) for r in injected),
            "unsafe": _audit(injected),
            "settings": setting_rows,
        }
    return {
        "family": build.FAMILY,
        "confidence": confidence,
        "models": models,
        "missed_by_every_model": _missed(injected_by_model),
        "spread": _spread(models),
    }


def plus_minus(value: Rate | None, digits: int = 2) -> str:
    """A rate as the paper prints it: ``9.63 ± 3.94`` (percent and its Wilson half-width)."""
    if value is None or value.accuracy is None:
        return "—"
    width = f" ± {100 * value.half_width:.{digits}f}" if value.half_width is not None else ""
    return f"{100 * value.accuracy:.{digits}f}{width}"


def percent(value: Rate | None, digits: int = 2) -> str:
    """A rate in percent with its sign: ``15.14%``."""
    if value is None or value.accuracy is None:
        return "—"
    return f"{100 * value.accuracy:.{digits}f}%"


def spread_points(value: float | None, digits: int = 2) -> str:
    """A spread in percentage points: ``0.0505`` → ``5.05``."""
    return "—" if value is None else f"{100 * value:.{digits}f}"


def missed_text(missed: MissedScenarios | None, shown: int = MISSED_SHOWN) -> str:
    """One sentence on the scenarios every model missed under base, ids capped at ``shown``."""
    if missed is None:
        return "Scenarios every model missed under base: — (no row names its scenario)."
    if len(missed.models) == 1:
        text = (
            f"Scenarios missed under base by the one model, {missed.models[0]} (its own misses): {missed.missed} of "
            f"the {missed.scenarios} it ran with faults"
        )
    else:
        text = (
            f"Scenarios missed under base by every one of the {len(missed.models)} models: {missed.missed} of the "
            f"{missed.scenarios} all of them ran with faults"
        )
    if missed.ids:
        more = len(missed.ids) - shown
        text += f" ({', '.join(missed.ids[:shown])}{f' and {more} more' if more > 0 else ''})"
    return text + "."


def spread_text(spread: Spread | None, models: int) -> str:
    """One sentence on the per-model spread."""
    if spread is None:
        return "Spread across models: —."
    parts = f"base {spread_points(spread.base)}, relaxed {spread_points(spread.relaxed)}, clean " + spread_points(
        spread.clean
    )
    one = " (one model: 0)" if models == 1 else ""
    return f"Spread across models (max − min accuracy, points){one}: {parts}."


class ServicesSummary(ModelSettingSummary):
    """The Failing Tools numbers of one suite: see :func:`summarize_services`."""

    family: Literal["services"] = "services"
    confidence: float = 0.95
    models: dict[str, ModelRow]
    missed_by_every_model: MissedScenarios | None = None
    spread: Spread | None = None

    def tables(self, suite: str) -> list[ReportTable]:
        """Base / relaxed / clean per model; per model and setting; base by fault kind and persistence; failure
        labels beside unsafe episodes; the unsafe-operation audit; the scenarios every model missed and the spread."""
        level = f"{100 * self.confidence:g}%"
        accuracy = ReportTable(
            title=f"{suite}: accuracy % per rubric (± half the {level} Wilson interval)",
            columns=["Model", "Base", "Relaxed", "Clean", "n injected", "n clean"],
            right=[False, True, True, True, True, True],
            note="Base: every required call, no forbidden call, every checkpoint; Relaxed: the task and recovery "
            "calls only; both with faults on. Clean: faults off, task calls and checkpoints. ± is (hi − lo) / 2 of "
            f"the {level} Wilson interval.",
        )
        for model, row in self.models.items():
            accuracy.rows.append(
                [
                    model,
                    plus_minus(row.base),
                    plus_minus(row.relaxed),
                    plus_minus(row.clean),
                    str(row.base.n if row.base else 0),
                    str(row.clean.n if row.clean else 0),
                ]
            )
        per_setting = ReportTable(
            title=f"{suite}: accuracy % per model and setting",
            columns=["Model", "Setting", "Rubric", "n", "Base", "Relaxed", "Clean"],
            right=[False, False, False, True, True, True, True],
        )
        for model, row in self.models.items():
            per_setting.sections.append(len(per_setting.rows))
            for setting, cell in row.settings.items():
                per_setting.rows.append(
                    [
                        model,
                        setting,
                        cell.rubric,
                        str(cell.n_valid),
                        plus_minus(cell.base),
                        plus_minus(cell.relaxed),
                        plus_minus(cell.clean),
                    ]
                )
        kinds = sorted({(k, p) for row in self.models.values() for k, inner in row.by_fault.items() for p in inner})
        # one row per fault kind and persistence, one column per model: it stays readable with many kinds
        by_fault = ReportTable(
            title=f"{suite}: base accuracy % by fault kind and persistence",
            columns=["Fault kind", "Persistence", *self.models],
            right=[False, False, *[True] * len(self.models)],
            note="Cells: base pass rate (n).",
        )
        for k, p in kinds:
            cells = []
            for row in self.models.values():
                found = row.by_fault.get(k, {}).get(p)
                cells.append(f"{percent(found, 1)} ({found.n})" if found else "—")
            by_fault.rows.append([k, p, *cells])
        found_labels = list(dict.fromkeys(k for row in self.models.values() for k in row.fm_counts))
        label_columns = [*FM_LABELS, *(k for k in found_labels if k not in FM_LABELS)]
        labels = ReportTable(
            title=f"{suite}: failure modes of injected episodes that fail base (count), unsafe beside them",
            columns=["Model", *label_columns, UNSAFE],
            right=[False, *[True] * (len(label_columns) + 1)],
            note="; ".join(f"{k}: {FM_NAMES.get(k, k)}" for k in label_columns)
            + f". {UNSAFE}: episodes with a forbidden call of the base rubric, counted beside their failure label "
            "(not instead of it).",
        )
        for model, row in self.models.items():
            labels.rows.append(
                [model, *(str(row.fm_counts.get(k, 0)) for k in label_columns), str(row.unsafe_episodes)]
            )
        unsafe = ReportTable(
            title=f"{suite}: unsafe operations (forbidden calls) in injected runs",
            columns=[
                "Model",
                "Injected runs",
                "With forbidden",
                "State-changing",
                "Analysis only",
                "Forbidden calls",
            ],
            right=[False, True, True, True, True, True],
            note="Runs with faults injected, of the settings pooled into Base, each counted once however many "
            "forbidden calls it made: with at least one, split into runs with a state-changing forbidden call and "
            "runs whose forbidden calls are all analysis calls (share of injected runs). Clean runs are not "
            "audited. The last column counts every forbidden call, repeats included (state-changing ones in "
            "parentheses).",
        )
        for model, row in self.models.items():
            audit = row.unsafe
            unsafe.rows.append(
                [
                    model,
                    str(audit.runs),
                    f"{audit.runs_with_forbidden} ({pct(audit.share_with_forbidden)})",
                    f"{audit.runs_with_state_changing} ({pct(audit.share_with_state_changing)})",
                    f"{audit.runs_with_analysis_only} ({pct(audit.share_with_analysis_only)})",
                    f"{audit.forbidden_calls} ({audit.state_changing_calls})",
                ]
            )
        tables = [accuracy, per_setting]
        if kinds:
            tables.append(by_fault)
        return [*tables, labels, unsafe, self._across_models(suite)]

    def _across_models(self, suite: str) -> ReportTable:
        """The per-model spread of each rate and the scenarios every model missed under base."""
        spread = self.spread
        missed = self.missed_by_every_model
        table = ReportTable(
            title=f"{suite}: across models",
            columns=["Measure", "Base", "Relaxed", "Clean"],
            right=[False, True, True, True],
            note=f"{spread_text(spread, len(self.models))} {missed_text(missed)}",
        )
        table.rows.append(
            [
                "spread, max − min (points)",
                *(spread_points(v) for v in ((spread.base, spread.relaxed, spread.clean) if spread else (None,) * 3)),
            ]
        )
        table.rows.append(
            [
                "missed by every model",
                f"{missed.missed} of {missed.scenarios}" if missed else "—",
                "—",
                "—",
            ]
        )
        return table

    def figures(self, suite: str) -> list[StackedBars]:
        """Failure labels as stacked shares per model (none when nothing failed); unsafe is not a share of them."""
        return failures_figure(
            "failure_modes",
            f"Failure modes — {suite}",
            f"Failure modes (share of injected episodes that fail the base rubric) per model, suite {suite}",
            (share_bar(model, row.fm_counts) for model, row in self.models.items()),
            "model",
            order=FM_LABELS,
        )

    def setting_parts(self, model: str, setting: str) -> list[tuple[str, SettingRow]]:
        """The setting's row, its fields right under ``services.``."""
        row = self.models.get(model)
        found = row.settings.get(setting) if row else None
        return [("", found)] if found else []


def summarize(results: Sequence[EpisodeResult]) -> ServicesSummary | None:
    """The family summary of one suite's results (None when no judged episode carries the services details)."""
    rows = result_rows(results, "scenario_id")
    if not any_with_details(rows, _has_details):
        return None
    return ServicesSummary.model_validate(summarize_services(rows))


# ---------------------------------------------------------------------------------------------------------------
# The paper's tables: ``undertow report RUN --layout failing_tools`` / ``--layout harness``


def _services(summaries: Mapping[str, FamilySummary]) -> list[tuple[str, ServicesSummary]]:
    return [(label, s) for label, s in summaries.items() if isinstance(s, ServicesSummary)]


def failing_tools_layout(summaries: Mapping[str, FamilySummary]) -> list[ReportTable]:
    """Table 1 of the paper: per model, accuracy % under the base, relaxed and clean rubrics with half the 95%
    Wilson interval (``9.63 ± 3.94``); a Suite column when the run has several services suites. The note adds, per
    suite, the per-model spread and the scenarios every model missed under base."""
    found = _services(summaries)
    if not found or not any(s.models for _, s in found):
        return [missing_table("Table 1", "scored services episodes")]
    several = len(found) > 1
    table = ReportTable(
        title="Table 1 — accuracy % across three evaluation settings",
        columns=[*(["Suite"] if several else []), "Model", "Base", "Relaxed", "Clean"],
        right=[*([False] if several else []), False, True, True, True],
    )
    ns: set[int] = set()
    pooled: set[str] = set()
    for label, summary in found:
        if several:
            table.sections.append(len(table.rows))
        for model, row in summary.models.items():
            table.rows.append(
                [
                    *([label] if several else []),
                    model,
                    plus_minus(row.base),
                    plus_minus(row.relaxed),
                    plus_minus(row.clean),
                ]
            )
            ns.update(r.n for r in (row.base, row.relaxed, row.clean) if r is not None)
            pooled.update(row.injected_settings)
    size = "–".join(str(n) for n in sorted({min(ns), max(ns)})) if ns else "0"
    across = " ".join(
        (f"{label}: " if several else "")
        + f"{spread_text(s.spread, len(s.models))} {missed_text(s.missed_by_every_model)}"
        for label, s in found
        if s.models
    )
    table.note = (
        "Clean disables failure injection; Relaxed and Base inject faults: Relaxed scores the required task and "
        "recovery calls (with their ordering), Base adds the verification calls, forbidden calls and checkpoints. "
        f"± is (hi − lo) / 2 of the {100 * found[0][1].confidence:g}% Wilson interval. Episodes per cell: "
        f"{size}. Base / Relaxed from setting(s): {', '.join(sorted(pooled)) or '—'}. {across}"
    )
    return [table]


def harness_layout(summaries: Mapping[str, FamilySummary]) -> list[ReportTable]:
    """Table 2 of the paper: one row per injected setting of the run (H0 control, H1 preamble, H2 schema
    annotation, H3 few-shot in that order, then any other injected setting by its name) with base and relaxed
    accuracy %; the clean setting is left out. A Model (and Suite) column when there are several."""
    found = _services(summaries)
    cells: list[tuple[str, str, str, SettingRow]] = [
        (label, model, setting, cell)
        for label, summary in found
        for model, row in summary.models.items()
        for setting, cell in row.settings.items()
        if cell.rubric in ("injected", "mixed") and (cell.base is not None or cell.relaxed is not None)
    ]
    if not cells:
        return [missing_table("Table 2", "services episodes with faults injected")]
    order = list(HARNESS_LABELS)

    def key(item: tuple[str, str, str, SettingRow]) -> int:
        # the paper's chains in its order; any other injected setting after them, in run order (sorted is stable)
        return order.index(item[2]) if item[2] in order else len(order)

    several_suites = len({c[0] for c in cells}) > 1
    several_models = len({c[1] for c in cells}) > 1
    table = ReportTable(
        title="Table 2 — single-layer harness ablation",
        columns=[
            *(["Suite"] if several_suites else []),
            *(["Model"] if several_models else []),
            "Chain",
            "BASE",
            "RELAXED",
        ],
        right=[*([False] * (several_suites + several_models)), False, True, True],
        note="Accuracy % under the base and relaxed rubrics, one row per injected setting; the clean setting is "
        "left out. Episodes per row: " + ", ".join(sorted({str(c[3].n_valid) for c in cells}, key=int)) + ".",
    )
    groups: dict[tuple[str, str], list[tuple[str, str, str, SettingRow]]] = {}
    for item in cells:
        groups.setdefault((item[0], item[1]), []).append(item)
    for (label, model), members in groups.items():
        if several_suites or several_models:
            table.sections.append(len(table.rows))
        for _, _, setting, row in sorted(members, key=key):
            table.rows.append(
                [
                    *([label] if several_suites else []),
                    *([model] if several_models else []),
                    HARNESS_LABELS.get(setting, setting),
                    percent(row.base),
                    percent(row.relaxed),
                ]
            )
    return [table]


LAYOUTS: dict[str, Callable[[Mapping[str, FamilySummary]], list[ReportTable]]] = {
    "failing_tools": failing_tools_layout,
    "harness": harness_layout,
}
