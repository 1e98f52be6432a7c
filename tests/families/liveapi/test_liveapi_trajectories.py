"""Live API-Bench scored on hand-written trajectories: each is played through the real agent loop by a scripted
OpenAI-compatible endpoint on a scenario of a liveapi suite built from the shared Spider dev databases, and carries
a label — pass or fail, and the category or flag a failure must show. The expected score follows from the label
alone. Scenarios are found by what they are (a count whose answer is 4, a gold with a tie run, a DISTINCT that
matters, ...) and the replies are built from the scenario's gold sequence and rows, so the tests survive renames.

The rules the labels follow (the paper's completion, issue 35): the direct modes complete when the calls' output is
the gold rows (an answer given without calling completes nothing); ReAct completes when that holds and the final
answer states those rows up to minor reformatting; the SQL mode when its query's rows are the gold rows. Replies
are read as the calls alone unless the suite says ``parsing: lenient``. Where the gold is ordered, rows of one run
of tied sort keys may come in any order, in the calls' output and in a final answer alike; a row moved across runs
is another answer. Column order in a ReAct final answer: the answer restates the observation's rows, and "up to
minor reformatting" lets its columns come in another order as long as every row keeps its own values (one column
permutation for all rows, as Spider's execution match allows); values regrouped across rows state other rows.

The protocol test at the end checks what the model receives in each mode of the shipped config."""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers.endpoint import Reply, answer, scripted_server, tool_calls
from helpers.paths import CONFIGS
from helpers.paths import SPIDER_DEV as SPIDER
from helpers.runs import scripted_episode

from undertow.cluster.config import load_config
from undertow.env_core.liveapi.build import REACT_BUDGET, LiveApiSuite
from undertow.env_core.liveapi.prompts import agent_prompt
from undertow.env_core.liveapi.toolbox import LiveApiToolBox
from undertow.env_core.model import EpisodeResult, Outcome, Scenario, Trajectory
from undertow.env_core.suites import Suite, SuiteRef, load_ref, suite_ref
from undertow.workers.prompts import (
    ADVICE_SENTENCE,
    DIRECT_GIVE_UP_SENTENCE,
    GIVE_UP_MARKER,
    GIVE_UP_SENTENCE,
    REACT_ADVICE_SENTENCE,
    REACT_GIVE_UP_SENTENCE,
)

# ---------------------------------------------------------------------------------------------------------------
# Suites, scenarios and episodes


def ref(formulation: str, mode: str, parsing: str = "strict") -> SuiteRef:
    return suite_ref(
        {"family": "liveapi", "spider": str(SPIDER), "formulation": formulation, "mode": mode, "parsing": parsing}
    )


@cache
def suite(formulation: str, mode: str, parsing: str = "strict") -> Suite:
    """One load per suite variant for the whole module (the build itself is cached once per machine)."""
    return load_ref(ref(formulation, mode, parsing))


@pytest.fixture(scope="module", autouse=True)
def _suites_of_this_module() -> Iterator[None]:
    """The suites are loaded once for this module and let go after it."""
    suite.cache_clear()
    yield
    suite.cache_clear()


def pick(found: Suite, what: str, test: Callable[[Scenario], bool]) -> Scenario:
    """The first scenario (by id) that passes ``test``; the failure names what was looked for."""
    for scenario in sorted(found.scenarios, key=lambda s: s.id):
        if test(scenario):
            return scenario
    raise AssertionError(f"no {found.name} scenario is {what}")


def plan(scenario: Scenario) -> list[tuple[str, dict[str, Any]]]:
    """The gold sequence as (tool, arguments)."""
    return [(call.tool, call.model_dump(mode="json")["arguments"]) for call in scenario.gold.plans[0]]


def labels(scenario: Scenario) -> list[str | None]:
    return list(scenario.metadata["liveapi"]["labels"])


def no_repeats(calls: Sequence[tuple[str, Any]]) -> bool:
    return all(a[0] != b[0] for a, b in itertools.pairwise(calls))


def one_value(scenario: Scenario) -> Any:
    ((value,),) = scenario.gold.answer
    return value


def count_four(formulation: str, mode: str) -> Scenario:
    """A count whose gold answer is 4, its sequence without a function called twice in a row (the SQL mode's
    scenario of the same question: that mode has no sequence)."""
    found = pick(
        suite(formulation, "direct"),
        "a count answering 4",
        lambda s: s.gold.answer == [[4]] and len(plan(s)) >= 2 and no_repeats(plan(s)),
    )
    return same_question(found, mode)


