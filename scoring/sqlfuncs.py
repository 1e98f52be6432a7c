"""Scoring for the ``sqlfuncs`` family (the "Hell or High Water" benchmark): error taxonomy, backup-plan size and the
per-model summary of the paper's tables.

Each sqlfuncs scenario has two tool-disjoint gold plans: ``plans[0]`` a single direct call, ``plans[1]`` a chain
(inner functions first, the outer one last). In the *open* setting the agent finds functions with ``search_tools``
(its result is a list of ``{"name", "description"}``) and reads documentation with ``get_info``; in the *closed*
setting the solution functions are listed from the start. ``first_tried`` disables the first solution function the
agent calls, so only the plan without it can still work: the *backup plan*.

The error taxonomy (paper §5) is judged against the plans that could still work in the episode (*usable plans*):
a plan is unusable when one of its tools was disabled by ``first_tried`` or by a permanent ``unavailable`` /
``removed`` fault of the trajectory. Calling the disabled first function is what the fault provokes, so it is no
progress towards an answer; what counts is what the agent did with the backup plan.

The summary also carries what the paper's other tables and figures need: the bootstrap standard error of each
accuracy, giving up (ending early without an answer) apart from running out of turns, the turn distributions
(Figure 5) and how answers were matched. :func:`hohw_layout` lays a run's summaries out as the paper's Tables 1-5
(``undertow report RUN --layout hohw``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from undertow.env_core.families import (
    Bar,
    Box,
    BoxPlots,
    FamilyDefinition,
    FamilySummary,
    ReportTable,
    StackedBars,
    flat_metrics,
)
from undertow.env_core.model import EpisodeResult, FaultKind, Outcome, PlannedCall, Scenario, Trajectory
from undertow.env_core.search import SEARCH_TOOLS
from undertow.env_core.sqlfuncs import build
from undertow.env_core.sqlfuncs.compile import FAMILY as FAMILY_NAME
from undertow.env_core.sqlfuncs.docs import DOCUMENTER
from undertow.scoring.formatting import pct, with_ci
from undertow.scoring.stats import bootstrap_difference_interval, bootstrap_interval, bootstrap_standard_error

# Every value error_category can return for a failed episode, in report order.
ERROR_CATEGORIES = ("search", "id", "chaining", "tool_use", "no_give_up", "other")

_DEAD_FAULTS = (FaultKind.unavailable, FaultKind.removed)
_BROKEN_REPLY = (Outcome.model_error, Outcome.parse_error)


# ---------------------------------------------------------------------------------------------------------------
# Per episode


def _dead_tools(trajectory: Trajectory, first_tried: Collection[str]) -> set[str]:
    """Tools that cannot work in this episode: those ``first_tried`` disabled and the targets of permanent
    ``unavailable``/``removed`` faults. Temporary faults heal and block nothing."""
    dead = set(first_tried)
    for fault in trajectory.faults:
        if fault.kind in _DEAD_FAULTS and fault.persistence.mode == "permanent":
            dead.update(fault.targets)
    return dead


def _usable_plans(scenario: Scenario, dead: Collection[str]) -> list[list[PlannedCall]]:
    return [plan for plan in scenario.gold.plans if not any(call.tool in dead for call in plan)]


def _calls(trajectory: Trajectory) -> list[tuple[str, bool]]:
    """(tool name, succeeded) for every tool call, in order. A call without an observation did not succeed."""
    return [
        (step.action.tool_call.name, step.observation is not None and step.observation.ok)
        for step in trajectory.tool_steps()
        if step.action.tool_call is not None
    ]


def _names_in_search_results(trajectory: Trajectory) -> set[str]:
    """Every function name listed by a successful ``search_tools`` call (items ``{"name": ...}`` or bare names)."""
    names: set[str] = set()
    for step in trajectory.tool_steps():
        call, observation = step.action.tool_call, step.observation
        if call is None or call.name != SEARCH_TOOLS or observation is None or not observation.ok:
            continue
        items = observation.result if isinstance(observation.result, list) else []
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                names.add(item["name"])
            elif isinstance(item, str):
                names.add(item)
    return names


def _in_order(tools: Sequence[str], called: Sequence[str]) -> bool:
    """Whether ``tools`` occur in ``called`` as a subsequence (in this order, other calls allowed in between)."""
    position = iter(called)
    return all(any(name == tool for name in position) for tool in tools)


def _plan_progress(plan: list[PlannedCall], calls: list[tuple[str, bool]]) -> int:
    """How far the agent got with one plan: 0 none of its tools called; 1 some called, but not all of them or
    never in plan order (only possible for a chain); 2 all called in plan order but not all successfully; 3 all
    called successfully in plan order."""
    tools = [call.tool for call in plan]
    called = [name for name, _ in calls]
    if not any(tool in called for tool in tools):
        return 0
    if not _in_order(tools, called):
        return 1
    return 3 if _in_order(tools, [name for name, ok in calls if ok]) else 2


def error_category(
    trajectory: Trajectory,
    scenario: Scenario,
    searched: bool,
    *,
    correct: bool,
    first_tried: Collection[str] = frozenset(),
) -> str | None:
    """Why an episode failed, in the taxonomy of the paper's §5, or None when there is nothing to explain.

    ``searched`` is True in the open setting (functions must be found with ``search_tools``), False in the closed
    one. ``first_tried`` is the set of tools the ``first_tried`` fault disabled in this episode (empty when none).
    *Usable plans* are the gold plans none of whose tools is disabled (by ``first_tried`` or by a permanent
    ``unavailable``/``removed`` fault in ``trajectory.faults``). A tool counts as *called* when a tool-call step
    names it (a failed call included; in CodeAct, calls made from the agent's code are such steps), and as
    *seen* when a successful ``search_tools`` result lists it. Decided in this order, first match wins:

    1. None: ``correct`` is True (solved a solvable task, or gave up when giving up was right), or the episode
       ended in ``infra_error`` (not a model failure; summaries exclude it).
    2. ``"other"``: the scenario has no gold plans.
    3. ``"no_give_up"``: no usable plan is left (e.g. the ``impossible`` setting), so giving up was the right
       behaviour and the agent did not.
    4. ``"other"``: the episode broke off on an unusable model reply (``model_error`` or ``parse_error``), which
       says nothing about planning.
    5. The agent's furthest progress on any usable plan decides:

       - ``"tool_use"``: it called every tool of a usable plan in plan order (for the direct plan: called the
         direct function), but then answered wrong or gave up, whether or not those calls succeeded: it had the
         right tools and did not get the answer out of them.
       - ``"chaining"``: it called some tools of a usable chain, but not all of them, or never in plan order
         (e.g. the inner function and never the outer one, or the outer one only before the inner one), and made
         no call that would count as tool use above (such as a call of a usable direct function).
       - ``"search"``: open setting only. No tool of a usable plan was called, and none was ever seen in a search
         result (including when the agent never searched).
       - ``"id"``: no tool of a usable plan was called although one was seen in a search result (open setting),
         or listed from the start (closed setting).

    A solvable task the agent gave up on is a failure like a wrong answer and goes through the same steps.
    """
    if correct or not trajectory.outcome.judged:
        return None
    if not scenario.gold.plans:
        return "other"
    usable = _usable_plans(scenario, _dead_tools(trajectory, first_tried))
    if not usable:
        return "no_give_up"
    if trajectory.outcome in _BROKEN_REPLY:
        return "other"
    calls = _calls(trajectory)
    progress = max(_plan_progress(plan, calls) for plan in usable)
    if progress >= 2:
        return "tool_use"
    if progress == 1:
        return "chaining"
    usable_tools = {call.tool for plan in usable for call in plan}
    if searched and not usable_tools & _names_in_search_results(trajectory):
        return "search"
    return "id"


def backup_plan_calls(scenario: Scenario, first_tried: Collection[str]) -> int | None:
    """The number of calls in the plan that stayed usable after ``first_tried`` disabled a tool: 1 for a
    single-call backup (the chain was hit, the direct function remains), 2 or more for a multi-call backup (the
    direct function was hit, the chain remains).

    None when nothing was disabled (``first_tried`` empty: the agent never called a solution function, or the
    setting has no ``first_tried`` fault). If several plans survive, the shortest one's length; 0 if none does
    (cannot happen with tool-disjoint plans).
    """
    if not first_tried:
        return None
    usable = _usable_plans(scenario, set(first_tried))
    return min((len(plan) for plan in usable), default=0)


def episode_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: Collection[str]
) -> dict[str, Any]:
    """The sqlfuncs analysis fields of one episode, flat and JSON-able, for the runner to store with its result.

    - ``error_category``: :func:`error_category` (None for a correct or ``infra_error`` episode).
    - ``backup_plan_calls``: :func:`backup_plan_calls` (None when nothing was disabled).
    - ``search_calls``: how many ``search_tools`` calls the agent made (failed ones included; 0 when closed).
    - ``solution_seen_in_search``: whether a successful search result listed a tool of a usable plan (the same
      basis as the ``"search"`` category; all gold plans when none is usable). None in the closed setting.
    """
    dead = _dead_tools(trajectory, first_tried)
    plans = _usable_plans(scenario, dead) or scenario.gold.plans
    tools = {call.tool for plan in plans for call in plan}
    return {
        "error_category": error_category(trajectory, scenario, searched, correct=correct, first_tried=first_tried),
        "backup_plan_calls": backup_plan_calls(scenario, first_tried),
        "search_calls": sum(name == SEARCH_TOOLS for name, _ in _calls(trajectory)),
        "solution_seen_in_search": bool(tools & _names_in_search_results(trajectory)) if searched else None,
    }


# ---------------------------------------------------------------------------------------------------------------
# Summary


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
    rows: list[dict[str, Any]],
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
    by_model: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in rows:
        by_model.setdefault(str(row["model"]), {}).setdefault(str(row["setting"]), []).append(row)

    models: dict[str, Any] = {}
    for model, settings in by_model.items():
        setting_out: dict[str, Any] = {}
        outcomes: dict[str, list[float]] = {}
        for setting, members in settings.items():
            valid = [r for r in members if Outcome(r["outcome"]).judged]
            values = [float(bool(r["correct"])) for r in valid]
            outcomes[setting] = values
            failures = [r for r in valid if not r["correct"]]
            counts = dict.fromkeys(ERROR_CATEGORIES, 0)
            for r in failures:
                category = r.get("error_category")
                category = category if isinstance(category, str) and category else "uncategorized"
                counts[category] = counts.get(category, 0) + 1
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
            if Outcome(r["outcome"]).judged:
                strata[_backup_stratum(r.get("backup_plan_calls"))].append(float(bool(r["correct"])))
        solvable = [
            (float(r["n_turns"]), bool(r["correct"]))
            for members in settings.values()
            for r in members
            if Outcome(r["outcome"]).judged and not r.get("expected_give_up") and _present(r.get("n_turns"))
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


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Accuracy(_Model):
    n: int
    n_correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None


class Errors(_Model):
    n_failures: int
    counts: dict[str, int]
    percent: dict[str, float | None]


class Turns(_Model):
    all: float | None
    correct: float | None
    incorrect: float | None


class TurnStats(_Model):
    """A distribution of episode lengths in turns (see :func:`turn_stats`)."""

    n: int
    min: float
    q1: float
    median: float
    q3: float
    max: float
    mean: float


class TurnSplit(_Model):
    all: TurnStats | None
    correct: TurnStats | None
    incorrect: TurnStats | None


class SettingSummary(_Model):
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


class Decrease(_Model):
    baseline_accuracy: float
    faulted_accuracy: float
    absolute_points: float
    relative_percent: float | None
    ci_low_points: float
    ci_high_points: float


class ModelSummary(_Model):
    settings: dict[str, SettingSummary]
    decrease: Decrease | None
    by_backup_plan_calls: dict[str, Accuracy]
    turns_solvable: TurnSplit | None = None


_LENIENT: tuple[Literal["lenient", "strict"], ...] = ("lenient",)


class SqlfuncsSummary(FamilySummary):
    """The paper's tables for one suite: see :func:`summarize_sqlfuncs`."""

    family: Literal["sqlfuncs"] = "sqlfuncs"
    confidence: float
    baseline: str
    faulted: str
    # how the episodes' answers were matched (EpisodeResult.answers): lenient before strict matching existed
    answers: list[Literal["lenient", "strict"]] = Field(default_factory=lambda: list(_LENIENT))
    models: dict[str, ModelSummary]

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
        bars, categories = [], []
        for model, data in self.models.items():
            for setting, row in data.settings.items():
                errors = row.errors
                if errors.n_failures:
                    shares = {c: 100 * n / errors.n_failures for c, n in errors.counts.items() if n}
                    bars.append(Bar(label=f"{model}\n{setting}", shares=shares, n=errors.n_failures))
                    categories += [c for c in shares if c not in categories]
        if not bars:
            return []
        return [
            StackedBars(
                name="errors",
                title=f"Failure categories — {suite}",
                alt=f"Failure categories (share of failed episodes) per model and setting, suite {suite}",
                categories=categories,
                bars=bars,
                y_label="share of failed episodes (%)",
                x_label="model / setting",
            )
        ]

    def metrics(self, model: str, setting: str) -> dict[str, float]:
        row = self.models.get(model)
        found = row.settings.get(setting) if row else None
        return flat_metrics(self.family, found) if found else {}


def _box(stats: TurnStats, label: str, series: str, panel: str) -> Box:
    return Box(
        label=label,
        series=series,
        panel=panel,
        n=stats.n,
        low=stats.min,
        q1=stats.q1,
        median=stats.median,
        q3=stats.q3,
        high=stats.max,
        mean=stats.mean,
    )


def summarize(results: Sequence[EpisodeResult]) -> SqlfuncsSummary:
    """The family summary of one suite's results."""
    rows = [
        {
            "model": r.model,
            "setting": r.setting,
            "correct": r.correct,
            "outcome": r.outcome.value,
            "n_turns": r.n_turns,
            "gave_up": r.gave_up,
            "expected_give_up": r.expected_give_up,
            "answers": r.answers,
            **r.details,
        }
        for r in results
    ]
    return SqlfuncsSummary.model_validate(summarize_sqlfuncs(rows))


def _episode_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: set[str]
) -> dict[str, Any]:
    return episode_details(trajectory, scenario, correct=correct, searched=searched, first_tried=first_tried)


