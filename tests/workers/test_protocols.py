"""Text protocols against a real HTTP endpoint: ReAct and direct sequences, with parse errors fed back once."""

from __future__ import annotations

import json

from helpers.endpoint import answer, scripted_server
from helpers.runs import scripted_episode

from undertow.env_core.model import ArgRef, Outcome, Scenario
from undertow.env_core.suites import Suite, SuiteRef
from undertow.workers.runner import ShardOutput


def run(ref: SuiteRef, base_url: str, scenario: Scenario, protocol: str, setting: str = "clean") -> ShardOutput:
    return scripted_episode(ref, base_url, scenario.id, setting, protocol=protocol, max_turns=6)


def react_call(scenario: Scenario, plan: int = 0, step: int = 0) -> str:
    call = scenario.gold.plans[plan][step]
    return f"Thought: I will use {call.tool}.\nAction: {call.tool}\nAction Input: {json.dumps(call.arguments)}"


def test_react_solves_with_an_observation_per_action(smoke_ref: SuiteRef, smoke: Suite) -> None:
    scenario = smoke.scenarios[0]
    script = [
        answer(react_call(scenario)),
        answer(f"Thought: I now know the final answer\nFinal Answer: {json.dumps(scenario.gold.answer)}"),
    ]
    with scripted_server(script) as server:
        output = run(smoke_ref, server.base_url, scenario, "react")
    (result,), (trajectory,) = output.results, output.trajectories
    assert result.outcome == Outcome.scored and result.solved and result.n_parse_failures == 0
    assert [t.parse_stage for t in trajectory.turns] == ["react_action", "react_final"]
    system = server.chat_requests[0]["messages"][0]["content"]
    assert "Action Input:" in system and scenario.gold.plans[0][0].tool in system
    assert "tools" not in server.chat_requests[0]
    observation = server.chat_requests[1]["messages"][-1]
    assert observation["role"] == "user" and observation["content"].startswith("Observation: [{")


def test_react_feeds_a_parse_error_back_once(smoke_ref: SuiteRef, smoke: Suite) -> None:
    scenario = smoke.scenarios[0]
    script = [
        answer("I believe the answer is obvious."),
        answer(react_call(scenario)),
        answer(f"Final Answer: {json.dumps(scenario.gold.answer)}"),
    ]
    with scripted_server(script) as server:
        output = run(smoke_ref, server.base_url, scenario, "react")
    (result,), (trajectory,) = output.results, output.trajectories
    assert result.solved and result.n_parse_failures == 1
    assert trajectory.turns[0].parse_error.startswith("expected 'Action:'")
    assert "could not parse your reply" in server.chat_requests[1]["messages"][-1]["content"]
    with scripted_server([answer("no format"), answer("still no format")]) as server:
        output = run(smoke_ref, server.base_url, scenario, "react")
    assert output.results[0].outcome == Outcome.parse_error and output.results[0].n_parse_failures == 2


def test_direct_sequence_runs_labelled_calls_with_references(smoke_ref: SuiteRef, smoke: Suite) -> None:
    scenario = smoke.scenarios[0]
    first, second = scenario.gold.plans[1]
    ((name, ref),) = [(k, v) for k, v in second.arguments.items() if isinstance(v, ArgRef)]
    plan = [
        {"name": first.tool, "arguments": first.arguments, "label": "ids"},
        {"name": second.tool, "arguments": {name: f"$ids.{ref.field}$"}, "label": "rows"},
    ]
    reply = "Here is my plan:\n```json\n" + json.dumps(plan) + "\n```"
    # read strictly (the default) the prose around the calls is the model's failure, fed back once, then final
    with scripted_server([answer(reply), answer(reply)]) as server:
        strict = run(smoke_ref, server.base_url, scenario, "direct")
    (refused,) = strict.results
    assert refused.outcome == Outcome.parse_error and not strict.trajectories[0].tool_steps()
    assert "the calls alone" in server.chat_requests[1]["messages"][-1]["content"]
    # the lenient reading digs the calls out of the prose
    with scripted_server([answer(reply)]) as server:
        output = scripted_episode(
            smoke_ref, server.base_url, scenario.id, protocol="direct", max_turns=6, direct_parser="lenient"
        )
    (result,), (trajectory,) = output.results, output.trajectories
    assert result.outcome == Outcome.scored and result.solved and result.n_turns == 1
    assert trajectory.turns[0].parse_stage == "fenced_json"
    assert [s.action.tool_call.name for s in trajectory.tool_steps()] == [first.tool, second.tool]
    # "$ids.field$" became the column of the first call's result: a list, since the argument is an array
    ids = [row[ref.field] for row in trajectory.tool_steps()[0].observation.result]
    assert trajectory.tool_steps()[1].action.tool_call.arguments[name] == ids


def test_direct_sequence_parse_error_then_plan(smoke_ref: SuiteRef, smoke: Suite) -> None:
    scenario = smoke.scenarios[0]
    direct = scenario.gold.plans[0][0]
    good = json.dumps([{"name": direct.tool, "arguments": direct.arguments, "label": "out"}])
    with scripted_server([answer('[{"name": "' + direct.tool + '", "arguments": {'), answer(good)]) as server:
        output = run(smoke_ref, server.base_url, scenario, "direct")
    (result,) = output.results
    assert result.solved and result.n_parse_failures == 1
    assert "malformed or truncated" in server.chat_requests[1]["messages"][-1]["content"]
