"""Live API-Bench's vocabulary, shared by every liveapi module: the formulations, the SLOT tools and their
categorical choices (conditions, aggregations, transforms), the labels storing calls return, the categories of
skipped questions, how keys and tool names are formed, and a column of the starting table. Names are the paper's
(§3, appendix D).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

FAMILY = "liveapi"
FORMULATIONS = ("slot", "sel", "rest")
CONDITIONS = (
    "equal_to",
    "not_equal_to",
    "greater_than",
    "less_than",
    "greater_than_equal_to",
    "less_than_equal_to",
    "contains",
    "like",
)
AGGREGATIONS = ("count", "count_distinct", "sum", "mean", "min", "max")
TRANSFORMS = ("substring", "lower", "upper", "round")
STARTING_TABLE = "starting_table_var"  # label of the hidden initialization step's table
SLOT_TOOLS = (
    "aggregate_data",
    "filter_data",
    "group_data_by",
    "retrieve_data",
    "select_unique_values",
    "sort_data",
    "transform_data",
)
INIT_TOOL = "initialize_active_data"  # hidden, never shown; run by the toolbox when an episode starts

# Label prefix of a storing call, by operation; the label is f"{prefix}_{n}", n counting storing calls (shared)
FILTERED_DF = "FILTERED_DF"
SORTED_DF = "SORTED_DF"
GROUPED_DF = "GROUPED_DF"
AGGREGATED_DF = "AGGREGATED_DF"
TRANSFORMED_DF = "TRANSFORMED_DF"
UNIQUE_DF = "UNIQUE_DF"
LIMITED_DF = "LIMITED_DF"
LABEL_PREFIXES = {
    "filter": FILTERED_DF,
    "sort": SORTED_DF,
    "group": GROUPED_DF,
    "aggregate": AGGREGATED_DF,
    "transform": TRANSFORMED_DF,
    "unique": UNIQUE_DF,
    "limit": LIMITED_DF,
}

# The short, stable categories of skipped questions
SKIP_KINDS = (
    "parse error",
    "nested SELECT",
    "set operation",
    "OR in WHERE",
    "HAVING",
    "NOT / IS NULL",
    "column compared with column",
    "function in WHERE",
    "GROUP BY several columns",
    "expression in SELECT",
    "ORDER BY expression",
    "self join",
    "unknown column",
    "no FROM table",
    "OFFSET",
    "other construct",
)


MAX_NAME = 64  # tool-name limit of common chat APIs
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def sel_general_tool_names() -> list[str]:
    """The SEL formulation's general tools, in the order the universe lists them (getters come on top)."""
    return [
        *(f"select_data_{c}" for c in CONDITIONS),
        "sort_data_ascending",
        "sort_data_descending",
        "group_data_by",
        *(f"aggregate_data_{a}" for a in AGGREGATIONS),
        *(f"transform_data_{t}" for t in TRANSFORMS),
        "select_unique_values",
        "limit_data",
    ]


_STORING_TOOLS = {
    "filter_data": "filter",
    "sort_data": "sort",
    "group_data_by": "group",
    "aggregate_data": "aggregate",
    "transform_data": "transform",
    "select_unique_values": "unique",
    "limit_data": "limit",
    **{f"select_data_{c}": "filter" for c in CONDITIONS},
    "sort_data_ascending": "sort",
    "sort_data_descending": "sort",
    **{f"aggregate_data_{a}": "aggregate" for a in AGGREGATIONS},
    **{f"transform_data_{t}": "transform" for t in TRANSFORMS},
}


def label_prefix(tool: str) -> str | None:
    """The label prefix of a storing tool (SLOT or SEL, by its unobfuscated name); None for data-returning tools
    (retrieve_data, getters, REST endpoints)."""
    operation = _STORING_TOOLS.get(tool)
    return LABEL_PREFIXES[operation] if operation else None


def getter_name(key: str) -> str:
    """``get_{key}``; a name past the 64 characters a tool name may have is cut and made unique by a digest."""
    name = f"get_{key}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(key.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def aggregation_of(key: str) -> str | None:
    """The aggregation whose output ``key`` is named as (``count``, ``count_distinct_x`` -> count_distinct,
    ``mean_x`` -> mean); None for any other key. The longest name first: count_distinct_x is no count."""
    if key == "count":
        return "count"
    for aggregation in sorted(AGGREGATIONS, key=len, reverse=True):
        if key.startswith(f"{aggregation}_"):
            return aggregation
    return None


def aggregate_getter_name(aggregation: str) -> str:
    """The SEL getter of an aggregation's output: ``get_mean``, ``get_count``."""
    return f"get_{aggregation}"


def column_key(table: str, column: str) -> str:
    """The starting table's name for a column: ``{table}_{column}``, other characters than [A-Za-z0-9_] as ``_``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", f"{table}_{column}")


def aggregate_output(aggregation: str, key: str | None) -> str:
    """The column an aggregate adds: ``count`` for COUNT(*), else ``{aggregation}_{key}``."""
    return "count" if key is None else f"{aggregation}_{key}"


@dataclass(frozen=True)
class Column:
    """One column of the starting table."""

    key: str  # "singer_Age"
    table: str  # original table name
    column: str  # original column name
    description: str  # "singer's age"
    dtype: str  # "string" | "number"
