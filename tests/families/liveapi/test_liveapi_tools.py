"""Live API-Bench tools: the data operations against SQLite itself, labels and storage, per-episode narrowing, the
tool box, and the live REST server."""

from __future__ import annotations

import math
import os
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.spider import make_spider
from jsonschema import Draft202012Validator
from liveapi_concert import COUNTRY, concert_endpoint, concert_scenario
from openapi_spec_validator import validate

from undertow.env_core.environment import Environment
from undertow.env_core.errors import InfraError
from undertow.env_core.liveapi.endpoints import Endpoint, EndpointParam, rest_endpoint
from undertow.env_core.liveapi.operations import (
    Data,
    Grouped,
    Table,
    aggregate_data,
    filter_data,
    get_values,
    group_data_by,
    limit_data,
    retrieve_data,
    select_unique_values,
    sort_data,
    transform_data,
)
from undertow.env_core.liveapi.rest import HOST, RestServer, endpoint_rows, readable_422, render_sql, rest_app
from undertow.env_core.liveapi.specs import (
    aggregate_getter_spec,
    getter_spec,
    narrow,
    rest_spec,
    sel_general_specs,
    slot_specs,
)
from undertow.env_core.liveapi.toolbox import LiveApiToolBox, LiveState
from undertow.env_core.liveapi.values import sqlite_text
from undertow.env_core.liveapi.vocabulary import SLOT_TOOLS, STARTING_TABLE, Column, getter_name
from undertow.env_core.model import Action, Scenario, ToolCall, ToolSpec
from undertow.env_core.spider import Question, read_spider
from undertow.env_core.tools import ToolExecutionError

# ---------------------------------------------------------------------------------------------------------------
# The operations against SQLite

ROWS = [
    # id, name, city, score (NUMERIC: ints and floats mixed), code (TEXT: digits and words), n (INTEGER, NULLs)
    (1, "Ann", "Paris", 3, "10", 5),
    (2, "bob", "paris", 2.5, "9", None),
    (3, "Cid", None, None, "abc", 7),
    (4, "dee", "Rome", 3.0, None, 5),
    (5, "Eve", "Rome", -1, "10", 2),
    (6, "ann", "Oslo", 12, "B", None),
    (7, "Flo", "Paris", 2.5, "a%b", 7),
]
COLUMNS = ["id", "name", "city", "score", "code", "n"]


@pytest.fixture(scope="module")
def conn() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER, name TEXT, city TEXT, score NUMERIC, code TEXT, n INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", ROWS)
    return db


@pytest.fixture(scope="module")
def table(conn: sqlite3.Connection) -> Table:
    cursor = conn.execute("SELECT * FROM t")
    columns = [d[0] for d in cursor.description]
    return Table(columns, [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()])


def sql(conn: sqlite3.Connection, query: str, *params: Any) -> list[tuple[Any, ...]]:
    return conn.execute(query, params).fetchall()


def rows_of(data: Data, keys: list[str] | None = None) -> list[tuple[Any, ...]]:
    keys = keys or data.columns
    return [tuple(r.values()) for r in retrieve_data(data, keys)]


def same(left: list[tuple[Any, ...]], right: list[tuple[Any, ...]]) -> bool:
    """Equal rows, value types included (an int is not a float), floats up to rounding of the last bits."""
    if len(left) != len(right):
        return False
    for a_row, b_row in zip(left, right, strict=True):
        for a, b in zip(a_row, b_row, strict=True):
            if type(a) is not type(b):
                return False
            if isinstance(a, float) and not math.isclose(a, b, rel_tol=1e-12):
                return False
            if not isinstance(a, float) and a != b:
                return False
    return True


OPERATORS = {
    "equal_to": "=",
    "not_equal_to": "!=",
    "greater_than": ">",
    "less_than": "<",
    "greater_than_equal_to": ">=",
    "less_than_equal_to": "<=",
}
FILTER_CASES = [
    *((key, condition, value) for condition in OPERATORS for key, value in (("id", 3), ("score", 2.5), ("n", 5))),
    *((key, condition, value) for condition in OPERATORS for key, value in (("city", "Paris"), ("code", "10"))),
    ("score", "equal_to", "3"),  # a numeric string against a number column: compared as a number
    ("score", "greater_than", "2.5"),
    ("id", "less_than_equal_to", " 4 "),
    ("score", "less_than", "abc"),  # a non-numeric string: every number is below any text
    ("code", "equal_to", 10),  # a number against a text column: compared as text
    ("code", "greater_than", 9),
    ("name", "greater_than", "Zed"),  # case-sensitive text order: lower case after upper case
    ("name", "equal_to", "ann"),
    ("city", "not_equal_to", "Paris"),  # NULL never matches, not even "not equal"
]


@pytest.mark.parametrize(("key", "condition", "value"), FILTER_CASES)
def test_filter_conditions_match_sqlite(conn: sqlite3.Connection, table: Table, key: str, condition: str, value: Any):
    expected = sql(conn, f"SELECT * FROM t WHERE {key} {OPERATORS[condition]} ? ORDER BY rowid", value)
    assert same(rows_of(filter_data(table, key, condition, value)), expected)


