"""The middleware family's database environment on the real spider-dev SQLite databases: every tool's happy path
and error messages, the clause tools' prerequisites, the read-only guarantee, and clause chains that reproduce the
gold SQL of the dev questions."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from undertow.env_core.errors import DataError
from undertow.env_core.middleware.database import (
    CLAUSES,
    DATABASE_TOOLS,
    HELPFUL,
    NAVIGATIONAL,
    PREREQUISITES,
    SQL_ERRORS,
    SQLITE,
    DatabaseState,
    DatabaseToolBox,
    QueryLimits,
    clauses_of,
    compose,
    execute_sql,
    results_match,
    statement_body,
)
from undertow.env_core.model import Gold, Scenario, ToolSpec
from undertow.env_core.spider import SpiderData
from undertow.env_core.tools import QUOTE_CHARS, ToolExecutionError, ToolOutput

ARGUMENTS = {
    "find_columns_containing_value": ["value"],
    "find_columns_containing_value_fuzzy": ["value"],
    "get_distinct_values": ["table", "column"],
    "is_value_in_column": ["table", "column", "value"],
    "get_date_format": ["table", "column"],
    "search_by_SQL": ["query"],
    "from": ["from_statement"],
    "where": ["where_statement"],
    "select": ["select_statement"],
    "group_by": ["group_by_statement"],
    "having": ["having_statement"],
    "order_by": ["order_by_statement"],
}


@pytest.fixture(scope="module")
def box(spider: SpiderData) -> DatabaseToolBox:
    return DatabaseToolBox(DATABASE_TOOLS, spider.databases)


def scenario(database: str | None, sql_errors: str = HELPFUL) -> Scenario:
    """A database task's scenario; most tests here read undertow's helpful errors (the suite option), one reads the
    paper's default (SQLite's message alone)."""
    metadata = {} if database is None else {"database": database, SQL_ERRORS: sql_errors}
    return Scenario(
        id=f"middleware/db/{database}", family="middleware", task="t", tools=[], gold=Gold(), metadata=metadata
    )


@pytest.fixture
def episode(box: DatabaseToolBox) -> Iterator[Callable[[str], DatabaseState]]:
    """Opens a started episode on a database; every one is closed after the test."""
    states: list[DatabaseState] = []

    def open_(database: str) -> DatabaseState:
        state = box.new_state()
        box.start(state, scenario(database))
        states.append(state)
        return state

    yield open_
    for state in states:
        box.close_state(state)


def call(box: DatabaseToolBox, state: DatabaseState, tool: str, **arguments: Any) -> Any:
    """A call as the environment makes it: the arguments checked against the spec, then executed."""
    spec = box.specs[tool]
    assert box.argument_error(spec, arguments) is None
    return box.execute(state, spec, arguments)


def fails(box: DatabaseToolBox, state: DatabaseState, tool: str, **arguments: Any) -> str:
    with pytest.raises(ToolExecutionError) as info:
        call(box, state, tool, **arguments)
    return str(info.value)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------------------------
# The tool specs


def test_the_twelve_tools_have_the_papers_names_arguments_and_prerequisites() -> None:
    assert [spec.name for spec in DATABASE_TOOLS] == list(ARGUMENTS)
    for spec in DATABASE_TOOLS:
        assert list(spec.parameters["properties"]) == ARGUMENTS[spec.name]
        assert spec.parameters["required"] == ARGUMENTS[spec.name]
        kind = "navigational" if spec.name in NAVIGATIONAL else "functional"
        assert spec.binding == {"environment": "database", "kind": kind}
        prerequisite = ", ".join(PREREQUISITES.get(spec.name, ())) or "n/a"
        assert spec.description.endswith(f"Prerequisite: {prerequisite}"), spec.name
        assert "Example" in spec.description
    assert PREREQUISITES["select"] == ("from", "where")
    assert PREREQUISITES["having"] == ("from", "where", "select", "group_by")
    assert PREREQUISITES["order_by"] == ("from", "where", "select")


def test_a_tool_that_is_not_a_database_tool_is_refused(spider: SpiderData) -> None:
    with pytest.raises(ValueError, match="tool 'group_bys' is not a database tool; did you mean 'group_by'"):
        DatabaseToolBox([ToolSpec(name="group_bys", description="d")], spider.databases)


def test_arguments_are_checked_against_the_schema(box: DatabaseToolBox) -> None:
    spec = box.specs["is_value_in_column"]
    assert box.argument_error(spec, {"table": "singer", "column": "Age", "value": 52}) is None
    message = box.argument_error(spec, {"table": "singer", "column": "Age"})
    assert message == "Invalid arguments for is_value_in_column: 'value' is a required property"


# ---------------------------------------------------------------------------------------------------------------
# Episodes


def test_start_opens_the_scenarios_database_read_only(episode: Callable[[str], DatabaseState]) -> None:
    state = episode("concert_singer")
    assert state.database == "concert_singer"
    assert state.tables["singer"][:3] == ["Singer_ID", "Name", "Country"]
    assert state.connection is not None
    assert state.connection.execute("PRAGMA query_only").fetchone() == (1,)
    with pytest.raises(sqlite3.OperationalError, match="attempt to write a readonly database"):
        state.connection.execute("DELETE FROM singer")


def test_start_needs_a_known_database(box: DatabaseToolBox) -> None:
    with pytest.raises(DataError, match=re.escape("scenario middleware/db/None: metadata.database names no database")):
        box.start(box.new_state(), scenario(None))
    with pytest.raises(DataError, match="unknown database 'concert_singers'; did you mean 'concert_singer'"):
        box.start(box.new_state(), scenario("concert_singers"))


def test_start_reports_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"not a database at all" * 100)
    box = DatabaseToolBox(DATABASE_TOOLS, {"broken": broken})
    with pytest.raises(DataError, match=re.escape(f"database 'broken' ({broken}) cannot be opened: file is not a")):
        box.start(box.new_state(), scenario("broken"))


def test_a_tool_before_start_finds_no_open_database(box: DatabaseToolBox) -> None:
    with pytest.raises(RuntimeError, match="no database is open for this episode"):
        call(box, box.new_state(), "from", from_statement="singer")


def test_clauses_never_leak_between_episodes(box: DatabaseToolBox, episode: Callable[[str], DatabaseState]) -> None:
    first = episode("concert_singer")
    call(box, first, "from", from_statement="FROM singer")
    call(box, first, "where", where_statement="WHERE Age > 30")
    second = episode("concert_singer")
    assert second.clauses == {} and second.sql() == ""
    assert "select() needs from() and where() first" in fails(box, second, "select", select_statement="Name")
    assert first.sql() == "SELECT * FROM singer WHERE Age > 30"


def test_a_fork_has_its_own_clauses_and_shares_the_connection(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState]
) -> None:
    state = episode("concert_singer")
    call(box, state, "from", from_statement="FROM singer")
    fork = box.fork_state(state)
    call(box, fork, "where", where_statement="Age > 40")
    assert fork.connection is state.connection
    assert state.clauses == {"from": "singer"}
    box.close_state(fork)  # the parent's connection stays open
    assert call(box, state, "where", where_statement="").value["row_count"] == 6
    connection = state.connection
    assert connection is not None
    box.close_state(state)
    assert state.connection is None and state.clauses == {}
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        connection.execute("SELECT 1")


# ---------------------------------------------------------------------------------------------------------------
# Navigational tools


def test_find_columns_containing_value(box: DatabaseToolBox, episode: Callable[[str], DatabaseState]) -> None:
    state = episode("concert_singer")
    assert call(box, state, "find_columns_containing_value", value="France") == ToolOutput(["singer.Country"], [])
    # a number matches text and integer cells alike
    found = call(box, state, "find_columns_containing_value", value=2014).value
    assert found == ["singer.Song_release_year", "concert.Year"]
    assert call(box, state, "find_columns_containing_value", value="52").value == ["singer.Age"]
    missing = call(box, state, "find_columns_containing_value", value="france")
    assert missing == ToolOutput(
        [], ["no cell equals 'france'; find_columns_containing_value_fuzzy finds near matches"]
    )
    message = fails(box, state, "find_columns_containing_value", value="  ")
    assert message == "find_columns_containing_value() needs a value to look for; it got an empty string"


def test_find_columns_containing_value_fuzzy(box: DatabaseToolBox, episode: Callable[[str], DatabaseState]) -> None:
    state = episode("concert_singer")
    tool = "find_columns_containing_value_fuzzy"
    assert call(box, state, tool, value="france").value == {"singer.Country": ["France"]}
    assert call(box, state, tool, value="Frnace").value == {"singer.Country": ["France"]}  # a typo
    assert call(box, state, tool, value="netherland").value == {"singer.Country": ["Netherlands"]}
    # LIKE's wildcards in the value are plain characters
    assert call(box, state, tool, value="%") == ToolOutput({}, ["no cell contains or resembles '%'"])
    assert fails(box, state, tool, value="") == f"{tool}() needs a value to look for; it got an empty string"
    # flight_2 stores cities with a stray space: the exact search misses them, the fuzzy one does not
    flights = episode("flight_2")
    assert call(box, flights, "find_columns_containing_value", value="Aberdeen").value == []
    assert call(box, flights, tool, value="aberdeen").value == {"airports.City": ["Aberdeen "]}


def test_get_distinct_values(box: DatabaseToolBox, episode: Callable[[str], DatabaseState]) -> None:
    state = episode("concert_singer")
    values = call(box, state, "get_distinct_values", table="singer", column="Country")
    assert values == ToolOutput(["France", "Netherlands", "United States"], [])
    # names as SQLite reads them: any case, quoted, or qualified with the table
    assert call(box, state, "get_distinct_values", table='"SINGER"', column="singer.country") == values
    message = fails(box, state, "get_distinct_values", table="singers", column="Country")
    assert message == "no table 'singers' in database 'concert_singer'; did you mean 'singer'?"
    message = fails(box, state, "get_distinct_values", table="singer", column="Contry")
    assert message == "no column 'Contry' in table 'singer'; did you mean 'Country'?"


def test_get_distinct_values_is_capped_with_the_total_noted(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState]
) -> None:
    state = episode("world_1")
    values = call(box, state, "get_distinct_values", table="city", column="Name")
    assert len(values.value) == 50 and values.value == sorted(values.value)
    assert values.notes == ["4001 distinct values in all; the first 50 in sorted order are shown"]


def test_is_value_in_column(box: DatabaseToolBox, episode: Callable[[str], DatabaseState]) -> None:
    state = episode("concert_singer")
    assert call(box, state, "is_value_in_column", table="singer", column="Country", value="France").value is True
    assert call(box, state, "is_value_in_column", table="singer", column="Age", value=52).value is True
    assert call(box, state, "is_value_in_column", table="singer", column="Age", value="52").value is True
    missing = call(box, state, "is_value_in_column", table="singer", column="Country", value="france")
    assert missing == ToolOutput(False, ["similar values in singer.Country: 'France'"])
    assert call(box, state, "is_value_in_column", table="singer", column="Name", value="Nobody") == ToolOutput(
        False, []
    )
    message = fails(box, state, "is_value_in_column", table="singer", column="Nation", value="France")
    assert message.startswith("no column 'Nation' in table 'singer'; known: Age, Country, Is_male")


def test_get_date_format(box: DatabaseToolBox, episode: Callable[[str], DatabaseState]) -> None:
    state = episode("cre_Doc_Template_Mgt")
    assert call(box, state, "get_date_format", table="Templates", column="Date_Effective_From") == (
        "2005-11-12 07:09:48"
    )
    message = fails(box, state, "get_date_format", table="Templates", column="Template_Details")
    assert message == "Templates.Template_Details holds no non-empty value, so it has no format to show"
    message = fails(box, state, "get_date_format", table="Template", column="Date_Effective_From")
    assert message == "no table 'Template' in database 'cre_Doc_Template_Mgt'; did you mean 'Templates'?"


def test_search_by_sql(box: DatabaseToolBox, episode: Callable[[str], DatabaseState]) -> None:
    state = episode("concert_singer")
    found = call(box, state, "search_by_SQL", query="SELECT Name FROM singer WHERE Age > 40 ORDER BY Name;")
    assert found == ToolOutput(
        {"columns": ["Name"], "rows": [["Joe Sharp"], ["John Nizinik"], ["Rose White"]], "row_count": 3}, []
    )
    with_query = "WITH old AS (SELECT * FROM singer WHERE Age > 40) SELECT COUNT(*) FROM old"
    assert call(box, state, "search_by_SQL", query=with_query).value["rows"] == [[3]]
    union = "SELECT Name FROM stadium WHERE Capacity > 10000 UNION SELECT Name FROM singer WHERE Age > 50"
    assert call(box, state, "search_by_SQL", query=union).value["row_count"] == 4
    message = fails(box, state, "search_by_SQL", query="SELECT Nme FROM singer")
    assert (
        message == "search_by_SQL() failed: no such column: Nme; did you mean 'Name'? (the SQL: SELECT Nme FROM singer)"
    )
    # SQL sqlglot cannot read goes to SQLite, whose own message comes back
    message = fails(box, state, "search_by_SQL", query="SELECT Name FROM singer WHERE ESCAPE")
    assert message.startswith('search_by_SQL() failed: near "ESCAPE": syntax error')
    assert fails(box, state, "search_by_SQL", query=" ; ") == "search_by_SQL() needs a query; it got an empty one"


def test_search_by_sql_caps_its_rows(box: DatabaseToolBox, episode: Callable[[str], DatabaseState]) -> None:
    state = episode("world_1")
    found = call(box, state, "search_by_SQL", query="SELECT Name, Population FROM city")
    assert len(found.value["rows"]) == 50 and found.value["row_count"] == 4079
    assert found.notes == ["showing the first 50 of 4079 rows"]


@pytest.mark.parametrize(
    ("query", "refusal"),
    [
        ("DROP TABLE singer", "this DROP statement:"),
        ("UPDATE singer SET Age = 0", "this UPDATE statement:"),
        ("DELETE FROM singer", "this DELETE statement:"),
        ("INSERT INTO singer (Singer_ID) VALUES (99)", "this INSERT statement:"),
        ("WITH x AS (SELECT 1) DELETE FROM singer WHERE Singer_ID IN x", "this DELETE statement:"),
        ("PRAGMA query_only = OFF", "this PRAGMA statement:"),
        ("ATTACH DATABASE ':memory:' AS other", "this ATTACH statement:"),
        ("SELECT Name FROM singer; DROP TABLE singer", "2 statements: give exactly one query;"),
        ("SELECT 1; SELECT 2", "2 statements: give exactly one query;"),
    ],
)
def test_search_by_sql_refuses_anything_but_one_select(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState], spider: SpiderData, query: str, refusal: str
) -> None:
    path = spider.databases["concert_singer"]
    before, rows = digest(path), execute_sql(path, "SELECT * FROM singer")
    message = fails(box, episode("concert_singer"), "search_by_SQL", query=query)
    assert message == f"search_by_SQL() refused {refusal} the database is read-only and only SELECT queries run"
    assert digest(path) == before and execute_sql(path, "SELECT * FROM singer") == rows


def test_a_write_that_passes_the_check_is_stopped_by_the_read_only_database(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState], spider: SpiderData
) -> None:
    path = spider.databases["concert_singer"]
    before = digest(path)
    # sqlglot cannot read this one, and it starts with WITH: SQLite runs it on the read-only connection
    query = "WITH x AS (SELECT 1) REPLACE INTO singer (Singer_ID) SELECT * FROM x"
    message = fails(box, episode("concert_singer"), "search_by_SQL", query=query)
    assert message.startswith(
        "search_by_SQL() failed: attempt to write a readonly database: the database is read-only and only SELECT "
        "queries run"
    )
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        execute_sql(path, "DELETE FROM singer")
    assert digest(path) == before


def test_a_query_past_the_time_limit_is_stopped(spider: SpiderData) -> None:
    box = DatabaseToolBox(DATABASE_TOOLS, spider.databases, QueryLimits(timeout_s=0.2))
    state = box.new_state()
    box.start(state, scenario("world_1"))
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n"
    message = fails(box, state, "search_by_SQL", query=endless)
    assert message.startswith("search_by_SQL() failed: the query ran past the 0.2 s time limit and was stopped")
    assert call(box, state, "search_by_SQL", query="SELECT COUNT(*) FROM city").value["rows"] == [[4079]]
    box.close_state(state)


# ---------------------------------------------------------------------------------------------------------------
# Functional tools


MISSING = {
    "where": "where() needs from() first",
    "select": "select() needs from() and where() first",
    "group_by": "group_by() needs from(), where() and select() first",
    "having": "having() needs from(), where(), select() and group_by() first",
    "order_by": "order_by() needs from(), where() and select() first",
}


@pytest.mark.parametrize("clause", list(MISSING))
def test_a_clause_before_its_prerequisites_is_refused(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState], clause: str
) -> None:
    state = episode("concert_singer")
    message = fails(box, state, clause, **{f"{clause}_statement": "Age"})
    assert message == (
        f"{MISSING[clause]}: the clauses are set in the order from, where, select, then group_by, having, order_by "
        "(no clause is set yet)"
    )
    assert state.clauses == {}


def test_a_clause_names_only_the_prerequisites_still_missing(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState]
) -> None:
    state = episode("concert_singer")
    call(box, state, "from", from_statement="singer")
    call(box, state, "where", where_statement="")
    message = fails(box, state, "having", having_statement="COUNT(*) > 1")
    assert message.startswith("having() needs select() and group_by() first")
    assert message.endswith("(the query so far is: SELECT * FROM singer)")


def test_the_clause_tools_build_a_query_step_by_step(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState], spider: SpiderData
) -> None:
    state = episode("concert_singer")
    built = call(box, state, "from", from_statement="FROM singer")
    assert built.value["sql"] == "SELECT * FROM singer" and built.value["row_count"] == 6
    assert len(built.value["rows"]) == 5 and built.notes == ["showing the first 5 of 6 rows"]
    assert built.value["columns"] == [
        "Singer_ID",
        "Name",
        "Country",
        "Song_Name",
        "Song_release_year",
        "Age",
        "Is_male",
    ]
    built = call(box, state, "where", where_statement="WHERE Age > 20;")
    assert built.value["sql"] == "SELECT * FROM singer WHERE Age > 20"
    built = call(box, state, "select", select_statement="SELECT Country, COUNT(*)")
    assert built.value["columns"] == ["Country", "COUNT(*)"] and built.value["row_count"] == 1
    built = call(box, state, "group_by", group_by_statement="group by Country")
    assert built.value["row_count"] == 3
    built = call(box, state, "having", having_statement="HAVING COUNT(*) >= 1")
    assert built.value["row_count"] == 3
    built = call(box, state, "order_by", order_by_statement="ORDER BY COUNT(*) DESC, Country")
    sql = "SELECT Country, COUNT(*) FROM singer WHERE Age > 20 GROUP BY Country HAVING COUNT(*) >= 1 "
    sql += "ORDER BY COUNT(*) DESC, Country"
    assert built == ToolOutput(
        {
            "sql": sql,
            "columns": ["Country", "COUNT(*)"],
            "rows": [["France", 4], ["Netherlands", 1], ["United States", 1]],
            "row_count": 3,
        },
        [],
    )
    assert state.sql() == sql
    assert execute_sql(spider.databases["concert_singer"], state.sql()) == [
        ("France", 4),
        ("Netherlands", 1),
        ("United States", 1),
    ]


def test_where_reports_a_condition_that_matches_nothing_and_takes_no_condition(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState]
) -> None:
    state = episode("concert_singer")
    call(box, state, "from", from_statement="singer")
    nothing = call(box, state, "where", where_statement="Country = 'france'")
    assert nothing.value["row_count"] == 0 and nothing.value["rows"] == []
    assert nothing.notes[-1] == (
        "the WHERE condition matches no rows: check its values (get_distinct_values, is_value_in_column)"
    )
    assert state.clauses["where"] == "Country = 'france'"  # kept: an empty answer can be the right one
    for empty in ("", "WHERE", " where ; "):
        every = call(box, state, "where", where_statement=empty)
        assert every.value["sql"] == "SELECT * FROM singer" and every.value["row_count"] == 6
        assert every.notes[-1] == "no condition: every row of the FROM clause is kept"
    call(box, state, "select", select_statement="Name")
    assert state.sql() == "SELECT Name FROM singer"


def test_order_by_takes_a_bare_limit(box: DatabaseToolBox, episode: Callable[[str], DatabaseState]) -> None:
    state = episode("concert_singer")
    call(box, state, "from", from_statement="stadium")
    call(box, state, "where", where_statement="Capacity > 4000")
    call(box, state, "select", select_statement="Name")
    built = call(box, state, "order_by", order_by_statement="LIMIT 2")
    assert built.value["sql"] == "SELECT Name FROM stadium WHERE Capacity > 4000 LIMIT 2"
    assert built.value["row_count"] == 2


def test_setting_a_clause_again_replaces_it_and_clears_the_clauses_built_on_it(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState]
) -> None:
    state = episode("concert_singer")
    chain = {
        "from": "singer",
        "where": "Age > 20",
        "select": "Country, COUNT(*)",
        "group_by": "Country",
        "having": "COUNT(*) > 1",
        "order_by": "Country",
    }
    for clause, text in chain.items():
        call(box, state, clause, **{f"{clause}_statement": text})
    assert state.clauses == chain
    again = call(box, state, "select", select_statement="Country, MAX(Age)")
    assert again.notes == [
        "select() replaced the earlier select clause and cleared group_by(), having() and order_by(): set again"
    ]
    assert list(state.clauses) == ["from", "where", "select"]
    again = call(box, state, "where", where_statement="Age > 30")
    assert again.notes[-1] == "where() replaced the earlier where clause and cleared select(): set again"
    assert "order_by() needs select() first" in fails(box, state, "order_by", order_by_statement="Age")
    again = call(box, state, "from", from_statement="stadium")
    assert again.notes[-1] == "from() replaced the earlier from clause and cleared where(): set again"
    assert state.clauses == {"from": "stadium"}
    # having has nothing built on it: it replaces only itself
    call(box, state, "where", where_statement="")
    call(box, state, "select", select_statement="Location, COUNT(*)")
    call(box, state, "group_by", group_by_statement="Location")
    call(box, state, "having", having_statement="COUNT(*) > 0")
    replaced = call(box, state, "having", having_statement="COUNT(*) > 5")
    assert replaced.notes == ["the query so far returns no rows after having()"]
    assert state.clauses == {
        "from": "stadium",
        "where": "",
        "select": "Location, COUNT(*)",
        "group_by": "Location",
        "having": "COUNT(*) > 5",
    }


BAD_CLAUSES = [
    ("from", "FROM singers", "from() failed: no such table: singers; did you mean 'singer'?"),
    ("where", "WHERE Agee > 20", "where() failed: no such column: Agee; did you mean 'Age'?"),
    ("select", "SELECT Nmae", "select() failed: no such column: Nmae; did you mean 'Name'?"),
    pytest.param(
        "select",
        "SELECT Capacity",
        "select() failed: no such column: Capacity; Capacity is a column of stadium: check the FROM",
        id="column-of-another-table",
    ),
    ("group_by", "GROUP BY Contry", "group_by() failed: no such column: Contry; did you mean 'Country'?"),
    ("having", "HAVING COUNT(*) >", "having() failed: incomplete input"),
    ("order_by", "ORDER BY", "order_by() got an empty order_by_statement; only where() takes an empty statement"),
    ("select", "", "select() got an empty select_statement; only where() takes an empty statement"),
    ("from", "singer; DELETE FROM singer", "from() failed: You can only execute one statement at a time."),
]


@pytest.mark.parametrize(("clause", "statement", "message"), BAD_CLAUSES)
def test_a_clause_sqlite_rejects_is_reported_with_sqlites_message_and_not_kept(
    box: DatabaseToolBox,
    episode: Callable[[str], DatabaseState],
    spider: SpiderData,
    clause: str,
    statement: str,
    message: str,
) -> None:
    path = spider.databases["concert_singer"]
    before = digest(path)
    state = episode("concert_singer")
    for earlier in CLAUSES[: CLAUSES.index(clause)]:
        if earlier in PREREQUISITES[clause]:
            text = {"from": "singer", "where": "Age > 20", "select": "Country, COUNT(*)", "group_by": "Country"}
            call(box, state, earlier, **{f"{earlier}_statement": text[earlier]})
    kept = dict(state.clauses)
    error = fails(box, state, clause, **{f"{clause}_statement": statement})
    assert error.startswith(message)
    if "failed" in message:
        assert " (the SQL: SELECT " in error  # the query that was tried
    assert state.clauses == kept
    assert digest(path) == before


def test_by_default_a_failed_clause_reads_as_sqlite_says_it(box: DatabaseToolBox) -> None:
    """The paper's error feedback: the database's own message (FUXI footnote 1), no did-you-mean, no advice."""
    state = box.new_state()
    box.start(state, scenario("concert_singer", SQLITE))
    try:
        call(box, state, "from", from_statement="singer")
        assert fails(box, state, "where", where_statement="Agee > 20") == (
            "where() failed: no such column: Agee (the SQL: SELECT * FROM singer WHERE Agee > 20)"
        )
        call(box, state, "where", where_statement="")
        assert fails(box, state, "select", select_statement="Capacity") == (
            "select() failed: no such column: Capacity (the SQL: SELECT Capacity FROM singer)"
        )
        assert fails(box, state, "get_distinct_values", table="singers", column="Name") == (
            "no table 'singers' in database 'concert_singer'"
        )
    finally:
        box.close_state(state)


# ---------------------------------------------------------------------------------------------------------------
# compose, execute_sql, results_match


def test_compose_puts_clauses_in_query_order_with_or_without_keywords() -> None:
    clauses = {"order_by": "ORDER BY n DESC", "select": "c, COUNT(*) AS n", "from": "FROM t", "where": ""}
    assert compose({**clauses, "group_by": "c"}) == "SELECT c, COUNT(*) AS n FROM t GROUP BY c ORDER BY n DESC"
    assert compose({"from": "t"}) == "SELECT * FROM t"
    assert (
        compose({"from": "t", "where": "WHERE a = 1;", "having": "having x"}) == "SELECT * FROM t WHERE a = 1 HAVING x"
    )
    with pytest.raises(ValueError, match="unknown clause limit; the clauses are from, where, select"):
        compose({"from": "t", "limit": "1"})
    with pytest.raises(ValueError, match="a query needs a FROM clause"):
        compose({"select": "1", "from": "FROM "})


def test_results_match_compares_sets_of_rows_as_bird_does() -> None:
    assert results_match([(1, "a"), (2, "b")], [(2, "b"), (1, "a"), (1, "a")])
    assert results_match([], [])
    assert results_match([[1, "a"]], [(1, "a")])
    assert not results_match([(1, "a")], [(1, "b")])
    assert not results_match([(1, "a")], [(1, "a"), (2, "b")])
    assert not results_match([(1,)], [])


def test_clause_chains_reproduce_the_gold_sql_of_the_dev_questions(
    box: DatabaseToolBox, spider: SpiderData, episode: Callable[[str], DatabaseState]
) -> None:
    states: dict[str, DatabaseState] = {}
    checked = 0
    for question in spider.questions:
        clauses = clauses_of(question.query)
        if clauses is None:  # a top-level UNION / INTERSECT / EXCEPT: no single clause chain
            continue
        state = states.get(question.db_id) or states.setdefault(question.db_id, episode(question.db_id))
        for clause, text in clauses.items():  # in query order: from, where, select, group_by, having, order_by
            call(box, state, clause, **{f"{clause}_statement": text})
        path = spider.databases[question.db_id]
        assert results_match(execute_sql(path, state.sql()), execute_sql(path, question.query)), question.query
        checked += 1
    assert checked >= 500  # 560 of the 601 spider-dev questions are one plain SELECT


def test_hand_built_chains_on_world_1_match_the_gold_sql(
    box: DatabaseToolBox, spider: SpiderData, episode: Callable[[str], DatabaseState]
) -> None:
    path = spider.databases["world_1"]
    chains = {
        "What is the total population of Gelderland district?": [
            ("from", "city"),
            ("where", "District = 'Gelderland'"),
            ("select", "SUM(Population)"),
        ],
        "Which language is the most popular in Aruba?": [
            ("from", "FROM country AS T1 JOIN countrylanguage AS T2 ON T1.Code = T2.CountryCode"),
            ("where", "WHERE T1.Name = 'Aruba'"),
            ("select", "SELECT T2.Language"),
            ("order_by", "ORDER BY T2.Percentage DESC LIMIT 1"),
        ],
        "Which continent has the most diverse languages?": [
            ("from", "country AS T1 JOIN countrylanguage AS T2 ON T1.Code = T2.CountryCode"),
            ("where", ""),
            ("select", "T1.Continent"),
            ("group_by", "T1.Continent"),
            ("order_by", "COUNT(*) DESC LIMIT 1"),
        ],
    }
    gold = {q.text: q.query for q in spider.questions if q.db_id == "world_1"}
    state = episode("world_1")
    assert call(box, state, "find_columns_containing_value", value="Gelderland").value == ["city.District"]
    for question, chain in chains.items():
        for clause, text in chain:
            call(box, state, clause, **{f"{clause}_statement": text})
        assert results_match(execute_sql(path, state.sql()), execute_sql(path, gold[question]))
    assert not results_match(execute_sql(path, state.sql()), execute_sql(path, gold[next(iter(chains))]))


def test_long_arguments_are_trimmed_in_one_pass_and_quoted_short(
    box: DatabaseToolBox, episode: Callable[[str], DatabaseState]
) -> None:
    """Issue 29: the regex that trimmed trailing blanks and semicolons retried a long run of them from every
    position (quadratic); a note repeated a long value whole."""
    assert statement_body("from", "FROM singer" + " ;" * 1995) == "singer"
    assert statement_body("where", " ;" * 1995 + "x") == ";" + " ;" * 1994 + "x"  # only a trailing run goes
    state = episode("concert_singer")
    started = time.monotonic()
    note = call(box, state, "find_columns_containing_value_fuzzy", value=" " + "q" * 3000).notes
    assert note == [f"no cell contains or resembles '{'q' * QUOTE_CHARS}… (3,000 characters)'"]
    assert time.monotonic() - started < 10
