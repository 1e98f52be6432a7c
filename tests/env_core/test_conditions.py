"""FAIL-TaLMs' settings as transformations of any family's scenarios (here the smoke suite's): a request that leaves a
value out, a needed tool taken away (one a person could stand in for, or not), no tools; the scripted person of
Ask-and-Help; the awareness question before an episode; and what the plan leaves out, said at plan time."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from undertow.cluster.config import load_config
from undertow.cluster.plan import plan_sweep
from undertow.env_core.errors import ConfigError
from undertow.env_core.faults import PRESET_SETTINGS, Setting, condition_removes, not_applicable, posed, resolve_faults
from undertow.env_core.model import ASK_HUMAN, Action, Mask, Scenario, ToolCall, Trajectory
from undertow.env_core.simulated import HUMAN_DECLINES, STAND_IN_REPLY
from undertow.env_core.suites import Suite, SuiteRef
from undertow.scoring.trajectory import score_trajectory
from undertow.workers.agent import AgentConfig, ask_awareness, run_agent
from undertow.workers.clients import PolicyModel
from undertow.workers.policies import make_policy
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec, run_shard


def first(smoke: Suite) -> Scenario:
    return smoke.by_id["smoke-reports-01"]


def with_flags(scenario: Scenario, replaceable: bool) -> Scenario:
    tool = scenario.gold.plans[0][0].tool
    return scenario.model_copy(update={"replaceable": {tool: replaceable}})


def run(ref: SuiteRef, smoke: Suite, setting: Setting, policy: str = "oracle", limit: int = 6) -> ShardOutput:
    scenarios = [s for s in smoke.scenarios if not_applicable(s, setting) is None][:limit]
    shard = ShardSpec(
        shard_id=f"{policy}-{setting.name}",
        model=PolicyModel(name=policy),
        suite=ref,
        setting=setting,
        episodes=[EpisodePlan(episode_id=s.id, scenario_id=s.id, seed=0) for s in scenarios],
    )
    return run_shard(shard)


def test_underspecified_leaves_the_value_out_and_keeps_it_hidden(smoke: Suite) -> None:
    scenario = first(smoke)
    asked = posed(scenario, PRESET_SETTINGS["underspecified"])
    assert "Noor" not in asked.task and "a certain first name" in asked.task
    assert asked.metadata["masked"] == {
        "tool": "reports_with_salary_by_manager_name",
        "argument": "first_name",
        "value": "Noor",
        "phrase": "Noor",
    }
    assert asked.gold == scenario.gold  # scoring keeps the full request's gold
    # a hand-written mask comes first
    mask = Mask(task="Who reports to the manager?", tool="t", argument="first_name", value="Noor")
    handwritten = scenario.model_copy(update={"masks": [mask]})
    assert posed(handwritten, PRESET_SETTINGS["underspecified"]).task == "Who reports to the manager?"


def test_unavailable_settings_remove_the_tool_of_the_wanted_kind(smoke: Suite) -> None:
    scenario = first(smoke)
    tool = scenario.gold.plans[0][0].tool
    assert not_applicable(scenario, PRESET_SETTINGS["replaceable"]) == (
        "no gold tool flagged as one a person could stand in for"
    )
    replaceable = with_flags(scenario, True)
    assert condition_removes(replaceable, "replaceable") == [tool]
    assert condition_removes(replaceable, "non_replaceable") == []
    faults = resolve_faults(replaceable, PRESET_SETTINGS["replaceable"])
    assert [(f.kind, f.targets) for f in faults] == [("removed", [tool])]
    env = smoke.environment(replaceable, 0, PRESET_SETTINGS["replaceable"])
    env.reset()
    assert tool not in {t.name for t in env.tools()}
    hard = with_flags(scenario, False)
    assert condition_removes(hard, "non_replaceable") == [tool]


def test_no_tools_takes_every_tool_away(smoke: Suite) -> None:
    scenario = first(smoke)
    env = smoke.environment(scenario, 0, PRESET_SETTINGS["no_tools"])
    env.reset()
    assert env.tools() == []


def test_the_scripted_person_answers_only_what_was_left_out(smoke: Suite) -> None:
    setting = Setting(name="underspecified_aah", condition="underspecified", ask_human=True)
    env = smoke.environment(posed(first(smoke), setting), 0, setting)
    env.reset()
    assert ASK_HUMAN in {t.name for t in env.tools()}

    def ask(question: str) -> str:
        call = ToolCall(id="q", name=ASK_HUMAN, arguments={"question": question})
        observation = env.step(Action(kind="tool_call", tool_call=call))
        assert observation is not None and observation.ok
        return observation.result["reply"]

    assert ask("Which first name do you mean?") == "Noor"
    assert ask("What is the manager's first name?") == "Noor"
    assert ask("Can you compute the salaries for me?") == HUMAN_DECLINES
    assert ask("What is the weather like?") == HUMAN_DECLINES


def test_the_oracle_asks_when_it_can_and_declines_when_it_cannot(smoke_ref: SuiteRef, smoke: Suite) -> None:
    allowed = Setting(name="underspecified_aah", condition="underspecified", ask_human=True, awareness="info")
    output = run(smoke_ref, smoke, allowed)
    assert output.results and all(r.solved and r.correct for r in output.results)
    for trajectory in output.trajectories:
        # a detail is missing, and the person can give it: IDK (aware), then it asks
        assert trajectory.awareness is not None and trajectory.awareness.answer == "idk"
        assert trajectory.tool_steps()[0].action.tool_call.name == ASK_HUMAN  # type: ignore[union-attr]
    alone = run(smoke_ref, smoke, PRESET_SETTINGS["underspecified"])
    assert all(t.skipped and t.awareness.answer == "no" for t in alone.trajectories)  # type: ignore[union-attr]
    assert all(not r.solved for r in alone.results)


def test_the_oracle_reports_no_where_no_tool_can_solve_the_task(smoke_ref: SuiteRef, smoke: Suite) -> None:
    setting = Setting(name="no_tools_aware", condition="no_tools", awareness="tool")
    output = run(smoke_ref, smoke, setting)
    assert all(t.awareness.answer == "no" and t.skipped for t in output.trajectories)  # type: ignore[union-attr]
    assert all(r.gave_up and r.correct for r in output.results)  # the task cannot be done: declining is right
    perfect = run(smoke_ref, smoke, PRESET_SETTINGS["perfect"])
    assert all(t.awareness.answer == "yes" for t in perfect.trajectories)  # type: ignore[union-attr]
    assert all(r.solved for r in perfect.results)


def test_the_naive_policy_guesses_instead_of_asking(smoke_ref: SuiteRef, smoke: Suite) -> None:
    allowed = Setting(name="underspecified_aah", condition="underspecified", ask_human=True, awareness="info")
    output = run(smoke_ref, smoke, allowed, "naive")
    assert all(t.awareness.answer == "yes" for t in output.trajectories)  # type: ignore[union-attr]
    steps = [t.tool_steps()[0].action.tool_call for t in output.trajectories]
    assert all(c.name != ASK_HUMAN and "unknown" in c.arguments.values() for c in steps)  # type: ignore[union-attr]
    assert not any(r.solved for r in output.results)


def test_the_plan_says_what_a_condition_leaves_out(tmp_path: Path) -> None:
    config = {"name": "conditions", "models": ["oracle"], "suites": ["smoke"], "settings": ["replaceable"]}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError) as excinfo:
        plan_sweep(load_config(path))
    assert "setting 'replaceable' (replaceable) applies to no scenario of suite 'smoke'" in str(excinfo.value)
    config["settings"] = ["perfect", "underspecified"]
    path.write_text(yaml.safe_dump(config))
    manifest = plan_sweep(load_config(path))
    assert manifest.n_episodes == 2 * 35  # every smoke scenario states a gold value word for word


def test_the_scripted_person_does_a_replaceable_tools_work_by_hand_and_nothing_else(smoke: Suite) -> None:
    scenario = first(smoke)
    tool = scenario.gold.plans[0][0].tool
    arguments = dict(scenario.gold.plans[0][0].arguments)
    for replaceable in (True, False):
        condition = "replaceable" if replaceable else "non_replaceable"
        setting = Setting(name=f"{condition}_aah", condition=condition, ask_human=True)
        env = smoke.environment(with_flags(scenario, replaceable), 0, setting)
        env.reset()
        assert tool not in {t.name for t in env.tools()}

        def ask(question: str) -> str:
            call = ToolCall(id="q", name=ASK_HUMAN, arguments={"question": question})
            observation = env.step(Action(kind="tool_call", tool_call=call))  # noqa: B023 - used at once
            assert observation is not None and observation.ok
            return observation.result["reply"]

        by_hand = ask(f"Could you do the work of {tool} for me by hand?")
        spoken = ask(f"Could you run {tool.replace('_', ' ')} for me?")
        if replaceable:
            expected = smoke.toolbox.execute(smoke.toolbox.new_state(), smoke.toolbox.specs[tool], arguments)
            assert by_hand == STAND_IN_REPLY.format(json.dumps(expected, ensure_ascii=False, default=str))
            assert spoken == by_hand
        else:
            assert by_hand == spoken == HUMAN_DECLINES
        assert ask("Could you book me a flight?") == HUMAN_DECLINES


def test_the_oracle_has_the_person_stand_in_for_a_replaceable_tool(smoke_ref: SuiteRef, smoke: Suite) -> None:
    flagged = [with_flags(s, True) for s in smoke.scenarios if s.gold.plans][:4]
    suite = smoke
    setting = Setting(name="replaceable_aah", condition="replaceable", ask_human=True, awareness="tool")
    for scenario in flagged:
        env = suite.environment(scenario, 0, setting)
        client = make_policy("oracle", scenario, 0)
        trajectory = Trajectory(episode_id="e", scenario_id=scenario.id, model="oracle", setting=setting.name, seed=0)
        if asyncio.run(ask_awareness(env, client, "tool", trajectory)):
            asyncio.run(run_agent(env, client, AgentConfig(), trajectory))
        # a tool is missing that a person could do: IDK (aware), then the person does its part
        assert trajectory.awareness is not None and trajectory.awareness.answer == "idk"
        asked = [s.action.tool_call for s in trajectory.tool_steps() if s.action.tool_call.name == ASK_HUMAN]  # type: ignore[union-attr]
        assert asked and scenario.gold.plans[0][0].tool in asked[0].arguments["question"]  # type: ignore[union-attr]
        assert score_trajectory(trajectory, scenario, False).solved
    alone = run(smoke_ref, smoke, PRESET_SETTINGS["replaceable"])
    assert all(r.gave_up or not r.solved for r in alone.results)


def test_a_scenario_already_in_a_condition_runs_under_that_condition_only_untransformed(smoke: Suite) -> None:
    scenario = first(smoke).model_copy(update={"condition": "underspecified", "masks": []})
    assert not_applicable(scenario, PRESET_SETTINGS["underspecified"]) is None
    assert "already in condition underspecified" in str(not_applicable(scenario, PRESET_SETTINGS["perfect"]))
    assert "already in condition" in str(not_applicable(scenario, PRESET_SETTINGS["no_tools"]))
    assert posed(scenario, PRESET_SETTINGS["underspecified"]).task == scenario.task
    flagged = with_flags(scenario, True).model_copy(update={"condition": "replaceable"})
    assert not any(f.kind == "removed" for f in resolve_faults(flagged, PRESET_SETTINGS["replaceable"]))
    perfect = first(smoke).model_copy(update={"condition": "none"})
    assert not_applicable(perfect, PRESET_SETTINGS["perfect"]) is None
    assert not_applicable(perfect, PRESET_SETTINGS["underspecified"]) is not None
