"""Live API-Bench tools: the data operations behind SLOT and SEL, their specs, per-episode storage, and the live
REST server behind REST.

SLOT and SEL tools work on data held in the episode's storage (``LiveState``) under labels: the hidden
initialization step stores the question's joined table as ``$starting_table_var$``, every storing call stores its
result under a new label and returns ``"$LABEL$"``, and a data-returning call (``retrieve_data``, the SEL getters)
hands rows back to the agent. The operations follow SQLite's semantics (comparison, ordering, grouping,
aggregation), so a gold sequence compiled from a SQL query returns what the query returns.

REST tools are GET endpoints of a FastAPI app (``rest_app``) served by uvicorn in a child process
(``RestServer``); the tool box calls them over HTTP, so argument errors come back as a real API's HTTP 422.

Run as ``python -m undertow.env_core.liveapi.tools serve ...`` this module is that child process.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from undertow.env_core.errors import DataError, InfraError, close_match
from undertow.env_core.liveapi.compile import (
    AGGREGATIONS,
    CONDITIONS,
    LABEL_PREFIXES,
    SLOT_TOOLS,
    STARTING_TABLE,
    TRANSFORMS,
    Column,
    Endpoint,
    aggregate_output,
    getter_name,
)
from undertow.env_core.liveapi.limits import REST_TIMEOUT_S, like, query_params, url_problem
from undertow.env_core.model import Scenario, ToolSpec
from undertow.env_core.tools import ToolBox, ToolExecutionError, memory_copy, time_limit, value_problem
from undertow.env_core.untrusted import capped

if TYPE_CHECKING:  # imported where used: the tool box needs FastAPI only in the server process
    from fastapi import FastAPI

# ---------------------------------------------------------------------------------------------------------------
# Data


@dataclass
class Table:
    """Rows of named columns (each row a record). Never mutated once stored: operations build new tables."""

    columns: list[str]
    rows: list[dict[str, Any]]


@dataclass
class Group:
    """The rows sharing one grouping value, plus the aggregates computed over them (``values``).

    ``witness`` is the row the last min or max aggregate found: SQLite takes a bare (neither grouped nor
    aggregated) column from that row, and from the group's first row when there is none. ``position`` is the
    group's place in GROUP BY order, which settles ties when groups are sorted."""

    rows: list[dict[str, Any]]
    values: dict[str, Any] = field(default_factory=dict)
    witness: dict[str, Any] | None = None
    position: int = 0


@dataclass
class Grouped:
    """Grouped data. ``columns`` holds the rows' columns followed by the aggregate outputs computed so far: every
    key a later call may name."""

    columns: list[str]
    groups: list[Group]
    order: tuple[tuple[str, bool], ...] = ()  # the sorts applied so far, (key, ascending), most significant first


Data = Table | Grouped

DATA_OPERATIONS = ("retrieve", "get")  # operations that return data instead of storing it
AGGREGATE_KEY_OPERATIONS = ("sort", "retrieve", "unique")  # operations that may name an aggregate output

# ---------------------------------------------------------------------------------------------------------------
# SQLite semantics

