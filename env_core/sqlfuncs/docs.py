"""Documentation of compiled functions: template docs in plain words, and the parts of model-written docs.

Template docs (the default) are generated deterministically from each function's syntax tree: what it returns,
from which records of which database, what each argument selects, and its type; never SQL text, which would give
away the structure an agent is meant to discover. Model-written docs follow HoHW (§3.2, appendix C): a model
documents each function from its code and a description of the database, unit checks validate the result
(required fields present, aligned with the code) and the model may correct itself up to three times. The calling
loop lives in ``undertow.workers.docgen``; here are the prompt, the checks and applying a checked doc.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from undertow.env_core.model import ToolSpec
from undertow.env_core.sqlfuncs.compile import JSON_TYPES

_EXAMPLE_TOOL = {
    "name": "function_7",
    "sql": "SELECT title FROM books WHERE author_id IN (SELECT value FROM json_each(:nu_pi))",
    "arguments": {"nu_pi": "list"},
}
_EXAMPLE_DOC = {
    "type": "function",
    "function": {
        "name": "function_7",
        "description": "Get the titles of the books written by any of the given authors.",
        "parameters": {
            "type": "object",
            "properties": {"nu_pi": {"type": "array", "description": "a list of author ids"}},
            "required": ["nu_pi"],
        },
    },
}


def doc_messages(tool: ToolSpec, tables: dict[str, list[str]]) -> list[dict[str, str]]:
    """Chat messages asking for one function's documentation in OpenAI function format."""
    arguments = {p["name"]: p["type"] for p in tool.binding.get("params", [])}
    schema = "; ".join(f"{table}({', '.join(columns)})" for table, columns in sorted(tables.items()))
    request = {"name": tool.name, "sql": tool.binding["sql"], "arguments": arguments}
    return [
        {
            "role": "system",
            "content": "You write documentation for Python functions that run a SQL query. Reply with JSON only: "
            "an OpenAI function definition whose name and argument names are exactly the function's, with a "
            "one-sentence description of what it returns and a description of each argument. Do not mention "
            "SQL, tables' internal names are fine.",
        },
        {"role": "user", "content": f"Database tables: books(id, title, author_id)\n{json.dumps(_EXAMPLE_TOOL)}"},
        {"role": "assistant", "content": json.dumps(_EXAMPLE_DOC)},
        {"role": "user", "content": f"Database tables: {schema}\n{json.dumps(request)}"},
    ]


def doc_problems(doc: Any, tool: ToolSpec) -> list[str]:
    """What is wrong with a proposed doc, as messages the model can act on; [] when it passes every check."""
    if not isinstance(doc, dict):
        return ["the reply must be a JSON object"]
    function = doc.get("function", doc)
    if not isinstance(function, dict):
        return ["'function' must be an object"]
    problems = []
    if function.get("name") != tool.name:
        problems.append(f"name must be '{tool.name}', got {function.get('name')!r}")
    if not isinstance(function.get("description"), str) or not function["description"].strip():
        problems.append("description must be a non-empty string")
    parameters = function.get("parameters")
    if not isinstance(parameters, dict) or not isinstance(parameters.get("properties"), dict):
        return [*problems, "parameters.properties must be an object"]
    expected = {p["name"]: JSON_TYPES[p["type"]] for p in tool.binding.get("params", [])}
    properties = parameters["properties"]
    if set(properties) != set(expected):
        problems.append(f"arguments must be exactly {sorted(expected)}, got {sorted(properties)}")
    for name, kind in expected.items():
        given = properties.get(name)
        if not isinstance(given, dict):
            continue
        if given.get("type") != kind:
            problems.append(f"argument {name} must have type '{kind}', got {given.get('type')!r}")
        if not isinstance(given.get("description"), str) or not given["description"].strip():
            problems.append(f"argument {name} needs a description")
        elif shown_sql(given["description"]):
            problems.append(f"argument {name}'s description shows SQL ({shown_sql(given['description'])}): use words")
    if sorted(parameters.get("required", [])) != sorted(expected):
        problems.append(f"required must list every argument: {sorted(expected)}")
    if isinstance(function.get("description"), str) and shown_sql(function["description"]):
        problems.append(f"description shows SQL ({shown_sql(function['description'])}): say what it returns in words")
    return problems