def same_question(scenario: Scenario, mode: str) -> Scenario:
    """The scenario of the same question in another mode of its formulation's suite."""
    return pick(
        suite(str(scenario.metadata["formulation"]), mode), f"question {scenario.id}", lambda s: s.id == scenario.id
    )


def rest_count_four() -> Scenario:
    return pick(suite("rest", "direct"), "a REST count answering 4", lambda s: s.gold.answer == [[4]])


def sel_count_four() -> Scenario:
    return pick(suite("sel", "direct"), "a SEL count answering 4", lambda s: s.gold.answer == [[4]])


def distinct_matters(formulation: str, mode: str) -> Scenario:
    """A one-column question whose gold retrieves with distinct: true, where leaving DISTINCT out of its SQL gives
    more rows than the gold has."""
    found = suite(formulation, mode)

    def test(scenario: Scenario) -> bool:
        sql = str(scenario.metadata["sql"])
        if not re.search(r"(?i)\bselect\s+distinct\b", sql) or len(scenario.gold.answer[0]) != 1:
            return False
        return len(rows(found, scenario, re.sub(r"(?i)\bdistinct\b", "", sql, count=1))) > len(scenario.gold.answer)

    return pick(found, "a question whose DISTINCT matters", test)


def rows(found: Suite, scenario: Scenario, sql: str) -> list[tuple[Any, ...]]:
    assert isinstance(found.toolbox, LiveApiToolBox)
    path = found.toolbox.databases[str(scenario.metadata["database"])]
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(sql).fetchall()


def tied(formulation: str, mode: str) -> Scenario:
    """An ORDER BY question whose gold rows have a run of tied sort keys, answered by one sort and one retrieve."""
    return pick(
        suite(formulation, mode),
        "an ordered question with a tie run (gold.tie_groups repeating a number)",
        lambda s: (
            s.gold.ordered
            and len(set(s.gold.tie_groups)) < len(s.gold.tie_groups)
            and [name for name, _ in plan(s)] == ["sort_data", "retrieve_data"]
        ),
    )


def runs(scenario: Scenario) -> list[list[list[Any]]]:
    """The gold rows cut into their tie runs."""
    out: dict[int, list[list[Any]]] = {}
    for row, group in zip(scenario.gold.answer, scenario.gold.tie_groups, strict=True):
        out.setdefault(group, []).append(row)
    return list(out.values())


def permuted_within_runs(scenario: Scenario) -> list[list[Any]]:
    """The gold rows with every tie run reversed: the same answer, since tied rows may come in any order."""
    return [row for run in runs(scenario) for row in reversed(run)]


def moved_across_runs(scenario: Scenario) -> list[list[Any]]:
    """The gold rows with the first row of the first tie run swapped with the first row after that run."""
    answer = [list(row) for row in scenario.gold.answer]
    groups = scenario.gold.tie_groups
    first = next(g for g in groups if groups.count(g) > 1)
    start = groups.index(first)
    after = start + groups.count(first)
    if after >= len(answer):  # the run ends the answer: swap with the row before it
        after = start - 1
    answer[start], answer[after] = answer[after], answer[start]
    return answer


def float_answer(mode: str) -> Scenario:
    """A one-value average whose value differs at 4 decimals from its 1-decimal rounding."""

    def test(s: Scenario) -> bool:
        if len(s.gold.answer) != 1 or len(s.gold.answer[0]) != 1 or not isinstance(s.gold.answer[0][0], float):
            return False
        value = s.gold.answer[0][0]
        return round(value, 4) != round(value, 1) and no_repeats(plan(s))

    return pick(suite("slot", mode), "a one-value float answer", test)


def repeated_calls(mode: str) -> Scenario:
    """A question whose gold sequence calls one function twice in a row (two filters)."""
    return pick(
        suite("slot", mode),
        "answered by two consecutive calls of one function",
        lambda s: not no_repeats(plan(s)) and len(s.gold.answer) == 1,
    )


def two_columns(mode: str) -> Scenario:
    """An unordered question of 2 to 4 rows of two columns with no equal cells, answered by a short sequence."""

    def test(s: Scenario) -> bool:
        answer = s.gold.answer
        cells = [str(v) for row in answer for v in row]
        return (
            not s.gold.ordered
            and 2 <= len(answer) <= 4
            and all(len(row) == 2 for row in answer)
            and len(set(cells)) == len(cells)
            and all(isinstance(row[1], int) for row in answer)
            and len(plan(s)) <= 2
        )

    return pick(suite("slot", mode), "a small two-column answer", test)


@dataclass
class Played:
    result: EpisodeResult
    trajectory: Trajectory
    requests: list[dict[str, Any]]


