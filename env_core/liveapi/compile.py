"""Compile Spider questions into the three Live API-Bench formulations (§3 and appendix D of the paper).

- SLOT: the gold SQL is decomposed into a ``QueryPlan`` (filters, one grouping key, aggregates, sorts, limit,
  projection) over one *starting table*: every column of every FROM/JOIN table, named ``{table}_{column}``, which a
  hidden initialization step builds by running ``setup_sql``. The plan becomes a chain of the seven generic tools.
- SEL: the same chain with every categorical argument bound into its own tool (``select_data_equal_to``,
  ``sort_data_descending``, ...) and one getter per column (``get_{key}``).
- REST: one read-only endpoint per question: the gold SQL with its WHERE literals turned into named query
  parameters; names, paths and descriptions come from templates over Spider's natural-language names.

Nothing here raises on bad input: a query the decomposition does not cover becomes a ``Problem`` whose ``kind`` is
one of ``SKIP_KINDS`` (the build counts them) and whose reason names the construct.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from undertow.env_core.spider import Problem, Question, Schema

# ---------------------------------------------------------------------------------------------------------------
# Vocabulary shared by the liveapi modules (names are the paper's)

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

_T = TypeVar("_T")

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


def column_key(table: str, column: str) -> str:
    """The starting table's name for a column: ``{table}_{column}``, other characters than [A-Za-z0-9_] as ``_``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", f"{table}_{column}")


def aggregate_output(aggregation: str, key: str | None) -> str:
    """The column an aggregate adds: ``count`` for COUNT(*), else ``{aggregation}_{key}``."""
    return "count" if key is None else f"{aggregation}_{key}"


# ---------------------------------------------------------------------------------------------------------------
# Data model


@dataclass(frozen=True)
class Column:
    """One column of the starting table."""

    key: str  # "singer_Age"
    table: str  # original table name
    column: str  # original column name
    description: str  # "singer's age"
    dtype: str  # "string" | "number"


@dataclass(frozen=True)
class Transform:
    key: str
    operation: str  # one of TRANSFORMS
    args: dict[str, Any]  # substring: start_index, end_index (0-based, end exclusive); round: digits


@dataclass(frozen=True)
class Filter:
    key: str
    condition: str  # one of CONDITIONS
    value: Any  # the SQL literal as a Python value
    transform: Transform | None = None  # the WHERE side was SUBSTR / LOWER / UPPER / ROUND of the column


@dataclass(frozen=True)
class Aggregate:
    aggregation: str  # one of AGGREGATIONS
    key: str | None  # None only for COUNT(*)
    output: str


@dataclass(frozen=True)
class EndpointParam:
    name: str
    type: str  # "string" | "integer" | "number"
    description: str
    title: str
    value: Any  # the question's literal: the gold argument


@dataclass(frozen=True)
class Endpoint:
    name: str
    path: str
    description: str
    database: str
    sql: str  # parameterized with :name placeholders
    params: list[EndpointParam] = field(default_factory=list)


@dataclass
class QueryPlan:
    db_id: str
    question: int
    text: str
    sql: str
    setup_sql: str
    columns: list[Column]
    filters: list[Filter]
    group_by: str | None
    aggregates: list[Aggregate]
    order: list[tuple[str, bool]]  # (key or aggregate output, ascending)
    limit: int | None
    select: list[str]
    distinct: bool
    rest: Endpoint


@dataclass(frozen=True)
class GoldCall:
    tool: str
    arguments: dict[str, Any]
    label: str | None  # where the toolbox stores the output; None for data-returning calls


class _Skip(Exception):
    """A construct the decomposition does not cover (internal: becomes a Problem)."""

    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


# ---------------------------------------------------------------------------------------------------------------
# Parsing: scope, aliases, Spider's double-quoted strings


_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "equal_to",
    exp.NEQ: "not_equal_to",
    exp.GT: "greater_than",
    exp.LT: "less_than",
    exp.GTE: "greater_than_equal_to",
    exp.LTE: "less_than_equal_to",
}
_FLIPPED = {  # literal on the left: 5 < age is age > 5
    "equal_to": "equal_to",
    "not_equal_to": "not_equal_to",
    "greater_than": "less_than",
    "less_than": "greater_than",
    "greater_than_equal_to": "less_than_equal_to",
    "less_than_equal_to": "greater_than_equal_to",
}
_AGGREGATE_NODES: dict[type[exp.Expr], str] = {
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "mean",
    exp.Min: "min",
    exp.Max: "max",
}


def _snippet(node: exp.Expr) -> str:
    text = node.sql("sqlite")
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass
class _TableRef:
    table: str  # schema name
    ref: str  # how the query refers to it: its alias, or its name as written


class _Scope:
    """The FROM/JOIN tables of the top-level SELECT, their aliases and columns."""

    def __init__(self, select: exp.Select, schema: Schema):
        self.schema = schema
        self.refs: list[_TableRef] = []
        self.unknown: list[str] = []
        sources: list[exp.Expr] = []
        from_ = select.args.get("from_")
        if from_ is not None:
            sources.append(from_.this)
        sources += [join.this for join in select.args.get("joins") or []]
        for source in sources:
            if not isinstance(source, exp.Table):
                continue
            table = schema.table_of(source.name)
            if table is None:
                self.unknown.append(source.name)
                continue
            self.refs.append(_TableRef(table, source.alias or source.name))
        self.aliases = {ref.ref.lower(): ref.table for ref in self.refs}
        for ref in self.refs:  # a table may also be named by its own name when aliased
            self.aliases.setdefault(ref.table.lower(), ref.table)

    def resolve(self, column: exp.Column) -> tuple[str, str]:
        """(table, column) in schema spelling; _Skip("unknown column") when unknown or ambiguous."""
        name = column.name
        if column.table:
            table = self.aliases.get(column.table.lower())
            if table is None:
                raise _Skip("unknown column", f"unknown table or alias {column.table!r} in {_snippet(column)}")
            found = _find_column(self.schema, table, name)
            if found is None:
                raise _Skip("unknown column", f"table {table!r} has no column {name!r}")
            return table, found
        matches = [(ref.table, c) for ref in self.refs if (c := _find_column(self.schema, ref.table, name))]
        if len(matches) != 1:
            why = "is ambiguous" if matches else "is in none of the FROM tables"
            raise _Skip("unknown column", f"column {name!r} {why}")
        return matches[0]

    def try_resolve(self, column: exp.Column) -> tuple[str, str] | None:
        try:
            return self.resolve(column)
        except _Skip:
            return None

    def has_column(self, name: str) -> bool:
        return any(_find_column(self.schema, ref.table, name) for ref in self.refs)


