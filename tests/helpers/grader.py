"""A stub grader for judge tests: replies from a plan, one per ask, recording every chat and seed it was sent (the
``ask`` a family judge calls: ``scoring.judges.Ask``)."""

from __future__ import annotations

from undertow.scoring.judges import Message


class Grader:
    """Replies from ``replies`` in order; ``chats`` and ``seeds`` record what each ask sent."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.chats: list[list[Message]] = []
        self.seeds: list[int] = []

    async def __call__(self, messages: list[Message], seed: int) -> str:
        self.chats.append(messages)
        self.seeds.append(seed)
        return self.replies.pop(0)
