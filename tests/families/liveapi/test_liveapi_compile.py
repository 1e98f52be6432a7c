"""The liveapi compiler: SQL -> QueryPlan -> SLOT / SEL gold sequences, REST endpoints and their de-duplication,
on hand-written queries over a small schema and on every question of spider-dev."""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any

import pytest
from helpers.paths import SPIDER_DEV

from undertow.env_core.liveapi import endpoints as endpoints_module
from undertow.env_core.liveapi import plan as plan_module
from undertow.env_core.liveapi.endpoints import (
    Endpoint,
    EndpointParam,
    compile_endpoint,
    dedupe,
    endpoint_key,
    rest_endpoint,
)
from undertow.env_core.liveapi.plan import (
    Aggregate,
    Filter,
    QueryPlan,
    describe_column,
    json_type,
    plan_query,
    transforms,
)
from undertow.env_core.liveapi.rest import endpoint_rows
from undertow.env_core.liveapi.sequences import GoldCall, labels_of, sel_sequence, slot_sequence
from undertow.env_core.liveapi.specs import rest_spec
from undertow.env_core.liveapi.vocabulary import (
    AGGREGATIONS,
    CONDITIONS,
    FAMILY,
    MAX_NAME,
    NAME_PATTERN,
    SKIP_KINDS,
    SLOT_TOOLS,
    STARTING_TABLE,
    TRANSFORMS,
    aggregate_output,
    column_key,
    sel_general_tool_names,
)
from undertow.env_core.spider import Problem, Question, Schema, read_spider

START = "$starting_table_var$"


def _schema() -> Schema:
    tables = {
        "member": ["member_id", "first_name", "last_name", "link_to_major"],
        "major": ["major_id", "major_name"],
        "Player": ["player_fifa_api_id", "player_name"],
        "Player_Attributes": ["player_fifa_api_id", "date", "defensive_work_rate"],
        "singer": ["Singer_ID", "Name", "Country", "Age", "Song_Name"],
        "concert": ["concert_ID", "Year", "Singer_ID"],
    }
    schema = Schema("club", tables)
    numbers = {"member_id", "major_id", "player_fifa_api_id", "Singer_ID", "Age", "concert_ID", "Year"}
    for table, columns in tables.items():
        schema.table_names[table] = table.lower().replace("_", " ")
        for column in columns:
            schema.column_names[(table, column)] = column.lower().replace("_", " ")
            schema.column_types[(table, column)] = "number" if column in numbers else "text"
    return schema


SCHEMA = _schema()


@pytest.fixture(scope="module")
def database() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(
        """
        CREATE TABLE member (member_id INTEGER, first_name TEXT, last_name TEXT, link_to_major INTEGER);
        CREATE TABLE major (major_id INTEGER, major_name TEXT);
        CREATE TABLE Player (player_fifa_api_id INTEGER, player_name TEXT);
        CREATE TABLE Player_Attributes (player_fifa_api_id INTEGER, date TEXT, defensive_work_rate TEXT);
        CREATE TABLE singer (Singer_ID INTEGER, Name TEXT, Country TEXT, Age INTEGER, Song_Name TEXT);
        CREATE TABLE concert (concert_ID INTEGER, Year INTEGER, Singer_ID INTEGER);
        INSERT INTO member VALUES (1, 'Angela', 'Sanders', 10), (2, 'Angela', 'Smith', 11), (3, 'Tom', 'Sanders', 11);
        INSERT INTO major VALUES (10, 'Business'), (11, 'Physics');
        INSERT INTO Player VALUES (7, 'Kevin Berigaud'), (8, 'Other');
        INSERT INTO Player_Attributes VALUES (7, '2013-02-22 00:00:00', 'medium'), (7, '2014-01-01 00:00:00', 'high'),
            (8, '2013-02-22 00:00:00', 'low');
        INSERT INTO singer VALUES (1, 'Joe', 'France', 52, 'Hey Oh'), (2, 'Ann', 'France', 29, 'Sun'),
            (3, 'Li', 'China', 19, 'Hey Jude'), (4, 'Bo', 'USA', 41, 'Moon');
        INSERT INTO concert VALUES (1, 2014, 1), (2, 2015, 1), (3, 2015, 2);
        """
    )
    return conn


def _question(sql: str, index: int = 0) -> Question:
    return Question(index, "club", "a question", sql)


def _plan(sql: str) -> QueryPlan:
    plan = plan_query(_question(sql), SCHEMA)
    assert isinstance(plan, QueryPlan), plan
    return plan


def _calls(calls: list[GoldCall]) -> list[tuple[str, dict[str, Any], str | None]]:
    return [(c.tool, c.arguments, c.label) for c in calls]


# ---------------------------------------------------------------------------------------------------------------
# Vocabulary


