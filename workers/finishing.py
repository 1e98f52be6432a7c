"""Function calling that answers through a finish tool: the agent loop of a function-calling preset with a
``finish_tool`` part (FAIL-TaLMs' protocol is one), rendered from the preset's parts without knowing whose it is.

- The model answers by calling the finish tool (``finish_tool``: an OpenAI function definition as JSON); its first
  required argument is the final answer.
- A reply without a call gets the preset's ``finish_reminder`` as the next user message, and the loop goes on.
- After ``max_turns`` replies without a finish call, the last text the model wrote is the answer (the episode is
  scored); with none at all the budget ran out.
- Under a setting that offers the person (``ask_human``), the model sees the preset's ``human_tool`` instead: a
  function with a boolean flag (asks the person at all) and a string (what to ask). A call with the flag set
  (true, 1, "1", "true") asks the environment's person; any other call gets ``human_not_asked`` and asks no one.
  The step records the call as the model made it.

The awareness question before the task lists the same tools, each with its full parameter schema
(:func:`tool_definitions`)."""

from __future__ import annotations

import json
from typing import Any

from undertow.env_core.environment import Environment
from undertow.env_core.model import ASK_HUMAN, Action, Observation, Outcome, Step, ToolCall, Trajectory
from undertow.env_core.prompts import PromptPreset
from undertow.workers.clients import ChatReply, ModelClient
from undertow.workers.parsers import text_tool_calls
from undertow.workers.turns import assistant_message, call_tool, finish_episode, model_turn

FINISH_TOOL = "finish_tool"
FINISH_REMINDER = "finish_reminder"
HUMAN_TOOL = "human_tool"
HUMAN_NOT_ASKED = "human_not_asked"
_FLAG_SET = {"1", "true"}


def finishes(preset: PromptPreset | None) -> bool:
    """Whether an agent under ``preset`` answers through a finish tool (the preset has a ``finish_tool`` part)."""
    return preset is not None and FINISH_TOOL in preset.parts


def _function(preset: PromptPreset, part: str) -> dict[str, Any]:
    definition = json.loads(preset.part(part))
    assert isinstance(definition, dict), f"prompt part {part} of {preset.name} is no function definition"
    return definition


def tool_definitions(env: Environment, preset: PromptPreset) -> list[dict[str, Any]]:
    """The functions the model is offered now (OpenAI function definitions, full parameter schemas): the
    environment's tools, the preset's person tool in place of ``ask_human`` where the setting offers the person,
    and the finish tool last."""
    visible = [spec.openai()["function"] for spec in env.tools()]
    offered = [tool for tool in visible if tool["name"] != ASK_HUMAN]
    if len(offered) < len(visible) and HUMAN_TOOL in preset.parts:
        offered.append(_function(preset, HUMAN_TOOL))
    offered.append(_function(preset, FINISH_TOOL))
    return offered


def _typed(definition: dict[str, Any], kind: str) -> str | None:
    """The first parameter of ``definition`` whose type is ``kind``."""
    properties = definition.get("parameters", {}).get("properties", {})
    return next((name for name, schema in properties.items() if schema.get("type") == kind), None)


def flag_set(value: Any) -> bool:
    """Whether the person tool's flag asks the person: true, 1, "1" or "true" (any case)."""
    if isinstance(value, bool):
        return value
    return isinstance(value, int | str) and str(value).strip().casefold() in _FLAG_SET


def _answer_key(finish: dict[str, Any]) -> str:
    """The finish tool's argument that carries the answer: its first required one (else its first)."""
    parameters = finish.get("parameters", {})
    return str((parameters.get("required") or list(parameters.get("properties", {})) or ["answer"])[0])


def _answer_of(call: ToolCall, finish: dict[str, Any]) -> str:
    """The final answer a finish call gives: its answer argument (any other value as JSON)."""
    value = call.arguments.get(_answer_key(finish))
    if value is None:  # arguments that were no JSON object stand as written; a call without the answer gives none
        return call.unparsed_arguments or ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


async def _ask_person(env: Environment, preset: PromptPreset, call: ToolCall) -> Observation:
    """Run a call of the preset's person tool: the environment's person when its flag is set, else no one."""
    human = _function(preset, HUMAN_TOOL)
    flag, text = _typed(human, "boolean"), _typed(human, "string")
    if flag is not None and flag_set(call.arguments.get(flag)):
        question = str(call.arguments.get(text, "") if text is not None else "")
        asked = ToolCall(id=call.id, name=ASK_HUMAN, arguments={"question": question})
        observation = await env.astep(Action(kind="tool_call", tool_call=asked))
        assert observation is not None
        return observation
    return Observation(call_id=call.id, tool=call.name, ok=True, result={"reply": preset.part(HUMAN_NOT_ASKED)})


