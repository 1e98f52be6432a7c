"""One step of an episode, recorded: a model turn (the request's and the reply's identity kept for replay), a tool
call and its observation, the answer that ends it. Shared by every agent loop (``workers.agent`` and the finish-tool
loop of ``workers.finishing``)."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from undertow.env_core.environment import Environment
from undertow.env_core.errors import ModelError
from undertow.env_core.model import Action, Observation, Outcome, Step, ToolCall, Trajectory, Turn
from undertow.env_core.plans import GIVE_UP_MARKER
from undertow.env_core.untrusted import clean_value
from undertow.workers.clients import ChatReply, ModelClient


def assistant_message(content: str | None, calls: list[Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.unparsed_arguments or as_json(c.arguments)},
            }
            for c in calls
        ]
    return message


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


async def model_turn(
    client: ModelClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]], index: int, trajectory: Trajectory
) -> ChatReply | None:
    """Ask the model for its next reply and record the turn; None (outcome model_error recorded) if it failed."""
    try:
        request_sha256 = request_hash(messages, tools)
    except UnicodeEncodeError:  # model text that came back raw (a cell's output): cleaned as the trajectory's is
        messages[:] = clean_value(messages)
        request_sha256 = request_hash(messages, tools)
    started = time.perf_counter()
    try:
        reply = await client.complete(messages, tools)
    except ModelError as exc:
        trajectory.outcome, trajectory.error = Outcome.model_error, str(exc)
        return None
    latency = (time.perf_counter() - started) * 1000.0
    turn = Turn(
        index=index,
        content=reply.content,
        tool_calls=reply.tool_calls,
        latency_ms=latency,
        usage=reply.usage,
        finish_reason=reply.finish_reason,
        request_sha256=request_sha256,
    )
    turn.response_sha256 = response_hash(turn)
    trajectory.turns.append(turn)
    return reply


def request_hash(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """Identity of a model request: replaying an episode must send exactly the same requests."""
    text = json.dumps({"messages": messages, "tools": tools}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def response_hash(turn: Turn) -> str:
    reply = {
        "content": turn.content,
        "tool_calls": [c.model_dump() for c in turn.tool_calls],
        "finish_reason": turn.finish_reason,
    }
    return hashlib.sha256(json.dumps(reply, sort_keys=True, default=str).encode()).hexdigest()


def finish_episode(
    env: Environment, trajectory: Trajectory, index: int, content: str, gave_up: bool = False
) -> Trajectory:
    """End the episode with an answer, or a give-up (``gave_up``, or text that starts with the marker)."""
    gave_up = gave_up or content.startswith(GIVE_UP_MARKER)
    action = Action(kind="give_up" if gave_up else "final_answer", content=content)
    env.step(action)
    trajectory.steps.append(Step(turn=index, action=action))
    trajectory.final_answer, trajectory.gave_up, trajectory.outcome = content, gave_up, Outcome.scored
    return trajectory


async def call_tool(env: Environment, trajectory: Trajectory, index: int, call: ToolCall) -> Observation:
    action = Action(kind="tool_call", tool_call=call)
    observation = await env.astep(action)
    assert observation is not None
    trajectory.steps.append(Step(turn=index, action=action, observation=observation))
    return observation