def test_vocabulary_and_keys() -> None:
    assert FAMILY == "liveapi" and STARTING_TABLE == "starting_table_var"
    slot_tools = "aggregate_data filter_data group_data_by retrieve_data select_unique_values sort_data transform_data"
    assert tuple(slot_tools.split()) == SLOT_TOOLS
    names = sel_general_tool_names()
    assert names[:8] == [f"select_data_{c}" for c in CONDITIONS]
    assert names[8:11] == ["sort_data_ascending", "sort_data_descending", "group_data_by"]
    assert names[11:17] == [f"aggregate_data_{a}" for a in AGGREGATIONS]
    assert names[17:] == [f"transform_data_{t}" for t in TRANSFORMS] + ["select_unique_values", "limit_data"]
    assert column_key("Player_Attributes", "date") == "Player_Attributes_date"
    assert column_key("frpm", "County Name (K-12)") == "frpm_County_Name__K_12_"
    assert aggregate_output("count", None) == "count"
    assert aggregate_output("mean", "singer_Age") == "mean_singer_Age"
    assert describe_column(SCHEMA, "singer", "Song_Name") == "singer's song name"
    assert describe_column(SCHEMA, "Player_Attributes", "date") == "player attributes' date"
    assert json_type(SCHEMA, "singer", "Age") == "number" and json_type(SCHEMA, "singer", "Name") == "string"
    calls = [GoldCall(t, {}, None) for t in ("transform_data_lower", "filter_data", "get_singer_Age", "limit_data")]
    assert labels_of(calls) == ["TRANSFORMED_DF_0", "FILTERED_DF_1", None, "LIMITED_DF_2"]
    assert labels_of([GoldCall("retrieve_data", {}, None), GoldCall("get_x_by_y_db", {}, None)]) == [None, None]


# ---------------------------------------------------------------------------------------------------------------
# QueryPlan and gold sequences


def test_join_and_two_filters_is_the_papers_listing_10(database: sqlite3.Connection) -> None:
    plan = _plan(
        "SELECT T2.major_name FROM member AS T1 INNER JOIN major AS T2 ON T1.link_to_major = T2.major_id "
        "WHERE T1.first_name = 'Angela' AND T1.last_name = 'Sanders'"
    )
    assert [c.key for c in plan.columns] == [
        "member_member_id",
        "member_first_name",
        "member_last_name",
        "member_link_to_major",
        "major_major_id",
        "major_major_name",
    ]
    assert plan.columns[1].description == "member's first name" and plan.columns[1].dtype == "string"
    assert plan.columns[0].dtype == "number"
    cursor = database.execute(plan.setup_sql)
    assert [d[0] for d in cursor.description] == [c.key for c in plan.columns]
    assert len(cursor.fetchall()) == 3  # the query's own join: every member matched with its major
    assert _calls(slot_sequence(plan)) == [
        (
            "filter_data",
            {"data_source": START, "key_name": "member_first_name", "condition": "equal_to", "value": "Angela"},
            "FILTERED_DF_0",
        ),
        (
            "filter_data",
            {
                "data_source": "$FILTERED_DF_0$",
                "key_name": "member_last_name",
                "condition": "equal_to",
                "value": "Sanders",
            },
            "FILTERED_DF_1",
        ),
        (
            "retrieve_data",
            {"data_source": "$FILTERED_DF_1$", "key_name": "major_major_name", "distinct": False, "limit": -1},
            None,
        ),
    ]
    assert _calls(sel_sequence(plan)) == [
        (
            "select_data_equal_to",
            {"data_source": START, "key_name": "member_first_name", "value": "Angela"},
            "FILTERED_DF_0",
        ),
        (
            "select_data_equal_to",
            {"data_source": "$FILTERED_DF_0$", "key_name": "member_last_name", "value": "Sanders"},
            "FILTERED_DF_1",
        ),
        ("get_major_major_name", {"data_source": "$FILTERED_DF_1$"}, None),
    ]


def test_substring_in_where_is_a_transform_first_as_in_listing_11(database: sqlite3.Connection) -> None:
    plan = _plan(
        "SELECT t2.defensive_work_rate FROM Player AS t1 INNER JOIN Player_Attributes AS t2 "
        "ON t1.player_fifa_api_id = t2.player_fifa_api_id "
        "WHERE SUBSTR(t2.`date`, 1, 10) = '2013-02-22' AND t1.player_name = 'Kevin Berigaud'"
    )
    calls = slot_sequence(plan)
    assert [c.label for c in calls] == ["TRANSFORMED_DF_0", "FILTERED_DF_1", "FILTERED_DF_2", None]
    assert calls[0].arguments == {
        "data_source": START,
        "key_name": "Player_Attributes_date",
        "operation_type": "substring",
        "operation_args": {"start_index": 0, "end_index": 10},
    }
    assert calls[1].arguments["data_source"] == "$TRANSFORMED_DF_0$"
    assert calls[1].arguments["value"] == "2013-02-22"
    sel = sel_sequence(plan)
    assert sel[0].tool == "transform_data_substring"
    assert sel[0].arguments == {
        "data_source": START,
        "key_name": "Player_Attributes_date",
        "start_index": 0,
        "end_index": 10,
    }
    database.execute(plan.setup_sql).fetchall()


