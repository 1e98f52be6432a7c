"""Compile a question into its ``QueryPlan`` (Live API-Bench's SLOT and SEL formulations, §3 and appendix D): the
gold SQL decomposed into filters, one grouping key, aggregates, sorts, a limit and a projection over one *starting
table*, which holds every column of every FROM/JOIN table, named ``{table}_{column}``, and which a hidden
initialization step builds by running ``setup_sql``. ``sequences.py`` turns a plan into gold calls.

Nothing here raises on bad input: a query the decomposition does not cover becomes a ``Problem`` whose ``kind`` is
one of ``SKIP_KINDS`` (the build counts them) and whose reason names the construct.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from undertow.env_core.liveapi.endpoints import possessive
from undertow.env_core.liveapi.parsing import (
    AGGREGATE_NODES,
    COMPARISONS,
    FLIPPED,
    NO_VALUE,
    Scope,
    Skip,
    conjuncts,
    guarded,
    is_literal,
    is_negated,
    literal_value,
    parse_select,
    snippet,
    unparen,
)
from undertow.env_core.liveapi.vocabulary import Column, aggregate_output, column_key
from undertow.env_core.spider import Problem, Question, Schema


@dataclass(frozen=True)
class Transform:
    """A function the WHERE side applies to a column, which SLOT runs as a transform before filtering."""

    key: str
    operation: str  # one of TRANSFORMS
    args: dict[str, Any]  # substring: start_index, end_index (0-based, end exclusive); round: digits


@dataclass(frozen=True)
class Filter:
    """One WHERE conjunct: the key compared, how, and with which literal."""

    key: str
    condition: str  # one of CONDITIONS
    value: Any  # the SQL literal as a Python value
    transform: Transform | None = None  # the WHERE side was SUBSTR / LOWER / UPPER / ROUND of the column


@dataclass(frozen=True)
class Aggregate:
    """One aggregate of the query and the key it adds (``aggregate_output``)."""

    aggregation: str  # one of AGGREGATIONS
    key: str | None  # None only for COUNT(*)
    output: str


@dataclass
class QueryPlan:
    """A question decomposed into the steps of a SLOT / SEL sequence over its starting table."""

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


# ---------------------------------------------------------------------------------------------------------------
# The starting table


def describe_column(schema: Schema, table: str, column: str) -> str:
    """A column's description from Spider's natural names: "singer's age" (the paper's column descriptions)."""
    natural = schema.column_names.get((table, column), column)
    return f"{possessive(schema.table_names.get(table, table))} {natural}"


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


def _starting_columns(scope: Scope, schema: Schema) -> list[Column]:
    return [column for ref in scope.refs for column in table_columns(schema, ref.table)]


def _setup_sql(select: exp.Select, scope: Scope, schema: Schema) -> str:
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
        start, length = literal_value(node.args.get("start")), literal_value(node.args.get("length"))
        # SQLite's SUBSTR counts from 1, negative starts from the end: only the plain forward slice maps
        if not (isinstance(start, int) and isinstance(length, int) and start >= 1 and length >= 0):
            return None
        return node.this, "substring", {"start_index": start - 1, "end_index": start - 1 + length}
    if isinstance(node, exp.Round):
        digits = literal_value(node.args.get("decimals")) if node.args.get("decimals") is not None else 0
        if not isinstance(digits, int):
            return None
        return node.this, "round", {"digits": digits}
    return None


def _filters_of(where: exp.Expr, scope: Scope) -> list[Filter]:
    filters: list[Filter] = []
    for conjunct in conjuncts(where):
        if isinstance(conjunct, exp.Or):
            raise Skip("OR in WHERE", f"OR in WHERE: {snippet(conjunct)}")
        if isinstance(conjunct, exp.Not | exp.Is) or is_negated(conjunct):
            raise Skip("NOT / IS NULL", f"NOT / IS NULL in WHERE: {snippet(conjunct)}")
        if isinstance(conjunct, exp.Between):
            low, high = literal_value(conjunct.args.get("low")), literal_value(conjunct.args.get("high"))
            if low is NO_VALUE or high is NO_VALUE:
                raise Skip("other construct", f"BETWEEN with non-literal bounds: {snippet(conjunct)}")
            key, transform = _filter_side(conjunct.this, scope, conjunct)
            filters.append(Filter(key, "greater_than_equal_to", low, transform))
            filters.append(Filter(key, "less_than_equal_to", high, transform))
            continue
        if isinstance(conjunct, exp.Like):
            if conjunct.args.get("escape") is not None:
                raise Skip("other construct", f"LIKE with ESCAPE: {snippet(conjunct)}")
            condition = "like"
        elif type(conjunct) in COMPARISONS:
            condition = COMPARISONS[type(conjunct)]
        else:
            raise Skip("other construct", f"{type(conjunct).__name__} in WHERE: {snippet(conjunct)}")
        left, right = unparen(conjunct.this), unparen(conjunct.expression)
        if is_literal(left) and not is_literal(right) and condition != "like":
            left, right, condition = right, left, FLIPPED[condition]
        value = literal_value(right)
        if value is NO_VALUE:
            if any(True for _ in right.find_all(exp.Column)) and any(True for _ in left.find_all(exp.Column)):
                raise Skip("column compared with column", f"column compared with column: {snippet(conjunct)}")
            raise Skip("other construct", f"comparison with a non-literal value: {snippet(conjunct)}")
        key, transform = _filter_side(left, scope, conjunct)
        filters.append(Filter(key, condition, value, transform))
    return filters


def _filter_side(node: exp.Expr, scope: Scope, conjunct: exp.Expr) -> tuple[str, Transform | None]:
    node = unparen(node)
    if isinstance(node, exp.Column):
        return column_key(*scope.resolve(node)), None
    if isinstance(node, exp.Func):
        found = _transform_of(node)
        if found is None:
            raise Skip("function in WHERE", f"function in WHERE: {snippet(conjunct)}")
        column, operation, args = found
        key = column_key(*scope.resolve(column))
        return key, Transform(key, operation, args)
    raise Skip("other construct", f"expression in WHERE: {snippet(conjunct)}")


def _aggregate_of(node: exp.Expr, scope: Scope) -> Aggregate | None:
    """The Aggregate of COUNT(*) / COUNT([DISTINCT] col) / SUM / AVG / MIN / MAX(col); None for other nodes;
    Skip("expression in SELECT") for an aggregate over something else than one column."""
    aggregation = AGGREGATE_NODES.get(type(node))
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
        raise Skip("expression in SELECT", f"aggregate over an expression: {snippet(node)}")
    if isinstance(argument, exp.Column) and not node.expressions:
        key = column_key(*scope.resolve(argument))
        return Aggregate(aggregation, key, aggregate_output(aggregation, key))
    raise Skip("expression in SELECT", f"aggregate over an expression: {snippet(node)}")


def _transform_conflicts(plan: QueryPlan) -> None:
    """A transform rewrites its column in place: the column may then serve nothing but identically transformed
    filters (else the projection, sort or another filter would see the changed values)."""
    for transform in transforms(plan):
        key = transform.key
        others = [f for f in plan.filters if f.key == key and f.transform != transform]
        used = key in plan.select or key == plan.group_by or any(k == key for k, _ in plan.order)
        if others or used or any(a.key == key for a in plan.aggregates):
            raise Skip(
                "function in WHERE",
                f"function in WHERE: {transform.operation.upper()} of {key}, which the query also uses untransformed",
            )


def _plan(question: Question, schema: Schema) -> QueryPlan:
    select, scope = parse_select(question.query, schema)
    if select.args.get("from_") is None:
        raise Skip("no FROM table", "SELECT without FROM")
    if scope.unknown:
        raise Skip("unknown column", f"unknown table {scope.unknown[0]!r}")
    sources = [select.args["from_"].this, *(j.this for j in select.args.get("joins") or [])]
    if not all(isinstance(s, exp.Table) for s in sources):
        raise Skip("other construct", "a FROM source that is no table")
    tables = [ref.table for ref in scope.refs]
    if len(set(tables)) != len(tables):
        raise Skip("self join", f"self join: table {next(t for t in tables if tables.count(t) > 1)!r} twice")
    if select.args.get("offset") is not None:
        raise Skip("OFFSET", f"OFFSET: {snippet(select.args['offset'])}")
    if select.args.get("having") is not None:
        raise Skip("HAVING", f"HAVING: {snippet(select.args['having'])}")
    columns = _starting_columns(scope, schema)
    keys = [c.key for c in columns]
    if len(set(keys)) != len(keys):
        raise Skip("other construct", "two columns of the joined tables get the same key")

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
            raise Skip("expression in SELECT", f"table star in SELECT: {snippet(node)}")
        if isinstance(node, exp.Column):
            output = column_key(*scope.resolve(node))
        else:
            aggregate = _aggregate_of(node, scope)
            if aggregate is None:
                raise Skip("expression in SELECT", f"expression in SELECT: {snippet(node)}")
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
            raise Skip("GROUP BY several columns", f"GROUP BY several columns: {snippet(group)}")
        if not isinstance(expressions[0], exp.Column):
            raise Skip("other construct", f"GROUP BY expression: {snippet(group)}")
        alias = aliases.get(expressions[0].name.lower()) if not expressions[0].table else None
        group_by = alias or column_key(*scope.resolve(expressions[0]))

    order: list[tuple[str, bool]] = []
    if select.args.get("order") is not None:
        for ordered in select.args["order"].expressions:
            node = unparen(ordered.this)
            if isinstance(node, exp.Column):
                alias = aliases.get(node.name.lower()) if not node.table else None
                name = alias or column_key(*scope.resolve(node))
            else:
                try:
                    aggregate = _aggregate_of(node, scope)
                except Skip as skip:
                    raise Skip("ORDER BY expression", f"ORDER BY expression: {snippet(node)}") from skip
                if aggregate is None:
                    raise Skip("ORDER BY expression", f"ORDER BY expression: {snippet(node)}")
                name = add_aggregate(aggregate)
            order.append((name, not ordered.args.get("desc")))

    limit = None
    if select.args.get("limit") is not None:
        value = literal_value(select.args["limit"].expression)
        if not isinstance(value, int) or value < 0:
            raise Skip("other construct", f"LIMIT that is no count: {snippet(select.args['limit'])}")
        limit = value

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
    )
    _transform_conflicts(plan)
    return plan


def plan_query(question: Question, schema: Schema) -> QueryPlan | Problem:
    """The question's QueryPlan, or a Problem naming the construct the decomposition does not cover."""
    return guarded(question, _plan, schema)


def transforms(plan: QueryPlan) -> list[Transform]:
    """One transform per distinct transform the filters need (filters sharing one reuse it)."""
    found: list[Transform] = []
    for f in plan.filters:
        if f.transform is not None and f.transform not in found:
            found.append(f.transform)
    return found