# What gives a doc's SQL away: clause keywords written as SQL writes them (the same words in lower case are prose),
# and in any case aggregate calls, the list reader and bound parameters.
_SQL_CLAUSE = re.compile(
    r"\b(?:SELECT|FROM|WHERE|JOIN|HAVING|LIMIT|UNION|INTERSECT|EXCEPT|DISTINCT|GROUP BY|ORDER BY|NOT IN|LIKE|BETWEEN)\b"
)
_SQL_CODE = re.compile(r"\b(?:count|avg|sum|min|max)\(|json_each|(?<![\w:]):[a-z_]\w*", re.IGNORECASE)


def shown_sql(text: str) -> str:
    """The first piece of SQL in a doc's text ("" when there is none)."""
    match = _SQL_CLAUSE.search(text) or _SQL_CODE.search(text)
    return match.group(0) if match else ""


def apply_doc(tool: ToolSpec, doc: dict[str, Any]) -> ToolSpec:
    """The tool with a checked doc's descriptions; names, types and the binding stay the compiler's."""
    function = doc.get("function", doc)
    parameters = json.loads(json.dumps(tool.parameters))
    for name, schema in parameters["properties"].items():
        schema["description"] = function["parameters"]["properties"][name]["description"].strip()
    return tool.model_copy(update={"description": function["description"].strip(), "parameters": parameters})


class SqlFunctionDocumenter:
    """The :class:`env_core.families.ToolDocumenter` of compiled functions: the model sees the function's SQL and
    the tables of its database (kept in the build's ``build.json``)."""

    def context(self, folder: Path) -> dict[str, dict[str, list[str]]]:
        tables: dict[str, dict[str, list[str]]] = json.loads((folder / "build.json").read_text())["tables"]
        return tables

    def messages(self, tool: ToolSpec, context: dict[str, dict[str, list[str]]]) -> list[dict[str, str]]:
        return doc_messages(tool, context[tool.binding["database"]])

    def problems(self, doc: Any, tool: ToolSpec) -> list[str]:
        return doc_problems(doc, tool)

    def apply(self, tool: ToolSpec, doc: dict[str, Any]) -> ToolSpec:
        return apply_doc(tool, doc)


DOCUMENTER = SqlFunctionDocumenter()


# ---------------------------------------------------------------------------------------------------------------
# Template documentation: plain words from the function's syntax tree, never its SQL

# An argument's name inside a template, filled in once names are drawn (docs are written before naming, where
# the syntax trees are, possibly in another process).
_MARK = "\x00"
_ARGUMENT = re.compile(f"{_MARK}(\\d+){_MARK}")
TYPE_WORDS = {"str": "text", "int": "integer", "float": "number", "list": "list"}  # argument type -> words
# Words a column name must not be shown as (an answer key like ``COUNT(*)`` is described in words instead).
SQL_WORDS = frozenset(
    (
        *("SELECT", "FROM", "WHERE", "JOIN", "INNER", "OUTER", "LEFT", "RIGHT", "ON", "GROUP", "BY", "ORDER"),
        *("HAVING", "LIMIT", "OFFSET", "UNION", "INTERSECT", "EXCEPT", "ALL", "COUNT", "AVG", "SUM", "MIN", "MAX"),
        *("DISTINCT", "AS", "IN", "NOT", "AND", "OR", "LIKE", "BETWEEN", "IS", "NULL", "EXISTS", "CASE", "WHEN"),
        *("THEN", "ELSE", "END", "CAST", "ASC", "DESC"),
    )
)
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_ ]*$")


def _sql_word_in(name: str) -> bool:
    return any(word in SQL_WORDS for word in name.split())


_COMPARE = {
    exp.EQ: "equals",
    exp.NEQ: "is not equal to",
    exp.GT: "is greater than",
    exp.GTE: "is at least",
    exp.LT: "is less than",
    exp.LTE: "is at most",
}
_ARITHMETIC = {exp.Add: "plus", exp.Sub: "minus", exp.Mul: "times", exp.Div: "divided by", exp.Mod: "modulo"}
_AGGREGATES = {exp.Avg: "the average", exp.Max: "the largest", exp.Min: "the smallest", exp.Sum: "the total"}
_FUNCTION_WORDS = {
    "length": "the length of",
    "abs": "the absolute value of",
    "upper": "the upper-case form of",
    "lower": "the lower-case form of",
    "round": "the rounded value of",
    "substring": "a part of",
    "time_to_str": "the formatted date of",
    "str_to_time": "the date read from",
}
_CONDITIONS = (*_COMPARE, exp.Like, exp.ILike, exp.Between, exp.In, exp.Is)


