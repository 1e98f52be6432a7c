"""The database environment of the middleware family (FUXI): twelve tools over a read-only SQLite database.

Navigational tools let the agent look at the data (which columns hold a value, a column's distinct values, a date
column's format, any read-only query); functional tools build the answer query clause by clause, each clause
checked by running the query composed so far. The clause tools have prerequisites (``where`` needs ``from``,
``select`` needs ``from`` and ``where``, ...): a call made too early is refused with the missing clauses named, and
setting a clause again replaces it and clears the clauses built on it.

A query that needs no condition still calls ``where``, with an empty statement (``where("")`` or ``where("WHERE")``):
it means "no condition" and satisfies the prerequisite of the later clauses. ``order_by`` also takes a bare
``LIMIT n``.

Every episode opens its database read-only (``mode=ro`` and ``PRAGMA query_only``), so no tool call, however
written, can change it, and every query runs under a time limit. ``execute_sql`` and ``results_match`` (BIRD's
execution-accuracy comparison) serve the scorer.

The tools are the methods of the episode (``DatabaseState``) marked with the kit's ``@tool``: their typed parameters
are the tools' arguments, and ``DatabaseToolBox`` runs a call on the method of the tool's name.
"""

from __future__ import annotations

import difflib
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

import sqlglot
from pydantic import Field
from sqlglot import exp

from undertow.env_core.errors import DataError, close_match, did_you_mean
from undertow.env_core.middleware.episode_tools import EpisodeTools
from undertow.env_core.model import Scenario, ToolSpec
from undertow.env_core.tools import ToolBox, ToolExecutionError, ToolOutput, time_limit, tool
from undertow.env_core.untrusted import capped

ENVIRONMENT = "database"
CLAUSES = ("from", "where", "select", "group_by", "having", "order_by")  # the functional tools, in query order
NAVIGATIONAL = (
    "find_columns_containing_value",
    "find_columns_containing_value_fuzzy",
    "get_distinct_values",
    "is_value_in_column",
    "get_date_format",
    "search_by_SQL",
)

# Appendix A's prerequisites: the clauses that must be set before each clause tool runs
PREREQUISITES: dict[str, tuple[str, ...]] = {
    "from": (),
    "where": ("from",),
    "select": ("from", "where"),
    "group_by": ("from", "where", "select"),
    "having": ("from", "where", "select", "group_by"),
    "order_by": ("from", "where", "select"),
}
# the clauses built on each clause: setting it again clears them (they may no longer fit)
DEPENDENTS: dict[str, tuple[str, ...]] = {c: tuple(d for d in CLAUSES if c in PREREQUISITES[d]) for c in CLAUSES}

_KEYWORDS = {
    "from": r"FROM",
    "where": r"WHERE",
    "select": r"SELECT",
    "group_by": r"GROUP\s+BY",
    "having": r"HAVING",
    "order_by": r"ORDER\s+BY",
}
_SQL_KEYWORDS = {"from": "FROM", "where": "WHERE", "select": "SELECT", "group_by": "GROUP BY", "having": "HAVING"}
_LIMIT = re.compile(r"LIMIT\b", re.IGNORECASE)

DISTINCT_CAP = 50  # values get_distinct_values shows
PREVIEW_ROWS = 5  # rows a clause tool shows of the query built so far
RESULT_ROWS = 50  # rows search_by_SQL shows
COUNT_CAP = 100_000  # rows counted for a result's row count (a huge join is not walked to its end)
FUZZY_SCAN = 20_000  # distinct text values of one column compared for close spellings
FUZZY_COLUMNS = 20  # columns find_columns_containing_value_fuzzy lists
FUZZY_VALUES = 5  # matching values shown per column
FUZZY_CUTOFF = 0.8  # difflib similarity of a close spelling
CELL_CHARS = 300  # a longer text cell is cut in what the agent reads
QUERY_TIMEOUT_S = 10.0

READ_ONLY = "the database is read-only and only SELECT queries run"


_CLAUSE_ARGUMENT = {clause: f"{clause}_statement" for clause in CLAUSES}


