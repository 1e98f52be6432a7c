"""The Live API-Bench tool box: SLOT and SEL tools run the operations (``operations.py``) on data held in the
episode's storage (``LiveState``), REST tools call the live server (``rest.py``) over HTTP.

SLOT and SEL tools work on data stored under labels: the hidden initialization step stores the question's joined
table as ``$starting_table_var$``, every storing call stores its result under a new label and returns ``"$LABEL$"``,
and a data-returning call (``retrieve_data``, the SEL getters) hands rows back to the agent.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from undertow.env_core.errors import DataError, InfraError, close_match
from undertow.env_core.liveapi.limits import REST_TIMEOUT_S, query_params, url_problem
from undertow.env_core.liveapi.operations import (
    Data,
    Grouped,
    Table,
    aggregate_data,
    filter_data,
    get_values,
    group_data_by,
    jsonable,
    limit_data,
    retrieve_data,
    select_unique_values,
    sort_data,
    transform_data,
)
from undertow.env_core.liveapi.rest import REQUEST_TIMEOUT, Databases, RestServer, readable_422
from undertow.env_core.liveapi.specs import narrow
from undertow.env_core.liveapi.vocabulary import LABEL_PREFIXES, STARTING_TABLE, aggregation_of
from undertow.env_core.model import Scenario, ToolSpec
from undertow.env_core.text import strip_fence
from undertow.env_core.tools import ToolBox, ToolExecutionError, model_query, value_problem
from undertow.env_core.untrusted import capped

ANSWER_ROWS = 100_000  # a SQL answer returning more rows than this is not compared (a runaway join)

# ---------------------------------------------------------------------------------------------------------------
# Per-episode storage


@dataclass
class LiveState:
    """One episode's stored data by label and the label counter shared by all storing calls."""

    tables: dict[str, Data] = field(default_factory=dict)
    counter: int = 0
    sql_database: str | None = None  # the SQL mode's episode: its final answer is a query run on this database

    def store(self, operation: str, data: Data) -> str:
        """Store a storing call's result under its label (``PREFIX_n``) and return ``"$PREFIX_n$"``."""
        label = f"{LABEL_PREFIXES[operation]}_{self.counter}"
        self.counter += 1
        self.tables[label] = data
        return f"${label}$"

    def resolve(self, source: Any) -> Data:
        """The data a ``data_source`` names: ``"$LABEL$"`` or ``"LABEL"``."""
        if not isinstance(source, str):
            raise ToolExecutionError(
                f"data_source must be a label such as '${STARTING_TABLE}$', not {json.dumps(source)[:100]}",
                error_type="invalid_arguments",
            )
        label = source.strip().strip("$")
        if label in self.tables:
            return self.tables[label]
        known = [f"${name}$" for name in self.tables]
        shown = f"${label}$"
        # a label in the wrong case is the likeliest slip; difflib alone would not see it
        by_case = {name.lower(): name for name in known}
        hint = f"did you mean '{by_case[shown.lower()]}'?" if shown.lower() in by_case else close_match(shown, known)
        message = (
            f"data_source '{capped(shown)}' names no data: no call has produced label '{capped(label)}' yet "
            f"(available: {', '.join(known) if known else 'none'})"
        )
        raise ToolExecutionError(message + (f"; {hint}" if hint else ""))

    def fork(self) -> LiveState:
        # stored data is never mutated, so sharing it is safe
        return LiveState(dict(self.tables), self.counter, self.sql_database)


# ---------------------------------------------------------------------------------------------------------------
# Tool box


