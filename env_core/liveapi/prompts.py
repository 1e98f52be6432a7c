"""The agent prompts of Live API-Bench's two modes, in our own words and with our own examples.

Direct invocation (appendix E): SLOT and SEL follow the NESTful-style prompt — compose labelled calls, point out
when no function fits, reply with the JSON list only, three worked examples, and the note that the data is in
``starting_table_var``; REST follows the BFCL-style prompt, without examples. ReAct (appendix F): the
Thought / Action / Action Input / Observation loop with a final answer. ``workers.agent`` appends the tools' JSON
schemas to each prompt.
"""

from __future__ import annotations

import json
from typing import Any

_DIRECT = (
    "You compose function calls. Given a question and a set of functions, reply with the calls that answer it, in "
    "the order they must run. If no function fits the question, or the question lacks a value a function needs, "
    "say so instead of calling.\n"
    "Reply with the calls only, as a JSON list in this form, and no other text:\n"
    '[{{"name": "function_name", "arguments": {{"argument": "value"}}, "label": "OUTPUT_LABEL"}}]\n'
    "{chaining}{examples}"
    "Functions you can call:\n"
)
_CHAINING = (
    'Each call\'s output is kept under its label; a later call reads it by passing "$OUTPUT_LABEL$" as its '
    "data_source. The data for the question is available as $starting_table_var$.\n\n"
)

_REACT = (
    "Answer the question as well as you can, using the APIs below. Call one API at a time:\n"
    "Thought: what to do next\n"
    "Action: the name of the API to call\n"
    "Action Input: its arguments as a JSON object\n"
    'You then receive the API\'s result as "Observation: ..."; never write an Observation yourself. Repeat '
    "Thought / Action / Action Input as often as needed (a single action each time), and finish with\n"
    "Thought: I now know the final answer\n"
    "Final Answer: the answer to the question\n"
    "{chaining}"
    "APIs:\n"
)
_REACT_CHAINING = (
    'A data API keeps its output and returns its label, such as "$FILTERED_DF_0$": pass that label as the '
    "data_source of the next API. The data for the question is available as $starting_table_var$.\n"
)


def _call(name: str, label: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "label": label}


# Three examples over an invented airline database (pilots joined with their airlines), one per shape: filters then
# a column; a group count sorted to its top; an aggregate of the whole table.
_SLOT_EXAMPLES = [
    (
        "Which pilots older than 40 fly for Nordwind?",
        [
            _call(
                "filter_data",
                "FILTERED_DF_0",
                data_source="$starting_table_var$",
                key_name="pilot_age",
                condition="greater_than",
                value=40,
            ),
            _call(
                "filter_data",
                "FILTERED_DF_1",
                data_source="$FILTERED_DF_0$",
                key_name="airline_name",
                condition="equal_to",
                value="Nordwind",
            ),
            _call(
                "retrieve_data",
                "SELECT_COL_0",
                data_source="$FILTERED_DF_1$",
                key_name="pilot_name",
                distinct=False,
                limit=-1,
            ),
        ],
    ),
    (
        "Which airline employs the most pilots?",
        [
            _call("group_data_by", "GROUPED_DF_0", data_source="$starting_table_var$", key_name="airline_name"),
            _call("aggregate_data", "AGGREGATED_DF_1", data_source="$GROUPED_DF_0$", aggregation_type="count"),
            _call("sort_data", "SORTED_DF_2", data_source="$AGGREGATED_DF_1$", key_name="count", ascending=False),
            _call(
                "retrieve_data",
                "SELECT_COL_0",
                data_source="$SORTED_DF_2$",
                key_name="airline_name",
                distinct=False,
                limit=1,
            ),
        ],
    ),
    (
        "How old is the average pilot?",
        [
            _call(
                "aggregate_data",
                "AGGREGATED_DF_0",
                data_source="$starting_table_var$",
                key_name="pilot_age",
                aggregation_type="mean",
            ),
            _call(
                "retrieve_data",
                "SELECT_COL_0",
                data_source="$AGGREGATED_DF_0$",
                key_name="mean_pilot_age",
                distinct=False,
                limit=-1,
            ),
        ],
    ),
]

_SEL_EXAMPLES = [
    (
        "Which pilots older than 40 fly for Nordwind?",
        [
            _call(
                "select_data_greater_than",
                "FILTERED_DF_0",
                data_source="$starting_table_var$",
                key_name="pilot_age",
                value=40,
            ),
            _call(
                "select_data_equal_to",
                "FILTERED_DF_1",
                data_source="$FILTERED_DF_0$",
                key_name="airline_name",
                value="Nordwind",
            ),
            _call("get_pilot_name", "SELECT_COL_0", data_source="$FILTERED_DF_1$"),
        ],
    ),
    (
        "Which airline employs the most pilots?",
        [
            _call("group_data_by", "GROUPED_DF_0", data_source="$starting_table_var$", key_name="airline_name"),
            _call("aggregate_data_count", "AGGREGATED_DF_1", data_source="$GROUPED_DF_0$"),
            _call("sort_data_descending", "SORTED_DF_2", data_source="$AGGREGATED_DF_1$", key_name="count"),
            _call("limit_data", "LIMITED_DF_3", data_source="$SORTED_DF_2$", n=1),
            _call("get_airline_name", "SELECT_COL_0", data_source="$LIMITED_DF_3$"),
        ],
    ),
    (
        "Which airlines do the pilots fly for?",
        [
            _call("select_unique_values", "UNIQUE_DF_0", data_source="$starting_table_var$", key_name=["airline_name"]),
            _call("get_airline_name", "SELECT_COL_0", data_source="$UNIQUE_DF_0$"),
        ],
    ),
]


def _examples(pairs: list[tuple[str, list[dict[str, Any]]]]) -> str:
    shown = "\n\n".join(f"Question: {question}\n{json.dumps(calls)}" for question, calls in pairs)
    return f"Here are some examples (over another database):\n{shown}\n\n"


def agent_prompt(mode: str, formulation: str) -> str:
    """The system prompt for one mode (``direct`` or ``react``) and formulation (``slot``, ``sel``, ``rest`` or
    ``all``: a suite mixing them gets the prompt without examples, which fits every formulation)."""
    chained = formulation in ("slot", "sel", "all")
    if mode == "react":
        return _REACT.format(chaining=_REACT_CHAINING if chained else "")
    examples = {"slot": _SLOT_EXAMPLES, "sel": _SEL_EXAMPLES}.get(formulation)
    return _DIRECT.format(
        chaining=_CHAINING if chained else "\n",
        examples=_examples(examples) if examples else "",
    )