@pytest.mark.parametrize(
    ("key", "pattern"),
    [("name", "a%"), ("name", "%N"), ("city", "p_ris"), ("code", "1%"), ("score", "2.5"), ("n", "_"), ("name", "ann")],
)
def test_like_is_sql_like(conn: sqlite3.Connection, table: Table, key: str, pattern: str):
    expected = sql(conn, f"SELECT * FROM t WHERE {key} LIKE ? ORDER BY rowid", pattern)
    assert same(rows_of(filter_data(table, key, "like", pattern)), expected)


@pytest.mark.parametrize(("key", "text"), [("name", "AN"), ("city", "ar"), ("code", "%"), ("score", ".5"), ("id", 1)])
def test_contains_is_a_case_insensitive_substring(conn: sqlite3.Connection, table: Table, key: str, text: Any):
    # the percent sign is no wildcard for contains
    expected = sql(conn, f"SELECT * FROM t WHERE instr(lower({key}), lower(?)) > 0 ORDER BY rowid", text)
    assert same(rows_of(filter_data(table, key, "contains", text)), expected)


@pytest.mark.parametrize("key", COLUMNS)
@pytest.mark.parametrize("ascending", [True, False])
def test_sort_is_sqlite_order_and_stable(conn: sqlite3.Connection, table: Table, key: str, ascending: bool):
    # the rowid tie-break is what a stable sort keeps: NULL < numbers < text, NULL last when descending
    order = "ASC" if ascending else "DESC"
    expected = sql(conn, f"SELECT * FROM t ORDER BY {key} {order}, rowid")
    assert same(rows_of(sort_data(table, key, ascending)), expected)


def test_sorting_by_the_last_key_first_sorts_by_several(conn: sqlite3.Connection, table: Table):
    expected = sql(conn, "SELECT * FROM t ORDER BY city DESC, score ASC, rowid")
    assert same(rows_of(sort_data(sort_data(table, "score", True), "city", False)), expected)


SQL_AGGREGATES = {
    "count": "count({})",
    "count_distinct": "count(DISTINCT {})",
    "sum": "sum({})",
    "mean": "avg({})",
    "min": "min({})",
    "max": "max({})",
}


@pytest.mark.parametrize("aggregation", list(SQL_AGGREGATES))
@pytest.mark.parametrize("key", ["score", "code", "n", "city"])
@pytest.mark.parametrize("by", ["city", "n"])
def test_group_and_aggregate_match_sqlite(conn: sqlite3.Connection, table: Table, aggregation: str, key: str, by: str):
    expected = sql(conn, f"SELECT {by}, {SQL_AGGREGATES[aggregation].format(key)} FROM t GROUP BY {by}")
    grouped = aggregate_data(group_data_by(table, by), aggregation, key)
    assert same(rows_of(grouped, [by, f"{aggregation}_{key}"]), expected)


@pytest.mark.parametrize("aggregation", list(SQL_AGGREGATES))
@pytest.mark.parametrize("where", ["1", "0", "city = 'Paris'"])
def test_aggregate_of_a_table_is_one_group(conn: sqlite3.Connection, table: Table, aggregation: str, where: str):
    expected = sql(conn, f"SELECT {SQL_AGGREGATES[aggregation].format('score')}, count(*) FROM t WHERE {where}")
    data: Data = table if where == "1" else filter_data(table, "city", "equal_to", "Paris" if where != "0" else "?")
    result = aggregate_data(aggregate_data(data, aggregation, "score"), "count")
    assert isinstance(result, Grouped) and len(result.groups) == 1
    assert same(rows_of(result, [f"{aggregation}_score", "count"]), expected)


def test_sum_of_integers_stays_an_integer_and_text_counts_as_sqlite_reads_it(conn: sqlite3.Connection):
    values = [(5,), ("7",), ("2.5",), ("x1",), (None,)]
    for rows in (values[:2], values):
        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE v (x)")  # no affinity: text stays text
        db.executemany("INSERT INTO v VALUES (?)", rows)
        expected = sql(db, "SELECT sum(x), avg(x), min(x), max(x) FROM v")
        data = Table(["x"], [{"x": r[0]} for r in rows])
        for aggregation in ("sum", "mean", "min", "max"):
            data = aggregate_data(data, aggregation, "x")
        assert same(rows_of(data, ["sum_x", "mean_x", "min_x", "max_x"]), expected)


def test_filter_then_group_drops_emptied_groups(conn: sqlite3.Connection, table: Table):
    expected = sql(conn, "SELECT city, count(*), max(score) FROM t WHERE score > 0 GROUP BY city")
    grouped = filter_data(group_data_by(table, "city"), "score", "greater_than", 0)
    grouped = aggregate_data(aggregate_data(grouped, "count"), "max", "score")
    assert same(rows_of(grouped, ["city", "count", "max_score"]), expected)


