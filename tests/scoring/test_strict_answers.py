"""Strict answer matching (the paper's protocol): structured records keyed by the original column names, order only
under ORDER BY, the paper's scalar / one-column post-processing, and prose never accepted; and how
score_trajectory picks the matcher."""

from __future__ import annotations

import json
from typing import Any

import pytest

from undertow.env_core.model import Action, Gold, Outcome, Scenario, Step, Trajectory, Turn
from undertow.scoring.answers import (
    UnscorableAnswer,
    answer_matches,
    depth,
    flatten,
    normalize_scalar,
    strict_answer_matches,
)
from undertow.scoring.trajectory import score_trajectory

# what a sqlfuncs function returns: records keyed by the column names SQLite gives the query's columns
GOLD = [{"title": "Salt Roads", "pages": 320}, {"title": "Andes", "pages": 540}]


def test_prose_that_lenient_matching_accepts_never_matches_strictly() -> None:
    prose = "The books are Salt Roads (320 pages) and Andes (540 pages)."
    assert answer_matches(prose, GOLD)
    assert not strict_answer_matches(prose, GOLD)
    # records wrapped in prose are still prose: strict matching does not dig structure out of text
    wrapped = "Here you go: " + json.dumps(GOLD)
    assert answer_matches(wrapped, GOLD) and not strict_answer_matches(wrapped, GOLD)


@pytest.mark.parametrize(
    "answer",
    [
        json.dumps(GOLD),  # CodeAct: json.dumps of the agent's `solution`
        json.dumps(list(reversed(GOLD))),  # no ORDER BY: rows are a multiset
        str(GOLD),  # a Python literal
        "```json\n" + json.dumps(GOLD) + "\n```",  # one code fence around the whole answer
        '[{"pages": 320.0, "title": "salt  roads"}, {"title": "ANDES", "pages": "540"}]',  # normalized values
        GOLD,  # a structured value, not text
    ],
)
def test_the_right_records_with_the_original_keys_match(answer: Any) -> None:
    assert strict_answer_matches(answer, GOLD, ordered=False)


@pytest.mark.parametrize(
    "records",
    [
        [{"Title": "Salt Roads", "pages": 320}, {"Title": "Andes", "pages": 540}],  # case counts: a renamed key
        [{"book": "Salt Roads", "pages": 320}, {"book": "Andes", "pages": 540}],  # renamed
        [{"title": "Salt Roads"}, {"title": "Andes"}],  # a column missing
        [{"title": "Salt Roads", "pages": 320, "id": 1}, {"title": "Andes", "pages": 540, "id": 3}],  # one too many
        [["Salt Roads", 320], ["Andes", 540]],  # rows without keys
        ["Salt Roads", 320, "Andes", 540],  # a flat list is only for a one-column gold
        [{"title": "Salt Roads", "pages": 320}],  # a row missing
        [{"title": "Salt Roads", "pages": 320}] * 2 + [{"title": "Andes", "pages": 540}],  # a row too many
    ],
)
def test_renamed_missing_or_keyless_columns_and_wrong_rows_do_not_match(records: list[Any]) -> None:
    assert not strict_answer_matches(json.dumps(records), GOLD)


def test_renamed_keys_are_what_lenient_matching_forgives() -> None:
    renamed = json.dumps([{"book": "Salt Roads", "n": 320}, {"book": "Andes", "n": 540}])
    assert answer_matches(renamed, GOLD) and not strict_answer_matches(renamed, GOLD)


def test_row_order_counts_only_under_order_by() -> None:
    swapped = json.dumps(list(reversed(GOLD)))
    assert strict_answer_matches(swapped, GOLD, ordered=False)
    assert not strict_answer_matches(swapped, GOLD, ordered=True)
    assert strict_answer_matches(json.dumps(GOLD), GOLD, ordered=True)
    # a flat list for a one-column gold follows the same rule
    titles = [{"title": "Salt Roads"}, {"title": "Andes"}]
    assert strict_answer_matches('["Andes", "Salt Roads"]', titles, ordered=False)
    assert not strict_answer_matches('["Andes", "Salt Roads"]', titles, ordered=True)


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("302000", [{"count(*)": 302000}], True),  # a bare number for a one-row, one-column gold
        ('"Sofia"', [{"name": "Sofia"}], True),  # CodeAct: solution = "Sofia"
        ("Sofia", [{"name": "Sofia"}], True),  # the whole answer text is the value
        ("3,000", [{"total": 3000}], True),
        ('{"name": "Sofia"}', [{"name": "Sofia"}], True),  # one record without its list
        ('["Sofia"]', [{"name": "Sofia"}], True),
        ("The answer is Sofia", [{"name": "Sofia"}], False),  # prose
        ("302000", [{"count(*)": 302000}, {"count(*)": 7}], False),  # a scalar is one row only
        ("302000", [{"city": "Oslo", "n": 302000}], False),  # ... of one column only
        ('["Oslo", "Lima"]', [{"city": "Oslo"}, {"city": "Lima"}], True),  # a flat list for a one-column gold
        ('["Oslo"]', [{"city": "Oslo"}, {"city": "Lima"}], False),
        ("[]", [], True),  # an empty gold matches only an empty list
        ("{}", [], False),
        ("nothing", [], False),
        (None, GOLD, False),
        ("  ", [{"name": ""}], False),  # an empty answer says nothing
    ],
)
def test_the_papers_post_processing(answer: str | None, gold: list[dict[str, Any]], expected: bool) -> None:
    assert strict_answer_matches(answer, gold) is expected


