"""Scoring for the ``liveapi`` family (Live API-Bench over Spider): intent and slot precision / recall / F1, task
completion, the BFCL error categories of direct invocation and the ReAct agent measures, with the paper's Tables 3
and 4 (and its Figure 2 as a table) laid out as report tables.

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
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from undertow.env_core.families import FamilyDefinition, FamilyMetrics, FamilySummary, ReportTable, StackedBars
from undertow.env_core.liveapi import build
from undertow.env_core.model import EpisodeResult, Outcome, Scenario, Step, Trajectory
from undertow.scoring.answers import normalize_scalar, parse_structured
from undertow.scoring.family_summary import (
    ModelSettingSummary,
    Rate,
    Row,
    StrictModel,
    any_with_details,
    category_counts,
    count,
    failures_figure,
    flag,
    judged,
    missing_table,
    n_range,
    rate,
    result_rows,
    share_bar,
)
from undertow.scoring.trajectory import EpisodeScore

FAMILY_NAME = build.FAMILY
FORMULATIONS = ("slot", "sel", "rest")
STARTING_TABLE = "starting_table_var"  # the label of the hidden initialization step's table
DIRECT = "direct"
UNKNOWN = "unknown"  # the mode of episodes that never ran far enough to say (infra errors alone)

# The BFCL categories of a failed direct-mode episode, in precedence order: the first that applies is the category.
ERROR_CATEGORIES = (
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
    the order the getters were first called). Without such a call, the final answer: its structured content
    (:func:`undertow.scoring.answers.parse_structured`), else its text; None when there is none.

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
    if results:
        last = results[-1][1]
        if not _is_column(last):
            return last
        columns: dict[str, list[Any]] = {}
        for name, value in results:
            if _is_column(value):
                columns[name] = value
        return [list(row) for row in itertools.zip_longest(*columns.values())]
    answer = (trajectory.final_answer or "").strip()
    if not answer:
        return None
    parsed = parse_structured(answer)
    return answer if parsed is None else parsed


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


def completed(output: Any, gold_rows: Any, ordered: bool) -> bool:
    """Whether ``output`` is the gold answer: rows compared as multisets (as sequences when ``ordered``), values by
    ``normalize_scalar`` (numbers to 4 decimals, text casefolded). A one-row against a one-column shape (a record
    of values against a column of them) is compared by its values. None never matches."""
    got, want = answer_rows(output), answer_rows(gold_rows)
    if got is None or want is None:
        return False
    if (got == want) if ordered else (Counter(got) == Counter(want)):
        return True
    # the same values laid out as a row on one side and as a column on the other
    if (_one_row(got) and _one_column(want)) or (_one_column(got) and _one_row(want)):
        flat_got = [v for row in got for v in row]
        flat_want = [v for row in want for v in row]
        return flat_got == flat_want if ordered else Counter(flat_got) == Counter(flat_want)
    return False


def episode_completed(trajectory: Trajectory, scenario: Scenario) -> bool:
    """Completion of one episode: it ended with an answer (not a give-up, not out of budget, not broken) and its
    sequence returned the gold rows."""
    if trajectory.outcome != Outcome.scored or trajectory.gave_up:
        return False
    gold = scenario.gold
    return completed(sequence_output(trajectory, scenario), gold.answer, gold.ordered)


# ---------------------------------------------------------------------------------------------------------------
# Error categories (direct invocation) and agent measures (ReAct)


def error_category(trajectory: Trajectory, scenario: Scenario, *, completed: bool) -> str | None:
    """The BFCL category of a failed episode, the first that applies (None when completed or not judged):

    1. ``instruction_alignment_failure``: the reply could not be read as calls (outcome ``parse_error`` or
       ``model_error``), or it made no call and its answer holds nothing structured (prose).
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
    predicted = predicted_calls(trajectory)
    if trajectory.outcome in _BROKEN_REPLY:
        return "instruction_alignment_failure"
    if not predicted and parse_structured((trajectory.final_answer or "").strip()) is None:
        return "instruction_alignment_failure"
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


