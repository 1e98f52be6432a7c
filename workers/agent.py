"""Agent loops, one per protocol: native function calling (OpenAI ``tools`` API), ReAct text, CodeAct code, a
direct sequence of labelled calls, and decoupled generation (FUXI §3.2: a thought, then the action chosen among the
ones the environment allows, in a separate request). Each plays one episode — model reply -> actions ->
observations — until an answer, a give-up, or a budget runs out, and records every turn (reply, parse stage,
request/response hashes).

Prompts come in presets (``AgentConfig.prompt``): ``default`` (``workers.prompts``), or one a family offers, a paper's
protocol (``env_core.prompts``), rendered from its parts by ``workers.prompts``. The texts of protocol features (the
awareness question, decoupled generation's requests, the error feedback, a harness layer) come from the family of
the episode's scenario (``Scenario.family``)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from undertow.env_core.environment import Environment
from undertow.env_core.errors import SandboxViolation
from undertow.env_core.families import prompt_preset
from undertow.env_core.faults import Harness
from undertow.env_core.model import (
    Action,
    AwarenessAnswer,
    Observation,
    Outcome,
    Step,
    Strict,
    ToolCall,
    ToolError,
    ToolSpec,
    Trajectory,
)
from undertow.env_core.prompts import PromptPreset
from undertow.env_core.sandbox import FunctionStub, Kernel, SandboxConfig, ToolReply, python_name
from undertow.env_core.text import strip_fence
from undertow.scoring.answers import Awareness, Reader, parse_awareness
from undertow.workers.clients import ChatReply, ModelClient
from undertow.workers.finishing import finishes, run_finishing, tool_definitions
from undertow.workers.parsers import (
    Parsed,
    choice_label,
    parse_call_reply,
    parse_choice,
    parse_react,
    parse_thought,
    render_action,
    text_tool_calls,
)
from undertow.workers.prompts import (
    ADVICE_SENTENCE,
    CODEACT_ADVICE_SENTENCE,
    CODEACT_PROMPT,
    DIRECT_GIVE_UP_SENTENCE,
    DIRECT_PROMPT,
    GIVE_UP_MARKER,
    GIVE_UP_SENTENCE,
    REACT_ADVICE_SENTENCE,
    REACT_GIVE_UP_SENTENCE,
    REACT_PROMPT,
    SYSTEM_PROMPT,
    awareness_messages,
    codeact_preset,
    harness_layer,
    opened,
    preset_task,
    protocol_part,
    system_preset,
)
from undertow.workers.turns import as_json, assistant_message, call_tool, finish_episode, model_turn

TEXT_CALL_FEEDBACK = (
    "Your reply looks like a tool call, but it could not be read: {error}. Call the tool again with well-formed "
    "arguments, or reply without a call to give your answer."
)

Protocol = Literal["function_calling", "react", "codeact", "direct", "decoupled"]
# The loops that carry a scenario's follow-up user turns, and the one whose system prompt takes a harness layer: a
# plan that needs either under another protocol is refused (cluster.plan), never run without it.
FOLLOW_UP_PROTOCOLS = ("function_calling", "react")
HARNESS_PROMPT_PROTOCOLS = ("function_calling",)
DEFAULT_PRESET = "default"  # the prompts of workers.prompts; any other agent.prompt names a family's preset
# the protocols a family preset is rendered for (workers.prompts: system_preset, codeact_preset), as messages say them
PRESET_PROTOCOLS = {"function_calling": "function-calling", "codeact": "CodeAct"}


class AgentConfig(Strict):
    protocol: Protocol = Field(
        default="function_calling",
        description="function_calling (native tools), react (Thought/Action text), codeact (<execute> code in a "
        "sandboxed kernel), direct (one JSON sequence of labelled calls) or decoupled (FUXI's decoupled generation: "
        "the model writes a thought, then picks, in a separate request, the action that matches it among those the "
        "environment allows now; where the environment cannot list its actions, the step reads a ReAct action from "
        "the same reply instead); built-in policies use function calling, and a translator speaks the text "
        "protocols for them (under codeact their calls run as cells)",
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
    prompt: str = Field(
        default=DEFAULT_PRESET,
        description="the prompt preset: default (the prompts below), or a paper's protocol that a registered family "
        "offers by name (each needs the protocol it is written for: codeact or function_calling). Under a codeact "
        "preset without give_up_marker an agent gives up as in its paper, by ending: a reply with neither an "
        "<execute> nor a <solution> block ends the episode as a give-up",
    )
    harness: Harness = Field(
        default="none",
        description="function_calling: a Failing Tools harness layer added to the system prompt: preamble (H1) or "
        "few_shot (H3); schema_notes (H2) annotates the tools instead. A setting's harness, when not none, sets it",
    )
    failure_advice: bool | None = Field(
        default=None,
        description="advise the agent to retry failed tools or look for another way (default: on for the default "
        "preset, as a family's preset says otherwise); false drops the advice from the default prompts",
    )
    give_up_marker: bool | None = Field(
        default=None,
        description=f"offer the {GIVE_UP_MARKER}: marker to declare a task unsolvable (default: on for the default "
        "preset, as a family's preset says otherwise); false drops it from the default prompts. With a codeact "
        "preset and the marker on, a reply without a block is a parse error fed back, as under the default preset",
    )
    system_prompt: str = Field(default=SYSTEM_PROMPT, description="function_calling: the system prompt")
    react_prompt: str = Field(
        default=REACT_PROMPT,
        description="react: the instructions before the tool schemas (also decoupled's, where the environment "
        "cannot list its actions)",
    )
    error_feedback: bool = Field(
        default=False,
        description="react and decoupled: after a failed action, the observation is the error followed by a "
        "prompt to read it and retry with a corrected action (FUXI's error feedback, Figure 2(a)); off: the bare "
        "error, as Live API-Bench's ReAct agent reads it (so off by default; a suite that wants it turns it on)",
    )
    decoupled_prompt: str | None = Field(
        default=None,
        description="decoupled, where the environment lists its actions: the main context's instructions and "
        "demonstration ({tools}: one line per tool, {max_turns}: the step budget); default: the one of the "
        "episode's family, or of the registered family that has one. The choice request has its own fixed prompt "
        "(a few worked examples)",
    )
    direct_prompt: str = Field(default=DIRECT_PROMPT, description="direct: the instructions before the tool schemas")
    direct_tools: Literal["prompt", "native"] = Field(
        default="prompt",
        description="direct: where the tools go — prompt (their JSON schemas after the instructions; the reply is "
        "the calls as text) or native (the request's tools parameter; the reply's tool calls are the sequence, "
        "Live API-Bench's '(Tools)' rows)",
    )
    direct_parser: Literal["strict", "lenient"] = Field(
        default="strict",
        description="direct: how a text reply is read — strict (the calls alone: JSON, a Python literal or "
        "<tool_call> blocks, possibly in one code fence or extra brackets; prose around them is the model's "
        "instruction-alignment failure, as Live API-Bench reads replies) or lenient (calls dug out of reasoning "
        "text too: fenced or embedded JSON, pythonic calls)",
    )
    codeact_prompt: str = Field(
        default=CODEACT_PROMPT,
        description="codeact under the default preset: the instructions before the function list (a family's "
        "preset brings its own)",
    )
    awareness_reader: Reader | None = Field(
        default=None,
        description="how an awareness reply is read: authors (it starts with yes, no or idk, any case, as "
        "FAIL-TaLMs' code read it) or robust (undertow's reader: markup skipped, spelled-out forms known); default: "
        "authors under a preset that answers through a finish tool (FAIL-TaLMs' protocol), else robust",
    )
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

    @field_validator("prompt")
    @classmethod
    def _known_preset(cls, name: str) -> str:
        if name != DEFAULT_PRESET:
            prompt_preset(name, others=(DEFAULT_PRESET,))  # an unknown name: the known ones and the closest
        return name

    @model_validator(mode="after")
    def _preset_fits_the_protocol(self) -> AgentConfig:
        preset = self.preset
        if preset is None or preset.protocol == self.protocol:
            return self
        if preset.protocol not in PRESET_PROTOCOLS:
            raise ValueError(
                f"agent.prompt {self.prompt} is written for protocol '{preset.protocol}', which takes no preset "
                f"(presets are rendered for: {', '.join(PRESET_PROTOCOLS)})"
            )
        raise ValueError(
            f"agent.prompt {self.prompt} is a {PRESET_PROTOCOLS[preset.protocol]} prompt, but agent.protocol is "
            f"'{self.protocol}'; set agent.protocol: {preset.protocol}"
        )

    @property
    def preset(self) -> PromptPreset | None:
        """The family preset ``prompt`` names; None for the default prompts."""
        return None if self.prompt == DEFAULT_PRESET else prompt_preset(self.prompt)

    @property
    def advises(self) -> bool:
        """Whether the prompt carries advice about failures (``failure_advice``, else the preset's default)."""
        if self.failure_advice is not None:
            return self.failure_advice
        preset = self.preset
        return preset.failure_advice if preset is not None else True

    @property
    def reads_awareness(self) -> Reader:
        """How awareness replies are read (``awareness_reader``, else the protocol's reader)."""
        if self.awareness_reader is not None:
            return self.awareness_reader
        return "authors" if finishes(self.preset) else "robust"

    @property
    def offers_give_up(self) -> bool:
        """Whether the prompt offers the give-up marker (``give_up_marker``, else the preset's default)."""
        if self.give_up_marker is not None:
            return self.give_up_marker
        preset = self.preset
        return preset.give_up_marker if preset is not None else True


def system_prompt(config: AgentConfig, family: str | None = None) -> str:
    """The function-calling system prompt: the preset's, with the harness layer (preamble or few-shot) after it, in
    the words of ``family`` (the episode's)."""
    preset = config.preset
    if preset is not None:
        prompt = system_preset(preset, advises=config.advises, offers_give_up=config.offers_give_up)
    else:
        prompt = _trimmed(config.system_prompt, config, ADVICE_SENTENCE, GIVE_UP_SENTENCE)
    layer = harness_layer(config.harness, family)
    return f"{prompt}\n\n{layer}" if layer else prompt


def _trimmed(prompt: str, config: AgentConfig, advice: str, give_up: str) -> str:
    """A default-preset prompt without the advice / give-up sentences the config turned off (as they are worded
    here: a custom prompt keeps its own wording)."""
    if config.advises and config.offers_give_up:
        return prompt
    if not config.advises and advice:
        prompt = prompt.replace(advice, "")
    if not config.offers_give_up:
        prompt = prompt.replace(" " + give_up, "").replace(give_up, "")
    return prompt.replace("\n\n\n", "\n\n")  # where a whole line went


def codeact_preset_prompt(config: AgentConfig, tools: list[ToolSpec]) -> str:
    """The CodeAct system prompt of the config's preset for an episode whose agent starts with ``tools``: the
    listed functions, or ``search_tools`` and ``get_info`` (open world), each as its full JSON definition."""
    if config.preset is None:
        raise ValueError("the default prompts have no CodeAct preset prompt")
    return codeact_preset(config.preset, tools, advises=config.advises, offers_give_up=config.offers_give_up)


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
    to call but cannot be read is a parse error fed back to the model. Only plain text is a final answer. A preset
    with a finish tool (FAIL-TaLMs') plays its own loop (``workers.finishing``)."""
    if finishes(config.preset):
        assert config.preset is not None
        prompt = system_prompt(config, env.scenario.family)
        return await run_finishing(env, client, prompt, config.max_turns, config.preset, trajectory)
    start = env.reset()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(config, env.scenario.family)},
        {"role": "user", "content": start.task},
    ]
    follow_ups = list(env.scenario.follow_ups)  # a multi-turn scenario's next user messages
    parse_failures = 0
    for index in range(config.max_turns):
        tools = [spec.openai() for spec in env.tools()]
        reply = await model_turn(client, messages, tools, index, trajectory)
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
                if follow_ups:  # the user goes on: the answer so far stays in the turn, the episode continues
                    messages.append({"role": "assistant", "content": reply.content})
                    messages.append({"role": "user", "content": follow_ups.pop(0)})
                    continue
                return finish_episode(env, trajectory, index, (reply.content or "").strip())
            trajectory.turns[-1].parse_stage = parsed.stage
            calls = [call.model_copy(update={"id": f"text_{index}_{n}"}) for n, call in enumerate(parsed.calls)]
            content = None  # the call now travels as a structured call; its text would repeat it
        messages.append(assistant_message(content, calls))
        for call in calls:
            observation = await call_tool(env, trajectory, index, call)
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


