"""Agent loops, one per protocol: native function calling (OpenAI ``tools`` API), ReAct text, CodeAct code, and a
direct sequence of labelled calls. Each plays one episode — model reply -> actions -> observations — until an
answer, a give-up, or a budget runs out, and records every turn (reply, parse stage, request/response hashes)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from typing import Any, Literal

from pydantic import Field

from env_core.environment import Environment
from env_core.errors import SandboxViolation
from env_core.model import Action, Observation, Outcome, Step, Strict, ToolCall, ToolError, ToolSpec, Trajectory, Turn
from env_core.sandbox import FunctionStub, Kernel, SandboxConfig, ToolReply, python_name
from workers.clients import ChatReply, ModelClient, ModelError
from workers.parsers import parse_react, parse_tool_calls, text_tool_calls

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


REACT_PROMPT = (
    "Answer the user's question using the tools below. Use this format:\n"
    "Thought: what to do next\nAction: the tool's name\nAction Input: the arguments as a JSON object\n"
    "Then wait for the Observation. Repeat Thought/Action/Action Input as needed; when you know the answer, write\n"
    "Thought: I now know the final answer\nFinal Answer: the records the tools returned, as JSON.\n"
    "Tools can fail: read the errors and adapt. If the task cannot be completed with the tools available, write "
    f"Final Answer: {GIVE_UP_MARKER}: and the reason.\n\nTools (JSON schemas):\n"
)

DIRECT_PROMPT = (
    "Answer the user's question with one sequence of tool calls. Reply with only a JSON list such as "
    '[{"name": "tool_a", "arguments": {"x": 1}, "label": "out1"}, {"name": "tool_b", "arguments": {"ids": '
    '"$out1.id$"}, "label": "out2"}]. Each call has a unique label; "$label.field$" passes the values of that field '
    "of an earlier call's result (one value if it returned one row, else a list). The result of the last call is "
    f"your answer. If the task cannot be done with these tools, reply {GIVE_UP_MARKER}: and the reason.\n\n"
    "Tools (JSON schemas):\n"
)

TEXT_CALL_FEEDBACK = (
    "Your reply looks like a tool call, but it could not be read: {error}. Call the tool again with well-formed "
    "arguments, or reply without a call to give your answer."
)

Protocol = Literal["function_calling", "react", "codeact", "direct"]


class AgentConfig(Strict):
    protocol: Protocol = Field(
        default="function_calling",
        description="function_calling (native tools), react (Thought/Action text), codeact (<execute> code in a "
        "sandboxed kernel) or direct (one JSON sequence of labelled calls); built-in policies always use function "
        "calling",
    )
    # every bound is finite: a typo must be an error, never a limit that is silently off
    max_turns: int = Field(default=12, ge=1, le=1000, description="model replies per episode before budget_exhausted")
    max_parse_errors: int = Field(
        default=2,
        ge=1,
        le=1000,
        description="consecutive unparseable replies before the episode ends as parse_error (the default feeds the "
        "error back once)",
    )
    system_prompt: str = SYSTEM_PROMPT
    react_prompt: str = REACT_PROMPT
    direct_prompt: str = DIRECT_PROMPT
    codeact_prompt: str = CODEACT_PROMPT
    step_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=86_400,
        allow_inf_nan=False,
        description="codeact: wall-clock limit of one <execute> (at most a day)",
    )
    memory_mb: int = Field(
        default=1024, ge=64, le=65_536, description="codeact: address-space limit of the kernel (64 MB to 64 GB)"
    )


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
        index=index,
        content=reply.content,
        tool_calls=reply.tool_calls,
        latency_ms=latency,
        usage=reply.usage,
        finish_reason=reply.finish_reason,
        request_sha256=request_hash(messages, tools),
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


def _finish(env: Environment, trajectory: Trajectory, index: int, content: str) -> Trajectory:
    """End the episode with an answer, or a give-up when the text starts with the marker."""
    gave_up = content.startswith(GIVE_UP_MARKER)
    action = Action(kind="give_up" if gave_up else "final_answer", content=content)
    env.step(action)
    trajectory.steps.append(Step(turn=index, action=action))
    trajectory.final_answer, trajectory.gave_up, trajectory.outcome = content, gave_up, Outcome.scored
    return trajectory


def _call(env: Environment, trajectory: Trajectory, index: int, call: ToolCall) -> Observation:
    action = Action(kind="tool_call", tool_call=call)
    observation = env.step(action)
    assert observation is not None
    trajectory.steps.append(Step(turn=index, action=action, observation=observation))
    return observation


def _unusable(reply: ChatReply, trajectory: Trajectory) -> bool:
    """A reply that carries nothing to act on is the model's failure (``model_error``): truncated or empty."""
    if reply.finish_reason == "length":
        trajectory.outcome, trajectory.error = Outcome.model_error, "reply truncated at the token limit"
        return True
    if not (reply.content or "").strip():
        trajectory.outcome, trajectory.error = Outcome.model_error, "empty reply (no text, no tool call)"
        return True
    return False