def _failed(step: Step) -> bool:
    return step.observation is None or not step.observation.ok


def stuck(trajectory: Trajectory) -> bool:
    """Two consecutive calls that are the same (name and arguments) and both failed: the agent repeated itself."""
    steps = [s for s in trajectory.tool_steps() if s.action.tool_call is not None]
    for before, after in itertools.pairwise(steps):
        a, b = before.action.tool_call, after.action.tool_call
        assert a is not None and b is not None
        same = (a.name, a.arguments, a.unparsed_arguments) == (b.name, b.arguments, b.unparsed_arguments)
        if same and _failed(before) and _failed(after):
            return True
    return False


def loops(trajectory: Trajectory) -> int:
    """The number of think-act-observe turns the episode took (model replies)."""
    if trajectory.turns:
        return len(trajectory.turns)
    return len({step.turn for step in trajectory.steps})


def agent_measures(trajectory: Trajectory, *, completed: bool) -> dict[str, Any]:
    """The ReAct measures of one episode: ``loops``; for a failed one ``out_of_budget`` (the turn budget ran
    out), ``stuck`` (:func:`stuck`) and ``unclassified`` (neither). They are not exclusive."""
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
    return found if isinstance(found, str) and found else _formulation_of_id(scenario.id)


def _formulation_of_id(scenario_id: str) -> str:
    parts = scenario_id.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == FAMILY_NAME else "unknown"


