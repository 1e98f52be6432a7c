"""Unambiguous gold answers (env_core.sqlgold): existence questions, empty results, ties at a LIMIT cut (top level,
OFFSET, set operations, subqueries, DISTINCT), tie runs of ordered answers, run-by-run comparison, the build table."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from undertow.env_core.sqlgold import (
    EMPTY,
    FAILS,
    TIE,
    GoldAnswer,
    asks_existence,
    gold_answer,
    left_out_table,
    runs,
    same_rows,
)

# Runners and their best times: Ana and Bo tie at 10, Cy and Di tie at 12 with different clubs, Ed runs 15.
RUNNERS = [
    ("Ana", "north", 10),
    ("Bo", "south", 10),
    ("Cy", "north", 12),
    ("Di", "south", 12),
    ("Ed", "north", 15),
]
# Two clubs with two members each (a tie on the member count), one with one; two teams whose ranks tie.
CLUBS = [("north", "Oslo"), ("south", "Lima"), ("east", "Pune")]
TEAMS = [("red", 1), ("blue", 1), ("green", 2)]


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    path = tmp_path / "race.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE runners (name TEXT, club TEXT, best INTEGER)")
        db.executemany("INSERT INTO runners VALUES (?, ?, ?)", RUNNERS)
        db.execute("CREATE TABLE clubs (club TEXT, city TEXT)")
        db.executemany("INSERT INTO clubs VALUES (?, ?)", CLUBS)
        db.execute("CREATE TABLE teams (team TEXT, rank INTEGER)")
        db.executemany("INSERT INTO teams VALUES (?, ?)", TEAMS)
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    yield connection
    connection.close()


def answer(conn: sqlite3.Connection, sql: str, question: str = "What are they?") -> GoldAnswer:
    result = gold_answer(conn, sql, question)
    assert isinstance(result, GoldAnswer), result
    return result


def left_out(conn: sqlite3.Connection, sql: str, question: str = "What are they?") -> tuple[str, str]:
    result = gold_answer(conn, sql, question)
    assert isinstance(result, tuple), result
    return result


# ---------------------------------------------------------------------------------------------------------------
# Which questions ask whether something exists


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Is there a runner from Pune?", True),
        ("  are any clubs in Oslo?", True),
        ("DOES Bo run for north?", True),
        ("Do runners from Lima exist?", True),
        ("Was Ana ever first?", True),
        ("Were there races in May?", True),
        ("Has Ed won?", True),
        ("Have the clubs met?", True),
        ("Show any runner from Pune.", True),  # asks for "any"
        ("Which club has ANY runner under 11?", True),
        ("What is the best time of Ana?", False),
        ("Which runners are in the north club?", False),
        ("Isaac's time?", False),  # "is" only as a whole word
        ("How many runners have any time?", True),
        ("List the company's runners.", False),  # "any" inside a word does not count
        ("Doubles: who ran both?", False),
    ],
)
def test_asks_existence(question: str, expected: bool) -> None:
    assert asks_existence(question) is expected


# ---------------------------------------------------------------------------------------------------------------
# Empty results and failing SQL


def test_an_existence_question_keeps_its_empty_answer(conn: sqlite3.Connection) -> None:
    result = answer(conn, "SELECT name FROM runners WHERE club = 'east'", "Are there runners from the east club?")
    assert result.rows == [] and result.columns == ["name"] and not result.ordered and result.tie_groups == []


def test_a_question_asking_for_something_with_no_rows_is_left_out(conn: sqlite3.Connection) -> None:
    kind, reason = left_out(
        conn, "SELECT name FROM runners WHERE club = 'east'", "What is the name of the east runner?"
    )
    assert kind == EMPTY == "empty result"
    assert reason == "the gold query returns no rows, and the question does not ask whether something exists"


def test_failing_sql_is_left_out_with_sqlites_message(conn: sqlite3.Connection) -> None:
    kind, reason = left_out(conn, "SELECT pace FROM runners", "Is anyone fast?")
    assert kind == FAILS == "gold SQL fails" and reason == "on the database: no such column: pace"


def test_an_unordered_answer_has_no_tie_runs(conn: sqlite3.Connection) -> None:
    result = answer(conn, "SELECT name, best FROM runners WHERE club = 'south'")
    assert result.rows == [["Bo", 10], ["Di", 12]] and result.columns == ["name", "best"]
    assert not result.ordered and result.tie_groups == []


# ---------------------------------------------------------------------------------------------------------------
# Ties at the LIMIT cut


def test_a_tie_at_the_limit_cut_is_left_out(conn: sqlite3.Connection) -> None:
    # the fastest runner: Ana and Bo both ran 10, so "Ana" is one arbitrary cut of two
    kind, reason = left_out(conn, "SELECT name FROM runners ORDER BY best LIMIT 1")
    assert kind == TIE == "tie at the LIMIT cut"
    assert reason == "rows that tie on the sort keys lie on both sides of the cut: " + (
        "SELECT name FROM runners ORDER BY best LIMIT 1"
    )


def test_no_tie_at_the_cut_is_kept_with_its_runs(conn: sqlite3.Connection) -> None:
    # the two fastest are exactly Ana and Bo (10, 10); the third (Cy, 12) lies beyond the cut
    result = answer(conn, "SELECT name, best FROM runners ORDER BY best LIMIT 2")
    assert sorted(result.rows) == [["Ana", 10], ["Bo", 10]] and result.ordered
    assert result.tie_groups == [0, 0]
    # the slowest: Ed alone at 15
    slowest = answer(conn, "SELECT name FROM runners ORDER BY best DESC LIMIT 1")
    assert slowest.rows == [["Ed"]] and slowest.tie_groups == [0]


def test_a_tie_whose_rows_are_the_same_values_is_no_ambiguity(conn: sqlite3.Connection) -> None:
    # the best time: 10 whichever of the two tied runners is cut
    result = answer(conn, "SELECT best FROM runners ORDER BY best LIMIT 1")
    assert result.rows == [[10]] and result.tie_groups == [0]


def test_order_by_without_limit_gives_the_tie_runs(conn: sqlite3.Connection) -> None:
    result = answer(conn, "SELECT name FROM runners ORDER BY best")
    assert result.ordered and len(result.rows) == 5
    assert result.tie_groups == [0, 0, 1, 1, 2]  # {Ana, Bo}, {Cy, Di}, {Ed}
    assert {result.rows[0][0], result.rows[1][0]} == {"Ana", "Bo"} and result.rows[4] == ["Ed"]


def test_a_second_key_splits_the_runs(conn: sqlite3.Connection) -> None:
    result = answer(conn, "SELECT name FROM runners ORDER BY best, name DESC")
    assert result.rows == [["Bo"], ["Ana"], ["Di"], ["Cy"], ["Ed"]] and result.tie_groups == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name, best FROM runners ORDER BY 2 LIMIT 3",  # an ordinal
        "SELECT name, best AS t FROM runners ORDER BY t LIMIT 3",  # an alias
        "SELECT * FROM runners ORDER BY best LIMIT 3",  # a star: the key is projected after it
        "SELECT name FROM runners ORDER BY best + 0 LIMIT 3",  # an expression
    ],
)
def test_keys_are_resolved_as_sqlite_resolves_them(conn: sqlite3.Connection, sql: str) -> None:
    # the third row is Cy or Di, both 12: a tie at the cut however the key is written
    assert left_out(conn, sql)[0] == TIE


def test_a_tie_at_the_offset_is_a_cut_too(conn: sqlite3.Connection) -> None:
    # the second fastest: rows 1 and 2 are Bo (10) and Cy (12), but Ana ties Bo across the OFFSET's cut
    assert left_out(conn, "SELECT name FROM runners ORDER BY best LIMIT 1 OFFSET 1")[0] == TIE
    # the third and fourth: Cy and Di (12), Bo (10) before them and Ed (15) after differ: no tie at either cut
    result = answer(conn, "SELECT name FROM runners ORDER BY best LIMIT 2 OFFSET 2")
    assert sorted(result.rows) == [["Cy"], ["Di"]] and result.tie_groups == [0, 0]


def test_grouped_counts_that_tie_at_the_cut(conn: sqlite3.Connection) -> None:
    # north has 3 runners, south 2: the biggest club is unambiguous
    assert answer(conn, "SELECT club FROM runners GROUP BY club ORDER BY count(*) DESC LIMIT 1").rows == [["north"]]
    # the team with the best rank: red and blue both rank 1
    assert left_out(conn, "SELECT team FROM teams ORDER BY rank LIMIT 1")[0] == TIE


def test_distinct_compares_only_keys_that_are_result_columns(conn: sqlite3.Connection) -> None:
    # a key that is a result column: the two clubs' best times, ties between clubs at the cut
    assert left_out(conn, "SELECT DISTINCT club, best FROM runners ORDER BY best LIMIT 1")[0] == TIE
    # a key that is no result column cannot be projected under DISTINCT: not compared, each row its own run
    result = answer(conn, "SELECT DISTINCT club FROM runners ORDER BY best LIMIT 1")
    assert len(result.rows) == 1 and result.ordered and result.tie_groups == [0]


def test_a_set_operation_compares_its_output_columns(conn: sqlite3.Connection) -> None:
    union = (
        "SELECT name, best FROM runners WHERE club = 'north' UNION SELECT name, best FROM runners WHERE club = 'south'"
    )
    # by name and by ordinal: the fastest of the union is Ana or Bo
    assert left_out(conn, f"{union} ORDER BY best LIMIT 1")[0] == TIE
    assert left_out(conn, f"{union} ORDER BY 2 LIMIT 3")[0] == TIE
    # the slowest: Ed alone; ordered, with its runs
    result = answer(conn, f"{union} ORDER BY best DESC LIMIT 3")
    assert result.rows[0] == ["Ed", 15] and result.ordered and result.tie_groups == [0, 1, 1]


def test_a_tie_inside_an_uncorrelated_subquery_is_left_out(conn: sqlite3.Connection) -> None:
    # the club of the fastest runner: Ana (north) or Bo (south)
    sql = "SELECT city FROM clubs WHERE club = (SELECT club FROM runners ORDER BY best LIMIT 1)"
    kind, reason = left_out(conn, sql, "Which city is the fastest runner's club in?")
    assert kind == TIE
    assert reason == (
        "rows that tie on the sort keys lie on both sides of a subquery's cut: "
        "SELECT club FROM runners ORDER BY best LIMIT 1"
    )
    # the club of the slowest: Ed alone (north)
    slowest = "SELECT city FROM clubs WHERE club = (SELECT club FROM runners ORDER BY best DESC LIMIT 1)"
    assert answer(conn, slowest).rows == [["Oslo"]]
    # in FROM as well: how many of the three fastest run for north is 2 or 1, as Cy or Di makes the cut
    in_from = "SELECT count(*) FROM (SELECT club FROM runners ORDER BY best LIMIT 3) AS t WHERE club = 'north'"
    assert left_out(conn, in_from)[0] == TIE


def test_a_correlated_subquery_is_not_checked_alone(conn: sqlite3.Connection) -> None:
    # per club, its fastest runner's time: the subquery cannot run alone, and its cut values are equal anyway
    sql = (
        "SELECT c.city FROM clubs AS c"
        " WHERE (SELECT r.best FROM runners AS r WHERE r.club = c.club ORDER BY r.best LIMIT 1) = 10"
    )
    assert sorted(answer(conn, sql).rows) == [["Lima"], ["Oslo"]]


def test_spider_double_quoted_strings_survive_the_probe(conn: sqlite3.Connection) -> None:
    result = answer(conn, 'SELECT name FROM runners WHERE club = "north" ORDER BY best LIMIT 2')
    assert result.rows == [["Ana"], ["Cy"]] and result.tie_groups == [0, 1]


def test_bound_parameters_reach_the_probes(conn: sqlite3.Connection) -> None:
    sql = "SELECT name FROM runners WHERE club = :a0 ORDER BY best LIMIT 1"
    assert gold_answer(conn, sql, "Who is fastest?", {"a0": "south"}) == GoldAnswer([["Bo"]], ["name"], True, [0])
    tied = gold_answer(conn, "SELECT name FROM runners WHERE best < :a0 ORDER BY best LIMIT 1", "Who?", {"a0": 11})
    assert isinstance(tied, tuple) and tied[0] == TIE  # Ana and Bo, both under 11


# ---------------------------------------------------------------------------------------------------------------
# Comparing rows run by run


def test_runs_number_consecutive_equal_keys() -> None:
    assert runs([(10,), (10,), (12,), (10,)]) == [0, 0, 1, 2]
    assert runs([]) == []


def test_same_rows_accepts_tied_rows_permuted_within_their_run() -> None:
    want = [("Ana",), ("Bo",), ("Cy",), ("Di",), ("Ed",)]
    groups = [0, 0, 1, 1, 2]
    assert same_rows([("Bo",), ("Ana",), ("Di",), ("Cy",), ("Ed",)], want, True, groups)
    assert not same_rows([("Bo",), ("Ana",), ("Di",), ("Cy",), ("Ed",)], want, True)  # no runs: exact order


def test_same_rows_refuses_rows_moved_across_runs() -> None:
    want = [("Ana",), ("Bo",), ("Cy",), ("Di",), ("Ed",)]
    groups = [0, 0, 1, 1, 2]
    assert not same_rows([("Ana",), ("Cy",), ("Bo",), ("Di",), ("Ed",)], want, True, groups)
    assert not same_rows([("Ana",), ("Bo",), ("Cy",), ("Di",)], want, True, groups)  # a row short
    assert same_rows([("Ed",), ("Cy",), ("Ana",), ("Di",), ("Bo",)], want, False)  # unordered: a multiset
    assert not same_rows([("Ed",), ("Ed",), ("Ana",), ("Di",), ("Bo",)], want, False)


def test_same_rows_refuses_runs_that_do_not_fit_the_rows() -> None:
    with pytest.raises(ValueError, match="tie_groups has 2 entries for 3 gold rows"):
        same_rows([(1,), (2,), (3,)], [(1,), (2,), (3,)], True, [0, 0])


# ---------------------------------------------------------------------------------------------------------------
# The build table


def test_the_table_counts_per_database_and_in_all() -> None:
    table = left_out_table(
        {"race": {"questions": 9, "kept": 6, TIE: 2, EMPTY: 1}, "art": {"questions": 4, "kept": 4}},
        title="gold",
    )
    assert table.title == "gold"
    assert table.columns == [
        "database",
        "questions",
        "kept",
        "left out: tie at the LIMIT cut",
        "left out: empty result",
    ]
    assert table.rows == [["art", "4", "4", "0", "0"], ["race", "9", "6", "2", "1"], ["all", "13", "10", "2", "1"]]
    assert table.sections == [2] and table.right == [False, True, True, True, True]
    single = left_out_table({"race": {"questions": 1, "kept": 1}})
    assert single.rows == [["race", "1", "1", "0", "0"]]  # one database: no total row