# ---------------------------------------------------------------------------------------------------------------
# The paper's tables from a run: ``undertow report RUN --layout hohw``

NO_ERRORS, ERRORS = "clean", "first_tried"
HINTED, HINTED_ERRORS = "hinted", "hinted_first_tried"
PAPER_CELL_N = 830  # the paper's cells hold about this many episodes (its test split)

# The access part of a suite label (env_core.search.ToolAccess.label): open[-<search>], closed@<k functions in
# all>, closed+<n distractors>.
_ACCESS = re.compile(r"(?P<open>open(?:-[a-z0-9]+)?)|closed@(?P<functions>\d+)|closed\+(?P<distractors>\d+)")


def suite_access(label: str) -> tuple[str, int | None, int | None]:
    """(world, functions, distractors) as a suite label says them: labels are ``<source>:<access label>``, and a
    label without an access part has the default access (closed, no distractors). World is "open", "closed", or
    "" for an access part this layout does not know (an alias, say)."""
    _, sep, access = label.rpartition(":")
    if not sep:
        return "closed", None, 0
    found = _ACCESS.fullmatch(access)
    if found is None:
        return "", None, None
    if found["open"]:
        return "open", None, None
    if found["functions"]:
        return "closed", int(found["functions"]), None
    return "closed", None, int(found["distractors"])