ORDERS = [
    [("count", False)],  # SQLite lists groups tied on a single descending key last one first
    [("count", True)],
    [("count", False), ("city", True)],
    [("count", True), ("mean_score", False)],
    [("mean_score", False), ("count", True)],
    [("count", False), ("mean_score", False)],
    [("n", False)],  # a bare column: read from each group's first row
]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("limit", [None, 2])
def test_sorting_groups_matches_sqlite_order_by_ties_included(
    conn: sqlite3.Connection, table: Table, order: list[tuple[str, bool]], limit: int | None
):
    terms = ", ".join(
        f"{ {'count': 'count(*)', 'mean_score': 'avg(score)'}.get(k, k) } {'ASC' if up else 'DESC'}" for k, up in order
    )
    query = f"SELECT city, count(*), avg(score), n FROM t GROUP BY city ORDER BY {terms}"
    expected = sql(conn, query + (f" LIMIT {limit}" if limit else ""))
    data: Data = aggregate_data(aggregate_data(group_data_by(table, "city"), "count"), "mean", "score")
    for key, ascending in reversed(order):
        data = sort_data(data, key, ascending)
    if limit:
        data = limit_data(data, limit)
    assert same(rows_of(data, ["city", "count", "mean_score", "n"]), expected)


@pytest.mark.parametrize(
    ("aggregates", "by"),
    [
        ([("max", "score")], None),
        ([("min", "score")], "city"),
        ([("min", "id"), ("max", "score")], "n"),
        ([("max", "score"), ("min", "id")], None),
        ([("count", None)], "city"),
        ([("max", "code")], "city"),
    ],
)
def test_bare_columns_come_from_the_row_of_the_last_min_or_max(
    conn: sqlite3.Connection, table: Table, aggregates: list[tuple[str, str | None]], by: str | None
):
    listed = ", ".join(SQL_AGGREGATES[a].format(k or "*") for a, k in aggregates)
    expected = sql(conn, f"SELECT name, {listed} FROM t" + (f" GROUP BY {by}" if by else ""))
    data: Data = group_data_by(table, by) if by else table
    for aggregation, key in aggregates:
        data = aggregate_data(data, aggregation, key)
    outputs = [f"{a}_{k}" if k else "count" for a, k in aggregates]
    assert same(rows_of(data, ["name", *outputs]), expected)


@pytest.mark.parametrize(
    ("operation", "args", "expression"),
    [
        ("substring", {"start_index": 0, "end_index": 2}, "substr({}, 1, 2)"),
        ("substring", {"start_index": 1, "end_index": 3}, "substr({}, 2, 2)"),
        ("substring", {"start_index": 1}, "substr({}, 2)"),
        ("lower", {}, "lower({})"),
        ("upper", {}, "upper({})"),
        ("round", {"digits": 0}, "round({})"),
        ("round", {"digits": 1}, "round({}, 1)"),
    ],
)
@pytest.mark.parametrize("key", ["name", "score", "code", "n"])
def test_transforms_match_sqlite(
    conn: sqlite3.Connection, table: Table, operation: str, args: dict[str, int], expression: str, key: str
):
    expected = sql(conn, f"SELECT {expression.format(key)} FROM t")
    assert same([(v,) for v in get_values(transform_data(table, key, operation, args), key)], expected)


def test_rounding_and_real_text_follow_sqlite(conn: sqlite3.Connection):
    for value in (2.5, -2.5, 0.5, 2.675, 1.005, 1e20, 0.1 + 0.2, 123456789.125, 7):
        table = Table(["x"], [{"x": value}])
        for digits in (0, 2):
            (expected,) = sql(conn, "SELECT round(?, ?)", value, digits)
            assert get_values(transform_data(table, "x", "round", {"digits": digits}), "x") == [expected[0]]
        assert sqlite_text(value) == sql(conn, "SELECT CAST(? AS TEXT)", value)[0][0]


@pytest.mark.parametrize("keys", [["city"], ["city", "n"], ["n"], ["score"]])
def test_select_unique_values_and_retrieve_distinct_match_sqlite(conn: sqlite3.Connection, table: Table, keys):
    listed = ", ".join(keys)
    expected = sql(conn, f"SELECT DISTINCT {listed} FROM t")
    assert same(rows_of(select_unique_values(table, keys)), expected)
    assert same([tuple(r.values()) for r in retrieve_data(table, keys, distinct=True)], expected)
    limited = sql(conn, f"SELECT DISTINCT {listed} FROM t LIMIT 2")
    assert same([tuple(r.values()) for r in retrieve_data(table, keys, distinct=True, limit=2)], limited)


def test_limit_and_getters(conn: sqlite3.Connection, table: Table):
    expected = sql(conn, "SELECT name FROM t ORDER BY score DESC, rowid LIMIT 3")
    assert get_values(limit_data(sort_data(table, "score", False), 3), "name") == [r[0] for r in expected]
    assert limit_data(table, -1) is table and limit_data(table, 0).rows == []
    grouped = aggregate_data(group_data_by(table, "city"), "count")
    assert get_values(limit_data(grouped, 2), "count") == [
        r[0] for r in sql(conn, "SELECT count(*) FROM t GROUP BY city LIMIT 2")
    ]


def test_operations_leave_their_input_unchanged(table: Table):
    before = [dict(r) for r in table.rows]
    transform_data(table, "name", "upper")
    sort_data(table, "score", False)
    aggregate_data(table, "sum", "score")
    assert table.rows == before


