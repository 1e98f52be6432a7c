"""Per episode: the error taxonomy of the paper's §5, the size of the backup plan, and the details the runner stores.

The taxonomy is judged against the plans that could still work in the episode (*usable plans*): a plan is unusable
when one of its tools was disabled by ``first_tried``, or when the trajectory's faults block it by the rule that
decides whether giving up was right (``env_core.faults.usable_plans``: permanent ``unavailable`` / ``removed``
faults, and cascades whose upstream carries a fault of its own). Calling the disabled first function is what the
fault provokes, so it is no progress towards an answer; what counts is what the agent did with the backup plan.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Literal

from undertow.env_core.faults import usable_plans
from undertow.env_core.model import Outcome, PlannedCall, Scenario, Trajectory
from undertow.env_core.search import SEARCH_TOOLS
from undertow.scoring.family_summary import StrictModel

# Every value error_category can return for a failed episode, in report order.
ERROR_CATEGORIES = ("search", "id", "chaining", "tool_use", "no_give_up", "other")
ErrorCategory = Literal["search", "id", "chaining", "tool_use", "no_give_up", "other"]

_BROKEN_REPLY = (Outcome.model_error, Outcome.parse_error)


def _usable_plans(scenario: Scenario, disabled: Collection[str]) -> list[list[PlannedCall]]:
    return [plan for plan in scenario.gold.plans if not any(call.tool in disabled for call in plan)]


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
) -> ErrorCategory | None:
    """Why an episode failed, in the taxonomy of the paper's §5, or None when there is nothing to explain.

    ``searched`` is True in the open setting (functions must be found with ``search_tools``), False in the closed
    one. ``first_tried`` is the set of tools the ``first_tried`` fault disabled in this episode (empty when none).
    *Usable plans* are the gold plans that neither calls a tool ``first_tried`` disabled nor is blocked by the
    faults in ``trajectory.faults`` (see the module docstring). A tool counts as *called* when a tool-call step
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
    usable = usable_plans(scenario, trajectory.faults, first_tried)
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


class SqlfuncsDetails(StrictModel):
    """What :func:`episode_details` stores in ``EpisodeResult.details``."""

    error_category: ErrorCategory | None
    backup_plan_calls: int | None
    search_calls: int
    solution_seen_in_search: bool | None


def episode_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: Collection[str]
) -> dict[str, Any]:
    """The sqlfuncs analysis fields of one episode, flat and JSON-able, for the runner to store with its result
    (:class:`SqlfuncsDetails`).

    - ``error_category``: :func:`error_category` (None for a correct or ``infra_error`` episode).
    - ``backup_plan_calls``: :func:`backup_plan_calls` (None when nothing was disabled).
    - ``search_calls``: how many ``search_tools`` calls the agent made (failed ones included; 0 when closed).
    - ``solution_seen_in_search``: whether a successful search result listed a tool of a usable plan (the same
      basis as the ``"search"`` category; all gold plans when none is usable). None in the closed setting.
    """
    plans = usable_plans(scenario, trajectory.faults, first_tried) or scenario.gold.plans
    tools = {call.tool for plan in plans for call in plan}
    return {
        "error_category": error_category(trajectory, scenario, searched, correct=correct, first_tried=first_tried),
        "backup_plan_calls": backup_plan_calls(scenario, first_tried),
        "search_calls": sum(name == SEARCH_TOOLS for name, _ in _calls(trajectory)),
        "solution_seen_in_search": bool(tools & _names_in_search_results(trajectory)) if searched else None,
    }