@dataclass(frozen=True)
class _Suite:
    label: str
    summary: SqlfuncsSummary
    world: str
    functions: int | None
    distractors: int | None

    @property
    def size(self) -> tuple[int, int]:
        """Sort key of a closed suite: k functions in all first, then +n distractors."""
        return (0, self.functions) if self.functions is not None else (1, self.distractors or 0)

    @property
    def size_label(self) -> str:
        return str(self.functions) if self.functions is not None else f"+{self.distractors or 0}"


def _mean_se(row: SettingSummary | None) -> str:
    """Accuracy in percent with its standard error, as the paper prints it: ``71.4 ± 1.6``."""
    if row is None or row.accuracy is None:
        return "—"
    value = f"{100 * row.accuracy:.1f}"
    return value if row.se is None else f"{value} ± {100 * row.se:.1f}"


def _plain_pct(value: float | None) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{100 * value:.1f}"


def _share(percent: float | None) -> str:
    return "—" if percent is None else f"{percent:.1f}"


def _drop(base: SettingSummary | None, hit: SettingSummary | None) -> str:
    """The paper's "Acc. decrease": the relative drop from ``base`` to ``hit`` accuracy, in percent."""
    if base is None or hit is None or base.accuracy is None or hit.accuracy is None or not base.accuracy:
        return "—"
    return f"{100 * (base.accuracy - hit.accuracy) / base.accuracy:.1f}%"


