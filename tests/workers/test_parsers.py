"""The text parser chain over outputs shaped like those of real model families."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from undertow.workers.parsers import Parsed, parse_react, parse_tool_calls, text_tool_calls

CORPUS = [
    # (family / case, reply text, expected stage, expected [(name, arguments)])
    (
        "hermes-qwen",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
        "tool_call_xml",
        [("get_weather", {"city": "Oslo"})],
    ),
    (
        "qwen-two-calls",
        'I will check both.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {"zone": "CET"}}\n</tool_call>',
        "tool_call_xml",
        [("get_weather", {"city": "Oslo"}), ("get_time", {"zone": "CET"})],
    ),
    (
        "llama3-json",
        '{"name": "get_weather", "parameters": {"city": "Oslo"}}',
        "json",
        [("get_weather", {"city": "Oslo"})],
    ),
    (
        "llama3-python-tag",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo", "days": 3}}',
        "json",
        [("get_weather", {"city": "Oslo", "days": 3})],
    ),
    (
        "mistral",
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "get_time", "arguments": {}}]',
        "json",
        [("get_weather", {"city": "Oslo"}), ("get_time", {})],
    ),
    (
        "deepseek-fenced",
        'To answer, I call the weather tool.\n```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```',
        "fenced_json",
        [("get_weather", {"city": "Oslo"})],
    ),
    (
        "chain-of-thought",
        'The user wants Oslo. So I will call {"name": "get_weather", "arguments": {"city": "Oslo"}} and then answer.',
        "embedded_json",
        [("get_weather", {"city": "Oslo"})],
    ),
    (
        "python-literal",
        "[{'name': 'get_weather', 'arguments': {'city': 'Oslo', 'metric': True}}]",
        "python_literal",
        [("get_weather", {"city": "Oslo", "metric": True})],
    ),
    (
        "openai-shaped",
        '{"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}}',
        "json",
        [("get_weather", {"city": "Oslo"})],
    ),
    (
        "mistral-args",
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}[TOOL_CALLS]get_time[ARGS]{"zone": "CET"}</s>',
        "mistral_args",
        [("get_weather", {"city": "Oslo"}), ("get_time", {"zone": "CET"})],
    ),
    (
        "llama-pythonic",
        "[get_weather(city='Oslo', days=3), get_time(zone=\"CET\")]",
        "pythonic",
        [("get_weather", {"city": "Oslo", "days": 3}), ("get_time", {"zone": "CET"})],
    ),
    (
        "llama4-pythonic-tags",
        "<|python_start|>[get_weather(city='Oslo')]<|python_end|>",
        "pythonic",
        [("get_weather", {"city": "Oslo"})],
    ),
]


@pytest.mark.parametrize(("case", "text", "stage", "expected"), CORPUS, ids=[c[0] for c in CORPUS])
def test_each_family_parses_to_the_right_calls(case: str, text: str, stage: str, expected: list) -> None:
    parsed = parse_tool_calls(text)
    assert parsed.error is None, parsed.error
    assert parsed.stage == stage
    assert [(c.name, c.arguments) for c in parsed.calls] == expected
    assert len({c.id for c in parsed.calls}) == len(parsed.calls)


def test_plain_text_is_an_answer() -> None:
    parsed = parse_tool_calls("The weather in Oslo is sunny, 14 degrees.")
    assert parsed.calls == [] and parsed.error is None and parsed.stage is None


def test_arguments_that_are_not_an_object_are_kept_unparsed() -> None:
    (call,) = parse_tool_calls('{"name": "get_weather", "arguments": "Oslo please"}').calls
    assert call.arguments == {} and call.unparsed_arguments == "Oslo please"


def test_direct_sequences_keep_their_labels() -> None:
    text = (
        '[{"name": "find_ids", "arguments": {"name": "Ada"}, "label": "ids"}, '
        '{"name": "list_books", "arguments": {"author_ids": "$ids.id$"}, "label": "books"}]'
    )
    parsed = parse_tool_calls(text)
    assert [c.name for c in parsed.calls] == ["find_ids", "list_books"] and parsed.labels == ["ids", "books"]


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        (
            'Thought: I need the weather.\nAction: get_weather\nAction Input: {"city": "Oslo"}',
            "action",
            ("get_weather", {"city": "Oslo"}),
        ),
        (
            'Thought: x\nAction: `get_weather`\nAction Input: {"city": "Oslo"}\nObservation: sunny (made up)\n'
            "Final Answer: sunny",
            "action",
            ("get_weather", {"city": "Oslo"}),
        ),
        ("Thought: I now know the final answer\nFinal Answer: It is sunny in Oslo.", "final", "It is sunny in Oslo."),
        (
            'Action: get_weather\nAction Input: ```json\n{"city": "Oslo"}\n```',
            "action",
            ("get_weather", {"city": "Oslo"}),
        ),
        # a fence followed by prose, a fence never closed, a fence without a tag
        (
            'Action: get_weather\nAction Input: ```json\n{"city": "Oslo"}\n```\nI will wait for the result.',
            "action",
            ("get_weather", {"city": "Oslo"}),
        ),
        ('Action: get_weather\nAction Input: ```json\n{"city": "Oslo"}', "action", ("get_weather", {"city": "Oslo"})),
        ('Action: get_weather\nAction Input: ```{"city": "Oslo"}```', "action", ("get_weather", {"city": "Oslo"})),
    ],
)
def test_react(text: str, kind: str, expected: object) -> None:
    found, value = parse_react(text)
    assert found == kind
    assert ((value.name, value.arguments) if kind == "action" else value) == expected


def test_react_errors() -> None:
    kind, call = parse_react("Action: get_weather\nAction Input: {city: Oslo")
    assert kind == "action" and call.unparsed_arguments == "{city: Oslo" and call.arguments == {}
    assert parse_react("I think it is sunny.") == (
        "error",
        "expected 'Action:' with 'Action Input:', or 'Final Answer:'",
    )
    assert parse_react("") == ("error", "empty reply")


TOOLS = {"get_weather", "get_time"}


@pytest.mark.parametrize(
    ("case", "text", "stage"),
    [
        # a call (one, read by the stage named) beside text like it that is an answer (no call, no error)
        ("shaped-json", '{"name": "anything", "arguments": {}}', "json"),
        ("records-with-names", '[{"name": "Oslo", "temperature": 14}, {"name": "Bergen", "temperature": 11}]', None),
        ("known-tool-without-arguments", '{"name": "get_time"}', "json"),
        ("record-in-prose", 'The answer is {"name": "Oslo", "temperature": 14}.', None),
        ("in-prose", 'Let me check: {"name": "get_weather", "parameters": {"city": "Oslo"}}', "embedded_json"),
        ("prose", "It is sunny in Oslo.", None),
        ("pythonic-known-tool", "[get_weather(city='Oslo')]", "pythonic"),
        ("call-of-no-tool", "done()", None),
        ("markup", '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>', "tool_call_xml"),
        ("malformed-record", '[{"name": "Oslo", "temperature": 14', None),
    ],
)
def test_function_calling_text_is_an_answer_or_a_call(case: str, text: str, stage: str | None) -> None:
    parsed = text_tool_calls(text, TOOLS)
    assert parsed.error is None and parsed.stage == stage
    assert len(parsed.calls) == (0 if stage is None else 1)


def function_calling_text(text: str) -> Parsed:
    """The reply of a function-calling model that wrote its calls as text, read as the agent loop reads it."""
    return text_tool_calls(text, TOOLS)


def unreadable(parse: Callable[[str], Parsed], *cases: tuple[str, str, str]) -> list[Any]:
    """(case, text, what the error says) as read by ``parse``."""
    return [pytest.param(parse, text, error, id=case) for case, text, error in cases]


@pytest.mark.parametrize(
    ("parse", "text", "error"),
    [
        *unreadable(
            parse_tool_calls,
            ("truncated-json", '[{"name": "get_weather", "arguments": {"city": "Os', "malformed or truncated"),
            ("truncated-xml", '<tool_call>\n{"name": "get_weather", "arguments": {"ci', "unreadable <tool_call> block"),
            ("broken-mistral", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {city: Oslo}}]', "malformed"),
            ("broken-mistral-args", '[TOOL_CALLS]get_weather[ARGS]{"city": "Os', "unreadable [ARGS] of get_weather"),
            ("empty", "   ", "empty reply"),
        ),
        *unreadable(
            function_calling_text,
            ("broken-markup", '<tool_call>{"name": "get_weather", "arguments": {"ci', "unreadable <tool_call> block"),
            ("broken-shaped", '{"name": "get_weather", "arguments": {"city": "Os', "malformed or truncated"),
            ("broken-tag", '<|python_tag|>{"name": "get_weather", "parameters": {', "malformed or truncated"),
        ),
    ],
)
def test_unreadable_calls_are_errors_not_answers(parse: Callable[[str], Parsed], text: str, error: str) -> None:
    parsed = parse(text)
    assert parsed.calls == [] and parsed.error is not None and error in parsed.error
