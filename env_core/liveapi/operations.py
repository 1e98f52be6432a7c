"""The data the SLOT and SEL tools work on (a ``Table`` of rows, or ``Grouped`` rows with their aggregates) and the
operations behind those tools: filter, sort, group, aggregate, transform, select unique values, limit, retrieve and
get. Each is pure: it returns new data and leaves its input as it was, so stored data can be shared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from undertow.env_core.errors import close_match
from undertow.env_core.liveapi.values import (
    aggregate_values,
    matches,
    sort_key,
    storage_class_rank,
    transform_value,
)
from undertow.env_core.liveapi.vocabulary import AGGREGATIONS, CONDITIONS, TRANSFORMS, aggregate_output
from undertow.env_core.tools import ToolExecutionError


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
        identity = tuple((storage_class_rank(v), v) for v in row.values())
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