def test_group_by_count_order_by_count_desc_limit_1() -> None:
    plan = _plan("SELECT Country FROM singer GROUP BY Country ORDER BY count(*) DESC LIMIT 1")
    assert plan.group_by == "singer_Country"
    assert plan.aggregates == [Aggregate("count", None, "count")]  # added for the sort, though not selected
    assert plan.order == [("count", False)] and plan.limit == 1 and plan.select == ["singer_Country"]
    assert _calls(slot_sequence(plan)) == [
        ("group_data_by", {"data_source": START, "key_name": "singer_Country"}, "GROUPED_DF_0"),
        ("aggregate_data", {"data_source": "$GROUPED_DF_0$", "aggregation_type": "count"}, "AGGREGATED_DF_1"),
        ("sort_data", {"data_source": "$AGGREGATED_DF_1$", "key_name": "count", "ascending": False}, "SORTED_DF_2"),
        (
            "retrieve_data",
            {"data_source": "$SORTED_DF_2$", "key_name": "singer_Country", "distinct": False, "limit": 1},
            None,
        ),
    ]
    assert _calls(sel_sequence(plan)) == [
        ("group_data_by", {"data_source": START, "key_name": "singer_Country"}, "GROUPED_DF_0"),
        ("aggregate_data_count", {"data_source": "$GROUPED_DF_0$"}, "AGGREGATED_DF_1"),
        ("sort_data_descending", {"data_source": "$AGGREGATED_DF_1$", "key_name": "count"}, "SORTED_DF_2"),
        ("limit_data", {"data_source": "$SORTED_DF_2$", "n": 1}, "LIMITED_DF_3"),
        ("get_singer_Country", {"data_source": "$LIMITED_DF_3$"}, None),
    ]


def test_aggregates_of_columns_and_several_sort_keys() -> None:
    plan = _plan(
        "SELECT avg(age), count(DISTINCT country), max(Age) FROM singer WHERE country = 'France' AND Age >= -3"
    )
    assert [(a.aggregation, a.key, a.output) for a in plan.aggregates] == [
        ("mean", "singer_Age", "mean_singer_Age"),
        ("count_distinct", "singer_Country", "count_distinct_singer_Country"),
        ("max", "singer_Age", "max_singer_Age"),
    ]
    assert plan.filters[1] == Filter("singer_Age", "greater_than_equal_to", -3)
    calls = slot_sequence(plan)
    assert calls[2].arguments == {
        "data_source": "$FILTERED_DF_1$",
        "aggregation_type": "mean",
        "key_name": "singer_Age",
    }
    assert calls[-1].arguments["key_name"] == ["mean_singer_Age", "count_distinct_singer_Country", "max_singer_Age"]
    sel = sel_sequence(plan)
    # each aggregate is read by its aggregation's getter, whatever key it aggregated
    assert [c.tool for c in sel][-3:] == ["get_mean", "get_count_distinct", "get_max"]

    plan = _plan("SELECT Name FROM singer ORDER BY Country ASC, Age DESC")
    sorts = [c.arguments for c in slot_sequence(plan) if c.tool == "sort_data"]
    # stable sorts: the last ORDER BY key first, the first one last
    assert [(s["key_name"], s["ascending"]) for s in sorts] == [("singer_Age", False), ("singer_Country", True)]


def test_distinct_and_sel_expansion() -> None:
    plan = _plan("SELECT DISTINCT Country FROM singer WHERE Age > 20")
    assert plan.distinct
    assert _calls(slot_sequence(plan))[-1] == (
        "retrieve_data",
        {"data_source": "$FILTERED_DF_0$", "key_name": "singer_Country", "distinct": True, "limit": -1},
        None,
    )
    plan = _plan("SELECT DISTINCT Name, Age FROM singer WHERE Country != 'France' ORDER BY Age DESC LIMIT 3")
    assert _calls(sel_sequence(plan)) == [
        (
            "select_data_not_equal_to",
            {"data_source": START, "key_name": "singer_Country", "value": "France"},
            "FILTERED_DF_0",
        ),
        ("sort_data_descending", {"data_source": "$FILTERED_DF_0$", "key_name": "singer_Age"}, "SORTED_DF_1"),
        (
            "select_unique_values",
            {"data_source": "$SORTED_DF_1$", "key_name": ["singer_Name", "singer_Age"]},
            "UNIQUE_DF_2",
        ),
        ("limit_data", {"data_source": "$UNIQUE_DF_2$", "n": 3}, "LIMITED_DF_3"),
        ("get_singer_Name", {"data_source": "$LIMITED_DF_3$"}, None),
        ("get_singer_Age", {"data_source": "$LIMITED_DF_3$"}, None),
    ]
    assert labels_of(sel_sequence(plan)) == [c.label for c in sel_sequence(plan)]


