"""The agent protocol of FAIL-TaLMs as the shipped configs run it, checked on the requests a real HTTP endpoint
receives while it plays offline-library episodes: the awareness question(s) listing every offered function with its
full parameter schema (``Finish`` too, and ``interact_with_human`` under Ask-and-Help), read as the authors read
them and asked up to 3 times; ``Finish`` as the way to answer, the reminder after a reply without a call, the 5-step
cap after which the last text is the answer; temperature 1.0; and nothing of the generic agent (no give-up marker,
no advice about failures, no "as JSON")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.endpoint import answer, scripted_server, tool_calls
from helpers.paths import CONFIGS

from undertow.cluster.config import load_config
from undertow.env_core.failtalms.prompts import AGENT, HUMAN_TOOL, PRESETS, requires_input
from undertow.env_core.faults import Setting, not_applicable, posed
from undertow.env_core.model import ASK_HUMAN, Outcome, Scenario
from undertow.env_core.suites import Suite, load_ref, suite_ref
from undertow.scoring.failtalms import summarize
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import EndpointModel
from undertow.workers.finishing import flag_set
from undertow.workers.prompts import ADVICE_SENTENCE, GIVE_UP_MARKER, GIVE_UP_SENTENCE
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec, run_shard

SHIPPED = load_config(CONFIGS / "failtalms.yaml")
SETTINGS = {s.name: s for s in SHIPPED.settings}
REMINDER = AGENT.part("finish_reminder")
AWARENESS_REMINDER = PRESETS["protocol"].part("awareness_reminder")
# the generic agent's words, none of which the paper's protocol may send
GENERIC = (GIVE_UP_MARKER, GIVE_UP_SENTENCE, ADVICE_SENTENCE.strip(), "Tools can fail", "as JSON")


def model_under_test(base_url: str) -> EndpointModel:
    """The released config's model under test, its placeholders filled with the scripted endpoint."""
    raw = yaml.safe_load((CONFIGS / "failtalms-released.yaml").read_text(encoding="utf-8"))["models"][0]
    return EndpointModel(**{**raw, "base_url": base_url, "model": "scripted", "max_retries": 0, "timeout_s": 10})


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_ref(suite_ref({"family": "failtalms"}))


def first(suite: Suite, setting: Setting) -> Scenario:
    return next(s for s in suite.scenarios if not_applicable(s, setting) is None)


def run(base_url: str, setting: Setting, scenario: Scenario) -> ShardOutput:
    assert SHIPPED.agent.prompt == "failtalms"  # the shipped config runs the paper's protocol
    shard = ShardSpec(
        shard_id="protocol",
        model=model_under_test(base_url),
        suite=suite_ref({"family": "failtalms"}),
        setting=setting,
        agent=AgentConfig.model_validate(SHIPPED.agent.model_dump()),
        episodes=[EpisodePlan(episode_id="e", scenario_id=scenario.id, seed=0)],
    )
    return run_shard(shard)


def texts(request: dict[str, Any]) -> str:
    """Everything a request says to the model: its messages and its tool definitions."""
    return json.dumps(request["messages"]) + json.dumps(request.get("tools") or [])


def listed_functions(request: dict[str, Any]) -> dict[str, Any]:
    """The functions an awareness question lists (the JSON list that ends it), by name."""
    text = request["messages"][-1]["content"]
    start = text.index("[{")
    return {f["name"]: f for f in json.loads(text[start:])}


def offered(request: dict[str, Any]) -> dict[str, Any]:
    return {t["function"]["name"]: t["function"] for t in request["tools"]}


def assert_nothing_generic(requests: list[dict[str, Any]]) -> None:
    for request in requests:
        assert request["temperature"] == 1.0  # the paper's sampling, from the shipped config
        for words in GENERIC:
            assert words not in texts(request), words


