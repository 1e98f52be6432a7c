"""Scoring for the ``failtalms`` family (FAIL-TaLMs): the pass-rate judge (:mod:`.judge`), the paper's metrics and
its Table 1 (:mod:`.metrics`), and here what one episode records and the family object."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from undertow.env_core.failtalms import build, prompts
from undertow.env_core.failtalms.judge_config import FailTalmsFolder
from undertow.env_core.families import FamilyDefinition, FamilyMetrics, JudgeModel, SuiteConfig
from undertow.env_core.faults import Setting
from undertow.env_core.model import ASK_HUMAN, Scenario, ToolCall, Trajectory
from undertow.env_core.reference import ImportedResults
from undertow.scoring.answers import Awareness
from undertow.scoring.failtalms import reference
from undertow.scoring.failtalms.judge import (
    COMPARE_PROMPT,
    COMPARE_REMINDER,
    COMPARE_SYSTEM,
    GRADER_PROMPT,
    GRADER_REMINDER,
    GRADER_SYSTEM,
    NO_ANSWER,
    NO_CALLS,
    PERFECT_ANSWER,
    PERFECT_SCENARIO,
    Comparison,
    compare,
    compare_messages,
    grader_messages,
    judge,
    judge_trajectory,
    perfect_pair,
    render_calls,
    with_perfect_answer,
)
from undertow.scoring.failtalms.metrics import (
    FAMILY_NAME,
    KINDS,
    READINGS,
    EpisodeFacts,
    FailTalmsRow,
    FailTalmsSummary,
    Reading,
    SettingMetrics,
    counted_awareness,
    decimal,
    facts,
    layout,
    layout_prose,
    mean_row,
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
    "COMPARE_PROMPT",
    "COMPARE_REMINDER",
    "COMPARE_SYSTEM",
    "FAMILY",
    "FAMILY_NAME",
    "GRADER_PROMPT",
    "GRADER_REMINDER",
    "GRADER_SYSTEM",
    "KINDS",
    "NO_ANSWER",
    "NO_CALLS",
    "PERFECT_ANSWER",
    "PERFECT_SCENARIO",
    "READINGS",
    "Comparison",
    "EpisodeFacts",
    "FailTalmsDetails",
    "FailTalmsRow",
    "FailTalmsSummary",
    "Reading",
    "SettingMetrics",
    "compare",
    "compare_messages",
    "counted_awareness",
    "decimal",
    "episode_details",
    "facts",
    "grader_messages",
    "judge",
    "judge_episode",
    "judge_trajectory",
    "layout",
    "layout_prose",
    "mean_row",
    "pairs_with",
    "perfect_pair",
    "perfect_setting",
    "render_calls",
    "setting_kind",
    "setting_metrics",
    "summarize",
    "summarize_failtalms",
    "with_help",
    "with_perfect_answer",
]


class FailTalmsDetails(StrictModel):
    """What :func:`episode_details` stores in ``EpisodeResult.details`` (a judge adds its verdict and votes)."""

    passed: bool | None
    # what decided ``passed``: the gold match (the offline library's default) or the suite's judge (which decides
    # wherever one is configured, gold or not; it sets "judge"); None: a skipped episode, or one awaiting the judge
    pr_by: Literal["gold", "judge"] | None = None
    emulated_calls: int
    awareness: Awareness | None
    asked_human: bool | None
    skipped: bool
    category: str | None
    # what the metrics also read where it is known (reference runs record all of them; scoring.failtalms.metrics):
    # the answers to the tool and the information awareness questions, No-tools' pairwise comparison with the same
    # model's Perfect answer (0 lose, 1 tie, 2 win) and that answer's verdict or scenario, and whether the episode
    # was imported from the authors' released outputs (``imported_from``: where, as ``file[index]``)
    tool_awareness: Awareness | None = None
    info_awareness: Awareness | None = None
    win_rate: int | None = None
    perfect_passed: bool | None = None
    perfect_scenario: str | None = None
    # asked, and no reply opened with yes / no / idk in the attempts the protocol allows: the authors labelled those
    # by hand; undertow records them, counts them per cell (Unreadable) and lets the episode attempt the task
    awareness_unreadable: bool = False
    imported: bool = False
    imported_from: str | None = None


def episode_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: set[str]
) -> dict[str, Any]:
    """What the FAIL-TaLMs metrics need (:class:`FailTalmsDetails`): ``passed`` (the final answer states the gold
    facts: the offline library's deterministic check, the shared one, named by ``pr_by: "gold"``; None for a
    scenario without gold; a configured judge then decides, see :func:`judge_episode`), the awareness answer,
    whether the agent asked the person — None when the setting offered no one to ask (its name says Ask-and-Help) —
    and how many tool responses a helper model emulated."""
    asked = any(_asks_person(step.action.tool_call) for step in trajectory.steps)
    emulated = sum(1 for step in trajectory.steps if step.observation is not None and step.observation.emulated)
    if scenario.gold.graded():
        passed: bool | None = bool(score_trajectory(trajectory, scenario, False).solved and not trajectory.skipped)
    else:
        passed = False if trajectory.skipped else None
    return {
        "passed": passed,
        "pr_by": "gold" if scenario.gold.graded() and not trajectory.skipped else None,
        "emulated_calls": emulated,
        "awareness": trajectory.awareness.answer if trajectory.awareness is not None else None,
        # the same answer under the question it answered, as the metrics read both (scoring.failtalms.metrics)
        "tool_awareness": _answer_to(trajectory, "tool"),
        "info_awareness": _answer_to(trajectory, "info"),
        "awareness_unreadable": trajectory.awareness is not None and trajectory.awareness.answer is None,
        "asked_human": True if asked else (False if with_help(trajectory.setting) else None),
        "skipped": trajectory.skipped,
        "category": scenario.metadata.get("category"),
    }


def _answer_to(trajectory: Trajectory, question: str) -> Awareness | None:
    found = trajectory.awareness
    return found.answer if found is not None and found.question == question else None


def import_outputs(config: SuiteConfig, results: Path) -> ImportedResults:
    """``Family.import_results``: the authors' released outputs as a reference run (:mod:`.reference`)."""
    return reference.import_results(config, results, FailTalmsDetails)