def parse_codeact(text: str) -> tuple[str, str]:
    """("execute" | "solution", code) for the first block of a reply, ("give_up", text), or ("none", "")."""
    match = _BLOCK.search(text)
    if match is not None:
        return match.group(1), strip_fence(match.group(2)).strip("\n")
    if text.strip().startswith(GIVE_UP_MARKER):
        return "give_up", text.strip()
    return "none", ""


# Failures that raise a builtin exception in the agent's code rather than the kernel's ToolError, by ToolError.type:
# a disabled function fails as the HoHW paper's did, with a ValueError carrying the fault's message, and an argument
# of the wrong Python type with an AssertionError ("Expected float but got int for x").
RAISED_AS = {"unavailable": "ValueError", "argument_type": "AssertionError"}


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
    visible tool is a function. Every function call goes back through the environment (faults, validation, trace);
    a failed call raises ``ToolError`` in the code, or ``ValueError`` for a disabled function (``RAISED_AS``).
    The prompt is the default one (one-line signatures) or the preset's (``codeact_preset_prompt``, and its task
    template). Under a preset without the give-up marker, a reply with no block ends the episode as a give-up.
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
        if observation.error is None:
            return ToolReply(ok=False, error="error")
        failure = observation.error
        return ToolReply(ok=False, error=failure.message, exception=RAISED_AS.get(failure.type))

    def stubs(names: list[ToolSpec]) -> list[FunctionStub]:
        return [FunctionStub(s.name, list(s.parameters.get("properties", {})), s.description) for s in names]

    defined = {spec.name for spec in start.tools}
    preset = config.preset
    if preset is not None:
        prompt, task = codeact_preset_prompt(config, start.tools), preset_task(preset, start.task)
    else:
        instructions = _trimmed(config.codeact_prompt, config, CODEACT_ADVICE_SENTENCE, GIVE_UP_SENTENCE)
        prompt, task = instructions + "\n".join(_signature(spec) for spec in start.tools), start.task
    # under a paper's preset without the marker, stopping is how an agent gives up (the paper offers no other way)
    stops_to_give_up = preset is not None and not config.offers_give_up
    messages: list[dict[str, Any]] = [{"role": "system", "content": prompt}, {"role": "user", "content": task}]
    parse_failures = 0
    with Kernel(
        stubs(start.tools),
        call_tool,
        step_timeout_s=config.step_timeout_s,
        memory_mb=config.memory_mb,
        sandbox=sandbox,
    ) as kernel:
        for index in range(config.max_turns):
            reply = await model_turn(client, messages, [], index, trajectory)
            if reply is None:
                return trajectory
            text = reply.content or ""
            kind, code = parse_codeact(text)
            if kind == "none" and _unusable(reply, trajectory):
                return trajectory
            messages.append({"role": "assistant", "content": text})
            if kind == "give_up":
                return finish_episode(env, trajectory, index, code)
            if kind == "none" and stops_to_give_up:
                return finish_episode(env, trajectory, index, text.strip(), gave_up=True)
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
                    reason = ToolError(type="sandbox_violation", message=str(exc))
                    refused = Observation(call_id=f"solution{index}", tool="python", ok=False, error=reason)
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
    environment, until Final Answer. An unparseable reply is fed back with the error; with ``error_feedback`` a
    failed action's observation ends with a prompt to retry (``_observed``)."""
    start = env.reset()
    react_prompt = _trimmed(config.react_prompt, config, REACT_ADVICE_SENTENCE, REACT_GIVE_UP_SENTENCE)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": react_prompt + _tool_schemas(env)},
        {"role": "user", "content": start.task},
    ]
    follow_ups = list(env.scenario.follow_ups)  # a multi-turn scenario's next user messages
    parse_failures = 0
    for index in range(config.max_turns):
        reply = await model_turn(client, messages, [], index, trajectory)
        if reply is None:
            return trajectory
        failures = await _react_step(env, config, trajectory, messages, reply, index, parse_failures, follow_ups)
        if failures is None:
            return trajectory
        parse_failures = failures
    trajectory.outcome = Outcome.budget_exhausted
    trajectory.error = f"no answer after {config.max_turns} turns"
    return trajectory


