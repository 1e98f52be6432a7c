"""Compile a Spider-format text-to-SQL folder into obfuscated SQL functions and backup-plan scenarios.

The method follows "Hell or High Water" (HoHW, §3.2 and appendix C):

1. Parse each gold query with sqlglot (SQLite dialect). Spider writes string literals in double quotes, which
   sqlglot reads as identifiers: a double-quoted name that is no column of the schema becomes a string literal.
2. Parameterize literals in the order they appear in the query into typed arguments (str / int / float); LIMIT and
   OFFSET counts stay part of the query.
3. Every question whose query runs yields its *direct* function (the whole parameterized query). A query with a
   nested SELECT also yields a *chain*: one function per top-level subquery, and an outer function that takes each
   subquery's result as list arguments, read back inside SQL with ``json_each`` so the query stays parameterized
   (the paper uses a temporary ``scratchpad`` table for the same purpose).
4. Both paths are executed on the real database and must return the gold rows, or the question is dropped. The
   gold itself must be unambiguous (``env_core.sqlgold``): a question whose gold query returns nothing though it asks
   for something, or whose rows are one arbitrary cut of tied rows at a LIMIT, is left out; rows of an ordered
   answer that tie on the sort keys form runs (``tie_groups``) that compare as multisets.
5. Functions get obfuscated names (``function_<n>``, arguments like ``lambda_sigma``), deterministic per
   (dataset, seed), and plain-language documentation from their syntax trees (``docs.py``), which never shows SQL.

Nothing here raises on bad input: every malformed file, database, question or query becomes a ``Problem`` in the
build summary and is skipped.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp

from undertow.env_core import sqlgold
from undertow.env_core.spider import Problem, Question, Schema
from undertow.env_core.tools import fetch_rows

FAMILY = "sqlfuncs"
MAX_ROWS = 100

_GREEK = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
]
ARGUMENT_WORDS = [f"{a}_{b}" for a in _GREEK for b in _GREEK if a != b]
JSON_TYPES = {"str": "string", "int": "integer", "float": "number", "list": "array"}  # argument type -> schema
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike)


# ---------------------------------------------------------------------------------------------------------------
# Parameterization and decomposition


@dataclass
class Param:
    placeholder: str  # p0, p1, ... in the parameterized tree
    type: str  # str | int | float | list
    value: Any  # the literal of the gold query (None for list arguments)
    column: tuple[str, str] | None  # (table, column) the argument is compared with, for hints
    start: int  # position in the original query: argument order
    source: str | None = None  # list arguments: the inner function's output column they carry


@dataclass
class FunctionDraft:
    """A function before naming: its SQL with positional placeholders and its arguments in order. ``tree`` is its
    syntax tree (for documentation; dropped before a draft leaves the process that compiled it), in which argument
    ``i`` is the placeholder ``marks[i]``."""

    db_id: str
    sql: str
    params: list[Param]
    role: str  # direct | inner | outer
    tree: exp.Expression | None = field(default=None, repr=False, compare=False)
    marks: list[str] = field(default_factory=list, repr=False, compare=False)

    @property
    def key(self) -> str:
        return json.dumps([self.db_id, self.sql, [p.type for p in self.params]])


def _python_value(literal: exp.Literal) -> tuple[str, Any]:
    if literal.is_string:
        return "str", literal.this
    text = literal.this
    try:
        return "int", int(text)
    except ValueError:
        return "float", float(text)


def _resolve_column(column: exp.Column, schema: Schema) -> tuple[str, str] | None:
    """(table, column) of a column reference, following table aliases of the enclosing SELECT."""
    select = column.find_ancestor(exp.Select)
    aliases: dict[str, str] = {}
    if select is not None:
        for ref in select.find_all(exp.Table):
            if ref.find_ancestor(exp.Select) is select:
                aliases[(ref.alias or ref.name).lower()] = ref.name
    name = column.name
    if column.table:
        table = schema.table_of(aliases.get(column.table.lower(), column.table))
        return (table, name) if table else None
    for table_name in aliases.values():
        table = schema.table_of(table_name)
        if table and any(c.lower() == name.lower() for c in schema.tables[table]):
            return table, name
    return None


def _literal_column(literal: exp.Expression, schema: Schema) -> tuple[str, str] | None:
    parent = literal.parent
    if isinstance(parent, exp.Neg):
        parent = parent.parent
    if isinstance(parent, _COMPARISONS):
        other = parent.expression if parent.this is literal or parent.this is literal.parent else parent.this
        if isinstance(other, exp.Column):
            return _resolve_column(other, schema)
    if isinstance(parent, exp.In) and isinstance(parent.this, exp.Column):
        return _resolve_column(parent.this, schema)
    return None


def parameterize(tree: exp.Expression, schema: Schema, copy: bool = True) -> tuple[exp.Expression, list[Param]]:
    """``tree`` (a copy of it, unless ``copy`` is false) with its literals replaced by placeholders ``p0, p1, ...`` in
    textual order. LIMIT / OFFSET counts and column positions (``ORDER BY 2``) stay part of the query."""
    if copy:
        tree = tree.copy()
    for column in list(tree.find_all(exp.Column)):
        identifier = column.this
        if (
            isinstance(identifier, exp.Identifier)
            and identifier.quoted
            and not column.table
            and not schema.has_column(identifier.name)
        ):
            literal = exp.Literal.string(identifier.name)
            literal.meta.update(identifier.meta)
            column.replace(literal)
    literals = [
        node
        for node in tree.find_all(exp.Literal)
        if not node.find_ancestor(exp.Limit, exp.Offset)
        and not isinstance(node.parent, exp.Ordered | exp.Group)
        and node.meta.get("start") is not None
    ]
    literals.sort(key=lambda node: node.meta["start"])
    params = []
    for i, literal in enumerate(literals):
        kind, value = _python_value(literal)
        params.append(Param(f"p{i}", kind, value, _literal_column(literal, schema), literal.meta["start"]))
        placeholder = exp.Placeholder(this=f"p{i}")
        literal.replace(placeholder)
    return tree, params


def _placeholders(tree: exp.Expression) -> set[str]:
    return {p.name for p in tree.find_all(exp.Placeholder)}


def top_level_subqueries(tree: exp.Expression) -> list[exp.Subquery]:
    """Nested SELECTs not inside another nested SELECT, in textual order."""
    found = [s for s in tree.find_all(exp.Subquery) if s.find_ancestor(exp.Subquery) is None]
    return sorted(found, key=_first_start)


def _first_start(node: exp.Expression) -> int:
    starts = [n.meta["start"] for n in node.walk() if isinstance(n, exp.Expression) and "start" in n.meta]
    starts += [
        n.this.meta["start"] for n in node.find_all(exp.Column) if isinstance(n.this, exp.Identifier) and n.this.meta
    ]
    return min(starts) if starts else 0


_MARKED = re.compile(r":([pl][0-9_]+)\b")


def _draft(db_id: str, tree: exp.Expression, params: list[Param], role: str) -> FunctionDraft:
    """Renumber the placeholders a function actually uses, in argument order, to a0, a1, ... (in its SQL text: the
    tree, possibly part of a bigger one, is left as it is, which spares a copy per function)."""
    used = _placeholders(tree)
    ordered = sorted((p for p in params if p.placeholder in used), key=lambda p: p.start)
    renames = {p.placeholder: f"a{i}" for i, p in enumerate(ordered)}
    # copy=False: SQLite's generator rewrites only constructs Spider's SQLite queries never have (DISTINCT ON,
    # QUALIFY, semi joins), and the copy it would make is a tenth of the build's time
    sql = _MARKED.sub(lambda m: ":" + renames.get(m.group(1), m.group(1)), tree.sql("sqlite", copy=False))
    renamed = [Param(renames[p.placeholder], p.type, p.value, p.column, p.start, p.source) for p in ordered]
    return FunctionDraft(db_id, sql, renamed, role, tree, [p.placeholder for p in ordered])


@dataclass
class Compiled:
    """One question, compiled: its direct function and, for nested queries, its chain."""

    question: Question
    gold: list[dict[str, Any]]
    ordered: bool  # the gold query orders its rows: compare in order
    direct: FunctionDraft
    tie_groups: list[int] = field(default_factory=list)  # where ordered: per gold row, its run of tied sort keys
    left_out: str | None = None  # why the gold is not an answer (sqlgold.EMPTY or sqlgold.TIE); None: it is
    nested: bool = False  # the query has a nested SELECT (whether or not it could be decomposed)
    chain: list[FunctionDraft] = field(default_factory=list)  # inner functions..., outer function
    chain_inputs: list[list[str]] = field(default_factory=list)  # for the outer: inner output columns, per inner


def call_args(function: FunctionDraft, overrides: dict[int, Any] | None = None) -> dict[str, Any]:
    """A function's non-list argument values: the gold query's literals, or ``overrides`` keyed by the literal's
    position in the query (how augmentation swaps one literal in every function that uses it)."""
    overrides = overrides or {}
    return {p.placeholder: overrides.get(p.start, p.value) for p in function.params if p.type != "list"}


def bind(arguments: dict[str, Any]) -> dict[str, Any]:
    """SQLite parameters: lists travel as JSON text, read back with ``json_each``."""
    return {k: json.dumps(v) if isinstance(v, list) else v for k, v in arguments.items()}


def same_rows(a: list[dict[str, Any]], b: list[dict[str, Any]], ordered: bool, tie_groups: Sequence[int] = ()) -> bool:
    """Whether records ``a`` hold the rows of ``b`` (values compared, names not): as multisets, or in order when
    ``ordered``, the rows of one run of ``tie_groups`` (``b``'s tie runs) in any order."""
    rows_a = [tuple(r.values()) for r in a]
    rows_b = [tuple(r.values()) for r in b]
    if ordered and not tie_groups:
        return rows_a == rows_b
    return sqlgold.same_rows(list(map(repr, rows_a)), list(map(repr, rows_b)), ordered, tie_groups)


def run_direct(
    conn: sqlite3.Connection, compiled: Compiled, overrides: dict[int, Any] | None = None
) -> list[dict[str, Any]]:
    return fetch_rows(conn, compiled.direct.sql, bind(call_args(compiled.direct, overrides)))


def run_chain(
    conn: sqlite3.Connection, compiled: Compiled, overrides: dict[int, Any] | None = None
) -> list[dict[str, Any]]:
    """Execute a chain the way an agent would: inner functions, then the outer one on their result columns."""
    *inners, outer = compiled.chain
    arguments = call_args(outer, overrides)
    list_params = iter(p for p in outer.params if p.type == "list")
    for inner, columns in zip(inners, compiled.chain_inputs, strict=True):
        rows = fetch_rows(conn, inner.sql, bind(call_args(inner, overrides)))
        for column in columns:
            arguments[next(list_params).placeholder] = [row[column] for row in rows]
    return fetch_rows(conn, outer.sql, bind(arguments))


def compile_question(question: Question, schema: Schema, conn: sqlite3.Connection) -> Compiled | Problem:
    """Parse, run and parameterize one question; decompose it when it has a nested SELECT."""
    where = f"question {question.index}"
    try:
        tree = sqlglot.parse_one(question.query, read="sqlite")
    except sqlglot.errors.SqlglotError as exc:
        return Problem(where, "unparseable query", f"sqlglot: {str(exc).splitlines()[0]}")
    if not isinstance(tree, exp.Expression):  # None (an empty query) in older sqlglot; every parsed node is one
        return Problem(where, "unparseable query", "empty query")
    answer = sqlgold.gold_answer(conn, question.query, question.text)
    if isinstance(answer, tuple) and answer[0] == sqlgold.FAILS:
        return Problem(where, "gold query fails", answer[1])
    if isinstance(answer, sqlgold.GoldAnswer):
        gold = [dict(zip(answer.columns, row, strict=True)) for row in answer.rows]
        ordered, tie_groups, left_out = answer.ordered, answer.tie_groups, None
    else:  # left out, yet compiled: its function still joins the tools (as a distractor)
        gold = fetch_rows(conn, question.query)
        ordered = tree.args.get("order") is not None
        tie_groups, left_out = [], answer[0]
    parameterized, params = parameterize(tree, schema, copy=False)  # the tree is ours: no copy
    direct = _draft(question.db_id, parameterized, params, "direct")
    compiled = Compiled(question, gold, ordered, direct, tie_groups=tie_groups, left_out=left_out)
    try:
        check = run_direct(conn, compiled)
    except sqlite3.Error as exc:
        return Problem(where, "parameterization failed", f"the parameterized query fails: {exc}")
    if not same_rows(check, gold, ordered, tie_groups):
        return Problem(where, "parameterization failed", "the parameterized query returns other rows than gold")
    compiled.gold = check  # the same rows, with the column names the function itself returns
    subqueries = top_level_subqueries(parameterized)
    compiled.nested = bool(subqueries)
    if not subqueries:
        return compiled
    outer_tree = parameterized.copy()
    outer_subqueries = top_level_subqueries(outer_tree)
    list_params: list[Param] = []
    inners: list[FunctionDraft] = []
    inputs: list[list[str]] = []
    for n, (original, target) in enumerate(zip(subqueries, outer_subqueries, strict=True)):
        inner = _draft(question.db_id, original.this, params, "inner")
        try:
            columns = [d[0] for d in conn.execute(inner.sql, bind(call_args(inner))).description]
        except sqlite3.Error:
            return compiled  # a correlated subquery cannot run alone: no chain, the direct function stays
        start = _first_start(original)
        names = [f"l{n}_{i}" for i in range(len(columns))]
        for i, name in enumerate(names):
            list_params.append(Param(name, "list", None, None, start + i, source=columns[i]))
        if isinstance(target.parent, exp.From | exp.Join):
            alias = target.alias or f"sub{n}"
            selects = ", ".join(f"j{i}.value AS {exp.to_identifier(c).sql('sqlite')}" for i, c in enumerate(columns))
            joins = " ".join(
                f"JOIN json_each(:{name}) AS j{i} ON j{i}.key = j0.key" for i, name in enumerate(names) if i
            )
            replacement = (
                sqlglot.parse_one(
                    f"SELECT * FROM (SELECT {selects} FROM json_each(:{names[0]}) AS j0 {joins}) AS {alias}",
                    read="sqlite",
                )
                .args["from_"]
                .this
            )
        else:
            if len(columns) != 1:
                return compiled
            replacement = sqlglot.parse_one(f"SELECT x IN (SELECT value FROM json_each(:{names[0]}))", read="sqlite")
            replacement = replacement.expressions[0].args["query"]
        target.replace(replacement)
        inners.append(inner)
        inputs.append(columns)
    outer = _draft(question.db_id, outer_tree, params + list_params, "outer")
    compiled.chain = [*inners, outer]
    compiled.chain_inputs = inputs
    try:
        chained = run_chain(conn, compiled)
    except (sqlite3.Error, KeyError, IndexError):
        compiled.chain = []
        return compiled
    if not same_rows(chained, gold, ordered, tie_groups):
        compiled.chain = []  # the decomposition changes the answer (e.g. LIMIT inside): no backup plan
    return compiled