def _turns(stats: TurnStats | None, part: str = "median") -> str:
    if stats is None:
        return "—"
    if part == "iqr":
        return f"{stats.q1:g}–{stats.q3:g}"
    return f"{getattr(stats, part):g}"


def _n_range(cells: Sequence[SettingSummary | None]) -> str:
    """``12`` or ``10–12``: the valid episodes behind the cells shown."""
    ns = sorted({c.n_valid for c in cells if c is not None})
    if not ns:
        return "0"
    return str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"


def _missing(name: str, needs: str) -> ReportTable:
    """The one line that stands for a table whose data the run does not have."""
    return ReportTable(title=name, columns=[], note=f"{name} needs {needs}: not in this run, left out.")


def _models(suites: Sequence[_Suite], settings: Sequence[str]) -> list[tuple[_Suite, str, ModelSummary]]:
    """(suite, model, its summary) for every model of ``suites`` that ran any of ``settings``."""
    return [
        (suite, model, data)
        for suite in suites
        for model, data in suite.summary.models.items()
        if any(s in data.settings for s in settings)
    ]


def _with_suite(
    title: str, columns: list[str], right: list[bool], rows: list[tuple[_Suite, list[str]]], note: str
) -> ReportTable:
    """A table whose rows come from one or more suites: a Suite column and a section per suite only when there
    are several."""
    several = len({suite.label for suite, _ in rows}) > 1
    table = ReportTable(
        title=title,
        columns=[*(["Suite"] if several else []), *columns],
        right=[*([False] if several else []), *right],
        note=note,
    )
    previous = None
    for i, (suite, cells) in enumerate(rows):
        if several and suite.label != previous:
            table.sections.append(i)
        previous = suite.label
        table.rows.append([*([suite.label] if several else []), *cells])
    return table


