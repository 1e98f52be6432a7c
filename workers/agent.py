"""The function-calling agent loop (OpenAI ``tools`` API): model reply -> tool calls -> observations, until an
answer, a give-up, or the turn budget."""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from pydantic import Field

from env_core.environment import Environment
from env_core.model import Action, Outcome, Step, Strict, Trajectory, Turn
from workers.clients import ModelClient, ModelError

GIVE_UP_MARKER = "CANNOT_SOLVE"

SYSTEM_PROMPT = (
    "You solve the user's task by calling the tools you are given. Tools can fail; read their errors and adapt: "
    "retry errors that say to retry, and look for another way when a tool is unavailable. When you have the "
    "answer, reply without a tool call and give the records the tools returned, as JSON. If the task cannot be "
    f"completed with the tools available, reply with a message that starts with {GIVE_UP_MARKER}: and the reason."
)


class AgentConfig(Strict):
    protocol: Literal["function_calling"] = "function_calling"
    max_turns: int = Field(default=12, ge=1, description="model replies per episode before budget_exhausted")
    max_parse_errors: int = Field(
        default=3, ge=1, description="consecutive unparseable replies before the episode ends as parse_error"
    )
    system_prompt: str = SYSTEM_PROMPT


def _assistant_message(content: str | None, calls: list[Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.unparsed_arguments or _json(c.arguments)},
            }
            for c in calls
        ]
    return message


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


async def run_agent(env: Environment, client: ModelClient, config: AgentConfig, trajectory: Trajectory) -> Trajectory:
    """Play one episode into ``trajectory``. ``InfraError`` from the client propagates: the caller records it."""
    start = env.reset()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": config.system_prompt},
        {"role": "user", "content": start.task},
    ]
    parse_failures = 0
    for index in range(config.max_turns):
        tools = [spec.openai() for spec in env.tools()]
        started = time.perf_counter()
        try:
            reply = await client.complete(messages, tools)
        except ModelError as exc:
            trajectory.outcome, trajectory.error = Outcome.model_error, str(exc)
            return trajectory
        trajectory.turns.append(
            Turn(
                index=index,
                content=reply.content,
                latency_ms=(time.perf_counter() - started) * 1000.0,
                usage=reply.usage,
                finish_reason=reply.finish_reason,
            )
        )
        if reply.tool_calls:
            messages.append(_assistant_message(reply.content, reply.tool_calls))
            for call in reply.tool_calls:
                action = Action(kind="tool_call", tool_call=call)
                observation = env.step(action)
                assert observation is not None
                trajectory.steps.append(Step(turn=index, action=action, observation=observation))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": observation.content()})
            if all(c.unparsed_arguments is not None for c in reply.tool_calls):
                parse_failures += 1
                if parse_failures >= config.max_parse_errors:
                    trajectory.outcome = Outcome.parse_error
                    trajectory.error = f"{parse_failures} consecutive replies with unparseable tool arguments"
                    return trajectory
            else:
                parse_failures = 0
            continue
        content = (reply.content or "").strip()
        if reply.finish_reason == "length":
            trajectory.outcome, trajectory.error = Outcome.model_error, "reply truncated at the token limit"
            return trajectory
        if not content:
            trajectory.outcome, trajectory.error = Outcome.model_error, "empty reply (no text, no tool call)"
            return trajectory
        gave_up = content.startswith(GIVE_UP_MARKER)
        action = Action(kind="give_up" if gave_up else "final_answer", content=content)
        env.step(action)
        trajectory.steps.append(Step(turn=index, action=action))
        trajectory.final_answer = content
        trajectory.gave_up = gave_up
        trajectory.outcome = Outcome.scored
        return trajectory
    trajectory.outcome = Outcome.budget_exhausted
    trajectory.error = f"no answer after {config.max_turns} turns"
    return trajectory
