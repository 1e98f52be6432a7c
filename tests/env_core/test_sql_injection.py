"""Tool arguments reach SQL only as bound parameters: an injection string in an argument is inert (issue 14).

Every family whose tools execute SQL at episode time gets its test here: smoke (``SqliteToolBox.run_sql``) and
sqlfuncs (``SqlFunctionToolBox``: the same ``run_sql`` plus its "Did you mean" lookup). The toy family of
``tests/toy_family`` answers from a Python dict and runs no SQL.

Each SQL-executing tool of a real suite is called through ``Environment.step`` with injection strings in every
string argument (and in the string items of every array argument). The call must return exactly the rows the same
query gives with that string as a quoted SQL literal (computed independently, on a fresh read-only connection to
the suite's database file), or a clean tool error; afterwards every table of the episode's own database copy and
of the suite's shared copy still exists with the same row count, and the database files are byte for byte the
same.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import step
from helpers.spider import make_spider

from undertow.env_core.environment import Environment
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import PlannedCall, ToolSpec
from undertow.env_core.search import ToolAccess
from undertow.env_core.sqlfuncs.build import build_suite, write_build
from undertow.env_core.suites import Suite, SuiteRef, load_suite, suite_folder
from undertow.env_core.tools import MAIN, SqliteToolBox

# The classic shapes: close the literal and start a new statement, widen a WHERE, append a UNION. The DROP and
# DELETE payloads name a real table of the tool's database (see ``payloads``), so that running them would show.
GENERIC = [
    "1 OR 1=1",
    "x' OR '1'='1",
    "x' OR 1=1 --",
    "x' UNION SELECT name, sql, type, tbl_name FROM sqlite_master --",
    'x" OR "1"="1',
    "x'); ATTACH DATABASE '/tmp/pwned.sqlite' AS pwned; --",
]


def payloads(table: str) -> list[str]:
    return [f"'; DROP TABLE {table}; --", f"x'; DELETE FROM {table}; --", f"Robert'); DROP TABLE {table};--", *GENERIC]


# ---------------------------------------------------------------------------------------------------------------
# Helpers: the suite's database files, tables and counts, and the literal-match oracle


def database_files(folder: Path) -> dict[str, Path]:
    """Database name -> file of a built suite folder (``suite.json`` lists them)."""
    meta = json.loads((folder / "suite.json").read_text())
    return {name: folder / relative for name, relative in meta["databases"].items()}


def digests(files: dict[str, Path]) -> dict[str, str]:
    return {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in files.items()}


def table_counts(conn: sqlite3.Connection) -> dict[str, int]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {name: conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0] for name in names}


def file_counts(path: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return table_counts(conn)


def literal(value: Any) -> str:
    """``value`` as SQLite source text, the way a careful person would quote it by hand."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):  # the tool box passes arrays as JSON text (read with json_each)
        value = json.dumps(value)
    return "'" + str(value).replace("'", "''") + "'"


