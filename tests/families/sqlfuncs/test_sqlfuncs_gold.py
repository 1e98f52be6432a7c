"""The sqlfuncs build keeps only unambiguous gold (issue 35): an existence question keeps its empty answer, a
question asking for something that gets nothing is left out, ties at a LIMIT cut (top level or in a subquery) are
left out, an ordered answer's tie runs reach the scenario's gold and its scoring, and the build prints the counts
per database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.spider import make_spider

from undertow.env_core.model import Action, Outcome, Scenario, Step, Trajectory, Turn
from undertow.env_core.sqlfuncs.build import BuiltSuite, build_suite, build_tables
from undertow.scoring.trajectory import score_trajectory

CHILE_BOOKS = 'SELECT title FROM books WHERE author_id IN (SELECT id FROM authors WHERE country = "Chile")'
KENYA_LONG = (
    'SELECT title FROM books WHERE pages > 500 AND author_id IN (SELECT id FROM authors WHERE country = "Kenya")'
)
# The library of helpers.spider: Chile's authors are 1 (Salt Roads, Night Ferry) and 3 (Paper Moons, Quiet Harbour);
# Kenya's one author wrote Rift, 400 pages.
QUESTIONS = [
    # no book of Kenya's has over 500 pages: an existence question keeps its empty answer ...
    ("Is there any book over 500 pages by an author from Kenya?", KENYA_LONG),
    # ... a question asking for titles is left out
    ("What are the titles of books over 500 pages by authors from Kenya?", KENYA_LONG),
    # author 1 wrote two books: either is "the first" — a tie at the cut
    ("Name the first book by an author from Chile.", CHILE_BOOKS + " ORDER BY author_id LIMIT 1"),
    # every book by Chile's authors, by author: two runs of two tied books
    ("List the books by authors from Chile, by author.", CHILE_BOOKS + " ORDER BY author_id"),
    # the first country alphabetically is Chile, whose two authors tie inside the subquery
    (
        "What are the books of the author whose country comes first alphabetically?",
        "SELECT title FROM books WHERE author_id = (SELECT id FROM authors ORDER BY country LIMIT 1)",
    ),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltSuite:
    folder = make_spider(tmp_path_factory.mktemp("spider"))
    questions = [{"db_id": "library", "question": q, "query": sql} for q, sql in QUESTIONS]
    (folder / "gold.json").write_text(json.dumps(questions))
    return build_suite(folder, seed=0, augment=1, questions_file="gold.json")


def original(built: BuiltSuite, index: int) -> Scenario:
    return next(s for s in built.scenarios if s.metadata["question_index"] == index and not s.metadata["augmented"])


def test_each_filter_counts_what_it_left_out(built: BuiltSuite) -> None:
    assert built.stats["stages"] == {
        "questions in": 5,
        "parsed and ran": 5,
        "non-empty result, or an existence question": 4,  # the titles of long Kenyan books: none
        "no tie at the LIMIT cut": 2,  # the first Chilean book, the first country's author
        "at most 100 rows": 2,
        "nested SELECT": 2,
        "both paths match gold (kept)": 2,
    }
    assert {s.metadata["question_index"] for s in built.scenarios} == {0, 3}
    assert built.stats["gold_by_database"] == {
        "library": {"questions": 5, "kept": 2, "tie at the LIMIT cut": 2, "empty result": 1}
    }


def test_the_existence_question_keeps_its_empty_answer(built: BuiltSuite) -> None:
    scenario = original(built, 0)
    assert scenario.task == QUESTIONS[0][0] and scenario.gold.answer == [] and not scenario.gold.ordered
    assert scenario.gold.tie_groups == []


def test_the_ordered_answers_tie_runs_reach_the_gold(built: BuiltSuite) -> None:
    scenario = original(built, 3)
    titles = [row["title"] for row in scenario.gold.answer]
    assert scenario.gold.ordered and scenario.gold.tie_groups == [0, 0, 1, 1]
    assert set(titles[:2]) == {"Salt Roads", "Night Ferry"} and set(titles[2:]) == {"Paper Moons", "Quiet Harbour"}
    for variant in built.scenarios:  # augmented variants too: one run number per gold row
        if variant.gold.ordered:
            assert len(variant.gold.tie_groups) == len(variant.gold.answer), variant.id


def answered(scenario: Scenario, rows: list[dict[str, object]]) -> Trajectory:
    text = json.dumps(rows)
    return Trajectory(
        episode_id="e1",
        scenario_id=scenario.id,
        model="m",
        setting="clean",
        seed=0,
        turns=[Turn(index=0, content=text)],
        steps=[Step(turn=0, action=Action(kind="final_answer", content=text))],
        final_answer=text,
        outcome=Outcome.scored,
    )


@pytest.mark.parametrize("answers", ["lenient", "strict"])
def test_scoring_accepts_tied_rows_in_any_order_and_no_row_out_of_its_run(built: BuiltSuite, answers: str) -> None:
    scenario = original(built, 3)
    gold = scenario.gold.answer
    swapped = [gold[1], gold[0], gold[3], gold[2]]  # each author's books in the other order: as valid
    assert score_trajectory(answered(scenario, swapped), scenario, False, answers=answers).solved  # type: ignore[arg-type]
    moved = [gold[0], gold[2], gold[1], gold[3]]  # author 3's book before author 1's second: out of order
    assert not score_trajectory(answered(scenario, moved), scenario, False, answers=answers).solved  # type: ignore[arg-type]


def test_left_out_questions_still_give_their_functions(built: BuiltSuite) -> None:
    sqls = [t.binding["sql"] for t in built.tools if t.binding["role"] == "direct"]
    assert any("ORDER BY country LIMIT 1" in sql for sql in sqls)  # the subquery tie's function: a distractor
    assert any("LIMIT 1" in sql and "author_id IN" in sql for sql in sqls)


def test_the_build_tables_count_per_database(built: BuiltSuite) -> None:
    _, by_database = build_tables(built.stats, built.problems)
    assert by_database.title == "sqlfuncs gold answers by database"
    assert by_database.rows == [["library", "5", "2", "2", "1"]]


def test_a_summary_written_before_the_gold_checks_still_gives_its_tables(built: BuiltSuite, tmp_path: Path) -> None:
    older = {k: v for k, v in built.stats.items() if k != "gold_by_database"}
    (table,) = build_tables(older, [])
    assert table.title == "sqlfuncs build"