def play(reference: SuiteRef, scenario: Scenario, replies: list[Reply]) -> Played:
    """One episode of ``scenario`` through the real runner and agent loop, the model a scripted endpoint serving
    ``replies`` in order (a request past the script fails the test)."""
    with scripted_server(replies) as server:
        output = scripted_episode(reference, server.base_url, scenario.id)
    (result,), (trajectory,) = output.results, output.trajectories
    return Played(result, trajectory, server.chat_requests)


# ---------------------------------------------------------------------------------------------------------------
# Replies


def call_list(calls: Sequence[tuple[str, dict[str, Any]]], names: Sequence[str | None] = ()) -> list[dict[str, Any]]:
    """Calls in the direct prompt's form, each with a label (the gold's where it has one)."""
    out = []
    for i, (name, arguments) in enumerate(calls):
        label = names[i] if i < len(names) and names[i] else f"OUT_{i}"
        out.append({"name": name, "arguments": arguments, "label": label})
    return out


def gold_list(scenario: Scenario) -> list[dict[str, Any]]:
    return call_list(plan(scenario), labels(scenario))


def json_reply(scenario: Scenario) -> list[Reply]:
    return [answer(json.dumps(gold_list(scenario)))]


def react_steps(calls: Sequence[tuple[str, dict[str, Any]]], final: str) -> list[Reply]:
    """One Thought / Action / Action Input reply per call, then the final answer."""
    replies = [
        answer(f"Thought: step {i + 1}\nAction: {name}\nAction Input: {json.dumps(arguments)}")
        for i, (name, arguments) in enumerate(calls)
    ]
    return [*replies, answer(f"Thought: I now know the final answer\nFinal Answer: {final}")]


def with_argument(calls: list[tuple[str, dict[str, Any]]], tool: str, key: str, value: Any) -> list[Any]:
    """The sequence with ``key`` of the first ``tool`` call set to ``value``."""
    out: list[tuple[str, dict[str, Any]]] = []
    done = False
    for name, arguments in calls:
        if name == tool and not done and key in arguments:
            arguments = {**arguments, key: value}
            done = True
        out.append((name, arguments))
    assert done, f"no {tool} call with {key}"
    return out


