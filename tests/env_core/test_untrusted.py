"""The cleaning step for model-controlled data (env_core/untrusted.py) and the trajectory fields it guards."""

from __future__ import annotations

import json

import pytest
from helpers.builders import episode_result

from undertow.env_core.model import Observation, ToolCall, ToolError, Trajectory, Turn
from undertow.env_core.untrusted import (
    ARGUMENTS_CUT,
    MAX_ARGUMENT,
    MAX_ARGUMENTS_JSON,
    MAX_DEPTH,
    MAX_TEXT,
    capped,
    clean_arguments,
    clean_text,
    clean_value,
)


def nested(levels: int) -> list[object]:
    root: list[object] = []
    current = root
    for _ in range(levels - 1):
        inner: list[object] = []
        current.append(inner)
        current = inner
    return root


def levels(value: object) -> int:
    count = 0
    while isinstance(value, list):
        count += 1
        value = value[0] if value else None
    return count


def test_lone_surrogates_become_the_replacement_character_and_the_rest_is_kept() -> None:
    assert clean_text("Sofia \ud800") == "Sofia \ufffd"
    assert clean_text("\udfff\ud83d x") == "\ufffd\ufffd x"
    assert clean_text("a pair 😀 stays, é and 中文 too") == "a pair 😀 stays, é and 中文 too"
    assert clean_text("Sofia \ud800").encode("utf-8")


def test_long_text_is_cut_with_a_marker_inside_the_limit_and_cleaning_twice_changes_nothing() -> None:
    text = clean_text("x" * (MAX_TEXT + 5_000))
    assert len(text) <= MAX_TEXT
    assert text.endswith("more characters cut]") and "5,0" not in text[:-40]
    assert clean_text(text) == text
    assert clean_text("short") == "short"


def test_a_value_nested_100000_deep_is_cut_at_the_depth_limit_without_recursion() -> None:
    cleaned = clean_value(nested(100_000))
    assert levels(cleaned) == MAX_DEPTH
    assert json.loads(json.dumps(cleaned)) == cleaned  # the JSON encoder's own recursion is now safe
    deepest = cleaned
    for _ in range(MAX_DEPTH - 1):
        deepest = deepest[0]
    assert deepest == [f"[nested deeper than {MAX_DEPTH} levels: cut]"]
    assert clean_value(nested(MAX_DEPTH)) == nested(MAX_DEPTH)  # at the limit: unchanged


def test_values_become_json_types_and_keys_and_strings_are_cleaned() -> None:
    value = {"k\ud800": ("a", {1, 2}), 3: b"raw", "n": [10**400, float("nan"), None, True]}
    cleaned = clean_value(value)
    assert cleaned["k\ufffd"][0] == "a" and sorted(cleaned["k\ufffd"][1]) == [1, 2]
    assert cleaned["3"] == "b'raw'"
    assert cleaned["n"][0] == 10**400 and cleaned["n"][2:] == [None, True]


def test_an_integer_too_long_to_print_becomes_a_marker() -> None:
    (marker,) = clean_value([10**5000])
    assert marker == "[an integer of about 5,001 digits: cut]"
    assert clean_value(10**4000) == 10**4000


def test_a_tool_calls_arguments_are_capped_as_a_whole_too() -> None:
    many = {"names": ["x" * 100] * 10_000}  # each string short, 1 MB of JSON in all
    (key,) = clean_arguments(many)
    cut = clean_arguments(many)[ARGUMENTS_CUT]
    assert key == ARGUMENTS_CUT
    assert cut.startswith("the arguments are 1,040,011 characters of JSON, more than the 100,000 a call may carry; ")
    assert 'they began: {"names": ["xxx' in cut and cut.endswith("… (1,040,011 characters)")
    small = {"first_name": "Ada", "ids": [1, 2]}
    assert clean_arguments(small) == small
    assert len(json.dumps(clean_arguments({"a": "y" * 50_000}))) < MAX_ARGUMENTS_JSON


def test_capped_quotes_a_prefix_and_says_how_long_the_whole_was() -> None:
    assert capped("x" * 1_000_000, 100) == "x" * 100 + "… (1,000,000 characters)"
    assert capped("short", 100) == "short"


def test_the_trajectory_fields_model_text_reaches_are_cleaned_on_construction_and_assignment() -> None:
    call = ToolCall(id="c\ud800", name="t\udfff", arguments={"a": "y" * 1_000_000, "deep": nested(500)})
    assert call.id == "c\ufffd" and call.name == "t\ufffd"
    assert len(call.arguments["a"]) <= MAX_ARGUMENT and levels(call.arguments["deep"]) <= MAX_DEPTH
    error = ToolError(type="invalid_arguments", message="bad: " + "z" * 2_000_000)
    assert len(error.message) <= MAX_ARGUMENT
    observation = Observation(call_id="c", tool="python", ok=True, result="out \ud83d", notes=["n\ud800"])
    assert observation.result == "out \ufffd" and observation.notes == ["n\ufffd"]
    turn = Turn(index=0, content="reply \ud800")
    turn.parse_error = "could not parse \udfff"
    assert turn.content == "reply \ufffd" and turn.parse_error == "could not parse \ufffd"
    trajectory = Trajectory(episode_id="e", scenario_id="s", model="m", setting="clean", seed=0)
    trajectory.final_answer = "Sofia \ud800"
    trajectory.answer_result = [{"name": "\udfff"}]
    trajectory.error = "ValueError: bad byte \ud83d"
    assert trajectory.final_answer == "Sofia \ufffd" and trajectory.answer_result == [{"name": "\ufffd"}]
    trajectory.steps = []
    json.loads(trajectory.model_dump_json())  # serializable: the store's commit cannot fail on it
    result = episode_result(error="x\ud800", details={"answer": "\udfff"})
    assert result.error == "x\ufffd" and result.details == {"answer": "\ufffd"}


@pytest.mark.parametrize("text", ["plain", "", "日本語", "tab\tand\nnewline"])
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert clean_text(text) == text
    assert clean_value({"k": [text]}) == {"k": [text]}
