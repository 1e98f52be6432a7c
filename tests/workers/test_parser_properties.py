"""Property tests of the reply parsers: whatever a model writes, each parser gives its documented result.

Replies are built from the markers the parsers look for (``<tool_call>``, ``[TOOL_CALLS]``, ``Action:``, fences,
``<execute>``...), call-shaped JSON and Python literals (sets, bytes, huge and hex integers, NaN, lone surrogates),
unbalanced and deeply nested brackets, and arbitrary unicode. Every call a parser returns must hold only JSON
values that the episode's record (pydantic JSON) can write and read back.
"""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from undertow.env_core.model import ToolCall
from undertow.workers.agent import parse_codeact
from undertow.workers.parsers import MAX_DEPTH, Parsed, parse_react, parse_tool_calls, text_tool_calls

# database=None: no .hypothesis folder in the shared working tree
FAST = settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TOOLS = ["get_weather", "find_employee_ids", "f"]

MARKERS = [
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "</s>",
    "functools",
    "```",
    "```json\n",
    "```python\n",
    "```tool_code\n",
    "\n```",
    "Thought: ",
    "Action: ",
    "\nAction Input: ",
    "Final Answer: ",
    "\nObservation: ",
    "<execute>",
    "</execute>",
    "<solution>",
    "</solution>",
    "CANNOT_SOLVE: ",
    '"name": ',
    "'name': ",
    '"arguments": ',
    "'parameters': ",
    '"function": ',
    '"label": ',
    '{"name": "get_weather", "arguments": ',
    "[get_weather(",
    "f(city=",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "=",
    ",",
    ":",
    '"',
    "'",
    "\\",
    "\\ud800",
    '"\\udfff"',
    "NaN",
    "-Infinity",
    "1e999",
    "None",
    "True",
    "b'\\xff'",
    "1j",
    "{1, 2}",
    "{1: 2}",
    "(1, 2)",
    "9" * 40,
    "\n",
    " ",
    "\x00",
    "é",
    "😀",
    "\u202e",
]

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**200)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
# what ast.literal_eval can produce besides JSON
LITERALS = st.recursive(
    SCALARS | st.binary(max_size=6) | st.complex_numbers(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.sets(st.integers(), max_size=3)
        | st.dictionaries(st.integers() | st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


@st.composite
def calls(draw: st.DrawFn) -> str:
    """A call-shaped object as JSON or a Python literal, sometimes truncated."""
    call: dict[Any, Any] = {"name": draw(st.sampled_from([*TOOLS, "", "x.y", "ünï"]) | st.text(max_size=8))}
    key = draw(st.sampled_from(["arguments", "parameters", "function"]))
    arguments = draw(JSON_VALUES | st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3) | st.text())
    call[key] = {"name": call["name"], "arguments": arguments} if key == "function" else arguments
    if draw(st.booleans()):
        call["label"] = draw(JSON_VALUES)
    text = json.dumps(call) if draw(st.booleans()) else repr(draw(st.sampled_from([call, [call], (call,)])))
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text


@st.composite
def literal_calls(draw: st.DrawFn) -> str:
    """A Python-literal call whose arguments hold values JSON cannot (sets, bytes, complex, int keys)."""
    return repr({"name": draw(st.sampled_from(TOOLS)), "arguments": draw(LITERALS)})


@st.composite
def deep(draw: st.DrawFn) -> str:
    """Nesting from a few levels to far beyond any parser's recursion limit, balanced or not."""
    opener, closer = draw(st.sampled_from([("[", "]"), ("{", "}"), ("(", ")"), ('{"a": ', "}"), ("[{", "}]")]))
    depth = draw(st.sampled_from([3, MAX_DEPTH, MAX_DEPTH + 1, 150, 250, 1100, 20_000]))
    return opener * depth + (closer * depth if draw(st.booleans()) else "")


# numbers past Python's 4300-digit limit on int <-> str, built on demand (a strategy's repr shows its constants)
HUGE = st.integers(4290, 4400).map(lambda n: "9" * n) | st.integers(4000, 6000).map(lambda n: "0x" + "f" * n)

PIECES = (
    st.sampled_from(MARKERS)
    | HUGE
    | st.text(max_size=20)
    | calls()
    | literal_calls()
    | deep()
    | JSON_VALUES.map(lambda v: json.dumps(v))
)
REPLIES = st.lists(PIECES, max_size=12).map("".join)


def assert_json_call(call: ToolCall, *, named: bool = True) -> None:
    """A call an episode can keep: a name, JSON arguments, and a record that reads back."""
    assert isinstance(call, ToolCall)
    assert isinstance(call.name, str)
    assert call.name or not named
    assert isinstance(call.arguments, dict)
    assert call.unparsed_arguments is None or isinstance(call.unparsed_arguments, str)
    json.dumps(call.arguments)  # writable (NaN is written as NaN: the environment rejects it with a message)
    again = ToolCall.model_validate_json(call.model_dump_json())
    assert again.name == call.name
    assert again.unparsed_arguments == call.unparsed_arguments


def assert_parsed(parsed: Parsed) -> None:
    assert isinstance(parsed, Parsed)
    assert len(parsed.labels) == len(parsed.calls)
    assert all(label is None or isinstance(label, str) for label in parsed.labels)
    if parsed.error is not None:  # the documented parse-error result: a reason and no calls
        assert isinstance(parsed.error, str) and parsed.error
        assert parsed.calls == []
    for call in parsed.calls:
        assert_json_call(call)
    if parsed.calls:
        assert parsed.stage is not None


@FAST
@given(REPLIES)
def test_parse_tool_calls_gives_calls_or_a_parse_error(text: str) -> None:
    """The direct protocol's parser (and the chain behind text tool calls)."""
    assert_parsed(parse_tool_calls(text))


@FAST
@given(REPLIES, st.lists(st.sampled_from(TOOLS), max_size=3))
def test_text_tool_calls_gives_calls_an_answer_or_a_parse_error(text: str, tools: list[str]) -> None:
    parsed = text_tool_calls(text, tools)
    assert_parsed(parsed)
    if not parsed.calls and parsed.error is None:
        assert parsed.stage is None or parsed.stage  # plain text: the model's answer


@st.composite
def react_replies(draw: st.DrawFn) -> str:
    """``Action:`` / ``Action Input:`` with any payload (JSON, Python literals, near-miss markup), a ``Final
    Answer:``, or neither, between arbitrary pieces."""
    head = "".join(draw(st.lists(PIECES, max_size=3)))
    tail = "".join(draw(st.lists(PIECES, max_size=3)))
    payload = draw(
        JSON_VALUES.map(json.dumps)
        | LITERALS.map(repr)
        | st.dictionaries(st.integers() | st.text(max_size=4), LITERALS, max_size=3).map(repr)
        | PIECES
    )
    name = draw(st.sampled_from(TOOLS) | st.text(max_size=8))
    body = draw(
        st.sampled_from(
            [
                f"Thought: I will look.\nAction: {name}\nAction Input: {payload}",
                f"Action: `{name}`\nAction Input: ```json\n{payload}\n```",
                f"Action: {name}\nAction Input: {payload}\nObservation: {tail}",
                f"Thought: done\nFinal Answer: {payload}",
                payload,
            ]
        )
    )
    return head + body + tail


@FAST
@given(react_replies())
def test_parse_react_gives_an_action_a_final_answer_or_an_error(text: str) -> None:
    kind, value = parse_react(text)
    assert kind in ("action", "final", "error")
    if kind == "action":
        assert_json_call(value, named=False)  # "Action: `` " names no tool: the environment says so
    else:
        assert isinstance(value, str)
        if kind == "error":
            assert value


@FAST
@given(
    st.lists(st.sampled_from(["<execute>", "</execute>", "<solution>", "</solution>"]) | PIECES, max_size=10).map(
        "".join
    )
)
def test_parse_codeact_gives_a_block_a_give_up_or_none(text: str) -> None:
    kind, code = parse_codeact(text)
    assert kind in ("execute", "solution", "give_up", "none")
    assert isinstance(code, str)
    if kind == "none":
        assert code == ""


@FAST
@given(st.none() | st.just("") | st.text(alphabet=" \t\n\r", max_size=5))
def test_empty_replies(text: str | None) -> None:
    assert parse_tool_calls(text) == Parsed(error="empty reply")
    assert text_tool_calls(text, TOOLS) == Parsed()
    assert parse_react(text) == ("error", "empty reply")


# ---------------------------------------------------------------------------------------------------------------
# The replies that raised before (each found by the properties above), with the result they give now

MALFORMED = "the reply looks like a tool call but its JSON is malformed or truncated"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('{"name": "f", "arguments": {1, 2}}', Parsed(error=MALFORMED), id="set-arguments"),
        pytest.param("{'name': 'f', 'arguments': {1: 2}}", Parsed(error=MALFORMED), id="int-key"),
        pytest.param("{'name': 'f', 'arguments': b'x'}", Parsed(error=MALFORMED), id="bytes"),
        pytest.param("{'name': 'f', 'arguments': 1j}", Parsed(error=MALFORMED), id="complex"),
        pytest.param("{'name': 'f', 'arguments': " + "0x" + "f" * 5000 + "}", Parsed(error=MALFORMED), id="hex-int"),
        pytest.param('{"name": "f", "arguments": {"a": "\\ud800"}}', Parsed(error=MALFORMED), id="lone-surrogate"),
        pytest.param("[" * 100_000, Parsed(), id="deep-brackets"),
        pytest.param(
            "<tool_call>" + "[" * 100_000,
            Parsed(stage="tool_call_xml", error=f"unreadable <tool_call> block: {'[' * 120!r}"),
            id="deep-tool-call",
        ),
        pytest.param(
            "[TOOL_CALLS]f[ARGS]" + "{" * 100_000,
            Parsed(stage="mistral_args", error=f"unreadable [ARGS] of f: {'{' * 120!r}"),
            id="deep-args",
        ),
        pytest.param(
            '{"name": "f", "arguments": ' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "}",
            Parsed(error=MALFORMED),
            id="deeper-than-max-depth",
        ),
    ],
)
def test_replies_that_used_to_raise(text: str, expected: Parsed) -> None:
    assert parse_tool_calls(text) == expected