def test_unknown_key_names_the_keys_the_data_has(table: Table):
    with pytest.raises(ToolExecutionError, match="key 'count' is not a key of this table; its keys are: id, name"):
        sort_data(table, "count", True)
    grouped = aggregate_data(group_data_by(table, "city"), "mean", "score")
    assert sort_data(grouped, "mean_score", True)  # the aggregate output is a key now
    with pytest.raises(ToolExecutionError, match="did you mean 'mean_score'"):
        retrieve_data(grouped, ["city", "mean_scor"])
    with pytest.raises(ToolExecutionError, match="already grouped"):
        group_data_by(grouped, "n")
    with pytest.raises(ToolExecutionError, match="needs a key_name"):
        aggregate_data(table, "sum")


# ---------------------------------------------------------------------------------------------------------------
# Storage, specs, narrowing


def test_labels_share_one_counter_and_resolve_with_or_without_dollars(table: Table):
    state = LiveState({STARTING_TABLE: table})
    assert state.store("transform", table) == "$TRANSFORMED_DF_0$"
    assert state.store("filter", table) == "$FILTERED_DF_1$"
    assert state.store("filter", table) == "$FILTERED_DF_2$"
    assert state.resolve("$FILTERED_DF_1$") is table and state.resolve("FILTERED_DF_2") is table
    forked = state.fork()
    forked.store("sort", table)
    assert "SORTED_DF_3" not in state.tables and state.counter == 3


def test_unknown_label_error_text(table: Table):
    state = LiveState({STARTING_TABLE: table})
    state.store("filter", table)
    with pytest.raises(ToolExecutionError) as info:
        state.resolve("$FILTERED_DF_9$")
    assert str(info.value) == (
        "data_source '$FILTERED_DF_9$' names no data: no call has produced label 'FILTERED_DF_9' yet (available: "
        "$starting_table_var$, $FILTERED_DF_0$); did you mean '$FILTERED_DF_0$'?"
    )
    with pytest.raises(ToolExecutionError, match=r"did you mean '\$FILTERED_DF_0\$'"):
        state.resolve("filtered_df_0")


COLUMNS_META = [
    {"key": "singer_Name", "description": "singer's name", "dtype": "string"},
    {"key": "singer_Age", "description": "singer's age", "dtype": "number"},
    {"key": "singer_Country", "description": "singer's country", "dtype": "string"},
]


def all_specs() -> list[ToolSpec]:
    column = Column("singer_Age", "singer", "Age", "singer's age", "number")
    aggregates = [aggregate_getter_spec(a) for a in ("count", "count_distinct", "mean")]
    return [*slot_specs(), *sel_general_specs(), getter_spec(column), *aggregates]


def test_specs_are_valid_closed_json_schemas_before_and_after_narrowing():
    specs = all_specs()
    assert [s.name for s in slot_specs()] == list(SLOT_TOOLS)  # the order test_vocabulary_and_keys pins
    assert len(sel_general_specs()) == 8 + 2 + 1 + 6 + 4 + 1 + 1
    for spec in specs:
        for parameters in (spec.parameters, narrow(spec, COLUMNS_META).parameters):
            Draft202012Validator.check_schema(parameters)
            assert parameters["additionalProperties"] is False
            assert "data_source" in parameters["required"]
        assert spec.binding["kind"] in ("slot", "sel") and spec.binding["returns"] in ("label", "data")
        assert "$starting_table_var$" in spec.parameters["properties"]["data_source"]["description"]


def test_narrowing_lists_the_keys_with_their_descriptions():
    sort = next(s for s in slot_specs() if s.name == "sort_data")
    key = narrow(sort, COLUMNS_META).parameters["properties"]["key_name"]
    assert "* `singer_Age` - singer's age" in key["description"]
    assert key["anyOf"][0]["enum"] == ["singer_Name", "singer_Age", "singer_Country"]
    validator = Draft202012Validator(narrow(sort, COLUMNS_META).parameters)
    for good in ("singer_Age", "count", "mean_singer_Age", "count_distinct_singer_Country"):
        assert validator.is_valid({"data_source": "x", "key_name": good, "ascending": True})
    for bad in ("singer_age", "mean_count", "avg_singer_Age", "count_singer_Agex"):
        assert not validator.is_valid({"data_source": "x", "key_name": bad, "ascending": True})
    group = next(s for s in slot_specs() if s.name == "group_data_by")
    assert narrow(group, COLUMNS_META).parameters["properties"]["key_name"]["enum"] == [c["key"] for c in COLUMNS_META]
    getter = getter_spec(Column("singer_Age", "singer", "Age", "singer's age", "number"))
    assert narrow(getter, COLUMNS_META) == getter


def test_getter_names_fit_the_tool_name_limit():
    long_key = "Customer_Payment_Methods_" + "payment_method_code_" * 3
    name = getter_name(long_key)
    assert len(name) <= 64 and name.startswith("get_Customer") and name != getter_name(long_key + "x")
    assert getter_name("singer_Age") == "get_singer_Age"
    # one getter per aggregation, which SEL sequences fetch after aggregating (not one per aggregate of a column)
    assert aggregate_getter_spec("mean").name == "get_mean"
    assert aggregate_getter_spec("mean").binding == {
        "formulations": ["sel"],
        "kind": "sel",
        "operation": "get_aggregate",
        "aggregation": "mean",
        "returns": "data",
    }