@dataclass(frozen=True)
class DocTemplate:
    """A function's documentation with argument names left as markers: the description and, per argument (in
    order), what it is and what it selects."""

    description: str
    arguments: tuple[str, ...]

    def render(self, names: Sequence[str]) -> tuple[str, list[str]]:
        def fill(text: str) -> str:
            return _ARGUMENT.sub(lambda m: f"`{names[int(m.group(1))]}`", text)

        return fill(self.description), [fill(a) for a in self.arguments]


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _is_set(node: exp.Expr) -> bool:
    return isinstance(node, exp.Union | exp.Intersect | exp.Except)


def _column_words(name: str | None) -> str:
    """An output column's name, or for one named by its expression (``MAX(population)``), that expression in words."""
    if not name:
        return "the"
    if _PLAIN_KEY.match(name) and not _sql_word_in(name):
        return name
    try:
        parsed = sqlglot.parse_one(name, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return "the"
    return _Words(parsed, {}, {}).value(parsed)


def _whose(condition: str) -> str:
    """How a condition attaches to the records it selects: "whose <column> ..." unless it is not about a column."""
    other = condition.startswith(("there is", "it is not", "(", "the ", "a ", "all ", "whether", "minus "))
    return f"where {condition}" if other else f"whose {condition}"


def _json_list(select: exp.Expr) -> list[str] | None:
    """The list arguments a compiled ``SELECT ... FROM json_each(:x) [JOIN json_each(:y) ...]`` reads, else None."""
    if not isinstance(select, exp.Select):
        return None
    source = select.args.get("from_")
    tables = [source.this] if source is not None else []
    tables += [join.this for join in select.args.get("joins") or []]
    names = []
    for table in tables:
        function = table.this if isinstance(table, exp.Table) else None
        if not (isinstance(function, exp.Anonymous) and str(function.this).lower() == "json_each"):
            return None
        names += [p.name for p in function.find_all(exp.Placeholder)]
    return names or None


class _Words:
    """Plain-language rendering of one function's syntax tree. ``focus``: the placeholder an argument description
    is about, said as "the given value"; every other placeholder is its argument's name."""

    def __init__(self, root: exp.Expr, tables: Mapping[str, Sequence[str]], positions: Mapping[str, int]):
        self.root = root
        self.tables = {t.lower(): (t, {c.lower(): c for c in columns}) for t, columns in tables.items()}
        self.positions = positions
        self.focus: str | None = None
        self.qualify = False  # name each column's table (join conditions)

    # -- values ---------------------------------------------------------------------------------------------
    def argument(self, name: str) -> str:
        if name == self.focus:
            return "the given value"
        return f"{_MARK}{self.positions[name]}{_MARK}" if name in self.positions else "a given value"

    def values_of(self, name: str, first: bool = False) -> str:
        """A list argument's values as a phrase (its first value, for a comparison with a single value)."""
        if name == self.focus:
            return "the first of the given values" if first else "the given values"
        return f"the first value of {self.argument(name)}" if first else f"the values in {self.argument(name)}"

    def scope(self, node: exp.Expr) -> dict[str, str]:
        """alias (lower-case) -> table name of the SELECTs around ``node``, innermost last (so it wins)."""
        chain = [a for a in self.above(node) if isinstance(a, exp.Select)]
        aliases: dict[str, str] = {}
        for select in reversed(chain):
            for table in self.from_tables(select):
                aliases[(table.alias or table.name).lower()] = table.name
        return aliases

    @staticmethod
    def from_tables(select: exp.Select) -> list[exp.Table]:
        source = select.args.get("from_")
        items = ([source.this] if source is not None else []) + [j.this for j in select.args.get("joins") or []]
        return [t for t in items if isinstance(t, exp.Table) and isinstance(t.this, exp.Identifier)]

    def table_name(self, name: str) -> str:
        return self.tables.get(name.lower(), (name, {}))[0]

    def columns_of(self, table: str) -> dict[str, str]:
        return self.tables.get(table.lower(), ("", {}))[1]

    def column(self, column: exp.Column) -> str:
        aliases = self.scope(column)
        owner = aliases.get(column.table.lower()) if column.table else None
        if isinstance(column.this, exp.Star):
            return f"all columns of `{self.table_name(owner)}`" if owner else "all columns"
        name = column.name
        if owner is None:
            owners = [t for t in dict.fromkeys(aliases.values()) if name.lower() in self.columns_of(t)]
            owner = owners[0] if len(owners) == 1 else None
        if owner is not None and owner.lower() in self.tables:
            table, columns = self.tables[owner.lower()]
            name = columns.get(name.lower(), name)  # the schema's spelling: what the function returns
            shared = sum(1 for t in set(aliases.values()) if name.lower() in self.columns_of(t))
            if self.qualify:
                return f"{name} of `{table}`"
            if shared > 1:
                return f"{name} (from `{table}`)"
        return name

    def value(self, node: exp.Expr) -> str:
        if isinstance(node, exp.Column):
            return self.column(node)
        if isinstance(node, exp.Placeholder):
            return self.argument(node.name)
        if isinstance(node, exp.Star):
            return "all columns"
        if isinstance(node, exp.Literal):
            return str(node.this) if not node.is_string else f"'{node.this}'"
        if isinstance(node, exp.Alias):
            return f"{self.value(node.this)} (returned as {node.alias})"
        if isinstance(node, exp.Paren | exp.Cast):
            return self.value(node.this)
        if isinstance(node, exp.Neg):
            return f"minus {self.value(node.this)}"
        if isinstance(node, exp.Count):
            inner = node.this
            if inner is None or isinstance(inner, exp.Star):
                return "the number of records"
            if isinstance(inner, exp.Distinct):
                return f"the number of distinct {_and([self.value(e) for e in inner.expressions])} values"
            return f"the number of {self.value(inner)} values"
        for aggregate, word in _AGGREGATES.items():
            if isinstance(node, aggregate):
                inner = node.this
                if isinstance(inner, exp.Distinct):
                    return f"{word} of the distinct {_and([self.value(e) for e in inner.expressions])} values"
                return f"{word} {self.operand(inner)}"
        for kind, word in _ARITHMETIC.items():
            if isinstance(node, kind):
                return f"{self.operand(node.this)} {word} {self.operand(node.expression)}"
        if isinstance(node, exp.DPipe):
            return f"{self.value(node.this)} followed by {self.value(node.expression)}"
        if isinstance(node, exp.Subquery):
            return self.scalar(node.this)
        if isinstance(node, exp.Null):
            return "no value"
        if isinstance(node, exp.Boolean):
            return "true" if node.this else "false"
        if isinstance(node, exp.Distinct):
            return f"the distinct {_and([self.value(e) for e in node.expressions])}"
        if isinstance(node, exp.Case | exp.If):
            return "a value chosen by conditions"
        if isinstance(node, exp.Substring):
            start, length = node.args.get("start"), node.args.get("length")
            text = f"the part of {self.operand(node.this)}"
            text += f" from position {self.value(start)}" if start is not None else ""
            return text + (f", {self.value(length)} characters long" if length is not None else "")
        if isinstance(node, exp.Func):
            name = (str(node.this) if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
            arguments = [a for a in node.iter_expressions() if isinstance(a, exp.Expr)]
            words = _FUNCTION_WORDS.get(name, f"the {name.replace('_', ' ')} of")
            return f"{words} {_and([self.value(a) for a in arguments])}" if arguments else f"the {name} value"
        if isinstance(node, _CONDITIONS | exp.Connector | exp.Not):
            return f"whether {self.condition(node)}"
        return "a computed value"

    def operand(self, node: exp.Expr) -> str:
        """A value inside a bigger one: a calculation in brackets, so "(a plus b) times 2" reads unambiguously."""
        inner = node.this if isinstance(node, exp.Paren) else node
        text = self.value(inner)
        return f"({text})" if isinstance(inner, tuple(_ARITHMETIC)) else text

    def scalar(self, query: exp.Expr) -> str:
        listed = _json_list(query)
        return self.values_of(listed[0], first=True) if listed is not None else self.query(query)

    # -- conditions -----------------------------------------------------------------------------------------
    def condition(self, node: exp.Expr, nested: bool = False) -> str:
        if isinstance(node, exp.Paren):
            return self.condition(node.this, nested)
        if isinstance(node, exp.And):
            text = " and ".join(self.condition(part, True) for part in node.flatten())
            return f"({text})" if nested else text
        if isinstance(node, exp.Or):
            text = " or ".join(self.condition(part, True) for part in node.flatten())
            return f"({text})" if nested else text
        if isinstance(node, exp.Not):
            inner = node.this.this if isinstance(node.this, exp.Paren) else node.this
            if isinstance(inner, exp.In):
                return self.membership(inner, negated=True)
            if isinstance(inner, exp.Like | exp.ILike):
                return f"{self.value(inner.this)} does not match {self.pattern(inner)} (% stands for any text)"
            if isinstance(inner, exp.Is):
                return f"{self.value(inner.this)} has a value"
            if isinstance(inner, exp.Exists):
                return f"there is none of {self.query(inner.this)}"
            return f"it is not the case that {self.condition(inner, True)}"
        for kind, word in _COMPARE.items():
            if isinstance(node, kind):
                return f"{self.value(node.this)} {word} {self.value(node.expression)}"
        if isinstance(node, exp.Like | exp.ILike):
            return f"{self.value(node.this)} matches {self.pattern(node)} (% stands for any text)"
        if isinstance(node, exp.Between):
            low, high = self.value(node.args["low"]), self.value(node.args["high"])
            return f"{self.value(node.this)} is between {low} and {high}"
        if isinstance(node, exp.In):
            return self.membership(node, negated=False)
        if isinstance(node, exp.Is):
            return f"{self.value(node.this)} has no value"
        if isinstance(node, exp.Exists):
            return f"there is at least one of {self.query(node.this)}"
        return f"{self.value(node)} holds"

    def pattern(self, node: exp.Like | exp.ILike) -> str:
        """A LIKE condition's pattern in words: an argument, or the literal pattern."""
        value = self.value(node.expression)
        return "the given pattern" if value == "the given value" else f"the pattern {value}"

    def membership(self, node: exp.In, negated: bool) -> str:
        subject = self.value(node.this)
        relation = "is none of" if negated else "is one of"
        query = node.args.get("query")
        if query is not None:
            inner = query.this if isinstance(query, exp.Subquery) else query
            listed = _json_list(inner)
            if listed is not None:
                return f"{subject} {relation} {self.values_of(listed[0])}"
            return f"{subject} {'is not among' if negated else 'is among'} {self.query(inner)}"
        return f"{subject} {relation} {_and([self.value(e) for e in node.expressions])}"

    # -- queries --------------------------------------------------------------------------------------------
    def source(self, select: exp.Select) -> str:
        source = select.args.get("from_")
        items = ([source.this] if source is not None else []) + [j.this for j in select.args.get("joins") or []]
        listed = _json_list(select)
        if listed is not None:
            return f"the records given by {_and([self.argument(n) for n in listed])} (one per position)"
        parts = []
        for item in items:
            if isinstance(item, exp.Subquery):
                inner = item.this
                listed = _json_list(inner)
                if listed is not None:
                    parts.append(f"the records given by {_and([self.argument(n) for n in listed])} (one per position)")
                else:
                    parts.append(f"the rows of ({self.query(inner)})")
            elif isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
                parts.append(f"`{self.table_name(item.name)}`")
            else:
                parts.append("computed rows")
        if not parts:
            return "no table"
        text = _and(parts) + (" records" if all(p.startswith("`") for p in parts) else "")
        links = []
        self.qualify, before = True, self.qualify
        for join in select.args.get("joins") or []:
            on = join.args.get("on")
            if (
                isinstance(on, exp.EQ)
                and all(isinstance(s, exp.Column) for s in (on.this, on.expression))
                and on.this.name.lower() == on.expression.name.lower()
            ):
                links.append(f"linked by their {on.this.name}")
            elif on is not None:
                links.append(f"linked where {self.condition(on)}")
        self.qualify = before
        return f"{text} ({'; '.join(links)})" if links else text

    def query(self, node: exp.Expr) -> str:
        if isinstance(node, exp.Subquery):
            return self.query(node.this)
        if isinstance(node, exp.Union | exp.Intersect | exp.Except):
            left, right = self.query(node.this), self.query(node.expression)
            if isinstance(node, exp.Intersect):
                text = f"{left}, keeping only those also in {right}"
            elif isinstance(node, exp.Except):
                text = f"{left}, except those also in {right}"
            else:
                text = f"{left}, together with {right}"
            return text + self.ordering(node)
        if not isinstance(node, exp.Select):
            return "computed rows"
        columns = [self.value(e) for e in node.expressions]
        if columns and not columns[0].startswith(("the ", "all ", "minus ", "whether ")):
            columns[0] = f"the {columns[0]}"
        what = _and(columns)
        if node.args.get("distinct") is not None:
            what = f"the distinct values of {what}" if len(columns) == 1 else f"the distinct combinations of {what}"
        if columns == ["the number of records"] and node.args.get("group") is None:
            what = "the number"  # "the number of `singer` records", not "the number of records of ..."
        text = f"{what} of {self.source(node)}"
        where = node.args.get("where")
        if where is not None:
            text += f" {_whose(self.condition(where.this))}"
        group = node.args.get("group")
        if group is not None and group.expressions:
            text += f", one row per {_and([self.value(self.ordinal(node, e)) for e in group.expressions])}"
        having = node.args.get("having")
        if having is not None:
            text += f", keeping the groups {_whose(self.condition(having.this))}"
        return text + self.ordering(node)

    @staticmethod
    def ordinal(select: exp.Expr, key: exp.Expr) -> exp.Expr:
        """``ORDER BY 2`` names the second output column: the expression it stands for."""
        if isinstance(key, exp.Literal) and not key.is_string and isinstance(select, exp.Select):
            position = int(key.this) if key.this.isdigit() else 0
            if 1 <= position <= len(select.expressions):
                chosen: exp.Expr = select.expressions[position - 1]
                return chosen
        return key

    def sorting(self, node: exp.Expr) -> str:
        """ ", sorted by X, highest first" for a query with an order, else ""."""
        order = node.args.get("order")
        if order is None or not order.expressions:
            return ""
        keys = []
        for ordered in order.expressions:
            key = self.ordinal(node, ordered.this if isinstance(ordered, exp.Ordered) else ordered)
            descending = isinstance(ordered, exp.Ordered) and ordered.args.get("desc")
            keys.append(f"{self.value(key)}, {'highest' if descending else 'lowest'} first")
        return ", sorted by " + "; then by ".join(keys)

    def ordering(self, node: exp.Expr) -> str:
        text = self.sorting(node)
        limit = node.args.get("limit")
        count = limit.expression if isinstance(limit, exp.Limit) else None
        if isinstance(count, exp.Literal) and not count.is_string:
            text += "; only the first one" if count.this == "1" else f"; only the first {count.this}"
        offset = node.args.get("offset")
        if isinstance(offset, exp.Offset) and isinstance(offset.expression, exp.Literal):
            text += f", after skipping {offset.expression.this}"
        return text

    # -- arguments -----------------------------------------------------------------------------------------
    def above(self, node: exp.Expr) -> Iterator[exp.Expr]:
        """The ancestors of ``node`` up to this function's root (its tree may be part of a bigger query's)."""
        while node is not self.root and node.parent is not None:
            node = node.parent
            yield node

    def about(self, placeholder: str, kind: str, source: str | None) -> str:
        """What one argument is and what it selects."""
        node = next((p for p in self.root.find_all(exp.Placeholder) if p.name == placeholder), None)
        lead = (
            f"A list of {_column_words(source)} values, e.g. a column of another function's output"
            if kind == "list"
            else f"{TYPE_WORDS[kind].capitalize()} value"
        )
        if node is None:
            return f"{lead}."
        self.focus = placeholder
        try:
            condition = None
            for ancestor in self.above(node):
                if isinstance(ancestor, _CONDITIONS):
                    condition = ancestor
                    break
                if (
                    isinstance(ancestor, exp.Subquery)
                    and isinstance(ancestor.parent, exp.From | exp.Join)
                    and _json_list(ancestor.this) is not None
                ):
                    if len(_json_list(ancestor.this) or []) > 1:
                        return f"{lead}; with the other list arguments, it makes the records this function reads."
                    return f"{lead}; its values are the records this function reads."
            if condition is None:
                return f"{lead}, used in what the function computes."
            while isinstance(condition.parent, exp.Not | exp.Paren):  # NOT IN, NOT LIKE: say what is kept
                condition = condition.parent
            around = list(self.above(condition))
            selects = [a for a in around if isinstance(a, exp.Select) and _json_list(a) is None]
            if not selects:
                return f"{lead}: keeps the records {_whose(self.condition(condition))}."
            select = selects[0]
            below = around[: around.index(select)]
            subject = self.source(select)
            if any(isinstance(a, exp.Having) for a in below):
                subject = f"the groups of {subject}"
            elif any(isinstance(a, exp.Join) for a in below):
                subject = f"the pairs of {subject}"
            text = f"{lead}: keeps {subject} {_whose(self.condition(condition))}"
            if len(selects) > 1:
                text += ", in the nested lookup"
            path = [condition, *around]
            sides = [(above, side) for side, above in pairwise(path) if _is_set(above)]
            if sides:
                operation, side = sides[0]
                text += " (first part)" if side is operation.this else " (second part)"
            return text + "."
        finally:
            self.focus = None


def describe(
    root: exp.Expr,
    db_id: str,
    tables: Mapping[str, Sequence[str]],
    arguments: Sequence[tuple[str, str, str | None]],
) -> DocTemplate:
    """Plain-language documentation of a compiled function. ``arguments``: per argument in order, (its placeholder
    in ``root``, its type, and for a list the output column it carries)."""
    words = _Words(root, tables, {placeholder: i for i, (placeholder, _, _) in enumerate(arguments)})
    description = f"Returns {words.query(root)}, from the `{db_id}` database."
    return DocTemplate(
        description, tuple(words.about(placeholder, kind, source) for placeholder, kind, source in arguments)
    )


def parameters(template_arguments: Sequence[str], names: Sequence[str], kinds: Sequence[str]) -> dict[str, Any]:
    """The OpenAI ``parameters`` object: every argument with its JSON type and description, all required."""
    return {
        "type": "object",
        "properties": {
            name: {"type": JSON_TYPES[kind], "description": text}
            for name, kind, text in zip(names, kinds, template_arguments, strict=True)
        },
        "required": list(names),
        "additionalProperties": False,
    }


def _leaves(node: exp.Expr) -> list[exp.Select]:
    """The SELECTs a query's rows come from (both sides of a set operation)."""
    if isinstance(node, exp.Subquery):
        return _leaves(node.this)
    if isinstance(node, exp.Union | exp.Intersect | exp.Except):
        return _leaves(node.this) + _leaves(node.expression)
    return [node] if isinstance(node, exp.Select) else []


def hint_text(
    root: exp.Expr | None,
    db_id: str,
    tables: Mapping[str, Sequence[str]],
    gold: Sequence[Mapping[str, Any]],
) -> str:
    """A question's hint (HoHW Table 4): which database and records it is about, which columns the answer carries
    (as the functions name them) and in which order; from the gold query's structure, never its values."""
    if root is None:
        return f"The question is about the `{db_id}` database."
    words = _Words(root, tables, {})
    leaves = _leaves(root)
    main = list(dict.fromkeys(words.table_name(t.name) for s in leaves for t in words.from_tables(s)))
    every = [t for t in root.find_all(exp.Table) if isinstance(t.this, exp.Identifier)]
    if not main:  # rows from a nested query: its tables are the ones the question is about
        main = list(dict.fromkeys(words.table_name(t.name) for t in every))
    others = [n for n in dict.fromkeys(words.table_name(t.name) for t in every) if n not in main]
    about = _and([f"`{n}`" for n in main]) + " records" if main else "the records"
    text = f"The question is about {about} of the `{db_id}` database"
    if others:
        text += f", looked up with {_and([f'`{n}`' for n in others])} records"
    keys = list(gold[0]) if gold else []
    first = leaves[0].expressions if leaves else []
    columns = []
    for i, key in enumerate(keys):
        if _PLAIN_KEY.match(key) and not _sql_word_in(key):
            columns.append(f"`{key}`")
        elif i < len(first):
            shown = first[i].this if isinstance(first[i], exp.Alias) else first[i]
            columns.append(words.value(shown))
        else:
            columns.append("a computed value")
    if columns:
        one = "one column" if len(columns) == 1 else "columns"
        text += f". Each record of the answer has {one}: {_and(columns)}"
    return text + words.sorting(root) + "."
