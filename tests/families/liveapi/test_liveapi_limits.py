"""Live API-Bench calls on hostile values (issue 29): a LIKE pattern or a number text that made the matcher
backtrack for minutes, a REST argument too long for a URL (an infrastructure error before), and a REST query that
runs too long. Each is a tool error the model reads, and comes back within seconds."""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import step
from hypothesis import given, settings
from hypothesis import strategies as st
from liveapi_concert import COUNTRY, concert_endpoint, concert_scenario

from undertow.env_core.environment import Environment
from undertow.env_core.liveapi.endpoints import EndpointParam
from undertow.env_core.liveapi.limits import MAX_URL, like
from undertow.env_core.liveapi.operations import Table, filter_data
from undertow.env_core.liveapi.specs import rest_spec
from undertow.env_core.liveapi.toolbox import LiveApiToolBox
from undertow.env_core.model import Observation
from undertow.env_core.tools import MAX_STRING, ToolExecutionError

ROWS = 2000
FAST = 10.0  # seconds: each call below took 30 s to hours before; now milliseconds


def reference_like(value: str, pattern: str) -> bool:
    """The matcher this module replaced: a regex with ``.*`` per ``%`` (right, but exponential)."""
    parts = [".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern]
    return re.fullmatch("".join(parts), value, re.DOTALL) is not None


@settings(max_examples=300, deadline=None, database=None)
@given(value=st.text("ab%_\n", max_size=8), pattern=st.text("ab%_\n", max_size=7))
def test_like_agrees_with_the_regex_it_replaced(value: str, pattern: str) -> None:
    assert like(value, pattern) == reference_like(value, pattern)


def timed(call: Any, *args: Any) -> Any:
    started = time.monotonic()
    result = call(*args)
    assert time.monotonic() - started < FAST
    return result


def test_a_pattern_of_many_percent_signs_is_quick() -> None:
    table = Table(["name"], [{"name": f"Joe Sharp and a long name {i}"} for i in range(ROWS)])
    # 8 % took 3 s on one row with the regex; 36 would not have finished
    assert timed(filter_data, table, "name", "like", "%" * 36 + "#").rows == []
    assert len(timed(filter_data, table, "name", "like", "%" * 36).rows) == ROWS
    # the names ending in 1, 1x, 1xx and 1xxx
    assert len(timed(filter_data, table, "name", "like", "%j%" + "%_" * 15 + "%name 1%").rows) == 1111


def test_a_long_number_text_is_read_in_one_pass() -> None:
    # numeric affinity reads the text once per row: \d+\.?\d* backtracked quadratically, a quarter second a row
    table = Table(["score"], [{"score": i} for i in range(ROWS)])
    assert timed(filter_data, table, "score", "equal_to", "1" * 3990 + "x").rows == []
    assert timed(filter_data, table, "score", "less_than", "1" * 3990 + "x").rows == table.rows  # numbers < text


# ---------------------------------------------------------------------------------------------------------------
# REST, through the live server

NAMES = concert_endpoint(
    "get_singer_names",
    "/v1/concert_singer/singer/names_by_country",
    "Get singer names for a given country",
    "SELECT Name FROM singer WHERE Country = :country",
    [COUNTRY],
)
COUNT = concert_endpoint(  # a query that runs as long as its argument says
    "count_to",
    "/v1/concert_singer/count_to",
    "Count from 1 to n",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < :n) SELECT count(*) AS n FROM c",
    [EndpointParam("n", "integer", "Where to stop", "N", 10)],
)
LIMIT_S = 0.5


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Environment]:
    path = tmp_path_factory.mktemp("liveapi-limits") / "concert_singer.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE singer (Name TEXT, Country TEXT)")
        db.executemany("INSERT INTO singer VALUES (?, ?)", [("Joe Sharp", "Netherlands"), ("Rose White", "France")])
    box = LiveApiToolBox([rest_spec(NAMES), rest_spec(COUNT)], {"concert_singer": Path(path)}, timeout_s=LIMIT_S)
    env = Environment(concert_scenario([NAMES.name, COUNT.name], formulation="rest"), box)
    env.reset()
    yield env
    env.close()
    box.close()


def call(env: Environment, tool: str, **arguments: Any) -> Observation:
    started = time.monotonic()
    observation = step(env, tool, arguments)
    assert time.monotonic() - started < FAST
    assert observation.error is None or len(observation.error.message) < 600
    return observation


def test_a_rest_argument_too_long_for_a_url_is_refused(environment: Environment) -> None:
    assert call(environment, NAMES.name, country="France").result == [{"Name": "Rose White"}]
    # 70,000 characters made httpx raise InvalidURL: an infrastructure error that ended the episode
    huge = call(environment, NAMES.name, country="x" * 70_000)
    assert huge.error is not None and huge.error.type == "invalid_arguments"
    assert huge.error.message.startswith(f"Invalid arguments for {NAMES.name}: a string of ")
    assert huge.error.message.endswith(f" characters is longer than the {MAX_STRING} allowed (at 'country')")
    # under the string cap, but 9 URL characters each once encoded
    euros = call(environment, NAMES.name, country="€" * 1000)
    assert euros.error is not None and euros.error.type == "invalid_arguments"
    assert euros.error.message == (
        f"Invalid arguments for {NAMES.name}: the request URL would be 9051 characters long, more than the "
        f"{MAX_URL} the API accepts; the longest value is 'country'"
    )
    assert call(environment, NAMES.name, country="France").ok  # the episode goes on


def test_a_url_httpx_cannot_build_is_a_tool_error_even_unchecked(environment: Environment) -> None:
    box = environment.toolbox
    with pytest.raises(ToolExecutionError) as info:  # execute without argument_error, as a caller that skips it
        box.execute(None, box.specs[NAMES.name], {"country": "x" * 70_000})
    assert info.value.error_type == "invalid_arguments"
    assert str(info.value).startswith(f"{NAMES.name}: URL component 'query' too long")


def test_a_rest_query_past_the_time_limit_is_a_tool_error(environment: Environment) -> None:
    slow = call(environment, COUNT.name, n=2**62)
    assert slow.error is not None
    assert (slow.error.type, slow.error.message) == (
        "tool_error",
        f"HTTP 500 Internal Server Error: query failed: the query ran past the {LIMIT_S:g} s time limit and was "
        "stopped",
    )
    assert call(environment, COUNT.name, n=100).result == [{"n": 100}]