def _find_column(schema: Schema, table: str, name: str) -> str | None:
    lowered = name.lower()
    return next((c for c in schema.tables.get(table, []) if c.lower() == lowered), None)


def _parse(query: str) -> exp.Expr:
    try:
        tree = sqlglot.parse_one(query, read="sqlite")
    except sqlglot.errors.SqlglotError as exc:
        raise _Skip("parse error", f"sqlglot: {str(exc).splitlines()[0]}") from exc
    if not isinstance(tree, exp.Expr):
        raise _Skip("parse error", "empty query")
    return tree


def _top_select(tree: exp.Expr) -> exp.Select:
    """The query's single SELECT, or _Skip for set operations and nested SELECTs."""
    if isinstance(tree, exp.SetOperation):
        raise _Skip("set operation", f"{type(tree).__name__.upper()} of two SELECTs")
    if not isinstance(tree, exp.Select):
        raise _Skip("other construct", f"not a SELECT statement: {type(tree).__name__}")
    if tree.args.get("with_") is not None:
        raise _Skip("nested SELECT", "WITH clause (common table expression)")
    nested = [node for node in tree.find_all(exp.Select, exp.SetOperation) if node is not tree]
    if nested:
        raise _Skip("nested SELECT", f"nested SELECT: {_snippet(nested[0])}")
    return tree


def _literalize(select: exp.Select, scope: _Scope) -> None:
    """Spider writes strings in double quotes, which sqlglot reads as identifiers: SQLite itself takes a double-quoted
    name that resolves to no column (nor SELECT alias) as a string, and so do we."""
    aliases = {a.alias.lower() for a in select.expressions if isinstance(a, exp.Alias)}
    for column in list(select.find_all(exp.Column)):
        identifier = column.this
        if not (isinstance(identifier, exp.Identifier) and identifier.quoted) or column.table:
            continue
        if scope.has_column(identifier.name) or identifier.name.lower() in aliases:
            continue
        column.replace(exp.Literal.string(identifier.name))


_NO_VALUE = object()


def _literal_value(node: exp.Expr | None) -> Any:
    """A literal's Python value (str / int / float, negatives included); _NO_VALUE when the node is none."""
    while isinstance(node, exp.Paren):
        node = node.this
    sign = 1
    if isinstance(node, exp.Neg):
        sign, node = -1, node.this
    if not isinstance(node, exp.Literal):
        return _NO_VALUE
    if node.is_string:
        return _NO_VALUE if sign < 0 else node.this
    text = node.this
    try:
        return sign * int(text)
    except ValueError:
        try:
            return sign * float(text)
        except ValueError:
            return _NO_VALUE


def _is_literal(node: exp.Expr | None) -> bool:
    return _literal_value(node) is not _NO_VALUE


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _conjuncts(node: exp.Expr) -> Iterator[exp.Expr]:
    node = _unparen(node)
    if isinstance(node, exp.And):
        yield from _conjuncts(node.this)
        yield from _conjuncts(node.expression)
    else:
        yield node


def _is_negated(node: exp.Expr) -> bool:
    return bool(node.args.get("negate"))


def _possessive(noun: str) -> str:
    return f"{noun}'" if noun.endswith("s") else f"{noun}'s"


def describe_column(schema: Schema, table: str, column: str) -> str:
    """A column's description from Spider's natural names: "singer's age" (the paper's column descriptions)."""
    natural = schema.column_names.get((table, column), column)
    return f"{_possessive(schema.table_names.get(table, table))} {natural}"


def json_type(schema: Schema, table: str, column: str) -> str:
    """A column's dtype: "number" for Spider's number / boolean columns, "string" for text / time / others."""
    return "number" if schema.column_types.get((table, column), "text") in ("number", "boolean") else "string"


def table_columns(schema: Schema, table: str) -> list[Column]:
    """One table's columns as starting-table columns (keys, descriptions, types)."""
    return [
        Column(
            column_key(table, column),
            table,
            column,
            describe_column(schema, table, column),
            json_type(schema, table, column),
        )
        for column in schema.tables[table]
    ]


_AGGREGATE_PHRASES = {
    "count": "the number of rows with {what}",
    "count_distinct": "the number of different values of {what}",
    "sum": "the total of {what}",
    "mean": "the average of {what}",
    "min": "the lowest {what}",
    "max": "the highest {what}",
}


def aggregate_columns(columns: list[Column]) -> list[Column]:
    """The columns an aggregate can add over these columns (what SEL's getters of aggregates read): the row count,
    and per column each aggregation (every one for every column: SQLite averages a number stored as text too)."""
    out = [Column("count", "", "", "the number of rows", "number")]
    for column in columns:
        for aggregation in AGGREGATIONS:
            description = _AGGREGATE_PHRASES[aggregation].format(what=column.description)
            dtype = column.dtype if aggregation in ("min", "max") else "number"
            out.append(
                Column(aggregate_output(aggregation, column.key), column.table, column.column, description, dtype)
            )
    return out