def regrouped(rows_: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """The rows with their second column rotated by one row: the same values, paired with other rows."""
    second = [row[1] for row in rows_]
    return [[row[0], value] for row, value in zip(rows_, second[1:] + second[:1], strict=True)]


def words(rows_: Sequence[Sequence[Any]]) -> str:
    """Rows in words: one per line, values comma-separated."""
    return "\n".join(", ".join(str(v) for v in row) for row in rows_)


def unreadable(played: Played, message: str) -> None:
    """The one reply could not be read: the episode ends there (no second try)."""
    assert played.result.outcome == Outcome.parse_error
    assert played.trajectory.tool_steps() == []
    error = played.trajectory.turns[-1].parse_error
    assert error is not None and message in error


def stage_is(played: Played, stage: str) -> None:
    assert played.trajectory.turns[-1].parse_stage == stage


def duplicated(got: list[list[Any]], gold: list[list[Any]]) -> None:
    """The rows are the gold's values with repeats: more rows, the same distinct rows."""
    assert len(got) > len(gold)
    assert {json.dumps(row) for row in got} == {json.dumps(row) for row in gold}


def observed(played: Played, gold: list[list[Any]], equal: bool) -> None:
    """The last observation returned the gold rows (``equal``) or other rows."""
    assert (output_rows(played.trajectory) == gold) is equal


def calls_failed(played: Played, count: int) -> bool:
    steps = played.trajectory.tool_steps()
    assert len(steps) == count
    assert all(step.observation is not None and not step.observation.ok for step in steps)
    return True


def outcome_is(played: Played, outcome: Outcome) -> bool:
    assert played.result.outcome == outcome
    return True


def query_rows(played: Played) -> list[list[Any]]:
    result = played.trajectory.answer_result
    assert isinstance(result, dict) and "rows" in result
    return list(result["rows"])


def assert_rows(got: list[list[Any]], want: list[list[Any]]) -> None:
    assert got == want


def another_question(scenario: Scenario) -> Scenario:
    """An unordered question of the same database, in the same mode, whose gold rows differ from the scenario's."""
    return pick(
        suite(str(scenario.metadata["formulation"]), str(scenario.metadata["mode"])),
        f"another question of {scenario.metadata['database']}",
        lambda s: (
            s.metadata["database"] == scenario.metadata["database"]
            and not s.gold.ordered
            and s.gold.answer != scenario.gold.answer
            and len(s.gold.answer) == 1
        ),
    )


def query_failed(played: Played, message: str) -> None:
    result = played.trajectory.answer_result
    assert isinstance(result, dict) and message in str(result.get("error"))


# ---------------------------------------------------------------------------------------------------------------
# Labels


FLAGS = ("answered_without_calling", "stuck", "out_of_budget")


@dataclass(frozen=True)
class Label:
    """What a trajectory must score: pass or fail; a failure's BFCL category where the direct modes name one; the
    flags it must raise (every other flag of FLAGS must stay down)."""

    passes: bool
    category: str | None = None
    flags: tuple[str, ...] = ()


PASS = Label(True)


def fail(category: str | None = None, *flags: str) -> Label:
    return Label(False, category, flags)


def assert_scored_as(played: Played, label: Label) -> None:
    result, details = played.result, played.result.details
    assert result.outcome.judged, (result.outcome, played.trajectory.error)
    assert result.solved is label.passes and result.correct is label.passes
    assert result.score == (1.0 if label.passes else 0.0)
    assert details["completed"] is label.passes
    if label.passes:
        assert details["error_category"] is None
    elif label.category is not None:
        assert details["error_category"] == label.category
    for flag in FLAGS:
        assert details[flag] is (flag in label.flags), flag


@dataclass(frozen=True)
class Case:
    """One trajectory: the suite it runs in, how its scenario is found, its replies, and its label."""

    formulation: str
    mode: str
    scenario: Callable[[], Scenario]
    replies: Callable[[Scenario], list[Reply]]
    label: Label
    parsing: str = "strict"
    premise: Callable[[Scenario, Played], object] | None = None  # what the trajectory must show for its label to hold


def slot(mode: str) -> Callable[[], Scenario]:
    return lambda: count_four("slot", mode)


CHAIN_OF_THOUGHT = "The question asks for a count, so I filter, count and read the count: {calls} gives the answer."

CASES: dict[str, Case] = {
    # -- direct mode: what the reply must be
    "direct-gold-json": Case("slot", "direct", slot("direct"), json_reply, PASS),
    "direct-one-code-fence": Case(
        "slot", "direct", slot("direct"), lambda s: [answer(f"```json\n{json.dumps(gold_list(s))}\n```")], PASS
    ),
    "direct-extra-brackets": Case(
        "slot", "direct", slot("direct"), lambda s: [answer(json.dumps([gold_list(s)]))], PASS
    ),
    "direct-tool-call-blocks": Case(
        "slot",
        "direct",
        slot("direct"),
        lambda s: [answer("\n".join(f"<tool_call>\n{json.dumps(c)}\n</tool_call>" for c in gold_list(s)))],
        PASS,
    ),
    "direct-python-literal": Case("slot", "direct", slot("direct"), lambda s: [answer(repr(gold_list(s)))], PASS),
    "direct-answer-without-calling": Case(
        "slot", "direct", slot("direct"), lambda s: [answer("4")], fail("answered_without_calling", *FLAGS[:1])
    ),
    "direct-empty-list": Case(
        "slot", "direct", slot("direct"), lambda s: [answer("[]")], fail("answered_without_calling", *FLAGS[:1])
    ),
    "direct-chain-of-thought-strict": Case(
        "slot",
        "direct",
        slot("direct"),
        lambda s: [answer(CHAIN_OF_THOUGHT.format(calls=json.dumps(gold_list(s))))],
        fail("instruction_alignment_failure"),
        premise=lambda s, p: unreadable(p, "the reply must be the calls alone, with no other text"),
    ),
    "direct-chain-of-thought-lenient": Case(
        "slot",
        "direct",
        slot("direct"),
        lambda s: [answer(CHAIN_OF_THOUGHT.format(calls=json.dumps(gold_list(s))))],
        PASS,
        parsing="lenient",
        premise=lambda s, p: stage_is(p, "embedded_json"),
    ),
    "direct-prose-then-fence-strict": Case(
        "slot",
        "direct",
        slot("direct"),
        lambda s: [answer(f"Here is the plan.\n```json\n{json.dumps(gold_list(s))}\n```")],
        fail("instruction_alignment_failure"),
        premise=lambda s, p: unreadable(p, "the reply must be the calls alone, with no other text"),
    ),
    "direct-prose-then-fence-lenient": Case(
        "slot",
        "direct",
        slot("direct"),
        lambda s: [answer(f"Here is the plan.\n```json\n{json.dumps(gold_list(s))}\n```")],
        PASS,
        parsing="lenient",
        premise=lambda s, p: stage_is(p, "fenced_json"),
    ),
    "direct-truncated-json": Case(
        "slot",
        "direct",
        slot("direct"),
        lambda s: [answer(json.dumps(gold_list(s))[:-20])],
        fail("instruction_alignment_failure"),
        premise=lambda s, p: unreadable(p, ""),  # read as calls with text after them, or as cut-off JSON
    ),
    "direct-hallucinated-function": Case(
        "slot",
        "direct",
        slot("direct"),
        lambda s: [answer(json.dumps(call_list([("count_rows", {}), *plan(s)[1:]], labels(s))))],
        fail("hallucinated_func_name"),
    ),
    # DISTINCT left out: the same calls with distinct false return the duplicates the gold does not have
    "direct-distinct-left-out": Case(
        "slot",
        "direct",
        lambda: distinct_matters("slot", "direct"),
        lambda s: [
            answer(json.dumps(call_list(with_argument(plan(s), "retrieve_data", "distinct", False), labels(s))))
        ],
        fail("value_error"),
        premise=lambda s, p: duplicated(output_rows(p.trajectory), s.gold.answer),
    ),
    "direct-sel-gold": Case("sel", "direct", sel_count_four, json_reply, PASS),
    "direct-rest-gold": Case("rest", "direct", rest_count_four, json_reply, PASS),
    # -- ReAct
    "react-gold-then-the-value": Case(
        "slot", "react", slot("react"), lambda s: react_steps(plan(s), str(one_value(s))), PASS
    ),
    "react-answer-without-calling": Case(
        "slot",
        "react",
        slot("react"),
        lambda s: [answer("Thought: I know this.\nFinal Answer: August 8, 1986")],
        fail("answered_without_calling", "answered_without_calling"),
    ),
    "react-answer-without-calling-lower-case": Case(
        "slot",
        "react",
        slot("react"),
        lambda s: [answer("thought: i know this.\nfinal answer: august 8, 1986")],
        fail("answered_without_calling", "answered_without_calling"),
    ),
    # the observation is right (the gold count), the answer says another number
    "react-answer-contradicts-the-observation": Case(
        "slot",
        "react",
        slot("react"),
        lambda s: react_steps(plan(s), str(one_value(s) + 1)),
        fail(),
        premise=lambda s, p: observed(p, s.gold.answer, True),
    ),
    # the right number, but the calls looked for another value: the answer did not come from the API
    "react-right-answer-wrong-calls": Case(
        "slot",
        "react",
        slot("react"),
        lambda s: react_steps(with_argument(plan(s), "filter_data", "value", "Atlantis"), str(one_value(s))),
        fail(),
        premise=lambda s, p: observed(p, s.gold.answer, False),
    ),
    # the same failing call twice in a row, then a guess: stuck
    "react-stuck": Case(
        "slot",
        "react",
        slot("react"),
        lambda s: react_steps([("filter_data", {**plan(s)[0][1], "key_name": "no_such_key"})] * 2, "4"),
        fail(None, "stuck"),
        premise=lambda s, p: calls_failed(p, 2),
    ),
    # the same failing call until the 10-turn budget runs out: out of budget and stuck
    "react-out-of-budget": Case(
        "slot",
        "react",
        slot("react"),
        lambda s: react_steps([("filter_data", {**plan(s)[0][1], "key_name": "no_such_key"})] * REACT_BUDGET, "")[
            :REACT_BUDGET
        ],
        fail(None, "stuck", "out_of_budget"),
        premise=lambda s, p: calls_failed(p, REACT_BUDGET) or outcome_is(p, Outcome.budget_exhausted),
    ),
    # two filters in a row is the gold sequence itself: a completed episode is never stuck
    "react-consecutive-calls-completed": Case(
        "slot",
        "react",
        lambda: repeated_calls("react"),
        lambda s: react_steps(plan(s), words(s.gold.answer)),
        PASS,
    ),
    # float formatting: 4 decimals are the comparison's precision, 1 decimal is another number
    "react-float-four-decimals": Case(
        "slot", "react", lambda: float_answer("react"), lambda s: react_steps(plan(s), f"{one_value(s):.4f}"), PASS
    ),
    "react-float-one-decimal": Case(
        "slot", "react", lambda: float_answer("react"), lambda s: react_steps(plan(s), f"{one_value(s):.1f}"), fail()
    ),
    "react-rows-as-json": Case(
        "slot",
        "react",
        lambda: two_columns("react"),
        lambda s: react_steps(plan(s), json.dumps(s.gold.answer)),
        PASS,
    ),
    "react-rows-in-words": Case(
        "slot", "react", lambda: two_columns("react"), lambda s: react_steps(plan(s), words(s.gold.answer)), PASS
    ),
    "react-rows-in-words-columns-swapped": Case(
        "slot",
        "react",
        lambda: two_columns("react"),
        lambda s: react_steps(plan(s), words([row[::-1] for row in s.gold.answer])),
        PASS,
    ),
    # Column order in a ReAct answer. The rule: the answer restates the observation's rows; "up to minor
    # reformatting" (the paper) lets the columns come in another order as long as every row keeps its own values
    # (one column permutation for all rows, as Spider's execution match allows); values regrouped across rows
    # state other rows and fail.
    "react-rows-as-json-columns-swapped": Case(
        "slot",
        "react",
        lambda: two_columns("react"),
        lambda s: react_steps(plan(s), json.dumps([row[::-1] for row in s.gold.answer])),
        PASS,
    ),
    "react-rows-in-words-values-regrouped": Case(
        "slot",
        "react",
        lambda: two_columns("react"),
        lambda s: react_steps(plan(s), words(regrouped(s.gold.answer))),
        fail(),
    ),
    # tied rows in the answer: any order within a run is the same answer; a row moved across runs is not
    "react-ties-permuted-within-runs": Case(
        "slot",
        "react",
        lambda: tied("slot", "react"),
        lambda s: react_steps(plan(s), json.dumps(permuted_within_runs(s))),
        PASS,
    ),
    "react-ties-moved-across-runs": Case(
        "slot",
        "react",
        lambda: tied("slot", "react"),
        lambda s: react_steps(plan(s), json.dumps(moved_across_runs(s))),
        fail(),
    ),
    "react-rest-gold": Case(
        "rest",
        "react",
        lambda: same_question(rest_count_four(), "react"),
        lambda s: react_steps(plan(s), str(one_value(s))),
        PASS,
    ),
    # -- native tool calling (Table 3's "(Tools)" rows)
    "tools-rest-native-gold": Case(
        "rest", "tools", lambda: same_question(rest_count_four(), "tools"), lambda s: [tool_calls(*plan(s))], PASS
    ),
    "tools-native-gold": Case("slot", "tools", slot("tools"), lambda s: [tool_calls(*plan(s))], PASS),
    "tools-no-tool-call": Case(
        "slot",
        "tools",
        slot("tools"),
        lambda s: [answer("4")],
        fail("answered_without_calling", "answered_without_calling"),
    ),
    "tools-wrong-value": Case(
        "slot",
        "tools",
        slot("tools"),
        lambda s: [tool_calls(*with_argument(plan(s), "filter_data", "value", "Atlantis"))],
        fail("value_error"),
    ),
    # -- the SQL mode (Table 6)
    "sql-gold": Case("slot", "sql", slot("sql"), lambda s: [answer(str(s.gold.reports[0]))], PASS),
    "sql-gold-fenced": Case("slot", "sql", slot("sql"), lambda s: [answer(f"```sql\n{s.gold.reports[0]}\n```")], PASS),
    "sql-distinct-left-out": Case(
        "slot",
        "sql",
        lambda: distinct_matters("slot", "sql"),
        lambda s: [answer(re.sub(r"(?i)\bdistinct\b", "", str(s.gold.reports[0]), count=1))],
        fail(),
        premise=lambda s, p: duplicated(query_rows(p), s.gold.answer),
    ),
    # another question's query on the same database: it runs, and returns that question's rows
    "sql-another-questions-query": Case(
        "slot",
        "sql",
        slot("sql"),
        lambda s: [answer(str(another_question(s).gold.reports[0]))],
        fail(),
        premise=lambda s, p: assert_rows(query_rows(p), another_question(s).gold.answer),
    ),
    "sql-failing-query": Case(
        "slot",
        "sql",
        slot("sql"),
        lambda s: [answer("SELECT count(*) FROM no_such_table")],
        fail(),
        premise=lambda s, p: query_failed(p, "no such table: no_such_table"),
    ),
}


def _params() -> list[Any]:
    return list(CASES)


@pytest.mark.parametrize("name", _params())
def test_trajectory_scores_as_labelled(name: str) -> None:
    case = CASES[name]
    scenario = case.scenario()
    replies = case.replies(scenario)
    played = play(ref(case.formulation, case.mode, case.parsing), scenario, replies)
    assert len(played.requests) == len(replies)  # every reply was asked for: one in the direct modes, no retry
    if case.premise is not None:
        case.premise(scenario, played)
    assert_scored_as(played, case.label)


def test_the_labels_cover_what_the_issue_names() -> None:
    assert len(CASES) + 5 >= 30  # with the two tie, two wrong-question and one ATTACH trajectories below
    labels_ = [case.label for case in CASES.values()]
    assert any(label.passes for label in labels_) and any(not label.passes for label in labels_)
    assert {case.mode for case in CASES.values()} == {"direct", "tools", "react", "sql"}


def output_rows(trajectory: Trajectory) -> list[list[Any]]:
    """The rows the last call returned (records as their values)."""
    seen = trajectory.tool_steps()[-1].observation
    assert seen is not None and seen.ok
    return [list(r.values()) if isinstance(r, dict) else [r] for r in seen.result]


def presort(scenario: Scenario) -> tuple[str, bool]:
    """A retrieved column and a direction whose sort puts some tie run of the gold rows in another order."""
    retrieve = plan(scenario)[-1][1]
    keys = retrieve["key_name"] if isinstance(retrieve["key_name"], list) else [retrieve["key_name"]]
    for (index, key), ascending in itertools.product(enumerate(keys), (True, False)):
        for run in runs(scenario):
            values = [row[index] for row in run]
            if sorted(values, reverse=not ascending) != values:
                return key, ascending
    raise AssertionError(f"{scenario.id}: no retrieved column orders a tie run otherwise")


def test_tied_rows_in_another_order_pass_and_rows_moved_across_runs_fail() -> None:
    """Direct mode on an ORDER BY question with a tie run: sorting first by another column, then by the gold key
    (a stable sort), returns the tied rows in another order: the same answer. The gold sort in the other
    direction moves rows across runs: another answer."""
    scenario = tied("slot", "direct")
    (sort_name, sort_args), (retrieve_name, retrieve_args) = plan(scenario)
    key, ascending = presort(scenario)
    calls = [
        (sort_name, {**sort_args, "key_name": key, "ascending": ascending}),
        (sort_name, {**sort_args, "data_source": "$SORTED_DF_0$"}),
        (retrieve_name, {**retrieve_args, "data_source": "$SORTED_DF_1$"}),
    ]
    reply = answer(json.dumps(call_list(calls, ["SORTED_DF_0", "SORTED_DF_1", None])))
    played = play(ref("slot", "direct"), scenario, [reply])
    got = output_rows(played.trajectory)
    # the premise: the same rows as the gold, in another order
    assert got != scenario.gold.answer and sorted(map(str, got)) == sorted(map(str, scenario.gold.answer))
    assert_scored_as(played, PASS)

    flipped = [(sort_name, {**sort_args, "ascending": not sort_args["ascending"]}), (retrieve_name, retrieve_args)]
    played = play(ref("slot", "direct"), scenario, [answer(json.dumps(call_list(flipped, labels(scenario))))])
    assert output_rows(played.trajectory) != scenario.gold.answer
    assert_scored_as(played, fail("value_error"))


def paraphrases(a: Scenario, b: Scenario) -> bool:
    """Spider words each question twice, at neighbouring indices: such a pair asks the same thing."""
    return abs(int(a.metadata["question"]) - int(b.metadata["question"])) <= 1


def rest_pair(found: Suite) -> tuple[Scenario, Scenario, Scenario]:
    """Three REST questions of one database, each answered by one call of its own endpoint: A; B, another question
    (not a rewording of A) whose rows happen to equal A's; C, whose rows differ."""

    def single(s: Scenario) -> bool:
        return len(plan(s)) == 1 and not s.gold.ordered

    by_database: dict[str, list[Scenario]] = {}
    for s in sorted(found.scenarios, key=lambda s: s.id):
        if single(s):
            by_database.setdefault(str(s.metadata["database"]), []).append(s)
    for questions in by_database.values():
        for a, b in itertools.permutations(questions, 2):
            if plan(a)[0][0] != plan(b)[0][0] and a.gold.answer == b.gold.answer and not paraphrases(a, b):
                others = [c for c in questions if plan(c)[0][0] != plan(a)[0][0] and c.gold.answer != a.gold.answer]
                if others:
                    return a, b, others[0]
    raise AssertionError("no REST questions with coincidentally equal rows")


def test_the_right_rows_for_the_wrong_question() -> None:
    """The calls of another question's gold, in REST direct mode: they return that question's rows. Other rows
    fail (the wrong endpoint). Rows that happen to equal the gold pass — only because they equal it: completion
    reads what the calls returned, not which API returned it; the intent score shows the wrong call."""
    a, same_rows, other_rows = rest_pair(suite("rest", "direct"))
    assert {plan(same_rows)[0][0], plan(other_rows)[0][0]} <= set(a.tools)  # every endpoint of the database
    played = play(ref("rest", "direct"), a, json_reply(other_rows))
    assert_scored_as(played, fail("wrong_func_name"))
    played = play(ref("rest", "direct"), a, json_reply(same_rows))
    assert output_rows(played.trajectory) == a.gold.answer
    assert_scored_as(played, PASS)
    assert (played.result.details["intent_matched"], played.result.details["gold_calls"]) == (0, 1)


def test_an_sql_answer_that_attaches_a_file_fails_and_creates_nothing(tmp_path: Path) -> None:
    scenario = count_four("slot", "sql")
    target = tmp_path / "attached.db"
    played = play(ref("slot", "sql"), scenario, [answer(f"ATTACH DATABASE '{target}' AS other")])
    assert_scored_as(played, fail())
    assert not target.exists()
    assert isinstance(played.trajectory.answer_result, dict) and "error" in played.trajectory.answer_result


# ---------------------------------------------------------------------------------------------------------------
# The shipped config's protocol: what the model receives in each mode

SHIPPED = load_config(CONFIGS / "liveapi.yaml")
# the generic agent's words, none of which the paper's protocol may send
GENERIC = tuple(
    words_.strip()
    for words_ in (
        GIVE_UP_MARKER,
        GIVE_UP_SENTENCE,
        DIRECT_GIVE_UP_SENTENCE,
        ADVICE_SENTENCE,
        REACT_ADVICE_SENTENCE,
        REACT_GIVE_UP_SENTENCE,
        "as JSON",
        "Tools can fail",
    )
    if words_.strip()
)
ENDING = {"direct": "No function fits.", "tools": "No function fits.", "sql": "SELECT 1", "react": "Final Answer: none"}


def shipped_suites() -> list[LiveApiSuite]:
    found = [s for s in SHIPPED.suites if isinstance(s, LiveApiSuite)]
    assert len(found) == len(SHIPPED.suites) == 12
    return found


def test_the_shipped_config_runs_every_formulation_in_every_mode_as_the_paper_reads_it() -> None:
    found = shipped_suites()
    assert {(s.formulation, s.mode) for s in found} == set(
        itertools.product(("slot", "sel", "rest"), ("direct", "tools", "react", "sql"))
    )
    assert all(s.parsing == "strict" and not s.obfuscate and s.shortlist == 100 for s in found)


def schema_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.split("\n")]