async def _react_step(
    env: Environment,
    config: AgentConfig,
    trajectory: Trajectory,
    messages: list[dict[str, Any]],
    reply: ChatReply,
    index: int,
    parse_failures: int,
    follow_ups: list[str],
) -> int | None:
    """One ReAct step on the model's ``reply`` (``run_react``'s, and ``run_decoupled``'s where the environment
    cannot list its actions). The reply joins ``messages`` without an Observation it wrote itself; its action runs
    and the observation is fed back (``_observed``), an unparseable reply is fed back with the error, and a final
    answer ends the episode, unless a user message in ``follow_ups`` comes next. Returns the count of consecutive
    parse failures after the step, or None when the episode ended (the trajectory records how)."""
    kind, value = parse_react(reply.content)
    if kind == "error" and _unusable(reply, trajectory):
        return None
    text = (reply.content or "").split("\nObservation:")[0]
    messages.append({"role": "assistant", "content": text})
    if kind == "final":
        trajectory.turns[-1].parse_stage = "react_final"
        if follow_ups:  # the user goes on: the answer so far stays in the turn, the episode continues
            messages.append({"role": "user", "content": follow_ups.pop(0)})
            return parse_failures
        finish_episode(env, trajectory, index, value)
        return None
    if kind == "error":
        if _parse_failed(trajectory, parse_failures + 1, config, value):
            return None
        messages.append({"role": "user", "content": f"Observation: could not parse your reply: {value}"})
        return parse_failures + 1
    trajectory.turns[-1].parse_stage = "react_action"
    call = value.model_copy(update={"id": f"react_{index}"})
    observation = await call_tool(env, trajectory, index, call)
    messages.append({"role": "user", "content": _observed(observation, config, env.scenario.family)})
    return 0