def test_a_gold_that_is_not_records_is_compared_value_by_value() -> None:
    assert strict_answer_matches("[1, 2]", [2, 1]) and not strict_answer_matches("[1, 2]", [2, 1], ordered=True)
    assert strict_answer_matches("7", 7) and not strict_answer_matches("seven is 7", 7)


# ---------------------------------------------------------------------------------------------------------------
# score_trajectory picks the matcher


def scenario() -> Scenario:
    return Scenario(id="q1", family="sqlfuncs", task="Which long books are there?", tools=[], gold=Gold(answer=GOLD))


def answered(text: str) -> Trajectory:
    return Trajectory(
        episode_id="e1",
        scenario_id="q1",
        model="m",
        setting="clean",
        seed=0,
        turns=[Turn(index=0, content=text)],
        steps=[Step(turn=0, action=Action(kind="final_answer", content=text))],
        final_answer=text,
        outcome=Outcome.scored,
    )


def test_score_trajectory_uses_the_strict_matcher_when_asked() -> None:
    prose = answered("Salt Roads with 320 pages, and Andes with 540 pages.")
    assert score_trajectory(prose, scenario(), False).solved  # lenient by default
    strict = score_trajectory(prose, scenario(), False, answers="strict")
    assert not strict.solved and not strict.correct and strict.score == 0.0
    records = answered(json.dumps(GOLD))
    assert score_trajectory(records, scenario(), False, answers="strict").correct
    with pytest.raises(ValueError, match="answers: expected 'lenient' or 'strict', got 'exact'"):
        score_trajectory(records, scenario(), False, answers="exact")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------------
# Answers a model can write to break a comparison (issue 29): numbers beyond float range, answers nested too deep


def test_numbers_beyond_float_range_compare_exactly_in_both_matchers() -> None:
    huge = 10**400
    for matches in (answer_matches, strict_answer_matches):
        assert matches(f"[{huge}]", [{"n": huge}])
        assert not matches(f"[{huge}]", [{"n": huge + 1}])
        assert not matches(f"[{huge}]", [{"n": 5}])
        assert matches("[1" + "0" * 400 + "]", [{"n": huge}])
    # past 2**53 a float would merge neighbours; exact integers keep them apart
    assert normalize_scalar(2**53 + 1) != normalize_scalar(2**53)
    assert normalize_scalar("9,007,199,254,740,993") == normalize_scalar(2**53 + 1)
    assert normalize_scalar("12345678901234567.123456") == "12345678901234567.1235"
    assert normalize_scalar(3) == normalize_scalar(3.0) == normalize_scalar("3.00") == "3"  # unchanged below
    assert answer_matches(f"The total is {huge}.", [{"n": huge}])  # prose, lenient


def test_numbers_of_any_length_compare_exactly_and_never_raise() -> None:
    long = "1" + "0" * 6000  # past the 4,300 digits Python converts between text and int
    assert normalize_scalar(long) == long and normalize_scalar(long) != normalize_scalar(long[:-1] + "1")
    assert answer_matches(f"It is {long}.", [{"n": long}]) and not answer_matches(f"It is {long}.", [{"n": 5}])
    assert normalize_scalar(10**5000) == "[an integer of about 5,001 digits: cut]"  # too long to print: no gold is
    assert not answer_matches([10**5000], [{"n": 5}])


def test_an_answer_nested_too_deep_is_unscorable() -> None:
    deep = "[" * 600 + "1" + "]" * 600  # json.loads reads it; the normalizers must not recurse through it
    for matches in (answer_matches, strict_answer_matches):
        with pytest.raises(UnscorableAnswer, match="nested deeper than 64 levels"):
            matches(deep, [{"n": 1}])
    assert depth([[1], {"a": [[2]]}]) == 4 and depth(7) == 0


