"""The Live API-Bench tool specs: the seven SLOT tools, SEL's general tools and per-key getters, a REST endpoint as a
tool, and the per-episode narrowing of ``key_name`` to the scenario's keys. Descriptions and parameters are what the
agent reads; ``binding`` tells the tool box (``toolbox.py``) what a call runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from undertow.env_core.liveapi.endpoints import Endpoint
from undertow.env_core.liveapi.vocabulary import (
    AGGREGATIONS,
    CONDITIONS,
    SLOT_TOOLS,
    STARTING_TABLE,
    TRANSFORMS,
    Column,
    aggregate_getter_name,
    getter_name,
)
from undertow.env_core.model import ToolSpec

DATA_OPERATIONS = ("retrieve", "get", "get_aggregate")  # operations that return data instead of storing it
AGGREGATE_KEY_OPERATIONS = ("sort", "retrieve", "unique")  # operations that may name an aggregate output


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


def getter_spec(column: Column) -> ToolSpec:
    """The SEL getter of one column of a starting table."""
    return _spec(
        getter_name(column.key),
        f"Return the values of the key '{column.key}' ({column.description}) as a list. "
        + _DATA_KINDS.format(table="there is one value per row", grouped="there is one value per group")
        + " This call returns data, not a label.",
        {},
        [],
        {"kind": "sel", "operation": "get", "key": column.key},
    )


def aggregate_getter_spec(aggregation: str) -> ToolSpec:
    """The SEL getter of an aggregate: ``get_mean`` returns the values aggregate_data_mean stored, whichever key it
    averaged (SEL offers a getter per column of the starting table, as the paper does, and one per aggregation)."""
    return _spec(
        aggregate_getter_name(aggregation),
        f"Return the values of the {aggregation} aggregate that aggregate_data_{aggregation} computed "
        f"({_OUTPUT_WORDS.get(aggregation, aggregation)} a key, or the number of rows) as a list: one value per "
        "group, or one value for a table aggregated whole. The data must hold one such aggregate. "
        "This call returns data, not a label.",
        {},
        [],
        {"kind": "sel", "operation": "get_aggregate", "aggregation": aggregation},
    )


def rest_spec(endpoint: Endpoint) -> ToolSpec:
    """A REST endpoint as a tool: one required argument per query parameter; a column parameter is a string with
    the ``enum`` of the columns it may name, and its binding entry keeps the identifier each stands for (what
    ``rest.render_sql`` writes into the SQL)."""
    properties: dict[str, dict[str, Any]] = {}
    params: list[dict[str, Any]] = []
    for p in endpoint.params:
        schema: dict[str, Any] = {"type": p.type, "description": p.description, "title": p.title}
        entry: dict[str, Any] = {"name": p.name, "type": p.type, "description": p.description, "title": p.title}
        if p.identifiers is not None:
            schema["enum"] = list(p.enum or p.identifiers)
            entry["enum"] = list(p.enum or p.identifiers)
            entry["identifiers"] = dict(p.identifiers)
        properties[p.name] = schema
        params.append(entry)
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
            "params": params,
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