def literal_rows(database: Path, spec: ToolSpec, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows the tool's query returns when every argument is written into it as a quoted literal: what a
    literal match gives. Independent of the tool box: a fresh read-only connection to the file, no binding."""
    sql = spec.binding["sql"]
    for name in spec.parameters.get("properties", {}):
        # a function, not a replacement string: backslashes in the literal must stay as they are
        text = literal(arguments.get(name))
        sql = re.sub(rf"(?<![\w:]):{re.escape(name)}\b", _constant(text), sql)
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
        cursor = conn.execute(sql)
        columns = [d[0] for d in cursor.description or ()]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _constant(text: str) -> Callable[[re.Match[str]], str]:
    return lambda _: text


def string_parameters(spec: ToolSpec) -> list[str]:
    """Arguments a string can go into: string parameters, and arrays whose items may be strings."""
    names = []
    for name, schema in spec.parameters.get("properties", {}).items():
        items = schema.get("items", {}).get("type") if schema.get("type") == "array" else None
        if schema.get("type") == "string" or (schema.get("type") == "array" and items in (None, "string")):
            names.append(name)
    return names


def neutral(schema: dict[str, Any]) -> Any:
    """A valid value for a non-string parameter (the injection goes into the string ones)."""
    return {"integer": 1, "number": 1.5, "boolean": True, "array": [1]}.get(str(schema.get("type")), 1)


def base_arguments(suite: Suite, spec: ToolSpec) -> dict[str, Any]:
    """Arguments for ``spec``: a gold plan's literal values where one calls the tool, else neutral values."""
    for scenario in suite.scenarios:
        for plan in scenario.gold.plans:
            for call in plan:
                if call.tool == spec.name and _literal_call(call):
                    return dict(call.arguments)
    return {name: neutral(schema) for name, schema in spec.parameters.get("properties", {}).items()}


def _literal_call(call: PlannedCall) -> bool:
    return all(isinstance(v, str | int | float | list) for v in call.arguments.values())


def injected(spec: ToolSpec, arguments: dict[str, Any], payload: str) -> dict[str, Any]:
    """``arguments`` with ``payload`` in every string argument (arrays: as their only item)."""
    properties = spec.parameters.get("properties", {})
    out = dict(arguments)
    for name in string_parameters(spec):
        out[name] = [payload] if properties[name].get("type") == "array" else payload
    return out


def every_tool_environment(suite: Suite) -> Environment:
    """A clean episode of the suite's first scenario in which every tool of the suite is listed (closed access
    with the rest of the universe as distractors), so that each one can be called."""
    access = ToolAccess(distractors=len(suite.toolbox.specs))
    env = suite.environment(suite.scenarios[0], 0, PRESET_SETTINGS["clean"], access)
    env.reset()
    assert {spec.name for spec in env.tools()} == set(suite.toolbox.specs)
    return env


def episode_connections(env: Environment) -> dict[str, sqlite3.Connection]:
    # The episode's private database copies: where a query that ran injected SQL would have written
    state = env._state
    assert state is not None
    return {name: state.connection(name) for name in env.toolbox.sources}  # type: ignore[attr-defined]


def check_injections_are_inert(suite: Suite, folder: Path) -> int:
    """The whole check for one suite; returns how many injected calls ran (for the caller to assert on)."""
    toolbox = suite.toolbox
    assert isinstance(toolbox, SqliteToolBox)
    files = database_files(folder)
    before_bytes = digests(files)
    before_files = {name: file_counts(path) for name, path in files.items()}
    before_shared = {name: table_counts(conn) for name, conn in toolbox.sources.items()}
    assert all(before_files.values()), "every database holds tables"

    env = every_tool_environment(suite)
    try:
        before_episode = {name: table_counts(conn) for name, conn in episode_connections(env).items()}
        calls = 0
        for spec in toolbox.specs.values():
            if not string_parameters(spec):
                continue
            database = spec.binding.get("database", MAIN)
            first_table = sorted(before_files[database])[0]
            base = base_arguments(suite, spec)
            for payload in payloads(first_table):
                arguments = injected(spec, base, payload)
                observation = step(env, spec.name, arguments)
                calls += 1
                where = f"{spec.name}({arguments!r})"
                if observation.ok:
                    expected = literal_rows(files[database], spec, arguments)
                    assert observation.result == expected, where
                else:  # a clean error the model reads, never a crash of the harness
                    assert observation.error is not None, where
                    assert observation.error.type in ("tool_error", "invalid_arguments"), where
                    assert spec.name in observation.error.message, where
        # Nothing changed anywhere: the episode's copies, the suite's shared copies, the files
        assert {name: table_counts(conn) for name, conn in episode_connections(env).items()} == before_episode
    finally:
        env.close()
    assert {name: table_counts(conn) for name, conn in toolbox.sources.items()} == before_shared
    assert {name: file_counts(path) for name, path in files.items()} == before_files
    assert digests(files) == before_bytes
    return calls


# ---------------------------------------------------------------------------------------------------------------
# The families


def test_smoke_tools_bind_injection_strings(smoke_ref: SuiteRef, smoke: Suite) -> None:
    string_tools = [s for s in smoke.toolbox.specs.values() if string_parameters(s)]
    assert len(string_tools) >= 8  # the smoke tools that take names and cities
    calls = check_injections_are_inert(smoke, suite_folder(smoke_ref))
    assert calls == len(string_tools) * len(payloads("t"))


@pytest.fixture(scope="module")
def sqlfuncs_suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Suite, Path]]:
    """A real sqlfuncs suite compiled from the generated Spider folder (two databases, typed and list
    arguments)."""
    spider = make_spider(tmp_path_factory.mktemp("spider"))
    folder = write_build(build_suite(spider, seed=0, augment=1), tmp_path_factory.mktemp("sqlfuncs") / "suite")
    yield load_suite(folder), folder


def test_sqlfuncs_tools_bind_injection_strings(sqlfuncs_suite: tuple[Suite, Path]) -> None:
    suite, folder = sqlfuncs_suite
    kinds = {param["type"] for spec in suite.toolbox.specs.values() for param in spec.binding["params"]}
    assert {"str", "list"} <= kinds  # both ways a string reaches SQL: a scalar, and an item of json_each
    string_tools = [s for s in suite.toolbox.specs.values() if string_parameters(s)]
    assert len({s.binding["database"] for s in string_tools}) == 2  # both databases are attacked
    calls = check_injections_are_inert(suite, folder)
    assert calls == len(string_tools) * len(payloads("t"))


def test_sqlfuncs_hint_names_the_injection_as_an_unknown_value(sqlfuncs_suite: tuple[Suite, Path]) -> None:
    """The "Did you mean" lookup runs its own SQL: an injected value only shows up, quoted, in the hint."""
    suite, _ = sqlfuncs_suite
    spec = next(s for s in suite.toolbox.specs.values() if any(p["type"] == "str" for p in s.binding["params"]))
    payload = "x' OR '1'='1"
    env = every_tool_environment(suite)
    try:
        observation = step(env, spec.name, injected(spec, base_arguments(suite, spec), payload))
    finally:
        env.close()
    assert observation.ok, observation.error
    # no row matched: an empty result, or one row of NULLs (an aggregate over nothing)
    assert all(value is None for row in observation.result for value in row.values())
    assert any(f"value `{payload}`" in note for note in observation.notes)


def test_the_oracle_tells_a_literal_from_an_executed_injection(smoke_ref: SuiteRef, smoke: Suite) -> None:
    """Control: the literal-match oracle above would catch a tool box that formatted arguments into its SQL."""
    spec = smoke.toolbox.specs["find_department_ids_by_city"]
    database = database_files(suite_folder(smoke_ref))[MAIN]
    payload = "x' OR '1'='1"
    formatted = spec.binding["sql"].replace(":city", f"'{payload}'")  # the bug binding prevents
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
        leaked = conn.execute(formatted).fetchall()
    assert leaked, "the formatted query returns every department"
    assert literal_rows(database, spec, {"city": payload}) == []