# A text SQLite's numeric affinity turns into a number: an integer or real literal, blanks around it allowed (one
# parse of each: \d+\.?\d* would backtrack quadratically over a long run of digits).
_NUMERIC_TEXT = re.compile(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*")
_INTEGER_TEXT = re.compile(r"\s*[+-]?\d+\s*")
_NUMERIC_PREFIX = re.compile(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INT64 = (-(2**63), 2**63 - 1)


def _real_text(value: float) -> str:
    """A REAL as SQLite writes it as text (``%!.15g``: ``100.0``, ``0.3``, ``1.0e+20``)."""
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    text = f"{value:.15g}"
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent}" if exponent else mantissa


def sqlite_text(value: Any) -> str:
    """A non-NULL value converted to text the way SQLite converts it (for LIKE, SUBSTR, LOWER, text comparison)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _real_text(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _numeric_text(text: str) -> int | float | None:
    """The number a well-formed numeric text stands for under numeric affinity, else None."""
    if not _NUMERIC_TEXT.fullmatch(text):
        return None
    if _INTEGER_TEXT.fullmatch(text):
        number = int(text)
        if _INT64[0] <= number <= _INT64[1]:
            return number
    return float(text)


def _real(value: Any) -> float:
    """A value read as a double (SQLite's ``sqlite3_value_double``: the numeric prefix of a text, else 0.0)."""
    if isinstance(value, int | float):
        return float(value)
    match = _NUMERIC_PREFIX.match(sqlite_text(value))
    return float(match.group()) if match else 0.0


def _rank(value: Any) -> int:
    """SQLite's storage-class order: NULL < numbers < text < blob."""
    if value is None:
        return 0
    if isinstance(value, int | float):
        return 1
    if isinstance(value, str):
        return 2
    return 3


def sort_key(value: Any) -> tuple[int, Any]:
    """A key that orders values as SQLite's ORDER BY does (BINARY collation for text)."""
    return (_rank(value), value if value is not None else 0)


def compare(value: Any, argument: Any) -> int | None:
    """SQLite's comparison of a column value with a literal: -1, 0 or 1, or None when either side is NULL.

    A text literal that reads as a number is compared as one with a numeric value (numeric affinity); a numeric
    literal is compared as text with a text value (text affinity)."""
    if value is None or argument is None:
        return None
    if isinstance(argument, bool):
        argument = int(argument)
    if isinstance(value, int | float):
        if isinstance(argument, str):
            number = _numeric_text(argument)
            if number is None:
                return -1  # numbers sort before text
            argument = number
        elif isinstance(argument, bytes):
            return -1
    elif isinstance(value, str):
        if isinstance(argument, int | float):
            argument = sqlite_text(argument)
        elif isinstance(argument, bytes):
            return -1
    elif not isinstance(argument, bytes):  # a blob sorts after everything else
        return 1
    return int(value > argument) - int(value < argument)


def _ascii_lower(text: str) -> str:
    # SQLite's LIKE and LOWER fold ASCII letters only
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def matches(value: Any, condition: str, argument: Any) -> bool:
    """Whether a value satisfies a filter condition (a NULL on either side never does, as in SQL)."""
    if value is None or argument is None:
        return False
    if condition == "contains":
        return _ascii_lower(sqlite_text(argument)) in _ascii_lower(sqlite_text(value))
    if condition == "like":
        return like(_ascii_lower(sqlite_text(value)), _ascii_lower(sqlite_text(argument)))
    order = compare(value, argument)
    assert order is not None
    if condition == "equal_to":
        return order == 0
    if condition == "not_equal_to":
        return order != 0
    if condition == "greater_than":
        return order > 0
    if condition == "less_than":
        return order < 0
    if condition == "greater_than_equal_to":
        return order >= 0
    if condition == "less_than_equal_to":
        return order <= 0
    raise ToolExecutionError(f"unknown condition '{condition}': use one of {', '.join(CONDITIONS)}")


def _sum_number(value: Any) -> tuple[int | float, bool]:
    """A value as SUM reads it, and whether it is exact (an integer)."""
    if isinstance(value, int):
        return value, True
    if isinstance(value, float):
        return value, False
    if isinstance(value, str):
        number = _numeric_text(value)
        if number is not None:
            return number, isinstance(number, int)
    return _real(value), False


def aggregate_values(rows: Sequence[Mapping[str, Any]], aggregation: str, key: str | None) -> Any:
    """One aggregate over rows, as SQLite computes it (NULLs skipped; over no values: count 0, the rest NULL)."""
    if aggregation == "count" and key is None:
        return len(rows)
    if key is None:
        raise ToolExecutionError(f"aggregation '{aggregation}' needs a key_name: only count can count rows")
    values = [row.get(key) for row in rows]
    values = [v for v in values if v is not None]
    if aggregation == "count":
        return len(values)
    if aggregation == "count_distinct":
        return len(set(values))  # Python's equality is SQLite's here: 1 == 1.0, text is case-sensitive
    if aggregation in ("min", "max"):
        if not values:
            return None
        return min(values, key=sort_key) if aggregation == "min" else max(values, key=sort_key)
    if aggregation in ("sum", "mean"):
        if not values:
            return None
        numbers = [_sum_number(v) for v in values]
        # SQLite adds doubles in row order (approximate result) alongside an exact integer sum
        total = 0.0
        for number, _ in numbers:
            total += float(number)
        if aggregation == "mean":
            return total / len(numbers)
        if all(exact for _, exact in numbers):
            exact_total = sum(int(n) for n, _ in numbers)
            if not _INT64[0] <= exact_total <= _INT64[1]:
                raise ToolExecutionError("sum failed: integer overflow")
            return exact_total
        return total
    raise ToolExecutionError(f"unknown aggregation '{aggregation}': use one of {', '.join(AGGREGATIONS)}")


def _sqlite_round(value: float, digits: int) -> float:
    digits = max(0, min(digits, 30))
    if digits == 0 and abs(value) < 2**63 - 1:
        whole = float(int(abs(value) + 0.5))  # halves away from zero, as SQLite's ROUND
        return math.copysign(whole, value) if whole else 0.0
    if not math.isfinite(value):
        return value
    # SQLite prints the value with the wanted digits and reads it back: decimal rounding, halves away from zero
    return float(Decimal(repr(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def transform_value(value: Any, operation: str, args: Mapping[str, Any]) -> Any:
    """One value changed by a transform (NULL stays NULL; text functions read numbers as their text)."""
    if value is None:
        return None
    if operation == "substring":
        return sqlite_text(value)[args["start_index"] : args.get("end_index")]
    if operation == "lower":
        return _ascii_lower(sqlite_text(value))
    if operation == "upper":
        return sqlite_text(value).translate(_ASCII_UPPER)
    if operation == "round":
        return _sqlite_round(_real(value), int(args.get("digits", 0)))
    raise ToolExecutionError(f"unknown operation_type '{operation}': use one of {', '.join(TRANSFORMS)}")


# ---------------------------------------------------------------------------------------------------------------
# Operations (pure: each returns new data and leaves its input as it was)


def check_key(data: Data, key: str) -> None:
    """Raise a readable error when ``key`` is not a key of ``data`` (an aggregate output before aggregating)."""
    if key in data.columns:
        return
    hint = close_match(key, data.columns)
    kind = "grouped data" if isinstance(data, Grouped) else "table"
    raise ToolExecutionError(
        f"key '{key}' is not a key of this {kind}; its keys are: {', '.join(data.columns)}"
        + (f"; {hint}" if hint else "")
    )


def group_value(group: Group, key: str) -> Any:
    """A group's value for a key: its aggregate if it has one by that name, else the value in the row of its last
    min / max aggregate, else in its first row (None for a group without rows), as SQLite reads a bare column."""
    if key in group.values:
        return group.values[key]
    if group.witness is not None:
        return group.witness.get(key)
    return group.rows[0].get(key) if group.rows else None


def filter_data(data: Data, key: str, condition: str, value: Any) -> Data:
    """Rows whose ``key`` satisfies the condition. Grouped data keeps the matching rows of each group and drops the
    groups left empty; filtering on an aggregate output keeps the groups whose aggregate matches."""
    check_key(data, key)
    if condition not in CONDITIONS:
        raise ToolExecutionError(f"unknown condition '{condition}': use one of {', '.join(CONDITIONS)}")
    if isinstance(data, Table):
        return Table(list(data.columns), [row for row in data.rows if matches(row.get(key), condition, value)])
    groups: list[Group] = []
    for group in data.groups:
        if key in group.values:
            if matches(group.values[key], condition, value):
                groups.append(group)
            continue
        rows = [row for row in group.rows if matches(row.get(key), condition, value)]
        if rows:
            witness = group.witness if any(row is group.witness for row in rows) else None
            groups.append(replace(group, rows=rows, witness=witness))
    return replace(data, columns=list(data.columns), groups=groups)


def sort_data(data: Data, key: str, ascending: bool = True) -> Data:
    """Rows (or groups, by their value for ``key``) in SQLite order: NULL, numbers, text. Stable, so sorting by
    several keys is done last key first; descending keeps the order of equal rows too.

    Groups are ordered as SQLite orders an aggregate query's output: by this key, then by the keys of earlier sorts
    (the ORDER BY built so far), ties in GROUP BY order, except that with a single descending key SQLite lists
    tied groups last one first."""
    check_key(data, key)
    if isinstance(data, Table):
        rows = sorted(data.rows, key=lambda row: sort_key(row.get(key)), reverse=not ascending)
        return Table(list(data.columns), rows)
    terms = ((key, ascending), *data.order)
    groups = sorted(data.groups, key=lambda group: group.position)
    if len(terms) == 1 and not ascending:
        groups.reverse()
    for term, up in reversed(terms):
        groups = sorted(groups, key=_group_sort_key(term), reverse=not up)
    return Grouped(list(data.columns), groups, terms)


def _group_sort_key(key: str) -> Callable[[Group], tuple[int, Any]]:
    return lambda group: sort_key(group_value(group, key))


def group_data_by(data: Data, key: str) -> Grouped:
    """A table's rows grouped by ``key``, groups in SQLite GROUP BY order (by value, NULL first), rows of a group
    in table order."""
    check_key(data, key)
    if isinstance(data, Grouped):
        raise ToolExecutionError("the data is already grouped: group_data_by works on a table")
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in data.rows:
        groups.setdefault(row.get(key), []).append(row)  # 1 and 1.0 share a group, as in SQLite
    ordered = sorted(groups.items(), key=lambda item: sort_key(item[0]))
    return Grouped(list(data.columns), [Group(rows, position=n) for n, (_, rows) in enumerate(ordered)])


def aggregate_data(data: Data, aggregation: str, key: str | None = None) -> Grouped:
    """An aggregate per group, stored under ``aggregate_output(aggregation, key)``. A table is one group (SQL's
    aggregate without GROUP BY), even without rows."""
    if aggregation not in AGGREGATIONS:
        raise ToolExecutionError(f"unknown aggregation_type '{aggregation}': use one of {', '.join(AGGREGATIONS)}")
    if key is not None:
        check_key(data, key)
    elif aggregation != "count":
        raise ToolExecutionError(f"aggregation_type '{aggregation}' needs a key_name: only count can count rows")
    output = aggregate_output(aggregation, key)
    columns = list(data.columns) + ([output] if output not in data.columns else [])
    source = [Group(data.rows)] if isinstance(data, Table) else data.groups
    groups = []
    for group in source:
        if key is not None and key in group.values:
            raise ToolExecutionError(f"key '{key}' is an aggregate already: aggregate a key of the rows")
        value = aggregate_values(group.rows, aggregation, key)
        witness = group.witness
        if aggregation in ("min", "max") and key is not None and value is not None:
            # the first row holding the extreme, as SQLite's min() / max() keep the first they meet
            present = [row for row in group.rows if row.get(key) is not None]
            pick = min if aggregation == "min" else max
            witness = pick(present, key=lambda row: sort_key(row[key]))
        groups.append(replace(group, values={**group.values, output: value}, witness=witness))
    return Grouped(columns, groups, data.order if isinstance(data, Grouped) else ())


def _transform_args(operation: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The operation's arguments, checked: substring needs integer start_index (end_index optional), round an
    integer digits (default 0)."""
    wanted = {"substring": ("start_index", "end_index"), "round": ("digits",)}.get(operation, ())
    unknown = sorted(set(args) - set(wanted))
    if unknown:
        takes = f"takes {' and '.join(wanted)}" if wanted else "takes no arguments"
        raise ToolExecutionError(f"operation '{operation}' {takes}, not {', '.join(unknown)}")
    for name, value in args.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ToolExecutionError(f"{name} must be an integer, not {value!r}")
    if operation == "substring" and args.get("start_index") is None:
        raise ToolExecutionError("operation 'substring' needs start_index (0-based; end_index excluded)")
    return dict(args)


def transform_data(data: Data, key: str, operation: str, args: Mapping[str, Any] | None = None) -> Data:
    """The data with ``key``'s values changed in place: substring (0-based, end excluded), lower, upper, round."""
    check_key(data, key)
    if operation not in TRANSFORMS:
        raise ToolExecutionError(f"unknown operation_type '{operation}': use one of {', '.join(TRANSFORMS)}")
    checked = _transform_args(operation, args or {})

    def changed(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, key: transform_value(row.get(key), operation, checked)}

    if isinstance(data, Table):
        return Table(list(data.columns), [changed(row) for row in data.rows])
    groups = []
    for group in data.groups:
        if key in group.values:
            groups.append(replace(group, values=changed(group.values)))
        else:
            witness = changed(group.witness) if group.witness is not None else None
            groups.append(replace(group, rows=[changed(row) for row in group.rows], witness=witness))
    return replace(data, columns=list(data.columns), groups=groups)


def _key_list(keys: str | Sequence[str]) -> list[str]:
    listed = [keys] if isinstance(keys, str) else list(keys)
    if not listed:
        raise ToolExecutionError("key_name names no key: give a key or a non-empty list of keys")
    return listed


def records(data: Data, keys: str | Sequence[str]) -> list[dict[str, Any]]:
    """One record per row (or per group) holding the values of ``keys``."""
    listed = _key_list(keys)
    for key in listed:
        check_key(data, key)
    if isinstance(data, Table):
        return [{key: row.get(key) for key in listed} for row in data.rows]
    return [{key: group_value(group, key) for key in listed} for group in data.groups]


def _distinct(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for row in rows:
        # the type rank keeps text "1" apart from the number 1 (1 and 1.0 stay together, as in SQLite)
        identity = tuple((_rank(v), v) for v in row.values())
        if identity not in seen:
            seen.add(identity)
            kept.append(row)
    return kept


def select_unique_values(data: Data, keys: str | Sequence[str]) -> Table:
    """A table of the distinct combinations of ``keys``' values, in order of first appearance."""
    listed = _key_list(keys)
    columns = list(dict.fromkeys(listed))
    return Table(columns, _distinct(records(data, columns)))


def retrieve_data(
    data: Data, keys: str | Sequence[str], distinct: bool = False, limit: int = -1
) -> list[dict[str, Any]]:
    """The values of ``keys`` as records (one per row or group); repeated records dropped when ``distinct``, then
    the first ``limit`` kept (a negative limit keeps all, as SQLite's LIMIT -1)."""
    rows = records(data, keys)
    if distinct:
        rows = _distinct(rows)
    return rows if limit < 0 else rows[:limit]


def get_values(data: Data, key: str) -> list[Any]:
    """The values of one key: one per row of a table, one per group of grouped data."""
    return [row[key] for row in records(data, key)]


def limit_data(data: Data, n: int) -> Data:
    """The first ``n`` rows (or groups); a negative ``n`` keeps all."""
    if n < 0:
        return data
    if isinstance(data, Table):
        return Table(list(data.columns), data.rows[:n])
    return replace(data, columns=list(data.columns), groups=data.groups[:n])


def jsonable(value: Any) -> Any:
    """A result value the agent can read as JSON (a blob becomes its text)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------------------------
# Per-episode storage


@dataclass
class LiveState:
    """One episode's stored data by label and the label counter shared by all storing calls."""

    tables: dict[str, Data] = field(default_factory=dict)
    counter: int = 0

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
        return LiveState(dict(self.tables), self.counter)


# ---------------------------------------------------------------------------------------------------------------
# Tool specs

DATA_SOURCE = {
    "type": "string",
    "description": f"The label of the data to work on: ${STARTING_TABLE}$ or the label an earlier call returned.",
}
_DATA_KINDS = (
    "If the data is tabular, {table}. If the data is grouped (after group_data_by or aggregate_data), {grouped}."
)
_STORES = " Returns the label of the result, to pass as data_source to the next call."

_CONDITION_WORDS = {
    "equal_to": "is equal to",
    "not_equal_to": "is not equal to",
    "greater_than": "is greater than",
    "less_than": "is less than",
    "greater_than_equal_to": "is greater than or equal to",
    "less_than_equal_to": "is less than or equal to",
    "contains": "contains, ignoring case,",
    "like": "matches the SQL LIKE pattern (ignoring case; % any run of characters, _ one character)",
}
_AGGREGATION_WORDS = {
    "count": "the number of rows, or of non-missing values of key_name when one is given",
    "count_distinct": "the number of distinct non-missing values of key_name",
    "sum": "the sum of key_name's values",
    "mean": "the average of key_name's values",
    "min": "the smallest value of key_name",
    "max": "the largest value of key_name",
}
_TRANSFORM_WORDS = {
    "substring": "keep the characters from start_index up to, not including, end_index (counted from 0)",
    "lower": "convert the text to lower case",
    "upper": "convert the text to upper case",
    "round": "round the number to `digits` decimal places",
}
_INTEGER = {"type": "integer"}


def _listing(words: Mapping[str, str]) -> str:
    return "\n".join(f"* `{name}` - {text}" for name, text in words.items())


def _key(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _keys(description: str) -> dict[str, Any]:
    # one key, or a list of keys
    return {
        "description": description,
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}],
    }


def _spec(
    name: str,
    description: str,
    properties: dict[str, Any],
    required: Sequence[str],
    binding: dict[str, Any],
) -> ToolSpec:
    parameters = {
        "type": "object",
        "properties": {"data_source": DATA_SOURCE, **properties},
        "required": ["data_source", *required],
        "additionalProperties": False,
    }
    returns = "data" if binding["operation"] in DATA_OPERATIONS else "label"
    # formulations: where the tool belongs (group_data_by and select_unique_values serve SLOT and SEL alike)
    binding = {"formulations": [binding["kind"]], **binding, "returns": returns}
    return ToolSpec(name=name, description=description, parameters=parameters, binding=binding)


_FILTER_TEXT = (
    "Keep only the items whose value for the key 'key_name' {words} 'value'. "
    + _DATA_KINDS.format(
        table="returns the table restricted to the matching rows",
        grouped="keeps the matching rows inside each group and drops the groups left empty",
    )
    + " Missing values never match."
    + _STORES
)
_SORT_TEXT = (
    "Sort the data by the values of the key 'key_name'{order}. "
    + _DATA_KINDS.format(
        table="returns the table with its rows in that order",
        grouped="orders the groups by their value for 'key_name' (an aggregate computed for each group, or the "
        "value the group shares)",
    )
    + " Missing values come before numbers, and numbers before text. Items with equal values keep their order, so "
    "to sort by several keys, sort by the least important key first." + _STORES
)
_SORT_KEY = "Name of the key to sort by."
_VALUE = {
    "type": ["string", "number"],
    "description": "The value to compare with. A number written as text is compared as a number with numeric values.",
}
_GROUP_TEXT = (
    "Split a table into groups of rows that share the same value of the key 'key_name', the groups ordered by "
    "that value (missing value first). Aggregates then give one value per group." + _STORES
)
_UNIQUE_TEXT = (
    "Keep one copy of each distinct value (or combination of values) of the chosen key(s), in order of first "
    "appearance. Works on tabular data (one item per row) and on grouped data (one item per group); the result "
    "is a table with just the chosen keys." + _STORES
)


def _group_spec() -> ToolSpec:
    return _spec(
        "group_data_by",
        _GROUP_TEXT,
        {"key_name": _key("Name of the key to group by.")},
        ["key_name"],
        {"kind": "slot", "operation": "group", "formulations": ["slot", "sel"]},
    )


def _unique_spec() -> ToolSpec:
    keys = _keys("Name of the key whose distinct values are kept, or a list of keys whose distinct combinations are.")
    return _spec(
        "select_unique_values",
        _UNIQUE_TEXT,
        {"key_name": keys},
        ["key_name"],
        {"kind": "slot", "operation": "unique", "formulations": ["slot", "sel"]},
    )


def slot_specs() -> list[ToolSpec]:
    """The seven SLOT tools, in ``SLOT_TOOLS`` order; categorical choices are arguments."""
    specs = {
        "aggregate_data": _spec(
            "aggregate_data",
            "Compute an aggregate of the key 'key_name'. "
            + _DATA_KINDS.format(
                table="the whole table is one group and the result holds one value",
                grouped="one value is computed for each group",
            )
            + " The value is stored under a new key named after the aggregation and the key, such as "
            "`mean_{key_name}` (`count` when counting rows without a key_name); sort or retrieve it by that name."
            + _STORES,
            {
                "aggregation_type": {
                    "type": "string",
                    "enum": list(AGGREGATIONS),
                    "description": "The aggregation to compute:\n" + _listing(_AGGREGATION_WORDS),
                },
                "key_name": _key("Name of the key to aggregate; leave it out to count rows with `count`."),
            },
            ["aggregation_type"],
            {"kind": "slot", "operation": "aggregate"},
        ),
        "filter_data": _spec(
            "filter_data",
            _FILTER_TEXT.format(words="satisfies 'condition' with"),
            {
                "key_name": _key("Name of the key whose values are compared."),
                "condition": {
                    "type": "string",
                    "enum": list(CONDITIONS),
                    "description": "How the key's value must relate to 'value':\n"
                    + _listing({c: f"the value {w} 'value'" for c, w in _CONDITION_WORDS.items()}),
                },
                "value": _VALUE,
            },
            ["key_name", "condition", "value"],
            {"kind": "slot", "operation": "filter"},
        ),
        "group_data_by": _group_spec(),
        "retrieve_data": _spec(
            "retrieve_data",
            "Return the values of the chosen key(s) as a list of records. "
            + _DATA_KINDS.format(table="there is one record per row", grouped="there is one record per group")
            + " Optionally drop repeated records and keep only the first 'limit' ones. This call returns data, not "
            "a label, so it ends a sequence.",
            {
                "key_name": _keys("Name of the key to return, or a list of keys."),
                "distinct": {"type": "boolean", "description": "Whether to drop repeated records (default false)."},
                "limit": {
                    "type": "integer",
                    "description": "The most records to return, from the top; -1 (the default) returns all.",
                },
            },
            ["key_name"],
            {"kind": "slot", "operation": "retrieve"},
        ),
        "select_unique_values": _unique_spec(),
        "sort_data": _spec(
            "sort_data",
            _SORT_TEXT.format(order=""),
            {
                "key_name": _key(_SORT_KEY),
                "ascending": {
                    "type": "boolean",
                    "description": "Whether to sort in ascending (true) or descending (false) order.",
                },
            },
            ["key_name", "ascending"],
            {"kind": "slot", "operation": "sort"},
        ),
        "transform_data": _spec(
            "transform_data",
            "Change the values of the key 'key_name' in place, in every row (and in every group of grouped data). "
            "Missing values stay missing." + _STORES,
            {
                "key_name": _key("Name of the key whose values are changed."),
                "operation_type": {
                    "type": "string",
                    "enum": list(TRANSFORMS),
                    "description": "The change to make:\n" + _listing(_TRANSFORM_WORDS),
                },
                "operation_args": {
                    "type": "object",
                    "description": "Arguments of the operation: start_index and end_index for substring, digits for "
                    "round; lower and upper take none.",
                    "properties": {"start_index": _INTEGER, "end_index": _INTEGER, "digits": _INTEGER},
                    "additionalProperties": False,
                },
            },
            ["key_name", "operation_type"],
            {"kind": "slot", "operation": "transform"},
        ),
    }
    return [specs[name] for name in SLOT_TOOLS]


def sel_general_specs() -> list[ToolSpec]:
    """The SEL tools that do not depend on the data's keys: one tool per condition, sort order, aggregation and
    transform, plus group_data_by and select_unique_values (the SLOT tools themselves: equal specs, so a tool box
    holding both universes keeps one of each) and limit_data."""
    specs = [
        _spec(
            f"select_data_{condition}",
            _FILTER_TEXT.format(words=words),
            {"key_name": _key("Name of the key whose values are compared."), "value": _VALUE},
            ["key_name", "value"],
            {"kind": "sel", "operation": "filter", "condition": condition},
        )
        for condition, words in _CONDITION_WORDS.items()
    ]
    for order, ascending in (("ascending", True), ("descending", False)):
        specs.append(
            _spec(
                f"sort_data_{order}",
                _SORT_TEXT.format(order=f", in {order} order"),
                {"key_name": _key(_SORT_KEY)},
                ["key_name"],
                {"kind": "sel", "operation": "sort", "ascending": ascending},
            )
        )
    specs.append(_group_spec())
    for aggregation, words in _AGGREGATION_WORDS.items():
        specs.append(
            _spec(
                f"aggregate_data_{aggregation}",
                f"Compute {words}. "
                + _DATA_KINDS.format(
                    table="the whole table is one group and the result holds one value",
                    grouped="one value is computed for each group",
                )
                + f" The value is stored under the new key `{aggregation}_{{key_name}}`"
                + (" (`count` when counting rows without a key_name)" if aggregation == "count" else "")
                + "; sort or retrieve it by that name."
                + _STORES,
                {
                    "key_name": _key(
                        "Name of the key to aggregate"
                        + ("; leave it out to count rows." if aggregation == "count" else ".")
                    )
                },
                [] if aggregation == "count" else ["key_name"],
                {"kind": "sel", "operation": "aggregate", "aggregation": aggregation},
            )
        )
    transform_args: dict[str, dict[str, Any]] = {
        "substring": {
            "start_index": {"type": "integer", "description": "Position of the first character kept, from 0."},
            "end_index": {"type": "integer", "description": "Position after the last character kept."},
        },
        "round": {"digits": {"type": "integer", "description": "Number of decimal places to keep (0: whole numbers)."}},
    }
    for operation, words in _TRANSFORM_WORDS.items():
        extra = transform_args.get(operation, {})
        specs.append(
            _spec(
                f"transform_data_{operation}",
                f"Change the values of the key 'key_name' in place: {words}. Applies to every row (and every group "
                "of grouped data); missing values stay missing." + _STORES,
                {"key_name": _key("Name of the key whose values are changed."), **extra},
                ["key_name", *extra],
                {"kind": "sel", "operation": "transform", "transform": operation},
            )
        )
    specs.append(_unique_spec())
    specs.append(
        _spec(
            "limit_data",
            "Keep only the first 'n' items. "
            + _DATA_KINDS.format(table="keeps the first n rows", grouped="keeps the first n groups")
            + _STORES,
            {"n": {"type": "integer", "description": "How many items to keep, from the top; -1 keeps all."}},
            ["n"],
            {"kind": "sel", "operation": "limit"},
        )
    )
    return specs


_OUTPUT_WORDS = {
    "count": "the number of non-missing values of",
    "count_distinct": "the number of distinct values of",
    "sum": "the sum of",
    "mean": "the average of",
    "min": "the smallest value of",
    "max": "the largest value of",
}


def output_description(output: str) -> str:
    """Words for an aggregate output key (``count``, ``mean_singer_Age``)."""
    if output == "count":
        return "the number of rows"
    # the longest aggregation name first: count_distinct_x is not count of distinct_x
    for aggregation in sorted(_OUTPUT_WORDS, key=len, reverse=True):
        if output.startswith(f"{aggregation}_"):
            return f"{_OUTPUT_WORDS[aggregation]} {output[len(aggregation) + 1 :]}"
    return output


def getter_spec(column: Column | str) -> ToolSpec:
    """The SEL getter of one key: a column of a starting table, or an aggregate output given by its key
    (``count``, ``mean_singer_Age``), which a SEL sequence fetches after aggregating."""
    key, description = (
        (column, output_description(column)) if isinstance(column, str) else (column.key, column.description)
    )
    return _spec(
        getter_name(key),
        f"Return the values of the key '{key}' ({description}) as a list. "
        + _DATA_KINDS.format(table="there is one value per row", grouped="there is one value per group")
        + " This call returns data, not a label.",
        {},
        [],
        {"kind": "sel", "operation": "get", "key": key},
    )


def rest_spec(endpoint: Endpoint) -> ToolSpec:
    """A REST endpoint as a tool: one required argument per query parameter."""
    properties = {p.name: {"type": p.type, "description": p.description, "title": p.title} for p in endpoint.params}
    return ToolSpec(
        name=endpoint.name,
        description=endpoint.description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": [p.name for p in endpoint.params],
            "additionalProperties": False,
        },
        binding={
            "kind": "rest",
            "formulations": ["rest"],
            "operation": "get",
            "returns": "data",
            "path": endpoint.path,
            "sql": endpoint.sql,
            "database": endpoint.database,
            "params": [
                {"name": p.name, "type": p.type, "description": p.description, "title": p.title}
                for p in endpoint.params
            ],
        },
    )


# ---------------------------------------------------------------------------------------------------------------
# Per-episode narrowing of key_name


def _column_entry(column: Column | Mapping[str, Any]) -> tuple[str, str]:
    if isinstance(column, Mapping):
        return str(column["key"]), str(column.get("description", ""))
    return column.key, column.description


def narrow(spec: ToolSpec, columns: Sequence[Column | Mapping[str, Any]]) -> ToolSpec:
    """The spec with ``key_name`` restricted to the scenario's keys: an enum, the keys and their descriptions listed
    in the parameter's description. Tools that may name an aggregate (sort, retrieve, select_unique_values) also
    take ``count`` and ``{aggregation}_{key}``.
    Other tools come back unchanged."""
    if spec.binding.get("kind") not in ("slot", "sel"):
        return spec
    properties = spec.parameters.get("properties", {})
    name = "key_name" if "key_name" in properties else None
    entries = [_column_entry(c) for c in columns]
    if name is None or not entries:
        return spec
    keys = list(dict.fromkeys(key for key, _ in entries))
    described = dict(entries)
    one: dict[str, Any] = {"type": "string", "enum": keys}
    listing = "\n".join(f"* `{key}` - {described[key]}" if described[key] else f"* `{key}`" for key in keys)
    old = properties[name]
    description = f"{old.get('description', '').rstrip('.')}, one of:\n{listing}"
    if spec.binding.get("operation") in AGGREGATE_KEY_OPERATIONS:
        alternatives = "|".join(re.escape(key) for key in keys)
        computed = "|".join(AGGREGATIONS)
        pattern = f"^(count|({computed})_({alternatives}))$"
        one = {"anyOf": [one, {"type": "string", "pattern": pattern}]}
        description += (
            f"\nor a key an aggregation added: `count` (rows counted), or `{{aggregation}}_{{key}}` such as "
            f"`mean_{keys[0]}`"
        )
    narrowed: dict[str, Any] = {"description": description}
    if "anyOf" in old:  # one key or a list of keys
        narrowed["anyOf"] = [one, {"type": "array", "items": one, "minItems": 1}]
    else:
        narrowed.update(one)
    parameters = {**spec.parameters, "properties": {**properties, name: narrowed}}
    return spec.model_copy(update={"parameters": parameters})


# ---------------------------------------------------------------------------------------------------------------
# REST server

HOST = "127.0.0.2"  # a loopback address of its own, apart from 127.0.0.1 where test servers and endpoints listen
START_TIMEOUT = 30.0
REQUEST_TIMEOUT = 30.0
HEALTH_PATH = "/_health"
_PYTHON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


class _Databases:
    """Read-only in-memory copies of the databases, loaded on first use, one lock each (uvicorn runs sync routes
    in a thread pool)."""

    def __init__(self, paths: Mapping[str, Path]):
        self.paths = dict(paths)
        self._connections: dict[str, tuple[sqlite3.Connection, threading.Lock]] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> tuple[sqlite3.Connection, threading.Lock]:
        with self._lock:
            if name not in self._connections:
                if name not in self.paths:
                    raise DataError(f"unknown database '{name}'", hint=f"known: {', '.join(sorted(self.paths))}")
                conn = memory_copy(self.paths[name])
                conn.execute("PRAGMA query_only = ON")  # nothing writes: make sure nothing can
                self._connections[name] = (conn, threading.Lock())
            return self._connections[name]

    def query(
        self, name: str, sql: str, params: Mapping[str, Any] | None = None, timeout_s: float | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        conn, lock = self.get(name)
        with lock, time_limit(conn, timeout_s):
            cursor = conn.execute(sql, dict(params or {}))
            return [d[0] for d in cursor.description or ()], cursor.fetchall()

    def close(self) -> None:
        with self._lock:
            for conn, _ in self._connections.values():
                conn.close()
            self._connections.clear()


def _route(spec: ToolSpec, databases: _Databases, timeout_s: float) -> Callable[..., Any]:
    from fastapi import Query
    from fastapi.responses import JSONResponse

    params = spec.binding.get("params", [])
    sql, database = spec.binding["sql"], spec.binding["database"]
    names = [p["name"] for p in params]

    def endpoint(**arguments: Any) -> Any:
        values = {name: arguments[f"p{i}"] for i, name in enumerate(names)}
        try:
            columns, rows = databases.query(database, sql, values, timeout_s)
        except (sqlite3.Error, OverflowError, ValueError) as exc:
            return JSONResponse({"detail": f"query failed: {exc}"}, status_code=500)
        return JSONResponse([dict(zip(columns, jsonable(list(row)), strict=True)) for row in rows])

    # FastAPI reads the route's query parameters from its signature; the real names travel as aliases, so a name
    # that is no Python identifier (a keyword such as "class") still works
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                f"p{i}",
                inspect.Parameter.KEYWORD_ONLY,
                default=Query(..., alias=p["name"], description=p.get("description"), title=p.get("title")),
                annotation=_PYTHON_TYPES[p["type"]],
            )
            for i, p in enumerate(params)
        ]
    )
    endpoint.__name__ = spec.name
    return endpoint


def rest_app(specs: Sequence[ToolSpec], databases: Mapping[str, Path], timeout_s: float = REST_TIMEOUT_S) -> FastAPI:
    """A FastAPI app with one GET route per REST spec (``binding.path``): typed, required query parameters, the
    spec's SQL run with them (for ``timeout_s`` at most) on a read-only copy of its database, the rows as records."""
    from fastapi import FastAPI

    app = FastAPI(
        title="Live API-Bench REST endpoints",
        version="1.0.0",
        description="Read-only endpoints over the question databases, one per distinct query.",
    )
    dbs = _Databases(databases)
    paths: dict[str, str] = {}
    rows_schema = {"type": "array", "items": {"type": "object", "additionalProperties": True}}
    for spec in specs:
        if spec.binding.get("kind") != "rest":
            continue
        path = spec.binding["path"]
        if path in paths:  # a second route on a path would never be reached
            raise ValueError(f"tools '{paths[path]}' and '{spec.name}' share the path {path}")
        if spec.binding["database"] not in databases:
            raise ValueError(f"tool '{spec.name}' runs on unknown database '{spec.binding['database']}'")
        paths[path] = spec.name
        app.add_api_route(
            path,
            _route(spec, dbs, timeout_s),
            methods=["GET"],
            name=spec.name,
            operation_id=spec.name,
            summary=spec.description,
            response_model=None,
            responses={
                200: {
                    "description": "The rows, one record each",
                    "content": {"application/json": {"schema": rows_schema}},
                }
            },
        )

    def health() -> dict[str, bool]:
        return {"ok": True}

    app.add_api_route(HEALTH_PATH, health, methods=["GET"], include_in_schema=False)
    app.state.databases = dbs
    return app


def _stop_process(process: subprocess.Popen[bytes], folder: str) -> None:
    """Stop the server process (only the one this module started, by its handle) and remove its files."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    shutil.rmtree(folder, ignore_errors=True)


class RestServer:
    """The REST app served by uvicorn in a child process on ``HOST`` at a free port.

    The parent binds the listening socket and hands it to the child, so the port cannot be taken in between. The
    child exits when the parent does (it watches its parent), and a finalizer stops it at interpreter exit."""

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        databases: Mapping[str, Path],
        *,
        host: str = HOST,
        timeout: float = START_TIMEOUT,
        query_timeout_s: float = REST_TIMEOUT_S,
    ):
        self.specs = [s for s in specs if s.binding.get("kind") == "rest"]
        self.databases = {name: Path(path) for name, path in databases.items()}
        self.host = host
        self.timeout, self.query_timeout_s = timeout, query_timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self._url: str | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.2:PORT``); the server must be running."""
        if self._url is None:
            raise RuntimeError("the REST server is not running: call start() first")
        return self._url

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> str:
        """Start the server and wait until it answers; returns the base URL."""
        if self.running():
            return self.url
        folder = tempfile.mkdtemp(prefix="liveapi-rest-")
        specs_file, databases_file, log_file = (Path(folder) / n for n in ("specs.json", "databases.json", "log.txt"))
        specs_file.write_text(json.dumps([s.model_dump(mode="json") for s in self.specs]))
        databases_file.write_text(json.dumps({name: str(path) for name, path in self.databases.items()}))
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, 0))
            sock.listen(1024)
            port = sock.getsockname()[1]
            root = str(Path(__file__).resolve().parents[2])  # the folder holding env_core
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
            command = [
                sys.executable, "-m", "undertow.env_core.liveapi.tools", "serve",
                "--specs", str(specs_file), "--databases", str(databases_file),
                "--fd", str(sock.fileno()), "--parent", str(os.getpid()), "--timeout", str(self.query_timeout_s),
            ]  # fmt: skip
            with log_file.open("wb") as log:
                process = subprocess.Popen(
                    command, pass_fds=[sock.fileno()], stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env
                )
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            sock.close()  # the child holds its own copy
        self.process = process
        self._finalizer = weakref.finalize(self, _stop_process, process, folder)
        self._url = f"http://{self.host}:{port}"
        self._wait(log_file)
        return self._url

    def _wait(self, log_file: Path) -> None:
        deadline = time.monotonic() + self.timeout
        assert self.process is not None
        with httpx.Client(timeout=1.0) as client:
            while True:
                code = self.process.poll()
                if code is not None:
                    log = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else ""
                    self.stop()
                    raise InfraError(f"the REST server exited with status {code} before answering", hint=log.strip())
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(self.url + HEALTH_PATH).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    self.stop()
                    raise InfraError(f"the REST server did not answer within {self.timeout:g} s")
                time.sleep(0.02)

    def stop(self) -> None:
        """Stop the server process and wait for it."""
        if self._finalizer is not None:
            self._finalizer()  # runs once: a later call or interpreter exit does nothing
        self._finalizer = None
        self._url = None


def readable_422(body: Any) -> str:
    """FastAPI's validation ``detail`` in plain words: which query parameter, what is wrong."""
    detail = body.get("detail") if isinstance(body, Mapping) else None
    if not isinstance(detail, list):
        return json.dumps(body)[:500]
    parts = []
    for item in detail:
        if not isinstance(item, Mapping):
            continue
        loc = [str(x) for x in item.get("loc", [])]
        where = f"query parameter '{loc[-1]}'" if len(loc) >= 2 and loc[0] == "query" else ".".join(loc) or "request"
        if item.get("type") == "missing":
            parts.append(f"{where} is required but was not given")
            continue
        message = str(item.get("msg", "is invalid"))
        got = f" (got {json.dumps(item['input'])})" if "input" in item else ""
        parts.append(f"{where}: {message[:1].lower()}{message[1:]}{got}")
    return "; ".join(parts) or json.dumps(body)[:500]


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
        self._sources = _Databases(self.databases)
        self.timeout_s = timeout_s  # seconds the REST server lets one query on the model's values run
        self._server: RestServer | None = None
        self._http: httpx.Client | None = None
        self._lock = threading.Lock()

    # -- episodes

    def new_state(self) -> LiveState:
        return LiveState()

    def start(self, state: LiveState, scenario: Scenario) -> None:
        """Run the scenario's hidden initialization step: its setup query's rows become ``$starting_table_var$``."""
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


# ---------------------------------------------------------------------------------------------------------------
# The server process


def _watch_parent(parent: int) -> None:
    # a parent killed outright runs no finalizer: the child notices it is orphaned and leaves
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def serve(argv: Sequence[str] | None = None) -> int:
    """``serve --specs FILE --databases FILE --fd N --parent PID``: serve the REST app on an inherited socket."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m undertow.env_core.liveapi.tools serve")
    parser.add_argument("--specs", required=True, type=Path)
    parser.add_argument("--databases", required=True, type=Path)
    parser.add_argument("--fd", required=True, type=int)
    parser.add_argument("--parent", required=True, type=int)
    parser.add_argument("--timeout", type=float, default=REST_TIMEOUT_S)  # seconds a query may run
    options = parser.parse_args(argv)
    specs = [ToolSpec.model_validate(s) for s in json.loads(options.specs.read_text())]
    databases = {name: Path(path) for name, path in json.loads(options.databases.read_text()).items()}
    app = rest_app(specs, databases, options.timeout)
    threading.Thread(target=_watch_parent, args=(options.parent,), daemon=True).start()
    sock = socket.socket(fileno=options.fd)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] != ["serve"]:
        sys.exit(
            "usage: python -m undertow.env_core.liveapi.tools serve --specs FILE --databases FILE --fd N --parent PID"
        )
    sys.exit(serve(sys.argv[2:]))
