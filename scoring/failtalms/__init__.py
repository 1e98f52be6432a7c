"""Scoring for the ``failtalms`` family (FAIL-TaLMs): the pass-rate judge (:mod:`.judge`), the paper's metrics and
its Table 1 (:mod:`.metrics`), and here what one episode records and the family object."""

from __future__ import annotations

from typing import Any

from undertow.env_core.failtalms import build, prompts
from undertow.env_core.families import FamilyDefinition, FamilyMetrics, JudgeModel
from undertow.env_core.model import ASK_HUMAN, Scenario, Trajectory
from undertow.scoring.answers import Awareness
from undertow.scoring.failtalms.judge import (
    GRADER_PROMPT,
    GRADER_REMINDER,
    GRADER_SYSTEM,
    NO_ANSWER,
    NO_CALLS,
    grader_messages,
    judge,
    render_calls,
)
from undertow.scoring.failtalms.metrics import (
    FAMILY_NAME,
    KINDS,
    EpisodeFacts,
    FailTalmsRow,
    FailTalmsSummary,
    SettingMetrics,
    decimal,
    facts,
    pool,
    setting_kind,
    setting_metrics,
    summarize,
    summarize_failtalms,
    with_help,
)
from undertow.scoring.family_summary import StrictModel
from undertow.scoring.judges import Ask
from undertow.scoring.trajectory import score_trajectory

__all__ = [
    "FAMILY",
    "FAMILY_NAME",
    "GRADER_PROMPT",
    "GRADER_REMINDER",
    "GRADER_SYSTEM",
    "KINDS",
    "NO_ANSWER",
    "NO_CALLS",
    "EpisodeFacts",
    "FailTalmsDetails",
    "FailTalmsRow",
    "FailTalmsSummary",
    "SettingMetrics",
    "decimal",
    "episode_details",
    "facts",
    "grader_messages",
    "judge",
    "judge_episode",
    "pool",
    "render_calls",
    "setting_kind",
    "setting_metrics",
    "summarize",
    "summarize_failtalms",
    "with_help",
]


class FailTalmsDetails(StrictModel):
    """What :func:`episode_details` stores in ``EpisodeResult.details`` (a judge adds its verdict and votes)."""

    passed: bool | None
    emulated_calls: int
    awareness: Awareness | None
    asked_human: bool | None
    skipped: bool
    category: str | None


def episode_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: set[str]
) -> dict[str, Any]:
    """What the FAIL-TaLMs metrics need (:class:`FailTalmsDetails`): ``passed`` (the final answer states the gold
    facts: the offline library's deterministic check, the shared one; None for a scenario without gold, until
    :func:`judge_episode` decides), the awareness answer, whether the agent asked the person — None when the
    setting offered no one to ask (its name says Ask-and-Help) — and how many tool responses a helper model
    emulated."""
    asked = any(
        step.action.tool_call is not None and step.action.tool_call.name == ASK_HUMAN for step in trajectory.steps
    )
    emulated = sum(1 for step in trajectory.steps if step.observation is not None and step.observation.emulated)
    if scenario.gold.graded():
        passed: bool | None = bool(score_trajectory(trajectory, scenario, False).solved and not trajectory.skipped)
    else:
        passed = False if trajectory.skipped else None
    return {
        "passed": passed,
        "emulated_calls": emulated,
        "awareness": trajectory.awareness.answer if trajectory.awareness is not None else None,
        "asked_human": True if asked else (False if with_help(trajectory.setting) else None),
        "skipped": trajectory.skipped,
        "category": scenario.metadata.get("category"),
    }


VOTE_REPLY_KEPT = 400  # characters of each vote's reply kept in the episode's details


async def judge_episode(
    trajectory: Trajectory, scenario: Scenario, ask: Ask, config: JudgeModel
) -> dict[str, Any] | None:
    """The family's judge (``Family.judge``): a scenario without gold is graded by ``config.k`` votes of the grader
    model on the request as the agent got it, its final answer and its tool calls. Returns ``passed`` (None: no
    readable vote, a judge error) and every vote; None for a scenario with gold, and nothing to ask for a skipped
    one (it did not pass)."""
    if scenario.gold.graded() or trajectory.skipped:
        return None
    answer = trajectory.final_answer if not trajectory.gave_up else f"(gave up) {trajectory.final_answer or ''}"
    verdict = await judge(ask, scenario.task, answer, trajectory.steps, k=config.k, retries=config.retries)
    votes = [{"verdict": v.verdict, "attempts": v.attempts, "reply": v.reply[:VOTE_REPLY_KEPT]} for v in verdict.votes]
    return {"passed": verdict.passed, "judge_votes": votes, "judge_model": config.name}


FAMILY = FamilyDefinition.of(
    build,
    build.FailTalmsSuite,
    FamilyMetrics(episode_details, FailTalmsDetails, summarize, FailTalmsSummary),
    judge=judge_episode,
    import_field="released",
    prompt_presets=prompts.PRESETS,
    description="FAIL-TaLMs: an offline library of deterministic tools and requests, run under the shared "
    "under-specified / unavailable-tool / no-tool settings with awareness questions and Ask-and-Help",
)
