"""Built-in policies: scripted agents behind the model-client interface, so every pipeline runs without a model.

- ``oracle`` follows the scenario's gold plans: the primary plan, then each backup plan when a tool fails for good
  or a result fails its plan step's check. It retries errors marked retryable, answers with the plan's report (or
  its last result), and gives up (``CANNOT_SOLVE: ...``) when no plan is left.
- ``naive`` follows the primary plan only, skipping its confirmation steps and checking nothing; on an error it
  passes the error on as its answer. It never recovers. (Both walk the plans with ``env_core.plans.PlanWalker``.)
- ``random`` calls random visible tools with random schema-shaped arguments, then answers with its last result.

Policies see exactly what a model sees: the messages and the tool list. They learn of failures from the tool
messages, not from the fault plan. They speak function calling; under the text protocols a translator speaks for
them: under ``codeact`` (:class:`CodeActPolicy`) each call becomes an ``<execute>`` cell, each answer a
``<solution>``, and each cell's output goes back as a tool message; under ``react`` (:class:`ReActPolicy`) each
call an Action and each answer a Final Answer; under ``direct`` (:class:`DirectPolicy`) the calls are written as
one labelled sequence; under ``decoupled`` (:class:`DecoupledPolicy`) each call becomes a thought that names it, and
the candidate equal to it is chosen.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections.abc import Callable
from typing import Any

from undertow.env_core.model import ASK_HUMAN, Scenario, ToolCall, ToolSpec
from undertow.env_core.plans import Next, NextAnswer, NextCall, PlanWalker, read_tool_message
from undertow.env_core.sandbox import python_name
from undertow.env_core.search import GET_INFO, SEARCH_TOOLS
from undertow.env_core.simulated import STAND_IN_REPLY
from undertow.workers.clients import ChatReply, ModelClient
from undertow.workers.parsers import read_candidates, render_action
from undertow.workers.prompts import GIVE_UP_MARKER, opens_with


def _tool_result(message: dict[str, Any]) -> Any:
    return read_tool_message(message.get("content") or "")


def called(call: ToolCall) -> dict[str, Any]:
    """The assistant message that made ``call``, as a translator replays it to the policy it speaks for (the policy
    reads results from the tool messages that follow, not the arguments)."""
    tool_call = {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": "{}"}}
    return {"role": "assistant", "content": None, "tool_calls": [tool_call]}


def awareness_question(messages: list[dict[str, Any]]) -> bool:
    """Whether a request is the awareness question asked before an episode (``workers.agent.ask_awareness``)."""
    return bool(messages) and opens_with(str(messages[0].get("content") or ""), "awareness_opening")


def listed_tools(messages: list[dict[str, Any]]) -> set[str]:
    """The tool names an awareness question lists (its last line: ``Available tools: [...]``)."""
    text = str(messages[-1].get("content") or "")
    _, _, listed = text.rpartition("Available tools: ")
    try:
        return {t["name"] for t in json.loads(listed)}
    except (ValueError, TypeError, KeyError):
        return set()


class _PlanFollower(ModelClient):
    """Drives a :class:`~env_core.plans.PlanWalker` through the model-client interface: each call it decides is a
    tool call, each tool message it reads is the result it is fed.

    A request that leaves a value out (``metadata["masked"]``, FAIL-TaLMs' under-specified setting) is handled as
    the policy's character says: the oracle asks the person (``ask_human``) when it can and declines when it cannot;
    the naive policy fills the gap with a guess. A removed tool a person can stand in for (``Scenario.replaceable``)
    the oracle asks the person to do by hand, naming it; the naive policy never asks."""

    recover = True

    def __init__(self, scenario: Scenario):
        self.walker = PlanWalker(scenario, self.recover)
        self.scenario = scenario
        self.masked: dict[str, Any] | None = scenario.metadata.get("masked")
        self.asking = False  # an ask_human call for the left-out value is out
        self.proxy = False  # an ask_human call doing a removed tool's work is out
        self.visible: set[str] = set()
        # tools the person may do by hand when they are gone (FAIL-TaLMs' replaceable ones), for a policy that asks
        self.stand_ins = {t for t, ok in scenario.replaceable.items() if ok} if self.recover else set()
        self.waiting = False
        self.calls = 0
        self.answer: str | None = None

    def reachable(self, visible: set[str]) -> set[str]:
        """The tools offered, and those the person can stand in for when there is a person to ask."""
        return visible | self.stand_ins if ASK_HUMAN in visible else visible

    def solvable(self, visible: set[str]) -> bool:
        """Whether some gold plan's tools are all offered (or done by the person) and, for a request that left a
        value out, the person can be asked for it."""
        plans = self.scenario.gold.plans
        reachable = self.reachable(visible)
        usable = not plans or any({c.tool for c in plan} <= reachable for plan in plans)
        return usable and (self.masked is None or ASK_HUMAN in visible)

    def awareness(self, visible: set[str]) -> str:
        # a missing tool a person could stand in for is a doubt, not a lack (FAIL-TaLMs counts IDK as aware there)
        planned = {c.tool for c in self.scenario.gold.plans[0]} if self.scenario.gold.plans else set()
        missing = planned - visible
        if missing and all(self.scenario.replaceable.get(t) is True for t in missing):
            return "IDK: a tool this needs is not listed, though a person could do its part."
        if self.masked is not None and ASK_HUMAN in visible and self.solvable(visible):
            return "IDK: the request leaves out a detail I need, which the person can tell me."
        if self.solvable(visible):
            return "Yes: the tools listed cover every step, and I have what the request needs."
        return "No: no tool I have (and nothing I know) can complete this request."

    def _guess(self, step: Next) -> Next:
        """The naive policy's stand-in for a value the request left out: it does not ask, it guesses."""
        return step

    def _reply(self, step: Next) -> ChatReply:
        step = self._guess(step)
        if isinstance(step, NextAnswer):
            self.waiting = False
            self.answer = step.text
            return ChatReply(content=step.text, finish_reason="stop")
        self.calls += 1
        self.waiting = True
        if step.tool not in self.visible and step.tool in self.stand_ins and ASK_HUMAN in self.visible:
            self.proxy = True
            arguments = json.dumps(step.arguments, ensure_ascii=False)
            question = f"Could you do the work of {step.tool} for me by hand, with {arguments}?"
            call = ToolCall(id=f"call_{self.calls}", name=ASK_HUMAN, arguments={"question": question})
            return ChatReply(content=None, tool_calls=[call], finish_reason="tool_calls")
        call = ToolCall(id=f"call_{self.calls}", name=step.tool, arguments=step.arguments)
        return ChatReply(content=step.say, tool_calls=[call], finish_reason="tool_calls")

    def _start(self, visible: set[str], open_world: bool, tools: list[dict[str, Any]]) -> ChatReply:
        if self.masked is not None and self.recover:
            if ASK_HUMAN not in visible:
                argument = self.masked["argument"].replace("_", " ")
                self.answer = f"{GIVE_UP_MARKER}: the request does not say which {argument} it means."
                return ChatReply(content=self.answer, finish_reason="stop")
            self.asking = True
            self.calls += 1
            # the question names the argument and says what it is, as the tool's documentation does
            spec: dict[str, Any] = next(
                (t["function"] for t in tools if t["function"]["name"] == self.masked["tool"]), {}
            )
            described = spec.get("parameters", {}).get("properties", {}).get(self.masked["argument"], {})
            about = f" ({described['description']})" if described.get("description") else ""
            question = f"Which {self.masked['argument'].replace('_', ' ')} do you mean{about}?"
            call = ToolCall(id=f"call_{self.calls}", name=ASK_HUMAN, arguments={"question": question})
            return ChatReply(content=None, tool_calls=[call], finish_reason="tool_calls")
        return self._reply(self.walker.start(self.reachable(visible), open_world))

    @staticmethod
    def _by_hand(reply: Any) -> Any:
        """What the person's reply to a stand-in request gives the plan: the result they worked out, or an error."""
        text = str(reply.get("reply", "")) if isinstance(reply, dict) else str(reply)
        prefix = STAND_IN_REPLY.format("")
        if not text.startswith(prefix):
            return {"error": {"type": "declined", "message": text}}
        return read_tool_message(text[len(prefix) :])

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        if awareness_question(messages):
            return ChatReply(content=self.awareness(listed_tools(messages)), finish_reason="stop")
        visible = {t["function"]["name"] for t in tools}
        self.visible = visible
        open_world = SEARCH_TOOLS in visible  # every tool of the universe is callable; a removed one just fails
        reachable = self.reachable(visible)
        if self.answer is not None:  # a follow-up from the user: the work is done, the answer stands
            return ChatReply(content=self.answer, finish_reason="stop")
        if self.asking:  # the person's reply is in: the plan with the value they gave, if they gave it
            self.asking = False
            reply = str(_tool_result(messages[-1]))
            assert self.masked is not None
            if str(self.masked.get("phrase") or self.masked["value"]).casefold() not in reply.casefold():
                self.answer = f"{GIVE_UP_MARKER}: the request leaves out a value, and the person could not give it."
                return ChatReply(content=self.answer, finish_reason="stop")
            return self._reply(self.walker.start(reachable, open_world))
        if not self.waiting:
            return self._start(visible, open_world, tools)
        result = _tool_result(messages[-1])
        if self.proxy:
            self.proxy = False
            result = self._by_hand(result)
        return self._reply(self.walker.on_result(result, reachable, open_world))


class OraclePolicy(_PlanFollower):
    recover = True


class NaivePolicy(_PlanFollower):
    """Primary plan only, its confirmation steps skipped, nothing checked. A failure is passed through as the
    answer, the way an agent that trusts its first plan reports whatever came back. It always believes it can do
    the task, and a value the request left out it guesses rather than asks for."""

    recover = False

    def awareness(self, visible: set[str]) -> str:
        return "Yes: I can do this."

    guessed = False
    last: Any = None

    def _guess(self, step: Next) -> Next:
        if isinstance(step, NextAnswer) and self.guessed:
            # a plan run on a guess has no report to trust: it reports what came back
            return NextAnswer(json.dumps(self.last, ensure_ascii=False, default=str))
        masked = self.masked
        if masked is None or not isinstance(step, NextCall) or step.tool != masked["tool"]:
            return step
        if masked["argument"] not in step.arguments:
            return step
        self.guessed = True
        guess: Any = 0 if isinstance(masked["value"], int | float) else "unknown"
        return NextCall(step.tool, {**step.arguments, masked["argument"]: guess})

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        if messages and messages[-1].get("role") == "tool":
            self.last = _tool_result(messages[-1])
        return await super().complete(messages, tools)


class RandomPolicy(ModelClient):
    """Uniformly random tool use: 1-4 calls to random visible tools, then the last result as the answer."""

    def __init__(self, scenario: Scenario, seed: int):
        digest = hashlib.sha256(f"random|{scenario.id}|{seed}".encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        self.words = re.findall(r"[A-Z][a-z]+", scenario.task) or ["x"]
        self.budget = self.rng.randint(1, 4)
        self.calls = 0

    def _value(self, schema: dict[str, Any]) -> Any:
        kind = schema.get("type")
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        if kind == "integer":
            return self.rng.randint(1, 64)
        if kind == "number":
            return round(self.rng.uniform(0, 200000), 2)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "array":
            return [self._value(schema.get("items", {"type": "integer"})) for _ in range(self.rng.randint(1, 3))]
        return self.rng.choice(self.words)

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        if awareness_question(messages):
            return ChatReply(content=self.rng.choice(["Yes.", "IDK.", "No."]), finish_reason="stop")
        if self.calls >= self.budget or not tools:
            last = _tool_result(messages[-1]) if messages[-1].get("role") == "tool" else None
            return ChatReply(content=json.dumps(last, default=str), finish_reason="stop")
        self.calls += 1
        function = self.rng.choice(tools)["function"]
        properties = function.get("parameters", {}).get("properties", {})
        arguments = {name: self._value(schema) for name, schema in properties.items()}
        call = ToolCall(id=f"call_{self.calls}", name=function["name"], arguments=arguments)
        return ChatReply(content=None, tool_calls=[call], finish_reason="tool_calls")


class _Delayed(ModelClient):
    """A policy that takes ``latency_s`` per reply, like a model would: for benchmarks and chaos tests."""

    def __init__(self, inner: ModelClient, latency_s: float):
        self.inner, self.latency_s = inner, latency_s

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        await asyncio.sleep(self.latency_s)
        return await self.inner.complete(messages, tools)


_TRACEBACK_LAST_LINE = re.compile(r"^(\w+(?:\.\w+)*): (.*)$")


class CodeActPolicy(ModelClient):
    """A function-calling policy driving a CodeAct episode: the inner policy's tool call becomes a cell that calls
    the function and prints its result as JSON, its answer a ``<solution>`` cell, its give-up a reply without a
    block (how an agent stops under a CodeAct preset without the marker; the marker text still gives up under the
    default prompt). In the open world a function the kernel does not define yet is first looked up with
    ``get_info``, as a model must.
    The cell's output is read back as the tool message: the printed JSON, or the exception of the traceback's last
    line as an error (``ValueError: f is currently unavailable...``). A message that asks to retry is a retryable
    error, as the transient faults word theirs, so the oracle still retries them."""

    def __init__(self, inner: ModelClient, tools: Callable[[], list[ToolSpec]]):
        self.inner, self.tools = inner, tools
        self.messages: list[dict[str, Any]] = []
        self.pending: str | None = None  # id of the call whose cell output the next observation carries
        self.deferred: ToolCall | None = None  # a call waiting for its get_info cell (open world)

    @staticmethod
    def _result(observation: str) -> Any:
        """The tool message content for a cell's output."""
        lines = [line for line in observation.removeprefix("Observation:").strip().splitlines() if line.strip()]
        for line in reversed(lines):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
        last = _TRACEBACK_LAST_LINE.match(lines[-1]) if lines else None
        message = last.group(2) if last else (lines[-1] if lines else "no output")
        kind = "service_unavailable" if "retry" in message.lower() else (last.group(1) if last else "code_error")
        return {"error": {"type": kind, "message": message}}

    def _cell(self, call: ToolCall) -> str:
        if all(name.isidentifier() for name in call.arguments):
            arguments = ", ".join(f"{name}={value!r}" for name, value in call.arguments.items())
        else:
            arguments = f"**{call.arguments!r}"
        code = f"import json\nresult = {python_name(call.name)}({arguments})\nprint(json.dumps(result, default=str))"
        return f"<thought>I will call {call.name}.</thought>\n<execute>\n{code}\n</execute>"

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        if self.deferred is not None:  # get_info made the function callable: now the call itself
            call, self.deferred = self.deferred, None
            return ChatReply(content=self._cell(call), finish_reason="stop")
        if not self.messages:
            self.messages = [m for m in messages if m["role"] == "user"][:1]
        elif self.pending is not None:
            content = json.dumps(self._result(messages[-1].get("content") or ""), default=str)
            self.messages.append({"role": "tool", "tool_call_id": self.pending, "content": content})
            self.pending = None
        visible = self.tools()
        reply = await self.inner.complete(self.messages, [spec.openai() for spec in visible])
        if reply.tool_calls:
            call = reply.tool_calls[0]
            self.pending = call.id
            self.messages.append(called(call))
            names = {spec.name for spec in visible}
            if call.name not in names and GET_INFO in names:
                # open world: a function is defined in the kernel once a search or get_info has shown it
                self.deferred = call
                text = f"<thought>I will read the documentation of {call.name}.</thought>\n<execute>\n"
                text += f"print(get_info(tool_name={call.name!r}))\n</execute>"
                return ChatReply(content=text, finish_reason="stop", usage=reply.usage)
            return ChatReply(content=self._cell(call), finish_reason="stop", usage=reply.usage)
        content = reply.content or ""
        if content.startswith(GIVE_UP_MARKER):
            return ChatReply(content=content, finish_reason="stop", usage=reply.usage)
        try:
            value = json.loads(content)
        except json.JSONDecodeError:
            value = content
        text = f"<thought>I have the answer.</thought>\n<solution>\nsolution = {value!r}\n</solution>"
        return ChatReply(content=text, finish_reason="stop", usage=reply.usage)


class ReActPolicy(ModelClient):
    """A function-calling policy driving a ReAct episode: its tool call becomes ``Thought / Action / Action Input``
    text, its answer (or give-up) a ``Final Answer``; each ``Observation`` the loop sends back reaches the policy as
    the tool message it would have read under function calling."""

    def __init__(self, inner: ModelClient, tools: Callable[[], list[ToolSpec]]):
        self.inner, self.tools = inner, tools
        self.messages: list[dict[str, Any]] = []
        self.pending: str | None = None  # id of the call whose observation the next user message carries

    def _hear(self, messages: list[dict[str, Any]]) -> None:
        """Carry the loop's latest message into the policy's function-calling history: the task first, then the
        Observation of the pending call as its tool message, or a follow-up user turn after an answer."""
        if not self.messages:
            self.messages = [m for m in messages if m["role"] == "user"][:1]
        elif self.pending is not None:
            observation = (messages[-1].get("content") or "").removeprefix("Observation:").strip()
            self.messages.append({"role": "tool", "tool_call_id": self.pending, "content": observation})
            self.pending = None
        else:
            self.messages.append(messages[-1])

    def _will_call(self, call: ToolCall) -> None:
        """Record the call the policy made; the next Observation is its result."""
        self.pending = call.id
        self.messages.append(called(call))

    def _final(self, reply: ChatReply) -> ChatReply:
        """The policy's answer (or give-up) as a ReAct ``Final Answer``."""
        self.messages.append({"role": "assistant", "content": reply.content or ""})
        text = f"Thought: I now know the final answer.\nFinal Answer: {reply.content or ''}"
        return ChatReply(content=text, finish_reason="stop", usage=reply.usage)

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        self._hear(messages)
        reply = await self.inner.complete(self.messages, [spec.openai() for spec in self.tools()])
        if not reply.tool_calls:
            return self._final(reply)
        call = reply.tool_calls[0]
        self._will_call(call)
        text = (
            f"Thought: I will call {call.name}.\nAction: {call.name}\n"
            f"Action Input: {json.dumps(call.arguments, ensure_ascii=False)}"
        )
        return ChatReply(content=text, finish_reason="stop", usage=reply.usage)


def decoupled_choice(messages: list[dict[str, Any]]) -> bool:
    """Whether a request is the separate choice request of decoupled generation (``workers.agent.choice_request``)."""
    return bool(messages) and opens_with(str(messages[0].get("content") or ""), "decoupled_choice_opening")


class DecoupledPolicy(ReActPolicy):
    """A function-calling policy driving a decoupled-generation episode. In the main context its tool call becomes
    a thought that names the call (followed by the call as a ReAct ``Action`` / ``Action Input``, which the loop
    reads only where the environment cannot list its actions), its answer (or give-up) a ``Final Answer``; each
    ``Observation`` reaches the policy as the tool message it would have read. In a choice request it picks the
    candidate equal to the call it intends, or the first candidate when that call is not among them (a real model
    would be held to the list as well)."""

    def __init__(self, inner: ModelClient, tools: Callable[[], list[ToolSpec]]):
        super().__init__(inner, tools)
        self.intended: ToolCall | None = None

    def _choice(self, messages: list[dict[str, Any]]) -> str:
        request = next((str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"), "")
        listed = next(
            (str(m["content"]) for m in reversed(messages) if "Candidate actions:" in str(m.get("content") or "")),
            request,
        )
        candidates = read_candidates(listed)
        if not candidates:
            return "a"
        if self.intended is not None:
            order = {spec.name: list(spec.parameters.get("properties", {})) for spec in self.tools()}
            wanted = render_action(self.intended.name, self.intended.arguments, order.get(self.intended.name, ()))
            for label, action in candidates:
                if action == wanted:
                    return label
        return candidates[0][0]

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        if decoupled_choice(messages):
            return ChatReply(content=f"My choice: {self._choice(messages)}", finish_reason="stop")
        self._hear(messages)
        specs = self.tools()
        reply = await self.inner.complete(self.messages, [spec.openai() for spec in specs])
        if not reply.tool_calls:
            self.intended = None
            return self._final(reply)
        call = self.intended = reply.tool_calls[0]
        self._will_call(call)
        order = {spec.name: list(spec.parameters.get("properties", {})) for spec in specs}
        text = (
            f"Thought: I will call {render_action(call.name, call.arguments, order.get(call.name, ()))}.\n"
            f"Action: {call.name}\nAction Input: {json.dumps(call.arguments, ensure_ascii=False)}"
        )
        return ChatReply(content=text, finish_reason="stop", usage=reply.usage)


# A direct-sequence plan is written before any call runs: the policy is fed this in place of each result.
UNSEEN_RESULT = "(not run yet: the whole sequence is written first)"
MAX_DIRECT_CALLS = 64


class DirectPolicy(ModelClient):
    """A function-calling policy writing a direct sequence (Live API-Bench appendix E): its calls are collected,
    each fed a placeholder result since nothing runs until the sequence is complete, and sent as one JSON list of
    labelled calls, or, when the request offers the tools natively (``direct_tools: native``), as the tool calls
    of one reply. Plans that need an earlier result's value cannot be written this way; a plan that reads results
    only through the tools themselves (``$label$`` references) can."""

    def __init__(self, inner: ModelClient, tools: Callable[[], list[ToolSpec]]):
        self.inner, self.tools = inner, tools

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        own = [m for m in messages if m["role"] == "user"][:1]
        shown = [spec.openai() for spec in self.tools()]
        calls: list[dict[str, Any]] = []
        while len(calls) < MAX_DIRECT_CALLS:
            reply = await self.inner.complete(own, shown)
            if not reply.tool_calls:
                if not calls:  # nothing to call: the answer (or the give-up) as it is
                    return ChatReply(content=reply.content or "", finish_reason="stop")
                break
            call = reply.tool_calls[0]
            calls.append({"name": call.name, "arguments": call.arguments, "label": f"call_{len(calls)}"})
            own.append(called(call))
            own.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(UNSEEN_RESULT)})
        if tools:
            native = [ToolCall(id=f"call_{n}", name=c["name"], arguments=c["arguments"]) for n, c in enumerate(calls)]
            return ChatReply(content=None, tool_calls=native, finish_reason="tool_calls")
        return ChatReply(content=json.dumps(calls, ensure_ascii=False), finish_reason="stop")


def make_policy(name: str, scenario: Scenario, seed: int, latency_s: float = 0.0) -> ModelClient:
    policies: dict[str, Callable[[], ModelClient]] = {
        "oracle": lambda: OraclePolicy(scenario),
        "naive": lambda: NaivePolicy(scenario),
        "random": lambda: RandomPolicy(scenario, seed),
    }
    if name not in policies:
        raise ValueError(f"unknown policy '{name}'")
    policy = policies[name]()
    return _Delayed(policy, latency_s) if latency_s > 0 else policy
