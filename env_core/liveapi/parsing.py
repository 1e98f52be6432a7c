"""SQL parsing shared by the liveapi compilers (``plan.py`` for SLOT and SEL, ``endpoints.py`` for REST): the top-level
SELECT (``parse_select``) or any query with the scope of each of its SELECTs (``parse_query``), FROM/JOIN scopes and
aliases, Spider's double-quoted strings, literals, conjuncts, and ``Skip``, which a construct the compilers do not
cover raises and ``guarded`` turns into a ``Problem``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlglot
from sqlglot import exp

from undertow.env_core.spider import Problem, Question, Schema

_T = TypeVar("_T")


class Skip(Exception):
    """A construct the compilers do not cover: ``kind`` is one of ``SKIP_KINDS``; ``guarded`` makes it a Problem."""

    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "equal_to",
    exp.NEQ: "not_equal_to",
    exp.GT: "greater_than",
    exp.LT: "less_than",
    exp.GTE: "greater_than_equal_to",
    exp.LTE: "less_than_equal_to",
}
FLIPPED = {  # literal on the left: 5 < age is age > 5
    "equal_to": "equal_to",
    "not_equal_to": "not_equal_to",
    "greater_than": "less_than",
    "less_than": "greater_than",
    "greater_than_equal_to": "less_than_equal_to",
    "less_than_equal_to": "greater_than_equal_to",
}
AGGREGATE_NODES: dict[type[exp.Expr], str] = {
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "mean",
    exp.Min: "min",
    exp.Max: "max",
}


def snippet(node: exp.Expr) -> str:
    """A node's SQL, cut to 80 characters, for a skip reason."""
    text = node.sql("sqlite")
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass
class _TableRef:
    table: str  # schema name
    ref: str  # how the query refers to it: its alias, or its name as written


class Scope:
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
        """(table, column) in schema spelling; Skip("unknown column") when unknown or ambiguous."""
        name = column.name
        if column.table:
            table = self.aliases.get(column.table.lower())
            if table is None:
                raise Skip("unknown column", f"unknown table or alias {column.table!r} in {snippet(column)}")
            found = _find_column(self.schema, table, name)
            if found is None:
                raise Skip("unknown column", f"table {table!r} has no column {name!r}")
            return table, found
        matches = [(ref.table, c) for ref in self.refs if (c := _find_column(self.schema, ref.table, name))]
        if len(matches) != 1:
            why = "is ambiguous" if matches else "is in none of the FROM tables"
            raise Skip("unknown column", f"column {name!r} {why}")
        return matches[0]

    def try_resolve(self, column: exp.Column) -> tuple[str, str] | None:
        """(table, column) in schema spelling, or None when unknown or ambiguous."""
        try:
            return self.resolve(column)
        except Skip:
            return None

    def has_column(self, name: str) -> bool:
        """Whether a FROM/JOIN table has a column by this name (in any case)."""
        return any(_find_column(self.schema, ref.table, name) for ref in self.refs)


def _find_column(schema: Schema, table: str, name: str) -> str | None:
    lowered = name.lower()
    return next((c for c in schema.tables.get(table, []) if c.lower() == lowered), None)


def _parse(query: str) -> exp.Expr:
    """The query's syntax tree (SQLite dialect); Skip("parse error") when sqlglot cannot read it."""
    try:
        tree = sqlglot.parse_one(query, read="sqlite")
    except sqlglot.errors.SqlglotError as exc:
        raise Skip("parse error", f"sqlglot: {str(exc).splitlines()[0]}") from exc
    if not isinstance(tree, exp.Expr):
        raise Skip("parse error", "empty query")
    return tree


def _top_select(tree: exp.Expr) -> exp.Select:
    """The query's single SELECT, or Skip for set operations and nested SELECTs."""
    if isinstance(tree, exp.SetOperation):
        raise Skip("set operation", f"{type(tree).__name__.upper()} of two SELECTs")
    if not isinstance(tree, exp.Select):
        raise Skip("other construct", f"not a SELECT statement: {type(tree).__name__}")
    if tree.args.get("with_") is not None:
        raise Skip("nested SELECT", "WITH clause (common table expression)")
    nested = [node for node in tree.find_all(exp.Select, exp.SetOperation) if node is not tree]
    if nested:
        raise Skip("nested SELECT", f"nested SELECT: {snippet(nested[0])}")
    return tree


def _literalize(select: exp.Select, scope: Scope) -> None:
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