def _observed(observation: Observation, config: AgentConfig, family: str | None = None) -> str:
    """The Observation message of a text protocol: the tool message content, and after a failed action, with
    ``error_feedback``, a short prompt to read the error and retry (FUXI's error feedback, Figure 2(a)), in the
    words of ``family`` (the episode's)."""
    text = f"Observation: {observation.content()}"
    if config.error_feedback and not observation.ok:
        text += "\n" + protocol_part("error_feedback", family)
    return text


def decoupled_prompt(config: AgentConfig, env: Environment) -> str:
    """The main context's system prompt under decoupled generation: ``decoupled_prompt`` with one line per visible
    tool for ``{tools}`` (appended when it has no such slot) and the step budget for ``{max_turns}``; by default
    the prompt of the episode's family."""
    tools = "\n".join(_signature(spec) for spec in env.tools())
    prompt = config.decoupled_prompt
    if prompt is None:
        prompt = protocol_part("decoupled_prompt", env.scenario.family)
    prompt = prompt.replace("{tools}", tools) if "{tools}" in prompt else f"{prompt}\n\nTools:\n{tools}\n"
    return prompt.replace("{max_turns}", str(config.max_turns))


def _parameter_order(env: Environment) -> dict[str, list[str]]:
    return {spec.name: list(spec.parameters.get("properties", {})) for spec in env.tools()}


