"""The database options of the middleware family (FUXI): how a failed query reads — SQLite's own message by default,
as the paper feeds it back, or undertow's did-you-mean and advice, named in Table 1 — and Figure 4's ablation, the
first rows of each table shown in the task; with the one-line refusals of options that do not fit the environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.endpoint import answer, scripted_server
from helpers.paths import SPIDER_DEV as SPIDER
from helpers.runs import scripted_episode

from undertow.cluster.config import load_config
from undertow.env_core.errors import ConfigError
from undertow.env_core.middleware.build import MiddlewareSuite, build
from undertow.env_core.model import Scenario
from undertow.env_core.suites import Suite, SuiteRef, load_ref, suite_ref
from undertow.scoring.middleware import summarize
from undertow.workers.runner import ShardOutput


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("middleware-options") / "suite"
    build(MiddlewareSuite(family="middleware", spider=str(SPIDER)), out)
    return out


def ref(folder: Path, **options: object) -> SuiteRef:
    return suite_ref({"path": str(folder), "environment": "database", **options})


def singer_task(suite: Suite) -> Scenario:
    return next(s for s in suite.scenarios if s.metadata["database"] == "singer")


def play(reference: SuiteRef, scenario: Scenario, replies: list[str]) -> tuple[ShardOutput, list[dict]]:
    with scripted_server([answer(text) for text in replies]) as server:
        return scripted_episode(reference, server.base_url, scenario.id), server.chat_requests


MISTYPED = 'Thought: I start from the singers.\nAction: from\nAction Input: {"from_statement": "singers"}'


@pytest.mark.parametrize(
    ("options", "observation", "marked"),
    [
        ({}, "from() failed: no such table: singers (the SQL: SELECT * FROM singers)", False),
        ({"sql_errors": "helpful"}, "from() failed: no such table: singers; did you mean 'singer'?", True),
    ],
)
def test_a_failed_clause_reads_as_the_option_says_and_table_1_names_ours(
    folder: Path, options: dict, observation: str, marked: bool
) -> None:
    reference = ref(folder, **options)
    scenario = singer_task(load_ref(reference))
    output, requests = play(reference, scenario, [MISTYPED, f"Final Answer: {scenario.metadata['gold_sql']}"])
    fed_back = requests[1]["messages"][-1]["content"]
    assert observation in fed_back
    assert ("did you mean" in fed_back) == marked
    (result,) = output.results
    assert result.details["ex"] and result.details["sql_errors"] == ("helpful" if marked else "sqlite")
    summary = summarize(output.results)
    assert summary is not None
    (table,) = summary.tables("s")
    assert table.rows[0][0] == ("scripted (helpful errors)" if marked else "scripted")


def test_sample_rows_show_each_tables_first_rows_under_its_schema_line(folder: Path) -> None:
    plain = singer_task(load_ref(ref(folder)))
    sampled = singer_task(load_ref(ref(folder, sample_rows=1)))
    assert plain.id == sampled.id and sampled.metadata["sample_rows"] == 1
    lines = sampled.task.splitlines()
    # the singer table's line, then its first row as SQLite returns it (singer 1 of the Spider singer database)
    at = next(i for i, line in enumerate(lines) if line.startswith("# singer("))
    assert lines[at + 1].startswith("#   (1, ")
    assert (
        sampled.task.replace("\n" + lines[at + 1], "", 1).count("\n#   (")
        == len([line for line in plain.task.splitlines() if line.startswith("# ")]) - 1
    )
    # the question and the instruction are as they were
    assert sampled.task.endswith(plain.task.split("### Question:")[1])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            "environment: kb, sql_errors: helpful",
            "sql_errors and sample_rows are options of database tasks; use them with environment: database",
        ),
        (
            "environment: kb, sample_rows: 5",
            "sql_errors and sample_rows are options of database tasks; use them with environment: database",
        ),
        ("environment: database, sample_rows: 3", "sample_rows: Input should be 0, 1, 5 or 10"),
        ("environment: database, sql_errors: friendly", "sql_errors: Input should be 'sqlite' or 'helpful'"),
    ],
)
def test_database_options_that_do_not_fit_are_refused_with_the_line(tmp_path: Path, options: str, message: str) -> None:
    config = tmp_path / "sweep.yaml"
    suite = f"{{family: middleware, spider: {SPIDER}, {options}}}"
    config.write_text(f"name: bad\nmodels: [oracle]\nsuites:\n  - {suite}\n")
    with pytest.raises(ConfigError) as refused:
        load_config(config)
    assert f"{config}:4: suites[0]" in str(refused.value) and message in str(refused.value)