def _accuracy_table(name: str, what: str, suites: Sequence[_Suite], no_errors: str, errors: str) -> ReportTable:
    """Tables 1 and 4: accuracy without and with external errors (mean ± SE) and the relative decrease."""
    found = _models(suites, (no_errors, errors))
    rows, cells = [], []
    for suite, model, data in found:
        base, hit = data.settings.get(no_errors), data.settings.get(errors)
        cells += [base, hit]
        rows.append((suite, [model, _mean_se(base), _mean_se(hit), _drop(base, hit)]))
    absent = [s for s in (no_errors, errors) if not any(s in data.settings for _, _, data in found)]
    note = (
        f"Accuracy (%, right behaviour) ± bootstrap standard error; external errors N: setting {no_errors}, Y: "
        f"{errors}; Acc. decrease = (N − Y) / N. n per cell: {_n_range(cells)} valid episodes."
        + (f" Setting {' and '.join(absent)} not in this run (—)." if absent else "")
    )
    columns = ["Model", "External errors (N)", "External errors (Y)", "Acc. decrease"]
    return _with_suite(f"{name} — {what}", columns, [False, True, True, True], rows, note)


def _failure_columns(categories: Sequence[str]) -> list[str]:
    names = {"search": "Search", "id": "ID", "chaining": "Chaining", "tool_use": "Tool use"}
    names |= {"no_give_up": "No give-up", "other": "Other", "uncategorized": "Uncategorized"}
    return ["Total failures", *(names.get(c, c) for c in categories)]


