"""Gold answers of text-to-SQL questions that are unambiguous, shared by the families that build from such data.

A gold query's rows are the answer only where they are the one answer the question has. Two kinds of item are left
out at build time, and counted:

- **empty result**: the gold query returns no rows, yet the question asks for something (typically a misspelt
  literal in the dataset's gold). A question that asks whether something exists (:func:`asks_existence`) keeps its
  empty answer.
- **tie at the LIMIT cut**: ``ORDER BY ... LIMIT n`` where rows with equal sort keys but different values lie on
  both sides of the cut, so the gold rows are one arbitrary cut of several. The same inside an uncorrelated
  subquery (run alone) makes the outer answer arbitrary too. Such items are left out, not accepted as the union of
  every valid cut: a scorer then needs no second notion of gold.

How ties are found: the query runs again with its ORDER BY key expressions appended to the projection and the LIMIT
raised by one (by two, and the OFFSET lowered by one, when there is an OFFSET: its start is a cut as well). Keys
are resolved as SQLite resolves them: an integer is a result column's ordinal, a bare name that is a result
column's alias is that column, anything else an expression. Keys that cannot be compared are left out of the
comparison: under ``SELECT DISTINCT`` an expression that is not a result column (projecting it would change the
rows DISTINCT keeps); in a set operation (UNION, INTERSECT, EXCEPT) a key that names no output column. When no key
can be compared, no tie is reported and each row is its own run. Where the keys tie at a cut, the query runs once
more without LIMIT and OFFSET: the tie counts only when the rows sharing the cut's key values are not all the same
rows (``SELECT max_age ... ORDER BY max_age LIMIT 1`` over two equal ages has one answer). A probe that SQLite
refuses, or a query sqlglot cannot parse, is not checked.

An ordered answer's rows come with ``tie_groups``: consecutive rows with equal sort keys share a run number, and
:func:`same_rows` lets the rows of one run come in any order.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp

from undertow.env_core.families import ReportTable

FAILS = "gold SQL fails"
EMPTY = "empty result"
TIE = "tie at the LIMIT cut"
LEFT_OUT_KINDS = (FAILS, EMPTY, TIE)

_EXISTENCE_START = re.compile(r"\s*(?:is|are|does|do|was|were|has|have)\b", re.IGNORECASE)
_ANY = re.compile(r"\bany\b", re.IGNORECASE)
_KEY_ALIAS = "_gold_key_"


def asks_existence(question: str) -> bool:
    """Whether ``question`` asks whether something exists: it starts with is / are / does / do / was / were / has /
    have (any case, after leading spaces), or asks for "any" (the word, anywhere)."""
    return bool(_EXISTENCE_START.match(question) or _ANY.search(question))


@dataclass(frozen=True)
class GoldAnswer:
    """A gold query's answer: its rows (lists of values), its column names, whether its top-level query orders
    them, and where ordered, each row's run number (consecutive rows with equal sort keys share one)."""

    rows: list[list[Any]]
    columns: list[str]
    ordered: bool
    tie_groups: list[int] = field(default_factory=list)


def gold_answer(
    conn: sqlite3.Connection, sql: str, question: str, parameters: Mapping[str, Any] | None = None
) -> GoldAnswer | tuple[str, str]:
    """Run the gold ``sql`` (``parameters`` bound, if any) on a read-only connection and return its answer, or
    ``(kind, reason)`` for an item to leave out: ``gold SQL fails``, ``empty result`` (no rows, and the question does
    not ask whether something exists) or ``tie at the LIMIT cut`` (see the module's docstring)."""
    bound = dict(parameters or {})
    try:
        cursor = conn.execute(sql, bound)
        rows = [list(row) for row in cursor.fetchall()]
        columns = [d[0] for d in cursor.description or ()]
    except sqlite3.Error as exc:
        return FAILS, f"on the database: {exc}"
    if not rows and not asks_existence(question):
        return EMPTY, "the gold query returns no rows, and the question does not ask whether something exists"
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        tree = None
    if not isinstance(tree, exp.Query):
        return GoldAnswer(rows, columns, ordered=False)
    for query in _inner_limited(tree):
        if _tie_at_cut(conn, query, bound) is True:  # a correlated subquery (None) cannot be checked alone
            return TIE, f"rows that tie on the sort keys lie on both sides of a subquery's cut: {_snippet(query)}"
    if tree.args.get("order") is None:
        return GoldAnswer(rows, columns, ordered=False)
    if _tie_at_cut(conn, tree, bound):
        return TIE, f"rows that tie on the sort keys lie on both sides of the cut: {_snippet(tree)}"
    probe = _probe(conn, tree, bound, raise_limit=True)
    groups = list(range(len(rows)))
    if probe is not None and len(probe.keys) - probe.before >= len(rows):
        groups = runs(probe.keys[probe.before : probe.before + len(rows)])
    return GoldAnswer(rows, columns, ordered=True, tie_groups=groups)