# ---------------------------------------------------------------------------------------------------------------
# Composing clauses into SQL


def _trimmed(text: str) -> str:
    """``text`` without surrounding whitespace and trailing semicolons (a scan: the regex ``[\\s;]+$`` tries each
    run of spaces again from every position, quadratic in a long argument)."""
    text = text.strip()
    end = len(text)
    while end and (text[end - 1] == ";" or text[end - 1].isspace()):
        end -= 1
    return text[:end]


def statement_body(clause: str, statement: str) -> str:
    """A clause's text without its leading keyword ("FROM t" and "t" both give "t") or trailing semicolons."""
    text = _trimmed(statement)
    found = re.match(rf"{_KEYWORDS[clause]}\b", text, re.IGNORECASE)
    return text[found.end() :].strip() if found else text


def compose(clauses: Mapping[str, str]) -> str:
    """One SQL query from clause texts keyed by clause tool name (``from``, ``where``, ``select``, ``group_by``,
    ``having``, ``order_by``), keywords optional. A missing SELECT reads ``SELECT *``; an empty WHERE is no
    condition; an ``order_by`` that starts with LIMIT is kept as it is."""
    unknown = sorted(set(clauses) - set(CLAUSES))
    if unknown:
        raise ValueError(f"unknown clause {', '.join(unknown)}; the clauses are {', '.join(CLAUSES)}")
    body = {name: statement_body(name, text) for name, text in clauses.items()}
    if not body.get("from"):
        raise ValueError("a query needs a FROM clause")
    parts = [f"SELECT {body.get('select') or '*'}", f"FROM {body['from']}"]
    for name in ("where", "group_by", "having"):
        if body.get(name):
            parts.append(f"{_SQL_KEYWORDS[name]} {body[name]}")
    order = body.get("order_by")
    if order:
        parts.append(order if _LIMIT.match(order) else f"ORDER BY {order}")
    return " ".join(parts)


# ---------------------------------------------------------------------------------------------------------------
# Running SQL read-only


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _unquote(name: str) -> str:
    text = name.strip()
    for opening, closing in ('""', "``", "[]", "''"):
        if len(text) >= 2 and text[0] == opening and text[-1] == closing:
            return text[1:-1]
    return text


def clauses_of(query: str) -> dict[str, str] | None:
    """A query's clauses as an agent passes them to the clause tools (the gold plan of a text-to-SQL task), or None
    when it is not one plain SELECT (a top-level UNION / INTERSECT / EXCEPT, a WITH, or SQL sqlglot cannot read)."""
    try:
        tree = sqlglot.parse_one(query, read="sqlite")
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Select) or tree.args.get("with") or not tree.args.get("from_"):
        return None

    def sql(node: exp.Expression) -> str:
        return node.sql(dialect="sqlite")

    joins = "".join(f" {sql(j)}" for j in tree.args.get("joins") or [])
    clauses = {
        "from": f"FROM {sql(tree.args['from_'].this)}{joins}",
        "where": sql(tree.args["where"]) if tree.args.get("where") else "",
        "select": ("DISTINCT " if tree.args.get("distinct") else "") + ", ".join(sql(e) for e in tree.expressions),
    }
    if tree.args.get("group"):
        clauses["group_by"] = sql(tree.args["group"])
    if tree.args.get("having"):
        clauses["having"] = sql(tree.args["having"])
    order = " ".join(sql(tree.args[k]) for k in ("order", "limit") if tree.args.get(k))
    if order:
        clauses["order_by"] = order
    return clauses


def open_read_only(path: str | Path) -> sqlite3.Connection:
    """A connection that cannot change the database: opened read-only, with ``query_only`` on as well."""
    conn = sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True, check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def execute_sql(path: str | Path, sql: str, timeout_s: float | None = QUERY_TIMEOUT_S) -> list[tuple[Any, ...]]:
    """Every row of ``sql`` run read-only on the database at ``path`` (SQLite errors propagate)."""
    conn = open_read_only(path)
    try:
        with time_limit(conn, timeout_s):
            return [tuple(row) for row in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def results_match(predicted: Iterable[Sequence[Any]], gold: Iterable[Sequence[Any]]) -> bool:
    """BIRD's execution accuracy: the two results hold the same set of rows (order and repeats ignored)."""
    return {tuple(row) for row in predicted} == {tuple(row) for row in gold}


def _cell(value: Any) -> Any:
    """A cell as the agent reads it: JSON-friendly, long text cut."""
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, str) and len(value) > CELL_CHARS:
        return value[:CELL_CHARS] + "…"
    return value


