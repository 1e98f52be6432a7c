"""The function-calling agent loop (OpenAI ``tools`` API): model reply -> tool calls -> observations, until an
answer, a give-up, or the turn budget."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any, Literal

from pydantic import Field

from env_core.environment import Environment
from env_core.model import Action, Observation, Outcome, Step, Strict, ToolCall, ToolError, ToolSpec, Trajectory, Turn
from env_core.sandbox import FunctionStub, Kernel, ToolReply, python_name
from workers.clients import ChatReply, ModelClient, ModelError

GIVE_UP_MARKER = "CANNOT_SOLVE"

SYSTEM_PROMPT = (
    "You solve the user's task by calling the tools you are given. Tools can fail; read their errors and adapt: "
    "retry errors that say to retry, and look for another way when a tool is unavailable. When you have the "
    "answer, reply without a tool call and give the records the tools returned, as JSON. If the task cannot be "
    f"completed with the tools available, reply with a message that starts with {GIVE_UP_MARKER}: and the reason."
)


CODEACT_PROMPT = (
    "You solve the user's task with a Python environment in which tool functions are defined. Each turn, first "
    "think step by step inside <thought>...</thought>. Then either run code inside <execute>...</execute> and read "
    "its output in the next message, or, when you have the answer, assign it to a variable named `solution` inside "
    "<solution>...</solution> (for example <solution>solution = rows</solution>). Tools return lists of records "
    "(JSON objects); print results to see them. Tools can fail: read the error and adapt, retry errors that say to "
    "retry, and look for another way when a function is unavailable. Your solution should keep the values and "
    "original keys the tools returned. If the task cannot be completed with the tools available, reply with a "
    f"message that starts with {GIVE_UP_MARKER}: and the reason.\n\nAvailable functions:\n"
)


class AgentConfig(Strict):
    protocol: Literal["function_calling", "codeact"] = Field(
        default="function_calling",
        description="native tool calls, or CodeAct (<execute> code in a sandboxed kernel); policies always use "
        "function calling",
    )
    max_turns: int = Field(default=12, ge=1, description="model replies per episode before budget_exhausted")
    max_parse_errors: int = Field(
        default=3, ge=1, description="consecutive unparseable replies before the episode ends as parse_error"
    )
    system_prompt: str = SYSTEM_PROMPT
    codeact_prompt: str = CODEACT_PROMPT
    step_timeout_s: float = Field(default=10.0, gt=0, description="codeact: wall-clock limit of one <execute>")
    memory_mb: int = Field(default=1024, ge=64, description="codeact: address-space limit of the kernel")


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


async def _model_turn(
    client: ModelClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]], index: int, trajectory: Trajectory
) -> ChatReply | None:
    """Ask the model for its next reply and record the turn; None (outcome model_error recorded) if it failed."""
    started = time.perf_counter()
    try:
        reply = await client.complete(messages, tools)
    except ModelError as exc:
        trajectory.outcome, trajectory.error = Outcome.model_error, str(exc)
        return None
    latency = (time.perf_counter() - started) * 1000.0
    turn = Turn(
        index=index, content=reply.content, latency_ms=latency, usage=reply.usage, finish_reason=reply.finish_reason
    )
    trajectory.turns.append(turn)
    return reply


async def run_agent(env: Environment, client: ModelClient, config: AgentConfig, trajectory: Trajectory) -> Trajectory:
    """Play one episode into ``trajectory``. ``InfraError`` from the client propagates: the caller records it."""
    start = env.reset()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": config.system_prompt},
        {"role": "user", "content": start.task},
    ]
    parse_failures = 0
    for index in range(config.max_turns):
        reply = await _model_turn(client, messages, [spec.openai() for spec in env.tools()], index, trajectory)
        if reply is None:
            return trajectory
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


_BLOCK = re.compile(r"<(execute|solution)>(.*?)</\1>", re.DOTALL)
_FENCE = re.compile(r"^\s*```(?:python|py)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def parse_codeact(text: str) -> tuple[str, str]:
    """("execute" | "solution", code) for the first block of a reply, ("give_up", text), or ("none", "")."""
    match = _BLOCK.search(text)
    if match is not None:
        code = match.group(2)
        fenced = _FENCE.match(code)
        return match.group(1), (fenced.group(1) if fenced else code).strip("\n")
    if text.strip().startswith(GIVE_UP_MARKER):
        return "give_up", text.strip()
    return "none", ""


def _signature(spec: ToolSpec) -> str:
    arguments = ", ".join(
        f"{name}: {schema.get('type', 'any')}" for name, schema in spec.parameters.get("properties", {}).items()
    )
    return f"- {python_name(spec.name)}({arguments}): {spec.description}"


async def run_codeact(env: Environment, client: ModelClient, config: AgentConfig, trajectory: Trajectory) -> Trajectory:
    """CodeAct (HoHW appendix E): the model writes Python run in a persistent kernel in another process, where each
    visible tool is a function. Every function call goes back through the environment (faults, validation, trace).
    ``SandboxError`` (the kernel cannot start) propagates: the runner records it as ``infra_error``."""
    start = env.reset()
    index = 0

    def call_tool(name: str, arguments: dict[str, Any]) -> ToolReply:
        action = Action(
            kind="tool_call", tool_call=ToolCall(id=f"k{len(trajectory.steps)}", name=name, arguments=arguments)
        )
        observation = env.step(action)
        assert observation is not None
        trajectory.steps.append(Step(turn=index, action=action, observation=observation))
        if observation.ok:
            return ToolReply(ok=True, value=observation.result, notes=observation.notes)
        return ToolReply(ok=False, error=observation.error.message if observation.error else "error")

    def stubs(names: list[ToolSpec]) -> list[FunctionStub]:
        return [FunctionStub(s.name, list(s.parameters.get("properties", {})), s.description) for s in names]

    defined = {spec.name for spec in start.tools}
    prompt = config.codeact_prompt + "\n".join(_signature(spec) for spec in start.tools)
    messages: list[dict[str, Any]] = [{"role": "system", "content": prompt}, {"role": "user", "content": start.task}]
    parse_failures = 0
    with Kernel(
        stubs(start.tools), call_tool, step_timeout_s=config.step_timeout_s, memory_mb=config.memory_mb
    ) as kernel:
        for index in range(config.max_turns):
            reply = await _model_turn(client, messages, [], index, trajectory)
            if reply is None:
                return trajectory
            text = reply.content or ""
            kind, code = parse_codeact(text)
            if kind == "none" and reply.finish_reason == "length":
                trajectory.outcome, trajectory.error = Outcome.model_error, "reply truncated at the token limit"
                return trajectory
            if kind == "none" and not text.strip():
                trajectory.outcome, trajectory.error = Outcome.model_error, "empty reply"
                return trajectory
            messages.append({"role": "assistant", "content": text})
            if kind == "give_up":
                action = Action(kind="give_up", content=code)
                env.step(action)
                trajectory.steps.append(Step(turn=index, action=action))
                trajectory.final_answer, trajectory.gave_up, trajectory.outcome = code, True, Outcome.scored
                return trajectory
            if kind == "none":
                parse_failures += 1
                if parse_failures >= config.max_parse_errors:
                    trajectory.outcome = Outcome.parse_error
                    trajectory.error = f"{parse_failures} consecutive replies without <execute> or <solution>"
                    return trajectory
                messages.append(
                    {
                        "role": "user",
                        "content": "Observation:\nReply with <execute>code</execute> or "
                        "<solution>solution = ...</solution>.",
                    }
                )
                continue
            parse_failures = 0
            result = await asyncio.to_thread(kernel.run, code)
            error = result.error or ("" if not result.timed_out else "timed out")
            observation = Observation(
                call_id=f"cell{index}",
                tool="python",
                ok=result.error is None and not result.timed_out,
                result=result.output,
                error=ToolError(type="timeout" if result.timed_out else "code_error", message=error) if error else None,
                latency_ms=result.duration_ms,
            )
            trajectory.steps.append(Step(turn=index, action=Action(kind="code", content=code), observation=observation))
            new = [spec for spec in env.tools() if spec.name not in defined]
            if new:  # disclosed or discovered tools become functions of the kernel
                kernel.add_functions(stubs(new))
                defined.update(spec.name for spec in new)
            if kind == "solution" and observation.ok:
                found, value = kernel.get("solution")
                if found:
                    answer = json.dumps(value, ensure_ascii=False, default=str)
                    action = Action(kind="final_answer", content=answer)
                    env.step(action)
                    trajectory.steps.append(Step(turn=index, action=action))
                    trajectory.final_answer, trajectory.outcome = answer, Outcome.scored
                    return trajectory
                error = "your <solution> block did not set a variable named `solution`"
            shown = (result.output + ("\n" + error if error else "")).strip() or "(no output)"
            messages.append({"role": "user", "content": f"Observation:\n{shown}"})
    trajectory.outcome = Outcome.budget_exhausted
    trajectory.error = f"no answer after {config.max_turns} turns"
    return trajectory
