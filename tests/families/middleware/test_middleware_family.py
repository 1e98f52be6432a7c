"""The middleware family (FUXI) end to end: the build over the real Spider dev databases and over a Spider-format
folder written here (databases the family has never seen), the oracle reaching EX = 100% and F1 = 1 on every task,
the suite options (environment, mode, the schema-in-the-prompt baseline), what a final answer denotes (a query's
rows, a variable's entities) and the bad inputs the issue names, through the real environment."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from helpers.builders import call
from helpers.cli import run_cli
from helpers.paths import SPIDER_DEV as SPIDER

from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.middleware.build import MiddlewareSuite, build, final_answer, requires_content
from undertow.env_core.model import Action, EpisodeResult, Outcome
from undertow.env_core.suites import SuiteRef, load_ref, suite_ref
from undertow.scoring.middleware import database_measures, kb_measures, summarize
from undertow.workers.clients import PolicyModel
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec, run_shard


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The suite folder as a user builds it: `undertow build middleware --spider DIR --out OUT`."""
    if not SPIDER.is_dir():
        pytest.fail(f"{SPIDER} is missing: the tests need ../shared beside the repository")
    out = tmp_path_factory.mktemp("middleware") / "suite"
    done = run_cli("build", "middleware", "--spider", str(SPIDER), "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out, done.stdout


def run_policy(reference: SuiteRef, policy: str = "oracle", limit: int | None = None) -> ShardOutput:
    suite = load_ref(reference)
    scenarios = suite.scenarios[:limit] if limit else suite.scenarios
    shard = ShardSpec(
        shard_id=f"{policy}-{reference.label}",
        model=PolicyModel(name=policy),
        suite=reference,
        setting=PRESET_SETTINGS["clean"],
        episodes=[EpisodePlan(episode_id=f"{s.id}-0", scenario_id=s.id, seed=0) for s in scenarios],
    )
    return run_shard(shard)


def run_both(folder: Path, policy: str = "oracle") -> list[EpisodeResult]:
    """The policy on every task of a built folder: a run per environment, as each has its own prompt."""
    return [
        result
        for environment in ("database", "kb")
        for result in run_policy(suite_ref({"path": str(folder), "environment": environment}), policy).results
    ]


def test_the_build_counts_every_task(built: tuple[Path, str]) -> None:
    folder, printed = built
    suite = load_ref(suite_ref(str(folder)))
    by_environment = Counter(s.metadata["environment"] for s in suite.scenarios)
    # 601 questions, of which 30 tie at a LIMIT cut and 46 return nothing for a question that asks for something
    # KB: 591 derived, 251 kept (the build's "all" row): three databases at their cap of 50 (20%)
    assert by_environment == {"database": 601 - 30 - 46, "kb": 251}
    assert "7,716" in printed and "16,944" in printed  # entities and triples over the ten databases
    assert "database tasks: gold answers by database" in printed
    assert "knowledge-base questions by database" in printed and "not comparable with the paper's Table 2" in printed
    kb = [s.metadata for s in suite.scenarios if s.metadata["environment"] == "kb"]
    hops = Counter(m["hops"] for m in kb)
    assert hops == {2: 84, 3: 167}
    # the bars: mean hops at least 2.5, aggregations 30-45%, conjunctions, no plain two-hop question
    assert sum(h * n for h, n in hops.items()) / len(kb) >= 2.5
    aggregations = sum(m["kind"] != "path" for m in kb)
    assert 0.30 <= aggregations / len(kb) <= 0.45 and aggregations == 99
    assert sum(m["conjunction"] for m in kb) == 14 and not [m for m in kb if m["hops"] == 2 and m["kind"] == "path"]
    conjunction = next(m for m in kb if m["conjunction"] and m["kind"] == "path")
    assert len(conjunction["entities"]) == 2 and all(
        f'"{e}"' in conjunction["question"] for e in conjunction["entities"]
    )
    # superlatives rank measures and dates (35 and 1), never an identifier, code or flag
    superlatives = [m for m in kb if m["kind"] in ("argmax", "argmin")]
    assert Counter(m["attribute_kind"] for m in superlatives) == {"measure": 35, "date": 1}
    identifier = {"id", "code", "zip", "zipcode", "postcode", "postal", "phone", "ssn", "fax", "key", "no", "number"}
    assert not [m for m in superlatives if set(m["attribute"].split(".", 1)[1].split("_")) & identifier]
    # no database above max(20%, 1 / 10 databases) of the questions
    shares = Counter(m["kb"] for m in kb)
    assert max(shares.values()) <= 0.2 * len(kb) and shares["kb__car_1"] == 50 and shares["kb__pets_1"] == 2
    assert "19.9%" in printed and "99 (39%)" in printed and "35 / 1" in printed
    assert (folder / "databases" / "kb__world_1.sqlite").is_file()


def test_the_oracle_reaches_ex_100_and_f1_1_on_every_task(built: tuple[Path, str]) -> None:
    results = run_both(built[0])
    assert len(results) == 525 + 251
    assert all(r.outcome == Outcome.scored for r in results)
    database = [r for r in results if r.details["environment"] == "database"]
    kb = [r for r in results if r.details["environment"] == "kb"]
    assert all(r.details["ex"] and r.details["valid"] for r in database)
    assert all(r.details["f1"] == 1.0 and r.details["valid"] for r in kb)
    summary = summarize(results)
    assert summary is not None and [t.title.split(": ", 1)[1][:12] for t in summary.tables("s")] == [
        "FUXI Table 1",
        "FUXI Table 2",
    ]


def test_the_baseline_without_tools_and_the_environment_option(built: tuple[Path, str]) -> None:
    baseline = suite_ref({"path": str(built[0]), "environment": "database", "tools": False})
    suite = load_ref(baseline)
    assert suite.scenarios and all(s.tools == [] and "### SQLite tables" in s.task for s in suite.scenarios)
    output = run_policy(baseline, limit=40)
    assert all(r.details["ex"] and r.n_tool_calls == 0 for r in output.results)  # the query from the schema alone
    only_kb = load_ref(suite_ref({"path": str(built[0]), "environment": "kb"}))
    assert {s.metadata["environment"] for s in only_kb.scenarios} == {"kb"}
    with pytest.raises(ValueError, match=r"tools: false .* needs environment: database"):
        suite_ref({"path": str(built[0]), "tools": False})


def test_a_spider_format_folder_the_family_has_never_seen(tmp_path: Path) -> None:
    """Databases written here: two tables with a foreign key, questions with gold SQL; the build finds both kinds
    of task, and the oracle solves them all."""
    folder = tmp_path / "garden"
    db_dir = folder / "database" / "garden"
    db_dir.mkdir(parents=True)
    conn = sqlite3.connect(db_dir / "garden.sqlite")
    conn.executescript(
        """
        CREATE TABLE bed (bed_id INTEGER PRIMARY KEY, name TEXT, area REAL);
        CREATE TABLE plant (plant_id INTEGER PRIMARY KEY, name TEXT, height REAL, bed_id INTEGER,
                            FOREIGN KEY (bed_id) REFERENCES bed(bed_id));
        CREATE TABLE gardener (gardener_id INTEGER PRIMARY KEY, name TEXT, age INTEGER);
        CREATE TABLE tends (gardener_id INTEGER, bed_id INTEGER, PRIMARY KEY (gardener_id, bed_id),
                            FOREIGN KEY (gardener_id) REFERENCES gardener(gardener_id),
                            FOREIGN KEY (bed_id) REFERENCES bed(bed_id));
        INSERT INTO bed VALUES (1, 'North bed', 12.5), (2, 'South bed', 8.0), (3, 'Herb spiral', 3.2);
        INSERT INTO plant VALUES (1, 'Tomato', 1.2, 1), (2, 'Basil', 0.3, 3), (3, 'Rosemary', 0.8, 3),
                                 (4, 'Squash', 0.6, 2), (5, 'Bean', 1.9, 1), (6, 'Thyme', 0.2, 3);
        INSERT INTO gardener VALUES (1, 'Ines', 41), (2, 'Tomas', 29), (3, 'Wren', 63);
        INSERT INTO tends VALUES (1, 1), (1, 3), (2, 2), (3, 3), (3, 1);
        """
    )
    conn.commit()
    conn.close()
    tables = [
        {
            "db_id": "garden",
            "table_names_original": ["bed", "plant", "gardener", "tends"],
            "table_names": ["bed", "plant", "gardener", "tends"],
            "column_names_original": [
                [-1, "*"],
                [0, "bed_id"],
                [0, "name"],
                [0, "area"],
                [1, "plant_id"],
                [1, "name"],
                [1, "height"],
                [1, "bed_id"],
                [2, "gardener_id"],
                [2, "name"],
                [2, "age"],
                [3, "gardener_id"],
                [3, "bed_id"],
            ],
            "column_names": [
                [-1, "*"],
                [0, "bed id"],
                [0, "name"],
                [0, "area"],
                [1, "plant id"],
                [1, "name"],
                [1, "height"],
                [1, "bed id"],
                [2, "gardener id"],
                [2, "name"],
                [2, "age"],
                [3, "gardener id"],
                [3, "bed id"],
            ],
            "column_types": [
                *["text", "number", "text", "number", "number", "text", "number", "number"],
                *["number", "text", "number", "number", "number"],
            ],
            "primary_keys": [1, 4, 8],
            "foreign_keys": [[7, 1], [11, 8], [12, 1]],
        }
    ]
    (folder / "tables.json").write_text(json.dumps(tables))
    questions = [
        ("Which plants grow in the North bed?", "SELECT T1.name FROM plant AS T1 JOIN bed AS T2 ON T1.bed_id = "
         "T2.bed_id WHERE T2.name = 'North bed'"),
        ("How many plants are taller than half a metre?", "SELECT count(*) FROM plant WHERE height > 0.5"),
        ("List the beds by area, largest first.", "SELECT name FROM bed ORDER BY area DESC"),
        ("Which gardeners tend the herb spiral?", "SELECT T1.name FROM gardener AS T1 JOIN tends AS T2 ON "
         "T1.gardener_id = T2.gardener_id JOIN bed AS T3 ON T2.bed_id = T3.bed_id WHERE T3.name = 'Herb spiral'"),
        ("Names of beds and plants together.", "SELECT name FROM bed UNION SELECT name FROM plant"),
    ]  # fmt: skip
    entries = [{"db_id": "garden", "question": q, "query": sql} for q, sql in questions]
    (folder / "dev.json").write_text(json.dumps(entries))
    out = tmp_path / "suite"
    tables_built = build(MiddlewareSuite(family="middleware", spider=str(folder)), out)
    row = tables_built[0].rows[0]
    assert row[0] == "garden" and row[1] == "5" and int(row[7]) > 0  # five SQL tasks, some KB questions
    results = run_both(out)
    assert all(r.outcome == Outcome.scored and r.correct for r in results)
    kinds = Counter(r.details["environment"] for r in results)
    assert kinds["database"] == 5 and kinds["kb"] > 0
    tended = load_ref(suite_ref(str(out)))
    relations = {rel for s in tended.scenarios if s.metadata["environment"] == "kb" for rel in s.metadata["relations"]}
    assert any("tends" in rel for rel in relations), relations  # the junction table is a relation both ways


# ---------------------------------------------------------------------------------------------------------------
# Final answers, and the bad inputs the issue names


def episode(folder: Path, environment: str, database: str | None = None):  # type: ignore[no-untyped-def]
    suite = load_ref(suite_ref({"path": str(folder), "environment": environment}))
    scenario = next(s for s in suite.scenarios if database in (None, s.metadata.get("database")))
    env = suite.environment(scenario, 0, PRESET_SETTINGS["clean"])
    env.reset()
    return env, scenario


def test_a_final_sql_answer_is_run_read_only_and_a_write_is_never_valid(built: tuple[Path, str]) -> None:
    env, scenario = episode(built[0], "database", "concert_singer")
    database = Path(built[0]) / "databases" / f"{scenario.metadata['database']}.sqlite"
    before = database.read_bytes()
    refused = call(env, "search_by_SQL", query="DROP TABLE singer")
    assert not refused.ok and "read-only" in refused.error.message and "only SELECT" in refused.error.message
    env.step(Action(kind="final_answer", content="Final Answer: DELETE FROM singer"))
    assert "readonly" in env.answer_result["error"] or "read-only" in env.answer_result["error"]
    assert database_measures(env.answer_result, scenario) == (False, False)
    assert database.read_bytes() == before
    env.close()
    env, scenario = episode(built[0], "database")
    env.step(Action(kind="final_answer", content=f"Final Answer: ```sql\n{scenario.metadata['gold_sql']};\n```"))
    assert database_measures(env.answer_result, scenario) == (True, True)
    env.close()


def test_kb_answers_name_variables_and_bad_ones_are_not_valid(built: tuple[Path, str]) -> None:
    env, scenario = episode(built[0], "kb")
    missing = call(env, "get_neighbors", variable="#4", relation="x.y")
    assert not missing.ok and "#4 does not exist" in missing.error.message
    entity = scenario.metadata["entities"][0]
    unconnected = call(env, "get_neighbors", variable=entity, relation="no.such_relation")
    assert not unconnected.ok and "get_relations" in unconnected.error.message
    env.step(Action(kind="final_answer", content="Final Answer: #9"))
    assert kb_measures(env.answer_result, scenario) == (0.0, False)
    env.close()


def test_reading_final_answers_and_the_content_label() -> None:
    assert final_answer("Thought: done.\nFinal Answer: SELECT 1;") == "SELECT 1"
    assert final_answer("Final Answer: **#3**") == "#3"
    assert final_answer("```sql\nSELECT name FROM bed\n```") == "SELECT name FROM bed"
    assert requires_content("How many heads are older than 56?", "SELECT count(*) FROM head WHERE age > 56") is False
    assert (
        requires_content("Which singers are from France?", "SELECT name FROM singer WHERE country = 'France'") is False
    )
    assert requires_content("Which singers are French?", "SELECT name FROM singer WHERE country = 'France'") is True


def test_a_missing_spider_folder_is_named_with_a_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "spider-dev").mkdir()
    missing = tmp_path / "spider-dv"
    done = run_cli("build", "middleware", "--spider", str(missing), "--out", str(tmp_path / "o"), timeout=120)
    assert done.returncode == 2
    assert "not found; did you mean 'spider-dev'?" in " ".join(done.stderr.split())


def test_tools_false_needs_the_database_environment_message() -> None:
    with pytest.raises(ValueError, match="needs environment: database"):
        MiddlewareSuite(family="middleware", spider=str(SPIDER), tools=False)