def choice_request(thought: str, candidates: list[str], family: str | None = None) -> list[dict[str, Any]]:
    """The separate request of decoupled generation (FUXI Figure C.3's structure): the instruction and worked
    examples, then the thought and the candidate actions labelled a, b, …, z, aa, ab, …, in the words of
    ``family`` (the episode's)."""
    labels = [choice_label(i) for i in range(len(candidates))]
    listed = "\n".join(f"{label}. {action}" for label, action in zip(labels, candidates, strict=True))
    request = protocol_part(
        "decoupled_choice_request", family, thought=thought, candidates=listed, labels=", ".join(labels)
    )
    system = opened("decoupled_choice_opening", "decoupled_choice", family)
    return [{"role": "system", "content": system}, {"role": "user", "content": request}]


async def _choose(
    client: ModelClient,
    thought: str,
    candidates: list[str],
    index: int,
    trajectory: Trajectory,
    family: str | None = None,
) -> tuple[str, int | str | None]:
    """Ask for the action that matches ``thought``: ("chosen", candidate index), ("unreadable", why) after a
    reply that names no candidate was asked again once and the second also named none, or ("ended", None) when
    the model failed (the outcome is recorded). Every reply is a turn of step ``index`` (parse stage
    ``decoupled_choice``), an unreadable one with its parse error."""
    messages = choice_request(thought, candidates, family)
    labels = ", ".join(choice_label(i) for i in range(len(candidates)))
    why = ""
    for attempt in range(2):
        reply = await model_turn(client, messages, [], index, trajectory)
        if reply is None:
            return "ended", None
        trajectory.turns[-1].parse_stage = "decoupled_choice"
        chosen, why = parse_choice(reply.content, len(candidates))
        if chosen is not None:
            return "chosen", chosen
        if _unusable(reply, trajectory):
            return "ended", None
        trajectory.turns[-1].parse_error = why
        if attempt == 0:
            reminder = protocol_part("decoupled_choice_reminder", family, labels=labels)
            messages = [*messages, {"role": "assistant", "content": reply.content or ""}]
            messages.append({"role": "user", "content": reminder})
    return "unreadable", why


