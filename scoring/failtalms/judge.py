"""The FAIL-TaLMs judges: the pass-rate grader (§3.4.1, appendix C.1) and the No-tools pairwise comparison.

:func:`judge`: a grader model sees the query as posed, the final answer and the tool calls with their responses, and
must open with Pass or Fail. It asks ``k`` votes (the authors' code: 3, at temperature 1.0, each with its own seed); a
vote whose reply reads as neither is asked again (with a reminder) up to ``retries`` times, then counts as a judge
error, never a pass. The readable votes decide by majority, a tie fails, and a verdict with no readable vote is None.
How a reply reads is the ``reader``: the authors' (its first characters) or undertow's robust one.

:func:`compare`: the No-tools answer, once it passed, set against the same model's Perfect answer to the same query;
the grader opens with Win, Tie or Lose (the first answer against the second), recorded as the authors' ``win_rate``
(2, 1, 0). Its prompt is ours: the paper prints none for it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from undertow.env_core.failtalms.judge_config import FailTalmsJudge
from undertow.env_core.families import JudgeModel
from undertow.env_core.faults import mask_of
from undertow.env_core.model import Scenario, Step, Trajectory
from undertow.scoring.answers import ComparisonWord, Reader, VerdictWord, parse_comparison, parse_verdict
from undertow.scoring.failtalms.metrics import setting_kind
from undertow.scoring.judges import Ask, Message, Verdict, ask_until_read, ask_votes

GRADER_SYSTEM = (
    "You grade the work of an assistant that can call tools. You are shown what the user asked, the assistant's "
    "final answer, and every tool call the assistant made with the response it got back. Decide from the answer, "
    "read against those responses, whether the user's request was actually fulfilled. The first word of your "
    "reply must be Pass or Fail; you may explain after it."
)

GRADER_PROMPT = """Here is one finished task to grade.

User's request:
{query}

Assistant's final answer:
{answer}

Tool calls the assistant made, each with its response:
{calls}

Does the final answer fulfil the user's request? Start your reply with Pass or Fail."""

GRADER_REMINDER = (
    "Your reply did not start with a verdict. Answer again, and make Pass or Fail the very first word of the reply."
)

NO_CALLS = "(the assistant called no tool)"
NO_ANSWER = "(the assistant gave no final answer)"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def render_calls(calls: Sequence[Step | Mapping[str, Any]]) -> str:
    """The tool calls as the grader reads them, one numbered line each: ``1. name({"a": 1}) -> response``.
    Takes trajectory steps (their tool calls, with the observation the model saw) or mappings with ``name`` (or
    ``tool``), ``arguments`` and ``response`` (or ``result`` / ``error``)."""
    lines: list[str] = []
    for call in calls:
        if isinstance(call, Step):
            if call.action.tool_call is None:  # answers and code blocks are not calls; their calls are own steps
                continue
            name, arguments = call.action.tool_call.name, call.action.tool_call.arguments
            response = call.observation.content() if call.observation is not None else "(no response)"
        else:
            name = str(call.get("name") or call.get("tool") or "?")
            arguments = call.get("arguments", {})
            found = next((call[key] for key in ("response", "result", "error") if key in call), "(no response)")
            response = found if isinstance(found, str) else _json(found)
        lines.append(f"{len(lines) + 1}. {name}({_json(arguments)}) -> {response}")
    return "\n".join(lines) if lines else NO_CALLS


def grader_messages(query: str, answer: str | None, calls: Sequence[Step | Mapping[str, Any]]) -> list[Message]:
    """The chat that asks for one vote."""
    prompt = GRADER_PROMPT.format(
        query=query, answer=answer if answer and answer.strip() else NO_ANSWER, calls=render_calls(calls)
    )
    return [{"role": "system", "content": GRADER_SYSTEM}, {"role": "user", "content": prompt}]