def test_python_literal_tuples_are_read_as_json_arrays() -> None:
    parsed = parse_tool_calls("{'name': 'f', 'arguments': {'ids': (1, 2), 'pair': ('a', None)}}")
    assert (parsed.stage, parsed.error) == ("python_literal", None)
    assert parsed.calls == [ToolCall(id="text_0", name="f", arguments={"ids": [1, 2], "pair": ["a", None]})]


def test_react_input_that_is_not_a_json_object_is_kept_unparsed() -> None:
    kind, call = parse_react("Action: f\nAction Input: {1: 2}")
    assert kind == "action"
    assert call == ToolCall(id="react", name="f", arguments={}, unparsed_arguments="{1: 2}")


def test_nan_and_huge_numbers_reach_the_environment() -> None:
    """The parser keeps what JSON can write; the environment, not the parser, tells the model they are out of range."""
    parsed = parse_tool_calls('{"name": "f", "arguments": {"x": NaN, "y": 1000000000000000000000000000000}}')
    (call,) = parsed.calls
    assert math.isnan(call.arguments["x"])
    assert call.arguments["y"] == 10**30


def test_python_warnings_about_the_reply_are_not_printed() -> None:
    """An invalid escape in a literal makes Python's compiler warn; the reply is the model's, not our code."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parsed = parse_tool_calls("{'name': 'f', 'arguments': {'a': '\\<x'}}")
        pythonic = parse_tool_calls("f(a='\\<')")
    assert parsed.calls == [ToolCall(id="text_0", name="f", arguments={"a": "\\<x"})]
    assert pythonic.calls == [ToolCall(id="text_0", name="f", arguments={"a": "\\<"})]