def runs(keys: Sequence[Any]) -> list[int]:
    """Per item, a run number: consecutive equal items share one (``[5, 5, 3]`` -> ``[0, 0, 1]``)."""
    groups: list[int] = []
    for i, key in enumerate(keys):
        groups.append(0 if i == 0 else groups[-1] + (key != keys[i - 1]))
    return groups


def same_rows(got: Sequence[Hashable], want: Sequence[Hashable], ordered: bool, tie_groups: Sequence[int] = ()) -> bool:
    """Whether ``got`` holds the rows of ``want`` (rows already normalized to hashable values): as multisets when
    not ``ordered``; when ordered, ``want`` is split into its tie runs, ``got`` cut into chunks of the same sizes, and
    each chunk must equal its run as a multiset (the runs keep their order). No ``tie_groups``: every row is its own
    run, the exact order."""
    if not ordered:
        return Counter(got) == Counter(want)
    if len(got) != len(want):
        return False
    if not tie_groups:
        return list(got) == list(want)
    if len(tie_groups) != len(want):
        raise ValueError(f"tie_groups has {len(tie_groups)} entries for {len(want)} gold rows")
    start = 0
    for end in range(1, len(want) + 1):
        if end == len(want) or tie_groups[end] != tie_groups[start]:
            if Counter(got[start:end]) != Counter(want[start:end]):
                return False
            start = end
    return True


# ---------------------------------------------------------------------------------------------------------------
# Probing the sort keys


@dataclass
class _Probe:
    keys: list[tuple[Any, ...]]  # per row returned, its sort-key values
    values: list[tuple[Any, ...]]  # per row returned, its output values (the query's own columns)
    before: int  # rows returned ahead of the query's own first one (1 where an OFFSET was lowered by one)
    limit: int | None  # the query's LIMIT


def _int_of(node: exp.Expression | None) -> int | None:
    """The integer a LIMIT / OFFSET clause holds, None when it holds none or something else."""
    value = node.args.get("expression") if node is not None else None
    if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
        return int(value.this)
    return None


def _inner_limited(tree: exp.Query) -> list[exp.Query]:
    """Queries nested in ``tree`` that order and cut their rows (ORDER BY with LIMIT)."""
    return [
        node
        for node in tree.find_all(exp.Query)
        if node is not tree and node.args.get("order") is not None and _int_of(node.args.get("limit")) is not None
    ]


def _key_positions(query: exp.Query) -> list[int | str | exp.Expression]:
    """Each comparable ORDER BY key of ``query``: a result column's index, an output column's name (a set
    operation's keys, matched once the names are known) or an expression to project."""
    order = query.args["order"]
    terms = [o.this if isinstance(o, exp.Ordered) else o for o in order.expressions]
    set_operation = isinstance(query, exp.SetOperation)
    projections = [] if set_operation else list(query.expressions)
    # a result column's index is known up to the first star (which expands to columns unknown here)
    known = next((i for i, p in enumerate(projections) if p.is_star), len(projections))
    aliases = {p.alias.casefold(): i for i, p in enumerate(projections[:known]) if isinstance(p, exp.Alias)}
    plain = {p.sql("sqlite"): i for i, p in enumerate(projections[:known])}
    plain |= {p.this.sql("sqlite"): i for i, p in enumerate(projections[:known]) if isinstance(p, exp.Alias)}
    distinct = bool(query.args.get("distinct"))
    keys: list[int | str | exp.Expression] = []
    for term in terms:
        if isinstance(term, exp.Literal) and not term.is_string and term.this.isdigit():
            keys.append(int(term.this) - 1)  # an ordinal names a result column, stars expanded
        elif set_operation:
            if isinstance(term, exp.Column) and not term.table:
                keys.append(term.name)
        elif isinstance(term, exp.Column) and not term.table and term.name.casefold() in aliases:
            keys.append(aliases[term.name.casefold()])
        elif not distinct:
            keys.append(term)
        elif term.sql("sqlite") in plain:
            keys.append(plain[term.sql("sqlite")])
    return keys