def _candidates(value: str | float) -> list[Any]:
    """A value as the model gives it, plus its number or text form: a column without a declared type compares
    '5' and 5 as different, while the model means the same cell."""
    forms: list[Any] = [value]
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"[+-]?\d{1,18}", text):
            forms.append(int(text))
        elif re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", text):
            forms.append(float(text))
    else:
        forms.append(str(value))
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            forms.append(str(int(value)))
    return list(dict.fromkeys(forms))


def _equals_any(column: str, count: int) -> str:
    return "(" + " OR ".join(f"{_quote(column)} = ?{i + 1}" for i in range(count)) + ")"


# ---------------------------------------------------------------------------------------------------------------
# The episode and its tools


def read_tables(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """The database's tables and their columns, in the database's own order (SQLite's internal tables left out)."""
    names = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
            "ORDER BY rowid"
        )
    ]
    return {name: [row[1] for row in conn.execute(f"PRAGMA table_info({_quote(name)})")] for name in names}


def _calls(names: Sequence[str]) -> str:
    shown = [f"{n}()" for n in names]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


@dataclass(frozen=True)
class QueryLimits:
    """How long a query may run and how much of a result the tools show."""

    timeout_s: float = QUERY_TIMEOUT_S
    distinct_cap: int = DISTINCT_CAP
    preview_rows: int = PREVIEW_ROWS
    result_rows: int = RESULT_ROWS


_VALUE = "a cell value as stored in the rows (not a column name)"
# a cell value may arrive as a number: it is compared as the number and as its text
Value = Annotated[str | float, Field(description=_VALUE)]
Table = Annotated[str, Field(description="the table's name")]
Column = Annotated[str, Field(description="the column's name")]
_CLAUSE = "the clause, with or without its keyword: "
FromStatement = Annotated[str, Field(description=_CLAUSE + "FROM singer")]
WhereStatement = Annotated[str, Field(description=_CLAUSE + "WHERE singer.Age > 30")]
SelectStatement = Annotated[str, Field(description=_CLAUSE + "SELECT singer.Name")]
GroupByStatement = Annotated[str, Field(description=_CLAUSE + "GROUP BY singer.Country")]
HavingStatement = Annotated[str, Field(description=_CLAUSE + "HAVING COUNT(*) > 1")]
OrderByStatement = Annotated[str, Field(description=_CLAUSE + "ORDER BY singer.Age DESC LIMIT 3")]


SQL_ERRORS = "sql_errors"  # the scenario's metadata key saying how SQL errors read (the suite option)
SQLITE, HELPFUL = "sqlite", "helpful"