def parse_select(query: str, schema: Schema) -> tuple[exp.Select, Scope]:
    """The query's single top-level SELECT and its scope, Spider's double-quoted strings read as SQLite reads them;
    Skip for a query that is no single SELECT."""
    select = _top_select(_parse(query))
    scope = Scope(select, schema)
    _literalize(select, scope)
    return select, scope


QUERY_NODES = (exp.Select, exp.SetOperation)


def own_nodes(query: exp.Expr) -> Iterator[exp.Expr]:
    """The nodes of one SELECT (or set operation) outside the queries nested in it, in textual order; a nested
    query's root is yielded but not entered."""
    return query.walk(bfs=False, prune=lambda node: node is not query and isinstance(node, QUERY_NODES))


def parse_query(query: str, schema: Schema) -> tuple[exp.Expr, dict[int, Scope]]:
    """Any single query (nested SELECTs and set operations included) and the scope of each of its SELECTs (keyed by
    ``id``), Spider's double-quoted strings read as SQLite reads them; Skip for no SELECT, a WITH clause or a table
    the schema lacks. ``parse_select`` is the single-SELECT form the decomposition reads."""
    tree = _parse(query)
    if not isinstance(tree, QUERY_NODES):
        raise Skip("other construct", f"not a SELECT statement: {type(tree).__name__}")
    if tree.find(exp.With) is not None:
        raise Skip("other construct", "WITH clause (common table expression)")
    for table in tree.find_all(exp.Table):
        if schema.table_of(table.name) is None:
            raise Skip("unknown column", f"unknown table {table.name!r}")
    selects = [node for node in tree.walk(bfs=False) if isinstance(node, exp.Select)]
    scopes = {id(select): Scope(select, schema) for select in selects}
    for select in selects:
        # a name resolves in its own SELECT or in one it is nested in (a correlated subquery)
        enclosing = [scopes[id(select)]]
        parent = select.parent
        while parent is not None:
            if isinstance(parent, exp.Select):
                enclosing.append(scopes[id(parent)])
            parent = parent.parent
        aliases = {a.alias.lower() for a in select.expressions if isinstance(a, exp.Alias)}
        for column in [n for n in own_nodes(select) if isinstance(n, exp.Column)]:
            identifier = column.this
            if not (isinstance(identifier, exp.Identifier) and identifier.quoted) or column.table:
                continue
            if identifier.name.lower() in aliases or any(s.has_column(identifier.name) for s in enclosing):
                continue
            column.replace(exp.Literal.string(identifier.name))
    return tree, scopes


NO_VALUE = object()


def literal_value(node: exp.Expr | None) -> Any:
    """A literal's Python value (str / int / float, negatives included); NO_VALUE when the node is none."""
    while isinstance(node, exp.Paren):
        node = node.this
    sign = 1
    if isinstance(node, exp.Neg):
        sign, node = -1, node.this
    if not isinstance(node, exp.Literal):
        return NO_VALUE
    if node.is_string:
        return NO_VALUE if sign < 0 else node.this
    text = node.this
    try:
        return sign * int(text)
    except ValueError:
        try:
            return sign * float(text)
        except ValueError:
            return NO_VALUE


def is_literal(node: exp.Expr | None) -> bool:
    """Whether the node is a literal (``literal_value`` reads it)."""
    return literal_value(node) is not NO_VALUE


def unparen(node: exp.Expr) -> exp.Expr:
    """The node inside any parentheses."""
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def conjuncts(node: exp.Expr) -> Iterator[exp.Expr]:
    """The terms of a condition's top-level ANDs, in textual order."""
    node = unparen(node)
    if isinstance(node, exp.And):
        yield from conjuncts(node.this)
        yield from conjuncts(node.expression)
    else:
        yield node


def is_negated(node: exp.Expr) -> bool:
    """Whether a predicate carries NOT (``NOT LIKE``, ``NOT IN``, ``NOT BETWEEN``)."""
    return bool(node.args.get("negate"))


def guarded(question: Question, build: Callable[[Question, Schema], _T], schema: Schema) -> _T | Problem:
    """``build(question, schema)``, or the Problem that says why it could not be built (a ``Skip``'s kind and
    reason; any other exception as "other construct")."""
    where = f"question {question.index}"
    try:
        return build(question, schema)
    except Skip as skip:
        return Problem(where, skip.kind, skip.reason)
    except Exception as exc:  # a compiler bug must cost one question, not the build
        return Problem(where, "other construct", f"{type(exc).__name__}: {exc}")
