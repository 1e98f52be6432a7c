"""The FAIL-TaLMs pass-rate judge (§3.4.1, appendix C.1): a grader model sees the query, the final answer and the
tool calls with their responses, and must open with Pass or Fail. :func:`judge` asks ``k`` independent votes; a vote
whose reply opens with neither is asked again (with a reminder) up to ``retries`` times, then counts as a judge error,
never a pass. The readable votes decide by majority, a tie fails, and a verdict with no readable vote is None."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from undertow.env_core.model import Step
from undertow.scoring.answers import parse_verdict
from undertow.scoring.judges import Ask, Message, Verdict, ask_votes

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
    k: int = 5,
    retries: int = 1,
) -> Verdict:
    """Grade one episode with ``k`` votes of a grader model (``scoring.judges.ask_votes``): ``ask`` sends a chat
    with the vote's number, which seeds its sampling, and returns the reply text; a vote whose reply opens with
    neither Pass nor Fail is re-asked up to ``retries`` times, then counted as a judge error."""
    return await ask_votes(ask, grader_messages(query, answer, calls), parse_verdict, GRADER_REMINDER, k, retries)
