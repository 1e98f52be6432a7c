"""The shared machinery the services family brought: plan steps that check their results, confirmation steps the
naive policy skips, per-plan reports, the scripted user behind ``ask_user``, failure hints shown as tool notes, and
the scenario checks of triggers and orderings. Exercised on the smoke family, so that none of it is private to one
family."""

from __future__ import annotations

import pytest

from undertow.env_core.environment import NO_USER_ANSWER, Environment
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import (
    ASK_USER,
    Action,
    CallPattern,
    Checkpoint,
    FaultKind,
    FaultSpec,
    Gold,
    PlannedCall,
    ResultCheck,
    Scenario,
    ToolCall,
    UserReply,
)
from undertow.env_core.plans import GIVE_UP_MARKER, NextAnswer, NextCall, PlanWalker, play
from undertow.env_core.scenarios import scenario_problems
from undertow.env_core.suites import Suite

SALARY = "reports_with_salary_by_manager_name"


def checked(smoke: Suite, **gold: object) -> Scenario:
    base = next(s for s in smoke.scenarios if s.metadata.get("template") == "reports")
    return base.model_copy(update={"gold": base.gold.model_copy(update=gold)})


def test_a_result_that_fails_its_check_moves_the_oracle_to_the_next_plan(smoke: Suite) -> None:
    scenario = next(s for s in smoke.scenarios if s.metadata.get("template") == "reports")
    first = scenario.gold.plans[0]
    impossible = ResultCheck(contains=["no such employee anywhere"])
    plans = [[first[0].model_copy(update={"check": impossible}), *first[1:]], *scenario.gold.plans[1:]]
    scenario = checked(smoke, plans=plans, reports=["first plan", "second plan"])
    walk = play(Environment(scenario, smoke.toolbox), scenario, recover=True)
    assert walk.final_answer == "second plan"
    assert [s.action.tool_call.name for s in walk.tool_steps() if s.action.tool_call] == [
        c.tool for plan in plans for c in plan
    ]


def test_the_naive_walker_skips_confirmation_steps_and_checks_nothing(smoke: Suite) -> None:
    scenario = next(s for s in smoke.scenarios if s.metadata.get("template") == "reports")
    plan = scenario.gold.plans[0]
    confirm = PlannedCall(
        tool=plan[0].tool, arguments=dict(plan[0].arguments), verify=True, check=ResultCheck(contains=["never there"])
    )
    scenario = checked(smoke, plans=[[*plan, confirm]], reports=["done"])
    naive = play(Environment(scenario, smoke.toolbox), scenario, recover=False)
    assert naive.final_answer == "done" and len(naive.tool_steps()) == len(plan)
    oracle = play(Environment(scenario, smoke.toolbox), scenario, recover=True)
    assert oracle.gave_up and oracle.final_answer.startswith(GIVE_UP_MARKER)  # the check failed, no plan left


def test_an_empty_plan_is_an_answer_without_calls(smoke: Suite) -> None:
    scenario = checked(smoke, plans=[[]], reports=["nothing to do"])
    walker = PlanWalker(scenario, recover=True)
    assert walker.start(set()) == NextAnswer("nothing to do")


def test_retryable_errors_are_retried_by_the_oracle_only(smoke: Suite) -> None:
    scenario = next(s for s in smoke.scenarios if s.metadata.get("template") == "reports")
    visible = set(scenario.tools)
    oracle, naive = PlanWalker(scenario, recover=True), PlanWalker(scenario, recover=False)
    error = {"error": {"type": "rate_limit", "message": "429"}}
    first = oracle.start(visible)
    assert isinstance(first, NextCall) and oracle.on_result(error, visible) == first
    naive.start(visible)
    assert naive.on_result(error, visible) == NextAnswer("The tool returned an error: 429")