def test_perfect_asks_both_questions_with_full_schemas_and_caps_the_episode_at_five_steps(suite: Suite) -> None:
    setting = SETTINGS["perfect"]
    scenario = first(suite, setting)
    script = [answer("Yes, the tools cover it."), answer("yes - every value is in the request.")]
    script += [answer(f"Still thinking ({n})") for n in range(1, 6)]
    with scripted_server(script) as server:
        output = run(server.base_url, setting, scenario)
    requests = server.chat_requests
    assert len(requests) == 2 + 5  # two questions (tool, then information), then five steps and no sixth
    (trajectory,) = output.trajectories
    # the episode ends on the cap with the last text as its answer, scored (not a budget failure)
    assert output.results[0].outcome == Outcome.scored and trajectory.final_answer == "Still thinking (5)"
    assert trajectory.awareness is not None and trajectory.awareness.question == "tool"
    tool_question, info_question = requests[0], requests[1]
    assert "tools" not in tool_question or not tool_question["tools"]
    assert PRESETS["protocol"].part("awareness_question_tool") in tool_question["messages"][1]["content"]
    assert PRESETS["protocol"].part("awareness_question_info") in info_question["messages"][1]["content"]
    # the question lists what the agent is offered, each with its whole parameter schema
    task_tools = offered(requests[2])
    assert listed_functions(tool_question) == task_tools == listed_functions(info_question)
    assert set(task_tools) == {*scenario.tools, "Finish"}
    for name in scenario.tools:
        assert task_tools[name]["parameters"] == suite.toolbox.specs[name].parameters
    assert task_tools["Finish"]["parameters"]["required"] == ["final_answer"]
    # each reply without a call is followed by the reminder to call Finish
    for n, request in enumerate(requests[3:], start=1):
        assert request["messages"][-2] == {"role": "assistant", "content": f"Still thinking ({n})"}
        assert request["messages"][-1] == {"role": "user", "content": REMINDER}
    assert_nothing_generic(requests)


def test_finish_answers_and_interact_with_human_asks_the_person_only_when_input_is_required(suite: Suite) -> None:
    setting = SETTINGS["underspecified_aah"]
    scenario = first(suite, setting)
    left_out = posed(scenario, setting).metadata["masked"]
    script = [
        answer("IDK, a detail may be missing."),
        tool_calls((HUMAN_TOOL, {"requires_input": False, "input_text": "Just letting you know I started."})),
        tool_calls((HUMAN_TOOL, {"requires_input": "1", "input_text": f"Which {left_out['argument']} do you mean?"})),
        tool_calls(("Finish", {"final_answer": "Here is what I found."})),
    ]
    with scripted_server(script) as server:
        output = run(server.base_url, setting, scenario)
    requests = server.chat_requests
    assert len(requests) == 4
    question = listed_functions(requests[0])
    # under Ask-and-Help the paper's tool stands where ask_human would, with its last-resort warning
    assert HUMAN_TOOL in question and ASK_HUMAN not in question and "Finish" in question
    assert question[HUMAN_TOOL]["parameters"]["required"] == ["requires_input", "input_text"]
    assert "only when" in question[HUMAN_TOOL]["description"]
    assert offered(requests[1]) == question
    # requires_input false asked no one; "1" asked the scripted person, who gave the value the request left out
    not_asked, asked = requests[2]["messages"][-1], requests[3]["messages"][-1]
    assert not_asked["role"] == "tool" and AGENT.part("human_not_asked") in not_asked["content"]
    assert asked["role"] == "tool" and str(left_out["phrase"] or left_out["value"]) in asked["content"]
    (trajectory,), (result,) = output.trajectories, output.results
    assert trajectory.final_answer == "Here is what I found." and result.outcome == Outcome.scored
    assert trajectory.awareness is not None and trajectory.awareness.answer == "idk"
    assert result.details["asked_human"] is True
    assert_nothing_generic(requests)


def test_a_call_that_requires_no_input_is_no_interaction(suite: Suite) -> None:
    setting = SETTINGS["replaceable_aah"]
    scenario = first(suite, setting)
    script = [
        answer("yes"),
        tool_calls((HUMAN_TOOL, {"requires_input": "false", "input_text": "Nothing needed."})),
        tool_calls(("Finish", {"final_answer": "Done."})),
    ]
    with scripted_server(script) as server:
        output = run(server.base_url, setting, scenario)
    assert output.results[0].details["asked_human"] is False
    assert_nothing_generic(server.chat_requests)