# ---------------------------------------------------------------------------------------------------------------
# The tool box


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("liveapi") / "concert_singer.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE singer (Singer_ID INTEGER PRIMARY KEY, Name TEXT, Country TEXT, Age INTEGER);
        INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands', 52), (2, 'Timbaland', 'United States', 32),
            (3, 'Justin Brown', 'France', 29), (4, 'Rose White', 'France', 41), (5, 'John Nizinik', 'France', 43),
            (6, 'Tribal King', 'United States', 25);
        """
    )
    db.close()
    return path


START = "$starting_table_var$"
SETUP = "SELECT Name AS singer_Name, Age AS singer_Age, Country AS singer_Country FROM singer"


def scenario(tools: list[str], setup: bool = True, columns: list[dict[str, str]] = COLUMNS_META) -> Scenario:
    return concert_scenario(tools, setup=SETUP if setup else None, columns=columns)


@pytest.fixture(scope="module")
def toolbox(database: Path):
    box = LiveApiToolBox([*all_specs(), rest_spec(ENDPOINT)], {"concert_singer": database})
    yield box
    box.close()


class Episode:
    """One episode on a tool box, started (its hidden setup run); calling it runs a tool as the environment does,
    the arguments checked against the episode's narrowed spec first."""

    def __init__(self, box: LiveApiToolBox, scene: Scenario):
        self.box, self.scene, self.state = box, scene, box.new_state()
        box.start(self.state, scene)

    def __call__(self, tool: str, /, **arguments: Any) -> Any:
        spec = self.box.episode_spec(self.box.specs[tool], self.scene)
        problem = self.box.argument_error(spec, arguments)
        if problem is not None:
            raise ToolExecutionError(problem, "invalid_arguments")
        return self.box.execute(self.state, spec, arguments)


def test_slot_label_flow_reproduces_sql(toolbox: LiveApiToolBox, database: Path):
    call = Episode(toolbox, scenario([s.name for s in slot_specs()]))
    assert len(call.state.tables[STARTING_TABLE].rows) == 6
    first = call("filter_data", data_source=START, key_name="singer_Country", condition="equal_to", value="France")
    assert first == "$FILTERED_DF_0$"
    second = call("sort_data", data_source=first, key_name="singer_Age", ascending=False)
    assert second == "$SORTED_DF_1$"
    keys = ["singer_Name", "singer_Age"]
    rows = call("retrieve_data", data_source="SORTED_DF_1", key_name=keys, distinct=False, limit=2)
    with sqlite3.connect(database) as db:
        expected = db.execute("SELECT Name, Age FROM singer WHERE Country = 'France' ORDER BY Age DESC LIMIT 2")
        assert [tuple(r.values()) for r in rows] == expected.fetchall()
    assert rows[0] == {"singer_Name": "John Nizinik", "singer_Age": 43}


def test_slot_aggregate_and_transform_flow(toolbox: LiveApiToolBox):
    call = Episode(toolbox, scenario([s.name for s in slot_specs()]))
    first_six = {"operation_type": "substring", "operation_args": {"start_index": 0, "end_index": 6}}
    label = call("transform_data", data_source=START, key_name="singer_Country", **first_six)
    label = call("filter_data", data_source=label, key_name="singer_Country", condition="equal_to", value="United")
    assert label == "$FILTERED_DF_1$"
    label = call("aggregate_data", data_source=label, aggregation_type="mean", key_name="singer_Age")
    assert call("retrieve_data", data_source=label, key_name="mean_singer_Age") == [{"mean_singer_Age": 28.5}]
    with pytest.raises(ToolExecutionError, match="key 'mean_singer_Age' is not a key of this table"):
        call("sort_data", data_source=START, key_name="mean_singer_Age", ascending=True)


def test_sel_flow_with_getters(toolbox: LiveApiToolBox, database: Path):
    call = Episode(toolbox, scenario([s.name for s in sel_general_specs()] + ["get_singer_Age"]))
    label = call("select_data_greater_than", data_source=START, key_name="singer_Age", value="30")
    label = call("sort_data_ascending", data_source=label, key_name="singer_Age")
    label = call("limit_data", data_source=label, n=3)
    assert label == "$LIMITED_DF_2$"
    with sqlite3.connect(database) as db:
        expected = [r[0] for r in db.execute("SELECT Age FROM singer WHERE Age > 30 ORDER BY Age LIMIT 3")]
    assert call("get_singer_Age", data_source=label) == expected


def test_sel_aggregate_getters_read_the_one_aggregate_of_their_kind(toolbox: LiveApiToolBox, database: Path):
    call = Episode(toolbox, scenario([s.name for s in all_specs()]))
    grouped = call("group_data_by", data_source=START, key_name="singer_Country")
    counted = call("aggregate_data_count", data_source=grouped)
    averaged = call("aggregate_data_mean", data_source=counted, key_name="singer_Age")
    with sqlite3.connect(database) as db:
        expected = db.execute("SELECT count(*), avg(Age) FROM singer GROUP BY Country").fetchall()
    counts = call("get_count", data_source=averaged)
    means = call("get_mean", data_source=averaged)
    assert sorted(zip(counts, means, strict=True)) == sorted(expected)
    message = "the data holds no count_distinct aggregate: call aggregate_data_count_distinct on it first"
    with pytest.raises(ToolExecutionError, match=message):
        call("get_count_distinct", data_source=averaged)
    # a count of rows and a count of names: get_count cannot tell which is meant
    both = call("aggregate_data_count", data_source=counted, key_name="singer_Name")
    with pytest.raises(ToolExecutionError, match=r"several count aggregates \(count, count_singer_Name\): ambiguous"):
        call("get_count", data_source=both)