@dataclass
class DatabaseState:
    """One episode: its read-only connection, the database's tables and the clauses set so far; its methods marked
    ``@tool`` are the twelve tools, run on it."""

    connection: sqlite3.Connection | None = None
    database: str | None = None
    tables: dict[str, list[str]] = field(default_factory=dict)  # table -> its columns, as the database names them
    clauses: dict[str, str] = field(default_factory=dict)  # clause tool name -> clause text without keyword
    owner: bool = True  # a fork shares its parent's connection and must not close it
    limits: QueryLimits = field(default_factory=QueryLimits)
    hints: bool = False  # errors with a did-you-mean and advice (undertow's); False: SQLite's message (FUXI's)

    def sql(self) -> str:
        """The SQL built so far ("" before ``from`` is set)."""
        return compose(self.clauses) if "from" in self.clauses else ""

    # -- running SQL

    def _conn(self) -> sqlite3.Connection:
        if self.connection is None:
            raise RuntimeError("no database is open for this episode: start(state, scenario) opens it")
        return self.connection

    def _sql_error(self, tool: str, exc: Exception, sql: str | None = None) -> ToolExecutionError:
        """SQLite's own message, as the paper feeds it back; with ``hints``, a did-you-mean for a mistyped table or
        column too (and the reason a write is refused)."""
        message = str(exc)
        if not self.hints:
            pass
        elif "readonly" in message or "query_only" in message or "read-only" in message:
            message = f"{message}: {READ_ONLY}"
        else:
            missing = re.match(r"no such (table|column): (.+)$", message)
            if missing:
                kind, name = missing.groups()
                message += self._missing_hint(kind, name)
        where = f" (the SQL: {sql})" if sql else ""
        return ToolExecutionError(f"{tool}() failed: {message}{where}")

    def _missing_hint(self, kind: str, name: str) -> str:
        """For "no such column": the tables that do have it (when the query leaves them out), else a close name."""
        if kind == "table":
            hint = close_match(name, self.tables)
            return f"; {hint}" if hint else ""
        bare = _unquote(name.rpartition(".")[2])
        holders = [t for t, columns in self.tables.items() if bare.lower() in (c.lower() for c in columns)]
        if holders:
            return f"; {bare} is a column of {', '.join(holders)}: check the FROM clause and the table or alias named"
        hint = close_match(name, {n for t, cs in self.tables.items() for c in cs for n in (c, f"{t}.{c}")})
        return f"; {hint}" if hint else ""

    def _fetch(self, tool: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        conn = self._conn()
        try:
            with time_limit(conn, self.limits.timeout_s):
                return [tuple(row) for row in conn.execute(sql, params).fetchall()]
        except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError) as exc:
            raise self._sql_error(tool, exc) from exc

    def _preview(self, tool: str, sql: str, rows: int) -> tuple[list[str], list[list[Any]], int]:
        """The result's columns, its first ``rows`` rows and its row count (counted up to ``COUNT_CAP``)."""
        conn = self._conn()
        try:
            with time_limit(conn, self.limits.timeout_s):
                cursor = conn.execute(sql)
                columns = [d[0] for d in cursor.description or ()]
                first = cursor.fetchmany(rows)
                count = len(first)
                if count == rows:
                    for _ in cursor:
                        count += 1
                        if count >= COUNT_CAP:
                            break
        except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError) as exc:
            raise self._sql_error(tool, exc, sql) from exc
        return columns, [[_cell(v) for v in row] for row in first], count

    @staticmethod
    def _shown(shown: int, count: int) -> list[str]:
        if count >= COUNT_CAP:
            return [f"showing the first {shown} of at least {COUNT_CAP} rows (counting stopped there)"]
        return [f"showing the first {shown} of {count} rows"] if count > shown else []

    def _table(self, name: str) -> str:
        wanted = _unquote(name)
        for table in self.tables:
            if table.lower() == wanted.lower():
                return table
        hint = did_you_mean(wanted, self.tables) if self.hints else ""
        raise ToolExecutionError(f"no table '{name}' in database '{self.database}'" + (f"; {hint}" if hint else ""))

    def _column(self, table: str, name: str) -> str:
        wanted = _unquote(name)
        prefix, dot, rest = wanted.partition(".")
        if dot and _unquote(prefix).lower() == table.lower():  # "singer.Age" for table singer
            wanted = _unquote(rest)
        columns = self.tables[table]
        for column in columns:
            if column.lower() == wanted.lower():
                return column
        hint = did_you_mean(wanted, columns) if self.hints else ""
        raise ToolExecutionError(f"no column '{name}' in table '{table}'" + (f"; {hint}" if hint else ""))

    def _similar(self, tool: str, table: str, column: str, needle: str) -> list[tuple[float, Any]]:
        """Cells of one column like ``needle``, best first, as (score, cell): equal ignoring case (1.0), containing
        it ignoring case (0.5 and up, more for a closer length), or a close spelling (difflib's ratio)."""
        lowered = needle.casefold()
        pattern = "%" + re.sub(r"([\\%_])", r"\\\1", needle) + "%"
        source, quoted = _quote(table), _quote(column)
        scored: dict[Any, float] = {}
        for (cell,) in self._fetch(
            tool,
            f"SELECT DISTINCT {quoted} FROM {source} WHERE CAST({quoted} AS TEXT) LIKE ? ESCAPE '\\' LIMIT 200",
            [pattern],
        ):
            text = str(cell).casefold()
            scored[cell] = 1.0 if text == lowered else 0.5 + 0.5 * len(lowered) / max(len(text), 1)
        texts = self._fetch(
            tool, f"SELECT DISTINCT {quoted} FROM {source} WHERE typeof({quoted}) = 'text' LIMIT {FUZZY_SCAN}"
        )
        by_folded: dict[str, str] = {}
        for (cell,) in texts:
            by_folded.setdefault(cell.casefold(), cell)
        for folded in difflib.get_close_matches(lowered, by_folded, n=FUZZY_VALUES, cutoff=FUZZY_CUTOFF):
            cell = by_folded[folded]
            ratio = difflib.SequenceMatcher(None, lowered, folded).ratio()
            scored[cell] = max(scored.get(cell, 0.0), ratio)
        return sorted(((score, cell) for cell, score in scored.items()), key=lambda p: (-p[0], str(p[1])))

    # -- navigational tools

    @tool(
        "navigational",
        description="Finds every column that has a cell equal to the given value, to help decide which column a "
        "value of the question belongs to. The value is a cell value stored in the rows, not a column name. Returns "
        "a list of 'table.column'. Example: find_columns_containing_value(\"France\").\nPrerequisite: n/a",
        environment=ENVIRONMENT,
    )
    def find_columns_containing_value(self, value: Value) -> ToolOutput:
        """Every ``table.column`` with a cell equal to ``value`` (one pass over each table)."""
        tool = "find_columns_containing_value"
        if isinstance(value, str) and not value.strip():
            raise ToolExecutionError(f"{tool}() needs a value to look for; it got an empty string")
        forms = _candidates(value)
        found: list[str] = []
        for table, columns in self.tables.items():
            if not columns:
                continue
            tests = ", ".join(f"MAX({_equals_any(c, len(forms))})" for c in columns)
            (row,) = self._fetch(tool, f"SELECT {tests} FROM {_quote(table)}", forms)
            found += [f"{table}.{c}" for c, hit in zip(columns, row, strict=True) if hit]
        notes = [] if found else [f"no cell equals {value!r}; find_columns_containing_value_fuzzy finds near matches"]
        return ToolOutput(found, notes)

    @tool(
        "navigational",
        description="For when find_columns_containing_value finds no column because the value is stored in another "
        "form: finds columns whose cells contain the value ignoring case, or are spelled close to it, and shows the "
        "matching cells of each column. The value is a cell value, not a column name. "
        'Example: find_columns_containing_value_fuzzy("new york").\nPrerequisite: n/a',
        environment=ENVIRONMENT,
    )
    def find_columns_containing_value_fuzzy(self, value: Value) -> ToolOutput:
        """Columns with cells like ``value`` (see ``_similar``) -> their matching cells, best column first."""
        tool = "find_columns_containing_value_fuzzy"
        needle = str(value).strip()
        if not needle:
            raise ToolExecutionError(f"{tool}() needs a value to look for; it got an empty string")
        ranked: list[tuple[float, str, list[Any]]] = []
        for table, columns in self.tables.items():
            for column in columns:
                similar = self._similar(tool, table, column, needle)
                if similar:
                    cells = [_cell(c) for _, c in similar[:FUZZY_VALUES]]
                    ranked.append((similar[0][0], f"{table}.{column}", cells))
        ranked.sort(key=lambda r: (-r[0], r[1]))
        found = {name: cells for _, name, cells in ranked[:FUZZY_COLUMNS]}
        notes = [] if found else [f"no cell contains or resembles {capped(needle)!r}"]
        if len(ranked) > FUZZY_COLUMNS:
            notes.append(f"the {FUZZY_COLUMNS} closest of {len(ranked)} matching columns are shown")
        return ToolOutput(found, notes)

    @tool(
        "navigational",
        description=f"Lists the distinct values of a column (the first {DISTINCT_CAP} in sorted order, with how many "
        "there are in all), to help choose the exact value to write in a condition. "
        'Example: get_distinct_values("singer", "Country").\nPrerequisite: n/a',
        environment=ENVIRONMENT,
    )
    def get_distinct_values(self, table: Table, column: Column) -> ToolOutput:
        """The column's distinct values in sorted order (capped), with a note of the total when capped."""
        tool, cap = "get_distinct_values", self.limits.distinct_cap
        table = self._table(table)
        quoted, source = _quote(self._column(table, column)), _quote(table)
        ((total,),) = self._fetch(tool, f"SELECT COUNT(*) FROM (SELECT DISTINCT {quoted} FROM {source})")
        rows = self._fetch(tool, f"SELECT DISTINCT {quoted} FROM {source} ORDER BY {quoted} LIMIT {cap}")
        notes = [f"{total} distinct values in all; the first {cap} in sorted order are shown"]
        return ToolOutput([_cell(v) for (v,) in rows], notes if total > cap else [])

    @tool(
        "navigational",
        description="Tells whether a column has a cell equal to the given value (true or false), to check that a "
        "column is the right one for a value. "
        'Example: is_value_in_column("singer", "Country", "France").\nPrerequisite: n/a',
        environment=ENVIRONMENT,
    )
    def is_value_in_column(self, table: Table, column: Column, value: Value) -> ToolOutput:
        """Whether a cell of the column equals ``value``; when none does, a note names similar cells."""
        tool = "is_value_in_column"
        table = self._table(table)
        column = self._column(table, column)
        forms = _candidates(value)
        sql = f"SELECT EXISTS(SELECT 1 FROM {_quote(table)} WHERE {_equals_any(column, len(forms))})"
        ((hit,),) = self._fetch(tool, sql, forms)
        notes: list[str] = []
        needle = str(value).strip()
        if not hit and needle:
            similar = [repr(_cell(c)) for _, c in self._similar(tool, table, column, needle)[:FUZZY_VALUES]]
            if similar:
                notes.append(f"similar values in {table}.{column}: {', '.join(similar)}")
        return ToolOutput(bool(hit), notes)

    @tool(
        "navigational",
        description="Returns one stored value of a date column, to show how its dates are written before comparing "
        'with them (e.g. "2019-03-01" or "03/01/2019"). Example: get_date_format("concert", "Year").\n'
        "Prerequisite: n/a",
        environment=ENVIRONMENT,
    )
    def get_date_format(self, table: Table, column: Column) -> Any:
        """One non-empty cell of the column, showing how its values are written."""
        tool = "get_date_format"
        table = self._table(table)
        column = self._column(table, column)
        quoted = _quote(column)
        rows = self._fetch(
            tool,
            f"SELECT {quoted} FROM {_quote(table)} WHERE {quoted} IS NOT NULL AND CAST({quoted} AS TEXT) != '' LIMIT 1",
        )
        if not rows:
            raise ToolExecutionError(f"{table}.{column} holds no non-empty value, so it has no format to show")
        return _cell(rows[0][0])

    @tool(
        "navigational",
        description=f"Runs one read-only SQL query (SELECT, or WITH ... SELECT) on the database and returns its rows "
        f"(at most {RESULT_ROWS} shown, with the row count), to look at the data directly. "
        'Example: search_by_SQL("SELECT Name FROM singer WHERE Age > 40").\nPrerequisite: n/a',
        environment=ENVIRONMENT,
    )
    def search_by_SQL(self, query: Annotated[str, Field(description="one SQLite SELECT query")]) -> ToolOutput:
        """Run one read-only query (checked with sqlglot first) and show its first rows."""
        tool = "search_by_SQL"
        text = _trimmed(query)
        if not text:
            raise ToolExecutionError(f"{tool}() needs a query; it got an empty one")
        refusal = read_only_problem(text)
        if refusal is not None:
            raise ToolExecutionError(f"{tool}() refused {refusal}")
        columns, rows, count = self._preview(tool, text, self.limits.result_rows)
        return ToolOutput({"columns": columns, "rows": rows, "row_count": count}, self._shown(len(rows), count))

    # -- functional tools: each sets its clause (set_clause)

    @tool(
        "functional",
        name="from",
        description="Sets the FROM clause of the query being built (its tables and joins) and checks it by running "
        'the query. Examples: from("FROM singer") or from("FROM singer JOIN singer_in_concert ON singer.Singer_ID = '
        'singer_in_concert.Singer_ID"). Setting it again replaces it and clears every later clause.'
        "\nPrerequisite: n/a",
        environment=ENVIRONMENT,
    )
    def from_(self, from_statement: FromStatement) -> ToolOutput:
        return self.set_clause("from", from_statement)

    @tool(
        "functional",
        description="Sets the WHERE clause and checks it: a mistake in it is reported, and so is a condition that "
        "matches no row of the database. Example: where(\"WHERE singer.Country = 'France'\"). When the query needs "
        'no condition, call where("") to go on.\nPrerequisite: from',
        environment=ENVIRONMENT,
    )
    def where(self, where_statement: WhereStatement) -> ToolOutput:
        return self.set_clause("where", where_statement)

    @tool(
        "functional",
        description="Sets the SELECT clause (what the query returns) and runs the query built so far. "
        'Example: select("SELECT singer.Name, singer.Age").\nPrerequisite: from, where',
        environment=ENVIRONMENT,
    )
    def select(self, select_statement: SelectStatement) -> ToolOutput:
        return self.set_clause("select", select_statement)

    @tool(
        "functional",
        description='Sets the GROUP BY clause. Example: group_by("GROUP BY singer.Country").\n'
        "Prerequisite: from, where, select",
        environment=ENVIRONMENT,
    )
    def group_by(self, group_by_statement: GroupByStatement) -> ToolOutput:
        return self.set_clause("group_by", group_by_statement)

    @tool(
        "functional",
        description='Sets the HAVING clause, a condition on the groups. Example: having("HAVING COUNT(*) > 1").\n'
        "Prerequisite: from, where, select, group_by",
        environment=ENVIRONMENT,
    )
    def having(self, having_statement: HavingStatement) -> ToolOutput:
        return self.set_clause("having", having_statement)

    @tool(
        "functional",
        description="Sets a final constraint such as ordering and limiting the rows. "
        'Example: order_by("ORDER BY singer.Age DESC LIMIT 3") (a bare "LIMIT 1" works too).\n'
        "Prerequisite: from, where, select",
        environment=ENVIRONMENT,
    )
    def order_by(self, order_by_statement: OrderByStatement) -> ToolOutput:
        return self.set_clause("order_by", order_by_statement)

    def set_clause(self, clause: str, statement: str) -> ToolOutput:
        """Check the prerequisites, run the query with the new clause, and only then keep it (clearing the clauses
        built on the one it replaces)."""
        self._conn()
        missing = [p for p in PREREQUISITES[clause] if p not in self.clauses]
        if missing:
            so_far = f"the query so far is: {self.sql()}" if self.sql() else "no clause is set yet"
            raise ToolExecutionError(
                f"{clause}() needs {_calls(missing)} first: the clauses are set in the order "
                f"from, where, select, then group_by, having, order_by ({so_far})"
            )
        body = statement_body(clause, statement)
        if not body and clause != "where":
            raise ToolExecutionError(
                f"{clause}() got an empty {_CLAUSE_ARGUMENT[clause]}; only where() takes an empty statement "
                "(no condition)"
            )
        trial = {name: text for name, text in self.clauses.items() if name not in DEPENDENTS[clause]}
        trial[clause] = body
        trial = {name: trial[name] for name in CLAUSES if name in trial}
        sql = compose(trial)
        columns, rows, count = self._preview(clause, sql, self.limits.preview_rows)
        notes = self._shown(len(rows), count)
        cleared = [name for name in DEPENDENTS[clause] if name in self.clauses]
        if cleared:
            notes.append(f"{clause}() replaced the earlier {clause} clause and cleared {_calls(cleared)}: set again")
        if count == 0:
            notes.append(
                "the WHERE condition matches no rows: check its values (get_distinct_values, is_value_in_column)"
                if clause == "where" and body
                else f"the query so far returns no rows after {clause}()"
            )
        elif clause == "where" and not body:
            notes.append("no condition: every row of the FROM clause is kept")
        self.clauses = trial
        return ToolOutput({"sql": sql, "columns": columns, "rows": rows, "row_count": count}, notes)


