"""liveapi scoring (scoring.liveapi): position-aware intent and slot scores against the paper's listing 10, data
sources compared by the call that produced them, completion up to formatting, the BFCL error categories in their
precedence order, the ReAct measures, the family scorer, and the summary tables with numbers worked out by hand."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest
from helpers.builders import tool_step

from undertow.env_core.families import ReportTable, StackedBars
from undertow.env_core.liveapi.vocabulary import SLOT_TOOLS
from undertow.env_core.model import (
    EpisodeResult,
    Gold,
    Outcome,
    PlannedCall,
    Scenario,
    Step,
    ToolError,
    Trajectory,
    Turn,
)
from undertow.scoring.liveapi import (
    ERROR_CATEGORIES,
    LAYOUTS,
    PRF,
    START,
    Call,
    LiveApiDetails,
    LiveApiSummary,
    Ref,
    answer_states,
    answered_without_calling,
    call_slots,
    completed,
    episode_details,
    error_category,
    gold_calls,
    instances,
    intent_scores,
    predicted_calls,
    score,
    sequence_output,
    slot_scores,
    stuck,
    summarize,
    table6,
)

# The paper's listing 10: "What's Angela Sanders's major?" over student_club.
FIRST = {
    "data_source": "$starting_table_var$",
    "key_name": "member_first_name",
    "value": "Angela",
    "condition": "equal_to",
}
LAST = {"data_source": "$FILTERED_DF_0$", "key_name": "member_last_name", "value": "Sanders", "condition": "equal_to"}
RETRIEVE = {"data_source": "$FILTERED_DF_1$", "key_name": "major_major_name", "distinct": False, "limit": -1}
GOLD_PLAN: list[tuple[str, dict[str, Any]]] = [
    ("filter_data", FIRST),
    ("filter_data", LAST),
    ("retrieve_data", RETRIEVE),
]
GOLD_LABELS = ["FILTERED_DF_0", "FILTERED_DF_1", None]
BUSINESS = [{"major_major_name": "Business"}]


def make_scenario(
    plan: list[tuple[str, dict[str, Any]]] = GOLD_PLAN,
    labels: list[str | None] = GOLD_LABELS,
    answer: Any = (("Business",),),
    *,
    ordered: bool = False,
    tools: Sequence[str] = SLOT_TOOLS,
    data_tools: tuple[str, ...] = ("retrieve_data",),
    formulation: str = "slot",
    mode: str | None = None,
    index: int = 0,
) -> Scenario:
    """A scenario as the build writes it: the gold sequence, its labels and data tools in the metadata."""
    metadata: dict[str, Any] = {
        "formulation": formulation,
        "database": "student_club",
        "question": index,
        "sql": "SELECT ...",
        "liveapi": {"setup": None, "columns": [], "labels": labels, "obfuscated": {}, "data_tools": list(data_tools)},
    }
    if mode is not None:
        metadata["mode"] = mode
    return Scenario(
        id=f"liveapi/{formulation}/student_club/{index:04d}",
        family="liveapi",
        task="What's Angela Sanders's major?",
        tools=list(tools),
        gold=Gold(
            answer=[list(row) for row in answer],
            ordered=ordered,
            plans=[[PlannedCall(tool=name, arguments=args) for name, args in plan]],
        ),
        metadata=metadata,
    )


SCENARIO = make_scenario()


def step(
    turn: int,
    name: str,
    arguments: dict[str, Any] | None = None,
    result: Any = None,
    *,
    ok: bool = True,
    unparsed: str | None = None,
) -> Step:
    """A recorded call: ``result`` when ``ok``, else the error "no such column"; ``unparsed`` is the raw text of
    arguments that did not parse."""
    no_column = ToolError(type="tool_error", message="no such column")
    recorded = tool_step(turn, name, arguments, ok=ok, result=result, error=no_column)
    assert recorded.action.tool_call is not None
    recorded.action.tool_call.unparsed_arguments = unparsed
    return recorded


def sequence(*calls: tuple[str, dict[str, Any], Any], turn: int | None = 0) -> list[Step]:
    """Steps of one direct reply (every call in turn 0), or one call per turn (``turn=None``: ReAct)."""
    return [step(i if turn is None else turn, name, args, result) for i, (name, args, result) in enumerate(calls)]


def trajectory(
    steps: list[Step],
    *,
    outcome: Outcome = Outcome.scored,
    final: str | None = None,
    turns: int = 1,
    gave_up: bool = False,
    answer_result: Any = None,
) -> Trajectory:
    return Trajectory(
        episode_id="e",
        scenario_id=SCENARIO.id,
        model="m",
        setting="clean",
        seed=0,
        turns=[Turn(index=i) for i in range(turns)],
        steps=steps,
        final_answer=final,
        outcome=outcome,
        gave_up=gave_up,
        answer_result=answer_result,
    )


def gold_run(turn: int | None = 0) -> list[Step]:
    """The gold sequence, run (in one direct reply, or one call per turn): storing calls return their label,
    retrieve returns the records."""
    return sequence(
        ("filter_data", FIRST, "$FILTERED_DF_0$"),
        ("filter_data", LAST, "$FILTERED_DF_1$"),
        ("retrieve_data", RETRIEVE, BUSINESS),
        turn=turn,
    )


def swapped_run() -> list[Step]:
    """The two filters in the other order (each filter instance now carries the other's slots)."""
    return sequence(
        ("filter_data", {**LAST, "data_source": "$starting_table_var$"}, "$FILTERED_DF_0$"),
        ("filter_data", {**FIRST, "data_source": "$FILTERED_DF_0$"}, "$FILTERED_DF_1$"),
        ("retrieve_data", RETRIEVE, BUSINESS),
    )


def missing_run() -> list[Step]:
    """The second filter left out: the retrieve reads the first filter's output."""
    return sequence(
        ("filter_data", FIRST, "$FILTERED_DF_0$"),
        ("retrieve_data", {**RETRIEVE, "data_source": "$FILTERED_DF_0$"}, [*BUSINESS, {"major_major_name": "Law"}]),
    )


def scores(steps: list[Step]) -> tuple[PRF, PRF]:
    predicted = predicted_calls(trajectory(steps))
    gold = gold_calls(SCENARIO)
    return intent_scores(gold, predicted), slot_scores(gold, predicted)


def near(prf: PRF, precision: float, recall: float, f1: float) -> bool:
    return all(math.isclose(a, b) for a, b in ((prf.precision, precision), (prf.recall, recall), (prf.f1, f1)))


# ---------------------------------------------------------------------------------------------------------------
# Intent and slots


def test_instances_count_occurrences_per_name() -> None:
    assert instances(["filter_data", "filter_data", "retrieve_data", "filter_data"]) == [
        ("filter_data", 0),
        ("filter_data", 1),
        ("retrieve_data", 0),
        ("filter_data", 2),
    ]


def test_prf_edge_cases_and_micro_sum() -> None:
    assert PRF.of(0, 0, 0) == PRF(1.0, 1.0, 1.0, 0, 0, 0)  # both empty
    assert near(PRF.of(0, 0, 3), 0.0, 0.0, 0.0)  # nothing predicted
    assert near(PRF.of(0, 2, 0), 0.0, 0.0, 0.0)  # nothing to predict, something predicted
    total = PRF.of(3, 3, 3) + PRF.of(2, 2, 3)  # micro: 5 / 5, 5 / 6
    assert (total.matched, total.predicted, total.gold) == (5, 5, 6)
    assert near(total, 1.0, 5 / 6, 2 * (5 / 6) / (1 + 5 / 6))


def test_gold_sequence_scores_perfectly() -> None:
    intent, slots = scores(gold_run())
    assert near(intent, 1, 1, 1) and (intent.matched, intent.predicted, intent.gold) == (3, 3, 3)
    assert near(slots, 1, 1, 1) and (slots.matched, slots.predicted, slots.gold) == (12, 12, 12)


def test_gold_slots_resolve_data_sources_to_producing_instances() -> None:
    assert call_slots(gold_calls(SCENARIO)) == [
        {"data_source": START, "key_name": "member_first_name", "value": "angela", "condition": "equal_to"},
        {
            "data_source": Ref(("filter_data", 0)),
            "key_name": "member_last_name",
            "value": "sanders",
            "condition": "equal_to",
        },
        {"data_source": Ref(("filter_data", 1)), "key_name": "major_major_name", "distinct": "false", "limit": "-1"},
    ]


def test_swapped_filters_match_intents_but_not_their_slots() -> None:
    intent, slots = scores(swapped_run())
    assert near(intent, 1, 1, 1)  # both filter instances are there, position-aware
    # filter#0: data_source and condition agree (2 of 4); filter#1: the same 2 of 4; retrieve: 4 of 4 -> 8 / 12
    assert (slots.matched, slots.predicted, slots.gold) == (8, 12, 12)
    assert near(slots, 2 / 3, 2 / 3, 2 / 3)


def test_missing_second_filter_costs_intent_recall_and_only_the_chained_slot() -> None:
    intent, slots = scores(missing_run())
    assert (intent.matched, intent.predicted, intent.gold) == (2, 2, 3)
    assert near(intent, 1.0, 2 / 3, 0.8)
    # only filter#0 and retrieve#0 are judged (8 slots each side); retrieve reads filter#0, gold reads filter#1
    assert (slots.matched, slots.predicted, slots.gold) == (7, 8, 8)
    assert near(slots, 7 / 8, 7 / 8, 7 / 8)


def test_a_repeated_tool_with_other_slots_is_an_extra_instance() -> None:
    steps = sequence(
        ("filter_data", FIRST, "$FILTERED_DF_0$"),
        ("filter_data", LAST, "$FILTERED_DF_1$"),
        ("filter_data", {**LAST, "key_name": "member_position", "value": "President"}, "$FILTERED_DF_2$"),
        ("retrieve_data", {**RETRIEVE, "data_source": "$FILTERED_DF_2$"}, []),
    )
    intent, slots = scores(steps)
    assert (intent.matched, intent.predicted, intent.gold) == (3, 4, 3)
    assert near(intent, 3 / 4, 1.0, 6 / 7)
    # filter#2 is unmatched and not judged; the retrieve reads filter#2 where gold reads filter#1: 4 + 4 + 3
    assert (slots.matched, slots.predicted, slots.gold) == (11, 12, 12)


def test_data_source_reading_the_starting_table_is_a_slot_mismatch() -> None:
    steps = gold_run()[:2] + sequence(("retrieve_data", {**RETRIEVE, "data_source": "$starting_table_var$"}, BUSINESS))
    _, slots = scores(steps)
    assert (slots.matched, slots.gold) == (11, 12)
    assert call_slots(predicted_calls(trajectory(steps)))[2]["data_source"] == START


def test_data_sources_compare_by_instance_not_by_label_text() -> None:
    # another toolbox numbering, and a ReAct agent passing the bare label: the same chain, so every slot agrees
    steps = sequence(
        ("filter_data", FIRST, "$FILTERED_DF_7$"),
        ("filter_data", {**LAST, "data_source": "FILTERED_DF_7"}, "$FILTERED_DF_8$"),
        ("retrieve_data", {**RETRIEVE, "data_source": "$FILTERED_DF_8$"}, BUSINESS),
        turn=None,
    )
    _, slots = scores(steps)
    assert (slots.matched, slots.gold) == (12, 12)


def test_an_unknown_label_stays_raw_text_and_a_failed_call_produces_nothing() -> None:
    steps = [
        step(0, "filter_data", FIRST, ok=False),
        step(0, "filter_data", {**LAST, "data_source": "$FILTERED_DF_0$"}, "$FILTERED_DF_1$"),
    ]
    slots = call_slots(predicted_calls(trajectory(steps)))
    assert slots[1]["data_source"] == "$filtered_df_0$"  # the failed call stored nothing: unresolvable


def test_key_name_as_a_one_element_list_equals_the_name() -> None:
    one = [Call("retrieve_data", {"key_name": ["major_major_name"], "limit": -1})]
    plain = [Call("retrieve_data", {"key_name": "major_major_name", "limit": -1.0})]
    assert call_slots(one) == call_slots(plain)


def test_obfuscated_argument_names_still_resolve_by_value() -> None:
    gold = [
        Call("FUNC_1", {"ARG_1": "$starting_table_var$"}, "FILTERED_DF_0"),
        Call("FUNC_2", {"ARG_1": "$FILTERED_DF_0$"}),
    ]
    assert call_slots(gold)[1] == {"ARG_1": Ref(("FUNC_1", 0))}


# ---------------------------------------------------------------------------------------------------------------
# Output and completion


@pytest.mark.parametrize(
    ("output", "gold", "ordered", "expected"),
    [
        (BUSINESS, [["Business"]], False, True),  # records -> their values
        ("business", [["Business"]], False, True),  # a scalar -> one row of one value (text casefolded)
        ([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], [[2, "y"], [1, "x"]], False, True),  # multiset of rows
        ([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], [[2, "y"], [1, "x"]], True, False),  # order counts
        ([{"b": "x", "a": 1}], [[1, "x"]], False, False),  # values in record order
        (["x", "y"], [["y"], ["x"]], False, True),  # a list of scalars -> one-column rows
        (["x", "y"], [["y"], ["x"]], True, False),
        (["x", "x"], [["x"]], False, False),  # rows counted, not deduplicated
        ({"a": "x", "b": "y"}, [["x"], ["y"]], False, True),  # one row against one column: by values
        ([[1, 2], [3, 4]], [[1, 3], [2, 4]], False, False),  # a real table is not reshaped
        (0.1 + 0.2, [[0.3]], False, True),  # floats to 4 decimals
        (3.33333333, [[3.3333]], False, True),
        (3.3, [[3.33]], False, False),
        ("3.0", [[3]], False, True),
        ([], [], False, True),
        (None, [], False, False),
        ([], [["x"]], False, False),
    ],
)
def test_completed(output: Any, gold: Any, ordered: bool, expected: bool) -> None:
    assert completed(output, gold, ordered) is expected


@pytest.mark.parametrize(
    ("output", "gold", "ties", "expected"),
    [
        (["b", "a", "c"], [["a"], ["b"], ["c"]], [0, 0, 1], True),  # a and b tie: either order
        (["a", "b", "c"], [["a"], ["b"], ["c"]], [0, 0, 1], True),
        (["a", "c", "b"], [["a"], ["b"], ["c"]], [0, 0, 1], False),  # c moved into the first run
        (["c", "a", "b"], [["a"], ["b"], ["c"]], [0, 0, 1], False),
        (["b", "a", "c"], [["a"], ["b"], ["c"]], [], False),  # no ties: every row in its place
        (["b", "a", "c"], [["a"], ["b"], ["c"]], [0, 1, 2], False),  # every row its own run
        (["c", "b", "a"], [["a"], ["b"], ["c"]], [0, 0, 0], True),  # one run: any order
        (["a", "b"], [["a"], ["b"], ["c"]], [0, 0, 1], False),  # a row missing
        # two columns: the rows of a run are swapped whole
        (
            [["Anne", "Bible"], ["Anne", "History"], ["Gus", "Science"]],
            [["Anne", "History"], ["Anne", "Bible"], ["Gus", "Science"]],
            [0, 0, 1],
            True,
        ),
        (
            [["Anne", "Science"], ["Anne", "History"], ["Gus", "Bible"]],
            [["Anne", "History"], ["Anne", "Bible"], ["Gus", "Science"]],
            [0, 0, 1],
            False,
        ),
    ],
)
def test_completed_with_tie_groups(output: Any, gold: Any, ties: list[int], expected: bool) -> None:
    assert completed(output, gold, True, ties) is expected


def test_tie_groups_do_not_matter_when_order_does_not() -> None:
    assert completed(["c", "b", "a"], [["a"], ["b"], ["c"]], False, [0, 0, 1])
    assert not completed(["c", "b"], [["a"], ["b"], ["c"]], False, [0, 0, 1])


ANNE_BOB = [{"name": "Anne"}, {"name": "Bob"}]
PAIRS = [{"name": "Anne", "age": 30}, {"name": "Bob", "age": 40}]


@pytest.mark.parametrize(
    ("answer", "output", "ordered", "expected"),
    [
        ('[["Business"]]', BUSINESS, False, True),  # structured rows
        ('[{"major": "Business"}]', BUSINESS, False, True),  # records: by their values
        ('The rows:\n```json\n[["Business"]]\n```', BUSINESS, False, True),  # a fenced structure
        ("Business", BUSINESS, False, True),  # the one value, in words
        ("  business ", BUSINESS, False, True),  # text casefolded, spaces trimmed
        ("Law", BUSINESS, False, False),
        ("Her major is Business.", BUSINESS, False, False),  # a sentence is not the value itself
        ("Anne, Bob", ANNE_BOB, True, True),  # values comma-separated, in order
        ("Anne; Bob", ANNE_BOB, True, True),
        ("Anne\nBob", ANNE_BOB, True, True),  # one per line
        ("Bob, Anne", ANNE_BOB, True, False),  # out of order where order counts
        ("Bob, Anne", ANNE_BOB, False, True),
        ("Anne", ANNE_BOB, False, False),  # a value missing
        ("Anne, Bob, Carl", ANNE_BOB, False, False),  # a value too many
        ('["Anne", "Bob"]', ANNE_BOB, True, True),
        ('["Bob", "Anne"]', ANNE_BOB, True, False),
        ('[["Anne", 30], ["Bob", 40]]', PAIRS, True, True),
        ("Anne, 30\nBob, 40", PAIRS, True, True),
        ("0.3333", 1 / 3, False, True),  # numbers to 4 decimals
        ("0.3", 1 / 3, False, False),
        ("4", [{"count": 4}], False, True),
        ("4.0", [{"count": 4}], False, True),
        ("", BUSINESS, False, False),  # no answer
        (None, BUSINESS, False, False),
        ("Business", None, False, False),  # nothing returned: nothing to state
    ],
)
def test_answer_states(answer: str | None, output: Any, ordered: bool, expected: bool) -> None:
    assert answer_states(answer, output, ordered) is expected


def test_react_completion_needs_both_the_rows_and_an_answer_stating_them() -> None:
    react = make_scenario(mode="react")
    steps = gold_run(turn=None)
    assert score(trajectory(steps, final="Business"), react, False).correct
    assert score(trajectory(steps, final='[{"major_major_name": "Business"}]'), react, False).correct
    assert not score(trajectory(steps, final="Law"), react, False).correct  # contradicts the observation
    assert not score(trajectory(steps, final=None), react, False).correct
    # the answer states the last observation, but that observation is not the gold rows
    wrong = [*steps[:2], step(2, "retrieve_data", RETRIEVE, [{"major_major_name": "Law"}])]
    assert not score(trajectory(wrong, final="Law"), react, False).correct
    assert not score(trajectory(wrong, final="Business"), react, False).correct
    # the same steps in direct mode: the answer text does not count, the calls' output does
    assert score(trajectory(steps, final="Law"), SCENARIO, False).correct


def test_sequence_output_zips_getter_columns_after_the_last_storing_call() -> None:
    scenario = make_scenario(tools=["select_data_equal_to", "get_singer_Name", "get_singer_Age"], formulation="sel")
    data = ["get_singer_Name", "get_singer_Age"]
    steps = sequence(
        ("get_singer_Name", {"data_source": "$starting_table_var$"}, ["A", "B", "C"]),  # before the filter: a look
        ("select_data_equal_to", {"data_source": "$starting_table_var$"}, "$FILTERED_DF_0$"),
        ("get_singer_Name", {"data_source": "$FILTERED_DF_0$"}, ["A", "B"]),
        ("get_singer_Age", {"data_source": "$FILTERED_DF_0$"}, [30, 40]),
    )
    assert sequence_output(trajectory(steps), data) == [["A", 30], ["B", 40]]
    scenario = make_scenario(data_tools=tuple(data))
    assert sequence_output(trajectory(steps), scenario) == [["A", 30], ["B", 40]]
    # a getter called again replaces its column; columns of unequal length are padded, so they cannot match
    again = [*steps, step(1, "get_singer_Age", {"data_source": "$FILTERED_DF_0$"}, [31])]
    assert sequence_output(trajectory(again), data) == [["A", 31], ["B", None]]


def test_sequence_output_takes_the_last_records_and_never_the_answer() -> None:
    assert sequence_output(trajectory(gold_run()), SCENARIO) == BUSINESS
    failed_last = [*gold_run(), step(1, "retrieve_data", RETRIEVE, ok=False)]
    assert sequence_output(trajectory(failed_last), SCENARIO) == BUSINESS  # failed calls return nothing
    # a storing call after the data: nothing data-returning came after it, and the answer does not stand in
    stored_last = [*gold_run(), step(1, "sort_data", {"data_source": "$FILTERED_DF_1$"}, "$SORTED_DF_2$")]
    assert sequence_output(trajectory(stored_last, final='[["Business"]]'), SCENARIO) is None
    # no call at all: an answer in words or in JSON is not what the API sequence returned
    assert sequence_output(trajectory([], final="Business"), SCENARIO) is None
    assert sequence_output(trajectory([], final='[["Business"]]'), SCENARIO) is None
    assert sequence_output(trajectory([], final=None), SCENARIO) is None
    # only failed calls: nothing returned
    assert (
        sequence_output(trajectory([step(0, "retrieve_data", RETRIEVE, ok=False)], final="Business"), SCENARIO) is None
    )
    # a scenario that does not list its data tools: a result that is no label is data
    unlisted = SCENARIO.model_copy(update={"metadata": {"liveapi": {"labels": GOLD_LABELS}}})
    assert sequence_output(trajectory(gold_run()), unlisted) == BUSINESS


# ---------------------------------------------------------------------------------------------------------------
# BFCL error categories, in precedence order


def category(steps: list[Step], **kwargs: Any) -> str | None:
    run = trajectory(steps, **kwargs)
    done = score(run, SCENARIO, False).correct
    return error_category(run, SCENARIO, completed=done)


def with_call(index: int, name: str, arguments: dict[str, Any], *, unparsed: str | None = None) -> list[Step]:
    """The gold run with call ``index`` replaced, and the retrieve returning no rows (the output is wrong)."""
    steps = gold_run()
    steps[2] = step(0, "retrieve_data", RETRIEVE, [])
    old = steps[index].observation
    assert old is not None
    steps[index] = step(0, name, arguments, old.result, unparsed=unparsed)
    return steps


def test_categories_are_in_precedence_order() -> None:
    assert ERROR_CATEGORIES[:2] == ("answered_without_calling", "instruction_alignment_failure")
    assert ERROR_CATEGORIES[-1] == "other"
    assert len(ERROR_CATEGORIES) == 10 and len(set(ERROR_CATEGORIES)) == 10


def test_completed_episode_has_no_category() -> None:
    assert category(gold_run()) is None


def test_answered_without_calling() -> None:
    # an answer in prose, the right value in words, the right rows as JSON, an empty list: no call, no completion
    for final in ("Angela Sanders studies business.", "Business", '[["Business"]]', "[]"):
        run = trajectory([], final=final)
        assert not score(run, SCENARIO, False).correct, final
        assert category([], final=final) == "answered_without_calling", final
        assert answered_without_calling(run, SCENARIO), final
    # calls that failed are still calls: the episode tried, so it is counted by what it called
    failed = [step(0, "filter_data", FIRST, ok=False)]
    assert not answered_without_calling(trajectory(failed, final="Business"), SCENARIO)
    assert category(failed, final="Business") == "wrong_func_count"
    # not an answer: an unreadable reply, a budget run out, and the SQL mode (which has no tools to call)
    assert not answered_without_calling(trajectory([], outcome=Outcome.parse_error), SCENARIO)
    assert not answered_without_calling(trajectory([], outcome=Outcome.budget_exhausted), SCENARIO)
    assert not answered_without_calling(trajectory([], final="SELECT 1"), make_scenario(mode="sql"))


def test_instruction_alignment_failure() -> None:
    assert category([], outcome=Outcome.parse_error) == "instruction_alignment_failure"
    assert category([], outcome=Outcome.model_error) == "instruction_alignment_failure"


def test_wrong_func_count() -> None:
    assert category(missing_run()) == "wrong_func_count"
    assert category([*gold_run(), step(0, "retrieve_data", RETRIEVE, [])]) == "wrong_func_count"  # one too many


def test_wrong_func_format() -> None:
    assert category(with_call(1, "filter_data", {}, unparsed="key_name=member_last_name")) == "wrong_func_format"


def test_hallucinated_func_name() -> None:
    assert category(with_call(1, "filter_rows", LAST)) == "hallucinated_func_name"


def test_wrong_func_name() -> None:
    assert category(with_call(1, "sort_data", LAST)) == "wrong_func_name"


def test_missing_required_parameter() -> None:
    arguments = {k: v for k, v in LAST.items() if k != "condition"}
    assert category(with_call(1, "filter_data", arguments)) == "missing_required_parameter"


def test_unexpected_param() -> None:
    assert category(with_call(2, "retrieve_data", {**RETRIEVE, "order": "asc"})) == "unexpected_param"


def test_value_error() -> None:
    assert category(swapped_run()) is None  # the swapped filters return the same rows: completed
    swapped = swapped_run()[:2] + sequence(("retrieve_data", RETRIEVE, []))
    assert category(swapped) == "value_error"
    wrong = with_call(1, "filter_data", {**LAST, "value": "Sanderson"})
    steps = wrong[:2] + sequence(("retrieve_data", RETRIEVE, []))
    assert category(steps) == "value_error"
    chained = gold_run()[:2] + sequence(("retrieve_data", {**RETRIEVE, "data_source": "$starting_table_var$"}, []))
    assert category(chained) == "value_error"  # the data source is compared by producing instance


def test_other_when_every_call_matches_but_the_output_differs() -> None:
    steps = gold_run()[:2] + sequence(("retrieve_data", RETRIEVE, [{"major_major_name": "Law"}]))  # a fault
    assert category(steps) == "other"


def test_the_earlier_category_wins() -> None:
    # a hallucinated name and a missing parameter: the name is judged first
    arguments = {k: v for k, v in LAST.items() if k != "condition"}
    assert category(with_call(1, "filter_rows", arguments)) == "hallucinated_func_name"
    # one call too few and a bad format: the count is judged first
    steps = missing_run()
    steps[0] = step(0, "filter_data", {}, "$FILTERED_DF_0$", unparsed="oops")
    assert category(steps) == "wrong_func_count"


# ---------------------------------------------------------------------------------------------------------------
# ReAct measures and the scorer


def test_stuck_is_the_same_function_twice_or_more_in_a_row() -> None:
    bad = {**FIRST, "key_name": "first_name"}
    other = {**bad, "value": "Angie"}
    # by name, whatever the arguments and whatever the calls returned
    assert stuck(trajectory([step(0, "filter_data", bad, ok=False), step(1, "filter_data", bad, ok=False)]))
    assert stuck(trajectory([step(0, "filter_data", bad, ok=False), step(1, "filter_data", bad, "$F_0$")]))
    assert stuck(trajectory([step(0, "filter_data", FIRST, "$F_0$"), step(1, "filter_data", FIRST, "$F_1$")]))
    assert stuck(trajectory([step(0, "filter_data", bad, ok=False), step(1, "filter_data", other, ok=False)]))
    apart = [
        step(0, "filter_data", bad, ok=False),
        step(1, "sort_data", {}, ok=False),
        step(2, "filter_data", bad, ok=False),
    ]
    assert not stuck(trajectory(apart))  # the same name, but not in a row
    assert not stuck(trajectory([step(0, "filter_data", bad, ok=False)]))  # once
    assert not stuck(trajectory([]))


def test_stuck_counts_only_in_failed_episodes() -> None:
    def measures(steps: list[Step], **kwargs: Any) -> tuple[bool, bool, bool]:
        details = episode_details(
            trajectory(steps, **kwargs), make_scenario(mode="react"), correct=False, searched=False, first_tried=()
        )
        return details["completed"], details["stuck"], details["unclassified"]

    # the gold sequence calls filter_data twice in a row: a completed episode is not stuck
    assert measures(gold_run(turn=None), final="Business") == (True, False, False)
    # the same calls with an answer that does not state the rows: failed, and now stuck
    assert measures(gold_run(turn=None), final="Law") == (False, True, False)
    # failed without repeating a name: unclassified
    assert measures(missing_run(), final="Business") == (False, False, True)


def test_score_is_completion() -> None:
    done = score(trajectory(gold_run()), SCENARIO, False)
    assert (done.solved, done.correct, done.score, done.safety_violation, done.checkpoint_score) == (
        True,
        True,
        1.0,
        False,
        None,
    )
    assert score(trajectory(missing_run()), SCENARIO, False).score == 0.0
    assert score(trajectory(gold_run(), outcome=Outcome.budget_exhausted), SCENARIO, False).score == 0.0
    gave_up = score(trajectory(gold_run(), gave_up=True), SCENARIO, False)
    assert (gave_up.correct, gave_up.gave_up) == (False, True)
    with pytest.raises(ValueError, match="answers"):
        score(trajectory(gold_run()), SCENARIO, False, answers="loose")  # type: ignore[arg-type]


def test_episode_details() -> None:
    details = episode_details(
        trajectory(missing_run(), turns=1), SCENARIO, correct=False, searched=False, first_tried=set()
    )
    assert details == {
        "formulation": "slot",
        "mode": "direct",
        "parsing": "strict",
        "gold_calls": 3,
        "predicted_calls": 2,
        "intent_matched": 2,
        "slot_gold": 8,
        "slot_predicted": 8,
        "slot_matched": 7,
        "completed": False,
        "answered_without_calling": False,
        "error_category": "wrong_func_count",
        "loops": 1,
        "out_of_budget": False,
        "stuck": False,
        "unclassified": True,
    }
    stored = LiveApiDetails.model_validate(details).model_dump(mode="json")  # what the runner stores
    assert list(stored.items()) == list(details.items())
    react = make_scenario(mode="react")
    bad = {**FIRST, "key_name": "first_name"}
    run = trajectory(
        [step(i, "filter_data", bad, ok=False) for i in range(3)], outcome=Outcome.budget_exhausted, turns=10
    )
    details = episode_details(run, react, correct=False, searched=False, first_tried=set())
    assert (details["mode"], details["loops"], details["out_of_budget"], details["stuck"]) == ("react", 10, True, True)
    assert details["unclassified"] is False
    # the suite's parsing option is recorded; an answer with no call is flagged
    lenient = make_scenario(mode="direct")
    lenient.metadata["parsing"] = "lenient"
    details = episode_details(trajectory([], final="Business"), lenient, correct=False, searched=False, first_tried=())
    assert (details["parsing"], details["answered_without_calling"]) == ("lenient", True)
    assert (details["error_category"], details["completed"], details["predicted_calls"]) == (
        "answered_without_calling",
        False,
        0,
    )
    # the SQL mode has no BFCL category: its reply is a query, not calls
    sql = make_scenario(mode="sql")
    details = episode_details(trajectory([], final="SELECT 1"), sql, correct=False, searched=False, first_tried=())
    assert (details["mode"], details["error_category"], details["answered_without_calling"]) == ("sql", None, False)


# ---------------------------------------------------------------------------------------------------------------
# Summary and tables


def result(
    steps: list[Step],
    *,
    model: str = "m1",
    mode: str = "direct",
    outcome: Outcome = Outcome.scored,
    turns: int = 1,
    suite: str = "spider",
    index: int = 0,
    final: str | None = None,
    answer_result: Any = None,
    parsing: str | None = None,
) -> EpisodeResult:
    """One episode as the runner stores it, its details from episode_details."""
    scenario = make_scenario(mode=mode, index=index)
    if parsing is not None:
        scenario.metadata["parsing"] = parsing
    run = trajectory(steps, outcome=outcome, turns=turns, final=final, answer_result=answer_result)
    scored = score(run, scenario, False)
    judged = outcome.judged
    details = (
        episode_details(run, scenario, correct=scored.correct, searched=False, first_tried=set()) if judged else {}
    )
    return EpisodeResult(
        episode_id=f"{model}-{mode}-{index}",
        model=model,
        suite=suite,
        family="liveapi",
        setting="clean",
        seed=0,
        scenario_id=scenario.id,
        outcome=outcome,
        solved=scored.solved,
        correct=scored.correct,
        score=scored.score,
        details=details,
    )


def tiny_run() -> list[EpisodeResult]:
    bad = {**FIRST, "key_name": "first_name"}
    return [
        # direct: completed; one filter missing; an unparseable reply; an infrastructure failure (n only)
        result(gold_run(), index=1),
        result(missing_run(), index=2),
        result([], outcome=Outcome.parse_error, index=3),
        result([], outcome=Outcome.infra_error, index=4),
        # ReAct: completed in 4 turns (the answer states the rows); out of budget after repeating a failing call
        result(gold_run(turn=None), mode="react", turns=4, index=1, final="Business"),
        result(
            [step(i, "filter_data", bad, ok=False) for i in range(10)],
            mode="react",
            outcome=Outcome.budget_exhausted,
            turns=10,
            index=2,
        ),
    ]


def test_summary_rows_micro_average_counts() -> None:
    summary = summarize(tiny_run())
    assert isinstance(summary, LiveApiSummary)
    direct, react = summary.rows
    assert (direct.model, direct.formulation, direct.mode, direct.setting) == ("m1", "slot", "direct", "clean")
    assert (direct.parsing, react.parsing) == ("strict", "strict")
    assert (direct.n, direct.n_valid) == (4, 3)
    # intent: 3 + 2 + 0 matched of 3 + 2 + 0 predicted and 3 + 3 + 3 gold
    assert (direct.intent.matched, direct.intent.predicted, direct.intent.gold) == (5, 5, 9)
    assert direct.intent.precision == 1.0 and math.isclose(direct.intent.recall or 0, 5 / 9)
    # slots: 12 + 7 of 12 + 8 on both sides
    assert (direct.slot.matched, direct.slot.predicted, direct.slot.gold) == (19, 20, 20)
    assert (direct.completion.k, direct.completion.n) == (1, 3)
    assert direct.errors.counts["instruction_alignment_failure"] == 1 and direct.errors.counts["wrong_func_count"] == 1
    assert direct.errors.shares["wrong_func_count"] == 0.5
    assert (react.mode, react.completion.k, react.completion.n) == ("react", 1, 2)
    assert react.agent.avg_loops == 7.0
    assert (react.agent.out_of_budget, react.agent.stuck, react.agent.unclassified) == (0.5, 0.5, 0.0)
    assert (react.agent.no_call, react.agent.n_no_call, direct.agent.n_no_call) == (0.0, 0, 0)


def test_summary_rows_split_by_parsing_and_count_answers_without_calls() -> None:
    lenient = result([], final="Business", index=5, parsing="lenient")  # a direct reply with no call
    no_call = result([], mode="react", final="Business", index=6)
    summary = summarize([*tiny_run(), lenient, no_call])
    assert summary is not None
    keys = [(row.mode, row.parsing) for row in summary.rows]
    assert keys == [("direct", "strict"), ("react", "strict"), ("direct", "lenient")]
    direct_lenient = summary.rows[2]
    assert (direct_lenient.n_valid, direct_lenient.completion.k) == (1, 0)
    assert direct_lenient.errors.counts["answered_without_calling"] == 1
    assert (direct_lenient.agent.n_no_call, direct_lenient.agent.no_call) == (1, 1.0)
    react = summary.rows[1]  # now 3 valid episodes, one of them answered without calling
    assert (react.n_valid, react.agent.n_no_call) == (3, 1)
    assert react.agent.no_call == pytest.approx(1 / 3)
    assert react.agent.unclassified == pytest.approx(1 / 3)  # the no-call failure is neither OOB nor stuck


def rows_of(table: ReportTable) -> list[list[str]]:
    return [list(row) for row in table.rows]


def test_summary_tables_render_hand_computed_numbers() -> None:
    summary = summarize(tiny_run())
    assert summary is not None
    table3, table4, errors = summary.tables("spider")  # no SQL-mode rows: no Table 6
    assert table3.columns == [
        "Dataset",
        "Model",
        "Intent P",
        "Intent R",
        "Intent F1",
        "Slot P",
        "Slot R",
        "Slot F1",
        "Compl. Rate",
        "CI",
        "n",
    ]
    # intent F1 = 2 * 1 * (5/9) / (1 + 5/9) = 0.714; slots 19/20; Wilson 95% for 1 of 3: 0.0615 to 0.7923
    assert rows_of(table3) == [["SLOT", "m1", "1.00", "0.56", "0.71", "0.95", "0.95", "0.95", "0.33", "0.06–0.79", "3"]]
    assert table4.columns == [
        "Dataset",
        "Model",
        "Base Comp.",
        "Agent Comp.",
        "CI",
        "Avg. Loops",
        "OOB",
        "Stuck",
        "Unclassified",
        "No Call",
        "n",
    ]
    # Wilson 95% for 1 of 2: 0.0945 to 0.9055; no episode answered without calling
    assert rows_of(table4) == [["SLOT", "m1", "0.33", "0.50", "0.09–0.91", "7.00", "0.50", "0.50", "0.00", "0.00", "2"]]
    assert errors.columns[:5] == ["Dataset", "Model", "Failures", "no call", "align"]
    assert "no call: answered_without_calling" in errors.note and "align: instruction_alignment_failure" in errors.note
    # of 2 failures: no call 0, align 1, count 1, and the 7 later categories 0
    assert rows_of(errors) == [["SLOT", "m1", "2", "0.00", "0.50", "0.50", *["0.00"] * 7]]


def test_figures_and_metrics() -> None:
    summary = summarize(tiny_run())
    assert summary is not None
    (figure,) = summary.figures("spider")
    assert isinstance(figure, StackedBars)
    assert figure.categories == ["instruction_alignment_failure", "wrong_func_count"]
    assert [(bar.label, bar.shares, bar.n) for bar in figure.bars] == [
        ("m1\nSLOT", {"instruction_alignment_failure": 50.0, "wrong_func_count": 50.0}, 2)
    ]
    metrics = summary.metrics("m1", "clean")
    assert metrics["liveapi.slot.direct.completion.rate"] == pytest.approx(1 / 3)
    assert metrics["liveapi.slot.react.agent.avg_loops"] == 7.0
    assert metrics["liveapi.slot.direct.slot.matched"] == 19.0
    assert summary.metrics("nobody", "clean") == {}


def test_summary_round_trips_and_none_without_details() -> None:
    summary = summarize(tiny_run())
    assert summary is not None
    assert LiveApiSummary.model_validate(summary.model_dump()) == summary
    assert summarize([result([], outcome=Outcome.infra_error)]) is None


def test_layout_across_suites_sections_by_formulation() -> None:
    slot = summarize(tiny_run())
    assert slot is not None
    rest_rows = [row.model_copy(update={"formulation": "rest", "model": "m2"}) for row in slot.rows]
    rest = slot.model_copy(update={"rows": rest_rows})
    # REST suite first: the layout still prints SLOT before REST
    table3, table4, errors, table6 = LAYOUTS["live_api"]({"spider-rest": rest, "spider-slot": slot})
    assert table3.title.startswith("Table 3")
    assert table3.columns[:3] == ["Dataset", "Model", "Suite"]
    assert [row[:3] for row in table3.rows] == [["SLOT", "m1", "spider-slot"], ["REST", "m2", "spider-rest"]]
    assert table3.sections == [0, 1]
    assert [row[:4] for row in table4.rows] == [
        ["SLOT", "m1", "spider-slot", "0.33"],
        ["REST", "m2", "spider-rest", "0.33"],
    ]
    assert len(errors.rows) == 2
    assert table6.rows == [] and "needs SQL-mode episodes" in table6.note


def test_layout_notes_what_a_table_needs() -> None:
    summary = summarize([result(gold_run(), index=1)])  # direct only, nothing failed
    assert summary is not None
    table3, table4, errors, table6 = LAYOUTS["live_api"]({"spider": summary})
    assert table3.rows == [["SLOT", "m1", "1.00", "1.00", "1.00", "1.00", "1.00", "1.00", "1.00", "0.21–1.00", "1"]]
    assert (table4.rows, errors.rows, table6.rows) == ([], [], [])
    assert "needs ReAct agent episodes" in table4.note and "needs failed direct-invocation" in errors.note
    assert "needs SQL-mode episodes" in table6.note
    empty = LAYOUTS["live_api"]({})
    assert [t.title for t in empty] == ["Table 3", "Table 4", "Figure 2", "Table 6"]
    assert all("needs" in t.note for t in empty)


def sql_run() -> list[EpisodeResult]:
    """The SQL mode on the tiny suite: one query returned the gold rows, one returned others, one failed."""
    return [
        result([], mode="sql", final="SELECT ...", answer_result={"rows": [["Business"]]}, index=1),
        result([], mode="sql", final="SELECT ...", answer_result={"rows": [["Law"]]}, index=2),
        result([], mode="sql", final="SELEC", answer_result={"error": 'near "SELEC": syntax error'}, index=3),
        result([], mode="sql", final="SELECT ...", answer_result={"rows": [["business"]]}, index=4),
    ]


def test_sql_mode_completion_is_the_query_rows() -> None:
    completed_flags = [r.details["completed"] for r in sql_run()]
    assert completed_flags == [True, False, False, True]  # rows compared as values (text casefolded)
    assert [r.solved for r in sql_run()] == completed_flags
    assert all(r.details["error_category"] is None for r in sql_run())


def test_table6_sets_api_and_sql_completion_side_by_side() -> None:
    summary = summarize([*tiny_run(), *sql_run()])
    assert summary is not None
    assert [row.mode for row in summary.rows] == ["direct", "react", "sql"]
    tables = summary.tables("spider")
    assert [t.title for t in tables] == [
        "spider: Table 3 — direct invocation: intent, slots and completion",
        "spider: Table 4 — ReAct agents: completion and what went wrong",
        "spider: Figure 2 (as a table) — direct invocation failures by category",
        "spider: Table 6 — completion by calling the APIs and by writing SQL",
    ]
    sql_table = tables[3]
    assert sql_table.columns == ["Model", "SLOT API", "SLOT SQL"]  # only the formulations the SQL rows cover
    # direct: 1 of 3 valid episodes; SQL: 2 of 4
    assert rows_of(sql_table) == [["m1", "0.33", "0.50"]]
    # the SQL rows stay out of Tables 3 and 4 and of Figure 2
    assert [row[1] for row in tables[0].rows] == ["m1"] and len(tables[1].rows) == 1 and len(tables[2].rows) == 1
    # a model whose API mode was not run gets a dash, and a formulation the SQL rows lack gets no columns
    rows = [("spider", row) for row in summary.rows]
    other = [("other", summary.rows[2].model_copy(update={"model": "m2", "formulation": "rest"}))]
    wide = table6(rows + other)
    assert wide is not None
    assert wide.columns == ["Model", "SLOT API", "SLOT SQL", "REST API", "REST SQL"]
    assert rows_of(wide) == [["m1", "0.33", "0.50", "—", "—"], ["m2", "—", "—", "—", "0.50"]]
    assert table6(rows[:2]) is None  # no SQL rows: no table