def _categories(rows: Sequence[SettingSummary], shown: Sequence[str]) -> list[str]:
    """The categories to show: ``shown``, then ours that the paper does not have, uncategorized only if used."""
    extra = ["no_give_up", "other"] + (
        ["uncategorized"] if any(r.errors.counts.get("uncategorized") for r in rows) else []
    )
    return [*shown, *extra]


def _failure_cells(row: SettingSummary, categories: Sequence[str]) -> list[str]:
    errors = row.errors
    return [str(errors.n_failures), *(_share(errors.percent.get(c)) for c in categories)]


def _table2(open_suites: Sequence[_Suite]) -> ReportTable:
    found = [(suite, model, data.settings[ERRORS]) for suite, model, data in _models(open_suites, (ERRORS,))]
    found = [(suite, model, row) for suite, model, row in found if row is not None]
    if not found:
        return _missing("Table 2", f"{ERRORS} episodes in an open-world suite (access mode open)")
    categories = _categories([row for _, _, row in found], ("search", "id", "chaining", "tool_use"))
    rows = [(suite, [model, *_failure_cells(row, categories)]) for suite, model, row in found]
    note = (
        f"Failures of the {ERRORS} open-world episodes by category (% of failures); No give-up and Other are ours "
        f"(not in the paper). n per cell: {_n_range([row for _, _, row in found])} valid episodes."
    )
    columns = ["Model", *_failure_columns(categories)]
    return _with_suite(
        "Table 2 — failures by category, open world with external errors",
        columns,
        [False, *[True] * (len(columns) - 1)],
        rows,
        note,
    )


def _figure3(closed: Sequence[_Suite]) -> list[ReportTable]:
    """Figure 3 as a table (accuracy by the number of functions listed, per model, without and with errors) and
    Table 3 (the failure breakdown under errors, per number of functions)."""
    found = [s for s in closed if _models([s], (NO_ERRORS, ERRORS))]
    if not found:
        needs = (
            f"closed-world suites (access closed@<k functions> or closed+<n distractors>) run under {NO_ERRORS} "
            f"and {ERRORS}"
        )
        return [_missing("Figure 3 / Table 3", needs)]
    found = sorted(found, key=lambda s: s.size)
    shared_size = len({s.size_label for s in found}) < len(found)  # two sources at one size: say which is which
    models = list(dict.fromkeys(m for s in found for m in s.summary.models))
    columns = ["Functions", *(["Suite"] if shared_size else [])]
    columns += [f"{m}: {label}" for m in models for label in ("no errors", "errors")]
    figure = ReportTable(
        title="Figure 3 — closed world: accuracy by the number of functions listed, without / with external errors",
        columns=columns,
        right=[True, *([False] if shared_size else []), *[True] * (2 * len(models))],
    )
    cells: list[SettingSummary | None] = []
    for suite in found:
        line = [suite.size_label, *([suite.label] if shared_size else [])]
        for model in models:
            data = suite.summary.models.get(model)
            pair = [data.settings.get(s) if data else None for s in (NO_ERRORS, ERRORS)]
            cells += pair
            line += [_mean_se(cell) for cell in pair]
        figure.rows.append(line)
    figure.note = (
        f"Accuracy (%) ± bootstrap standard error; no errors: setting {NO_ERRORS}, errors: {ERRORS}. Functions: k "
        f"functions listed in all (closed@k), or +n: the solution functions and n distractors (closed+n). n per "
        f"cell: {_n_range(cells)} valid episodes."
    )
    hit = [
        (suite, model, data.settings[ERRORS])
        for suite in found
        for model, data in suite.summary.models.items()
        if ERRORS in data.settings
    ]
    if not hit:
        return [figure, _missing("Table 3", f"{ERRORS} episodes in closed-world suites")]
    categories = _categories([row for _, _, row in hit], ("id", "chaining", "tool_use"))
    table = ReportTable(
        title="Table 3 — closed world: failures by category with external errors, by the number of functions",
        columns=["Model", "Functions", *(["Suite"] if shared_size else []), *_failure_columns(categories)],
        right=[False, True, *([False] if shared_size else []), *[True] * (len(categories) + 1)],
        note=f"Failures of the {ERRORS} closed-world episodes by category (% of failures). n per cell: "
        f"{_n_range([row for _, _, row in hit])} valid episodes.",
    )
    for model in models:
        if any(name == model for _, name, _ in hit):
            table.sections.append(len(table.rows))
        for suite, name, row in hit:
            if name == model:
                table.rows.append(
                    [model, suite.size_label, *([suite.label] if shared_size else []), *_failure_cells(row, categories)]
                )
    return [figure, table]


