"""Built-in policies: scripted agents behind the model-client interface, so every pipeline runs without a model.

- ``oracle`` follows the scenario's gold plans: the primary plan, then each backup plan when a tool fails for good.
  It retries errors marked retryable, and gives up (``CANNOT_SOLVE: ...``) when no plan is left.
- ``naive`` follows the primary plan only; on an error it passes the error on as its answer. It never recovers.
- ``random`` calls random visible tools with random schema-shaped arguments, then answers with its last result.

Policies see exactly what a model sees: the messages and the tool list. They learn of failures from the tool
messages, not from the fault plan. They speak function calling; under ``agent.protocol: codeact``
:class:`CodeActPolicy` translates: each call becomes an ``<execute>`` cell, each answer a ``<solution>``, and each
cell's output goes back to the policy as a tool message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections.abc import Callable
from typing import Any

from env_core.model import ArgRef, PlannedCall, Scenario, ToolCall, ToolSpec
from env_core.sandbox import python_name
from env_core.search import GET_INFO, SEARCH_TOOLS
from workers.clients import ChatReply, ModelClient
from workers.prompts import GIVE_UP_MARKER

MAX_RETRIES = 3


def _tool_result(message: dict[str, Any]) -> Any:
    """The JSON value at the start of a tool message (disclosure notes may follow it)."""
    try:
        value, _ = json.JSONDecoder().raw_decode(message.get("content") or "")
    except json.JSONDecodeError:
        return {"error": {"type": "unparseable", "message": message.get("content")}}
    return value


def _error(result: Any) -> dict[str, Any] | None:
    if isinstance(result, dict) and isinstance(result.get("error"), dict):
        return result["error"]
    return None


def _resolve(call: PlannedCall, results: list[Any]) -> dict[str, Any]:
    arguments = {}
    for name, value in call.arguments.items():
        if isinstance(value, ArgRef):
            rows = results[value.from_call] if isinstance(results[value.from_call], list) else []
            column = [row.get(value.field) for row in rows if isinstance(row, dict)]
            value = column if value.many else (column[0] if column else None)
        arguments[name] = value
    return arguments


class _PlanFollower(ModelClient):
    """Shared machinery: walk a list of plans call by call, reading each result from the last tool message."""

    recover = True

    def __init__(self, scenario: Scenario):
        self.plans = scenario.gold.plans if self.recover else scenario.gold.plans[:1]
        self.failed: set[int] = set()
        self.plan: int | None = None
        self.results: list[Any] = []
        self.retries = 0
        self.waiting = False
        self.calls = 0

    def _visible(self, tools: list[dict[str, Any]]) -> set[str]:
        return {t["function"]["name"] for t in tools}

    def _next_plan(self, tools: list[dict[str, Any]]) -> int | None:
        visible = self._visible(tools)
        open_world = SEARCH_TOOLS in visible  # every tool of the universe is callable; a removed one just fails
        for i, plan in enumerate(self.plans):
            if i not in self.failed and (open_world or all(c.tool in visible for c in plan)):
                return i
        return None

    def _call(self) -> ChatReply:
        assert self.plan is not None
        planned = self.plans[self.plan][len(self.results)]
        self.calls += 1
        self.waiting = True
        call = ToolCall(id=f"call_{self.calls}", name=planned.tool, arguments=_resolve(planned, self.results))
        return ChatReply(content=None, tool_calls=[call], finish_reason="tool_calls")

    def _on_error(self, error: dict[str, Any], tools: list[dict[str, Any]]) -> ChatReply:
        if error.get("type") in ("timeout", "rate_limit", "service_unavailable") and self.retries < MAX_RETRIES:
            self.retries += 1
            return self._call()
        assert self.plan is not None
        self.failed.add(self.plan)
        self.plan, self.results, self.retries = None, [], 0
        return self._start(tools)

    def _start(self, tools: list[dict[str, Any]]) -> ChatReply:
        self.plan = self._next_plan(tools)
        if self.plan is None:
            tried = len(self.failed)
            return ChatReply(
                content=f"{GIVE_UP_MARKER}: every way I know to answer this failed ({tried} plan(s) tried).",
                finish_reason="stop",
            )
        return self._call()

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        if not self.waiting:
            return self._start(tools)
        self.waiting = False
        result = _tool_result(messages[-1])
        error = _error(result)
        if error is not None:
            return self._on_error(error, tools)
        self.results.append(result)
        self.retries = 0
        assert self.plan is not None
        if len(self.results) < len(self.plans[self.plan]):
            return self._call()
        return ChatReply(content=json.dumps(self.results[-1], default=str), finish_reason="stop")


class OraclePolicy(_PlanFollower):
    recover = True


class NaivePolicy(_PlanFollower):
    """Primary plan only. A failure is passed through as the answer, the way an agent that trusts its first plan
    reports whatever came back."""

    recover = False

    def _on_error(self, error: dict[str, Any], tools: list[dict[str, Any]]) -> ChatReply:
        return ChatReply(content=f"The tool returned an error: {error.get('message')}", finish_reason="stop")

    def _start(self, tools: list[dict[str, Any]]) -> ChatReply:
        if not self.plans or self._next_plan(tools) is None:
            return ChatReply(content="I could not find the tool I planned to use.", finish_reason="stop")
        return super()._start(tools)


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
    block (how an agent stops under the ``hohw`` prompt; the marker text still gives up under the default one). In
    the open world a function the kernel does not define yet is first looked up with ``get_info``, as a model must.
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
            self.messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": "{}"}}
                    ],
                }
            )
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


def make_policy(name: str, scenario: Scenario, seed: int, latency_s: float = 0.0) -> ModelClient:
    policies = {
        "oracle": lambda: OraclePolicy(scenario),
        "naive": lambda: NaivePolicy(scenario),
        "random": lambda: RandomPolicy(scenario, seed),
    }
    if name not in policies:
        raise ValueError(f"unknown policy '{name}'")
    policy = policies[name]()
    return _Delayed(policy, latency_s) if latency_s > 0 else policy
