"""sqlfuncs scoring: the error taxonomy, backup-plan size, per-episode details, bootstrap intervals and the summary
of the paper's tables (scoring.sqlfuncs, scoring.stats)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from helpers import builders
from helpers.builders import tool_step

from undertow.env_core.faults import expects_give_up, usable_plans
from undertow.env_core.model import (
    FaultKind,
    FaultSpec,
    Gold,
    Outcome,
    Persistence,
    PlannedCall,
    Scenario,
    Step,
    ToolError,
    Trajectory,
)
from undertow.scoring.sqlfuncs import (
    ERROR_CATEGORIES,
    SqlfuncsDetails,
    backup_plan_calls,
    episode_details,
    error_category,
    summarize_sqlfuncs,
)
from undertow.scoring.stats import bootstrap_difference_interval, bootstrap_interval

GOLD = [{"employee_id": 7, "salary": 52000}]
DIRECT, INNER, OUTER, DISTRACTOR = "function_1", "function_2", "function_3", "function_9"


def make_scenario(chain: tuple[str, ...] = (INNER, OUTER)) -> Scenario:
    """plans[0] the direct function, plans[1] the chain (inner first, outer last), as sqlfuncs builds them."""
    return Scenario(
        id="q1",
        family="sqlfuncs",
        task="What are the ids and salaries of employees who report to Shelley?",
        tools=[DIRECT, *chain, DISTRACTOR],
        gold=Gold(answer=GOLD, plans=[[PlannedCall(tool=DIRECT)], [PlannedCall(tool=t) for t in chain]]),
    )


SCENARIO = make_scenario()


def call(turn: int, name: str, ok: bool = True, result: Any = None, error: str = "invalid_arguments") -> Step:
    failure = ToolError(type=error, message=f"{name} failed")
    return tool_step(turn, name, ok=ok, result=GOLD if result is None else result, error=failure)


def search(turn: int, *names: str) -> Step:
    return call(turn, "search_tools", result=[{"name": n, "description": f"about {n}"} for n in names])


def trajectory(*steps: Step, final: str | None = "[]", **answer: Any) -> Trajectory:
    """A trajectory of the scenario q1 (``answer``: gave_up, outcome, faults as builders.trajectory)."""
    return builders.trajectory(*steps, final=final, scenario_id="q1", **answer)


def category(traj: Trajectory, searched: bool, first_tried: set[str] | None = None, correct: bool = False) -> Any:
    return error_category(traj, SCENARIO, searched, correct=correct, first_tried=first_tried or set())


# ---------------------------------------------------------------------------------------------------------------
# error_category: one trajectory made for each category


def test_correct_episode_has_no_category_whatever_it_did() -> None:
    messy = trajectory(search(0, DISTRACTOR), call(1, INNER), call(2, DIRECT))
    assert category(messy, searched=True, correct=True) is None
    assert category(messy, searched=False, correct=True) is None


def test_infra_error_is_not_a_model_failure() -> None:
    assert category(trajectory(outcome=Outcome.infra_error), searched=True) is None


def test_search_failure_when_no_solution_function_ever_appears_in_search_results() -> None:
    traj = trajectory(search(0, DISTRACTOR), search(1), call(2, DISTRACTOR))
    assert category(traj, searched=True) == "search"


def test_never_searching_in_the_open_setting_is_a_search_failure() -> None:
    assert category(trajectory(final="no idea"), searched=True) == "search"


def test_search_failure_exists_only_in_the_open_setting() -> None:
    traj = trajectory(search(0, DISTRACTOR), call(1, DISTRACTOR))
    assert category(traj, searched=False) == "id"


def test_failed_search_call_shows_nothing() -> None:
    failed = call(0, "search_tools", ok=False, error="timeout")
    assert category(trajectory(failed), searched=True) == "search"


@pytest.mark.parametrize("seen", [DIRECT, INNER, OUTER])
def test_id_failure_when_a_solution_function_was_seen_but_never_called(seen: str) -> None:
    traj = trajectory(search(0, DISTRACTOR, seen), call(1, DISTRACTOR))
    assert category(traj, searched=True) == "id"


def test_id_failure_in_the_closed_setting_when_no_listed_solution_function_is_called() -> None:
    assert category(trajectory(call(0, DISTRACTOR)), searched=False) == "id"
    assert category(trajectory(gave_up=True, final="CANNOT_SOLVE"), searched=False) == "id"


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([call(0, INNER)], id="inner-only"),
        pytest.param([call(0, OUTER, ok=False), call(1, INNER)], id="outer-before-inner"),
        pytest.param([call(0, OUTER)], id="outer-only"),
    ],
)
@pytest.mark.parametrize("searched", [True, False])
def test_chaining_failure_for_part_of_the_chain_or_the_wrong_order(steps: list[Step], searched: bool) -> None:
    assert category(trajectory(search(9, INNER, OUTER), *steps), searched=searched) == "chaining"


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([call(0, DIRECT)], id="direct-ok-wrong-answer"),
        pytest.param([call(0, DIRECT, ok=False)], id="direct-bad-arguments"),
        pytest.param([call(0, INNER), call(1, OUTER)], id="chain-ok-wrong-answer"),
        pytest.param([call(0, INNER), call(1, OUTER, ok=False)], id="chain-outer-bad-arguments"),
        pytest.param([call(0, OUTER, ok=False), call(1, INNER), call(2, OUTER)], id="chain-order-fixed"),
        pytest.param([call(0, INNER), call(1, DIRECT)], id="partial-chain-but-direct-called"),
    ],
)
def test_tool_use_failure_when_a_whole_plan_was_called_but_the_answer_is_wrong(steps: list[Step]) -> None:
    assert category(trajectory(*steps, final="[]"), searched=True) == "tool_use"


def test_giving_up_on_a_solvable_task_after_using_the_tool_is_a_tool_use_failure() -> None:
    traj = trajectory(call(0, DIRECT, ok=False), gave_up=True, final="CANNOT_SOLVE")
    assert category(traj, searched=False) == "tool_use"


# first_tried: the category is about the backup plan, not the function the fault disabled


def disabled(turn: int, name: str) -> Step:
    return call(turn, name, ok=False, error="unavailable")


def test_first_tried_direct_then_no_chain_seen_is_a_search_failure() -> None:
    traj = trajectory(search(0, DIRECT, DISTRACTOR), disabled(1, DIRECT), search(2, DISTRACTOR))
    assert category(traj, searched=True, first_tried={DIRECT}) == "search"
    # Without knowing that the direct function was disabled, calling it would be a tool-use failure.
    assert category(traj, searched=True) == "tool_use"


def test_first_tried_direct_with_chain_seen_but_not_called_is_an_id_failure() -> None:
    traj = trajectory(search(0, DIRECT, INNER), disabled(1, DIRECT), call(2, DIRECT, ok=False, error="unavailable"))
    assert category(traj, searched=True, first_tried={DIRECT}) == "id"
    assert category(traj, searched=False, first_tried={DIRECT}) == "id"


def test_first_tried_direct_then_half_the_chain_is_a_chaining_failure() -> None:
    traj = trajectory(disabled(0, DIRECT), call(1, INNER))
    assert category(traj, searched=False, first_tried={DIRECT}) == "chaining"


def test_first_tried_inner_then_more_of_the_dead_chain_is_an_id_failure() -> None:
    traj = trajectory(search(0, INNER, OUTER, DIRECT), disabled(1, INNER), call(2, OUTER))
    assert category(traj, searched=True, first_tried={INNER}) == "id"
    assert category(trajectory(disabled(0, INNER), call(1, DIRECT)), searched=True, first_tried={INNER}) == ("tool_use")


# impossible: every solution function is down, giving up is right

IMPOSSIBLE = [FaultSpec(kind=FaultKind.unavailable, target=[DIRECT, INNER, OUTER])]


def test_giving_up_when_nothing_can_work_is_correct_and_has_no_category() -> None:
    traj = trajectory(disabled(0, DIRECT), gave_up=True, final="CANNOT_SOLVE", faults=IMPOSSIBLE)
    assert category(traj, searched=False, correct=True) is None


@pytest.mark.parametrize("outcome", [Outcome.scored, Outcome.budget_exhausted])
def test_not_giving_up_when_nothing_can_work_is_a_missed_give_up(outcome: Outcome) -> None:
    traj = trajectory(disabled(0, DIRECT), disabled(1, INNER), final="[]", faults=IMPOSSIBLE, outcome=outcome)
    assert category(traj, searched=True) == "no_give_up"


def test_a_temporary_fault_blocks_no_plan() -> None:
    transient = FaultSpec(
        kind=FaultKind.transient, target=[DIRECT, INNER, OUTER], persistence=Persistence(mode="temporary", after=2)
    )
    traj = trajectory(call(0, DIRECT, ok=False, error="timeout"), final="[]", faults=[transient])
    assert category(traj, searched=False) == "tool_use"


# a cascade: the outer function fails because the inner one it depends on carries a fault of its own

FIRST_TRIED = FaultSpec(kind=FaultKind.first_tried, target=[DIRECT, INNER, OUTER])
CASCADE = FaultSpec(kind=FaultKind.cascade, target=[OUTER], params={"on": INNER})
UPSTREAM = FaultSpec(kind=FaultKind.transient, target=[INNER], persistence=Persistence(mode="temporary", after=1))


def test_a_cascade_blocks_the_chain_as_the_give_up_rule_does() -> None:
    """The direct function disabled first, the chain's outer function failing with its faulted upstream: no plan
    is left. The scorer reads the rule that decided giving up was right (env_core.faults), so both agree."""
    faults = [FIRST_TRIED, CASCADE, UPSTREAM]
    steps = (disabled(0, DIRECT), call(1, INNER, ok=False, error="timeout"), call(2, INNER), call(3, OUTER, ok=False))
    traj = trajectory(*steps, final="[]", faults=faults)
    assert expects_give_up(SCENARIO, faults, {DIRECT}) is True
    assert usable_plans(SCENARIO, faults, {DIRECT}) == []
    assert category(traj, searched=False, first_tried={DIRECT}) == "no_give_up"
    details = episode_details(traj, SCENARIO, correct=False, searched=True, first_tried={DIRECT})
    assert details["error_category"] == "no_give_up" and details["backup_plan_calls"] == 2


def test_a_cascade_whose_upstream_has_no_fault_blocks_nothing() -> None:
    faults = [FIRST_TRIED, CASCADE]
    traj = trajectory(disabled(0, DIRECT), call(1, INNER), call(2, OUTER), final="[]", faults=faults)
    assert expects_give_up(SCENARIO, faults, {DIRECT}) is False
    assert usable_plans(SCENARIO, faults, {DIRECT}) == [SCENARIO.gold.plans[1]]
    assert category(traj, searched=False, first_tried={DIRECT}) == "tool_use"


@pytest.mark.parametrize("outcome", [Outcome.model_error, Outcome.parse_error])
def test_a_broken_reply_is_another_kind_of_failure(outcome: Outcome) -> None:
    assert category(trajectory(call(0, INNER), outcome=outcome), searched=True) == "other"


def test_a_scenario_without_plans_cannot_be_categorized() -> None:
    bare = SCENARIO.model_copy(update={"gold": Gold(answer=GOLD)})
    assert error_category(trajectory(), bare, True, correct=False) == "other"


def test_budget_exhausted_while_searching_is_categorized_by_progress() -> None:
    traj = trajectory(search(0, DISTRACTOR), search(1, DISTRACTOR), outcome=Outcome.budget_exhausted)
    assert category(traj, searched=True) == "search"


# ---------------------------------------------------------------------------------------------------------------
# backup_plan_calls and episode_details


def test_disabling_the_direct_function_leaves_the_chain() -> None:
    assert backup_plan_calls(SCENARIO, {DIRECT}) == 2
    assert backup_plan_calls(make_scenario((INNER, "function_4", OUTER)), {DIRECT}) == 3


@pytest.mark.parametrize("hit", [INNER, OUTER])
def test_disabling_a_chain_function_leaves_the_single_direct_call(hit: str) -> None:
    assert backup_plan_calls(SCENARIO, {hit}) == 1


def test_nothing_disabled_means_no_backup_plan_was_needed() -> None:
    assert backup_plan_calls(SCENARIO, set()) is None


def test_disabling_every_plan_leaves_nothing() -> None:
    assert backup_plan_calls(SCENARIO, {DIRECT, INNER}) == 0


def test_episode_details_in_the_open_setting() -> None:
    traj = trajectory(
        search(0, DIRECT),
        disabled(1, DIRECT),
        search(2, DISTRACTOR),
        call(3, "get_info"),
        call(4, "search_tools", ok=False, error="timeout"),
    )
    details = episode_details(traj, SCENARIO, correct=False, searched=True, first_tried={DIRECT})
    assert details == {
        "error_category": "search",
        "backup_plan_calls": 2,
        "search_calls": 3,
        # Only the disabled direct function was seen: the backup chain never showed up.
        "solution_seen_in_search": False,
    }
    assert json.loads(json.dumps(details)) == details
    stored = SqlfuncsDetails.model_validate(details).model_dump(mode="json")  # what the runner stores
    assert list(stored.items()) == list(details.items())


def test_episode_details_in_the_closed_setting() -> None:
    traj = trajectory(call(0, INNER), call(1, DIRECT), final=json.dumps(GOLD))
    details = episode_details(traj, SCENARIO, correct=True, searched=False, first_tried={INNER})
    assert details == {
        "error_category": None,
        "backup_plan_calls": 1,
        "search_calls": 0,
        "solution_seen_in_search": None,
    }


def test_solution_seen_in_search_counts_the_backup_plan() -> None:
    traj = trajectory(search(0, DIRECT), disabled(1, DIRECT), search(2, OUTER), final="[]")
    details = episode_details(traj, SCENARIO, correct=False, searched=True, first_tried={DIRECT})
    assert details["solution_seen_in_search"] is True
    assert details["error_category"] == "id"


# ---------------------------------------------------------------------------------------------------------------
# bootstrap intervals


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    values = [(i**1.5) % 7.3 for i in range(60)]  # irregular values: resampled means are not on a coarse lattice
    assert bootstrap_interval(values, seed=7) == bootstrap_interval(values, seed=7)
    assert bootstrap_interval(values, seed=7) != bootstrap_interval(values, seed=8)
    binary = [1] * 30 + [0] * 20
    assert bootstrap_interval(binary, seed=3) == bootstrap_interval(binary, seed=3)


def test_bootstrap_of_half_successes_matches_the_binomial_spread() -> None:
    low, high = bootstrap_interval([1] * 50 + [0] * 50)
    assert low == pytest.approx(0.40, abs=0.011)
    assert high == pytest.approx(0.60, abs=0.011)


def test_bootstrap_of_general_values_agrees_with_the_normal_approximation() -> None:
    # 0/2 values take the resampling path; 0/1 values the binomial shortcut: same distribution up to scale.
    low2, high2 = bootstrap_interval([2.0] * 50 + [0.0] * 50)
    low1, high1 = bootstrap_interval([1] * 50 + [0] * 50)
    assert (low2 / 2, high2 / 2) == pytest.approx((low1, high1), abs=0.012)
    values = [float(i % 10) for i in range(3000)]  # mean 4.5, sd 2.87: several resampling chunks
    low, high = bootstrap_interval(values, resamples=2000)
    half = 1.96 * math.sqrt(8.25 / 3000)
    assert low == pytest.approx(4.5 - half, abs=0.02)
    assert high == pytest.approx(4.5 + half, abs=0.02)


def test_bootstrap_narrows_with_lower_confidence() -> None:
    values = [1] * 40 + [0] * 60
    low95, high95 = bootstrap_interval(values, confidence=0.95)
    low80, high80 = bootstrap_interval(values, confidence=0.80)
    assert low95 < low80 < 0.4 < high80 < high95


@pytest.mark.parametrize("values", [[0.1] * 7, [1] * 10, [0] * 3, [42.0]])
def test_bootstrap_of_equal_values_has_zero_width(values: list[float]) -> None:
    assert bootstrap_interval(values) == (values[0], values[0])


def test_bootstrap_of_nothing_is_undefined() -> None:
    low, high = bootstrap_interval([])
    assert math.isnan(low) and math.isnan(high)


@pytest.mark.parametrize(
    ("values", "kwargs", "message"),
    [
        ([1.0, math.nan], {}, "finite"),
        ([1.0, math.inf], {}, "finite"),
        ([[1.0], [0.0]], {}, "flat"),
        ([1.0], {"confidence": 1.0}, "confidence"),
        ([], {"confidence": 0.0}, "confidence"),
        ([1.0], {"resamples": 0}, "resamples"),
    ],
)
def test_bootstrap_bad_inputs_raise(values: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_interval(values, **kwargs)


def test_difference_interval_brackets_the_observed_difference() -> None:
    a, b = [1] * 50 + [0] * 50, [1] * 25 + [0] * 75
    low, high = bootstrap_difference_interval(a, b)
    half = 1.96 * math.sqrt(0.25 / 100 + 0.1875 / 100)
    assert low == pytest.approx(0.25 - half, abs=0.015)
    assert high == pytest.approx(0.25 + half, abs=0.015)
    x, y = [(i**1.5) % 7.3 for i in range(60)], [(i**1.3) % 5.1 for i in range(50)]
    assert bootstrap_difference_interval(x, y, seed=5) == bootstrap_difference_interval(x, y, seed=5)
    assert bootstrap_difference_interval(x, y, seed=5) != bootstrap_difference_interval(x, y, seed=6)


def test_difference_interval_edge_cases() -> None:
    assert bootstrap_difference_interval([1, 1, 1], [0, 0]) == (1.0, 1.0)
    assert all(math.isnan(x) for x in bootstrap_difference_interval([], [1, 0]))
    assert all(math.isnan(x) for x in bootstrap_difference_interval([1, 0], []))


# ---------------------------------------------------------------------------------------------------------------
# summarize_sqlfuncs


def row(setting: str, correct: bool, category: str | None = None, **extra: Any) -> dict[str, Any]:
    base = {
        "model": extra.pop("model", "a"),
        "setting": setting,
        "correct": correct,
        "outcome": extra.pop("outcome", "scored"),
        "error_category": category,
        "backup_plan_calls": None,
        "search_calls": 1,
        "solution_seen_in_search": True,
    }
    return base | extra


def table() -> list[dict[str, Any]]:
    clean = [row("clean", True, n_turns=2) for _ in range(8)]
    clean += [row("clean", False, "search", n_turns=6), row("clean", False, "id", n_turns=6)]
    clean.append(row("clean", True, outcome="infra_error", n_turns=1))  # would raise the accuracy if counted
    hit = [row("first_tried", True, backup_plan_calls=1)]
    hit += [row("first_tried", False, c, backup_plan_calls=1) for c in ("search", "search", "id")]
    hit += [row("first_tried", True, backup_plan_calls=2) for _ in range(3)]
    hit += [row("first_tried", False, c, backup_plan_calls=b) for c, b in (("chaining", 2), ("tool_use", 3))]
    hit.append(row("first_tried", False, "search", backup_plan_calls=None))
    hit += [row("first_tried", True, outcome="infra_error", backup_plan_calls=1) for _ in range(5)]
    only_clean = [row("clean", c, model="b", outcome=o) for c, o in ((True, "scored"), (False, "budget_exhausted"))]
    return clean + hit + only_clean


def test_summary_accuracy_excludes_infra_errors() -> None:
    summary = summarize_sqlfuncs(table())
    clean, hit = summary["models"]["a"]["settings"]["clean"], summary["models"]["a"]["settings"]["first_tried"]
    assert (clean["n"], clean["n_valid"], clean["n_correct"], clean["accuracy"]) == (11, 10, 8, 0.8)
    assert (hit["n"], hit["n_valid"], hit["n_correct"], hit["accuracy"]) == (15, 10, 4, 0.4)
    assert (clean["ci_low"], clean["ci_high"]) == bootstrap_interval([1.0] * 8 + [0.0] * 2)
    assert clean["ci_low"] < 0.8 < clean["ci_high"]


def test_summary_accuracy_decrease_in_points_and_percent() -> None:
    decrease = summarize_sqlfuncs(table())["models"]["a"]["decrease"]
    assert decrease["baseline_accuracy"] == 0.8
    assert decrease["faulted_accuracy"] == 0.4
    assert decrease["absolute_points"] == pytest.approx(40.0)
    assert decrease["relative_percent"] == pytest.approx(50.0)
    assert decrease["ci_low_points"] < 40.0 < decrease["ci_high_points"]
    low, high = bootstrap_difference_interval([1.0] * 8 + [0.0] * 2, [1.0] * 4 + [0.0] * 6)
    assert (decrease["ci_low_points"], decrease["ci_high_points"]) == pytest.approx((100 * low, 100 * high))


def test_summary_decrease_needs_both_settings() -> None:
    summary = summarize_sqlfuncs(table())
    assert summary["models"]["b"]["decrease"] is None
    assert summary["models"]["b"]["settings"]["clean"]["accuracy"] == 0.5  # budget_exhausted is a failure
    assert summarize_sqlfuncs(table(), baseline="missing")["models"]["a"]["decrease"] is None


def test_summary_error_distribution_is_a_share_of_failures_per_setting() -> None:
    settings = summarize_sqlfuncs(table())["models"]["a"]["settings"]
    hit = settings["first_tried"]["errors"]
    assert hit["n_failures"] == 6
    assert hit["counts"] == {"search": 3, "id": 1, "chaining": 1, "tool_use": 1, "no_give_up": 0, "other": 0}
    assert hit["percent"]["search"] == pytest.approx(50.0)
    for name in ("id", "chaining", "tool_use"):
        assert hit["percent"][name] == pytest.approx(100 / 6)
    assert hit["percent"]["other"] == 0.0
    clean = settings["clean"]["errors"]
    assert (clean["n_failures"], clean["percent"]["search"], clean["percent"]["id"]) == (2, 50.0, 50.0)
    assert set(clean["counts"]) == set(ERROR_CATEGORIES)


def test_summary_counts_failures_without_a_category() -> None:
    rows = [row("clean", False, None), row("clean", False, "id"), row("clean", True, None)]
    errors = summarize_sqlfuncs(rows)["models"]["a"]["settings"]["clean"]["errors"]
    assert errors["counts"]["uncategorized"] == 1
    assert errors["percent"]["uncategorized"] == 50.0


def test_summary_without_failures_has_no_shares() -> None:
    errors = summarize_sqlfuncs([row("clean", True)])["models"]["a"]["settings"]["clean"]["errors"]
    assert errors["n_failures"] == 0
    assert all(p is None for p in errors["percent"].values())


def test_summary_stratifies_first_tried_accuracy_by_backup_plan_size() -> None:
    strata = summarize_sqlfuncs(table())["models"]["a"]["by_backup_plan_calls"]
    counts = {k: (v["n"], v["n_correct"]) for k, v in strata.items()}
    assert counts == {"single": (4, 1), "multi": (5, 3), "none": (1, 0)}
    assert strata["single"]["accuracy"] == 0.25
    assert strata["multi"]["accuracy"] == 0.6
    empty = summarize_sqlfuncs(table())["models"]["b"]["by_backup_plan_calls"]["single"]
    assert empty == {"n": 0, "n_correct": 0, "accuracy": None, "ci_low": None, "ci_high": None}


def test_summary_mean_turns_for_correct_and_incorrect_episodes() -> None:
    summary = summarize_sqlfuncs(table())
    assert summary["models"]["a"]["settings"]["clean"]["turns"] == {"all": 2.8, "correct": 2.0, "incorrect": 6.0}
    assert summary["models"]["a"]["settings"]["first_tried"]["turns"] is None


def test_summary_reads_missing_numbers_stored_as_nan() -> None:
    rows = [row("first_tried", True, backup_plan_calls=math.nan, n_turns=math.nan)]
    rows.append(row("first_tried", False, "id", backup_plan_calls=2.0, n_turns=4.0))
    model = summarize_sqlfuncs(rows)["models"]["a"]
    assert {k: v["n"] for k, v in model["by_backup_plan_calls"].items()} == {"single": 0, "multi": 1, "none": 1}
    assert model["settings"]["first_tried"]["turns"] == {"all": 4.0, "correct": None, "incorrect": 4.0}


def test_summary_is_deterministic_and_json_able() -> None:
    first, second = summarize_sqlfuncs(table()), summarize_sqlfuncs(table())
    assert first == second
    text = json.dumps(first, allow_nan=False)
    assert json.loads(text) == first
    assert list(first["models"]) == ["a", "b"]
    assert list(first["models"]["a"]["settings"]) == ["clean", "first_tried"]