def test_flatten_keeps_order_without_recursion() -> None:
    assert flatten([1, [2, {"a": 3, "b": [4]}], (5,)]) == [1, 2, 3, 4, 5]
    deep: list[object] = [1]
    for _ in range(50_000):
        deep = [deep]
    assert flatten(deep) == [1]


def test_tool_call_arguments_of_any_size_are_compared_without_raising() -> None:
    """Required and forbidden calls compare the model's arguments: a 6,000-digit number there (a ReAct call found by
    the fuzz) is simply another value."""
    from undertow.env_core.model import CallPattern, ToolCall
    from undertow.scoring.trajectory import call_matches

    pattern = CallPattern(tool="lookup", arguments={"n": 5})
    for value in ("1" + "0" * 6000, 10**5000, [10**400], {"deep": [[["x"]]]}):
        assert not call_matches(ToolCall(id="c", name="lookup", arguments={"n": value}), pattern)
    assert call_matches(ToolCall(id="c", name="lookup", arguments={"n": "5.0"}), pattern)


# ---------------------------------------------------------------------------------------------------------------
# Tie runs: rows with equal sort keys may come in any order, the runs in theirs (issue 35)

# ORDER BY pages DESC: the two 540-page books tie (run 0), the 320-page one follows (run 1)
TIED = [
    {"title": "Andes", "pages": 540},
    {"title": "Rift", "pages": 540},
    {"title": "Salt Roads", "pages": 320},
]
TIED_RUNS = [0, 0, 1]


def test_rows_of_one_tie_run_may_come_in_any_order_in_both_matchers() -> None:
    permuted = json.dumps([TIED[1], TIED[0], TIED[2]])  # the tied pair swapped: an equally valid order
    for matches in (answer_matches, strict_answer_matches):
        assert matches(permuted, TIED, ordered=True, tie_groups=TIED_RUNS)
        assert not matches(permuted, TIED, ordered=True)  # without the runs, today's exact order
        assert matches(json.dumps(TIED), TIED, ordered=True, tie_groups=TIED_RUNS)


def test_a_row_moved_across_tie_runs_does_not_match() -> None:
    moved = json.dumps([TIED[2], TIED[0], TIED[1]])  # the 320-page book first: the runs' order broken
    for matches in (answer_matches, strict_answer_matches):
        assert not matches(moved, TIED, ordered=True, tie_groups=TIED_RUNS)
        assert matches(moved, TIED, ordered=False)  # as a multiset it holds the rows


def test_lenient_tie_runs_cut_the_values_into_rows_as_wide_as_the_golds() -> None:
    # values alone, the tied rows swapped: still the right rows in a valid order
    assert answer_matches('[["Rift", 540], ["Andes", 540], ["Salt Roads", 320]]', TIED, True, TIED_RUNS)
    # the same values, but mixed across rows: "Rift" with 320 is no gold row
    assert not answer_matches('[["Rift", 320], ["Andes", 540], ["Salt Roads", 540]]', TIED, True, TIED_RUNS)
    assert not answer_matches('[["Rift", 540], ["Andes", 540]]', TIED, True, TIED_RUNS)  # a row missing


def test_strict_tie_runs_for_a_flat_list_and_a_gold_of_values() -> None:
    titles = [{"title": t["title"]} for t in TIED]
    assert strict_answer_matches('["Rift", "Andes", "Salt Roads"]', titles, True, TIED_RUNS)
    assert not strict_answer_matches('["Salt Roads", "Andes", "Rift"]', titles, True, TIED_RUNS)
    assert strict_answer_matches("[2, 1, 3]", [1, 2, 3], True, [0, 0, 1])
    assert not strict_answer_matches("[1, 3, 2]", [1, 2, 3], True, [0, 0, 1])


def test_tie_groups_that_do_not_fit_the_gold_are_refused_with_a_message() -> None:
    for matches in (answer_matches, strict_answer_matches):
        with pytest.raises(ValueError, match="tie_groups has 2 entries for 3 gold rows"):
            matches(json.dumps(TIED), TIED, ordered=True, tie_groups=[0, 0])


def test_score_trajectory_passes_the_golds_tie_runs() -> None:
    tied = scenario().model_copy(update={"gold": Gold(answer=TIED, ordered=True, tie_groups=TIED_RUNS)})
    swapped = answered(json.dumps([TIED[1], TIED[0], TIED[2]]))
    assert score_trajectory(swapped, tied, False).solved
    assert score_trajectory(swapped, tied, False, answers="strict").solved
    moved = answered(json.dumps([TIED[2], TIED[0], TIED[1]]))
    assert not score_trajectory(moved, tied, False).solved
    strict = tied.model_copy(update={"gold": Gold(answer=TIED, ordered=True)})  # no runs: the exact order
    assert not score_trajectory(swapped, strict, False).solved
