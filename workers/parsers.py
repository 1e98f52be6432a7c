"""Turning model text into tool calls, for the text protocols (ReAct, direct sequence) and text-only replies.

Model families write calls in different shapes: Hermes/Qwen ``<tool_call>{...}</tool_call>``, Llama 3
``{"name": ..., "parameters": {...}}`` (sometimes after ``<|python_tag|>``), Mistral ``[TOOL_CALLS] [...]``,
DeepSeek fenced ```` ```json ```` blocks, or a JSON object inside chain-of-thought prose. ``parse_tool_calls`` tries a
chain of stages — JSON, Python literal, ``<tool_call>`` XML, fenced JSON, then a scan for embedded JSON objects — and
records which stage succeeded (Live API-Bench appendix G does the same). A reply that looks like a call but cannot be
read (truncated JSON, say) is an error, never a silent final answer.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from env_core.model import ToolCall

_XML = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```(?:json|JSON|tool_code|python)?\s*\n?(.*?)\n?\s*```", re.DOTALL)
_PREFIXES = ("<|python_tag|>", "[TOOL_CALLS]", "<tool_call>", "functools")
_LOOKS_LIKE_CALL = re.compile(r'<tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>|["\']name["\']\s*:')


@dataclass
class Parsed:
    """The calls found in a reply (``label`` per call for direct sequences), the stage that found them, or why
    none could be read (``error``). No calls and no error: the reply is plain text (an answer)."""

    calls: list[ToolCall] = field(default_factory=list)
    labels: list[str | None] = field(default_factory=list)
    stage: str | None = None
    error: str | None = None


def _load(text: str) -> Any:
    """JSON, then a Python literal (single quotes, True/None): the two cheap stages."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _as_call(item: Any, index: int) -> tuple[ToolCall, str | None] | None:
    """One call from the shapes families use: {name, arguments|parameters}, {function: {...}}, with a label."""
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):
        item = {**item["function"], **{k: v for k, v in item.items() if k != "function"}}
    name = item.get("name") or item.get("tool_name")
    if not isinstance(name, str) or not name:
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    unparsed = None
    if isinstance(arguments, str):
        decoded = _load(arguments) if arguments.strip() else {}
        arguments, unparsed = (decoded, None) if isinstance(decoded, dict) else ({}, arguments)
    elif not isinstance(arguments, dict):
        arguments, unparsed = {}, json.dumps(arguments)
    label = item.get("label")
    call = ToolCall(
        id=str(item.get("id") or f"text_{index}"), name=name, arguments=arguments, unparsed_arguments=unparsed
    )
    return call, label if isinstance(label, str) else None


def _calls(value: Any) -> list[tuple[ToolCall, str | None]] | None:
    items = value if isinstance(value, list) else [value]
    found = [_as_call(item, i) for i, item in enumerate(items)]
    if not items or any(f is None for f in found):
        return None
    return [f for f in found if f is not None]


def _strip_prefix(text: str) -> str:
    text = text.strip()
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :].strip()
    return text


def _scan(text: str) -> list[tuple[ToolCall, str | None]]:
    """Every JSON object or list embedded in prose that reads as calls (chain-of-thought around a call)."""
    decoder = json.JSONDecoder()
    found: list[tuple[ToolCall, str | None]] = []
    position = 0
    while position < len(text):
        start = min((i for i in (text.find("{", position), text.find("[", position)) if i >= 0), default=-1)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        calls = _calls(value)
        if calls:
            found.extend(calls)
        position = end if calls else start + 1
    return found


def _result(pairs: list[tuple[ToolCall, str | None]], stage: str) -> Parsed:
    calls = [
        c.model_copy(update={"id": f"text_{i}"}) if c.id.startswith("text_") else c for i, (c, _) in enumerate(pairs)
    ]
    return Parsed(calls=calls, labels=[label for _, label in pairs], stage=stage)


def parse_tool_calls(text: str | None) -> Parsed:
    """The calls in a text reply, through the stage chain; see the module docstring."""
    if not text or not text.strip():
        return Parsed(error="empty reply")
    body = _strip_prefix(text)
    for stage, loader in (("json", json.loads), ("python_literal", ast.literal_eval)):
        try:
            value = loader(body)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        calls = _calls(value)
        if calls:
            return _result(calls, stage)
    blocks = _XML.findall(text)
    if blocks:
        pairs = []
        for block in blocks:
            calls = _calls(_load(block.strip()))
            if calls is None:
                return Parsed(stage="tool_call_xml", error=f"unreadable <tool_call> block: {block[:120]!r}")
            pairs.extend(calls)
        return _result(pairs, "tool_call_xml")
    for block in _FENCE.findall(text):
        calls = _calls(_load(_strip_prefix(block)))
        if calls:
            return _result(calls, "fenced_json")
    embedded = _scan(text)
    if embedded:
        return _result(embedded, "embedded_json")
    if _LOOKS_LIKE_CALL.search(text):
        return Parsed(error="the reply looks like a tool call but its JSON is malformed or truncated")
    return Parsed()


_REACT_ACTION = re.compile(r"Action\s*:\s*(.+?)\s*(?:\n|$)\s*Action\s*Input\s*:\s*(.*)", re.DOTALL | re.IGNORECASE)
_REACT_FINAL = re.compile(r"Final\s*Answer\s*:\s*(.*)", re.DOTALL | re.IGNORECASE)


def parse_react(text: str | None) -> tuple[str, Any]:
    """ReAct (Live API-Bench appendix F): ("action", ToolCall), ("final", answer text) or ("error", why).

    ``Action Input`` is read with the same JSON / Python-literal stages; an Observation the model wrote itself is
    cut off (it must come from the environment)."""
    if not text or not text.strip():
        return "error", "empty reply"
    text = re.split(r"\n\s*Observation\s*:", text, maxsplit=1)[0]
    action = _REACT_ACTION.search(text)
    if action is not None:
        name = action.group(1).strip().strip("`'\"")
        raw = action.group(2).strip()
        fenced = _FENCE.search(raw)
        raw = fenced.group(1).strip() if fenced else raw
        arguments = _load(raw) if raw else {}
        if not isinstance(arguments, dict):
            return "action", ToolCall(id="react", name=name, arguments={}, unparsed_arguments=raw or "")
        return "action", ToolCall(id="react", name=name, arguments=arguments)
    final = _REACT_FINAL.search(text)
    if final is not None:
        return "final", final.group(1).strip()
    return "error", "expected 'Action:' with 'Action Input:', or 'Final Answer:'"