class LiveApiToolBox(ToolBox):
    """SLOT and SEL tools over the episode's stored data, REST tools over HTTP to the live server.

    ``databases`` maps db_id to a database file. Each is copied into memory once, on first use, and shared by all
    episodes read-only (nothing writes): the hidden initialization step only reads it."""

    def __init__(self, specs: Sequence[ToolSpec], databases: Mapping[str, Path], *, timeout_s: float = REST_TIMEOUT_S):
        # SLOT's and SEL's lists both hold group_data_by and select_unique_values: equal specs count once
        unique: dict[str, ToolSpec] = {}
        for spec in specs:
            if spec.name in unique and unique[spec.name] == spec:
                continue
            if spec.name in unique:
                raise ValueError(f"duplicate tool name '{spec.name}' (two different specs)")
            unique[spec.name] = spec
        super().__init__(unique.values())
        self.databases = {name: Path(path) for name, path in databases.items()}
        for spec in self.specs.values():
            kind = spec.binding.get("kind")
            if kind not in ("slot", "sel", "rest"):
                raise ValueError(f"tool '{spec.name}' has binding kind {kind!r}: expected slot, sel or rest")
            if kind == "rest" and spec.binding.get("database") not in self.databases:
                raise ValueError(f"tool '{spec.name}' runs on unknown database '{spec.binding.get('database')}'")
        self._sources = Databases(self.databases)
        self.timeout_s = timeout_s  # seconds the REST server lets one query on the model's values run
        self._server: RestServer | None = None
        self._http: httpx.Client | None = None
        self._lock = threading.Lock()

    # -- episodes

    def new_state(self) -> LiveState:
        return LiveState()

    def start(self, state: LiveState, scenario: Scenario) -> None:
        """Run the scenario's hidden initialization step: its setup query's rows become ``$starting_table_var$``."""
        if scenario.metadata.get("mode") == "sql":
            state.sql_database = str(scenario.metadata["database"])
            return
        meta = scenario.metadata.get("liveapi") or {}
        setup = meta.get("setup")
        if not setup:
            return
        try:
            columns, rows = self._sources.query(setup["database"], setup["sql"])
        except (sqlite3.Error, DataError) as exc:
            raise DataError(f"scenario {scenario.id}: the initialization query failed: {exc}") from exc
        if len(set(columns)) != len(columns):
            raise DataError(f"scenario {scenario.id}: the initialization query repeats a column name: {columns}")
        state.tables[STARTING_TABLE] = Table(columns, [dict(zip(columns, row, strict=True)) for row in rows])

    def answer_result(self, state: LiveState, answer: str) -> Any:
        """The SQL mode's final answer run on the question's database (read-only, under the tools' time limit): its
        rows, or SQLite's error; None in the tool modes, whose answer is what the calls returned."""
        if state.sql_database is None:
            return None
        conn, lock = self._sources.get(state.sql_database)
        with lock:
            return model_query(conn, strip_fence(answer), self.timeout_s, ANSWER_ROWS)

    def episode_spec(self, spec: ToolSpec, scenario: Scenario) -> ToolSpec:
        meta = scenario.metadata.get("liveapi") or {}
        return narrow(spec, meta.get("columns") or [])

    def close_state(self, state: LiveState) -> None:
        state.tables.clear()

    def fork_state(self, state: LiveState) -> LiveState:
        return state.fork()

    def argument_error(self, spec: ToolSpec, arguments: dict[str, Any]) -> str | None:
        """REST tools: only the checks no tool can do without (``value_problem``, a URL short enough to send); the
        live server validates the rest, as a real API does. Other tools: the schema too (the base class)."""
        if spec.binding.get("kind") != "rest":
            return super().argument_error(spec, arguments)
        problem = value_problem(arguments)
        if problem is None:
            too_long_url = url_problem(spec, arguments)
            return None if too_long_url is None else f"Invalid arguments for {spec.name}: {too_long_url}"
        where, message = problem
        return f"Invalid arguments for {spec.name}: {message} (at '{where}')"

    # -- calls

    def execute(self, state: LiveState, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        binding = spec.binding
        if binding.get("kind") == "rest":
            return self._rest_call(spec, arguments)
        operation = binding["operation"]
        data = state.resolve(_required(arguments, "data_source"))
        if operation == "get":
            return jsonable(get_values(data, binding["key"]))
        if operation == "get_aggregate":
            return jsonable(get_values(data, _aggregate_key(data, binding["aggregation"])))
        if operation == "retrieve":
            distinct, limit = arguments.get("distinct", False), arguments.get("limit", -1)
            if not isinstance(distinct, bool):
                raise ToolExecutionError(f"distinct must be true or false, not {distinct!r}", "invalid_arguments")
            return jsonable(retrieve_data(data, _key_argument(arguments), distinct, _integer(limit, "limit")))
        result: Data
        if operation == "filter":
            condition = binding.get("condition") or _required(arguments, "condition")
            value = _required(arguments, "value")
            if isinstance(value, list | dict):
                raise ToolExecutionError("value must be a string or a number", "invalid_arguments")
            result = filter_data(data, _text(arguments, "key_name"), condition, value)
        elif operation == "sort":
            ascending = binding["ascending"] if "ascending" in binding else _required(arguments, "ascending")
            if not isinstance(ascending, bool):
                raise ToolExecutionError(f"ascending must be true or false, not {ascending!r}", "invalid_arguments")
            result = sort_data(data, _text(arguments, "key_name"), ascending)
        elif operation == "group":
            result = group_data_by(data, _text(arguments, "key_name"))
        elif operation == "aggregate":
            aggregation = binding.get("aggregation") or _required(arguments, "aggregation_type")
            key = arguments.get("key_name")
            if key is not None and not isinstance(key, str):
                raise ToolExecutionError("key_name must be a string", "invalid_arguments")
            result = aggregate_data(data, aggregation, key)
        elif operation == "transform":
            transform = binding.get("transform") or _required(arguments, "operation_type")
            op_args: dict[str, Any]
            if "transform" in binding:  # SEL: the operation's arguments are the tool's own
                op_args = {k: arguments[k] for k in ("start_index", "end_index", "digits") if k in arguments}
            else:
                op_args = arguments.get("operation_args") or {}
                if not isinstance(op_args, dict):
                    raise ToolExecutionError("operation_args must be an object", "invalid_arguments")
            result = transform_data(data, _text(arguments, "key_name"), transform, op_args)
        elif operation == "unique":
            result = select_unique_values(data, _key_argument(arguments))
        elif operation == "limit":
            result = limit_data(data, _integer(_required(arguments, "n"), "n"))
        else:
            raise ValueError(f"tool '{spec.name}' has unknown operation {operation!r}")
        return state.store(operation, result)

    # -- REST

    def rest_server(self) -> RestServer:
        """The tool box's REST server, started on first use and shared by all episodes (its routes only read)."""
        with self._lock:
            if self._server is None or not self._server.running():
                if self._server is not None:
                    self._server.stop()
                server = RestServer(list(self.specs.values()), self.databases, query_timeout_s=self.timeout_s)
                server.start()
                self._server = server
                self._http = self._http or httpx.Client(timeout=REQUEST_TIMEOUT)
            return self._server

    def _rest_call(self, spec: ToolSpec, args: dict[str, Any]) -> Any:
        server = self.rest_server()
        assert self._http is not None
        try:
            response = self._http.get(server.url + spec.binding["path"], params=query_params(args))
        except httpx.InvalidURL as exc:  # values no URL can carry (argument_error refuses them first)
            raise ToolExecutionError(f"{spec.name}: {exc}", error_type="invalid_arguments") from exc
        except httpx.TransportError as exc:  # the server's fault, not the model's
            raise InfraError(f"the REST server did not answer GET {spec.binding['path']}: {exc}") from exc
        if response.status_code == 422:
            text = readable_422(_json_or_text(response))
            raise ToolExecutionError(f"HTTP 422: {text}", error_type="invalid_arguments")
        if not response.is_success:
            detail = _json_or_text(response)
            if isinstance(detail, Mapping) and "detail" in detail:
                detail = detail["detail"]
            shown = detail if isinstance(detail, str) else json.dumps(detail)
            raise ToolExecutionError(f"HTTP {response.status_code} {response.reason_phrase}: {shown[:500]}")
        return response.json()

    def close(self) -> None:
        """Stop the REST server and release connections."""
        with self._lock:
            if self._server is not None:
                self._server.stop()
                self._server = None
            if self._http is not None:
                self._http.close()
                self._http = None
        self._sources.close()


def _aggregate_key(data: Data, aggregation: str) -> str:
    """The one key of ``data`` that holds an ``aggregation`` aggregate (``count``, ``count_<key>``, ``mean_<key>``):
    what a SEL aggregate getter reads. None or several is the caller's error, with the keys named."""
    if isinstance(data, Grouped) and data.groups:
        computed = [key for key in data.groups[0].values if key in data.columns]
    else:
        computed = list(data.columns)
    found = [key for key in computed if aggregation_of(key) == aggregation]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ToolExecutionError(
            f"the data holds no {aggregation} aggregate: call aggregate_data_{aggregation} on it first"
        )
    raise ToolExecutionError(f"the data holds several {aggregation} aggregates ({', '.join(found)}): ambiguous")


def _json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def _required(args: Mapping[str, Any], name: str) -> Any:
    if name not in args:
        raise ToolExecutionError(f"missing required argument '{name}'", error_type="invalid_arguments")
    return args[name]


def _text(args: Mapping[str, Any], name: str) -> str:
    value = _required(args, name)
    if not isinstance(value, str):
        raise ToolExecutionError(f"{name} must be a string, not {json.dumps(value)[:100]}", "invalid_arguments")
    return value


def _key_argument(args: Mapping[str, Any]) -> str | list[str]:
    value = _required(args, "key_name")
    if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return value
    raise ToolExecutionError("key_name must be a key or a list of keys", error_type="invalid_arguments")


def _integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolExecutionError(f"{name} must be an integer, not {json.dumps(value)[:100]}", "invalid_arguments")
    return value
