"""Judges with majority votes: a grader model asked ``k`` times, each vote read as pass, fail or unreadable.

Shared by the families whose episodes a model grades where there is no gold (a family's ``judge`` hook, run with
the suite's ``judge`` helper model). A family brings its grader prompt and how a reply reads; :func:`ask_votes`
asks the votes — each with its own seed, so the votes differ and a rerun repeats them, and each re-asked with a
reminder while its reply opens with no verdict — and :func:`decide` takes the majority of the readable ones.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

Message = dict[str, str]
# a grader model: a chat and the vote's number (its sampling seed) in, the reply's text out
Ask = Callable[[list[Message], int], Awaitable[str]]
# how a reply reads: "pass", "fail", or None when it opens with neither
Read = Callable[[str], Literal["pass", "fail"] | None]
_Label = TypeVar("_Label")


class Vote(BaseModel):
    """One grader vote: the last reply it gave, how that reply read (``error``: it never opened with a verdict)
    and how many times it was asked."""

    model_config = ConfigDict(extra="forbid")

    reply: str
    verdict: Literal["pass", "fail", "error"]
    attempts: int


class Verdict(BaseModel):
    """The judge's decision on one episode with the votes behind it; ``passed`` None when no vote was readable."""

    model_config = ConfigDict(extra="forbid")

    passed: bool | None
    votes: list[Vote]

    @property
    def errors(self) -> int:
        return sum(v.verdict == "error" for v in self.votes)


def decide(votes: Sequence[Vote]) -> bool | None:
    """Majority of the readable votes (a tie fails: a pass needs more passes than fails); None without one."""
    passes = sum(v.verdict == "pass" for v in votes)
    fails = sum(v.verdict == "fail" for v in votes)
    if passes + fails == 0:
        return None
    return passes > fails


async def ask_until_read(
    ask: Ask, messages: list[Message], read: Callable[[str], _Label | None], reminder: str, retries: int, seed: int
) -> tuple[str, _Label | None, int]:
    """Ask one chat with ``seed`` until ``read`` finds an answer in the reply, re-asking up to ``retries`` times
    with ``reminder``: the last reply, what it read as (None: never readable) and how many times it was asked. A
    re-ask keeps the unreadable reply in the conversation, so the reminder refers to it (and the request differs:
    a cached or seeded endpoint would give the same reply to the same request)."""
    chat = list(messages)
    reply = ""
    for attempt in range(1, retries + 2):
        reply = await ask(list(chat), seed)
        found = read(reply)
        if found is not None:
            return reply, found, attempt
        chat += [{"role": "assistant", "content": reply or ""}, {"role": "user", "content": reminder}]
    return reply or "", None, retries + 1


async def _vote(ask: Ask, messages: list[Message], read: Read, reminder: str, retries: int, seed: int) -> Vote:
    verdict: Literal["pass", "fail"] | None
    reply, verdict, attempts = await ask_until_read(ask, messages, read, reminder, retries, seed)
    return Vote(reply=reply, verdict="error" if verdict is None else verdict, attempts=attempts)


async def ask_votes(
    ask: Ask, messages: list[Message], read: Read, reminder: str, k: int = 5, retries: int = 1
) -> Verdict:
    """``k`` votes on one chat, one after another, each re-asked up to ``retries`` times (with ``reminder``) while
    ``read`` finds no verdict in its reply, then counted as an error — never a pass. Vote ``i`` is sampled with
    seed ``i``: the votes differ only when the grader samples (a temperature above 0; at 0 they are one vote
    repeated), and a rerun repeats them. An exception from ``ask`` (the grader's endpoint failing) is the caller's
    to handle: it says nothing about the graded model."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if retries < 0:
        raise ValueError(f"retries must be at least 0, got {retries}")
    votes = [await _vote(ask, messages, read, reminder, retries, seed) for seed in range(k)]
    return Verdict(passed=decide(votes), votes=votes)
