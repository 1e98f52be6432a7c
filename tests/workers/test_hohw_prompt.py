"""The hohw prompt preset (the HoHW paper's CodeAct protocol, offered by the sqlfuncs family) and how a disabled
function reaches the agent's code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers.endpoint import answer, scripted_server
from helpers.runs import CODEACT, scripted_episode
from pydantic import ValidationError
from typer.testing import CliRunner

from undertow.cluster.cli import app
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import Outcome, Scenario, ToolSpec
from undertow.env_core.search import SEARCH_SPECS, ToolAccess
from undertow.env_core.sqlfuncs.prompts import HOHW as HOHW_PRESET
from undertow.env_core.suites import Suite, SuiteRef
from undertow.workers.agent import AgentConfig, codeact_preset_prompt
from undertow.workers.prompts import (
    ADVICE_SENTENCE,
    CODEACT_ADVICE_SENTENCE,
    GIVE_UP_MARKER,
    SYSTEM_PROMPT,
)
from undertow.workers.runner import ShardOutput

HOHW = {"protocol": "codeact", "prompt": "hohw"}
HOHW_ADVICE = HOHW_PRESET.part("advice")


def run_codeact(
    ref: SuiteRef, base_url: str, scenario: Scenario, setting: str = "clean", **agent: object
) -> ShardOutput:
    return scripted_episode(ref, base_url, scenario.id, setting, **(CODEACT | agent))


def first_call_code(scenario: Scenario) -> str:
    (call,) = scenario.gold.plans[0]
    arguments = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
    return f"rows = {call.tool}({arguments})"


def starting_tools(suite: Suite, access: ToolAccess) -> list[ToolSpec]:
    env = suite.environment(suite.scenarios[0], 0, PRESET_SETTINGS["clean"], access)
    return env.reset().tools


@pytest.mark.parametrize("preset", [{}, HOHW])
def test_a_disabled_function_raises_valueerror_in_the_agents_code(
    smoke_ref: SuiteRef, smoke: Suite, preset: dict[str, str]
) -> None:
    scenario = smoke.scenarios[0]
    tool = scenario.gold.plans[0][0].tool
    script = [
        answer(f"<thought>call it</thought>\n<execute>\n{first_call_code(scenario)}\n</execute>"),
        # other failures still raise the kernel's ToolError: here a backup tool misses its required argument
        answer(f"<execute>{scenario.gold.plans[1][0].tool}()</execute>"),
        answer("<solution>solution = []</solution>"),
    ]
    with scripted_server(script) as server:
        output = run_codeact(smoke_ref, server.base_url, scenario, setting="first_tried", **preset)
    (trajectory,) = output.trajectories
    assert trajectory.steps[0].observation.fault.kind == "first_tried"
    shown = server.chat_requests[1]["messages"][-1]["content"]
    expected = f"ValueError: {tool} is currently unavailable. Please try a different function."
    assert shown.startswith("Observation:\nTraceback (most recent call last):")
    assert shown.splitlines()[-1] == expected
    assert trajectory.steps[1].observation.error.message.splitlines()[-1] == expected
    other = server.chat_requests[2]["messages"][-1]["content"].splitlines()[-1]
    assert other.startswith("ToolError: ") and "unavailable" not in other


def test_hohw_prompt_closed_world_lists_full_definitions_and_two_examples(smoke: Suite) -> None:
    tools = starting_tools(smoke, ToolAccess())
    prompt = codeact_preset_prompt(AgentConfig(**HOHW), tools)
    for spec in tools:
        assert f"{spec.name} = {json.dumps(spec.openai(), ensure_ascii=False)}\n" in prompt + "\n"
    assert prompt.count("\nTask: ") == 2 and "Example 1:" in prompt and "Example 2:" in prompt
    assert "search_tools" not in prompt  # the closed world's examples call listed functions
    assert "<thought>" in prompt and "<execute>" in prompt and "<solution>" in prompt
    # the paper's protocol neither coaches recovery nor offers a way to declare defeat
    assert GIVE_UP_MARKER not in prompt and HOHW_ADVICE not in prompt and "retry" not in prompt
    coached = codeact_preset_prompt(AgentConfig(**HOHW, failure_advice=True, give_up_marker=True), tools)
    assert HOHW_ADVICE in coached and f"{GIVE_UP_MARKER}:" in coached
    assert GIVE_UP_MARKER not in codeact_preset_prompt(AgentConfig(**HOHW, failure_advice=True), tools)


def test_hohw_prompt_open_world_defines_search_and_get_info(smoke: Suite) -> None:
    tools = starting_tools(smoke, ToolAccess(mode="open", search="lexical"))
    assert [spec.name for spec in tools] == [spec.name for spec in SEARCH_SPECS]
    prompt = codeact_preset_prompt(AgentConfig(**HOHW), tools)
    for spec in SEARCH_SPECS:
        assert f"{spec.name} = {json.dumps(spec.openai(), ensure_ascii=False)}" in prompt
    examples = prompt.split("\nTask: ")[1:]
    assert len(examples) == 2
    for example in examples:  # each searches, reads a function's documentation, then calls it
        search, info = example.index("search_tools("), example.index("get_info(")
        assert search < info < example.index(" = function_", info)
    assert GIVE_UP_MARKER not in prompt and HOHW_ADVICE not in prompt


def test_hohw_reply_without_a_block_gives_up_before_the_budget(smoke_ref: SuiteRef, smoke: Suite) -> None:
    scenario = smoke.scenarios[0]
    stop = "<thought>None of these functions can answer this, so I stop here.</thought>"
    with scripted_server([answer(stop)]) as server:
        output = run_codeact(smoke_ref, server.base_url, scenario, **HOHW)
    (result,), (trajectory,) = output.results, output.trajectories
    assert result.outcome == Outcome.scored and result.gave_up and trajectory.gave_up and not result.solved
    assert len(trajectory.turns) == 1 < 6 and trajectory.steps[-1].action.kind == "give_up"
    system, task = server.chat_requests[0]["messages"]
    assert "Example 2:" in system["content"] and task["content"] == f"Task: {scenario.task}"
    # with the marker offered, such a reply is a parse error fed back, as under the default preset
    with scripted_server([answer(stop), answer(f"{GIVE_UP_MARKER}: no function fits")]) as server:
        output = run_codeact(smoke_ref, server.base_url, scenario, **HOHW, give_up_marker=True)
    (trajectory,) = output.trajectories
    assert trajectory.turns[0].parse_error and trajectory.gave_up and len(trajectory.turns) == 2
    assert "Reply with <execute>" in server.chat_requests[1]["messages"][-1]["content"]


def test_default_prompts_drop_advice_and_marker_only_when_turned_off(smoke_ref: SuiteRef, smoke: Suite) -> None:
    assert AgentConfig().system_prompt == SYSTEM_PROMPT and ADVICE_SENTENCE in SYSTEM_PROMPT
    scenario = smoke.scenarios[0]
    with scripted_server([answer("<solution>solution = []</solution>")]) as server:
        run_codeact(smoke_ref, server.base_url, scenario, failure_advice=False, give_up_marker=False)
    system = server.chat_requests[0]["messages"][0]["content"]
    assert GIVE_UP_MARKER not in system and CODEACT_ADVICE_SENTENCE.strip() not in system
    assert "original keys the tools returned.\n\nAvailable functions:\n- " in system
    with scripted_server([answer("<solution>solution = []</solution>")]) as server:
        run_codeact(smoke_ref, server.base_url, scenario)
    system = server.chat_requests[0]["messages"][0]["content"]
    assert GIVE_UP_MARKER in system and CODEACT_ADVICE_SENTENCE in system


def test_hohw_needs_codeact(tmp_path: Path) -> None:
    message = (
        "agent.prompt hohw is a CodeAct prompt, but agent.protocol is 'function_calling'; set agent.protocol: codeact"
    )
    with pytest.raises(ValidationError, match=message):
        AgentConfig(prompt="hohw")
    assert AgentConfig(**HOHW).prompt == "hohw"
    path = tmp_path / "sweep.yaml"
    sweep = {"name": "t", "models": ["oracle"], "suites": ["smoke"], "agent": {"prompt": "hohw"}}
    path.write_text(yaml.safe_dump({**sweep, "run": {"store": str(tmp_path / "runs")}}))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and message in " ".join(result.output.split())