def _parse_failed(trajectory: Trajectory, failures: int, config: AgentConfig, why: str) -> bool:
    """Record an unparseable reply on its turn; True when the budget of consecutive failures is spent."""
    trajectory.turns[-1].parse_error = why
    if failures >= config.max_parse_errors:
        trajectory.outcome = Outcome.parse_error
        trajectory.error = f"{failures} consecutive unparseable replies; last: {why}"
        return True
    return False


def _tool_schemas(env: Environment) -> str:
    return "\n".join(json.dumps(spec.openai()["function"], ensure_ascii=False) for spec in env.tools())


async def run_agent(
    env: Environment,
    client: ModelClient,
    config: AgentConfig,
    trajectory: Trajectory,
    sandbox: SandboxConfig | None = None,
) -> Trajectory:
    """Play one episode into ``trajectory``. ``InfraError`` from the client propagates: the caller records it.

    A reply without structured ``tool_calls`` whose text holds a call (the server's tool-call parser or chat template
    does not match the model) runs that call, and its turn records the parser stage that read it; text that tries
    to call but cannot be read is a parse error fed back to the model. Only plain text is a final answer."""
    start = env.reset()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": config.system_prompt},
        {"role": "user", "content": start.task},
    ]
    parse_failures = 0
    for index in range(config.max_turns):
        tools = [spec.openai() for spec in env.tools()]
        reply = await _model_turn(client, messages, tools, index, trajectory)
        if reply is None:
            return trajectory
        calls = reply.tool_calls
        content = reply.content
        if not calls:
            if _unusable(reply, trajectory):
                return trajectory
            parsed = text_tool_calls(reply.content, {tool["function"]["name"] for tool in tools})
            if parsed.error is not None:
                parse_failures += 1
                if _parse_failed(trajectory, parse_failures, config, parsed.error):
                    return trajectory
                messages.append({"role": "assistant", "content": reply.content})
                messages.append({"role": "user", "content": TEXT_CALL_FEEDBACK.format(error=parsed.error)})
                continue
            if not parsed.calls:
                return _finish(env, trajectory, index, (reply.content or "").strip())
            trajectory.turns[-1].parse_stage = parsed.stage
            calls = [call.model_copy(update={"id": f"text_{index}_{n}"}) for n, call in enumerate(parsed.calls)]
            content = None  # the call now travels as a structured call; its text would repeat it
        messages.append(_assistant_message(content, calls))
        for call in calls:
            observation = _call(env, trajectory, index, call)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": observation.content()})
        if all(c.unparsed_arguments is not None for c in calls):
            parse_failures += 1
            if _parse_failed(trajectory, parse_failures, config, "tool arguments are not a JSON object"):
                return trajectory
        else:
            parse_failures = 0
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


