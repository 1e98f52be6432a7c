"""The episode runner: one episode, or one shard of episodes run concurrently against one model.

Every planned episode comes back as exactly one ``EpisodeResult`` with an outcome class, plus its trajectory. A
failure of the endpoint is ``infra_error``; an exception inside the harness is also ``infra_error`` (with the
traceback's last line), so that a bug never shows up as a model failure and never loses a row.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import Field

from undertow.env_core.environment import Environment
from undertow.env_core.errors import Category, InfraError, UndertowError, classify, describe, last_frames
from undertow.env_core.families import get_family
from undertow.env_core.faults import Setting, expects_give_up, posed
from undertow.env_core.model import EpisodeResult, HelperModel, Outcome, Scenario, Strict, ToolSpec, Trajectory
from undertow.env_core.sandbox import SandboxConfig
from undertow.env_core.search import Searcher
from undertow.env_core.suites import Suite, SuiteRef, load_ref
from undertow.env_core.untrusted import capped
from undertow.retrieval.index import RetrievalConfig
from undertow.retrieval.service import searcher_for
from undertow.scoring.answers import UnscorableAnswer
from undertow.scoring.trajectory import EPISODE_SCORE, score_trajectory
from undertow.workers.agent import PROTOCOLS, AgentConfig, ask_awareness
from undertow.workers.clients import HelperClient, ModelClient, ModelConfig, OpenAIChatClient, PolicyModel, ServedModel
from undertow.workers.docgen import document_suite
from undertow.workers.finishing import FinishingPolicy, finishes
from undertow.workers.policies import CodeActPolicy, DecoupledPolicy, DirectPolicy, ReActPolicy, make_policy


class EpisodePlan(Strict):
    episode_id: str
    scenario_id: str
    seed: int


class ShardSpec(Strict):
    """A unit of work: episodes of one model × suite × setting. Immutable once planned."""

    shard_id: str
    model: ModelConfig
    suite: SuiteRef
    setting: Setting
    agent: AgentConfig = Field(default_factory=AgentConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    episodes: list[EpisodePlan]
    # filled by the scheduler just before the shard runs (never planned): for each episode whose judge reads another
    # episode's answer (``Family.pairs_with``), that episode's final answer, None when it gave none
    # episode id -> (the paired episode's scenario id, its final answer): filled when the shard is about to run
    paired_answers: dict[str, tuple[str, str | None]] = Field(default_factory=dict)


@dataclass
class ShardOutput:
    shard_id: str
    results: list[EpisodeResult]
    trajectories: list[Trajectory]
    wall_s: float


# How an episode that raised ends, by the category of what it raised (env_core.errors)
OUTCOME_OF = {
    Category.config: Outcome.config_error,
    Category.data: Outcome.config_error,
    Category.model: Outcome.model_error,
    Category.infrastructure: Outcome.infra_error,
    Category.sandbox: Outcome.infra_error,
    Category.violation: Outcome.sandbox_violation,
}

WORKER = f"{socket.gethostname()}:{os.getpid()}"  # which process ran an episode, for placement checks


def _result(
    shard: ShardSpec, suite: Suite | None, plan: EpisodePlan, trajectory: Trajectory, wall_ms: float
) -> EpisodeResult:
    """One result row. ``suite`` None: the suite could not be loaded (family and cluster then come from the plan)."""
    scenario = suite.by_id.get(plan.scenario_id) if suite is not None else None
    tool_steps = trajectory.tool_steps()
    # in function calling a turn has a parse stage only when its calls were read from its text
    text_calls_possible = episode_agent(shard).protocol == "function_calling" and shard.model.served
    return EpisodeResult(
        episode_id=plan.episode_id,
        shard_id=shard.shard_id,
        model=shard.model.name,
        suite=shard.suite.label,
        family=suite.family if suite is not None else shard.suite.family or "",
        setting=shard.setting.name,
        seed=plan.seed,
        scenario_id=plan.scenario_id,
        cluster_id=(scenario.variant_of if scenario is not None else None) or plan.scenario_id,
        outcome=trajectory.outcome,
        n_turns=len(trajectory.turns),
        n_tool_calls=len(tool_steps),
        n_tool_errors=sum(1 for s in tool_steps if s.observation is not None and not s.observation.ok),
        faults_fired=sum(1 for s in tool_steps if s.observation is not None and s.observation.fault is not None),
        prompt_tokens=sum(t.usage.prompt_tokens for t in trajectory.turns),
        completion_tokens=sum(t.usage.completion_tokens for t in trajectory.turns),
        cached_tokens=sum(t.usage.cached_tokens for t in trajectory.turns),
        n_parse_failures=sum(t.parse_error is not None for t in trajectory.turns),
        n_text_calls=sum(t.parse_stage is not None for t in trajectory.turns) if text_calls_possible else 0,
        wall_ms=wall_ms,
        model_ms=sum(t.latency_ms for t in trajectory.turns),
        tool_ms=sum(s.observation.latency_ms for s in tool_steps if s.observation is not None),
        error=trajectory.error,
        error_trace=trajectory.error_trace,
        worker=WORKER,
        answers=shard.suite.answers,
        access_mode=shard.suite.access.mode,
        access_functions=shard.suite.access.functions,
        access_distractors=shard.suite.access.distractors,
    )


@dataclass
class Helpers:
    """A shard's helper models (``undertow.env_core.model.HelperModel``), None where its config names none."""

    emulator: HelperClient | None = None
    person: HelperClient | None = None
    judge: HelperClient | None = None

    @classmethod
    def of(cls, shard: ShardSpec) -> Helpers:
        def client(config: HelperModel | None) -> HelperClient | None:
            return HelperClient(config) if config is not None else None

        human = shard.setting.human_model if shard.setting.ask_human else None
        return cls(client(shard.suite.emulator), client(human), client(shard.suite.judge))

    def close(self) -> None:
        for client in (self.emulator, self.person, self.judge):
            if client is not None:
                client.close()


