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
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from env_core.families import (
    Bar,
    FamilyDefinition,
    FamilySummary,
    ReportTable,
    StackedBars,
    flat_metrics,
)
from env_core.model import EpisodeResult, FaultKind, Outcome, PlannedCall, Scenario, Trajectory
from env_core.search import SEARCH_TOOLS
from env_core.sqlfuncs import build
from env_core.sqlfuncs.compile import FAMILY as FAMILY_NAME
from env_core.sqlfuncs.docs import DOCUMENTER
from scoring.formatting import pct, with_ci
from scoring.stats import bootstrap_difference_interval, bootstrap_interval

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
    :func:`episode_details` keys; ``n_turns`` is optional. Episodes that ended in ``infra_error`` or
    ``config_error`` are left out of every number except ``n`` (they say nothing about the model); every other
    outcome counts, a
    ``budget_exhausted`` or ``parse_error`` episode as a failure. Accuracies are fractions in [0, 1] with a
    percentile-bootstrap interval over episodes (:func:`scoring.stats.bootstrap_interval`, ``seed`` fixed, so the
    output is deterministic); an interval is None where there is no episode. Returns::

        {"confidence": 0.95, "baseline": "clean", "faulted": "first_tried",
         "models": {model: {
            "settings": {setting: {
                "n": all rows, "n_valid": rows without infra_error, "n_correct": int,
                "accuracy": float | None, "ci_low": float | None, "ci_high": float | None,
                "errors": {"n_failures": int,
                           "counts": {category: int},           # every ERROR_CATEGORIES key, plus
                           "percent": {category: float | None}}, # "uncategorized" if a failure has none
                "turns": {"all": mean, "correct": mean, "incorrect": mean} | None,  # None without n_turns
            }},
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
    there are no failures. The decrease interval resamples the two settings independently
    (:func:`scoring.stats.bootstrap_difference_interval`), which is conservative for paired runs. Models and
    settings appear in order of first appearance.
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
            setting_out[setting] = {
                "n": len(members),
                "n_valid": len(valid),
                "n_correct": accuracy["n_correct"],
                "accuracy": accuracy["accuracy"],
                "ci_low": accuracy["ci_low"],
                "ci_high": accuracy["ci_high"],
                "errors": {"n_failures": len(failures), "counts": counts, "percent": percent},
                "turns": turns,
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
        models[model] = {
            "settings": setting_out,
            "decrease": decrease,
            "by_backup_plan_calls": {k: _accuracy(v, confidence, resamples, seed) for k, v in strata.items()},
        }
    return {"confidence": confidence, "baseline": baseline, "faulted": faulted, "models": models}


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


class SettingSummary(_Model):
    n: int
    n_valid: int
    n_correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    errors: Errors
    turns: Turns | None


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


class SqlfuncsSummary(FamilySummary):
    """The paper's tables for one suite: see :func:`summarize_sqlfuncs`."""

    family: Literal["sqlfuncs"] = "sqlfuncs"
    confidence: float
    baseline: str
    faulted: str
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

    def figures(self, suite: str) -> list[StackedBars]:
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


def summarize(results: Sequence[EpisodeResult]) -> SqlfuncsSummary:
    """The family summary of one suite's results."""
    rows = [
        {
            "model": r.model,
            "setting": r.setting,
            "correct": r.correct,
            "outcome": r.outcome.value,
            "n_turns": r.n_turns,
            **r.details,
        }
        for r in results
    ]
    return SqlfuncsSummary.model_validate(summarize_sqlfuncs(rows))


def _episode_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: set[str]
) -> dict[str, Any]:
    return episode_details(trajectory, scenario, correct=correct, searched=searched, first_tried=first_tried)


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
)
