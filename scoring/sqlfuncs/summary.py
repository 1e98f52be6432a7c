"""The sqlfuncs summary of one suite: accuracy with bootstrap intervals and standard errors, failures by category,
the faulted setting's decrease and its backup-plan strata, giving up and the turn distributions (the paper's
Figure 5), and how the summary renders (tables, the failure and turns figures, MLflow metrics)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from undertow.env_core.families import Box, BoxPlots, ReportTable, StackedBars
from undertow.env_core.model import EpisodeResult, Outcome
from undertow.scoring.family_summary import (
    ModelSettingSummary,
    Row,
    StrictModel,
    by_model_then_setting,
    category_counts,
    failures_figure,
    judged,
    result_rows,
    share_bar,
)
from undertow.scoring.formatting import pct, with_ci
from undertow.scoring.sqlfuncs.taxonomy import ERROR_CATEGORIES
from undertow.scoring.stats import bootstrap_difference_interval, bootstrap_interval, bootstrap_standard_error


def _finite_or_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def _accuracy(values: list[float], confidence: float, resamples: int, seed: int) -> dict[str, Any]:
    """n, n_correct, accuracy and its bootstrap interval (fractions; None without data)."""
    low, high = bootstrap_interval(values, confidence, resamples, seed)
    return {
        "n": len(values),
        "n_correct": int(sum(values)),
        "accuracy": sum(values) / len(values) if values else None,
        "ci_low": _finite_or_none(low),
        "ci_high": _finite_or_none(high),
    }


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _present(value: Any) -> bool:
    """A stored number: not None, and not the NaN that pandas puts in a missing numeric cell."""
    return value is not None and not isinstance(value, str) and not math.isnan(float(value))


def turn_stats(turns: Sequence[float]) -> dict[str, Any] | None:
    """The distribution of a number of turns: n, min, quartiles (median included), max and mean; None without any.
    Quartiles interpolate linearly between the sorted values (NumPy's default, what box plots draw)."""
    if not turns:
        return None
    q1, median, q3 = (float(q) for q in np.percentile(np.asarray(turns, dtype=float), [25, 50, 75]))
    return {
        "n": len(turns),
        "min": float(min(turns)),
        "q1": q1,
        "median": median,
        "q3": q3,
        "max": float(max(turns)),
        "mean": sum(turns) / len(turns),
    }


def _turn_split(timed: list[tuple[float, bool]]) -> dict[str, Any] | None:
    """Turn distributions of all, correct and incorrect episodes ((n_turns, correct) pairs); None without any."""
    if not timed:
        return None
    return {
        "all": turn_stats([n for n, _ in timed]),
        "correct": turn_stats([n for n, ok in timed if ok]),
        "incorrect": turn_stats([n for n, ok in timed if not ok]),
    }


def _backup_stratum(calls: Any) -> str:
    """single / multi / none for a stored ``backup_plan_calls`` (None, or NaN after a trip through pandas: none)."""
    if not _present(calls) or calls < 1:
        return "none"
    return "single" if calls == 1 else "multi"


def summarize_sqlfuncs(
    rows: Sequence[Row],
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    baseline: str = "clean",
    faulted: str = "first_tried",
) -> dict[str, Any]:
    """The paper's tables for one suite (call it separately for the open and the closed setting).

    ``rows`` are per-episode dicts with ``model``, ``setting``, ``correct`` (bool), ``outcome`` (str) and the
    :func:`episode_details` keys; ``n_turns``, ``gave_up`` and ``expected_give_up`` (bools, default False) and
    ``answers`` (how the answer was matched, default "lenient") are optional. Episodes that ended in ``infra_error`` or
    ``config_error`` are left out of every number except ``n`` (they say nothing about the model); every other
    outcome counts, a
    ``budget_exhausted`` or ``parse_error`` episode as a failure. Accuracies are fractions in [0, 1] with a
    percentile-bootstrap interval over episodes (:func:`scoring.stats.bootstrap_interval`, ``seed`` fixed, so the
    output is deterministic); an interval is None where there is no episode. Returns::

        {"confidence": 0.95, "baseline": "clean", "faulted": "first_tried",
         "answers": ["strict"],                                # the matchers the episodes were scored with
         "models": {model: {
            "settings": {setting: {
                "n": all rows, "n_valid": rows without infra_error, "n_correct": int,
                "accuracy": float | None, "ci_low": float | None, "ci_high": float | None,
                "se": float | None,                            # bootstrap standard error of accuracy
                "errors": {"n_failures": int,
                           "counts": {category: int},           # every ERROR_CATEGORIES key, plus
                           "percent": {category: float | None}}, # "uncategorized" if a failure has none
                "turns": {"all": mean, "correct": mean, "incorrect": mean} | None,  # None without n_turns
                "n_gave_up": int, "gave_up_share": float | None,  # ended early without an answer
                "n_budget_exhausted": int, "budget_exhausted_share": float | None,
                "expects_give_up": bool,                       # every valid episode expected a give-up
                "turn_distribution": {"all" | "correct" | "incorrect":
                    {"n", "min", "q1", "median", "q3", "max", "mean"} | None} | None,
            }},
            "turns_solvable": {"all", "correct", "incorrect"} | None,  # pooled over settings not expecting a
                                                                       # give-up (the paper's Figure 5, right)
            "decrease": {                                       # None unless both settings have valid episodes
                "baseline_accuracy": float, "faulted_accuracy": float,
                "absolute_points": 100 * (baseline - faulted),  # e.g. 71.4 - 41.1 = 30.3 points
                "relative_percent": 100 * (baseline - faulted) / baseline | None,  # the paper's "Acc. decrease"
                "ci_low_points": float, "ci_high_points": float,  # bootstrap CI of absolute_points
            } | None,
            "by_backup_plan_calls": {                          # faulted setting only (the paper's Table 5)
                "single": {"n", "n_correct", "accuracy", "ci_low", "ci_high"},  # backup_plan_calls == 1
                "multi": {...},                                # backup_plan_calls >= 2
                "none": {...},                                 # nothing disabled (None), or no plan left (0)
            },
         }}}

    Error percentages are shares of the setting's failures (valid episodes with ``correct`` False), None when
    there are no failures. ``se`` is the bootstrap standard error of the accuracy
    (:func:`scoring.stats.bootstrap_standard_error`, same ``seed``), the "± SE" of the paper's tables. Giving up is
    ending before the turn budget without an answer (``gave_up``); running out of turns (``budget_exhausted``) is
    counted apart and is not giving up; both shares are over valid episodes. The decrease interval resamples the
    two settings independently (:func:`undertow.scoring.stats.bootstrap_difference_interval`), which is conservative for
    paired runs. Models and settings appear in order of first appearance.
    """
    models: dict[str, Any] = {}
    for model, settings in by_model_then_setting(rows).items():
        setting_out: dict[str, Any] = {}
        outcomes: dict[str, list[float]] = {}
        for setting, members in settings.items():
            valid = [r for r in members if judged(r)]
            values = [float(bool(r["correct"])) for r in valid]
            outcomes[setting] = values
            failures = [r for r in valid if not r["correct"]]
            counts = category_counts(failures, "error_category", ERROR_CATEGORIES)
            percent = {k: (100 * v / len(failures) if failures else None) for k, v in counts.items()}
            timed = [(float(r["n_turns"]), bool(r["correct"])) for r in valid if _present(r.get("n_turns"))]
            turns = (
                {
                    "all": _mean([n for n, _ in timed]),
                    "correct": _mean([n for n, ok in timed if ok]),
                    "incorrect": _mean([n for n, ok in timed if not ok]),
                }
                if timed
                else None
            )
            accuracy = _accuracy(values, confidence, resamples, seed)
            gave_up = sum(bool(r.get("gave_up")) for r in valid)
            exhausted = sum(r["outcome"] == Outcome.budget_exhausted.value for r in valid)
            setting_out[setting] = {
                "n": len(members),
                "n_valid": len(valid),
                "n_correct": accuracy["n_correct"],
                "accuracy": accuracy["accuracy"],
                "ci_low": accuracy["ci_low"],
                "ci_high": accuracy["ci_high"],
                "se": _finite_or_none(bootstrap_standard_error(values, resamples, seed)),
                "errors": {"n_failures": len(failures), "counts": counts, "percent": percent},
                "turns": turns,
                "n_gave_up": gave_up,
                "gave_up_share": gave_up / len(valid) if valid else None,
                "n_budget_exhausted": exhausted,
                "budget_exhausted_share": exhausted / len(valid) if valid else None,
                "expects_give_up": bool(valid) and all(bool(r.get("expected_give_up")) for r in valid),
                "turn_distribution": _turn_split(timed),
            }

        decrease = None
        base, hit = outcomes.get(baseline), outcomes.get(faulted)
        if base and hit:
            base_acc, hit_acc = sum(base) / len(base), sum(hit) / len(hit)
            low, high = bootstrap_difference_interval(base, hit, confidence, resamples, seed)
            decrease = {
                "baseline_accuracy": base_acc,
                "faulted_accuracy": hit_acc,
                "absolute_points": 100 * (base_acc - hit_acc),
                "relative_percent": 100 * (base_acc - hit_acc) / base_acc if base_acc else None,
                "ci_low_points": 100 * low,
                "ci_high_points": 100 * high,
            }

        strata: dict[str, list[float]] = {"single": [], "multi": [], "none": []}
        for r in settings.get(faulted, []):
            if judged(r):
                strata[_backup_stratum(r.get("backup_plan_calls"))].append(float(bool(r["correct"])))
        solvable = [
            (float(r["n_turns"]), bool(r["correct"]))
            for members in settings.values()
            for r in members
            if judged(r) and not r.get("expected_give_up") and _present(r.get("n_turns"))
        ]
        models[model] = {
            "settings": setting_out,
            "decrease": decrease,
            "by_backup_plan_calls": {k: _accuracy(v, confidence, resamples, seed) for k, v in strata.items()},
            "turns_solvable": _turn_split(solvable),
        }
    answers = sorted({str(r.get("answers") or "lenient") for r in rows})
    return {
        "confidence": confidence,
        "baseline": baseline,
        "faulted": faulted,
        "answers": answers,
        "models": models,
    }


# ---------------------------------------------------------------------------------------------------------------
# The typed summary and how it renders


class Accuracy(StrictModel):
    n: int
    n_correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None


class Errors(StrictModel):
    n_failures: int
    counts: dict[str, int]
    percent: dict[str, float | None]


class Turns(StrictModel):
    all: float | None
    correct: float | None
    incorrect: float | None


class TurnStats(StrictModel):
    """A distribution of episode lengths in turns (see :func:`turn_stats`)."""

    n: int
    min: float
    q1: float
    median: float
    q3: float
    max: float
    mean: float


class TurnSplit(StrictModel):
    all: TurnStats | None
    correct: TurnStats | None
    incorrect: TurnStats | None


class SettingSummary(StrictModel):
    n: int
    n_valid: int
    n_correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    errors: Errors
    turns: Turns | None
    # added with the paper's layout; the defaults read summaries stored before them
    se: float | None = None
    n_gave_up: int = 0
    gave_up_share: float | None = None
    n_budget_exhausted: int = 0
    budget_exhausted_share: float | None = None
    expects_give_up: bool = False
    turn_distribution: TurnSplit | None = None


class Decrease(StrictModel):
    baseline_accuracy: float
    faulted_accuracy: float
    absolute_points: float
    relative_percent: float | None
    ci_low_points: float
    ci_high_points: float


class ModelSummary(StrictModel):
    settings: dict[str, SettingSummary]
    decrease: Decrease | None
    by_backup_plan_calls: dict[str, Accuracy]
    turns_solvable: TurnSplit | None = None


_LENIENT: tuple[Literal["lenient", "strict"], ...] = ("lenient",)


class SuiteAccess(StrictModel):
    """How the suite's tools reached the agent (``EpisodeResult.access_*``, from the suite's
    ``env_core.search.ToolAccess``): what the hohw layout files a suite under."""

    mode: Literal["closed", "open"]
    functions: int | None = None  # closed: tools listed in all
    distractors: int | None = None  # closed: extra tools listed


class SqlfuncsSummary(ModelSettingSummary):
    """The paper's tables for one suite: see :func:`summarize_sqlfuncs`."""

    family: Literal["sqlfuncs"] = "sqlfuncs"
    confidence: float
    baseline: str
    faulted: str
    # how the episodes' answers were matched (EpisodeResult.answers): lenient before strict matching existed
    answers: list[Literal["lenient", "strict"]] = Field(default_factory=lambda: list(_LENIENT))
    models: dict[str, ModelSummary]
    # None: the results were recorded before they carried their suite's access
    access: SuiteAccess | None = None

    def _settings(self) -> list[str]:
        return list(dict.fromkeys(s for m in self.models.values() for s in m.settings))

    def tables(self, suite: str) -> list[ReportTable]:
        """Accuracy with its bootstrap CI per setting, the baseline → faulted decrease and accuracy by backup-plan
        size (the paper's tables 3–5), then failures by category (§5)."""
        settings = self._settings()
        accuracy = ReportTable(
            title=f"{suite}: right behaviour — solved, or gave up when impossible (bootstrap 95% CI)",
            columns=["Model", *settings, f"{self.baseline} → {self.faulted}", "backup: single / multi"],
            right=[False, *[True] * len(settings), True, True],
        )
        for model, data in self.models.items():
            decrease = data.decrease
            drop = (
                "—"
                if decrease is None
                else f"−{decrease.absolute_points:.1f} pts"
                + (f" ({decrease.relative_percent:.0f}%)" if decrease.relative_percent is not None else "")
            )
            strata = data.by_backup_plan_calls
            backup = " / ".join(pct(strata[k].accuracy) for k in ("single", "multi"))
            cells = [
                with_ci(row.accuracy, row.ci_low, row.ci_high) if (row := data.settings.get(s)) else "—"
                for s in settings
            ]
            accuracy.rows.append([model, *cells, drop, backup])
        accuracy.note = f"Answers matched: {' and '.join(self.answers)}."
        categories = [*ERROR_CATEGORIES, "uncategorized"]
        failures = ReportTable(
            title=f"{suite}: failures by category (% of failures)",
            columns=["Model", "Setting", "failures", *categories],
            right=[False, False, True, *[True] * len(categories)],
        )
        for model, data in self.models.items():
            for setting, row in data.settings.items():
                if row.errors.n_failures:
                    shares = [row.errors.percent.get(c) for c in categories]
                    failures.rows.append(
                        [
                            model,
                            setting,
                            str(row.errors.n_failures),
                            *("—" if v is None else f"{v:.0f}" for v in shares),
                        ]
                    )
        return [accuracy, failures] if failures.rows else [accuracy]

    def figures(self, suite: str) -> list[StackedBars | BoxPlots]:
        """Failure categories as stacked shares per model × setting (none when nothing failed), and the turns
        figure (the paper's Figure 5; none without turn counts)."""
        turns = self.turns_figure(suite)
        return [*self.error_figure(suite), *([turns] if turns else [])]

    def turns_figure(self, suite: str) -> BoxPlots | None:
        """Episode lengths as box plots: per setting and model (left; settings where giving up was the right
        behaviour are marked), and, over the settings where a solution was available, correct against incorrect
        episodes per model (right)."""
        boxes = []
        for model, data in self.models.items():
            for setting, row in data.settings.items():
                found = row.turn_distribution.all if row.turn_distribution else None
                if found:
                    label = f"{setting}\n(no solution)" if row.expects_give_up else setting
                    boxes.append(_box(found, label, model, "per setting"))
        for model, data in self.models.items():
            split = data.turns_solvable
            for outcome in ("correct", "incorrect"):
                found = getattr(split, outcome) if split else None
                if found:
                    boxes.append(_box(found, model, outcome, "correct / incorrect (solvable)"))
        if not boxes:
            return None
        return BoxPlots(
            name="turns",
            title=f"Turns per episode — {suite}",
            alt=f"Turns per episode (box plots: quartiles, whiskers at min and max): per setting and model, and "
            f"correct against incorrect episodes where a solution was available, suite {suite}",
            boxes=boxes,
            y_label="turns",
        )

    def error_figure(self, suite: str) -> list[StackedBars]:
        """Failure categories as stacked shares per model × setting (none when nothing failed)."""
        return failures_figure(
            "errors",
            f"Failure categories — {suite}",
            f"Failure categories (share of failed episodes) per model and setting, suite {suite}",
            (
                share_bar(f"{model}\n{setting}", row.errors.counts)
                for model, data in self.models.items()
                for setting, row in data.settings.items()
            ),
            "model / setting",
        )

    def setting_parts(self, model: str, setting: str) -> list[tuple[str, SettingSummary]]:
        """The setting's row, its fields right under ``sqlfuncs.``."""
        row = self.models.get(model)
        found = row.settings.get(setting) if row else None
        return [("", found)] if found else []


def _box(stats: TurnStats, label: str, series: str, panel: str) -> Box:
    """A turn distribution as one box, its whiskers at the minimum and maximum."""
    same = stats.model_dump(include={"n", "q1", "median", "q3", "mean"})
    return Box(label=label, series=series, panel=panel, low=stats.min, high=stats.max, **same)


def summarize(results: Sequence[EpisodeResult]) -> SqlfuncsSummary:
    """The family summary of one suite's results, with the suite's tool access as its results recorded it."""
    rows = result_rows(results, "correct", "n_turns", "gave_up", "expected_give_up", "answers")
    access = next(
        (
            SuiteAccess(mode=r.access_mode, functions=r.access_functions, distractors=r.access_distractors)
            for r in results
            if r.access_mode is not None
        ),
        None,
    )
    return SqlfuncsSummary.model_validate({**summarize_sqlfuncs(rows), "access": access})