async def run_decoupled(
    env: Environment,
    client: ModelClient,
    config: AgentConfig,
    trajectory: Trajectory,
    sandbox: SandboxConfig | None = None,
) -> Trajectory:
    """Decoupled generation (FUXI §3.2, Figure 2(b)). Each step the model writes, in the main context, only a
    thought (or ``Final Answer:``); where the environment lists the actions it allows now (``valid_actions``, as
    the knowledge-base environment does), a separate request with a fresh context (``choice_request``) shows that
    thought and the candidates labelled a, b, …, and reads "My choice: x" (``parse_choice``). The chosen action
    runs, and "Thought: … / Action: name(args)" and its Observation join the main context. A choice that names no
    candidate is asked again once; then the step is a parse failure, counted against ``max_parse_errors`` like an
    unparseable ReAct reply, and the main context is told no action was chosen. With no candidate left, the main
    context is told to answer. Where the environment cannot list its actions (None), the episode is ReAct: its
    prompt (``react_prompt``) and each step's action read from the same reply.

    Both requests of a step are turns of the trajectory with the step's index (parse stages ``decoupled_thought``
    or ``decoupled_final``, and ``decoupled_choice``), so token counts and replay cover them; ``max_turns`` counts
    steps. ``error_feedback`` applies to the observations of failed actions, as under react."""
    start = env.reset()
    enumerates = env.valid_actions() is not None
    if enumerates:
        prompt = decoupled_prompt(config, env)
    else:
        prompt = _trimmed(config.react_prompt, config, REACT_ADVICE_SENTENCE, REACT_GIVE_UP_SENTENCE) + _tool_schemas(
            env
        )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": prompt},
        {"role": "user", "content": start.task},
    ]
    parse_failures = 0
    for index in range(config.max_turns):
        reply = await model_turn(client, messages, [], index, trajectory)
        if reply is None:
            return trajectory
        allowed = env.valid_actions()
        if allowed is None:  # the environment cannot list its actions: the model writes the action (ReAct)
            failures = await _react_step(env, config, trajectory, messages, reply, index, parse_failures, [])
            if failures is None:
                return trajectory
            parse_failures = failures
            continue
        kind, value = parse_thought(reply.content)
        if kind == "error" and _unusable(reply, trajectory):
            return trajectory
        text = (reply.content or "").split("\nObservation:")[0]
        if kind == "final":
            trajectory.turns[-1].parse_stage = "decoupled_final"
            messages.append({"role": "assistant", "content": text})
            return finish_episode(env, trajectory, index, value)
        if kind == "error":
            parse_failures += 1
            if _parse_failed(trajectory, parse_failures, config, value):
                return trajectory
            messages.append({"role": "assistant", "content": text})
            messages.append({"role": "user", "content": f"Observation: could not parse your reply: {value}"})
            continue
        trajectory.turns[-1].parse_stage = "decoupled_thought"
        thought = value
        if not allowed:
            messages.append({"role": "assistant", "content": f"Thought: {thought}"})
            no_action = protocol_part("decoupled_no_action", env.scenario.family)
            messages.append({"role": "user", "content": f"Observation: {no_action}"})
            continue
        order = _parameter_order(env)
        shown = [render_action(name, arguments, order.get(name, ())) for name, arguments in allowed]
        status, chosen = await _choose(client, thought, shown, index, trajectory, env.scenario.family)
        if status == "ended":
            return trajectory
        if status == "unreadable":
            parse_failures += 1
            if _parse_failed(trajectory, parse_failures, config, str(chosen)):
                return trajectory
            messages.append({"role": "assistant", "content": f"Thought: {thought}"})
            not_chosen = protocol_part("decoupled_not_chosen", env.scenario.family)
            messages.append({"role": "user", "content": f"Observation: {not_chosen}"})
            continue
        parse_failures = 0
        assert isinstance(chosen, int)
        name, arguments = allowed[chosen]
        call = ToolCall(id=f"decoupled_{index}", name=name, arguments=dict(arguments))
        observation = await call_tool(env, trajectory, index, call)
        messages.append({"role": "assistant", "content": f"Thought: {thought}\nAction: {shown[chosen]}"})
        messages.append({"role": "user", "content": _observed(observation, config, env.scenario.family)})
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
    """Direct sequence (Live API-Bench appendix E): the model plans every call at once, as a JSON list with labels
    (``direct_tools: prompt``, read by ``direct_parser``) or as the tool calls of one reply (``native``); the calls
    run in order, later arguments reading earlier results; the last result is the answer. A reply with no call is
    the answer as it stands. No observation goes back, except the parse error of an unreadable plan while
    ``max_parse_errors`` allows another reply."""
    start = env.reset()
    native = config.direct_tools == "native"
    direct_prompt = _trimmed(config.direct_prompt, config, "", DIRECT_GIVE_UP_SENTENCE)
    system = direct_prompt.rstrip() if native else direct_prompt + _tool_schemas(env)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": start.task}]
    names = [spec.name for spec in env.tools()]
    for index in range(config.max_parse_errors):
        tools = [spec.openai() for spec in env.tools()] if native else []
        reply = await model_turn(client, messages, tools, index, trajectory)
        if reply is None:
            return trajectory
        if native and reply.tool_calls:
            parsed = Parsed(calls=list(reply.tool_calls), labels=[None] * len(reply.tool_calls), stage="native")
        elif native:
            parsed = text_tool_calls(reply.content, names)
        else:
            parsed = parse_call_reply(reply.content, names, lenient=config.direct_parser == "lenient")
        if parsed.error is None and not parsed.calls:
            if _unusable(reply, trajectory):
                return trajectory
            return finish_episode(env, trajectory, index, (reply.content or "").strip())
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
            last = await call_tool(env, trajectory, index, resolved)
            results[label or f"call_{n}"] = last.result if last.ok else None
        answer = as_json(last.result) if last is not None and last.ok else (last.content() if last else "")
        return finish_episode(env, trajectory, index, answer)
    return trajectory