def test_between_like_and_comparisons() -> None:
    plan = _plan("SELECT Name FROM singer WHERE Age BETWEEN 20 AND 45.5 AND Song_Name LIKE '%Hey%' AND 30 < Age")
    assert plan.filters == [
        Filter("singer_Age", "greater_than_equal_to", 20),
        Filter("singer_Age", "less_than_equal_to", 45.5),
        Filter("singer_Song_Name", "like", "%Hey%"),
        Filter("singer_Age", "greater_than", 30),  # literal on the left: the comparison turns round
    ]
    assert _plan("SELECT Name FROM singer WHERE Age <> 3").filters[0].condition == "not_equal_to"


def test_double_quoted_strings_are_literals_unless_a_column() -> None:
    plan = _plan('SELECT "Name" FROM singer WHERE Country = "France"')
    assert plan.select == ["singer_Name"]
    assert plan.filters == [Filter("singer_Country", "equal_to", "France")]
    endpoint = compile_endpoint(_question('SELECT "Name" FROM singer WHERE Country = "France"'), SCHEMA)
    assert [(p.name, p.value, p.type) for p in endpoint.params] == [("country", "France", "string")]


def test_order_by_an_alias_and_a_selected_aggregate() -> None:
    plan = _plan("SELECT Country, count(*) AS n FROM singer GROUP BY Country ORDER BY n DESC")
    assert plan.order == [("count", False)] and plan.select == ["singer_Country", "count"]
    assert len(plan.aggregates) == 1


def test_transformed_column_used_elsewhere_is_skipped() -> None:
    problem = plan_query(_question("SELECT Name FROM singer WHERE lower(Name) = 'joe'"), SCHEMA)
    assert isinstance(problem, Problem) and problem.kind == "function in WHERE"
    assert "LOWER" in problem.reason and "untransformed" in problem.reason
    plan = _plan("SELECT Country FROM singer WHERE upper(Name) = 'JOE' AND round(Age, 1) > 2")
    assert [(t.operation, t.args) for t in transforms(plan)] == [("upper", {}), ("round", {"digits": 1})]


@pytest.mark.parametrize(
    ("sql", "kind", "named"),
    [
        ("SELECT FROM WHERE", "parse error", "sqlglot"),
        ("SELECT Name FROM singer WHERE Age > (SELECT avg(Age) FROM singer)", "nested SELECT", "nested SELECT"),
        ("SELECT Name FROM singer UNION SELECT Name FROM singer", "set operation", "UNION"),
        ("SELECT Name FROM singer EXCEPT SELECT Name FROM singer", "set operation", "EXCEPT"),
        ("SELECT Name FROM singer WHERE Age = 1 OR Age = 2", "OR in WHERE", "OR"),
        ("SELECT Country FROM singer GROUP BY Country HAVING count(*) > 1", "HAVING", "HAVING"),
        ("SELECT Name FROM singer WHERE Age IS NULL", "NOT / IS NULL", "IS NULL"),
        ("SELECT Name FROM singer WHERE NOT Age = 1", "NOT / IS NULL", "NOT"),
        ("SELECT Name FROM singer WHERE Name NOT LIKE 'J%'", "NOT / IS NULL", "NOT LIKE"),
        ("SELECT Name FROM singer WHERE Age > Singer_ID", "column compared with column", "Age > Singer_ID"),
        ("SELECT Name FROM singer WHERE abs(Age) > 3", "function in WHERE", "ABS"),
        ("SELECT Country, Age FROM singer GROUP BY Country, Age", "GROUP BY several columns", "GROUP BY"),
        ("SELECT Age + 1 FROM singer", "expression in SELECT", "Age + 1"),
        ("SELECT sum(Age * 2) FROM singer", "expression in SELECT", "Age * 2"),
        ("SELECT Name FROM singer ORDER BY Age + 1", "ORDER BY expression", "Age + 1"),
        (
            "SELECT T1.Name FROM singer AS T1 JOIN singer AS T2 ON T1.Age = T2.Age",
            "self join",
            "self join: table 'singer'",
        ),
        ("SELECT Nope FROM singer", "unknown column", "Nope"),
        (
            "SELECT Singer_ID FROM singer JOIN concert ON singer.Singer_ID = concert.Singer_ID",
            "unknown column",
            "ambig",
        ),
        ("SELECT 1", "no FROM table", "FROM"),
        ("SELECT Name FROM singer LIMIT 1 OFFSET 2", "OFFSET", "OFFSET"),
        ("SELECT Name FROM singer WHERE Age IN (1, 2)", "other construct", "In"),
    ],
)
def test_unsupported_constructs(sql: str, kind: str, named: str) -> None:
    problem = plan_query(_question(sql, 7), SCHEMA)
    assert isinstance(problem, Problem), problem
    assert problem.kind == kind and problem.kind in SKIP_KINDS
    assert problem.item == "question 7"
    assert named.lower() in problem.reason.lower(), problem.reason