def _asks_person(call: ToolCall | None) -> bool:
    """A call that asks the person: ``ask_human``, or the paper's ``interact_with_human`` with ``requires_input``
    set (the authors counted an interaction only then)."""
    if call is None:
        return False
    return call.name == ASK_HUMAN or (call.name == prompts.HUMAN_TOOL and prompts.requires_input(call.arguments))


async def judge_episode(
    trajectory: Trajectory, scenario: Scenario, ask: Ask, config: JudgeModel
) -> dict[str, Any] | None:
    """The family's judge (``Family.judge``, run wherever the suite configures one): ``config.k`` votes of the grader
    model on the request as the agent got it, its final answer and its tool calls decide ``passed``, for a scenario
    with gold too (the gold match is the default only where no judge is configured). Returns ``passed`` (None: no
    readable vote, a judge error), ``pr_by: "judge"`` and every vote; nothing to ask for a skipped episode (it did
    not pass). A No-tools episode that passed also gets ``win_rate`` (see
    :func:`~undertow.scoring.failtalms.judge.judge_trajectory`)."""
    if trajectory.skipped:
        return None
    # the authors' judge (3 votes at temperature 1.0, their reader, by default) and, for a No-tools episode that
    # passed, the pairwise comparison with the same model's Perfect answer: ``win_rate`` (scoring.failtalms.judge)
    return await judge_trajectory(trajectory, scenario, ask, config)


def perfect_setting(settings: Sequence[Setting]) -> Setting | None:
    """The sweep's Perfect setting (the whole request, every tool, no one to ask), as the planner's check reads
    it: the first named as Perfect, else the first of that kind; None when the sweep has none."""
    found = [s for s in settings if build.is_perfect(s)]
    return next((s for s in found if setting_kind(s.name) == "perfect"), found[0] if found else None)


def pairs_with(
    scenario: Scenario, scenarios: Sequence[Scenario], setting: Setting, settings: Sequence[Setting]
) -> tuple[str, str] | None:
    """``Family.pairs_with``: a No-tools episode (its setting's condition) is judged against the same model's
    Perfect answer to the query it repeats (:func:`perfect_pair`: a released No-tools query the Perfect query of its
    text, a library request itself), under the sweep's :func:`perfect_setting`; every other episode is paired with
    none, as is one whose query has no Perfect counterpart."""
    if setting.condition != "no_tools":
        return None
    perfect = perfect_setting(settings)
    paired = perfect_pair(scenario, scenarios)
    return (paired.id, perfect.name) if perfect is not None and paired is not None else None


FAMILY = FamilyDefinition.of(
    build,
    build.FailTalmsSuite,
    FamilyMetrics(episode_details, FailTalmsDetails, summarize, FailTalmsSummary),
    judge=judge_episode,
    folder_config=FailTalmsFolder,
    import_field="released",
    layouts={"failtalms": layout, "failtalms_prose": layout_prose},
    import_results=import_outputs,
    adapt=build.adapt,
    plan_check=build.plan_check,
    pairs_with=pairs_with,
    attach_pair=with_perfect_answer,
    prompt_presets=prompts.PRESETS,
    description="FAIL-TaLMs: an offline library of deterministic tools and requests, run under the shared "
    "under-specified / unavailable-tool / no-tool settings with awareness questions and Ask-and-Help",
)