async def run_finishing(
    env: Environment, client: ModelClient, system: str, max_turns: int, preset: PromptPreset, trajectory: Trajectory
) -> Trajectory:
    """Play one episode under a finish-tool preset (module docstring), its system prompt ``system``."""
    start = env.reset()
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": start.task}]
    finish = _function(preset, FINISH_TOOL)
    human = _function(preset, HUMAN_TOOL)["name"] if HUMAN_TOOL in preset.parts else None
    last_text, index = "", 0
    for index in range(max_turns):
        functions = tool_definitions(env, preset)
        tools = [{"type": "function", "function": function} for function in functions]
        reply = await model_turn(client, messages, tools, index, trajectory)
        if reply is None:
            return trajectory
        content = (reply.content or "").strip()
        last_text = content or last_text
        calls = reply.tool_calls
        if not calls:  # a call written as text (a server whose tool parser does not match the model) still runs
            parsed = text_tool_calls(reply.content, {function["name"] for function in functions})
            calls = [call.model_copy(update={"id": f"text_{index}_{n}"}) for n, call in enumerate(parsed.calls)]
            if calls:
                trajectory.turns[-1].parse_stage = parsed.stage
        if not calls:
            messages.append({"role": "assistant", "content": reply.content or ""})
            messages.append({"role": "user", "content": preset.part(FINISH_REMINDER)})
            continue
        messages.append(assistant_message(reply.content if reply.tool_calls else None, calls))
        for call in calls:
            if call.name == finish["name"]:
                return finish_episode(env, trajectory, index, _answer_of(call, finish))
            if call.name == human and any(function["name"] == human for function in functions):
                observation = await _ask_person(env, preset, call)
                step = Step(turn=index, action=Action(kind="tool_call", tool_call=call), observation=observation)
                trajectory.steps.append(step)
            else:
                observation = await call_tool(env, trajectory, index, call)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": observation.content()})
    if last_text:  # the step budget is spent: the last text the model wrote is its answer
        return finish_episode(env, trajectory, index, last_text)
    trajectory.outcome = Outcome.budget_exhausted
    trajectory.error = f"no answer after {max_turns} turns"
    return trajectory


class FinishingPolicy(ModelClient):
    """Speaks a finish-tool preset for a built-in policy (which speaks plain function calling with ``ask_human``):
    the policy sees ``ask_human`` where the preset offers its person tool and no finish tool, in the tool list and in
    the awareness question's list; its call of ``ask_human`` becomes the person tool's call with the flag set, and
    its plain-text answer a finish call."""

    def __init__(self, policy: ModelClient, preset: PromptPreset):
        self.policy = policy
        self.preset = preset
        self.finish = _function(preset, FINISH_TOOL)
        self.human = _function(preset, HUMAN_TOOL) if HUMAN_TOOL in preset.parts else None

    def _plain(self, function: dict[str, Any]) -> dict[str, Any] | None:
        """A function as the policy knows it: the person tool as ``ask_human``, the finish tool not at all."""
        if function.get("name") == self.finish["name"]:
            return None
        if self.human is not None and function.get("name") == self.human["name"]:
            return {**function, "name": ASK_HUMAN}
        return function

    def _listing(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The awareness question with its tool list (the JSON list that ends its last message) as the policy knows
        it."""
        text = str(messages[-1].get("content") or "").rstrip()
        decoder = json.JSONDecoder()
        for start in (i for i, char in enumerate(text) if char == "["):
            try:
                functions, end = decoder.raw_decode(text, start)
            except ValueError:
                continue
            if end == len(text) and isinstance(functions, list):
                plain = [shown for function in functions if (shown := self._plain(function)) is not None]
                listed = text[:start] + json.dumps(plain, ensure_ascii=False)
                return [*messages[:-1], {**messages[-1], "content": listed}]
        return messages

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        if not tools:  # a request without tools is the awareness question
            return await self.policy.complete(self._listing(messages), tools)
        plain = [{**tool, "function": shown} for tool in tools if (shown := self._plain(tool["function"])) is not None]
        reply = await self.policy.complete(messages, plain)
        if not reply.tool_calls:
            answer = ToolCall(
                id="finish", name=self.finish["name"], arguments={_answer_key(self.finish): reply.content}
            )
            return ChatReply(content=None, tool_calls=[answer], finish_reason="tool_calls", usage=reply.usage)
        calls = [self._spoken(call) for call in reply.tool_calls]
        return ChatReply(content=reply.content, tool_calls=calls, finish_reason=reply.finish_reason, usage=reply.usage)

    def _spoken(self, call: ToolCall) -> ToolCall:
        if call.name != ASK_HUMAN or self.human is None:
            return call
        flag, text = _typed(self.human, "boolean"), _typed(self.human, "string")
        arguments = {key: value for key, value in ((flag, True), (text, call.arguments.get("question"))) if key}
        return call.model_copy(update={"name": self.human["name"], "arguments": arguments})

    async def aclose(self) -> None:
        await self.policy.aclose()
