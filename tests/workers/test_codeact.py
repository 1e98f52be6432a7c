"""The CodeAct protocol: <execute> code in a sandboxed kernel, tool calls routed through the environment."""

from __future__ import annotations

import json

import pytest
from helpers.endpoint import answer, scripted_server
from helpers.runs import CODEACT, scripted_episode

from undertow.env_core.model import Outcome, Scenario
from undertow.env_core.suites import Suite, SuiteRef
from undertow.workers.agent import parse_codeact
from undertow.workers.runner import ShardOutput


def run_codeact(
    ref: SuiteRef, base_url: str, scenario: Scenario, setting: str = "clean", **agent: object
) -> ShardOutput:
    return scripted_episode(ref, base_url, scenario.id, setting, **(CODEACT | agent))


def direct_code(scenario: Scenario, variable: str = "rows") -> str:
    (call,) = scenario.gold.plans[0]
    arguments = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
    return f"{variable} = {call.tool}({arguments})\nprint(len({variable}))"


def chain_code(scenario: Scenario) -> str:
    first, second = scenario.gold.plans[1]
    (ref_name, ref) = next(iter(second.arguments.items()))
    first_args = ", ".join(f"{k}={v!r}" for k, v in first.arguments.items())
    return (
        f"ids = [r[{ref.field!r}] for r in {first.tool}({first_args})]\n"
        f"rows = {second.tool}({ref_name}=ids)\nprint(len(rows))"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<thought>x</thought><execute>print(1)</execute>", ("execute", "print(1)")),
        ("<execute>\n```python\na = 1\n```\n</execute>", ("execute", "a = 1")),
        ("<execute>```py\na = 1</execute>", ("execute", "a = 1")),  # a fence never closed
        ("<execute>\n```python3\nif a:\n    b()\n```</execute>", ("execute", "if a:\n    b()")),
        ("<execute>\n    a = 1\n</execute>", ("execute", "    a = 1")),  # no fence: the code as written
        ("<solution>solution = a</solution><execute>b</execute>", ("solution", "solution = a")),
        ("CANNOT_SOLVE: no tool works", ("give_up", "CANNOT_SOLVE: no tool works")),
        ("I think the answer is 3.", ("none", "")),
    ],
)
def test_parse_codeact(text: str, expected: tuple[str, str]) -> None:
    assert parse_codeact(text) == expected


def test_code_calls_tools_through_the_environment_and_solves(smoke_ref: SuiteRef, smoke: Suite) -> None:
    scenario = smoke.scenarios[0]
    script = [
        answer(f"<thought>direct call</thought>\n<execute>\n{direct_code(scenario)}\n</execute>"),
        answer("<solution>solution = rows</solution>"),
    ]
    with scripted_server(script) as server:
        output = run_codeact(smoke_ref, server.base_url, scenario)
    (result,), (trajectory,) = output.results, output.trajectories
    assert result.outcome == Outcome.scored and result.solved and result.correct
    kinds = [s.action.kind for s in trajectory.steps]
    assert kinds == ["tool_call", "code", "code", "final_answer"]
    call = trajectory.steps[0].action.tool_call
    assert call.name == scenario.gold.plans[0][0].tool and call.arguments == scenario.gold.plans[0][0].arguments
    assert trajectory.steps[1].observation.result.strip() == str(len(scenario.gold.answer))
    second_request = server.chat_requests[1]["messages"]
    assert second_request[-1] == {"role": "user", "content": f"Observation:\n{len(scenario.gold.answer)}"}
    assert "tools" not in server.chat_requests[0]  # CodeAct uses text, not native tool calls
    assert scenario.gold.plans[0][0].tool + "(" in server.chat_requests[0]["messages"][0]["content"]
    assert json.loads(trajectory.final_answer) == scenario.gold.answer


def test_first_tried_failure_shows_as_a_traceback_and_the_chain_recovers(smoke_ref: SuiteRef, smoke: Suite) -> None:
    scenario = smoke.scenarios[0]
    script = [
        answer(f"<execute>{direct_code(scenario)}</execute>"),
        answer(f"<execute>{chain_code(scenario)}</execute>"),
        answer("<solution>solution = rows</solution>"),
    ]
    with scripted_server(script) as server:
        output = run_codeact(smoke_ref, server.base_url, scenario, setting="first_tried")
    (result,), (trajectory,) = output.results, output.trajectories
    failed = trajectory.steps[1]
    assert failed.action.kind == "code" and not failed.observation.ok
    assert (
        "ValueError" in failed.observation.error.message and "currently unavailable" in failed.observation.error.message
    )
    assert trajectory.steps[0].observation.fault.kind == "first_tried"
    assert "currently unavailable" in server.chat_requests[1]["messages"][-1]["content"]
    assert result.solved and result.correct and result.faults_fired == 1


def test_exceptions_timeouts_and_missing_solution_are_observations(smoke_ref: SuiteRef, smoke: Suite) -> None:
    scenario = smoke.scenarios[0]
    script = [
        answer("<execute>x = 1\n1 / 0</execute>"),
        answer("<execute>while True:\n    pass</execute>"),
        answer("<execute>print(x)</execute>"),
        answer("<solution>answer = 3</solution>"),
        answer(f"<execute>{direct_code(scenario)}</execute>"),
        answer("<solution>solution = rows</solution>"),
    ]
    with scripted_server(script) as server:
        output = run_codeact(smoke_ref, server.base_url, scenario, step_timeout_s=1.0)
    (result,), (trajectory,) = output.results, output.trajectories
    observations = [m["content"] for m in (server.chat_requests[i]["messages"][-1] for i in range(1, 5))]
    assert "ZeroDivisionError" in observations[0]
    assert "timed out" in trajectory.steps[1].observation.error.message or "restart" in observations[1]
    assert "NameError" in observations[2]  # the kernel was restarted: x is gone
    assert "did not set a variable named `solution`" in observations[3]
    assert result.solved and result.n_turns == 6


def test_replies_without_a_block_end_as_parse_error(smoke_ref: SuiteRef, smoke: Suite) -> None:
    with scripted_server([answer("The answer is probably 3.")] * 3) as server:
        output = run_codeact(smoke_ref, server.base_url, smoke.scenarios[0], max_parse_errors=3)
    (result,) = output.results
    assert result.outcome == Outcome.parse_error and "no <execute> or <solution> block" in result.error
    assert result.n_parse_failures == 3
    assert "Reply with <execute>" in server.chat_requests[1]["messages"][-1]["content"]


def test_give_up_in_codeact(smoke_ref: SuiteRef, smoke: Suite) -> None:
    with scripted_server([answer("CANNOT_SOLVE: every tool is down")]) as server:
        output = run_codeact(smoke_ref, server.base_url, smoke.scenarios[0], setting="impossible")
    (result,) = output.results
    assert result.gave_up and result.correct and result.outcome == Outcome.scored