# per text protocol, what speaks it for a built-in policy: made from the policy and the episode's tool list
POLICY_TRANSLATORS: dict[str, Callable[[ModelClient, Callable[[], list[ToolSpec]]], ModelClient]] = {
    "codeact": CodeActPolicy,
    "react": ReActPolicy,
    "direct": DirectPolicy,
    "decoupled": DecoupledPolicy,
}


def episode_agent(shard: ShardSpec) -> AgentConfig:
    """The agent settings an episode runs under: the sweep's, with what the suite decides (its protocol, as a
    Live API-Bench mode) and the setting's harness layer (Failing Tools, Table 2: part of the condition, so it
    travels with the setting). cluster.plan validated the combination before anything ran."""
    update = dict(shard.suite.agent_overrides())
    if shard.setting.harness != "none":
        update["harness"] = shard.setting.harness
    return shard.agent.model_validate({**shard.agent.model_dump(), **update}) if update else shard.agent


async def run_episode(
    shard: ShardSpec,
    suite: Suite,
    scenario: Scenario,
    plan: EpisodePlan,
    shared_client: ModelClient | None,
    searcher: Searcher | None = None,
    helpers: Helpers | None = None,
) -> tuple[EpisodeResult, Trajectory]:
    """Run one planned episode to its end and score it: its result row and trajectory, always, in exactly one
    outcome class. The scenario is posed under the shard's setting; built-in policies get a translator to the
    protocol's text; whatever the agent loop raises becomes the outcome its category names (a harness bug is
    ``infra_error``, never the model's); scoring runs inside the same handling (``score_episode``); a family with a
    judge has it grade the episode afterwards, with the paired episode's answer (``shard.paired_answers``) attached
    to the scenario it is shown where the family pairs episodes."""
    started = time.perf_counter()
    helpers = helpers or Helpers()
    # the agent is asked the posed task (with its hint under a hinted setting); gold and scoring use the scenario
    env = suite.environment(
        posed(scenario, shard.setting),
        plan.seed,
        shard.setting,
        shard.suite.access,
        searcher,
        emulator=helpers.emulator,
        person=helpers.person,
    )
    trajectory = Trajectory(
        episode_id=plan.episode_id,
        scenario_id=scenario.id,
        model=shard.model.name,
        setting=shard.setting.name,
        seed=plan.seed,
        faults=env.faults,
    )
    try:
        model = shard.model
        agent = episode_agent(shard)
        protocol = agent.protocol
        translator = None
        if isinstance(model, PolicyModel):
            # built-in policies see the scenario (as posed when its request leaves a value out: its metadata says
            # which) and speak function calling; under a text protocol a translator speaks for them
            seen = env.scenario if "masked" in env.scenario.metadata else scenario
            client = shared_client or make_policy(model.policy or model.name, seen, plan.seed, model.latency_s)
            # a client handed in for a policy is a replay of what the agent loop received: already in the protocol
            translator = POLICY_TRANSLATORS.get(protocol) if shared_client is None else None
            if shared_client is None and agent.preset is not None and finishes(agent.preset):
                client = FinishingPolicy(client, agent.preset)  # a finish-tool preset (awareness question too)
        elif shared_client is not None:
            client = shared_client
        else:
            raise InfraError(f"model '{model.name}' (kind '{model.kind}') has no client")
        awareness = shard.setting.awareness
        if awareness == "none" or await ask_awareness(env, client, awareness, trajectory, agent):
            if translator is not None:
                client = translator(client, env.tools)
            await PROTOCOLS[protocol](env, client, agent, trajectory, shard.sandbox)
            trajectory.answer_result = env.answer_result
    except Exception as exc:  # nothing may lose the row; a harness bug is never charged to the model
        trajectory.outcome = OUTCOME_OF[classify(exc)]
        trajectory.error = describe(exc) if isinstance(exc, UndertowError) else f"harness error: {describe(exc)}"
        trajectory.error_trace = last_frames(exc)
    finally:
        env.close()
    result = _result(shard, suite, plan, trajectory, (time.perf_counter() - started) * 1000.0)
    if trajectory.outcome.judged:
        try:
            result = score_episode(shard, suite, scenario, env, trajectory, result)
        except Exception as exc:  # a scorer that fails on something else is a harness bug: this episode only
            trajectory.outcome = Outcome.infra_error
            trajectory.error = f"scorer error: {describe(exc)}"
            trajectory.error_trace = last_frames(exc)
            return _result(shard, suite, plan, trajectory, (time.perf_counter() - started) * 1000.0), trajectory
        family = get_family(suite.family, shard.suite.family_ref)
        judge = family.judge
        if judge is not None and helpers.judge is not None and shard.suite.judge is not None:
            try:
                judged = scenario
                if plan.episode_id in shard.paired_answers and family.attach_pair is not None:
                    # the judge reads the paired episode's answer (the same model's, run and committed before)
                    paired_scenario, answer = shard.paired_answers[plan.episode_id]
                    judged = family.attach_pair(scenario, answer, paired_scenario)
                verdict = await judge(trajectory, judged, helpers.judge.ask, shard.suite.judge)
            except Exception as exc:  # the judge's endpoint failed: nothing is known about the model
                trajectory.outcome = OUTCOME_OF[classify(exc)]
                if trajectory.outcome.judged:  # a judge that cannot run is never the model's failure
                    trajectory.outcome = Outcome.infra_error
                trajectory.error = f"judge: {describe(exc)}"
                trajectory.error_trace = last_frames(exc)
                wall_ms = (time.perf_counter() - started) * 1000.0
                return _result(shard, suite, plan, trajectory, wall_ms), trajectory
            verdict = dict(verdict or {})
            rescored = verdict.pop(EPISODE_SCORE, None)  # a judge that scored the episode again
            result = updated(result, **(rescored or {}), details={**result.details, **verdict})
    return result, trajectory