async def run_codeact(
    env: Environment,
    client: ModelClient,
    config: AgentConfig,
    trajectory: Trajectory,
    sandbox: SandboxConfig | None = None,
) -> Trajectory:
    """CodeAct (HoHW appendix E): the model writes Python run in a persistent kernel in another process, where each
    visible tool is a function. Every function call goes back through the environment (faults, validation, trace).
    ``SandboxError`` (the kernel cannot start) propagates: the runner records it as ``infra_error``;
    ``SandboxUnavailable`` (weaker isolation than ``sandbox.require``) as ``config_error``; ``SandboxViolation``
    (the code hit a cap or a limit of the sandbox; the cell is recorded first) as ``sandbox_violation``."""
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
        stubs(start.tools),
        call_tool,
        step_timeout_s=config.step_timeout_s,
        memory_mb=config.memory_mb,
        sandbox=sandbox,
    ) as kernel:
        for index in range(config.max_turns):
            reply = await _model_turn(client, messages, [], index, trajectory)
            if reply is None:
                return trajectory
            text = reply.content or ""
            kind, code = parse_codeact(text)
            if kind == "none" and _unusable(reply, trajectory):
                return trajectory
            messages.append({"role": "assistant", "content": text})
            if kind == "give_up":
                return _finish(env, trajectory, index, code)
            if kind == "none":
                parse_failures += 1
                if _parse_failed(trajectory, parse_failures, config, "no <execute> or <solution> block"):
                    return trajectory
                feedback = "Reply with <execute>code</execute> or <solution>solution = ...</solution>."
                messages.append({"role": "user", "content": f"Observation:\n{feedback}"})
                continue
            trajectory.turns[-1].parse_stage = kind
            parse_failures = 0
            result = await asyncio.to_thread(kernel.run, code)
            error = result.error or ("" if not result.timed_out else "timed out")
            kind_of_error = "sandbox_violation" if result.violation else "timeout" if result.timed_out else "code_error"
            observation = Observation(
                call_id=f"cell{index}",
                tool="python",
                ok=result.error is None and not result.timed_out,
                result=result.output,
                error=ToolError(type=kind_of_error, message=error) if error else None,
                latency_ms=result.duration_ms,
            )
            trajectory.steps.append(Step(turn=index, action=Action(kind="code", content=code), observation=observation))
            if result.violation:
                raise SandboxViolation(result.violation)
            new = [spec for spec in env.tools() if spec.name not in defined]
            if new:  # disclosed or discovered tools become functions of the kernel
                kernel.add_functions(stubs(new))
                defined.update(spec.name for spec in new)
            if kind == "solution" and observation.ok:
                try:
                    found, value = kernel.get("solution")
                except SandboxViolation as exc:  # an oversized solution: recorded where it was read, then the end
                    error = ToolError(type="sandbox_violation", message=str(exc))
                    refused = Observation(call_id=f"solution{index}", tool="python", ok=False, error=error)
                    action = Action(kind="code", content="solution")
                    trajectory.steps.append(Step(turn=index, action=action, observation=refused))
                    raise
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