async def judge(
    ask: Ask,
    query: str,
    answer: str | None,
    calls: Sequence[Step | Mapping[str, Any]],
    k: int = 3,
    retries: int = 3,
    reader: Reader = "authors",
) -> Verdict:
    """Grade one episode with ``k`` votes of a grader model (``scoring.judges.ask_votes``): ``ask`` sends a chat
    with the vote's number, which seeds its sampling, and returns the reply text; a vote whose reply ``reader``
    reads as neither Pass nor Fail is re-asked up to ``retries`` times, then counted as a judge error. The defaults
    are the authors' (3 votes, 3 re-asks, their reader); the paper's prose says 5 votes."""

    def read(reply: str) -> VerdictWord | None:
        return parse_verdict(reply, reader)

    return await ask_votes(ask, grader_messages(query, answer, calls), read, GRADER_REMINDER, k, retries)


# ---------------------------------------------------------------------------------------------------------------
# The No-tools pairwise comparison

COMPARE_SYSTEM = (
    "You compare two answers to the same user request. Judge which one serves the user better: is it correct, "
    "does it address everything that was asked, and does it give the concrete information the user needs? Length "
    "and polish alone do not make an answer better. The first word of your reply must be Win, Tie or Lose, said of "
    "the first answer against the second; you may explain after it."
)

COMPARE_PROMPT = """User's request:
{query}

First answer:
{answer}

Second answer:
{reference}

Is the first answer better than the second (Win), about as good (Tie), or worse (Lose)? Start your reply with Win, \
Tie or Lose."""

COMPARE_REMINDER = (
    "Your reply did not start with a judgement. Answer again, and make Win, Tie or Lose the very first word of the "
    "reply (said of the first answer)."
)

# the authors' scale for ``win_rate``: the No-tools answer against the Perfect one
WIN_RATE: dict[ComparisonWord, int] = {"lose": 0, "tie": 1, "win": 2}


class Comparison(BaseModel):
    """One pairwise comparison: its last reply, how it read (None: never readable), how many times it was asked,
    and the authors' ``win_rate`` (0 lose, 1 tie, 2 win; None when unreadable)."""

    model_config = ConfigDict(extra="forbid")

    reply: str
    result: Literal["win", "tie", "lose"] | None
    attempts: int

    @property
    def win_rate(self) -> int | None:
        return WIN_RATE[self.result] if self.result is not None else None


def compare_messages(query: str, answer: str | None, reference: str | None) -> list[Message]:
    """The chat that compares ``answer`` (the No-tools one, first) with ``reference`` (the Perfect one, second)."""
    prompt = COMPARE_PROMPT.format(
        query=query,
        answer=answer if answer and answer.strip() else NO_ANSWER,
        reference=reference if reference and reference.strip() else NO_ANSWER,
    )
    return [{"role": "system", "content": COMPARE_SYSTEM}, {"role": "user", "content": prompt}]


async def compare(
    ask: Ask, query: str, answer: str | None, reference: str | None, retries: int = 3, reader: Reader = "authors"
) -> Comparison:
    """Compare a No-tools ``answer`` with the same model's Perfect ``reference`` to the same ``query``: one grader
    reply (seed 0, as the authors drew one comparison), re-asked up to ``retries`` times while ``reader`` finds no
    Win / Tie / Lose at its start."""

    def read(reply: str) -> ComparisonWord | None:
        return parse_comparison(reply, reader)

    result: ComparisonWord | None
    reply, result, attempts = await ask_until_read(
        ask, compare_messages(query, answer, reference), read, COMPARE_REMINDER, retries, 0
    )
    return Comparison(reply=reply, result=result, attempts=attempts)


# ---------------------------------------------------------------------------------------------------------------
# One episode: the family's judge hook (``scoring.failtalms.judge_episode``) runs this

# where the No-tools scenario the judge is given carries the same model's Perfect answer to the same query: set by
# whoever pairs the two episodes (None as its value: the Perfect episode gave no answer, which is compared as such)
PERFECT_ANSWER = "perfect_answer"
PERFECT_SCENARIO = "perfect_scenario"  # and the scenario of that Perfect episode, which the metrics join on
REPLY_KEPT = 400  # characters of each grader reply kept in the episode's details