def updated(result: EpisodeResult, **fields: Any) -> EpisodeResult:
    """``result`` with ``fields`` changed, validated: family details may quote the model, and only validation
    cleans them (``model_copy`` would not)."""
    return EpisodeResult.model_validate({**dict(result), **fields})


# What a scorer raises when the answer itself is the problem: too deep, too large for the interpreter or memory
UNSCORABLE = (UnscorableAnswer, RecursionError, OverflowError, MemoryError)


def score_episode(
    shard: ShardSpec, suite: Suite, scenario: Scenario, env: Environment, trajectory: Trajectory, result: EpisodeResult
) -> EpisodeResult:
    """``result`` with the family's score and details. An answer that cannot be compared with gold is a wrong
    answer: the episode is scored as if it had given none (safety, required calls and checkpoints still count) and
    its details say ``unscorable_answer``, with why and the answer's first characters. Never retried: the model's."""
    first_tried = env.first_tried_tools()
    expected = expects_give_up(scenario, env.faults, first_tried)
    family = get_family(suite.family, shard.suite.family_ref)
    scorer = family.score or score_trajectory
    searched = shard.suite.access.mode == "open"

    def score(judged: Trajectory) -> EpisodeResult:
        scored = scorer(judged, scenario, expected, answers=shard.suite.answers)
        details = family.episode_details(
            judged, scenario, correct=scored.correct, searched=searched, first_tried=first_tried
        )
        if family.details_model is not None:  # stored as the family declares it, or the scorer's error
            details = family.details_model.model_validate(details).model_dump(mode="json")
        return updated(result, expected_give_up=expected, **asdict(scored), details=details)

    try:
        return score(trajectory)
    except UNSCORABLE as exc:
        why = describe(exc) if isinstance(exc, UnscorableAnswer) else type(exc).__name__
        answer = trajectory.final_answer if trajectory.final_answer is not None else repr(trajectory.answer_result)
        unanswered = trajectory.model_copy(update={"final_answer": None, "answer_result": None, "gave_up": False})
        scored = score(unanswered)
        unscorable = {"unscorable_answer": {"why": why, "answer": capped(answer, 200)}}
        return updated(scored, details={**scored.details, **unscorable})