def _probe(
    conn: sqlite3.Connection, query: exp.Query, parameters: Mapping[str, Any], raise_limit: bool
) -> _Probe | None:
    """Run ``query`` with its sort keys projected and its cut widened: the LIMIT raised by one (and by one more,
    with the OFFSET lowered by one, where it has an OFFSET) when ``raise_limit``, else LIMIT and OFFSET removed.
    None when no key can be compared or SQLite refuses the probe."""
    keys = _key_positions(query)
    if not keys:
        return None
    probe = query.copy()
    extra = [k for k in keys if isinstance(k, exp.Expression)]
    if extra:
        assert isinstance(probe, exp.Select)  # only a SELECT's keys are expressions
        probe = probe.select(*(exp.alias_(k.copy(), f"{_KEY_ALIAS}{i}") for i, k in enumerate(extra)), copy=False)
    limit, offset = _int_of(query.args.get("limit")), _int_of(query.args.get("offset")) or 0
    before = 0
    if not raise_limit:
        probe.set("limit", None)
        probe.set("offset", None)
    elif limit is not None:
        before = 1 if offset else 0
        probe.set("limit", exp.Limit(expression=exp.Literal.number(limit + 1 + before)))
        if offset:
            probe.set("offset", exp.Offset(expression=exp.Literal.number(offset - 1)))
    try:
        cursor = conn.execute(probe.sql("sqlite"), dict(parameters))
        rows = cursor.fetchall()
        names = [d[0].casefold() for d in cursor.description or ()]
    except sqlite3.Error:
        return None
    width = len(names) - len(extra)
    positions: list[int] = []
    for key in keys:
        if isinstance(key, int):
            if not 0 <= key < width:
                return None
            positions.append(key)
        elif isinstance(key, str):
            if key.casefold() in names:
                positions.append(names.index(key.casefold()))
        else:
            positions.append(width + sum(1 for p in positions if p >= width))
    if not positions:
        return None
    return _Probe(
        keys=[tuple(row[i] for i in positions) for row in rows],
        values=[tuple(row[:width]) for row in rows],
        before=before,
        limit=limit,
    )


def _tie_at_cut(conn: sqlite3.Connection, query: exp.Query, parameters: Mapping[str, Any]) -> bool | None:
    """Whether rows that tie on ``query``'s sort keys but differ in value lie on both sides of its LIMIT / OFFSET
    cut; None where it cannot be told (no integer LIMIT, no comparable key, a probe SQLite refuses)."""
    probe = _probe(conn, query, parameters, raise_limit=True)
    if probe is None or probe.limit is None:
        return None
    end = probe.before + probe.limit
    cut_keys = []
    if probe.before and len(probe.keys) > 1 and probe.keys[0] == probe.keys[1]:
        cut_keys.append(probe.keys[0])
    if probe.limit and len(probe.keys) > end and probe.keys[end - 1] == probe.keys[end]:
        cut_keys.append(probe.keys[end])
    if not cut_keys:
        return False
    whole = _probe(conn, query, parameters, raise_limit=False)
    if whole is None:
        return None
    for key in cut_keys:
        tied = {value for k, value in zip(whole.keys, whole.values, strict=True) if k == key}
        if len(tied) > 1:
            return True
    return False


def _snippet(query: exp.Query) -> str:
    text = query.sql("sqlite")
    return text if len(text) <= 100 else text[:97] + "..."


# ---------------------------------------------------------------------------------------------------------------
# Build summaries


def left_out_table(
    counts: Mapping[str, Mapping[str, int]],
    title: str = "gold answers by database",
    kept: str = "the items the build keeps after all its filters",
) -> ReportTable:
    """Per database: questions, kept, left out for a tie at the LIMIT cut, left out for an empty result, and a total
    row. ``counts`` maps a database to its counts under the keys ``questions``, ``kept``, :data:`TIE` and
    :data:`EMPTY` (a missing key counts 0); ``kept`` says what the kept column counts."""
    columns = ["questions", "kept", TIE, EMPTY]
    table = ReportTable(
        title=title,
        columns=["database", "questions", "kept", f"left out: {TIE}", f"left out: {EMPTY}"],
        right=[False, True, True, True, True],
    )
    totals: Counter[str] = Counter()
    for db_id in sorted(counts):
        row = counts[db_id]
        table.rows.append([db_id, *(f"{row.get(c, 0):,}" for c in columns)])
        totals.update({c: row.get(c, 0) for c in columns})
    if len(counts) > 1:
        table.sections = [len(table.rows)]
        table.rows.append(["all", *(f"{totals[c]:,}" for c in columns)])
    table.note = (
        "left out: the gold rows are one arbitrary cut of several (tied sort keys at ORDER BY ... LIMIT), or the gold "
        "query returns nothing for a question that asks for something; questions asking whether something exists "
        f"keep their empty answer. kept: {kept}"
    )
    return table