def _starting_columns(scope: _Scope, schema: Schema) -> list[Column]:
    return [column for ref in scope.refs for column in table_columns(schema, ref.table)]


def _setup_sql(select: exp.Select, scope: _Scope, schema: Schema) -> str:
    """Every column of every FROM/JOIN table, aliased ``{table}_{column}``, over the query's own FROM clause."""
    projections = [
        exp.alias_(exp.column(column, table=ref.ref, quoted=True), column_key(ref.table, column), quoted=True)
        for ref in scope.refs
        for column in schema.tables[ref.table]
    ]
    setup = exp.select(*projections).from_(select.args["from_"].this.copy())
    for join in select.args.get("joins") or []:
        setup.append("joins", join.copy())
    return setup.sql("sqlite")


# ---------------------------------------------------------------------------------------------------------------
# SLOT decomposition


def _transform_of(node: exp.Expr) -> tuple[exp.Column, str, dict[str, Any]] | None:
    """(column, operation, args) when ``node`` is SUBSTR / LOWER / UPPER / ROUND of a column with literal args."""
    if not isinstance(node.this, exp.Column):
        return None
    if isinstance(node, exp.Lower | exp.Upper):
        return node.this, "lower" if isinstance(node, exp.Lower) else "upper", {}
    if isinstance(node, exp.Substring):
        start, length = _literal_value(node.args.get("start")), _literal_value(node.args.get("length"))
        # SQLite's SUBSTR counts from 1, negative starts from the end: only the plain forward slice maps
        if not (isinstance(start, int) and isinstance(length, int) and start >= 1 and length >= 0):
            return None
        return node.this, "substring", {"start_index": start - 1, "end_index": start - 1 + length}
    if isinstance(node, exp.Round):
        digits = _literal_value(node.args.get("decimals")) if node.args.get("decimals") is not None else 0
        if not isinstance(digits, int):
            return None
        return node.this, "round", {"digits": digits}
    return None


def _filters_of(where: exp.Expr, scope: _Scope) -> list[Filter]:
    filters: list[Filter] = []
    for conjunct in _conjuncts(where):
        if isinstance(conjunct, exp.Or):
            raise _Skip("OR in WHERE", f"OR in WHERE: {_snippet(conjunct)}")
        if isinstance(conjunct, exp.Not | exp.Is) or _is_negated(conjunct):
            raise _Skip("NOT / IS NULL", f"NOT / IS NULL in WHERE: {_snippet(conjunct)}")
        if isinstance(conjunct, exp.Between):
            low, high = _literal_value(conjunct.args.get("low")), _literal_value(conjunct.args.get("high"))
            if low is _NO_VALUE or high is _NO_VALUE:
                raise _Skip("other construct", f"BETWEEN with non-literal bounds: {_snippet(conjunct)}")
            key, transform = _filter_side(conjunct.this, scope, conjunct)
            filters.append(Filter(key, "greater_than_equal_to", low, transform))
            filters.append(Filter(key, "less_than_equal_to", high, transform))
            continue
        if isinstance(conjunct, exp.Like):
            if conjunct.args.get("escape") is not None:
                raise _Skip("other construct", f"LIKE with ESCAPE: {_snippet(conjunct)}")
            condition = "like"
        elif type(conjunct) in _COMPARISONS:
            condition = _COMPARISONS[type(conjunct)]
        else:
            raise _Skip("other construct", f"{type(conjunct).__name__} in WHERE: {_snippet(conjunct)}")
        left, right = _unparen(conjunct.this), _unparen(conjunct.expression)
        if _is_literal(left) and not _is_literal(right) and condition != "like":
            left, right, condition = right, left, _FLIPPED[condition]
        value = _literal_value(right)
        if value is _NO_VALUE:
            if any(True for _ in right.find_all(exp.Column)) and any(True for _ in left.find_all(exp.Column)):
                raise _Skip("column compared with column", f"column compared with column: {_snippet(conjunct)}")
            raise _Skip("other construct", f"comparison with a non-literal value: {_snippet(conjunct)}")
        key, transform = _filter_side(left, scope, conjunct)
        filters.append(Filter(key, condition, value, transform))
    return filters


def _filter_side(node: exp.Expr, scope: _Scope, conjunct: exp.Expr) -> tuple[str, Transform | None]:
    node = _unparen(node)
    if isinstance(node, exp.Column):
        return column_key(*scope.resolve(node)), None
    if isinstance(node, exp.Func):
        found = _transform_of(node)
        if found is None:
            raise _Skip("function in WHERE", f"function in WHERE: {_snippet(conjunct)}")
        column, operation, args = found
        key = column_key(*scope.resolve(column))
        return key, Transform(key, operation, args)
    raise _Skip("other construct", f"expression in WHERE: {_snippet(conjunct)}")


def _aggregate_of(node: exp.Expr, scope: _Scope) -> Aggregate | None:
    """The Aggregate of COUNT(*) / COUNT([DISTINCT] col) / SUM / AVG / MIN / MAX(col); None for other nodes;
    _Skip("expression in SELECT") for an aggregate over something else than one column."""
    aggregation = _AGGREGATE_NODES.get(type(node))
    if aggregation is None:
        return None
    argument = node.this
    if isinstance(node, exp.Count) and isinstance(argument, exp.Star):
        return Aggregate("count", None, "count")
    if isinstance(node, exp.Count) and isinstance(argument, exp.Distinct):
        inner = argument.expressions
        if len(inner) == 1 and isinstance(inner[0], exp.Column):
            key = column_key(*scope.resolve(inner[0]))
            return Aggregate("count_distinct", key, aggregate_output("count_distinct", key))
        raise _Skip("expression in SELECT", f"aggregate over an expression: {_snippet(node)}")
    if isinstance(argument, exp.Column) and not node.expressions:
        key = column_key(*scope.resolve(argument))
        return Aggregate(aggregation, key, aggregate_output(aggregation, key))
    raise _Skip("expression in SELECT", f"aggregate over an expression: {_snippet(node)}")