def test_an_unexpected_error_becomes_a_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(question: Question, schema: Schema) -> QueryPlan:
        raise KeyError("boom")

    monkeypatch.setattr(plan_module, "_plan", broken)
    monkeypatch.setattr(endpoints_module, "compile_endpoint", broken)
    for compiled in (plan_query(_question("SELECT Name FROM singer"), SCHEMA), rest_endpoint(_question("x"), SCHEMA)):
        assert isinstance(compiled, Problem) and compiled.kind == "other construct" and "KeyError" in compiled.reason


# ---------------------------------------------------------------------------------------------------------------
# REST endpoints


def _endpoint(sql: str, db_id: str = "club") -> Endpoint:
    endpoint = rest_endpoint(Question(0, db_id, "q", sql), SCHEMA)
    assert isinstance(endpoint, Endpoint), endpoint
    return endpoint


def _gold(endpoint: Endpoint) -> dict[str, Any]:
    return {p.name: p.value for p in endpoint.params}


def _rows(conn: sqlite3.Connection, endpoint: Endpoint, arguments: dict[str, Any] | None = None) -> list[Any]:
    """The endpoint's rows as its server computes them (the gold arguments unless others are given)."""
    rows = endpoint_rows(conn, rest_spec(endpoint), _gold(endpoint) if arguments is None else arguments)
    return [tuple(r.values()) for r in rows]


SINGER_COLUMNS = ["Singer_ID", "Name", "Country", "Age", "Song_Name"]
SINGER_NUMBERS = ["Singer_ID", "Age"]  # the number columns of singer in SCHEMA


def test_rest_endpoint_name_path_description_and_params(database: sqlite3.Connection) -> None:
    endpoint = _endpoint("SELECT Name FROM singer WHERE Country = 'France'")
    assert endpoint.name == "get_singer_name_by_country_club"
    assert endpoint.path == "/v1/club/singer/name_by_country"
    assert endpoint.description == "Get name from singer, for a given country"
    assert endpoint.database == "club"
    assert endpoint.sql == "SELECT name FROM singer WHERE country = :country"
    assert endpoint.params == [EndpointParam("country", "string", "Country of the singer", "Country", "France")]

    original = (
        "SELECT T1.Name FROM singer AS T1 JOIN concert AS T2 ON T1.Singer_ID = T2.Singer_ID "
        "WHERE T2.Year BETWEEN 2014 AND 2015 AND T1.Song_Name LIKE '%Hey%' AND T1.Age > 20.5 AND T1.Age < 60 "
        "ORDER BY T1.Age DESC LIMIT 2"
    )
    endpoint = _endpoint(original.replace("'%Hey%'", '"%Hey%"'))
    assert [(p.name, p.type, p.value) for p in endpoint.params] == [
        ("min_year", "integer", 2014),
        ("max_year", "integer", 2015),
        ("song_name", "string", "Hey"),  # a plain "%text%" pattern takes the text
        ("age", "number", 20.5),
        ("age_2", "integer", 60),
        ("sort_by", "string", "Age"),  # the ORDER BY column: chosen by the caller
        ("limit", "integer", 2),  # and the LIMIT count
    ]
    assert "'%' || :song_name || '%'" in endpoint.sql and ":age_2" in endpoint.sql
    assert endpoint.sql.endswith("ORDER BY :sort_by DESC LIMIT :limit")
    sort_by = endpoint.params[5]
    # every column of the joined tables; Singer_ID, in both, is named with its table
    joined = ["singer.Singer_ID", "Name", "Country", "Age", "Song_Name", "concert_ID", "Year", "concert.Singer_ID"]
    assert sort_by.enum == joined
    assert sort_by.identifiers is not None and sort_by.identifiers["Age"] == '"T1"."Age"'
    assert sort_by.identifiers["concert.Singer_ID"] == '"T2"."Singer_ID"'
    assert endpoint.path == (
        "/v1/club/singer/name_by_min_year_and_max_year_and_song_name_containing_and_age_above_and_age_2_below"
        "_top_n_by_column"
    )
    assert len(endpoint.name) <= MAX_NAME and NAME_PATTERN.match(endpoint.name)
    assert endpoint.name.startswith("get_singer_name_by_min_year") and endpoint.name.endswith("_club")
    assert endpoint.description == (
        "Get name from singer and concert, where year is between the given lowest year and the given highest year "
        "and song name contains the given song name and age is greater than the given age and age is less than the "
        "given age 2, sorted by a chosen column (descending), up to a given number of rows"
    )
    assert endpoint.params[0].description == "Lowest year of the concert (inclusive)"
    assert endpoint.params[3].description == "Age of the singer (exclusive lower bound)"
    assert sort_by.description == "Column of the singer and concert to sort the rows by (descending order)"
    assert endpoint.params[6].description == "Largest number of rows to return"
    assert _rows(database, endpoint) == database.execute(original).fetchall() != []