PROTOCOLS = {
    "function_calling": run_agent,
    "react": run_react,
    "codeact": run_codeact,
    "direct": run_direct,
    "decoupled": run_decoupled,
}

AWARENESS_TURN = -1  # the awareness question's turn comes before the protocol's first (turn 0)


PRESET_AWARENESS_ATTEMPTS = 3  # under a finish-tool preset (FAIL-TaLMs' protocol): asked up to 3 times, as there


def awareness_request(env: Environment, kind: str, preset: PromptPreset | None = None) -> list[dict[str, Any]]:
    """The awareness question as a chat: its system prompt, then the question, the request and the tools: names and
    descriptions, or under a finish-tool ``preset`` the functions the agent will be offered, each with its full
    parameter schema (``workers.finishing.tool_definitions``)."""
    if finishes(preset):
        assert preset is not None
        listed: list[dict[str, Any]] = tool_definitions(env, preset)
    else:
        listed = [{"name": t.name, "description": t.description} for t in env.tools()]
    functions = json.dumps(listed, ensure_ascii=False)
    return awareness_messages(kind, env.scenario.family, query=env.scenario.task, functions=functions)


async def ask_awareness(
    env: Environment,
    client: ModelClient,
    kind: Literal["info", "tool", "both"],
    trajectory: Trajectory,
    config: AgentConfig | None = None,
) -> bool:
    """Ask the awareness question before the agent acts (FAIL-TaLMs §3.4.2) and record the answer; a reply that
    begins with none of Yes / IDK / No is asked again once (twice under a finish-tool preset), then recorded as None
    (unreadable; the task is attempted). ``both`` asks the tool question, then the information question, and records
    the tool answer if it was readable, else the information answer (as FAIL-TaLMs' authors counted Perfect).
    Returns whether the agent may go on: False after No (the task is skipped) or when the model failed."""
    preset = config.preset if config is not None else None
    reader = config.reads_awareness if config is not None else "robust"
    recorded: AwarenessAnswer | None = None
    for question in ("tool", "info") if kind == "both" else (kind,):
        asked = await _awareness_answer(env, client, question, trajectory, preset, reader)
        if asked is None:
            return False
        if recorded is None or recorded.answer is None:
            recorded = asked
    assert recorded is not None
    trajectory.awareness = recorded
    if recorded.answer != "no":
        return True
    env.reset()
    trajectory.skipped = True
    reason = f"{GIVE_UP_MARKER}: skipped after answering No: {recorded.reply}"
    finish_episode(env, trajectory, AWARENESS_TURN, reason, gave_up=True)
    return False


async def _awareness_answer(
    env: Environment,
    client: ModelClient,
    kind: Literal["info", "tool"],
    trajectory: Trajectory,
    preset: PromptPreset | None,
    reader: Reader,
) -> AwarenessAnswer | None:
    """One awareness question, asked again while its reply is unreadable; None when the model failed."""
    messages = awareness_request(env, kind, preset)
    attempts = PRESET_AWARENESS_ATTEMPTS if finishes(preset) else 2
    answer: Awareness | None = None
    reply: ChatReply | None = None
    for attempt in range(attempts):
        reply = await model_turn(client, messages, [], AWARENESS_TURN, trajectory)
        if reply is None:
            return None
        trajectory.turns[-1].parse_stage = "awareness"
        answer = parse_awareness(reply.content, reader)
        if answer is not None or attempt == attempts - 1:
            break
        trajectory.turns[-1].parse_error = "the awareness answer begins with none of Yes, IDK, No"
        messages = [*messages, {"role": "assistant", "content": reply.content or ""}]
        messages.append({"role": "user", "content": protocol_part("awareness_reminder", env.scenario.family)})
    text = (reply.content if reply is not None else None) or ""
    return AwarenessAnswer(question=kind, answer=answer, reply=text)