def _table5(open_suites: Sequence[_Suite]) -> ReportTable:
    found = [(suite, model, data) for suite, model, data in _models(open_suites, (ERRORS,))]
    if not found:
        return _missing("Table 5", f"{ERRORS} episodes in an open-world suite (access mode open)")
    rows, neither = [], 0
    for suite, model, data in found:
        single, multi = data.by_backup_plan_calls.get("single"), data.by_backup_plan_calls.get("multi")
        none = data.by_backup_plan_calls.get("none")
        neither += none.n if none else 0
        rows.append(
            (
                suite,
                [
                    model,
                    _plain_pct(single.accuracy if single else None),
                    _plain_pct(multi.accuracy if multi else None),
                    f"{single.n if single else 0}:{multi.n if multi else 0}",
                ],
            )
        )
    note = (
        f"Accuracy (%) of the {ERRORS} open-world episodes by the plan left after the fault: a single call (the "
        "chain was hit) or several (the direct function was hit); the ratio counts episodes."
    )
    if neither:
        note += f" {neither} episode(s) where no solution function was disabled (none was called) are in neither."
    columns = ["Model", "Single call", "Multi call", "Ratio (single:multi)"]
    return _with_suite(
        "Table 5 — accuracy by the number of calls in the backup plan",
        columns,
        [False, True, True, True],
        rows,
        note,
    )


def _give_up_table(suites: Sequence[_Suite]) -> ReportTable:
    """Per model, suite and setting: giving up, running out of turns, and the turn distribution (Figure 5)."""
    several = len(suites) > 1
    columns = ["Model", *(["Suite"] if several else []), "Setting", "Solvable", "n", "Gave up", "Out of turns"]
    columns += ["Turns", "IQR", "Correct", "Incorrect"]
    table = ReportTable(
        title="Giving up and turns per episode (Figure 5)",
        columns=columns,
        right=[False, *([False] if several else []), False, False, *[True] * 7],
        note="Solvable: no where only giving up was right. Gave up: ended before the turn budget without an "
        "answer; Out of turns: the budget ran out (budget_exhausted, not giving up); shares of valid episodes. "
        "Turns: the median number of turns, IQR its quartiles; Correct / Incorrect: the median of correct and of "
        "incorrect episodes. The HTML report draws these distributions (the turns figure).",
    )
    models = list(dict.fromkeys(m for s in suites for m in s.summary.models))
    for model in models:
        table.sections.append(len(table.rows))
        for suite in suites:
            data = suite.summary.models.get(model)
            for setting, row in (data.settings if data else {}).items():
                split = row.turn_distribution
                table.rows.append(
                    [
                        model,
                        *([suite.label] if several else []),
                        setting,
                        "no" if row.expects_give_up else "yes",
                        str(row.n_valid),
                        pct(row.gave_up_share),
                        pct(row.budget_exhausted_share),
                        _turns(split.all if split else None),
                        _turns(split.all if split else None, "iqr"),
                        _turns(split.correct if split else None),
                        _turns(split.incorrect if split else None),
                    ]
                )
    return table