def test_unknown_label_through_the_tool_box(toolbox: LiveApiToolBox):
    call = Episode(toolbox, scenario(["sort_data"]))
    with pytest.raises(ToolExecutionError, match=r"data_source '\$SORTED_DF_0\$' names no data: no call has produced"):
        call("sort_data", data_source="$SORTED_DF_0$", key_name="singer_Age", ascending=True)


def test_a_key_outside_the_scenario_columns_is_refused_by_the_narrowed_spec(toolbox: LiveApiToolBox):
    scene = scenario(["filter_data", "sort_data"])
    arguments = {"data_source": "$starting_table_var$", "key_name": "singer_Height", "ascending": True}
    assert toolbox.argument_error(toolbox.specs["sort_data"], arguments) is None  # the universe spec: any string
    message = toolbox.argument_error(toolbox.episode_spec(toolbox.specs["sort_data"], scene), arguments)
    assert message is not None and "'singer_Height'" in message and "'singer_Age'" in message
    # validators follow the schema, not the tool name: another scenario's columns are another enum
    other = scenario(["sort_data"], columns=[{"key": "singer_Height", "description": "height", "dtype": "number"}])
    assert toolbox.argument_error(toolbox.episode_spec(toolbox.specs["sort_data"], other), arguments) is None
    filtered = {"data_source": "x", "key_name": "count", "condition": "equal_to", "value": 1}
    message = toolbox.argument_error(toolbox.episode_spec(toolbox.specs["filter_data"], scene), filtered)
    assert message is not None and "'count' is not one of" in message


def test_the_environment_runs_the_hidden_setup_and_shows_narrowed_specs(toolbox: LiveApiToolBox):
    env = Environment(scenario(["sort_data", "retrieve_data"]), toolbox)
    start = env.reset()
    shown = {s.name: s for s in start.tools}
    assert shown["sort_data"].parameters["properties"]["key_name"]["anyOf"][0]["enum"][0] == "singer_Name"

    def call(name: str, **arguments: Any) -> Any:
        action = Action(kind="tool_call", tool_call=ToolCall(id="c", name=name, arguments=arguments))
        return env.step(action)

    bad = call("sort_data", data_source="$starting_table_var$", key_name="Age", ascending=True)
    assert bad is not None and not bad.ok and bad.error is not None and bad.error.type == "invalid_arguments"
    sorted_ = call("sort_data", data_source="$starting_table_var$", key_name="singer_Age", ascending=True)
    assert sorted_ is not None and sorted_.ok and sorted_.result == "$SORTED_DF_0$"
    rows = call("retrieve_data", data_source="$SORTED_DF_0$", key_name="singer_Name", limit=1)
    assert rows is not None and rows.result == [{"singer_Name": "Tribal King"}]


def test_equal_specs_shared_by_slot_and_sel_count_once(database: Path):
    box = LiveApiToolBox([*slot_specs(), *sel_general_specs()], {"concert_singer": database})
    assert box.specs["group_data_by"].binding["formulations"] == ["slot", "sel"]
    assert box.specs["filter_data"].binding["formulations"] == ["slot"]
    changed = slot_specs()[0].model_copy(update={"description": "other"})
    with pytest.raises(ValueError, match="duplicate tool name 'aggregate_data'"):
        LiveApiToolBox([*slot_specs(), changed], {})


# ---------------------------------------------------------------------------------------------------------------
# REST

MIN_AGE = EndpointParam("min_age", "integer", "Age the singer is older than", "Min Age", 30)
ENDPOINT = concert_endpoint(
    "get_singer_names_concert_singer",
    "/v1/concert_singer/singer/names_by_country_min_age",
    "Get singer names for a given country and minimum age",
    "SELECT Name FROM singer WHERE Country = :country AND Age > :min_age ORDER BY Age",
    [COUNTRY, MIN_AGE],
)


def test_rest_spec_is_a_closed_schema_with_every_parameter_required():
    spec = rest_spec(ENDPOINT)
    Draft202012Validator.check_schema(spec.parameters)
    assert spec.parameters["required"] == ["country", "min_age"] and spec.parameters["additionalProperties"] is False
    assert spec.parameters["properties"]["min_age"] == {
        "type": "integer",
        "description": "Age the singer is older than",
        "title": "Min Age",
    }
    assert (
        spec.binding["kind"] == "rest" and spec.binding["path"] == ENDPOINT.path and spec.binding["returns"] == "data"
    )
    assert [p["name"] for p in spec.binding["params"]] == ["country", "min_age"]


def test_rest_app_refuses_two_tools_on_one_path(database: Path):
    other = rest_spec(ENDPOINT).model_copy(update={"name": "other"})
    with pytest.raises(ValueError, match="share the path"):
        rest_app([rest_spec(ENDPOINT), other], {"concert_singer": database})