async def run_shard_async(shard: ShardSpec) -> ShardOutput:
    started = time.perf_counter()
    suite = load_ref(shard.suite, document_suite)
    shared = OpenAIChatClient(shard.model) if isinstance(shard.model, ServedModel) else None
    limit = asyncio.Semaphore(shard.model.concurrency)
    searcher = shard_searcher(shard, suite)
    helpers = Helpers.of(shard)

    async def one(plan: EpisodePlan) -> tuple[EpisodeResult, Trajectory]:
        async with limit:
            return await run_episode(shard, suite, suite.by_id[plan.scenario_id], plan, shared, searcher, helpers)

    try:
        pairs = await asyncio.gather(*(one(p) for p in shard.episodes))
    finally:
        helpers.close()
        if shared is not None:
            await shared.aclose()
    return ShardOutput(
        shard_id=shard.shard_id,
        results=[r for r, _ in pairs],
        trajectories=[t for _, t in pairs],
        wall_s=time.perf_counter() - started,
    )


def shard_searcher(shard: ShardSpec, suite: Suite) -> Searcher | None:
    """The retrieval index behind ``search_tools`` for an open-world shard (None: closed, or built-in lexical)."""
    access = shard.suite.access
    if access.mode == "open" and access.search != "lexical":
        return searcher_for(list(suite.toolbox.specs.values()), access.search, shard.retrieval)
    return None


def run_shard(shard: ShardSpec) -> ShardOutput:
    """Run a shard to completion in this process (what a Ray worker calls)."""
    return asyncio.run(run_shard_async(shard))


def infra_error_shard(
    shard: ShardSpec, reason: str, outcome: Outcome = Outcome.infra_error, trace: str | None = None
) -> ShardOutput:
    """Record every episode of a shard as ``infra_error`` (endpoint down, worker lost), or as ``config_error`` when
    the shard cannot run for a reason that will not change (its suite is gone), without running it."""
    try:
        suite: Suite | None = load_ref(shard.suite, document_suite)
    except Exception:  # the reason may be the suite itself: the rows are still recorded
        suite = None
    results, trajectories = [], []
    for plan in shard.episodes:
        trajectory = Trajectory(
            episode_id=plan.episode_id,
            scenario_id=plan.scenario_id,
            model=shard.model.name,
            setting=shard.setting.name,
            seed=plan.seed,
            outcome=outcome,
            error=reason,
            error_trace=trace,
        )
        results.append(_result(shard, suite, plan, trajectory, 0.0))
        trajectories.append(trajectory)
    return ShardOutput(shard_id=shard.shard_id, results=results, trajectories=trajectories, wall_s=0.0)