def _about(suites: Sequence[_Suite], unknown: Sequence[str]) -> ReportTable:
    """The layout's first line: how answers were matched, and how many episodes stand behind a cell."""
    modes: dict[str, list[str]] = {}
    for suite in suites:
        for mode in suite.summary.answers:
            modes.setdefault(mode, []).append(suite.label)
    if len(modes) == 1:
        matching = next(iter(modes))
    elif modes:
        matching = "mixed — " + "; ".join(f"{m} in {', '.join(labels)}" for m, labels in sorted(modes.items()))
    else:
        matching = "none (no scored episode)"
    cells = [row for s in suites for data in s.summary.models.values() for row in data.settings.values()]
    ns = sorted({c.n_valid for c in cells})
    if not ns:
        size = "no valid episodes"
    else:
        subset = "a subset of the benchmark" if ns[-1] < PAPER_CELL_N else "the paper's scale"
        size = f"{_n_range(cells)} valid episodes per cell (the paper: about {PAPER_CELL_N}, its test split"
        size += f"; this is {subset})"
    note = f"Answers matched: {matching}. {size}."
    if unknown:
        note += f" Suites whose label names no access this layout knows, left out: {', '.join(unknown)}."
    return ReportTable(title="HoHW layout", columns=[], note=note)


def hohw_layout(summaries: Mapping[str, FamilySummary]) -> list[ReportTable]:
    """The paper's tables from the sqlfuncs summaries of a run's suites (keyed by suite label), laid out as the
    paper prints them: a line on answer matching and sample size; Table 1 (open world, accuracy without / with
    external errors and the relative decrease); Table 2 (its failures by category); Figure 3 as a table and
    Table 3 (closed world by the number of functions listed); Table 4 (question hints); Table 5 (single- against
    multi-call backup plans); and giving up with the turn distributions (Figure 5). Which suite feeds which
    table is read from its label (:func:`suite_access`). A table the run has no data for is one line saying what
    it needs."""
    suites, unknown = [], []
    for label, summary in summaries.items():
        if not isinstance(summary, SqlfuncsSummary):
            continue
        world, functions, distractors = suite_access(label)
        if world:
            suites.append(_Suite(label, summary, world, functions, distractors))
        else:
            unknown.append(label)
    open_suites = [s for s in suites if s.world == "open"]
    closed = [s for s in suites if s.world == "closed"]
    open_needs = f"an open-world suite (access mode open) run under {NO_ERRORS} or {ERRORS}"
    tables = [_about(suites, unknown)]
    if _models(open_suites, (NO_ERRORS, ERRORS)):
        what = "open world: accuracy without / with external errors"
        tables.append(_accuracy_table("Table 1", what, open_suites, NO_ERRORS, ERRORS))
    else:
        tables.append(_missing("Table 1", open_needs))
    tables.append(_table2(open_suites))
    tables += _figure3(closed)
    if _models(suites, (HINTED, HINTED_ERRORS)):
        what = "with question hints: accuracy without / with external errors"
        tables.append(_accuracy_table("Table 4", what, suites, HINTED, HINTED_ERRORS))
    else:
        tables.append(_missing("Table 4", f"the settings {HINTED} and {HINTED_ERRORS}"))
    tables.append(_table5(open_suites))
    if suites:
        tables.append(_give_up_table(suites))
    else:
        tables.append(_missing("The give-up table", "scored sqlfuncs episodes"))
    return tables


FAMILY = FamilyDefinition(
    name=FAMILY_NAME,
    description="Spider-format SQL compiled into obfuscated functions with backup plans (Hell or High Water)",
    suite_config=build.SqlfuncsSuite,
    source_digest=build.source_digest,
    build=build.build,
    toolbox=build.toolbox,
    episode_details=_episode_details,
    summarize=summarize,
    summary_model=SqlfuncsSummary,
    documenter=DOCUMENTER,
    layouts={"hohw": hohw_layout},
)