def _transform_conflicts(plan: QueryPlan) -> None:
    """A transform rewrites its column in place: the column may then serve nothing but identically transformed
    filters (else the projection, sort or another filter would see the changed values)."""
    for transform in _transforms(plan):
        key = transform.key
        others = [f for f in plan.filters if f.key == key and f.transform != transform]
        used = key in plan.select or key == plan.group_by or any(k == key for k, _ in plan.order)
        if others or used or any(a.key == key for a in plan.aggregates):
            raise _Skip(
                "function in WHERE",
                f"function in WHERE: {transform.operation.upper()} of {key}, which the query also uses untransformed",
            )


def _plan(question: Question, schema: Schema) -> QueryPlan:
    tree = _parse(question.query)
    select = _top_select(tree)
    if select.args.get("from_") is None:
        raise _Skip("no FROM table", "SELECT without FROM")
    scope = _Scope(select, schema)
    if scope.unknown:
        raise _Skip("unknown column", f"unknown table {scope.unknown[0]!r}")
    sources = [select.args["from_"].this, *(j.this for j in select.args.get("joins") or [])]
    if not all(isinstance(s, exp.Table) for s in sources):
        raise _Skip("other construct", "a FROM source that is no table")
    tables = [ref.table for ref in scope.refs]
    if len(set(tables)) != len(tables):
        raise _Skip("self join", f"self join: table {next(t for t in tables if tables.count(t) > 1)!r} twice")
    _literalize(select, scope)
    if select.args.get("offset") is not None:
        raise _Skip("OFFSET", f"OFFSET: {_snippet(select.args['offset'])}")
    if select.args.get("having") is not None:
        raise _Skip("HAVING", f"HAVING: {_snippet(select.args['having'])}")
    columns = _starting_columns(scope, schema)
    keys = [c.key for c in columns]
    if len(set(keys)) != len(keys):
        raise _Skip("other construct", "two columns of the joined tables get the same key")

    aggregates: list[Aggregate] = []

    def add_aggregate(aggregate: Aggregate) -> str:
        if aggregate not in aggregates:
            aggregates.append(aggregate)
        return aggregate.output

    selected: list[str] = []
    aliases: dict[str, str] = {}
    for item in select.expressions:
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Star):
            selected += keys
            continue
        if isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
            raise _Skip("expression in SELECT", f"table star in SELECT: {_snippet(node)}")
        if isinstance(node, exp.Column):
            output = column_key(*scope.resolve(node))
        else:
            aggregate = _aggregate_of(node, scope)
            if aggregate is None:
                raise _Skip("expression in SELECT", f"expression in SELECT: {_snippet(node)}")
            output = add_aggregate(aggregate)
        if isinstance(item, exp.Alias):
            aliases[item.alias.lower()] = output
        selected.append(output)

    filters = _filters_of(select.args["where"].this, scope) if select.args.get("where") is not None else []

    group_by = None
    group = select.args.get("group")
    if group is not None:
        expressions = group.expressions
        if len(expressions) != 1:
            raise _Skip("GROUP BY several columns", f"GROUP BY several columns: {_snippet(group)}")
        if not isinstance(expressions[0], exp.Column):
            raise _Skip("other construct", f"GROUP BY expression: {_snippet(group)}")
        alias = aliases.get(expressions[0].name.lower()) if not expressions[0].table else None
        group_by = alias or column_key(*scope.resolve(expressions[0]))

    order: list[tuple[str, bool]] = []
    if select.args.get("order") is not None:
        for ordered in select.args["order"].expressions:
            node = _unparen(ordered.this)
            if isinstance(node, exp.Column):
                alias = aliases.get(node.name.lower()) if not node.table else None
                name = alias or column_key(*scope.resolve(node))
            else:
                try:
                    aggregate = _aggregate_of(node, scope)
                except _Skip as skip:
                    raise _Skip("ORDER BY expression", f"ORDER BY expression: {_snippet(node)}") from skip
                if aggregate is None:
                    raise _Skip("ORDER BY expression", f"ORDER BY expression: {_snippet(node)}")
                name = add_aggregate(aggregate)
            order.append((name, not ordered.args.get("desc")))

    limit = None
    if select.args.get("limit") is not None:
        value = _literal_value(select.args["limit"].expression)
        if not isinstance(value, int) or value < 0:
            raise _Skip("other construct", f"LIMIT that is no count: {_snippet(select.args['limit'])}")
        limit = value

    rest = _endpoint(question, schema)
    plan = QueryPlan(
        db_id=question.db_id,
        question=question.index,
        text=question.text,
        sql=question.query,
        setup_sql=_setup_sql(select, scope, schema),
        columns=columns,
        filters=filters,
        group_by=group_by,
        aggregates=aggregates,
        order=order,
        limit=limit,
        select=selected,
        distinct=select.args.get("distinct") is not None,
        rest=rest,
    )
    _transform_conflicts(plan)
    return plan


def _guarded(question: Question, build: Callable[[Question, Schema], _T], schema: Schema) -> _T | Problem:
    where = f"question {question.index}"
    try:
        return build(question, schema)
    except _Skip as skip:
        return Problem(where, skip.kind, skip.reason)
    except Exception as exc:  # a compiler bug must cost one question, not the build
        return Problem(where, "other construct", f"{type(exc).__name__}: {exc}")


