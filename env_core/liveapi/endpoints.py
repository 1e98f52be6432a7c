"""Compile a question into its REST endpoint (Live API-Bench's REST formulation, §3): one read-only GET endpoint per
question, the gold SQL with the literals its WHERE compares turned into named query parameters; the endpoint's
name, path and description are built from templates over Spider's natural-language names. Endpoints with the same
parameterized SQL on the same database are merged (``dedupe``).
"""

from __future__ import annotations

import hashlib
import keyword
import re
from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from undertow.env_core.liveapi import parsing
from undertow.env_core.liveapi.vocabulary import MAX_NAME
from undertow.env_core.spider import Problem, Question, Schema


@dataclass(frozen=True)
class EndpointParam:
    """One query parameter of an endpoint."""

    name: str
    type: str  # "string" | "integer" | "number"
    description: str
    title: str
    value: Any  # the question's literal: the gold argument


@dataclass(frozen=True)
class Endpoint:
    """One GET endpoint: its tool name, path and description, and the SQL it runs on its database."""

    name: str
    path: str
    description: str
    database: str
    sql: str  # parameterized with :name placeholders
    params: list[EndpointParam] = field(default_factory=list)


def possessive(noun: str) -> str:
    """``noun's``, or ``nouns'`` for a noun ending in s."""
    return f"{noun}'" if noun.endswith("s") else f"{noun}'s"


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

    def __init__(self, scope: parsing.Scope, schema: Schema):
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
        node = parsing.unparen(node)
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
        if parsing.is_literal(node):
            value = parsing.literal_value(node)
            return (repr(value) if isinstance(value, str) else str(value)), _words(str(value))
        aggregation = parsing.AGGREGATE_NODES.get(type(node))
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
            for conjunct in parsing.conjuncts(on) if on is not None else []:
                sides = (
                    [parsing.unparen(conjunct.this), parsing.unparen(conjunct.expression)]
                    if isinstance(conjunct, exp.EQ)
                    else []
                )
                if len(sides) == 2 and all(isinstance(side, exp.Column) for side in sides):
                    left, right = (f"{possessive(self.owner(side))} {self.item(side)[0]}" for side in sides)
                    pairs.append(f"{left} with {right}")
                else:
                    pairs.append(self.condition(conjunct))
        return f" (matching {_join_words(pairs)})" if pairs else ""

    def condition(self, node: exp.Expr) -> str:
        """A WHERE / HAVING condition in words."""
        node = parsing.unparen(node)
        if isinstance(node, exp.And):
            return f"{self.condition(node.this)} and {self.condition(node.expression)}"
        if isinstance(node, exp.Or):
            return f"({self.condition(node.this)} or {self.condition(node.expression)})"
        if isinstance(node, exp.Not):
            inner = parsing.unparen(node.this)
            if isinstance(inner, exp.Is):
                return f"{self.item(inner.this)[0]} is present"
            return f"not ({self.condition(inner)})"
        if isinstance(node, exp.Is):
            return f"{self.item(node.this)[0]} is missing"
        subject = self.item(node.this)[0] if isinstance(node.this, exp.Expr) else ""
        negation = " not" if parsing.is_negated(node) else ""
        if isinstance(node, exp.Between):
            low, high = self.item(node.args["low"])[0], self.item(node.args["high"])[0]
            return f"{subject} is{negation} between {low} and {high}"
        if isinstance(node, exp.In):
            values = [self.item(v)[0] for v in node.expressions]
            return f"{subject} is{negation} one of {_join_words(values)}"
        if isinstance(node, exp.Like):
            pattern = parsing.unparen(node.expression)
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
        condition = parsing.COMPARISONS.get(type(node))
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
                value = parsing.literal_value(node.args.get(bound))
                if value is not parsing.NO_VALUE:
                    add(node.args[bound], node.this, prefix, " (inclusive)", value, "")
        elif isinstance(node, exp.In) and not node.args.get("query"):
            for item in list(node.expressions):
                value = parsing.literal_value(item)
                if value is not parsing.NO_VALUE:
                    add(item, node.this, "", " (one of the accepted values)", value, "")
        elif isinstance(node, exp.Like):
            pattern = parsing.unparen(node.expression)
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
        elif type(node) in parsing.COMPARISONS:
            condition = parsing.COMPARISONS[type(node)]
            left, right = parsing.unparen(node.this), parsing.unparen(node.expression)
            if parsing.is_literal(right) and not parsing.is_literal(left):
                add(
                    node.expression,
                    left,
                    "",
                    _BOUND_WORDS.get(condition, ""),
                    parsing.literal_value(right),
                    _QUALIFIERS[condition],
                )
            elif parsing.is_literal(left) and not parsing.is_literal(right):
                condition = parsing.FLIPPED[condition]
                add(
                    node.this,
                    right,
                    "",
                    _BOUND_WORDS.get(condition, ""),
                    parsing.literal_value(left),
                    _QUALIFIERS[condition],
                )
    return params


def _having_words(condition: exp.Expr, namer: _Namer) -> str:
    """Name words of a HAVING condition: ``count_above_10`` for COUNT(*) > 10; ``filtered`` when not that simple."""
    words = []
    for conjunct in parsing.conjuncts(condition):
        kind = parsing.COMPARISONS.get(type(conjunct))
        value = parsing.literal_value(conjunct.expression) if kind else parsing.NO_VALUE
        if kind is None or value is parsing.NO_VALUE:
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


def compile_endpoint(question: Question, schema: Schema) -> Endpoint:
    """The question's REST endpoint; raises ``Skip`` for a query that is no single SELECT (``rest_endpoint`` turns
    that into a Problem)."""
    select, scope = parsing.parse_select(question.query, schema)
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
                isinstance(c, exp.EQ) and isinstance(parsing.unparen(c.expression), exp.Placeholder)
                for c in parsing.conjuncts(where.this)
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
    count = _words(str(parsing.literal_value(limit.expression))) if limit is not None else ""
    if order is not None:
        (_, first_name), first_desc = keys[0]
        if limit is not None:  # "top_3_by_age": the 3 highest ages; "bottom_3_by_age": the 3 lowest
            parts.append(f"{'top' if first_desc else 'bottom'}_{count}_by_{first_name}")
        else:
            parts.append(f"sorted_by_{first_name}" + ("_desc" if first_desc else ""))
    elif limit is not None:
        parts.append(f"limit_{count}")
    if limit is not None:
        plural = "row" if count == "1" else f"{parsing.snippet(limit.expression)} rows"
        description += f", first {plural} only"
    offset = select.args.get("offset")
    if offset is not None:
        description += f", skipping the first {parsing.snippet(offset.expression)}"
        parts.append(f"offset_{_words(parsing.snippet(offset.expression))}")

    rest = "_".join([what_name, *parts])
    name = _fit_name(f"{table_words}_{rest}", question.db_id)
    sql = normalize_identifiers(select, dialect="sqlite").sql("sqlite")
    return Endpoint(name, f"/v1/{question.db_id}/{table_words}/{rest}", description, question.db_id, sql, params)


def rest_endpoint(question: Question, schema: Schema) -> Endpoint | Problem:
    """The question's REST endpoint (any single SELECT without nesting), or a Problem."""
    return parsing.guarded(question, compile_endpoint, schema)


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