@pytest.mark.parametrize("shipped", shipped_suites(), ids=lambda s: f"{s.formulation}-{s.mode}")
def test_the_model_receives_the_modes_preset_prompt_and_nothing_generic(shipped: LiveApiSuite) -> None:
    mode, formulation = shipped.mode, shipped.formulation
    found = load_ref(shipped)
    scenario = sorted(found.scenarios, key=lambda s: s.id)[0]
    with scripted_server([answer(ENDING[mode])]) as server:
        output = scripted_episode(shipped, server.base_url, scenario.id, **SHIPPED.agent.model_dump())
    (request,) = server.chat_requests  # one reply ends the episode in every mode
    assert output.results[0].outcome == Outcome.scored
    system, user = request["messages"][0], request["messages"][1]
    assert system["role"] == "system" and user["role"] == "user" and len(request["messages"]) == 2
    preset = agent_prompt(mode, formulation)
    assert isinstance(found.toolbox, LiveApiToolBox)
    specs = {name: found.toolbox.episode_spec(found.toolbox.specs[name], scenario) for name in scenario.tools}
    if mode in ("direct", "react"):
        # the preset, then each of the episode's tools as its JSON schema, one per line
        assert system["content"].startswith(preset)
        listed = schema_lines(system["content"][len(preset) :])
        assert sorted(tool["name"] for tool in listed) == sorted(scenario.tools) and len(listed) == len(specs)
        for tool in listed:
            spec = specs[tool["name"]]
            assert (tool["description"], tool["parameters"]) == (spec.description, spec.parameters)
    else:
        assert system["content"] == preset  # tools: in the request's parameter; sql: no tools at all
    if mode == "tools":
        offered = {tool["function"]["name"]: tool["function"] for tool in request["tools"]}
        assert sorted(offered) == sorted(scenario.tools) and len(request["tools"]) == len(specs)
        for name, function in offered.items():
            assert (function["description"], function["parameters"]) == (
                specs[name].description,
                specs[name].parameters,
            )
    else:
        assert not request.get("tools")
    if mode == "sql":
        assert scenario.tools == []
        question = str(found.toolbox.databases[str(scenario.metadata["database"])])
        with sqlite3.connect(f"file:{question}?mode=ro", uri=True) as conn:
            tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL")
            statements = [(name, " ".join(str(sql).split())) for name, sql in tables if not name.startswith("sqlite_")]
        assert statements and all(sql in user["content"] for _, sql in statements)  # every table's CREATE TABLE
        assert same_question(scenario, "direct").task.split("\n")[0] in user["content"]  # and the question
    else:
        assert user["content"] == scenario.task
    text = json.dumps(request["messages"]) + json.dumps(request.get("tools") or [])
    for words_ in GENERIC:
        assert words_ not in text, words_