def test_readable_422_names_the_parameter():
    body = {
        "detail": [
            {"type": "missing", "loc": ["query", "country"], "msg": "Field required", "input": None},
            {
                "type": "int_parsing",
                "loc": ["query", "min_age"],
                "msg": "Input should be a valid integer",
                "input": "x",
            },
        ]
    }
    assert readable_422(body) == (
        "query parameter 'country' is required but was not given; query parameter 'min_age': input should be a valid "
        'integer (got "x")'
    )


def test_rest_calls_go_through_a_live_server(toolbox: LiveApiToolBox, database: Path):
    scene = scenario([ENDPOINT.name], setup=False)
    state = toolbox.new_state()
    toolbox.start(state, scene)
    spec = toolbox.episode_spec(toolbox.specs[ENDPOINT.name], scene)
    assert spec == toolbox.specs[ENDPOINT.name]
    rows = toolbox.execute(state, spec, {"country": "France", "min_age": 30})
    with sqlite3.connect(database) as db:
        expected = db.execute("SELECT Name FROM singer WHERE Country = 'France' AND Age > 30 ORDER BY Age")
        assert rows == [{"Name": name} for (name,) in expected.fetchall()]

    server = toolbox.rest_server()
    assert server.url.startswith(f"http://{HOST}:")
    direct = httpx.get(server.url + ENDPOINT.path, params={"country": "United States", "min_age": 20})
    assert direct.status_code == 200 and direct.json() == [{"Name": "Tribal King"}, {"Name": "Timbaland"}]
    openapi = httpx.get(server.url + "/openapi.json").json()
    validate(openapi)
    parameters = openapi["paths"][ENDPOINT.path]["get"]["parameters"]
    assert [(p["name"], p["required"], p["schema"]["type"]) for p in parameters] == [
        ("country", True, "string"),
        ("min_age", True, "integer"),
    ]

    # the server validates: a missing parameter passes the tool box's checks and comes back as HTTP 422
    assert toolbox.argument_error(spec, {"country": "France"}) is None
    with pytest.raises(ToolExecutionError) as info:
        toolbox.execute(state, spec, {"country": "France"})
    assert str(info.value) == "HTTP 422: query parameter 'min_age' is required but was not given"
    assert info.value.error_type == "invalid_arguments"
    with pytest.raises(ToolExecutionError, match=r"HTTP 422: query parameter 'min_age': input should be a valid int"):
        toolbox.execute(state, spec, {"country": "France", "min_age": "old"})
    assert toolbox.rest_server() is server  # reused across calls and episodes


def test_the_server_process_is_gone_after_close(database: Path):
    box = LiveApiToolBox([rest_spec(ENDPOINT)], {"concert_singer": database})
    state = box.new_state()
    assert box.execute(state, box.specs[ENDPOINT.name], {"country": "Netherlands", "min_age": 0}) == [
        {"Name": "Joe Sharp"}
    ]
    server = box.rest_server()
    pid, url = server.pid, server.url
    assert pid is not None and server.process is not None
    box.close()
    assert server.process.poll() is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped, not a zombie
    with pytest.raises(httpx.TransportError):
        httpx.get(url + ENDPOINT.path, timeout=2)


def test_a_server_that_cannot_start_is_an_infrastructure_error(tmp_path: Path):
    server = RestServer([rest_spec(ENDPOINT)], {"elsewhere": tmp_path / "none.sqlite"})
    with pytest.raises(InfraError, match="exited with status"):
        server.start()
    assert server.process is not None and server.process.poll() is not None


# ---------------------------------------------------------------------------------------------------------------
# REST endpoints compiled from queries, served over HTTP (the helper's small Spider folder)