def test_no_literal_of_the_question_in_its_name_path_or_description() -> None:
    endpoint = _endpoint(
        "SELECT Country, count(*) FROM singer WHERE Song_Name LIKE 'Hey%' AND Age IN (52, 19) GROUP BY Country "
        "HAVING count(*) >= 12 ORDER BY count(*) DESC LIMIT 17"
    )
    shown = " ".join([endpoint.name, endpoint.path, endpoint.description, *(p.description for p in endpoint.params)])
    for literal in ("Hey", "52", "19", "12", "17"):
        assert literal not in shown, literal
    assert endpoint.description == (
        "Get country and number of records from singer, where song name starts with the given song name and age is "
        "one of the given age and the given age 2, per country, keeping groups where number of records is at least "
        "the given number of records, sorted by number of records (descending), up to a given number of rows"
    )
    assert [(p.name, p.value) for p in endpoint.params] == [
        ("song_name", "Hey"),
        ("age", 52),
        ("age_2", 19),
        ("count", 12),
        ("limit", 17),
    ]
    assert endpoint.params[3].description == "Number of records of a group (inclusive lower bound)"
    # a literal no parameter takes is described, never shown
    fixed = _endpoint("SELECT Name, 'star' FROM singer")
    assert fixed.params == [] and fixed.description == "Get name and a fixed value from singer"
    assert "star" not in fixed.name + fixed.path


def test_aggregate_column_parameters(database: sqlite3.Connection) -> None:
    endpoint = _endpoint("SELECT max(Age), min(Age), avg(Age), count(DISTINCT Country), count(*) FROM singer")
    # one parameter for the column three aggregates read (numbers only: avg reads it), one for COUNT(DISTINCT),
    # none for COUNT(*)
    assert [(p.name, p.value, p.enum) for p in endpoint.params] == [
        ("aggregated_column", "Age", SINGER_NUMBERS),
        ("distinct_column", "Country", SINGER_COLUMNS),
    ]
    assert endpoint.sql == (
        "SELECT MAX(:aggregated_column), MIN(:aggregated_column), AVG(:aggregated_column), "
        "COUNT(DISTINCT :distinct_column), COUNT(*) FROM singer"
    )
    assert endpoint.params[0].description == (
        "Column of the singer whose highest value, lowest value and average are computed"
    )
    assert _rows(database, endpoint) == [(52, 19, 35.25, 3, 4)]
    assert _rows(database, endpoint, {"aggregated_column": "Singer_ID", "distinct_column": "Age"}) == [
        (4, 1, 2.5, 4, 4)
    ]

    maximum = _endpoint("SELECT max(Name) FROM singer")  # MIN / MAX read any column
    assert [(p.name, p.value, p.enum) for p in maximum.params] == [("max_column", "Name", SINGER_COLUMNS)]
    assert maximum.description == "Get highest value of a chosen column from singer"
    assert _rows(database, maximum, {"max_column": "Country"}) == [("USA",)]
    total = _endpoint("SELECT sum(Age) FROM singer WHERE Country = 'France'")
    assert [(p.name, p.value, p.enum) for p in total.params] == [
        ("total_column", "Age", SINGER_NUMBERS),
        ("country", "France", None),
    ]
    assert _rows(database, total) == [(81,)]
    # SUM of a text column: no number column to choose instead of it, the column stays
    assert _endpoint("SELECT sum(Name) FROM singer").params == []
    assert _endpoint("SELECT count(*) FROM singer").params == []


def test_sort_and_limit_parameters(database: sqlite3.Connection) -> None:
    endpoint = _endpoint("SELECT Name FROM singer ORDER BY Country ASC, Age DESC")
    assert [(p.name, p.value, p.enum) for p in endpoint.params] == [
        ("sort_by", "Country", SINGER_COLUMNS),
        ("sort_by_2", "Age", SINGER_COLUMNS),
    ]
    assert endpoint.description == (
        "Get name from singer, sorted by the column chosen by sort_by (ascending) and the column chosen by sort_by_2 "
        "(descending)"
    )
    assert _rows(database, endpoint) == [("Li",), ("Joe",), ("Ann",), ("Bo",)]
    assert _rows(database, endpoint, {"sort_by": "Age", "sort_by_2": "Name"}) == [
        ("Li",),
        ("Ann",),
        ("Bo",),
        ("Joe",),
    ]
    first = _endpoint("SELECT Name FROM singer LIMIT 3")
    assert [(p.name, p.type, p.value) for p in first.params] == [("limit", "integer", 3)]
    assert first.sql == "SELECT name FROM singer LIMIT :limit" and first.name == "get_singer_name_first_n_club"
    assert _rows(database, first, {"limit": 1}) == [("Joe",)]
    # nothing to choose: a grouped query sorts by what it groups on (here one column); an alias; a self join
    for sql in (
        "SELECT Country, count(*) FROM singer GROUP BY Country ORDER BY Country",
        "SELECT Age AS a FROM singer ORDER BY a",
        "SELECT T1.Name FROM singer AS T1 JOIN singer AS T2 ON T1.Age = T2.Age ORDER BY T1.Age",
        "SELECT Name FROM singer ORDER BY Age + 1",
    ):
        assert _endpoint(sql).params == [], sql