def test_three_unreadable_awareness_replies_are_recorded_and_the_task_is_attempted(suite: Suite) -> None:
    setting = SETTINGS["non_replaceable"]
    scenario = first(suite, setting)
    # the authors' reader: "**No**" and "I don't know" start with none of yes / no / idk; "Nope" would read as no
    script = [answer("**No**"), answer("I don't know."), answer("Perhaps."), answer("Answer without a call.")]
    script += [tool_calls(("Finish", {"final_answer": "My best answer."}))]
    with scripted_server(script) as server:
        output = run(server.base_url, setting, scenario)
    requests = server.chat_requests
    assert len(requests) == 3 + 2
    # each unreadable reply is asked again, with the reminder to start with the answer
    assert requests[1]["messages"][-1] == {"role": "user", "content": AWARENESS_REMINDER}
    assert requests[2]["messages"][-2] == {"role": "assistant", "content": "I don't know."}
    (trajectory,) = output.trajectories
    assert trajectory.awareness is not None and trajectory.awareness.answer is None
    assert not trajectory.skipped and trajectory.final_answer == "My best answer."
    assert output.results[0].details["awareness"] is None
    # recorded as unreadable (not as "not asked"), and counted so in the cell
    assert output.results[0].details["awareness_unreadable"] is True
    summary = summarize(output.results)
    assert summary is not None
    [row] = summary.rows
    assert row.metrics.answers["unreadable"] == 1 and row.metrics.answers["none"] == 1
    assert "Unreadable" in summary.tables("s")[0].columns
    assert_nothing_generic(requests)


def test_a_no_skips_the_task_under_the_authors_reading(suite: Suite) -> None:
    setting = SETTINGS["non_replaceable"]
    with scripted_server([answer("No problem, I have every tool.")]) as server:
        output = run(server.base_url, setting, first(suite, setting))
    assert len(server.chat_requests) == 1  # "No problem" starts with no: the authors' reader skips the task
    assert output.trajectories[0].skipped and output.results[0].details["awareness"] == "no"


@pytest.mark.parametrize(
    ("value", "asks"),
    [(True, True), (1, True), ("1", True), ("true", True), ("True", True), (False, False), (0, False),
     ("0", False), ("false", False), ("yes", False), (None, False), (2, False)],
)  # fmt: skip
def test_the_agent_and_the_metrics_read_requires_input_alike(value: object, asks: bool) -> None:
    assert flag_set(value) is asks
    assert requires_input({"requires_input": value}) is asks


def test_other_presets_keep_their_loop() -> None:
    # the default agent still advises and offers the marker: only a preset with a finish tool changes the loop
    config = AgentConfig()
    assert config.reads_awareness == "robust" and config.offers_give_up and config.advises
    assert AgentConfig(prompt="failtalms").reads_awareness == "authors"
    assert AgentConfig(prompt="failtalms", awareness_reader="robust").reads_awareness == "robust"


def test_the_released_config_runs_the_same_protocol_on_queries_1_to_100(tmp_path: Path) -> None:
    raw = yaml.safe_load((CONFIGS / "failtalms-released.yaml").read_text(encoding="utf-8"))
    url = "http://127.0.0.2:9/v1"  # never called: loading only
    raw["models"][0] |= {"base_url": url, "model": "m"}
    raw["suites"][0] |= {"emulator": {"url": url, "name": "e"}, "judge": {"url": url, "name": "j"}}
    raw["suites"][0]["released"] = str((CONFIGS / raw["suites"][0]["released"]).resolve())
    for setting in raw["settings"]:
        if isinstance(setting, dict) and setting.get("ask_human"):
            setting["human_model"] = {"url": url, "name": "p"}
    path = tmp_path / "released.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    config = load_config(path)
    assert config.agent == SHIPPED.agent and config.agent.max_turns == 5
    assert [s.name for s in config.settings] == [s.name for s in SHIPPED.settings]
    assert config.suites[0].queries == "1-100"  # type: ignore[attr-defined]
    assert config.models[0].sampling["temperature"] == 1.0  # type: ignore[union-attr]