BOOKS = ["id", "title", "author_id", "pages", "price"]  # the books table's columns, in schema order
SERVED = [  # (name, database, gold SQL, its rows as the question asks them, ordered)
    (
        "nested",
        "library",
        'SELECT title FROM books WHERE author_id IN (SELECT id FROM authors WHERE country = "Chile") '
        "ORDER BY pages DESC LIMIT 2",
        [("Salt Roads",), ("Quiet Harbour",)],  # Chile's authors 1 and 3 wrote 320, 210, 180 and 260 pages
    ),
    (
        "intersect",
        "library",
        "SELECT name FROM authors WHERE country = 'Chile' "
        "INTERSECT SELECT T1.name FROM authors AS T1 JOIN books AS T2 ON T1.id = T2.author_id WHERE T2.price > 10",
        [("Ada Mills",), ("Ursula Vance",)],  # both Chileans have a book above 10
    ),
    (
        "except",
        "shop",
        "SELECT cname FROM customers "
        "EXCEPT SELECT T1.cname FROM customers AS T1 JOIN orders AS T2 ON T1.cid = T2.cid WHERE T2.status = 'paid'",
        [("Dag",)],  # the only customer without a paid order
    ),
    ("average", "shop", "SELECT avg(amount) FROM orders WHERE status = 'paid'", [((30 + 12 + 80) / 3,)]),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    data = read_spider(make_spider(tmp_path_factory.mktemp("served-spider")))
    endpoints = {}
    for name, db_id, sql, _ in SERVED:
        endpoint = rest_endpoint(Question(0, db_id, name, sql), data.schemas[db_id])
        assert isinstance(endpoint, Endpoint), endpoint
        endpoints[name] = endpoint
    box = LiveApiToolBox([rest_spec(e) for e in endpoints.values()], data.databases)
    yield box, endpoints, data.databases
    box.close()


def _call(box: LiveApiToolBox, endpoint: Endpoint, arguments: dict[str, Any]) -> Any:
    scene = concert_scenario([endpoint.name], formulation="rest")
    spec = box.episode_spec(box.specs[endpoint.name], scene)
    assert box.argument_error(spec, arguments) is None
    return box.execute(box.new_state(), spec, arguments)


@pytest.mark.parametrize(("name", "database", "sql", "rows"), SERVED)
def test_compiled_endpoints_return_the_gold_rows_over_http(served, name: str, database: str, sql: str, rows):
    box, endpoints, paths = served
    endpoint = endpoints[name]
    gold = {p.name: p.value for p in endpoint.params}
    got = [tuple(r.values()) for r in _call(box, endpoint, gold)]
    assert (got if "ORDER BY" in sql else sorted(got)) == rows
    with sqlite3.connect(f"file:{paths[database]}?mode=ro", uri=True) as conn:
        assert [tuple(r.values()) for r in endpoint_rows(conn, box.specs[endpoint.name], gold)] == got
        assert sorted(conn.execute(sql).fetchall()) == sorted(got)


def test_a_column_parameter_chooses_within_its_enum_and_is_refused_outside_it(served):
    box, endpoints, _ = served
    nested = endpoints["nested"]
    # the top query's parameters first, then the nested one's
    assert [(p.name, p.value) for p in nested.params] == [("sort_by", "pages"), ("limit", 2), ("country", "Chile")]
    spec = box.specs[nested.name]
    assert spec.parameters["properties"]["sort_by"]["enum"] == BOOKS
    assert spec.binding["params"][0]["identifiers"]["pages"] == '"books"."pages"'
    # another column of the enum sorts by it: Chile's books by price, highest first
    rows = _call(box, nested, {"country": "Chile", "sort_by": "price", "limit": 3})
    assert rows == [{"title": "Salt Roads"}, {"title": "Quiet Harbour"}, {"title": "Night Ferry"}]
    average = endpoints["average"]
    assert spec.binding["path"] != box.specs[average.name].binding["path"]
    assert box.specs[average.name].parameters["properties"]["average_column"]["enum"] == ["oid", "cid", "amount"]
    assert _call(box, average, {"average_column": "cid", "status": "paid"}) == [{'AVG("orders"."cid")': 2.0}]

    # anything else is refused by the server before any SQL runs, in words
    expected = (
        "HTTP 422: query parameter 'sort_by': input should be 'id', 'title', 'author_id', 'pages' or 'price' "
        '(got "{}")'
    )
    for outside in ("colour", 'pages" DESC; --', "PAGES"):
        with pytest.raises(ToolExecutionError) as info:
            _call(box, nested, {"country": "Chile", "sort_by": outside, "limit": 2})
        assert str(info.value) == expected.format(outside.replace('"', '\\"'))
        assert info.value.error_type == "invalid_arguments"
    openapi = httpx.get(box.rest_server().url + "/openapi.json").json()
    validate(openapi)
    parameters = openapi["paths"][nested.path]["get"]["parameters"]
    assert [(p["name"], p["schema"].get("enum")) for p in parameters] == [
        ("sort_by", BOOKS),
        ("limit", None),
        ("country", None),
    ]


def test_render_sql_writes_only_the_binding_identifiers():
    binding = {
        "sql": "SELECT name, ':sort_by' FROM singer WHERE country = :country ORDER BY :sort_by LIMIT :limit",
        "params": [
            {"name": "country", "type": "string"},
            {"name": "sort_by", "type": "string", "enum": ["Age", "Name"], "identifiers": {"Age": '"singer"."Age"'}},
            {"name": "limit", "type": "integer"},
        ],
    }
    sql, values = render_sql(binding, {"country": "France", "sort_by": "Age", "limit": 2})
    # the placeholder inside a string literal stays text; the values stay bound parameters
    assert (
        sql == """SELECT name, ':sort_by' FROM singer WHERE country = :country ORDER BY "singer"."Age" LIMIT :limit"""
    )
    assert values == {"country": "France", "limit": 2}
    with pytest.raises(ValueError, match=r"^sort_by must be one of Age, not \"Name\"$"):
        render_sql(binding, {"country": "France", "sort_by": "Name", "limit": 2})
    with pytest.raises(ValueError, match=r"^sort_by must be one of Age, not 3$"):
        render_sql(binding, {"country": "France", "sort_by": 3, "limit": 2})
    with pytest.raises(ValueError, match=r"^missing argument 'limit'$"):
        render_sql(binding, {"country": "France", "sort_by": "Age"})
    with pytest.raises(ValueError, match=r"^unknown argument 'extra' \(the parameters are: country, limit, sort_by\)$"):
        render_sql(binding, {"country": "France", "sort_by": "Age", "limit": 2, "extra": 1})
    plain = {"sql": "SELECT 1 WHERE :x = 1", "params": [{"name": "x", "type": "integer"}]}
    assert render_sql(plain, {"x": 1}) == ("SELECT 1 WHERE :x = 1", {"x": 1})
