"""Turning model text into tool calls, for the text protocols (ReAct, direct sequence) and for function-calling
replies whose calls arrive as text (the server's tool-call parser or chat template does not match the model).

Model families write calls in different shapes: Hermes/Qwen ``<tool_call>{...}</tool_call>``, Llama 3
``{"name": ..., "parameters": {...}}`` (sometimes after ``<|python_tag|>``), Mistral ``[TOOL_CALLS] [...]`` or
``[TOOL_CALLS]name[ARGS]{...}``, Llama 3.2/4 pythonic ``[name(arg=value)]``, DeepSeek fenced ```` ```json ````
blocks, or a JSON object inside chain-of-thought prose. ``parse_tool_calls`` tries a chain of stages — JSON, Python
literal, pythonic calls, ``[ARGS]`` calls, ``<tool_call>`` XML, fenced blocks, then a scan for embedded JSON objects
— and records which stage succeeded (Live API-Bench appendix G does the same). A reply that looks like a call but
cannot be read (truncated JSON, say) is an error, never a silent final answer. ``text_tool_calls`` is the stricter
reading for function-calling replies, where plain text is the answer; ``parse_call_reply`` the strictest, for
direct sequences as Live API-Bench reads them (the calls alone, nothing else).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import warnings
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from undertow.env_core.model import ToolCall
from undertow.env_core.text import fenced_blocks, strip_fence

_XML = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_PREFIXES = ("<|python_tag|>", "<|python_start|>", "[TOOL_CALLS]", "<tool_call>", "functools")
_SUFFIXES = ("<|python_end|>", "<|eom_id|>", "<|eot_id|>", "</s>")
# Markup that only ever announces a call: text carrying it is a call attempt, readable or not.
CALL_MARKUP = ("<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<|python_start|>")
_LOOKS_LIKE_CALL = re.compile("|".join(map(re.escape, CALL_MARKUP)) + r'|["\']name["\']\s*:')
_ARGS_CALL = re.compile(r"\[TOOL_CALLS\]\s*([A-Za-z_][\w.\-]*)\s*\[ARGS\]")  # Mistral's tokenizer v11 and later
# A dict with one of these besides a name is shaped as a call (not a record that happens to have a name).
_CALL_KEYS = ("arguments", "parameters", "function")
_SHAPED_TEXT = re.compile(r'["\']name["\']\s*:.*["\'](?:arguments|parameters)["\']\s*:', re.DOTALL)
# Deeper than any call needs: trajectories keep calls as JSON, which pydantic writes and reads back only to about
# 200 levels, so a deeper value would break the episode's record instead of being the model's parse error.
MAX_DEPTH = 64
# What Python's readers (json, ast) raise on bad text: malformed input, nesting past the parser, oversized literals.
_UNREADABLE = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)
# 3.3 bits per decimal digit: below this, str() of an int stays under Python's limit on printed digits
_MAX_INT_BITS = int(sys.get_int_max_str_digits() * 3.3) if sys.get_int_max_str_digits() else 1 << 62
_DECODER = json.JSONDecoder()
_OPENERS = re.compile(r"[\[{\s]*[\[{]")
_MAX_TOO_DEEP = 8  # runs of nesting past the decoder's limit that the embedded-JSON scan tries


class _NotJson(Exception):
    """A value read from text that no JSON document could hold (a set, bytes, a non-string key, ...)."""


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON values (a tuple becomes a list); raises ``_NotJson`` for anything JSON cannot write: a
    set, bytes, a complex number, a non-string key, an integer too long to print, a lone surrogate, nesting
    deeper than ``MAX_DEPTH``. Calls carry only JSON values, so every later step (validation, storage, the next
    request) can write them."""
    if depth > MAX_DEPTH:
        raise _NotJson(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        try:
            value.encode("utf-8")  # JSON's "\ud800" escape reads as a lone surrogate, which nothing can write
        except UnicodeEncodeError as exc:
            raise _NotJson("a string that is not valid Unicode") from exc
        return value
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        if value.bit_length() > _MAX_INT_BITS:
            raise _NotJson("an integer too long to write")
        return value
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise _NotJson("an object key that is not a string")
        return {k: _plain(v, depth + 1) for k, v in value.items()}
    raise _NotJson(f"a {type(value).__name__}")


def _quietly(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call an ``ast`` reader without the warnings Python's compiler gives about the model's text (an invalid
    escape such as ``"\\<"``): they are about the reply, not about this program."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return function(*args, **kwargs)


def json_value(text: str) -> Any:
    """``json.loads`` for text read from a model: raises ValueError for anything unreadable (deep nesting too)."""
    try:
        return _plain(json.loads(text))
    except (RecursionError, _NotJson) as exc:
        raise ValueError(str(exc)) from exc


def _literal(text: str) -> Any:
    """``ast.literal_eval`` limited to what JSON can hold; raises ValueError for anything else."""
    try:
        return _plain(_quietly(ast.literal_eval, text))
    except (*_UNREADABLE, _NotJson) as exc:
        raise ValueError(str(exc)) from exc


class _TooDeep(ValueError):
    """JSON nested past the decoder's recursion limit."""


def _raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """``JSONDecoder.raw_decode`` limited to JSON values we can keep; raises ValueError for anything unreadable
    (``_TooDeep`` for nesting past the decoder's recursion limit)."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except RecursionError as exc:
        raise _TooDeep(str(exc)) from exc
    try:
        return _plain(value), end
    except _NotJson as exc:
        raise ValueError(str(exc)) from exc


@dataclass
class Parsed:
    """The calls found in a reply (``label`` per call for direct sequences), the stage that found them, or why
    none could be read (``error``). No calls and no error: the reply is plain text (an answer)."""

    calls: list[ToolCall] = field(default_factory=list)
    labels: list[str | None] = field(default_factory=list)
    stage: str | None = None
    error: str | None = None
    shaped: bool = True  # every call was written as one (not a bare {"name": ...} record): see text_tool_calls


def _load(text: str) -> Any:
    """JSON, then a Python literal (single quotes, True/None): the two cheap stages."""
    for loader in (json_value, _literal):
        try:
            return loader(text)
        except ValueError:
            pass
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


def _call_shaped(value: Any) -> bool:
    """Every item names its arguments (or wraps a function): a call, not a record that happens to have a name."""
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(i, dict) and any(k in i for k in _CALL_KEYS) for i in items)


def _pythonic(text: str) -> list[tuple[ToolCall, str | None]] | None:
    """``[name(arg=value, ...), ...]`` or ``name(arg=value)`` with literal keyword values (Llama 3.2/4's pythonic
    format). Read with ``ast``, never evaluated; positional arguments cannot be named, so they are no call."""
    try:
        tree = _quietly(ast.parse, text.strip(), mode="eval")
    except _UNREADABLE:
        return None
    nodes = tree.body.elts if isinstance(tree.body, ast.List) else [tree.body]
    found: list[tuple[ToolCall, str | None]] = []
    for i, node in enumerate(nodes):
        if not isinstance(node, ast.Call) or node.args or not isinstance(node.func, ast.Name | ast.Attribute):
            return None
        try:
            arguments = {k.arg: _plain(ast.literal_eval(k.value)) for k in node.keywords if k.arg is not None}
            name = ast.unparse(node.func)  # a.b.c... thousands deep is beyond unparse's recursion
        except (*_UNREADABLE, _NotJson):
            return None
        if len(arguments) != len(node.keywords):
            return None  # **kwargs
        found.append((ToolCall(id=f"text_{i}", name=name, arguments=arguments), None))
    return found or None


def _args_calls(text: str) -> list[tuple[ToolCall, str | None]] | Parsed | None:
    """Mistral's ``[TOOL_CALLS]name[ARGS]{...}`` (repeated for several calls); an unreadable one is an error."""
    matches = list(_ARGS_CALL.finditer(text))
    if not matches:
        return None
    found: list[tuple[ToolCall, str | None]] = []
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        raw = text[match.end() : end].strip()
        try:
            arguments, _ = _raw_decode(raw)
        except ValueError:
            return Parsed(stage="mistral_args", error=f"unreadable [ARGS] of {match.group(1)}: {raw[:120]!r}")
        if not isinstance(arguments, dict):
            return Parsed(stage="mistral_args", error=f"[ARGS] of {match.group(1)} is not a JSON object")
        found.append((ToolCall(id=f"text_{i}", name=match.group(1), arguments=arguments), None))
    return found


def _strip_prefix(text: str) -> str:
    text = text.strip()
    for suffix in _SUFFIXES:
        text = text.removesuffix(suffix).rstrip()
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :].strip()
    return text


def _scan(text: str) -> list[tuple[ToolCall, str | None, bool]]:
    """Every JSON object or list embedded in prose that reads as calls (chain-of-thought around a call), each with
    whether it was shaped as a call."""
    found: list[tuple[ToolCall, str | None, bool]] = []
    position = 0
    too_deep = 0
    while position < len(text):
        start = min((i for i in (text.find("{", position), text.find("[", position)) if i >= 0), default=-1)
        if start < 0:
            break
        try:
            value, end = _raw_decode(text, start)
        except _TooDeep:
            # Each try costs a thousand levels of decoding: trying every bracket of a degenerate "[[[[..." reply
            # would take minutes. Go on from the run's last bracket (a call may follow it), and give up on a
            # reply made of such runs.
            too_deep += 1
            if too_deep >= _MAX_TOO_DEEP:
                break
            run = _OPENERS.match(text, start)
            position = max(start + 1, run.end() - 1) if run else start + 1
            continue
        except ValueError:
            position = start + 1
            continue
        calls = _calls(value)
        if calls:
            shaped = _call_shaped(value)
            found.extend((call, label, shaped) for call, label in calls)
        position = end if calls else start + 1
    return found


def _result(pairs: list[tuple[ToolCall, str | None]], stage: str, shaped: bool = True) -> Parsed:
    calls = [
        c.model_copy(update={"id": f"text_{i}"}) if c.id.startswith("text_") else c for i, (c, _) in enumerate(pairs)
    ]
    return Parsed(calls=calls, labels=[label for _, label in pairs], stage=stage, shaped=shaped)


def parse_tool_calls(text: str | None) -> Parsed:
    """The calls in a text reply, through the stage chain; see the module docstring."""
    if not text or not text.strip():
        return Parsed(error="empty reply")
    body = _strip_prefix(text)
    for stage, loader in (("json", json_value), ("python_literal", _literal)):
        try:
            value = loader(body)
        except ValueError:
            continue
        calls = _calls(value)
        if calls:
            return _result(calls, stage, _call_shaped(value))
    pythonic = _pythonic(body)
    if pythonic:  # not "shaped": ``done()`` could be prose; text_tool_calls wants known names or markup
        return _result(pythonic, "pythonic", shaped=False)
    args = _args_calls(text)
    if isinstance(args, Parsed):
        return args
    if args:
        return _result(args, "mistral_args")
    blocks = _XML.findall(text)
    if blocks:
        pairs = []
        for block in blocks:
            calls = _calls(_load(block.strip()))
            if calls is None:
                return Parsed(stage="tool_call_xml", error=f"unreadable <tool_call> block: {block[:120]!r}")
            pairs.extend(calls)
        return _result(pairs, "tool_call_xml")
    for block in fenced_blocks(text):
        value = _load(_strip_prefix(block))
        calls = _calls(value)
        if calls:
            return _result(calls, "fenced_json", _call_shaped(value))
        pythonic = _pythonic(_strip_prefix(block))
        if pythonic:
            return _result(pythonic, "fenced_pythonic", shaped=False)
    embedded = _scan(text)
    if embedded:
        return _result([(c, label) for c, label, _ in embedded], "embedded_json", all(s for *_, s in embedded))
    if _LOOKS_LIKE_CALL.search(text):
        return Parsed(error="the reply looks like a tool call but its JSON is malformed or truncated")
    return Parsed()


_TOOL_CALL_BLOCKS = re.compile(r"\s*(?:<tool_call>\s*.*?\s*</tool_call>\s*)+", re.DOTALL)


def _unwrapped(value: Any) -> Any:
    """A call list inside extra brackets (``[[{...}]]``) without them."""
    while isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    return value


def _closes(text: str) -> bool:
    """Whether the JSON value that starts ``text`` ends somewhere in it (text may follow it)."""
    try:
        _raw_decode(text)
    except ValueError:
        return False
    return True


def _strings(value: Any) -> list[Any]:
    """The values a parsed reply holds, one level into lists and objects."""
    if isinstance(value, dict):
        return list(value.values())
    return list(value) if isinstance(value, list) else [value]


def parse_call_reply(text: str | None, tools: Collection[str] = (), *, lenient: bool = False) -> Parsed:
    """A direct-sequence reply read as Live API-Bench reads it (appendix G): the reply must be the calls alone —
    a JSON list or object, a Python literal, ``<tool_call>`` blocks, or one of these inside a single code fence
    or extra brackets. Prose around calls is the model's instruction-alignment failure: an error, even where the
    calls could be dug out of it. A reply with no call at all (an answer in words, a refusal, ``[]``) is no
    calls and no error, unless it names one of the episode's ``tools`` (a list of tool names is an attempt to call
    written in the wrong form). ``lenient`` reads with :func:`parse_tool_calls`' whole chain instead (fenced or embedded
    JSON inside reasoning, pythonic calls), recording which stage found the calls."""
    if lenient:
        return parse_tool_calls(text)
    if not text or not text.strip():
        return Parsed(error="empty reply")
    body = _strip_prefix(strip_fence(_strip_prefix(text)))
    for stage, loader in (("json", json_value), ("python_literal", _literal)):
        try:
            value = _unwrapped(loader(body))
        except ValueError:
            continue
        if value == []:
            return Parsed()  # the empty list: "no function fits", in the form the prompt asks for
        calls = _calls(value)
        if calls:
            return _result(calls, stage, _call_shaped(value))
        named = any(isinstance(v, str) and v in tools for v in _strings(value))
        if named or _LOOKS_LIKE_CALL.search(body):
            return Parsed(error="the reply is not a list of calls in the asked form")
        return Parsed()
    if body[:1] in "[{" and _LOOKS_LIKE_CALL.search(body) and not _closes(body):  # calls that never close
        return Parsed(error="the reply looks like a tool call but its JSON is malformed or truncated")
    blocks = strip_fence(text.strip())
    if _TOOL_CALL_BLOCKS.fullmatch(blocks):
        pairs = []
        for block in _XML.findall(blocks):
            calls = _calls(_unwrapped(_load(block.strip())))
            if calls is None:
                return Parsed(stage="tool_call_xml", error=f"unreadable <tool_call> block: {block[:120]!r}")
            pairs.extend(calls)
        return _result(pairs, "tool_call_xml")
    found = parse_tool_calls(text)
    if found.calls:
        return Parsed(error="the reply must be the calls alone, with no other text")
    if found.error is not None:
        return Parsed(error=found.error)
    return Parsed()


def text_tool_calls(text: str | None, tools: Collection[str]) -> Parsed:
    """Calls written as text in a function-calling reply, where plain text is the model's answer. A reply is read
    as calls only when it is unmistakably one: call markup (``<tool_call>``, ``[TOOL_CALLS]``, Llama's python
    tags), a call syntax (pythonic, ``[ARGS]``), JSON shaped as a call (a name with ``arguments`` / ``parameters``),
    or JSON naming only the episode's ``tools``. A final answer of records that carry a ``name`` field stays an
    answer. Call markup that cannot be read is an error (fed back to the model), never an answer."""
    if not text or not text.strip():
        return Parsed()
    marked = any(m in text for m in CALL_MARKUP)
    if not marked and not any(k in text for k in _CALL_KEYS) and not any(t in text for t in tools):
        return Parsed()  # nothing a call could be made of: the common final answer costs no parsing
    parsed = parse_tool_calls(text)
    if parsed.error is not None:
        attempted = marked or parsed.stage is not None or _SHAPED_TEXT.search(text) is not None
        return parsed if attempted else Parsed()
    if not parsed.calls:
        return parsed
    if marked or parsed.shaped or all(call.name in tools for call in parsed.calls):
        return parsed
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
        blocks = fenced_blocks(raw)  # the first fenced block, or the text without an unclosed fence around it
        raw = blocks[0] if blocks else strip_fence(raw)
        arguments = _load(raw) if raw else {}
        if not isinstance(arguments, dict):
            return "action", ToolCall(id="react", name=name, arguments={}, unparsed_arguments=raw or "")
        return "action", ToolCall(id="react", name=name, arguments=arguments)
    final = _REACT_FINAL.search(text)
    if final is not None:
        return "final", final.group(1).strip()
    return "error", "expected 'Action:' with 'Action Input:', or 'Final Answer:'"


# ---------------------------------------------------------------------------------------------------------------
# Decoupled generation (FUXI §3.2): a thought in the main context, then a lettered choice among candidate actions in
# a separate one.

_CUT_OBSERVATION = re.compile(r"(?:^|\n)\s*Observation\s*:", re.IGNORECASE)
_CUT_ACTION = re.compile(r"(?:^|\n)\s*Action\s*(?:Input\s*)?:", re.IGNORECASE)
_THOUGHT = re.compile(r"^\s*Thought\s*:\s*", re.IGNORECASE)
_CHOICE = re.compile(r"(?:\b(my)\s+)?\bchoice\b\W*?(?:\bis\b\W+)?([A-Za-z]+)\b", re.IGNORECASE)
_CANDIDATE_LINE = re.compile(r"^\s*-?\s*([a-z]+)\.\s+`?(.*?)`?\s*$")


def choice_label(index: int) -> str:
    """The label of candidate ``index`` (from 0): a … z, then aa, ab, … az, ba, … zz, aaa, …"""
    if index < 0:
        raise ValueError(f"a candidate index is never negative: {index}")
    label = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        label = chr(ord("a") + rest) + label
    return label


def choice_index(label: str) -> int:
    """The candidate index a label names (``choice_label``'s inverse); ``label`` is lower-case letters."""
    index = 0
    for letter in label:
        index = index * 26 + ord(letter) - ord("a") + 1
    return index - 1


def render_action(name: str, arguments: dict[str, Any], order: Collection[str] = ()) -> str:
    """A call as the decoupled prompts show it, the paper's way: ``get_neighbors(#0, concert.stadium)``, its
    argument values in the order of ``order`` (the tool's parameters), then any others; strings as they are."""
    names = [k for k in order if k in arguments] + [k for k in arguments if k not in order]
    values = [
        arguments[k] if isinstance(arguments[k], str) else json.dumps(arguments[k], ensure_ascii=False) for k in names
    ]
    return f"{name}({', '.join(values)})"


def parse_thought(text: str | None) -> tuple[str, str]:
    """The main-context reply of decoupled generation: ("final", answer), ("thought", the thought) or ("error",
    why). An Observation the model wrote itself is cut off, and so is any action it wrote: the action is chosen
    separately. ``Final Answer:`` before any action ends the episode; "Thought:" may be left out."""
    if not text or not text.strip():
        return "error", "empty reply"
    text = _CUT_OBSERVATION.split(text, maxsplit=1)[0]
    before_action = _CUT_ACTION.split(text, maxsplit=1)[0]
    final = _REACT_FINAL.search(before_action)
    if final is not None:
        return "final", final.group(1).strip()
    thought = _THOUGHT.sub("", before_action).strip()
    if not thought:
        return "error", "expected 'Thought:' with your next thought, or 'Final Answer:'"
    return "thought", thought


def parse_choice(text: str | None, count: int) -> tuple[int | None, str]:
    """The candidate a choice reply picks, ``(index, "")``, or ``(None, why)``: the first letter token after
    "choice" (case-insensitive; after "my choice" when the reply has one, so that an echoed "make a choice from a,
    b" does not count), which must label one of the ``count`` candidates."""
    matches = list(_CHOICE.finditer(text or ""))
    if not matches:
        return None, "expected 'My choice: ' and a label"
    preferred = [m for m in matches if m.group(1)] or matches
    labels = [m.group(2).lower() for m in preferred]
    for label in labels:
        if len(label) <= 3 and choice_index(label) < count:
            return choice_index(label), ""
    last = choice_label(count - 1) if count else ""
    span = f"a to {last}" if count > 1 else f"{last or 'none'}"
    return None, f"'{labels[0]}' is not the label of a candidate (the labels run {span})"


def read_candidates(text: str) -> list[tuple[str, str]]:
    """The ``(label, action)`` lines of a choice request (the text after its last "Candidate actions:")."""
    _, _, listed = text.rpartition("Candidate actions:")
    found = []
    for line in listed.splitlines():
        if line.strip().lower().startswith("make a choice"):
            break
        match = _CANDIDATE_LINE.match(line)
        if match is not None:
            found.append((match.group(1), match.group(2)))
    return found
