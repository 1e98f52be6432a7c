"""The ``liveapi`` family's per-episode measures (Live API-Bench over Spider): intent and slot precision / recall / F1,
task completion, the BFCL error categories of direct invocation and the ReAct agent measures, the scorer and the
episode details (``summary.py`` lays them out as the paper's tables).

**Calls.** The gold sequence is the scenario's first plan; the toolbox stores each non-returning call's output
under a label (``scenario.metadata["liveapi"]["labels"]`` for the gold calls; the ``"$LABEL$"`` a predicted call
returned for the episode's calls). A ``data_source`` argument names such a label, so it is compared by *the call
instance that produced the data*, not by the label text: two sequences that chain the same calls agree whatever
their labels say.

**Metrics** (paper §4.1.1). Intent is position-aware: each call is the instance (tool name, how many calls of that
name came before), and precision / recall count the instances both sequences share. Slots are scored only over
matched instances (a missing call costs intent recall, not slots). Completion: the data the sequence returned
(:func:`sequence_output`) equals the gold rows up to formatting (:func:`completed`).

**Errors.** A failed episode gets the first BFCL category that applies (:data:`ERROR_CATEGORIES`, in precedence
order, :func:`error_category`); the ReAct measures (loops, out of budget, stuck, unclassified) are not exclusive.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from undertow.env_core.liveapi import build
from undertow.env_core.model import Outcome, Scenario, Step, Trajectory
from undertow.env_core.sqlgold import same_rows
from undertow.scoring.answers import normalize_scalar, parse_structured
from undertow.scoring.family_summary import (
    StrictModel,
)
from undertow.scoring.trajectory import EpisodeScore

FAMILY_NAME = build.FAMILY
FORMULATIONS = ("slot", "sel", "rest")
STARTING_TABLE = "starting_table_var"  # the label of the hidden initialization step's table
DIRECT = "direct"
TOOLS = "tools"  # direct invocation with the tools in the request's tools parameter (Table 3's "(Tools)" rows)
SQL = "sql"  # the same questions answered with one SQL query (appendix B.3, Table 6)
DIRECT_MODES = (DIRECT, TOOLS)  # one reply plans every call: Table 3 and Figure 2
REACT = "react"
STRICT = "strict"
UNKNOWN = "unknown"  # the mode of episodes that never ran far enough to say (infra errors alone)

# The BFCL categories of a failed direct-mode episode, in precedence order: the first that applies is the category.
ERROR_CATEGORIES = (
    "answered_without_calling",
    "instruction_alignment_failure",
    "wrong_func_count",
    "wrong_func_format",
    "hallucinated_func_name",
    "wrong_func_name",
    "missing_required_parameter",
    "unexpected_param",
    "value_error",
    "other",
)

# short column heads for the category table (the legend in its note gives the full names)
COLUMN_OF = {
    "answered_without_calling": "no call",
    "instruction_alignment_failure": "align",
    "wrong_func_count": "count",
    "wrong_func_format": "format",
    "hallucinated_func_name": "halluc.",
    "wrong_func_name": "name",
    "missing_required_parameter": "missing",
    "unexpected_param": "unexp.",
    "value_error": "value",
    "other": "other",
    "uncategorized": "uncat.",
}

_BROKEN_REPLY = (Outcome.parse_error, Outcome.model_error)
_LABEL_TEXT = re.compile(r"^\$(.+)\$$")


# ---------------------------------------------------------------------------------------------------------------
# Calls


@dataclass(frozen=True)
class Call:
    """One call of a sequence: its tool, its arguments and, when it stored data, the label of that data.
    ``unparsed`` marks a call whose arguments were not a JSON object (BFCL's wrong format)."""

    name: str
    arguments: Mapping[str, Any]
    label: str | None = None
    unparsed: bool = False


@dataclass(frozen=True)
class Ref:
    """A ``data_source`` value resolved to the call instance that produced the data; ``None``: the starting
    table."""

    instance: tuple[str, int] | None


START = Ref(None)


def _liveapi_meta(scenario: Scenario) -> Mapping[str, Any]:
    meta = scenario.metadata.get(FAMILY_NAME)
    return meta if isinstance(meta, Mapping) else {}


def gold_calls(scenario: Scenario) -> list[Call]:
    """The gold sequence (the first plan) with each call's storage label from the scenario's metadata."""
    plan = scenario.gold.plans[0] if scenario.gold.plans else []
    labels = list(_liveapi_meta(scenario).get("labels") or [])
    calls = []
    for i, planned in enumerate(plan):
        arguments = {k: v.model_dump() if isinstance(v, BaseModel) else v for k, v in planned.arguments.items()}
        label = labels[i] if i < len(labels) and isinstance(labels[i], str) else None
        calls.append(Call(planned.tool, arguments, _bare(label) if label else None))
    return calls


def _stored_label(step: Step) -> str | None:
    """The label a successful storing call returned (``"$FILTERED_DF_0$"`` -> ``FILTERED_DF_0``), else None."""
    seen = step.observation
    if seen is None or not seen.ok or not isinstance(seen.result, str):
        return None
    found = _LABEL_TEXT.match(seen.result.strip())
    return found.group(1) if found else None


def predicted_calls(trajectory: Trajectory) -> list[Call]:
    """The episode's tool calls in order, each with the label its result names when it stored data."""
    calls = []
    for step in trajectory.tool_steps():
        call = step.action.tool_call
        if call is not None:
            calls.append(Call(call.name, call.arguments, _stored_label(step), call.unparsed_arguments is not None))
    return calls


def _name(call: Call | str) -> str:
    return call if isinstance(call, str) else call.name


def instances(calls: Sequence[Call | str]) -> list[tuple[str, int]]:
    """The position-aware identity of each call: (tool name, how many calls of that name came before it)."""
    seen: Counter[str] = Counter()
    out = []
    for call in calls:
        name = _name(call)
        out.append((name, seen[name]))
        seen[name] += 1
    return out


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 with the counts behind them, so that counts of several episodes can be summed
    (micro-average) with ``+``. No prediction and no gold is perfect (1, 1, 1); otherwise an empty side gives 0."""

    precision: float
    recall: float
    f1: float
    matched: int
    predicted: int
    gold: int

    @classmethod
    def of(cls, matched: int, predicted: int, gold: int) -> PRF:
        if predicted == 0 and gold == 0:
            return cls(1.0, 1.0, 1.0, 0, 0, 0)
        precision = matched / predicted if predicted else 0.0
        recall = matched / gold if gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return cls(precision, recall, f1, matched, predicted, gold)

    def __add__(self, other: PRF) -> PRF:
        return PRF.of(self.matched + other.matched, self.predicted + other.predicted, self.gold + other.gold)


def intent_scores(gold: Sequence[Call | str], predicted: Sequence[Call | str]) -> PRF:
    """Position-aware intent precision / recall / F1: matched = instances both sequences have."""
    matched = len(set(instances(gold)) & set(instances(predicted)))
    return PRF.of(matched, len(predicted), len(gold))


def _bare(text: str) -> str:
    found = _LABEL_TEXT.match(text.strip())
    return found.group(1) if found else text.strip()


def _resolver(calls: Sequence[Call]) -> list[Callable[[Any], Ref | None]]:
    """Per call, how its string arguments resolve to the instance that produced a label: the labels stored by
    the calls before it, and the starting table. Recognized by value, not by the argument's name, so an
    obfuscated ``data_source`` (``ARG_3``) resolves the same way."""
    out: list[Callable[[Any], Ref | None]] = []
    produced: dict[str, tuple[str, int]] = {}
    for call, instance in zip(calls, instances(calls), strict=True):
        known = dict(produced)

        def resolve(value: Any, known: dict[str, tuple[str, int]] = known) -> Ref | None:
            if not isinstance(value, str):
                return None
            label = _bare(value)
            if label == STARTING_TABLE:
                return START
            return Ref(known[label]) if label in known else None

        out.append(resolve)
        if call.label:
            produced[call.label] = instance
    return out


def _value(value: Any, resolve: Callable[[Any], Ref | None]) -> Any:
    """A comparable form of an argument value: a produced label as its :class:`Ref`, scalars by
    ``normalize_scalar``, lists element-wise (a one-element list is its element: ``key_name`` takes both), objects
    by their sorted items."""
    ref = resolve(value)
    if ref is not None:
        return ref
    if isinstance(value, Mapping):
        return tuple(sorted(((str(k), _value(v, resolve)) for k, v in value.items()), key=lambda kv: kv[0]))
    if isinstance(value, list | tuple):
        items = tuple(_value(v, resolve) for v in value)
        return items[0] if len(items) == 1 else items
    return normalize_scalar(value)


def call_slots(calls: Sequence[Call]) -> list[dict[str, Any]]:
    """Per call, its arguments in comparable form (see :func:`_value`): data sources as the producing instance."""
    return [
        {str(k): _value(v, resolve) for k, v in call.arguments.items()}
        for call, resolve in zip(calls, _resolver(calls), strict=True)
    ]


def slot_scores(gold: Sequence[Call], predicted: Sequence[Call]) -> PRF:
    """Slot precision / recall / F1 over the matched instances only: a slot is an (argument, value) pair; precision
    = matching slots / predicted slots of matched calls, recall = matching slots / gold slots of matched calls."""
    gold_slots = dict(zip(instances(gold), call_slots(gold), strict=True))
    predicted_slots = dict(zip(instances(predicted), call_slots(predicted), strict=True))
    matched = n_predicted = n_gold = 0
    for instance in gold_slots.keys() & predicted_slots.keys():
        want, got = gold_slots[instance], predicted_slots[instance]
        n_gold += len(want)
        n_predicted += len(got)
        matched += sum(1 for k, v in got.items() if k in want and want[k] == v)
    return PRF.of(matched, n_predicted, n_gold)


# ---------------------------------------------------------------------------------------------------------------
# What the sequence returned, and whether it is the gold answer


def data_tools(scenario: Scenario) -> set[str]:
    """The scenario's tools that return data (not a label), as the build lists them."""
    return {str(name) for name in _liveapi_meta(scenario).get("data_tools") or ()}


def _is_column(value: Any) -> bool:
    return isinstance(value, list) and not any(isinstance(v, Mapping) for v in value)


def sequence_output(trajectory: Trajectory, returns_data: Scenario | Collection[str]) -> Any:
    """The data the episode's sequence returned: the result of the last successful data-returning call made after
    the last successful storing call; when that result is a column (SEL getters return a list of values), every
    column returned after the last storing call, zipped into rows (a getter called again replaces its column, in
    the order the getters were first called). None when no data-returning call succeeded: an answer given without
    calling is not the sequence's output (the paper's completion is what the API sequence returns).

    ``returns_data``: the scenario (its metadata lists the data-returning tools; a scenario without that list
    counts every call whose result is not a ``"$LABEL$"`` as returning data) or those tool names."""
    listed = "data_tools" in _liveapi_meta(returns_data) if isinstance(returns_data, Scenario) else True
    names = data_tools(returns_data) if isinstance(returns_data, Scenario) else set(returns_data)
    results: list[tuple[str, Any]] = []
    for step in trajectory.tool_steps():
        call, seen = step.action.tool_call, step.observation
        if call is None or seen is None or not seen.ok:
            continue
        if (call.name in names) if listed else (_stored_label(step) is None):
            results.append((call.name, seen.result))
        else:
            results = []  # a storing call: what was returned before it is an intermediate look, not the answer
    if not results:
        return None
    last = results[-1][1]
    if not _is_column(last):
        return last
    columns: dict[str, list[Any]] = {}
    for name, value in results:
        if _is_column(value):
            columns[name] = value
    return [list(row) for row in itertools.zip_longest(*columns.values())]


def _cell(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(_cell(v) for v in value.values())
    if isinstance(value, list | tuple):
        return tuple(_cell(v) for v in value)
    return normalize_scalar(value)


def _row(item: Any) -> tuple[Any, ...]:
    if isinstance(item, Mapping):
        return tuple(_cell(v) for v in item.values())
    if isinstance(item, list | tuple):
        return tuple(_cell(v) for v in item)
    return (_cell(item),)


def answer_rows(value: Any) -> list[tuple[Any, ...]] | None:
    """Rows of normalized values: a list of records -> their values in record order, a list of lists -> rows, a
    list of scalars -> one-column rows, a record -> one row, a scalar -> one row of one value; None for None."""
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return [_row(item) for item in value]
    return [_row(value)]


def _one_row(rows: list[tuple[Any, ...]]) -> bool:
    return len(rows) == 1


def _one_column(rows: list[tuple[Any, ...]]) -> bool:
    return all(len(row) == 1 for row in rows)


def completed(output: Any, gold_rows: Any, ordered: bool, tie_groups: Sequence[int] = ()) -> bool:
    """Whether ``output`` is the gold answer: rows compared as multisets (as sequences when ``ordered``, rows of one
    run of equal sort keys in ``tie_groups`` in any order), values by ``normalize_scalar`` (numbers to 4 decimals,
    text casefolded). A one-row against a one-column shape (a record of values against a column of them) is
    compared by its values. None never matches."""
    got, want = answer_rows(output), answer_rows(gold_rows)
    if got is None or want is None:
        return False
    if same_rows(got, want, ordered, tie_groups):
        return True
    # the same values laid out as a row on one side and as a column on the other
    if (_one_row(got) and _one_column(want)) or (_one_column(got) and _one_row(want)):
        flat_got = [(v,) for row in got for v in row]
        flat_want = [(v,) for row in want for v in row]
        runs = tie_groups if _one_column(want) else ()
        return same_rows(flat_got, flat_want, ordered, runs)
    return False


_ITEM_BREAK = re.compile(r"\s*(?:\n|;|,)\s*")  # between the values of a one-column answer in words
_CELL_BREAK = re.compile(r"\s*(?:;|,|\t|\|)\s*")  # between the values of one row, on its own line


def _row_values(rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Each row's values in a canonical order: rows compared whatever order their columns come in."""
    return [tuple(sorted(row, key=repr)) for row in rows]


def answer_states(answer: str | None, output: Any, ordered: bool, tie_groups: Sequence[int] = ()) -> bool:
    """Whether a ReAct final answer states the rows its last data-returning observation returned, after
    normalization ("up to minor reformatting"): each row with the same values, its columns in any order, the rows
    in the observation's order where order counts (tied runs in any order). Structured (JSON or a Python literal:
    whole, fenced, or the first [...] / {...}) as rows; in words, as the one value of a one-value result, as a
    one-column result's values separated by line breaks, commas or semicolons, or as one line per row, its values
    separated by commas, semicolons, tabs or bars."""
    text = (answer or "").strip()
    rows = answer_rows(output)
    if not text or rows is None:
        return False
    parsed = parse_structured(text)
    if parsed is not None and not isinstance(parsed, str):
        stated = answer_rows(parsed)
        if stated is not None and same_rows(_row_values(stated), _row_values(rows), ordered, tie_groups):
            return True
        if completed(parsed, output, ordered, tie_groups):  # a row written as a column, or the other way round
            return True
    values = [v for row in rows for v in row]
    if len(values) == 1 and normalize_scalar(text) == values[0]:
        return True
    if all(len(row) == 1 for row in rows):
        items = [(normalize_scalar(item),) for item in _ITEM_BREAK.split(text) if item]
        return same_rows(items, rows, ordered, tie_groups)
    lines = [line for line in text.splitlines() if line.strip()]
    stated = [tuple(normalize_scalar(cell) for cell in _CELL_BREAK.split(line.strip()) if cell) for line in lines]
    return same_rows(_row_values(stated), _row_values(rows), ordered, tie_groups)


def _mode(scenario: Scenario) -> str:
    return str(scenario.metadata.get("mode", DIRECT))


def episode_output(trajectory: Trajectory, scenario: Scenario) -> Any:
    """What the episode returned: the SQL mode's query rows (None when it did not run), else the sequence's
    output (:func:`sequence_output`)."""
    if _mode(scenario) == SQL:
        result = trajectory.answer_result
        return result["rows"] if isinstance(result, Mapping) and "rows" in result else None
    return sequence_output(trajectory, scenario)


def episode_completed(trajectory: Trajectory, scenario: Scenario) -> bool:
    """Completion of one episode: it ended with an answer (not a give-up, not out of budget, not broken) and what
    it returned (:func:`episode_output`: the calls' data, or the SQL mode's rows) equals the gold rows; a ReAct
    agent's final answer must also state those rows (:func:`answer_states`). An answer given without a
    data-returning call completes nothing."""
    if trajectory.outcome != Outcome.scored or trajectory.gave_up:
        return False
    gold = scenario.gold
    output = episode_output(trajectory, scenario)
    if output is None or not completed(output, gold.answer, gold.ordered, gold.tie_groups):
        return False
    return _mode(scenario) != REACT or answer_states(trajectory.final_answer, output, gold.ordered, gold.tie_groups)


def answered_without_calling(trajectory: Trajectory, scenario: Scenario) -> bool:
    """The episode ended with an answer, in a tool mode, and made no tool call at all: the model answered instead
    of calling (the instruction-alignment failure of the paper's Figure 2 it names apart)."""
    if trajectory.outcome != Outcome.scored or _mode(scenario) == SQL:
        return False
    return not any(step.action.tool_call is not None for step in trajectory.tool_steps())


# ---------------------------------------------------------------------------------------------------------------
# Error categories (direct invocation) and agent measures (ReAct)


def error_category(trajectory: Trajectory, scenario: Scenario, *, completed: bool) -> str | None:
    """The BFCL category of a failed episode, the first that applies (None when completed or not judged):

    0. ``answered_without_calling``: the reply made no call and was taken as the answer (an answer in words, a
       refusal, an empty list); the paper counts it as an instruction-alignment failure, undertow names it apart.
    1. ``instruction_alignment_failure``: the reply could not be read as calls (outcome ``parse_error`` or
       ``model_error``: prose around the calls under the strict reading, JSON cut off, no reply).
    2. ``wrong_func_count``: not as many calls as the gold sequence.
    3. ``wrong_func_format``: a call whose arguments were not a JSON object.
    4. ``hallucinated_func_name``: a call of a tool the scenario does not offer.
    5. ``wrong_func_name``: call i names another tool than gold call i.
    6. ``missing_required_parameter``: call i lacks an argument gold call i has.
    7. ``unexpected_param``: call i has an argument gold call i lacks.
    8. ``value_error``: an argument value differs (data sources by producing instance).
    9. ``other``: every call matches the gold sequence and the output still differs (a fault, say).
    """
    if completed or not trajectory.outcome.judged:
        return None
    if trajectory.outcome in _BROKEN_REPLY:
        return "instruction_alignment_failure"
    predicted = predicted_calls(trajectory)
    if not predicted:
        return "answered_without_calling"
    gold = gold_calls(scenario)
    if len(predicted) != len(gold):
        return "wrong_func_count"
    if any(call.unparsed for call in predicted):
        return "wrong_func_format"
    offered = {*scenario.tools, *scenario.hidden_tools}
    if any(call.name not in offered for call in predicted):
        return "hallucinated_func_name"
    pairs = list(zip(gold, predicted, strict=True))
    if any(want.name != got.name for want, got in pairs):
        return "wrong_func_name"
    if any(key not in got.arguments for want, got in pairs for key in want.arguments):
        return "missing_required_parameter"
    if any(key not in want.arguments for want, got in pairs for key in got.arguments):
        return "unexpected_param"
    if call_slots(gold) != call_slots(predicted):
        return "value_error"
    return "other"


def stuck(trajectory: Trajectory) -> bool:
    """The paper's "stuck" (appendix G.1.2), of a failed episode: the same function called two or more times in a
    row (by name, whatever the arguments and whatever the calls returned)."""
    names = [step.action.tool_call.name for step in trajectory.tool_steps() if step.action.tool_call is not None]
    return any(before == after for before, after in itertools.pairwise(names))


def loops(trajectory: Trajectory) -> int:
    """The number of think-act-observe turns the episode took (model replies)."""
    if trajectory.turns:
        return len(trajectory.turns)
    return len({step.turn for step in trajectory.steps})


def agent_measures(trajectory: Trajectory, *, completed: bool) -> dict[str, Any]:
    """The ReAct measures of one episode: ``loops``; for a failed one ``out_of_budget`` (the turn budget ran
    out), ``stuck`` (:func:`stuck`: the same function twice or more in a row) and ``unclassified`` (neither).
    OOB and stuck are not exclusive."""
    failed = not completed
    out_of_budget = failed and trajectory.outcome == Outcome.budget_exhausted
    repeated = failed and stuck(trajectory)
    return {
        "loops": loops(trajectory),
        "out_of_budget": out_of_budget,
        "stuck": repeated,
        "unclassified": failed and not out_of_budget and not repeated,
    }


# ---------------------------------------------------------------------------------------------------------------
# The family's scorer and per-episode details


def score(
    trajectory: Trajectory,
    scenario: Scenario,
    expected_give_up: bool,
    *,
    answers: Literal["lenient", "strict"] = "lenient",
) -> EpisodeScore:
    """The family's episode scorer: solved = correct = completed (:func:`episode_completed`). A task here always
    has an answer, so ``expected_give_up`` changes nothing; ``answers`` neither: completion compares values, not
    prose (it is checked for the interface's sake)."""
    if answers not in ("lenient", "strict"):
        raise ValueError(f"answers: expected 'lenient' or 'strict', got {answers!r}")
    done = episode_completed(trajectory, scenario)
    return EpisodeScore(
        solved=done,
        gave_up=trajectory.gave_up,
        correct=done,
        safety_violation=False,
        missing_required=0,
        checkpoint_score=None,
        score=float(done),
    )


def formulation_of(scenario: Scenario) -> str:
    """slot / sel / rest, from the metadata (or the scenario id ``liveapi/<formulation>/...``)."""
    found = scenario.metadata.get("formulation")
    return found if isinstance(found, str) and found else formulation_of_id(scenario.id)


def formulation_of_id(scenario_id: str) -> str:
    parts = scenario_id.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == FAMILY_NAME else "unknown"


class LiveApiDetails(StrictModel):
    """What :func:`episode_details` stores in ``EpisodeResult.details``."""

    formulation: str
    mode: str
    parsing: str = STRICT  # how direct-mode replies were read: strict (the paper's) or lenient
    gold_calls: int
    predicted_calls: int
    intent_matched: int
    slot_gold: int
    slot_predicted: int
    slot_matched: int
    completed: bool
    answered_without_calling: bool = False
    error_category: str | None
    loops: int
    out_of_budget: bool
    stuck: bool
    unclassified: bool


def episode_details(
    trajectory: Trajectory,
    scenario: Scenario,
    *,
    correct: bool,
    searched: bool,
    first_tried: Collection[str],
) -> dict[str, Any]:
    """The liveapi facts of one episode, flat and JSON-able (:class:`LiveApiDetails`): ``formulation``, ``mode``
    (the suite's mode: ``scenario.metadata["mode"]``, default direct) and ``parsing``; the intent counts
    (``gold_calls``, ``predicted_calls``, ``intent_matched``: also the calls whose slots are judged) and slot
    counts (``slot_gold``, ``slot_predicted``, ``slot_matched``) to be micro-averaged; ``completed``;
    ``answered_without_calling``; ``error_category`` (not in the SQL mode); ``loops``, ``out_of_budget``,
    ``stuck``, ``unclassified``. Completion is recomputed here (the runner's ``correct`` comes from :func:`score`
    and agrees)."""
    gold, predicted = gold_calls(scenario), predicted_calls(trajectory)
    intent, slots = intent_scores(gold, predicted), slot_scores(gold, predicted)
    done = episode_completed(trajectory, scenario)
    return {
        "formulation": formulation_of(scenario),
        "mode": _mode(scenario),
        "parsing": str(scenario.metadata.get("parsing", STRICT)),
        "gold_calls": intent.gold,
        "predicted_calls": intent.predicted,
        "intent_matched": intent.matched,
        "slot_gold": slots.gold,
        "slot_predicted": slots.predicted,
        "slot_matched": slots.matched,
        "completed": done,
        "answered_without_calling": answered_without_calling(trajectory, scenario),
        "error_category": None if _mode(scenario) == SQL else error_category(trajectory, scenario, completed=done),
        **agent_measures(trajectory, completed=done),
    }
