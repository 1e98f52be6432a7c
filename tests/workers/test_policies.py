"""The built-in policies on the smoke suite, in process: the expected shape of the quickstart table."""

from __future__ import annotations

import pytest

from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import Outcome
from undertow.env_core.suites import Suite, SuiteRef
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import PolicyModel
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec, run_shard


def run_policy(ref: SuiteRef, suite: Suite, policy: str, setting: str, seed: int = 0) -> ShardOutput:
    episodes = [EpisodePlan(episode_id=f"{s.id}-{seed}", scenario_id=s.id, seed=seed) for s in suite.scenarios]
    shard = ShardSpec(
        shard_id=f"{policy}-{setting}",
        model=PolicyModel(name=policy),
        suite=ref,
        setting=PRESET_SETTINGS[setting],
        episodes=episodes,
    )
    return run_shard(shard)


@pytest.mark.parametrize("setting", ["clean", "first_tried", "transient", "removed", "unavailable"])
def test_oracle_solves_every_smoke_scenario(smoke_ref: SuiteRef, smoke: Suite, setting: str) -> None:
    output = run_policy(smoke_ref, smoke, "oracle", setting)
    unsolved = [(r.scenario_id, r.outcome, r.error) for r in output.results if not (r.solved and r.correct)]
    assert unsolved == []
    assert len(output.results) == len(smoke.scenarios) >= 30


def test_oracle_recovers_through_the_backup_plan_under_first_tried(smoke_ref: SuiteRef, smoke: Suite) -> None:
    output = run_policy(smoke_ref, smoke, "oracle", "first_tried")
    for trajectory in output.trajectories:
        steps = trajectory.tool_steps()
        first = steps[0]
        assert first.observation is not None and first.observation.fault is not None
        assert first.observation.fault.kind == "first_tried"
        assert "currently unavailable" in first.observation.error.message
        # The backup plan is tool-disjoint from the primary one and every call of it succeeded.
        assert all(s.observation.ok for s in steps[1:])
        assert first.action.tool_call.name not in {s.action.tool_call.name for s in steps[1:]}


def test_oracle_retries_transient_faults_then_succeeds(smoke_ref: SuiteRef, smoke: Suite) -> None:
    output = run_policy(smoke_ref, smoke, "oracle", "transient")
    for trajectory in output.trajectories:
        names = [s.action.tool_call.name for s in trajectory.tool_steps()]
        errors = [s.observation.error.type for s in trajectory.tool_steps() if not s.observation.ok]
        # the primary tool fails twice with 503, the oracle retries the same tool, the third call works
        assert names[:3] == [names[0]] * 3
        assert errors == ["service_unavailable", "service_unavailable"]


def test_nobody_solves_impossible_and_the_oracle_says_so(smoke_ref: SuiteRef, smoke: Suite) -> None:
    for policy in ("oracle", "naive", "random"):
        output = run_policy(smoke_ref, smoke, policy, "impossible")
        assert not any(r.solved for r in output.results), policy
        assert all(r.expected_give_up for r in output.results)
        gave_up = [r.gave_up for r in output.results]
        assert all(gave_up) if policy == "oracle" else not any(gave_up), policy
    oracle = run_policy(smoke_ref, smoke, "oracle", "impossible")
    assert all(r.correct and r.outcome == Outcome.scored for r in oracle.results)
    assert all(t.final_answer.startswith("CANNOT_SOLVE") for t in oracle.trajectories)


def test_naive_solves_clean_and_collapses_when_a_tool_fails(smoke_ref: SuiteRef, smoke: Suite) -> None:
    clean = run_policy(smoke_ref, smoke, "naive", "clean")
    assert all(r.solved for r in clean.results)
    for setting in ("first_tried", "transient", "unavailable"):
        faulted = run_policy(smoke_ref, smoke, "naive", setting)
        assert not any(r.solved for r in faulted.results), setting
        # it never tries a second tool: one call, then it passes the error on as its answer
        assert all(r.n_tool_calls == 1 for r in faulted.results), setting


def test_random_policy_is_deterministic_per_seed_and_rarely_right(smoke_ref: SuiteRef, smoke: Suite) -> None:
    def calls(output: ShardOutput) -> list[list[tuple[str, str]]]:
        return [
            [(s.action.tool_call.name, str(s.action.tool_call.arguments)) for s in t.tool_steps()]
            for t in output.trajectories
        ]

    first = run_policy(smoke_ref, smoke, "random", "clean", seed=0)
    again = run_policy(smoke_ref, smoke, "random", "clean", seed=0)
    other = run_policy(smoke_ref, smoke, "random", "clean", seed=1)
    assert calls(first) == calls(again)
    assert calls(first) != calls(other)
    assert sum(r.solved for r in first.results) < len(first.results) / 4


@pytest.mark.parametrize("setting", ["clean", "transient", "first_tried"])
def test_the_oracle_speaks_react_through_its_translator(smoke_ref: SuiteRef, smoke: Suite, setting: str) -> None:
    """Under agent.protocol react the policy's calls become Thought / Action text and each Observation comes back to
    it as the tool message it reads: retries and backup plans work as under function calling."""
    episodes = [EpisodePlan(episode_id=f"{s.id}-0", scenario_id=s.id, seed=0) for s in smoke.scenarios]
    shard = ShardSpec(
        shard_id=f"react-{setting}",
        model=PolicyModel(name="oracle"),
        suite=smoke_ref,
        setting=PRESET_SETTINGS[setting],
        agent=AgentConfig(protocol="react"),
        episodes=episodes,
    )
    output = run_shard(shard)
    assert [r.scenario_id for r in output.results if not r.correct] == []
    turn = output.trajectories[0].turns[0]
    assert turn.parse_stage == "react_action" and (turn.content or "").startswith("Thought:")
    assert "Final Answer:" in (output.trajectories[0].turns[-1].content or "")