class LiveApiDetails(StrictModel):
    """What :func:`episode_details` stores in ``EpisodeResult.details``."""

    formulation: str
    mode: str
    gold_calls: int
    predicted_calls: int
    intent_matched: int
    slot_gold: int
    slot_predicted: int
    slot_matched: int
    completed: bool
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
    (the agent protocol the suite was loaded for: ``scenario.metadata["mode"]``, default direct); the intent counts
    (``gold_calls``, ``predicted_calls``, ``intent_matched``: also the calls whose slots are judged) and slot
    counts (``slot_gold``, ``slot_predicted``, ``slot_matched``) to be micro-averaged; ``completed``;
    ``error_category``; ``loops``, ``out_of_budget``, ``stuck``, ``unclassified``. Completion is recomputed
    here (the runner's ``correct`` comes from :func:`score` and agrees)."""
    gold, predicted = gold_calls(scenario), predicted_calls(trajectory)
    intent, slots = intent_scores(gold, predicted), slot_scores(gold, predicted)
    done = episode_completed(trajectory, scenario)
    return {
        "formulation": formulation_of(scenario),
        "mode": str(scenario.metadata.get("mode", DIRECT)),
        "gold_calls": intent.gold,
        "predicted_calls": intent.predicted,
        "intent_matched": intent.matched,
        "slot_gold": slots.gold,
        "slot_predicted": slots.predicted,
        "slot_matched": slots.matched,
        "completed": done,
        "error_category": error_category(trajectory, scenario, completed=done),
        **agent_measures(trajectory, completed=done),
    }


# ---------------------------------------------------------------------------------------------------------------
# Summary


class Micro(StrictModel):
    """A micro-averaged precision / recall / F1: counts summed over episodes, then divided. None where nothing
    was there to judge (slots of a group with no matched call)."""

    matched: int
    predicted: int
    gold: int
    precision: float | None
    recall: float | None
    f1: float | None


class Errors(StrictModel):
    """Failed episodes by BFCL category: counts and shares of the failures (fractions)."""

    n_failures: int
    counts: dict[str, int]
    shares: dict[str, float | None]


class Agent(StrictModel):
    """The ReAct measures of a group: the mean number of loops, and the shares of all valid episodes that failed
    out of budget, stuck, or neither (unclassified)."""

    avg_loops: float | None
    out_of_budget: float | None
    stuck: float | None
    unclassified: float | None
    n_out_of_budget: int
    n_stuck: int
    n_unclassified: int


class LiveApiRow(StrictModel):
    """One model × formulation × mode × setting of a suite."""

    model: str
    formulation: str
    mode: str
    setting: str
    n: int  # every episode, infra and config errors included
    n_valid: int  # judged episodes with the liveapi details
    intent: Micro
    slot: Micro
    completion: Rate
    errors: Errors
    agent: Agent


def _flag(value: Any) -> bool:
    return bool(flag(value))  # absent (None, or NaN in a missing cell) is False


def micro(matched: int, predicted: int, gold: int, *, judged: bool = True) -> Micro:
    """Micro-averaged scores from summed counts (:class:`PRF`); all None when ``judged`` is False."""
    if not judged:
        return Micro(matched=matched, predicted=predicted, gold=gold, precision=None, recall=None, f1=None)
    prf = PRF.of(matched, predicted, gold)
    return Micro(matched=matched, predicted=predicted, gold=gold, precision=prf.precision, recall=prf.recall, f1=prf.f1)


def _has_details(row: Row) -> bool:
    return row.get("formulation") is not None


def _summary_row(key: tuple[str, str, str, str], members: list[Row], confidence: float) -> dict[str, Any]:
    model, formulation, mode, setting = key
    valid = [r for r in members if judged(r) and _has_details(r)]

    def total(name: str) -> int:
        return sum(count(r.get(name)) for r in valid)

    done = [_flag(r.get("completed")) for r in valid]
    failures = [r for r, ok in zip(valid, done, strict=True) if not ok]
    counts = category_counts(failures, "error_category", ERROR_CATEGORIES)
    flags = {name: sum(_flag(r.get(name)) for r in valid) for name in ("out_of_budget", "stuck", "unclassified")}

    def share(k: int) -> float | None:
        return k / len(valid) if valid else None

    return {
        "model": model,
        "formulation": formulation,
        "mode": mode,
        "setting": setting,
        "n": len(members),
        "n_valid": len(valid),
        "intent": micro(total("intent_matched"), total("predicted_calls"), total("gold_calls"), judged=bool(valid)),
        "slot": micro(
            total("slot_matched"), total("slot_predicted"), total("slot_gold"), judged=total("intent_matched") > 0
        ),
        "completion": rate(sum(done), len(valid), confidence),
        "errors": {
            "n_failures": len(failures),
            "counts": counts,
            "shares": {c: (v / len(failures) if failures else None) for c, v in counts.items()},
        },
        "agent": {
            "avg_loops": sum(count(r.get("loops")) for r in valid) / len(valid) if valid else None,
            "out_of_budget": share(flags["out_of_budget"]),
            "stuck": share(flags["stuck"]),
            "unclassified": share(flags["unclassified"]),
            "n_out_of_budget": flags["out_of_budget"],
            "n_stuck": flags["stuck"],
            "n_unclassified": flags["unclassified"],
        },
    }


def summarize_liveapi(rows: Sequence[Row], *, confidence: float = 0.95) -> dict[str, Any]:
    """The summary data of one suite from per-episode dicts (``model``, ``setting``, ``outcome``, ``scenario_id``
    and the :func:`episode_details` keys), one row per model × formulation × mode × setting in order of first
    appearance. Episodes that are not judged (infra and config errors) count in ``n`` only; such an episode has no
    details, so it joins the row of its model, formulation (from its id) and setting with the first mode seen
    there (a suite is loaded for one agent protocol, so there is one), else a row of mode ``unknown``."""
    keyed: list[tuple[tuple[str, str, str, str] | None, Row]] = []
    modes: dict[tuple[str, str, str], list[str]] = {}
    for r in rows:
        formulation = r.get("formulation") or _formulation_of_id(str(r.get("scenario_id", "")))
        base = (str(r["model"]), str(formulation), str(r["setting"]))
        mode = r.get("mode")
        if isinstance(mode, str) and mode:
            seen = modes.setdefault(base, [])
            if mode not in seen:
                seen.append(mode)
            keyed.append(((base[0], base[1], mode, base[2]), r))
        else:
            keyed.append((None, {**r, "_base": base}))
    groups: dict[tuple[str, str, str, str], list[Row]] = {}
    for key, r in keyed:
        if key is None:
            base = r["_base"]
            known = modes.get(base)
            key = (base[0], base[1], known[0] if known else UNKNOWN, base[2])
        groups.setdefault(key, []).append(r)
    return {
        "family": FAMILY_NAME,
        "confidence": confidence,
        "rows": [_summary_row(key, members, confidence) for key, members in groups.items()],
    }


def decimal(value: float | None, digits: int = 2) -> str:
    """A rate or score as the paper prints it: ``0.42``; a dash when undefined."""
    return "—" if value is None else f"{value:.{digits}f}"


def interval(value: Rate | None, digits: int = 2) -> str:
    """The Wilson interval of a rate: ``0.30–0.55``."""
    if value is None or value.ci_low is None or value.ci_high is None:
        return "—"
    return f"{value.ci_low:.{digits}f}–{value.ci_high:.{digits}f}"


_TITLES = {"slot": "SLOT", "sel": "SEL", "rest": "REST"}


def _formulation_order(name: str) -> int:
    return FORMULATIONS.index(name) if name in FORMULATIONS else len(FORMULATIONS)


def _sorted(found: Iterable[tuple[str, LiveApiRow]]) -> list[tuple[str, LiveApiRow]]:
    """By formulation in the paper's order (SLOT, SEL, REST), run order within (sorted is stable)."""
    return sorted(found, key=lambda item: _formulation_order(item[1].formulation))


def _sectioned(
    title: str,
    columns: list[str],
    right: list[bool],
    found: list[tuple[str, LiveApiRow]],
    cells: Callable[[str, LiveApiRow], list[str]],
    note: str,
) -> ReportTable:
    """One section per formulation, a Dataset column first; Suite and Setting columns only when the rows have
    several."""
    several_suites = len({suite for suite, _ in found}) > 1
    several_settings = len({row.setting for _, row in found}) > 1
    extra = [*(["Suite"] if several_suites else []), *(["Setting"] if several_settings else [])]
    table = ReportTable(
        title=title,
        columns=["Dataset", columns[0], *extra, *columns[1:]],
        right=[False, right[0], *[False] * len(extra), *right[1:]],
        note=note,
    )
    previous = None
    for suite, row in _sorted(found):
        if row.formulation != previous:
            table.sections.append(len(table.rows))
            previous = row.formulation
        first, *rest = cells(suite, row)
        where = [*([suite] if several_suites else []), *([row.setting] if several_settings else [])]
        table.rows.append([_TITLES.get(row.formulation, row.formulation), first, *where, *rest])
    return table


def _n_range(rows: Iterable[LiveApiRow]) -> str:
    return n_range(row.n_valid for row in rows)


def table3(found: list[tuple[str, LiveApiRow]], title: str = "Table 3", confidence: float = 0.95) -> ReportTable | None:
    """Direct invocation: intent and slot P / R / F1 (micro-averaged) and the completion rate with its Wilson
    interval, per model and formulation; None without direct-mode rows."""
    direct = [(suite, row) for suite, row in found if row.mode == DIRECT]
    if not direct:
        return None

    def cells(suite: str, row: LiveApiRow) -> list[str]:
        i, s = row.intent, row.slot
        scores = [decimal(v) for v in (i.precision, i.recall, i.f1, s.precision, s.recall, s.f1)]
        return [row.model, *scores, decimal(row.completion.rate), interval(row.completion), str(row.n_valid)]

    level = f"{100 * confidence:g}%"
    note = (
        "Direct invocation (one reply plans every call). Intent: position-aware precision / recall / F1 of the "
        "calls (tool and occurrence); Slot: of the arguments of matched calls only (data sources compared by the "
        "call that produced them); both micro-averaged over episodes. Compl. Rate: the sequence returned the gold "
        f"rows; CI: its Wilson {level} interval. n per row: {_n_range(r for _, r in direct)} valid episodes."
    )
    columns = ["Model", "Intent P", "Intent R", "Intent F1", "Slot P", "Slot R", "Slot F1", "Compl. Rate", "CI", "n"]
    return _sectioned(
        f"{title} — direct invocation: intent, slots and completion",
        columns,
        [False, *[True] * 9],
        direct,
        cells,
        note,
    )


def _base_completion(row: LiveApiRow, suite: str, everything: Sequence[tuple[str, LiveApiRow]]) -> Rate | None:
    """The same model's direct completion on the same formulation: same setting (same suite first), else the one
    direct row of that model and formulation."""
    direct = [
        (s, r) for s, r in everything if r.mode == DIRECT and (r.model, r.formulation) == (row.model, row.formulation)
    ]
    same = [(s, r) for s, r in direct if r.setting == row.setting]
    for candidates in ([r for s, r in same if s == suite], [r for _, r in same]):
        if candidates:
            return candidates[0].completion
    return direct[0][1].completion if len(direct) == 1 else None


def table4(found: list[tuple[str, LiveApiRow]], title: str = "Table 4") -> ReportTable | None:
    """ReAct agents: base (direct) and agent completion, average loops and the OOB / stuck / unclassified shares,
    per model and formulation; None without agent rows."""
    agents = [(suite, row) for suite, row in found if row.mode not in (DIRECT, UNKNOWN)]
    if not agents:
        return None

    def cells(suite: str, row: LiveApiRow) -> list[str]:
        base = _base_completion(row, suite, found)
        a = row.agent
        name = row.model if row.mode == "react" else f"{row.model} ({row.mode})"
        return [
            name,
            decimal(base.rate if base else None),
            decimal(row.completion.rate),
            interval(row.completion),
            decimal(a.avg_loops),
            decimal(a.out_of_budget),
            decimal(a.stuck),
            decimal(a.unclassified),
            str(row.n_valid),
        ]

    note = (
        "Agents plan one call per turn and see each result. Base Comp.: the same model's direct completion on the "
        "same formulation (— when it was not run); Agent Comp.: the agent's, with its Wilson interval (CI). Avg. "
        "Loops: turns per episode; OOB (the turn budget ran out), Stuck (two identical failing calls in a row) and "
        "Unclassified (a failure that is neither) are shares of all episodes; OOB and Stuck can overlap. n per "
        f"row: {_n_range(r for _, r in agents)} valid episodes."
    )
    columns = ["Model", "Base Comp.", "Agent Comp.", "CI", "Avg. Loops", "OOB", "Stuck", "Unclassified", "n"]
    return _sectioned(
        f"{title} — ReAct agents: completion and what went wrong",
        columns,
        [False, *[True] * 8],
        agents,
        cells,
        note,
    )


def _categories(rows: Iterable[LiveApiRow]) -> list[str]:
    rows = list(rows)
    extra = ["uncategorized"] if any(r.errors.counts.get("uncategorized") for r in rows) else []
    return [*ERROR_CATEGORIES, *extra]


def error_table(found: list[tuple[str, LiveApiRow]], title: str = "Figure 2") -> ReportTable | None:
    """Direct invocation failures by BFCL category (shares of the failures), per model and formulation; None
    without a failed direct-mode episode."""
    direct = [(suite, row) for suite, row in found if row.mode == DIRECT and row.errors.n_failures]
    if not direct:
        return None
    categories = _categories(r for _, r in direct)

    def cells(suite: str, row: LiveApiRow) -> list[str]:
        shares = [decimal(row.errors.shares.get(c)) if c in row.errors.shares else "—" for c in categories]
        return [row.model, str(row.errors.n_failures), *shares]

    legend = "; ".join(f"{COLUMN_OF.get(c, c)}: {c}" for c in categories)
    note = (
        "Failed direct-invocation episodes by BFCL category, each failure in the first category that applies "
        "(in column order); shares of the failures. other: every call matched the gold sequence and the output "
        f"still differed. Columns — {legend}."
    )
    return _sectioned(
        f"{title} (as a table) — direct invocation failures by category",
        ["Model", "Failures", *[COLUMN_OF.get(c, c) for c in categories]],
        [False, True, *[True] * len(categories)],
        direct,
        cells,
        note,
    )


class LiveApiSummary(ModelSettingSummary):
    """The Live API-Bench numbers of one suite: see :func:`summarize_liveapi`."""

    family: Literal["liveapi"] = "liveapi"
    confidence: float = 0.95
    rows: list[LiveApiRow] = Field(default_factory=list)

    def found(self, suite: str) -> list[tuple[str, LiveApiRow]]:
        """(suite, row) pairs, the input of the table builders."""
        return [(suite, row) for row in self.rows]

    def tables(self, suite: str) -> list[ReportTable]:
        """Table 3 (direct invocation), Table 4 (ReAct agents) and the error categories, each when the suite has
        its data."""
        found = self.found(suite)
        made = [table3(found, f"{suite}: Table 3", self.confidence), table4(found, f"{suite}: Table 4")]
        made.append(error_table(found, f"{suite}: Figure 2"))
        return [t for t in made if t is not None]

    def figures(self, suite: str) -> list[StackedBars]:
        """Error categories as stacked shares per model × formulation (direct mode; none when nothing failed)."""
        several_settings = len({r.setting for r in self.rows}) > 1

        def label(row: LiveApiRow) -> str:
            name = f"{row.model}\n{_TITLES.get(row.formulation, row.formulation)}"
            return name + (f" {row.setting}" if several_settings else "")

        return failures_figure(
            "errors",
            f"Tool-calling error categories — {suite}",
            f"BFCL error categories (share of failed direct-invocation episodes) per model and formulation, suite "
            f"{suite}",
            (share_bar(label(row), row.errors.counts) for _, row in _sorted(self.found(suite)) if row.mode == DIRECT),
            "model / formulation",
            order=_categories(self.rows),
        )

    def setting_parts(self, model: str, setting: str) -> list[tuple[str, LiveApiRow]]:
        """A row per formulation and mode: ``liveapi.<formulation>.<mode>.completion.rate`` and so on."""
        return [
            (f"{row.formulation}.{row.mode}", row) for row in self.rows if (row.model, row.setting) == (model, setting)
        ]


def summarize(results: Sequence[EpisodeResult]) -> LiveApiSummary | None:
    """The family summary of one suite's results (None when no judged episode carries the liveapi details)."""
    rows = result_rows(results, "scenario_id")
    if not any_with_details(rows, _has_details):
        return None
    return LiveApiSummary.model_validate(summarize_liveapi(rows))


# ---------------------------------------------------------------------------------------------------------------
# The paper's tables across a run's suites: ``undertow report RUN --layout live_api``


def live_api_layout(summaries: Mapping[str, FamilySummary]) -> list[ReportTable]:
    """Tables 3 and 4 of the paper and its Figure 2 as a table, from the liveapi summaries of a run's suites
    (keyed by suite label): one section per formulation (SLOT, SEL, REST), one row per model, decimals with two
    places. A table the run has no data for is one line saying what it needs."""
    ours = [(label, s) for label, s in summaries.items() if isinstance(s, LiveApiSummary)]
    found = [pair for label, s in ours for pair in s.found(label)]
    confidence = ours[0][1].confidence if ours else 0.95
    return [
        table3(found, confidence=confidence)
        or missing_table("Table 3", "direct-invocation episodes (agent protocol direct)"),
        table4(found) or missing_table("Table 4", "ReAct agent episodes (agent protocol react)"),
        error_table(found) or missing_table("Figure 2", "failed direct-invocation episodes"),
    ]


LAYOUTS: dict[str, Callable[[Mapping[str, FamilySummary]], list[ReportTable]]] = {"live_api": live_api_layout}


# ---------------------------------------------------------------------------------------------------------------
# The family object: the build and options (env_core.liveapi), this module's scorer and summary

FAMILY = FamilyDefinition.of(
    build,
    build.LiveApiSuite,
    FamilyMetrics(episode_details, LiveApiDetails, summarize, LiveApiSummary),
    layouts=LAYOUTS,
    score=score,
    folder_config=build.LiveApiFolder,
    adapt=build.adapt,
    description="Live API-Bench: Spider/BIRD questions compiled into SLOT, SEL and REST tool formulations (REST "
    "served live over HTTP), direct and ReAct modes, intent / slot / completion metrics and BFCL error categories",
)