def test_the_oracle_retries_what_the_tool_message_flags_retryable_and_moves_on_otherwise(smoke: Suite) -> None:
    """A flag in the tool message decides, whatever the error's type; without one (a CodeAct traceback read back)
    the type does."""
    scenario = next(s for s in smoke.scenarios if s.metadata.get("template") == "reports")
    visible = set(scenario.tools)
    primary, backup = scenario.gold.plans[0][0].tool, scenario.gold.plans[1][0].tool
    for error, retried in [
        ({"type": "service_unavailable", "message": "503: an outage", "retryable": False}, False),
        ({"type": "conflict", "message": "busy, send it again", "retryable": True}, True),
        ({"type": "service_unavailable", "message": "503"}, True),
        ({"type": "ValueError", "message": "f is currently unavailable."}, False),
    ]:
        oracle = PlanWalker(scenario, recover=True)
        assert isinstance(first := oracle.start(visible), NextCall) and first.tool == primary
        after = oracle.on_result({"error": error}, visible)
        assert isinstance(after, NextCall) and after.tool == (primary if retried else backup), error


def test_the_scripted_user_answers_what_it_was_scripted_for(smoke: Suite) -> None:
    base = smoke.scenarios[0]
    scenario = base.model_copy(update={"user_replies": [UserReply(about=["budget"], say="Keep it under 5000.")]})
    env = Environment(scenario, smoke.toolbox)
    start = env.reset()
    assert ASK_USER in {t.name for t in start.tools}
    ask = Action(kind="tool_call", tool_call=ToolCall(id="q", name=ASK_USER, arguments={"question": "Any BUDGET?"}))
    assert env.step(ask).result == {"reply": "Keep it under 5000."}
    other = Action(kind="tool_call", tool_call=ToolCall(id="r", name=ASK_USER, arguments={"question": "Colour?"}))
    assert env.step(other).result == {"reply": NO_USER_ANSWER}
    # without scripted replies there is no one to ask
    assert ASK_USER not in {t.name for t in Environment(base, smoke.toolbox).reset().tools}


def test_schema_notes_show_each_tools_failure_hint(smoke: Suite) -> None:
    scenario = smoke.scenarios[0]
    name = scenario.tools[0]
    spec = smoke.toolbox.specs[name]
    noted = spec.model_copy(update={"binding": {**spec.binding, "failure_hint": "May time out; retry once."}})
    smoke.toolbox.specs[name] = noted
    try:
        setting = PRESET_SETTINGS["base"].model_copy(update={"harness": "schema_notes"})
        shown = {t.name: t for t in smoke.environment(scenario, 0, setting).reset().tools}
        plain = {t.name: t for t in smoke.environment(scenario, 0, PRESET_SETTINGS["base"]).reset().tools}
    finally:
        smoke.toolbox.specs[name] = spec
    assert shown[name].description.endswith("Note: May time out; retry once.")
    assert plain[name].description == spec.description


def test_scenario_checks_name_a_trigger_that_never_exists_and_a_bad_ordering(smoke: Suite) -> None:
    scenario = checked(
        smoke,
        required_calls=[CallPattern(tool=SALARY, after=4)],
        checkpoints=[Checkpoint(trigger="reports_with_salary", expect=["x"])],
    )
    problems = scenario_problems(scenario, smoke.toolbox.specs, "smoke")
    assert "gold.required_calls[0].after: no required call number 4" in problems
    assert any(
        p.startswith("gold.checkpoints[0].trigger: names a call that never exists") and "did you mean" in p
        for p in problems
    )


def test_a_set_corruption_gives_the_exact_wrong_value(smoke: Suite) -> None:
    scenario = next(s for s in smoke.scenarios if s.metadata.get("template") == "reports")
    (call,) = [c for plan in scenario.gold.plans for c in plan if c.tool == SALARY]
    fault = FaultSpec(kind=FaultKind.corrupted, target=SALARY, params={"mode": "set", "field": "salary", "value": 1})
    env = Environment(scenario, smoke.toolbox, faults=[fault])
    env.reset()
    action = Action(kind="tool_call", tool_call=ToolCall(id="a", name=SALARY, arguments=dict(call.arguments)))
    observation = env.step(action)
    assert observation is not None and observation.result
    assert all(r["salary"] == 1 for r in observation.result)


def test_reports_must_match_the_plans() -> None:
    with pytest.raises(ValueError, match="reports: 2 given for 1 plans"):
        Gold(plans=[[]], reports=["a", "b"])