def test_nested_set_operation_and_having_queries_compile(database: sqlite3.Connection) -> None:
    nested = _endpoint("SELECT Name FROM singer WHERE Age > (SELECT avg(Age) FROM singer WHERE Country = 'France')")
    assert [(p.name, p.value, p.enum) for p in nested.params] == [
        ("average_column", "Age", SINGER_NUMBERS),
        ("country", "France", None),
    ]
    assert nested.params[1].description == "Country of the singer in the nested lookup of singer"
    assert nested.description == (
        "Get name from singer, where age is greater than (the average of a chosen column from singer, for a given "
        "country)"
    )
    assert sorted(_rows(database, nested)) == [("Bo",), ("Joe",)]  # France's mean age is 40.5
    both = _endpoint(
        "SELECT Name FROM singer WHERE Country = 'France' INTERSECT SELECT Name FROM singer WHERE Age > 30"
    )
    assert [(p.name, p.value) for p in both.params] == [("country", "France"), ("age", 30)]
    assert both.description == (
        "Get name from singer, for a given country; keeping only those also among the name from singer, where age "
        "is greater than the given age"
    )
    assert _rows(database, both) == [("Joe",)]
    assert _rows(database, both, {"country": "USA", "age": 40}) == [("Bo",)]
    having = _endpoint("SELECT Country FROM singer GROUP BY Country HAVING count(*) > 1")
    assert [(p.name, p.value) for p in having.params] == [("count", 1)] and "HAVING COUNT(*) > :count" in having.sql
    assert _rows(database, having) == [("France",)]
    either = _endpoint("SELECT Name FROM singer WHERE Age = 1 OR Age IN (2, 3)")
    assert [p.name for p in either.params] == ["age", "age_2", "age_3"]


@pytest.mark.parametrize(
    ("sql", "kind", "reason"),
    [
        ("SELECT FROM WHERE", "parse error", "sqlglot"),
        ("SELECT Name FROM nowhere", "unknown column", "unknown table 'nowhere'"),
        ("SELECT Name FROM singer WHERE Age IN (SELECT Year FROM gone)", "unknown column", "unknown table 'gone'"),
        ("DELETE FROM singer", "other construct", "not a SELECT statement: Delete"),
        ("WITH x AS (SELECT Name FROM singer) SELECT Name FROM x", "other construct", "WITH clause"),
    ],
)
def test_queries_one_endpoint_cannot_answer(sql: str, kind: str, reason: str) -> None:
    problem = rest_endpoint(_question(sql, 4), SCHEMA)
    assert isinstance(problem, Problem) and problem.item == "question 4"
    assert problem.kind == kind and reason in problem.reason, problem


def test_long_names_are_cut_with_a_hash() -> None:
    long_db = "a_database_with_a_rather_long_name"
    a = _endpoint("SELECT Name, Country, Age, Song_Name FROM singer WHERE Country = 'x' ORDER BY Age", long_db)
    b = _endpoint("SELECT Name, Country, Age, Song_Name FROM singer WHERE Song_Name = 'x' ORDER BY Age", long_db)
    for endpoint in (a, b):
        assert len(endpoint.name) <= MAX_NAME and NAME_PATTERN.match(endpoint.name)
        assert endpoint.name.endswith(f"_{long_db}") and endpoint.name.startswith("get_singer_name_count")
    assert a.name != b.name and a.path != b.path


def test_dedupe() -> None:
    first = _endpoint("SELECT Name FROM singer WHERE Country = 'France'")
    same_sql = _endpoint('select name from singer where country = "China"')  # another literal: the same tool
    other_sql = _endpoint("SELECT Name FROM singer AS T1 WHERE T1.Country = 'France'")  # same name, other SQL
    third = _endpoint("SELECT Name FROM singer AS T9 WHERE T9.Country = 'France'")
    elsewhere = _endpoint("SELECT Name FROM singer WHERE Country = 'France'", "other_db")
    assert first.sql == same_sql.sql and first.name == other_sql.name
    final = dedupe([first, same_sql, other_sql, third, elsewhere])
    assert len(final) == 4
    assert final[("club", first.sql)].name == "get_singer_name_by_country_club"
    assert final[("club", other_sql.sql)].name == "get_singer_name_by_country_club_2"
    assert final[("club", other_sql.sql)].path == "/v1/club/singer/name_by_country_2"
    assert final[("club", third.sql)].name == "get_singer_name_by_country_club_3"
    assert final[("other_db", elsewhere.sql)].name == "get_singer_name_by_country_other_db"
    assert final[("club", other_sql.sql)].params == other_sql.params

    long_db = "a_database_with_a_rather_long_name"
    cut = _endpoint("SELECT Name, Country, Age, Song_Name FROM singer WHERE Country = 'x' ORDER BY Age", long_db)
    cut_other = _endpoint(
        "SELECT Name, Country, Age, Song_Name FROM singer AS T WHERE T.Country = 'x' ORDER BY Age", long_db
    )
    names = [e.name for e in dedupe([cut, cut_other]).values()]
    assert names[1].endswith(f"_{long_db}_2") and len(names[1]) <= MAX_NAME and len(set(names)) == 2


