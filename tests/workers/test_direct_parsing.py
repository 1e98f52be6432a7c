"""The strict reading of direct-sequence replies (``parse_call_reply``), as Live API-Bench reads them: the calls
alone — JSON, a Python literal, ``<tool_call>`` blocks, or one of these in a single code fence or extra brackets —
and nothing else; prose around calls is an error even where the calls could be dug out (the lenient option does
that); a reply with no call at all is no calls and no error (the answer as it stands)."""

from __future__ import annotations

import pytest

from undertow.workers.parsers import parse_call_reply

TOOLS = ["get_a", "get_b"]
CALLS = '[{"name": "get_a", "arguments": {"x": 1}, "label": "A"}, {"name": "get_b", "arguments": {"y": "$A$"}}]'
READ = [("get_a", {"x": 1}), ("get_b", {"y": "$A$"})]  # what CALLS says, written out by hand
BLOCKS = (
    '<tool_call>\n{"name": "get_a", "arguments": {"x": 1}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_b", "arguments": {"y": 2}}\n</tool_call>'
)


def calls_of(text: str | None, *, lenient: bool = False) -> list[tuple[str, dict[str, object]]]:
    parsed = parse_call_reply(text, TOOLS, lenient=lenient)
    assert parsed.error is None, parsed.error
    return [(call.name, call.arguments) for call in parsed.calls]


@pytest.mark.parametrize(
    ("text", "stage"),
    [
        (CALLS, "json"),
        ("```json\n" + CALLS + "\n```", "json"),  # one fence, tagged
        ("```\n" + CALLS + "\n```", "json"),  # one fence, untagged
        ("[" + CALLS + "]", "json"),  # extra brackets
        ("```json\n[" + CALLS + "]\n```", "json"),  # both
    ],
)
def test_the_calls_alone_in_their_accepted_wrappings(text: str, stage: str) -> None:
    parsed = parse_call_reply(text, TOOLS)
    assert parsed.error is None and parsed.stage == stage
    assert [(c.name, c.arguments) for c in parsed.calls] == READ
    assert parsed.labels == ["A", None]  # the labels the reply gave, None where it gave none


def test_a_single_call_object_and_a_python_literal() -> None:
    assert calls_of('{"name": "get_a", "arguments": {"x": 1}}') == [("get_a", {"x": 1})]
    parsed = parse_call_reply("[{'name': 'get_a', 'arguments': {'x': True, 'y': None}}]", TOOLS)
    assert parsed.stage == "python_literal"
    assert [(c.name, c.arguments) for c in parsed.calls] == [("get_a", {"x": True, "y": None})]


def test_tool_call_blocks_alone_or_in_one_fence() -> None:
    parsed = parse_call_reply(BLOCKS, TOOLS)
    assert parsed.stage == "tool_call_xml" and parsed.error is None
    assert [(c.name, c.arguments) for c in parsed.calls] == [("get_a", {"x": 1}), ("get_b", {"y": 2})]
    fenced = '```\n<tool_call>{"name": "get_a", "arguments": {"x": 1}}</tool_call>\n```'
    assert calls_of(fenced) == [("get_a", {"x": 1})]


PROSE_AROUND_CALLS = [
    "Here are the calls:\n" + CALLS,  # a preamble
    CALLS + "\nThese calls answer the question.",  # a coda
    "I will call:\n```json\n" + CALLS + "\n```",  # prose, then a fence
    'First I filter, so I call {"name": "get_a", "arguments": {"x": 1}} and then answer.',  # chain of thought
    "```json\n" + CALLS + "\n```\n```json\n" + CALLS + "\n```",  # two fences
    'Sure. <tool_call>{"name": "get_a", "arguments": {"x": 1}}</tool_call>',  # prose before the block
]


@pytest.mark.parametrize("text", PROSE_AROUND_CALLS)
def test_prose_around_calls_is_an_error_by_default(text: str) -> None:
    parsed = parse_call_reply(text, TOOLS)
    assert parsed.calls == []
    assert parsed.error == "the reply must be the calls alone, with no other text"


@pytest.mark.parametrize("text", PROSE_AROUND_CALLS[2:4])
def test_lenient_reading_digs_the_calls_out_of_reasoning(text: str) -> None:
    parsed = parse_call_reply(text, TOOLS, lenient=True)
    assert parsed.error is None and parsed.calls
    assert parsed.calls[0].name == "get_a" and parsed.calls[0].arguments == {"x": 1}
    assert parsed.stage in ("fenced_json", "embedded_json")


@pytest.mark.parametrize(
    "text",
    [
        "4",  # the answer in words: the model answered instead of calling
        "Angela Sanders studies Business.",
        "[]",  # "no function fits", in the asked form
        '[{"Name": "Bob"}]',  # records, not calls: an answer
        "No function fits this question.",
    ],
)
def test_a_reply_without_any_call_is_no_calls_and_no_error(text: str) -> None:
    parsed = parse_call_reply(text, TOOLS)
    assert (parsed.calls, parsed.error) == ([], None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "empty reply"),
        ("   \n", "empty reply"),
        ('["get_a", "get_b"]', "the reply is not a list of calls in the asked form"),  # names only: a wrong form
        ('[{"name": "get_a", "arguments": {"x": 1}', "malformed or truncated"),  # cut off
        # a whole first call, the second cut off: still a plan that never closes, not prose around calls
        ('[{"name": "get_a", "arguments": {}}, {"name": "get_b", "argu', "malformed or truncated"),
        ("<tool_call>not json</tool_call>", "unreadable <tool_call> block: 'not json'"),
    ],
)
def test_unreadable_replies_name_what_is_wrong(text: str | None, message: str) -> None:
    parsed = parse_call_reply(text, TOOLS)
    assert parsed.calls == [] and parsed.error is not None
    assert message in parsed.error


def test_a_list_of_words_that_are_not_tool_names_is_an_answer() -> None:
    # the same shape as the names-only error above, but naming no offered tool: an answer listing values
    assert parse_call_reply('["Paris", "Rome"]', TOOLS).error is None
    assert parse_call_reply('["Paris", "Rome"]', TOOLS).calls == []
