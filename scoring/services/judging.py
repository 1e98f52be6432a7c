"""A judge model for the services checkpoints, chosen in the suite config (``judge: {url, name, k}``): instead of the
rules and MiniLM of :mod:`.concepts`, a grader model decides whether the text after each checkpoint's trigger
states each concept, by the majority of ``k`` votes (:func:`undertow.scoring.judges.ask_votes`).

It is an option: the default matching needs no model and meets the corpus targets (README, Concept matching). The
family's ``judge`` hook runs after the episode was scored with the default matching and returns the episode's
details scored again with the judge's checkpoint results, with every vote, and the episode's new score
(``EPISODE_SCORE``), which the runner applies. The abstention statement of Appendix B and the failure labels keep
the rule-based matching.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from undertow.env_core.families import JudgeModel
from undertow.env_core.model import Outcome, Scenario, Trajectory
from undertow.scoring.judges import Ask, Message, ask_votes
from undertow.scoring.services.concepts import judge_question, read_yes_no
from undertow.scoring.services.failure_modes import episode_details
from undertow.scoring.services.rubrics import chosen_rubric, episode_score, score_rubric, synonyms_of
from undertow.scoring.trajectory import EPISODE_SCORE, text_after

SYSTEM = "You check answers against a requirement and reply with one word: yes or no."
REMINDER = "Reply with one word: yes or no."


def concept_messages(concept: str, text: str, synonyms: list[str]) -> list[Message]:
    """The chat asking whether ``text`` states ``concept``."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": judge_question(concept, text, synonyms)}]


async def judge_episode(
    trajectory: Trajectory, scenario: Scenario, ask: Ask, config: JudgeModel
) -> dict[str, Any] | None:
    """The family's ``judge`` hook: every checkpoint concept asked ``config.k`` times; a checkpoint passes when the
    majority of the readable votes says yes for each of its concepts (a concept with no readable vote fails). None
    when the episode did not finish or the scenario has no checkpoint."""
    gold = scenario.gold
    if trajectory.outcome != Outcome.scored or not gold.checkpoints:
        return None
    passes: list[bool] = []
    votes: list[dict[str, Any]] = []
    for index, checkpoint in enumerate(gold.checkpoints):
        text = text_after(trajectory, checkpoint.trigger, checkpoint.within)
        passed = bool(text.strip())
        for concept in checkpoint.expect:
            if not passed:
                break
            messages = concept_messages(concept, text, synonyms_of(gold.synonyms, concept))
            verdict = await ask_votes(ask, messages, read_yes_no, REMINDER, config.k, config.retries)
            passed = verdict.passed is True
            votes.append({"checkpoint": index, "concept": concept, **verdict.model_dump(mode="json")})
        passes.append(passed)
    details = episode_details(trajectory, scenario, correct=False, searched=False, first_tried=(), passes=passes)
    score = episode_score(trajectory, score_rubric(trajectory, scenario, chosen_rubric(trajectory), passes=passes))
    return {**details, "concept_votes": votes, EPISODE_SCORE: asdict(score)}