# the twelve tools, in the order the suite lists them
TOOLS = EpisodeTools(DatabaseState, closed=False, family="database")
DATABASE_TOOLS: list[ToolSpec] = TOOLS.specs


class DatabaseToolBox(ToolBox):
    """The twelve database tools over read-only SQLite files: ``databases`` maps a name (what a scenario's
    ``metadata["database"]`` says) to its file; ``start`` opens the scenario's one. Every episode runs under
    ``limits``."""

    def __init__(self, specs: Iterable[ToolSpec], databases: Mapping[str, Path], limits: QueryLimits | None = None):
        super().__init__(specs)
        TOOLS.check(self.specs)
        self.databases = {name: Path(path) for name, path in databases.items()}
        self.limits = limits or QueryLimits()
        self._tables: dict[str, dict[str, list[str]]] = {}  # per database, read once

    # -- episode life cycle

    def new_state(self) -> DatabaseState:
        return DatabaseState(limits=self.limits)

    def start(self, state: DatabaseState, scenario: Scenario) -> None:
        """Open the scenario's database (``metadata["database"]``) read-only for this episode."""
        name = scenario.metadata.get("database")
        if not isinstance(name, str) or not name:
            raise DataError(f"scenario {scenario.id}: metadata.database names no database")
        if name not in self.databases:
            raise DataError(f"scenario {scenario.id}: unknown database '{name}'; {did_you_mean(name, self.databases)}")
        self.close_state(state)
        conn: sqlite3.Connection | None = None
        try:
            conn = open_read_only(self.databases[name])
            if name not in self._tables:
                self._tables[name] = read_tables(conn)
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise DataError(f"database '{name}' ({self.databases[name]}) cannot be opened: {exc}") from exc
        state.connection, state.database, state.owner = conn, name, True
        state.tables, state.limits = self._tables[name], self.limits
        state.clauses = {}
        state.hints = scenario.metadata.get(SQL_ERRORS) == HELPFUL

    def close_state(self, state: DatabaseState) -> None:
        if state.connection is not None and state.owner:
            state.connection.close()
        state.connection = None
        state.clauses = {}

    def fork_state(self, state: DatabaseState) -> DatabaseState:
        """The same read-only connection (nothing can write through it) with a private copy of the clauses."""
        return replace(state, clauses=dict(state.clauses), owner=False)

    def execute(self, state: DatabaseState, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return TOOLS.run(state, spec.name, arguments)


def read_only_problem(query: str) -> str | None:
    """Why ``query`` may not run (as the end of "refused ..."), or None for exactly one SELECT (or WITH ... SELECT).
    sqlglot reads the statement; SQL it cannot read is judged by its first keyword, and the read-only connection
    stops any write that still gets through."""
    try:
        statements = [s for s in sqlglot.parse(query, read="sqlite") if s is not None]
    except (sqlglot.errors.SqlglotError, RecursionError):
        keyword = re.match(r"[\s(]*(\w+)", query)
        first = keyword.group(1).upper() if keyword else ""
        return None if first in ("SELECT", "WITH") else f"this {first or 'non-SELECT'} statement: {READ_ONLY}"
    if len(statements) != 1:
        return f"{len(statements)} statements: give exactly one query; {READ_ONLY}"
    statement = statements[0]
    if isinstance(statement, exp.Query):
        return None
    # a statement sqlglot keeps as raw text (EXPLAIN, VACUUM, ...) is named by its own keyword
    kind = str(statement.this) if isinstance(statement, exp.Command) else statement.key
    return f"this {kind.upper()} statement: {READ_ONLY}"
