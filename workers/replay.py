"""Replaying an episode from its recorded model replies.

Every turn of a trajectory keeps the reply as received and the hashes of the request and the response. Since an
episode is pure given its inputs and the model's replies, feeding the recorded replies back must reproduce the
trajectory and the score exactly; each request is checked against its recorded hash on the way.
"""

from __future__ import annotations

from typing import Any

from undertow.env_core.errors import ModelError
from undertow.env_core.model import Outcome, Trajectory
from undertow.workers.clients import ChatReply, ModelClient
from undertow.workers.turns import request_hash


class ReplayMismatch(Exception):
    """The replayed episode asked for something the recording does not have: it diverged."""


class ReplayClient(ModelClient):
    def __init__(self, recorded: Trajectory):
        self.recorded = recorded
        self.position = 0

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        turns = self.recorded.turns
        if self.position >= len(turns):
            if self.recorded.outcome == Outcome.model_error and self.recorded.error:
                raise ModelError(self.recorded.error)  # the recorded episode ended on a refused request
            raise ReplayMismatch(f"the replay asks for reply {self.position + 1}; {len(turns)} were recorded")
        turn = turns[self.position]
        if turn.request_sha256 and request_hash(messages, tools) != turn.request_sha256:
            raise ReplayMismatch(f"request {self.position + 1} differs from the recorded one")
        self.position += 1
        return ChatReply(
            content=turn.content,
            tool_calls=[call.model_copy() for call in turn.tool_calls],
            finish_reason=turn.finish_reason,
            usage=turn.usage,
        )


_VOLATILE = {"latency_ms", "duration_ms"}


def stable(value: Any) -> Any:
    """A dump without wall-clock fields, for comparing a replay with its recording."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def first_difference(a: Any, b: Any, path: str = "", names: tuple[str, str] = ("recorded", "replayed")) -> str | None:
    """Where two dumps first differ (a dotted path, with both values named by ``names``), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(dict.fromkeys([*a, *b])):
            found = first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else key, names)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items {names[0]}, {len(b)} {names[1]}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]", names)
            if found:
                return found
        return None
    return None if a == b else f"{path}: {names[0]} {a!r}, {names[1]} {b!r}"