def test_dedupe_merges_questions_that_differ_in_values_and_sort_column(database: sqlite3.Connection) -> None:
    oldest = _endpoint("SELECT Name FROM singer WHERE Country = 'France' ORDER BY Age DESC LIMIT 1")
    last_names = _endpoint("select name from singer where country = 'USA' order by name desc limit 3")
    youngest = _endpoint("SELECT Name FROM singer WHERE Country = 'France' ORDER BY Age ASC LIMIT 1")  # direction
    total = _endpoint("SELECT sum(Age) FROM singer")
    ids = _endpoint("SELECT sum(Singer_ID) FROM singer")  # another aggregated column: the same tool
    final = dedupe([oldest, last_names, youngest, total, ids])
    assert len(final) == 3
    merged = final[endpoint_key(last_names)]
    assert merged is final[endpoint_key(oldest)] and merged.name == oldest.name
    assert endpoint_key(youngest) != endpoint_key(oldest) and final[endpoint_key(youngest)].name != merged.name
    assert final[endpoint_key(ids)] is final[endpoint_key(total)]
    # each question keeps its own gold values, and the merged tool answers both
    assert _gold(oldest) == {"country": "France", "sort_by": "Age", "limit": 1}
    assert _gold(last_names) == {"country": "USA", "sort_by": "Name", "limit": 3}
    spec = rest_spec(merged)
    assert [tuple(r.values()) for r in endpoint_rows(database, spec, _gold(oldest))] == [("Joe",)]
    assert [tuple(r.values()) for r in endpoint_rows(database, spec, _gold(last_names))] == [("Bo",)]
    assert [tuple(r.values()) for r in endpoint_rows(database, rest_spec(total), _gold(ids))] == [(10,)]


# ---------------------------------------------------------------------------------------------------------------
# Every spider-dev question


def _same(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]], ordered: bool) -> bool:
    return a == b if ordered else Counter(map(repr, a)) == Counter(map(repr, b))


@pytest.mark.skipif(not SPIDER_DEV.is_dir(), reason="spider-dev is not checked out next to the repository")
def test_spider_dev_plans_run_and_endpoints_reproduce_gold() -> None:
    data = read_spider(SPIDER_DEV)
    connections = {db: sqlite3.connect(f"file:{path}?mode=ro", uri=True) for db, path in data.databases.items()}
    for conn in connections.values():
        conn.text_factory = lambda raw: raw.decode(errors="replace")
    planned, skipped, endpoints = 0, Counter[str](), []
    for question in data.questions:
        schema, conn = data.schemas[question.db_id], connections[question.db_id]
        plan = plan_query(question, schema)
        if isinstance(plan, Problem):
            assert plan.kind in SKIP_KINDS, plan
            skipped[plan.kind] += 1
        else:
            planned += 1
            cursor = conn.execute(plan.setup_sql)
            assert [d[0] for d in cursor.description] == [c.key for c in plan.columns]
            for sequence in (slot_sequence(plan), sel_sequence(plan)):
                assert [c.label for c in sequence] == labels_of(sequence)
                assert sequence[0].arguments["data_source"] == START
        endpoint = rest_endpoint(question, schema)
        assert isinstance(endpoint, Endpoint), endpoint  # nested and set-operation queries included
        endpoints.append(endpoint)
        assert len(endpoint.name) <= MAX_NAME and NAME_PATTERN.match(endpoint.name)
        gold = conn.execute(question.query).fetchall()
        rows = endpoint_rows(conn, rest_spec(endpoint), _gold(endpoint))
        got = [tuple(r.values()) for r in rows]
        assert _same(got, gold, "order by" in question.query.lower()), (question.query, endpoint.sql)
    assert planned >= 400 and len(endpoints) == len(data.questions), (planned, skipped)
    # the paper's REST: a caller sets values (>= 1 argument per query on average, few without any)
    arguments = [len(e.params) for e in endpoints]
    assert sum(arguments) / len(arguments) >= 1.0 and sum(a == 0 for a in arguments) / len(arguments) < 0.25
    final = dedupe(endpoints)
    unique = {id(e): e for e in final.values()}.values()
    assert len({e.name for e in unique}) == len(unique) == len(final)
    assert len({(e.database, e.path) for e in unique}) == len(unique)
    # the same SQL on two databases stays two tools, each answering from its own database
    count = [e for e in endpoints if e.sql == "SELECT COUNT(*) FROM singer"]
    assert {e.database for e in count} == {"singer", "concert_singer"}
    assert len({final[endpoint_key(e)].name for e in count}) == 2