async def run_react(
    env: Environment,
    client: ModelClient,
    config: AgentConfig,
    trajectory: Trajectory,
    sandbox: SandboxConfig | None = None,
) -> Trajectory:
    """ReAct text protocol (Live API-Bench appendix F): Thought / Action / Action Input, Observation from the
    environment, until Final Answer. An unparseable reply is fed back with the error."""
    start = env.reset()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": config.react_prompt + _tool_schemas(env)},
        {"role": "user", "content": start.task},
    ]
    parse_failures = 0
    for index in range(config.max_turns):
        reply = await _model_turn(client, messages, [], index, trajectory)
        if reply is None:
            return trajectory
        kind, value = parse_react(reply.content)
        if kind == "error" and _unusable(reply, trajectory):
            return trajectory
        text = (reply.content or "").split("\nObservation:")[0]
        messages.append({"role": "assistant", "content": text})
        if kind == "final":
            trajectory.turns[-1].parse_stage = "react_final"
            return _finish(env, trajectory, index, value)
        if kind == "error":
            parse_failures += 1
            if _parse_failed(trajectory, parse_failures, config, value):
                return trajectory
            messages.append({"role": "user", "content": f"Observation: could not parse your reply: {value}"})
            continue
        parse_failures = 0
        trajectory.turns[-1].parse_stage = "react_action"
        call = value.model_copy(update={"id": f"react_{index}"})
        observation = _call(env, trajectory, index, call)
        messages.append({"role": "user", "content": f"Observation: {observation.content()}"})
    trajectory.outcome = Outcome.budget_exhausted
    trajectory.error = f"no answer after {config.max_turns} turns"
    return trajectory


_REFERENCE = re.compile(r"^\$([A-Za-z0-9_.\-]+?)(?:\.([^$]+))?\$$")


def _resolve(value: Any, results: dict[str, Any], schema: dict[str, Any]) -> Any:
    """``$label$`` / ``$label.field$`` -> an earlier call's result, or that field's values: the whole column for an
    array argument, else the single value (or the column, when there are several)."""
    if not isinstance(value, str) or (match := _REFERENCE.match(value)) is None or match.group(1) not in results:
        return value
    result = results[match.group(1)]
    if match.group(2) is None:
        return result
    rows = result if isinstance(result, list) else [result]
    column = [row.get(match.group(2)) for row in rows if isinstance(row, dict)]
    return column if schema.get("type") == "array" or len(column) != 1 else column[0]


async def run_direct(
    env: Environment,
    client: ModelClient,
    config: AgentConfig,
    trajectory: Trajectory,
    sandbox: SandboxConfig | None = None,
) -> Trajectory:
    """Direct sequence (Live API-Bench appendix E): the model plans every call at once as a JSON list with labels;
    the calls run in order, later arguments reading earlier results; the last result is the answer. No
    observation goes back, except the parse error of an unreadable plan."""
    start = env.reset()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": config.direct_prompt + _tool_schemas(env)},
        {"role": "user", "content": start.task},
    ]
    for index in range(config.max_parse_errors):
        reply = await _model_turn(client, messages, [], index, trajectory)
        if reply is None:
            return trajectory
        parsed = parse_tool_calls(reply.content)
        if parsed.error is None and not parsed.calls:
            if _unusable(reply, trajectory):
                return trajectory
            return _finish(env, trajectory, index, (reply.content or "").strip())
        if parsed.error is not None:
            if _parse_failed(trajectory, index + 1, config, parsed.error):
                return trajectory
            messages.append({"role": "assistant", "content": reply.content or ""})
            messages.append(
                {
                    "role": "user",
                    "content": f"Could not parse your reply: {parsed.error}. Reply with the JSON list only.",
                }
            )
            continue
        trajectory.turns[-1].parse_stage = parsed.stage
        results: dict[str, Any] = {}
        last: Observation | None = None
        schemas = {spec.name: spec.parameters.get("properties", {}) for spec in env.tools()}
        for n, (call, label) in enumerate(zip(parsed.calls, parsed.labels, strict=True)):
            properties = schemas.get(call.name, {})
            arguments = {k: _resolve(v, results, properties.get(k, {})) for k, v in call.arguments.items()}
            resolved = call.model_copy(update={"id": f"seq_{n}", "arguments": arguments})
            last = _call(env, trajectory, index, resolved)
            results[label or f"call_{n}"] = last.result if last.ok else None
        answer = _json(last.result) if last is not None and last.ok else (last.content() if last else "")
        return _finish(env, trajectory, index, answer)
    return trajectory


PROTOCOLS = {"function_calling": run_agent, "react": run_react, "codeact": run_codeact, "direct": run_direct}