def perfect_pair(scenario: Scenario, scenarios: Sequence[Scenario]) -> Scenario | None:
    """The scenario whose Perfect episode (of the same model) a No-tools episode of ``scenario`` is compared with:
    a released No-tools query is its own scenario, linked by text to the Perfect query it repeats (its metadata's
    ``intended``, else its own text; the first of a repeated text); an offline library request runs No-tools as a
    setting of itself. None when no Perfect query has that text."""
    if scenario.condition != "no_tools":
        return scenario
    text = scenario.metadata.get("intended", scenario.task)
    return next((s for s in scenarios if s.condition == "none" and s.task == text), None)


def with_perfect_answer(scenario: Scenario, answer: str | None, perfect: str) -> Scenario:
    """``scenario`` carrying the same model's Perfect answer to it (given by the episode of scenario ``perfect``), as
    :func:`judge_trajectory` reads it."""
    return scenario.model_copy(
        update={"metadata": {**scenario.metadata, PERFECT_ANSWER: answer, PERFECT_SCENARIO: perfect}}
    )


def posed_query(trajectory: Trajectory, scenario: Scenario) -> str:
    """The request as the agent was asked it: a scenario of the offline library run under an under-specified
    setting is posed with its mask's text (a released scenario, or a library one already in its condition, carries
    the posed text itself)."""
    if scenario.condition is None and setting_kind(trajectory.setting) == "underspecified":
        mask = mask_of(scenario)
        if mask is not None:
            return mask.task
    return scenario.task


def no_tools(trajectory: Trajectory, scenario: Scenario) -> bool:
    """Whether the episode ran FAIL-TaLMs' No-tools setting (the scenario's own condition, or the setting's)."""
    return scenario.condition == "no_tools" or setting_kind(trajectory.setting) == "no_tools"


async def judge_trajectory(trajectory: Trajectory, scenario: Scenario, ask: Ask, config: JudgeModel) -> dict[str, Any]:
    """Grade one finished, not skipped episode as the authors did: ``config.k`` votes on the request as posed, the
    final answer (marked when the agent gave up) and its tool calls, read by ``config.reader`` (a
    :class:`FailTalmsJudge`; the authors' reader for a plain judge). Returns ``passed`` (None: no readable vote),
    ``pr_by``, every vote, the judge's name and reader. A No-tools episode that passed is then compared with the
    same model's Perfect answer (``scenario.metadata[PERFECT_ANSWER]``): ``win_rate`` 0 lose / 1 tie / 2 win, with
    the reply; None when it failed, when no Perfect answer was paired with it (``paired`` False), or when the
    comparison never read as one."""
    reader: Reader = config.reader if isinstance(config, FailTalmsJudge) else "authors"
    answer = trajectory.final_answer if not trajectory.gave_up else f"(gave up) {trajectory.final_answer or ''}"
    query = posed_query(trajectory, scenario)
    verdict = await judge(ask, query, answer, trajectory.steps, k=config.k, retries=config.retries, reader=reader)
    votes = [{"verdict": v.verdict, "attempts": v.attempts, "reply": v.reply[:REPLY_KEPT]} for v in verdict.votes]
    details: dict[str, Any] = {
        "passed": verdict.passed,
        "pr_by": "judge",
        "judge_votes": votes,
        "judge_model": config.name,
        "judge_reader": reader,
    }
    if not no_tools(trajectory, scenario):
        return details
    paired = PERFECT_ANSWER in scenario.metadata
    details |= {"win_rate": None, "paired": paired, "perfect_scenario": scenario.metadata.get(PERFECT_SCENARIO)}
    if verdict.passed is not True or not paired:  # the authors compare only an answer that passed
        return details
    reference = scenario.metadata[PERFECT_ANSWER]
    found = await compare(ask, query, answer, reference if isinstance(reference, str) else None, config.retries, reader)
    return details | {"win_rate": found.win_rate, "win_reply": found.reply[:REPLY_KEPT], "win_attempts": found.attempts}