def plan_query(question: Question, schema: Schema) -> QueryPlan | Problem:
    """The question's QueryPlan, or a Problem naming the construct the decomposition does not cover."""
    return _guarded(question, _plan, schema)


# ---------------------------------------------------------------------------------------------------------------
# Gold sequences


class _Chain:
    """Builds a gold sequence: labels by the shared counter, each storing call reading the previous one's output."""

    def __init__(self) -> None:
        self.calls: list[GoldCall] = []
        self.source = f"${STARTING_TABLE}$"
        self.stored = 0

    def store(self, tool: str, **arguments: Any) -> None:
        prefix = label_prefix(tool)
        assert prefix is not None, tool
        label = f"{prefix}_{self.stored}"
        self.stored += 1
        self.calls.append(GoldCall(tool, {"data_source": self.source, **arguments}, label))
        self.source = f"${label}$"

    def fetch(self, tool: str, **arguments: Any) -> None:
        self.calls.append(GoldCall(tool, {"data_source": self.source, **arguments}, None))


def _transforms(plan: QueryPlan) -> list[Transform]:
    """One transform per distinct transform the filters need (filters sharing one reuse it)."""
    found: list[Transform] = []
    for f in plan.filters:
        if f.transform is not None and f.transform not in found:
            found.append(f.transform)
    return found


def _aggregate_arguments(aggregate: Aggregate) -> dict[str, Any]:
    return {} if aggregate.key is None else {"key_name": aggregate.key}


def slot_sequence(plan: QueryPlan) -> list[GoldCall]:
    """The SLOT gold calls: transforms, filters, grouping, aggregates, sorts (last key first), retrieve_data."""
    chain = _Chain()
    for t in _transforms(plan):
        chain.store("transform_data", key_name=t.key, operation_type=t.operation, operation_args=dict(t.args))
    for f in plan.filters:
        chain.store("filter_data", key_name=f.key, condition=f.condition, value=f.value)
    if plan.group_by is not None:
        chain.store("group_data_by", key_name=plan.group_by)
    for a in plan.aggregates:
        chain.store("aggregate_data", aggregation_type=a.aggregation, **_aggregate_arguments(a))
    for key, ascending in reversed(plan.order):  # stable sorts: the first ORDER BY key is applied last
        chain.store("sort_data", key_name=key, ascending=ascending)
    key_name: str | list[str] = plan.select[0] if len(plan.select) == 1 else list(plan.select)
    chain.fetch(
        "retrieve_data", key_name=key_name, distinct=plan.distinct, limit=-1 if plan.limit is None else plan.limit
    )
    return chain.calls


def sel_sequence(plan: QueryPlan) -> list[GoldCall]:
    """The SEL gold calls: the SLOT chain with categorical arguments bound into the tool names, then
    select_unique_values (DISTINCT), limit_data (LIMIT) and one getter per selected key."""
    chain = _Chain()
    for t in _transforms(plan):
        chain.store(f"transform_data_{t.operation}", key_name=t.key, **t.args)
    for f in plan.filters:
        chain.store(f"select_data_{f.condition}", key_name=f.key, value=f.value)
    if plan.group_by is not None:
        chain.store("group_data_by", key_name=plan.group_by)
    for a in plan.aggregates:
        chain.store(f"aggregate_data_{a.aggregation}", **_aggregate_arguments(a))
    for key, ascending in reversed(plan.order):
        chain.store("sort_data_ascending" if ascending else "sort_data_descending", key_name=key)
    if plan.distinct:
        chain.store("select_unique_values", key_name=list(plan.select))
    if plan.limit is not None:
        chain.store("limit_data", n=plan.limit)
    for key in plan.select:
        chain.fetch(getter_name(key))
    return chain.calls


def labels_of(calls: list[GoldCall]) -> list[str | None]:
    """The label the toolbox gives each call (shared counter over storing calls); None for data-returning calls."""
    labels: list[str | None] = []
    stored = 0
    for call in calls:
        prefix = label_prefix(call.tool)
        if prefix is None:
            labels.append(None)
        else:
            labels.append(f"{prefix}_{stored}")
            stored += 1
    return labels


# ---------------------------------------------------------------------------------------------------------------
# REST endpoints


def _snake(text: str) -> str:
    """snake_case, lower-cased: "PetType" -> "pet_type", "Song release year" -> "song_release_year"."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _words(text: str) -> str:
    """A natural name as name words: lower-cased, [a-z0-9] runs joined by ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _join_words(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


_AGGREGATE_WORDS = {  # (description words, name word)
    "count": ("number of", "count"),
    "count_distinct": ("number of distinct", "count_distinct"),
    "sum": ("total", "total"),
    "mean": ("average", "average"),
    "min": ("minimum", "min"),
    "max": ("maximum", "max"),
}
_OPERATOR_WORDS = {
    "equal_to": "is",
    "not_equal_to": "is not",
    "greater_than": "is greater than",
    "less_than": "is less than",
    "greater_than_equal_to": "is at least",
    "less_than_equal_to": "is at most",
}
_BOUND_WORDS = {
    "not_equal_to": " (the value to exclude)",
    "greater_than": " (exclusive lower bound)",
    "less_than": " (exclusive upper bound)",
    "greater_than_equal_to": " (inclusive lower bound)",
    "less_than_equal_to": " (inclusive upper bound)",
}
_QUALIFIERS = {  # how a parameter is compared, as a word of the endpoint name
    "equal_to": "",
    "not_equal_to": "_other_than",
    "greater_than": "_above",
    "less_than": "_below",
    "greater_than_equal_to": "_at_least",
    "less_than_equal_to": "_at_most",
}
_LIKE_QUALIFIERS = {"contains": "_containing", "starts": "_starting", "ends": "_ending", "pattern": "_like"}
_TRANSFORM_WORDS = {exp.Lower: "lower-cased", exp.Upper: "upper-cased", exp.Round: "rounded", exp.Substring: "part of"}


class _Namer:
    """Natural-language phrases for the parts of one query (its scope resolves columns to Spider's names)."""

    def __init__(self, scope: _Scope, schema: Schema):
        self.scope = scope
        self.schema = schema
        self.params: dict[str, EndpointParam] = {}
        self.like_forms: dict[str, str] = {}  # parameter -> contains | starts | ends | pattern
        self.qualifiers: dict[str, str] = {}  # parameter -> how it is compared, for the endpoint name

    def column(self, node: exp.Column) -> tuple[str, str]:
        """(natural name, name words) of a column; its raw name when it does not resolve."""
        found = self.scope.try_resolve(node)
        if found is None:
            return node.name.replace("_", " ").lower(), _words(node.name)
        natural = self.schema.column_names.get(found, found[1])
        return natural, _words(natural)

    def table(self, table: str) -> str:
        return self.schema.table_names.get(table, table)

    def owner(self, node: exp.Expr) -> str:
        """The natural name of the table a column (or the first column of an expression) belongs to."""
        column = node if isinstance(node, exp.Column) else node.find(exp.Column)
        found = self.scope.try_resolve(column) if column is not None else None
        if found is not None:
            return self.table(found[0])
        return self.table(self.scope.refs[0].table) if self.scope.refs else "record"

    def item(self, node: exp.Expr) -> tuple[str, str]:
        """(description phrase, name words) of a projected, compared or sorted expression."""
        alias = ""
        if isinstance(node, exp.Alias):
            alias, node = node.alias, node.this
        node = _unparen(node)
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                return f"all fields of {node.table}", "all"
            return self.column(node)
        if isinstance(node, exp.Star):
            return "all fields", "all"
        if isinstance(node, exp.Placeholder):
            param = self.params[node.name]
            shared = sum(p.title == param.title for p in self.params.values()) > 1
            return f"the given {param.name.replace('_', ' ') if shared else param.title.lower()}", param.name
        if _is_literal(node):
            value = _literal_value(node)
            return (repr(value) if isinstance(value, str) else str(value)), _words(str(value))
        aggregation = _AGGREGATE_NODES.get(type(node))
        if aggregation is not None:
            argument = node.this
            if isinstance(argument, exp.Star):
                return "number of records", "count"
            if isinstance(node, exp.Count) and isinstance(argument, exp.Distinct):
                aggregation = "count_distinct"
                argument = argument.expressions[0] if len(argument.expressions) == 1 else argument
            words, name = _AGGREGATE_WORDS[aggregation]
            phrase, inner = self.item(argument)
            return f"{words} {phrase}", f"{name}_{inner}"
        transform = next((w for t, w in _TRANSFORM_WORDS.items() if isinstance(node, t)), None)
        if transform is not None:
            phrase, inner = self.item(node.this)
            return f"{transform} {phrase}", inner
        columns = [self.column(c) for c in node.find_all(exp.Column)]
        unique = list(dict.fromkeys(columns))
        phrase = f"a value computed from {_join_words([c[0] for c in unique])}" if unique else "a computed value"
        name = _words(alias) if alias else "_".join(c[1] for c in unique) or "value"
        return phrase, name

    def joins(self, select: exp.Select) -> str:
        """How the joined tables are matched, in words (two joins of the same tables on other columns differ)."""
        pairs = []
        for join in select.args.get("joins") or []:
            on = join.args.get("on")
            for conjunct in _conjuncts(on) if on is not None else []:
                sides = [_unparen(conjunct.this), _unparen(conjunct.expression)] if isinstance(conjunct, exp.EQ) else []
                if len(sides) == 2 and all(isinstance(side, exp.Column) for side in sides):
                    left, right = (f"{_possessive(self.owner(side))} {self.item(side)[0]}" for side in sides)
                    pairs.append(f"{left} with {right}")
                else:
                    pairs.append(self.condition(conjunct))
        return f" (matching {_join_words(pairs)})" if pairs else ""

    def condition(self, node: exp.Expr) -> str:
        """A WHERE / HAVING condition in words."""
        node = _unparen(node)
        if isinstance(node, exp.And):
            return f"{self.condition(node.this)} and {self.condition(node.expression)}"
        if isinstance(node, exp.Or):
            return f"({self.condition(node.this)} or {self.condition(node.expression)})"
        if isinstance(node, exp.Not):
            inner = _unparen(node.this)
            if isinstance(inner, exp.Is):
                return f"{self.item(inner.this)[0]} is present"
            return f"not ({self.condition(inner)})"
        if isinstance(node, exp.Is):
            return f"{self.item(node.this)[0]} is missing"
        subject = self.item(node.this)[0] if isinstance(node.this, exp.Expr) else ""
        negation = " not" if _is_negated(node) else ""
        if isinstance(node, exp.Between):
            low, high = self.item(node.args["low"])[0], self.item(node.args["high"])[0]
            return f"{subject} is{negation} between {low} and {high}"
        if isinstance(node, exp.In):
            values = [self.item(v)[0] for v in node.expressions]
            return f"{subject} is{negation} one of {_join_words(values)}"
        if isinstance(node, exp.Like):
            pattern = _unparen(node.expression)
            placeholder = pattern.find(exp.Placeholder)
            form = "pattern"
            if placeholder is not None:
                value, form = self.item(placeholder)[0], self.like_forms.get(placeholder.name, "pattern")
            else:
                value = self.item(pattern)[0]
            if negation:
                verb = {"contains": "does not contain", "starts": "does not start with", "ends": "does not end with"}
            else:
                verb = {"contains": "contains", "starts": "starts with", "ends": "ends with"}
            return f"{subject} {verb.get(form, 'does not match' if negation else 'matches')} {value}"
        condition = _COMPARISONS.get(type(node))
        if condition is not None:
            return f"{subject} {_OPERATOR_WORDS[condition]} {self.item(node.expression)[0]}"
        return f"a condition on {self.item(node)[0]}"


def _parameterize(where: exp.Expr, namer: _Namer) -> list[EndpointParam]:
    """Replace the literals WHERE compares with named placeholders (in textual order), recording each parameter."""
    params: list[EndpointParam] = []

    def add(literal: exp.Expr, subject: exp.Expr, prefix: str, extra: str, value: Any, qualifier: str) -> exp.Expr:
        column = subject if isinstance(subject, exp.Column) else subject.find(exp.Column)
        if column is not None and (found := namer.scope.try_resolve(column)) is not None:
            base, natural = _snake(found[1]), namer.schema.column_names.get(found, found[1])
        elif column is not None:
            base, natural = _snake(column.name), column.name.replace("_", " ").lower()
        else:
            base, natural = "value", "value"
        base = f"{prefix}{base}" or "value"
        if base[0].isdigit() or keyword.iskeyword(base):  # the name must serve as an identifier (SQL, Python)
            base = f"{base}_value" if not base[0].isdigit() else f"value_{base}"
        name, n = base, 1
        while name in namer.params:
            n += 1
            name = f"{base}_{n}"
        kind = "string" if isinstance(value, str) else "integer" if isinstance(value, int) else "number"
        title = natural[:1].upper() + natural[1:]
        words = {"min_": "Lowest ", "max_": "Highest "}.get(prefix, "")
        shown = f"{words}{natural}" if words else title
        description = f"{shown} of the {namer.owner(subject)}{extra}"
        param = EndpointParam(name, kind, description, title if not words else shown, value)
        namer.params[name] = param
        namer.qualifiers[name] = qualifier
        params.append(param)
        placeholder = exp.Placeholder(this=name)
        literal.replace(placeholder)
        return placeholder

    for node in list(where.walk(bfs=False)):
        if isinstance(node, exp.Between):
            for bound, prefix in (("low", "min_"), ("high", "max_")):
                value = _literal_value(node.args.get(bound))
                if value is not _NO_VALUE:
                    add(node.args[bound], node.this, prefix, " (inclusive)", value, "")
        elif isinstance(node, exp.In) and not node.args.get("query"):
            for item in list(node.expressions):
                value = _literal_value(item)
                if value is not _NO_VALUE:
                    add(item, node.this, "", " (one of the accepted values)", value, "")
        elif isinstance(node, exp.Like):
            pattern = _unparen(node.expression)
            if not (isinstance(pattern, exp.Literal) and pattern.is_string) or node.args.get("escape") is not None:
                continue
            text = pattern.this
            # a plain "%text%" / "text%" / "%text" becomes a text parameter, as a hand-written API would take it
            inner = text.strip("%")
            plain = inner and not re.search(r"[%_]", inner)
            form = "pattern"
            if plain and text == f"%{inner}%":
                form = "contains"
            elif plain and text == f"{inner}%":
                form = "starts"
            elif plain and text == f"%{inner}":
                form = "ends"
            extra = {
                "contains": " (text it contains)",
                "starts": " (text it starts with)",
                "ends": " (text it ends with)",
                "pattern": " (SQL LIKE pattern: % matches any text, _ one character)",
            }[form]
            value = inner if form != "pattern" else text
            placeholder = add(pattern, node.this, "", extra, value, _LIKE_QUALIFIERS[form])
            namer.like_forms[placeholder.name] = form
            if form != "pattern":
                wrapped: exp.Expr = placeholder.copy()
                if form in ("contains", "ends"):
                    wrapped = exp.DPipe(this=exp.Literal.string("%"), expression=wrapped)
                if form in ("contains", "starts"):
                    wrapped = exp.DPipe(this=wrapped, expression=exp.Literal.string("%"))
                placeholder.replace(wrapped)
        elif type(node) in _COMPARISONS:
            condition = _COMPARISONS[type(node)]
            left, right = _unparen(node.this), _unparen(node.expression)
            if _is_literal(right) and not _is_literal(left):
                add(
                    node.expression,
                    left,
                    "",
                    _BOUND_WORDS.get(condition, ""),
                    _literal_value(right),
                    _QUALIFIERS[condition],
                )
            elif _is_literal(left) and not _is_literal(right):
                condition = _FLIPPED[condition]
                add(node.this, right, "", _BOUND_WORDS.get(condition, ""), _literal_value(left), _QUALIFIERS[condition])
    return params


def _having_words(condition: exp.Expr, namer: _Namer) -> str:
    """Name words of a HAVING condition: ``count_above_10`` for COUNT(*) > 10; ``filtered`` when not that simple."""
    words = []
    for conjunct in _conjuncts(condition):
        kind = _COMPARISONS.get(type(conjunct))
        value = _literal_value(conjunct.expression) if kind else _NO_VALUE
        if kind is None or value is _NO_VALUE:
            return "filtered"
        words.append(f"{namer.item(conjunct.this)[1]}{_QUALIFIERS[kind] or '_equal_to'}_{_words(str(value))}")
    return "_and_".join(words)


def _fit_name(core: str, db_id: str, suffix: str = "") -> str:
    """``get_{core}_{db_id}{suffix}`` within MAX_NAME: an over-long core loses its end and gains a short hash."""
    db_id = re.sub(r"[^A-Za-z0-9_]", "_", db_id)
    name = f"get_{core}_{db_id}{suffix}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:6]
    tail = f"_{digest}_{db_id}{suffix}"
    if len(tail) + 5 > MAX_NAME:  # an extremely long database name: shorten it too
        tail = f"_{digest}_{db_id[: MAX_NAME - len(suffix) - 20]}{suffix}"
    head = f"get_{core}"[: MAX_NAME - len(tail)].rstrip("_")
    return head + tail


def _endpoint(question: Question, schema: Schema) -> Endpoint:
    tree = _parse(question.query)
    select = _top_select(tree)
    scope = _Scope(select, schema)
    _literalize(select, scope)
    namer = _Namer(scope, schema)
    where = select.args.get("where")
    params = _parameterize(where, namer) if where is not None else []
    main = scope.refs[0].table if scope.refs else None
    first_column = next((c for item in select.expressions for c in item.find_all(exp.Column)), None)
    if first_column is not None and (found := scope.try_resolve(first_column)) is not None:
        main = found[0]
    table_words = _words(main) if main else "data"

    items = [namer.item(item) for item in select.expressions]
    distinct = select.args.get("distinct") is not None
    what_name = ("distinct_" if distinct else "") + ("_".join(name for _, name in items) or "data")
    what = ("distinct " if distinct else "") + _join_words([phrase for phrase, _ in items])
    tables = _join_words(list(dict.fromkeys(namer.table(ref.table) for ref in scope.refs)))
    description = f"Get {what}" + (f" from {tables}" if tables else "") + namer.joins(select)
    parts: list[str] = []

    group = select.args.get("group")
    if group is not None:
        grouped = [namer.item(g) for g in group.expressions]
        description += f", per {_join_words([g[0] for g in grouped])}"
        parts.append("per_" + "_".join(g[1] for g in grouped))
    if params:
        simple = (
            all(
                isinstance(c, exp.EQ) and isinstance(_unparen(c.expression), exp.Placeholder)
                for c in _conjuncts(where.this)
            )
            if where is not None
            else False
        )
        if simple:
            description += f", for a given {_join_words([p.title.lower() for p in params])}"
        else:
            description += f", where {namer.condition(where.this)}" if where is not None else ""
        parts.append("by_" + "_and_".join(p.name + namer.qualifiers[p.name] for p in params))
    elif where is not None:
        description += f", where {namer.condition(where.this)}"
    having = select.args.get("having")
    if having is not None:
        description += f", keeping groups where {namer.condition(having.this)}"
        parts.append("having_" + _having_words(having.this, namer))
    order = select.args.get("order")
    if order is not None:
        keys = [(namer.item(o.this), bool(o.args.get("desc"))) for o in order.expressions]
        description += ", sorted by " + _join_words(
            [f"{phrase} ({'descending' if desc else 'ascending'})" for (phrase, _), desc in keys]
        )
    limit = select.args.get("limit")
    count = _words(str(_literal_value(limit.expression))) if limit is not None else ""
    if order is not None:
        (_, first_name), first_desc = keys[0]
        if limit is not None:  # "top_3_by_age": the 3 highest ages; "bottom_3_by_age": the 3 lowest
            parts.append(f"{'top' if first_desc else 'bottom'}_{count}_by_{first_name}")
        else:
            parts.append(f"sorted_by_{first_name}" + ("_desc" if first_desc else ""))
    elif limit is not None:
        parts.append(f"limit_{count}")
    if limit is not None:
        plural = "row" if count == "1" else f"{_snippet(limit.expression)} rows"
        description += f", first {plural} only"
    offset = select.args.get("offset")
    if offset is not None:
        description += f", skipping the first {_snippet(offset.expression)}"
        parts.append(f"offset_{_words(_snippet(offset.expression))}")

    rest = "_".join([what_name, *parts])
    name = _fit_name(f"{table_words}_{rest}", question.db_id)
    sql = normalize_identifiers(select, dialect="sqlite").sql("sqlite")
    return Endpoint(name, f"/v1/{question.db_id}/{table_words}/{rest}", description, question.db_id, sql, params)


def rest_endpoint(question: Question, schema: Schema) -> Endpoint | Problem:
    """The question's REST endpoint (any single SELECT without nesting), or a Problem."""
    return _guarded(question, _endpoint, schema)


def endpoint_key(endpoint: Endpoint) -> tuple[str, str]:
    """What makes two endpoints the same tool: the database and the parameterized SQL."""
    return endpoint.database, endpoint.sql


def dedupe(endpoints: list[Endpoint]) -> dict[tuple[str, str], Endpoint]:
    """Merge endpoints with the same parameterized SQL on the same database (one tool serves them all) and make the
    names and paths of different ones unique (``_2``, ``_3``, in input order). Keyed by ``(database, sql)``:
    the same SQL on two databases is two tools (spider-dev's ``SELECT count(*) FROM singer`` is in two)."""
    final: dict[tuple[str, str], Endpoint] = {}
    names: set[str] = set()
    paths: set[str] = set()
    for endpoint in endpoints:
        key = endpoint_key(endpoint)
        if key in final:
            continue
        name, path, n = endpoint.name, endpoint.path, 1
        while name in names or path in paths:
            n += 1
            name, path = _with_suffix(endpoint, f"_{n}"), f"{endpoint.path}_{n}"
        names.add(name)
        paths.add(path)
        final[key] = replace(endpoint, name=name, path=path)
    return final


def _with_suffix(endpoint: Endpoint, suffix: str) -> str:
    """The endpoint's name + ``suffix`` within MAX_NAME, the database part kept at the end."""
    ending = "_" + re.sub(r"[^A-Za-z0-9_]", "_", endpoint.database)
    if endpoint.name.startswith("get_") and endpoint.name.endswith(ending):
        return _fit_name(endpoint.name[4 : -len(ending)], ending[1:], suffix)
    name = endpoint.name + suffix
    return name if len(name) <= MAX_NAME else endpoint.name[: MAX_NAME - len(suffix)] + suffix
