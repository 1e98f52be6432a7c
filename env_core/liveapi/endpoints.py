"""Compile a question into its REST endpoint (Live API-Bench's REST formulation, §3): one read-only GET endpoint per
query — plain, nested or a set operation — whose parameters are the values a caller varies: every literal a
condition compares (WHERE and HAVING, in subqueries and set-operation branches too), the LIMIT count, each ORDER BY
column and the column each aggregate reads. Literals become bound query parameters; a sort or aggregate column
becomes a string parameter with an ``enum`` of the columns it may name, written into the SQL as a quoted identifier
only after it matched the enum (``rest.render_sql``). Names, paths and descriptions say in general terms what the
endpoint returns and what each parameter selects, never one question's values or its SQL. Endpoints with the same
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
    """One query parameter of an endpoint. A column parameter (``identifiers`` set) names a column: its ``enum``
    lists the columns it may name and ``identifiers`` maps each to the quoted SQL identifier it stands for."""

    name: str
    type: str  # "string" | "integer" | "number"
    description: str
    title: str
    value: Any  # the question's value: the gold argument (a column parameter's: the enum entry of its column)
    enum: list[str] | None = None
    identifiers: dict[str, str] | None = None


@dataclass(frozen=True)
class Endpoint:
    """One GET endpoint: its tool name, path and description, and the SQL it runs on its database."""

    name: str
    path: str
    description: str
    database: str
    sql: str  # parameterized with :name placeholders (a column parameter's is replaced by its identifier)
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


def quote_identifier(name: str) -> str:
    """An SQL identifier in double quotes (a quote inside doubled)."""
    return '"' + name.replace('"', '""') + '"'


_AGGREGATE_WORDS = {  # (description words, name word)
    "count": ("number of", "count"),
    "count_distinct": ("number of distinct", "count_distinct"),
    "sum": ("total", "total"),
    "mean": ("average", "average"),
    "min": ("minimum", "min"),
    "max": ("maximum", "max"),
}
_COLUMN_PARAMS = {  # aggregation -> (parameter name, what is computed over the chosen column)
    "count_distinct": ("distinct_column", "number of distinct values"),
    "sum": ("total_column", "total"),
    "mean": ("average_column", "average"),
    "min": ("min_column", "lowest value"),
    "max": ("max_column", "highest value"),
}
_NUMERIC_AGGREGATIONS = {"sum", "mean"}  # they read numbers: their column parameter lists number columns only
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
_LIKE_WORDS = {
    "contains": " (text it contains)",
    "starts": " (text it starts with)",
    "ends": " (text it ends with)",
    "pattern": " (SQL LIKE pattern: % matches any text, _ one character)",
}
_TRANSFORM_WORDS = {exp.Lower: "lower-cased", exp.Upper: "upper-cased", exp.Round: "rounded", exp.Substring: "part of"}
_SET_OPERATIONS = {  # (how the second query's rows join the first's, name word)
    exp.Union: ("together with those of", "plus"),
    exp.Intersect: ("keeping only those also among", "also_in"),
    exp.Except: ("leaving out those among", "except"),
}
_FIXED = "a fixed value"  # how a literal left in the SQL is described: a description carries no literal


def _aggregation(node: exp.Expr) -> tuple[str, exp.Expr] | None:
    """(aggregation, the expression it reads) of an aggregate call; COUNT(DISTINCT x) is count_distinct of x."""
    aggregation = parsing.AGGREGATE_NODES.get(type(node))
    if aggregation is None:
        return None
    argument = node.this
    if isinstance(node, exp.Count) and isinstance(argument, exp.Distinct) and len(argument.expressions) == 1:
        return "count_distinct", argument.expressions[0]
    return aggregation, argument


class _Namer:
    """Turns one query into an endpoint: its parameters (replacing what they stand for by placeholders) and the
    natural-language phrases of its parts (each SELECT's scope resolves its columns to Spider's names)."""

    def __init__(self, tree: exp.Expr, scopes: dict[int, parsing.Scope], schema: Schema):
        self.scopes = scopes
        self.schema = schema
        self.scope = scopes[id(next(n for n in tree.walk(bfs=False) if isinstance(n, exp.Select)))]
        self.depth = 0  # how deep in nested queries the current SELECT is
        self.params: dict[str, EndpointParam] = {}
        self.like_forms: dict[str, str] = {}  # parameter -> contains | starts | ends | pattern
        self.qualifiers: dict[str, str] = {}  # parameter -> how it is compared, for the endpoint name

    # -- scopes and natural names

    def enter(self, select: exp.Select) -> tuple[parsing.Scope, int]:
        """Make ``select`` the current SELECT; returns what ``leave`` restores."""
        saved = self.scope, self.depth
        self.scope, self.depth = self.scopes[id(select)], self.depth + 1
        return saved

    def leave(self, saved: tuple[parsing.Scope, int]) -> None:
        self.scope, self.depth = saved

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
        return self.tables() or "record"

    def tables(self) -> str:
        """The current SELECT's tables in words."""
        return _join_words(list(dict.fromkeys(self.table(ref.table) for ref in self.scope.refs)))

    def unique_name(self, base: str) -> str:
        if base[0].isdigit() or keyword.iskeyword(base):  # the name must serve as an identifier (SQL, Python)
            base = f"{base}_value" if not base[0].isdigit() else f"value_{base}"
        name, n = base, 1
        while name in self.params:
            n += 1
            name = f"{base}_{n}"
        return name

    def nested(self) -> str:
        """How a parameter of a nested query says where it applies ("" at the top)."""
        return f" in the nested lookup of {self.tables() or 'records'}" if self.depth > 1 else ""

    # -- parameters

    def add(self, param: EndpointParam, qualifier: str = "") -> exp.Placeholder:
        self.params[param.name] = param
        self.qualifiers[param.name] = qualifier
        return exp.Placeholder(this=param.name)

    def value_param(
        self, literal: exp.Expr, subject: exp.Expr, prefix: str, extra: str, value: Any, qualifier: str
    ) -> exp.Placeholder:
        """Replace a compared literal by a parameter named after what it is compared with."""
        subject = parsing.unparen(subject)
        aggregate = _aggregation(subject)
        column = subject if isinstance(subject, exp.Column) else subject.find(exp.Column)
        if aggregate is not None:  # a HAVING bound on a group's aggregate: COUNT(*) > 10
            phrase, words = self.item(subject)
            base, natural, of = words, phrase, " of a group"
        elif column is not None and (found := self.scope.try_resolve(column)) is not None:
            base, natural = _snake(found[1]), self.schema.column_names.get(found, found[1])
            of = f" of the {self.owner(subject)}"
        elif column is not None:
            base, natural, of = (
                _snake(column.name),
                column.name.replace("_", " ").lower(),
                f" of the {self.owner(subject)}",
            )
        else:
            base, natural, of = "value", "value", ""
        name = self.unique_name(f"{prefix}{base}" or "value")
        kind = "string" if isinstance(value, str) else "integer" if isinstance(value, int) else "number"
        title = natural[:1].upper() + natural[1:]
        words = {"min_": "Lowest ", "max_": "Highest "}.get(prefix, "")
        shown = f"{words}{natural}" if words else title
        description = f"{shown}{of}{extra}{self.nested()}"
        placeholder = self.add(EndpointParam(name, kind, description, shown, value), qualifier)
        literal.replace(placeholder)
        return placeholder

    def conditions(self, clause: exp.Expr) -> None:
        """Replace the literals a WHERE / HAVING clause compares (not those of nested queries) with parameters."""
        for node in list(parsing.own_nodes(clause)):
            if isinstance(node, exp.Between):
                for bound, prefix in (("low", "min_"), ("high", "max_")):
                    value = parsing.literal_value(node.args.get(bound))
                    if value is not parsing.NO_VALUE:
                        self.value_param(node.args[bound], node.this, prefix, " (inclusive)", value, "")
            elif isinstance(node, exp.In) and not node.args.get("query"):
                for item in list(node.expressions):
                    value = parsing.literal_value(item)
                    if value is not parsing.NO_VALUE:
                        self.value_param(item, node.this, "", " (one of the accepted values)", value, "")
            elif isinstance(node, exp.Like):
                self.like(node)
            elif type(node) in parsing.COMPARISONS:
                condition = parsing.COMPARISONS[type(node)]
                left, right = parsing.unparen(node.this), parsing.unparen(node.expression)
                if parsing.is_literal(right) and not parsing.is_literal(left):
                    literal, subject, value = node.expression, left, parsing.literal_value(right)
                elif parsing.is_literal(left) and not parsing.is_literal(right):
                    condition = parsing.FLIPPED[condition]
                    literal, subject, value = node.this, right, parsing.literal_value(left)
                else:
                    continue
                self.value_param(literal, subject, "", _BOUND_WORDS.get(condition, ""), value, _QUALIFIERS[condition])

    def like(self, node: exp.Like) -> None:
        pattern = parsing.unparen(node.expression)
        if not (isinstance(pattern, exp.Literal) and pattern.is_string) or node.args.get("escape") is not None:
            return
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
        value = inner if form != "pattern" else text
        placeholder = self.value_param(pattern, node.this, "", _LIKE_WORDS[form], value, _LIKE_QUALIFIERS[form])
        self.like_forms[placeholder.name] = form
        if form != "pattern":
            wrapped: exp.Expr = placeholder.copy()
            if form in ("contains", "ends"):
                wrapped = exp.DPipe(this=exp.Literal.string("%"), expression=wrapped)
            if form in ("contains", "starts"):
                wrapped = exp.DPipe(this=wrapped, expression=exp.Literal.string("%"))
            placeholder.replace(wrapped)

    def choices(self, select: exp.Select) -> dict[tuple[str, str], tuple[str, str]]:
        """The columns a column parameter of this SELECT may name: (table, column) -> (enum entry, SQL identifier).
        The entry is the column's name, ``table.column`` where two of the SELECT's tables share the name; none
        where a table is joined with itself (its columns could not be told apart)."""
        refs = self.scope.refs
        if len({ref.table for ref in refs}) != len(refs):
            return {}
        counts: dict[str, int] = {}
        for ref in refs:
            for column in self.schema.tables.get(ref.table, []):
                counts[column.lower()] = counts.get(column.lower(), 0) + 1
        out: dict[tuple[str, str], tuple[str, str]] = {}
        for ref in refs:
            for column in self.schema.tables.get(ref.table, []):
                entry = column if counts[column.lower()] == 1 else f"{ref.table}.{column}"
                out[(ref.table, column)] = (entry, f"{quote_identifier(ref.ref)}.{quote_identifier(column)}")
        return out

    def column_param(
        self,
        nodes: list[exp.Column],
        found: tuple[str, str],
        allowed: dict[tuple[str, str], tuple[str, str]],
        base: str,
        description: str,
        title: str,
    ) -> bool:
        """Replace the columns ``nodes`` (all naming ``found``) by a parameter choosing among ``allowed``; False
        (nothing changes) when ``found`` is not allowed or there is nothing to choose."""
        if found not in allowed or len(allowed) < 2:
            return False
        name = self.unique_name(base)
        enum = [entry for entry, _ in allowed.values()]
        identifiers = dict(allowed.values())
        value = allowed[found][0]
        self.add(EndpointParam(name, "string", description + self.nested(), title, value, enum, identifiers))
        for node in nodes:
            node.replace(exp.Placeholder(this=name))
        return True

    def aggregates(self, select: exp.Select) -> None:
        """One column parameter per column this SELECT's aggregates read (AVG / SUM / MIN / MAX and COUNT(DISTINCT)
        of a plain column); several aggregates of one column share it."""
        read: dict[tuple[str, str], tuple[list[exp.Column], list[str]]] = {}
        for node in list(parsing.own_nodes(select)):
            found_aggregate = _aggregation(node)
            if found_aggregate is None or found_aggregate[0] == "count":
                continue
            aggregation, argument = found_aggregate
            if not isinstance(argument, exp.Column) or isinstance(argument.this, exp.Star):
                continue
            found = self.scope.try_resolve(argument)
            if found is not None:
                nodes, aggregations = read.setdefault(found, ([], []))
                nodes.append(argument)
                if aggregation not in aggregations:
                    aggregations.append(aggregation)
        if not read:
            return
        choices = self.choices(select)
        for found, (nodes, aggregations) in read.items():
            allowed = choices
            if _NUMERIC_AGGREGATIONS & set(aggregations):
                allowed = {k: v for k, v in choices.items() if self.schema.column_types.get(k) == "number"}
            base = _COLUMN_PARAMS[aggregations[0]][0] if len(aggregations) == 1 else "aggregated_column"
            computed = _join_words([_COLUMN_PARAMS[a][1] for a in aggregations])
            verb = "is" if len(aggregations) == 1 else "are"
            description = f"Column of the {self.tables()} whose {computed} {verb} computed"
            self.column_param(nodes, found, allowed, base, description, base.replace("_", " ").capitalize())

    def order(self, select: exp.Select) -> None:
        """A column parameter per ORDER BY key that is a plain column (the direction stays the endpoint's)."""
        order = select.args.get("order")
        if order is None:
            return
        aliases = {a.alias.lower() for a in select.expressions if isinstance(a, exp.Alias)}
        choices = self.choices(select)
        group = select.args.get("group")
        if group is not None:  # a grouped SELECT sorts by what it groups on
            grouped = {self.scope.try_resolve(g) for g in group.expressions if isinstance(g, exp.Column)}
            choices = {k: v for k, v in choices.items() if k in grouped}
        for position, ordered in enumerate(order.expressions):
            key = parsing.unparen(ordered.this)
            if not isinstance(key, exp.Column) or isinstance(key.this, exp.Star):
                continue
            if not key.table and key.name.lower() in aliases:
                continue
            found = self.scope.try_resolve(key)
            if found is None:
                continue
            direction = "descending" if ordered.args.get("desc") else "ascending"
            if position == 0:
                description = f"Column of the {self.tables()} to sort the rows by ({direction} order)"
            else:
                description = f"Column to sort rows by next ({direction} order), among rows the keys before tie on"
            self.column_param([key], found, choices, "sort_by", description, "Sort by")

    def limit(self, query: exp.Expr) -> None:
        """The LIMIT count as an integer parameter."""
        limit = query.args.get("limit")
        if limit is None or not isinstance(limit, exp.Limit):
            return
        value = parsing.literal_value(limit.expression)
        if not isinstance(value, int) or value < 0:
            return
        description = f"Largest number of rows to return{self.nested()}"
        placeholder = self.add(EndpointParam(self.unique_name("limit"), "integer", description, "Limit", value))
        limit.expression.replace(placeholder)

    def parameterize(self, query: exp.Expr) -> None:
        """Turn every value a caller varies in ``query`` (nested queries and set-operation branches included)
        into a parameter."""
        query = parsing.unparen(query)
        while isinstance(query, exp.Subquery):
            query = query.this
        if isinstance(query, exp.SetOperation):
            self.parameterize(query.this)
            self.parameterize(query.expression)
            self.limit(query)
            return
        if not isinstance(query, exp.Select):
            return
        saved = self.enter(query)
        try:
            self.aggregates(query)
            for clause in ("where", "having"):
                if query.args.get(clause) is not None:
                    self.conditions(query.args[clause])
            self.order(query)
            self.limit(query)
            for node in [n for n in parsing.own_nodes(query) if n is not query and isinstance(n, parsing.QUERY_NODES)]:
                self.parameterize(node)
        finally:
            self.leave(saved)

    # -- phrases

    def chosen(self, param: EndpointParam) -> str:
        """How a description names the column a column parameter chooses."""
        others = [p for p in self.params.values() if p.identifiers is not None and p.name != param.name]
        same_kind = [p for p in others if p.name.startswith("sort_by") == param.name.startswith("sort_by")]
        return f"the column chosen by {param.name}" if same_kind else "a chosen column"

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
            if param.identifiers is not None:
                return self.chosen(param), "column"
            shared = sum(p.title == param.title for p in self.params.values()) > 1
            return f"the given {param.name.replace('_', ' ') if shared else param.title.lower()}", param.name
        if isinstance(node, exp.Subquery | exp.Select | exp.SetOperation):
            return f"(the {self.query(node)[0]})", "nested"
        if parsing.is_literal(node) or isinstance(node, exp.Null | exp.Boolean):
            return _FIXED, "value"
        found = _aggregation(node)
        if found is not None:
            aggregation, argument = found
            if isinstance(argument, exp.Star):
                return "number of records", "count"
            words, name = _AGGREGATE_WORDS[aggregation]
            phrase, inner = self.item(argument)
            if isinstance(argument, exp.Placeholder):
                return f"{_COLUMN_PARAMS[aggregation][1]} of {phrase}", name
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
            if isinstance(inner, exp.In):
                return self.among(inner, " not")
            if isinstance(inner, exp.Exists):
                return f"there are no (matching {self.query(inner.this)[0]})"
            return f"not ({self.condition(inner)})"
        if isinstance(node, exp.Is):
            return f"{self.item(node.this)[0]} is missing"
        if isinstance(node, exp.Exists):
            return f"there are (matching {self.query(node.this)[0]})"
        subject = self.item(node.this)[0] if isinstance(node.this, exp.Expr) else ""
        negation = " not" if parsing.is_negated(node) else ""
        if isinstance(node, exp.Between):
            low, high = self.item(node.args["low"])[0], self.item(node.args["high"])[0]
            return f"{subject} is{negation} between {low} and {high}"
        if isinstance(node, exp.In):
            return self.among(node, negation)
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

    def among(self, node: exp.In, negation: str) -> str:
        subject = self.item(node.this)[0]
        query = node.args.get("query")
        if query is not None:
            return f"{subject} is{negation} among (the {self.query(query)[0]})"
        values = [self.item(v)[0] for v in node.expressions]
        return f"{subject} is{negation} one of {_join_words(values)}"

    def main_table(self, query: exp.Expr) -> str:
        """Name words of the table a query is mainly about (its first column's, or its first table)."""
        query = parsing.unparen(query)
        while isinstance(query, exp.Subquery):
            query = parsing.unparen(query.this)
        if isinstance(query, exp.SetOperation):
            return self.main_table(query.this)
        if not isinstance(query, exp.Select):
            return "data"
        scope = self.scopes[id(query)]
        main = scope.refs[0].table if scope.refs else None
        first = next((c for item in query.expressions for c in item.find_all(exp.Column)), None)
        if first is not None and (found := scope.try_resolve(first)) is not None:
            main = found[0]
        return _words(main) if main else "data"

    def query(self, query: exp.Expr) -> tuple[str, str]:
        """(description phrase, name words) of a query: what it returns and what its parameters select."""
        query = parsing.unparen(query)
        while isinstance(query, exp.Subquery):
            query = parsing.unparen(query.this)
        if isinstance(query, exp.SetOperation):
            first, first_name = self.query(query.this)
            second, second_name = self.query(query.expression)
            joiner, word = _SET_OPERATIONS.get(type(query), ("combined with", "combined"))
            kept = " (repeats kept)" if isinstance(query, exp.Union) and not query.args.get("distinct") else ""
            text = f"{first}; {joiner} the {second}{kept}"
            name = f"{first_name}_{word}_{self.main_table(query.expression)}_{second_name}"
            tail, parts = self.ending(query)
            return text + tail, "_".join([name, *parts])
        if not isinstance(query, exp.Select):
            return "records", "data"
        saved = self.enter(query)
        try:
            return self.select(query)
        finally:
            self.leave(saved)

    def select(self, select: exp.Select) -> tuple[str, str]:
        items = [self.item(item) for item in select.expressions]
        distinct = select.args.get("distinct") is not None
        what_name = ("distinct_" if distinct else "") + ("_".join(name for _, name in items) or "data")
        what = ("distinct " if distinct else "") + _join_words([phrase for phrase, _ in items])
        tables = self.tables() or "a nested result"
        text = f"{what} from {tables}"
        parts: list[str] = []
        where = select.args.get("where")
        if where is not None:
            own = list(parsing.conjuncts(where.this))
            simple = [parsing.unparen(c.expression) for c in own if isinstance(c, exp.EQ)]
            if len(simple) == len(own) and all(
                isinstance(p, exp.Placeholder) and self.params[p.name].identifiers is None for p in simple
            ):
                text += f", for a given {_join_words([self.params[p.name].title.lower() for p in simple])}"
            else:
                text += f", where {self.condition(where.this)}"
            parts.append(self.clause_words(where, "by", "filtered"))
        group = select.args.get("group")
        if group is not None:
            grouped = [self.item(g) for g in group.expressions]
            text += f", per {_join_words([g[0] for g in grouped])}"
            parts.append("per_" + "_".join(g[1] for g in grouped))
        having = select.args.get("having")
        if having is not None:
            text += f", keeping groups where {self.condition(having.this)}"
            parts.append(self.clause_words(having, "having", "having_filtered"))
        tail, more = self.ending(select)
        return text + tail, "_".join([what_name, *parts, *more])

    def clause_words(self, clause: exp.Expr, prefix: str, otherwise: str) -> str:
        """Name words of a WHERE / HAVING clause: the parameters it (and its nested queries) compares."""
        found = [n.name for n in clause.walk(bfs=False) if isinstance(n, exp.Placeholder)]
        names = list(dict.fromkeys(n for n in found if self.params[n].identifiers is None))
        if not names:
            return otherwise
        return f"{prefix}_" + "_and_".join(n + self.qualifiers[n] for n in names)

    def ending(self, query: exp.Expr) -> tuple[str, list[str]]:
        """(description, name words) of a query's ORDER BY, LIMIT and OFFSET."""
        text, parts = "", []
        order, limit, offset = (query.args.get(k) for k in ("order", "limit", "offset"))
        first_name, first_desc = "", False
        if order is not None:
            keys = [(self.item(o.this), bool(o.args.get("desc"))) for o in order.expressions]
            text += ", sorted by " + _join_words(
                [f"{phrase} ({'descending' if desc else 'ascending'})" for (phrase, _), desc in keys]
            )
            (_, first_name), first_desc = keys[0]
        if isinstance(limit, exp.Limit):
            given = isinstance(parsing.unparen(limit.expression), exp.Placeholder)
            text += ", up to a given number of rows" if given else ", up to a fixed number of rows"
            if order is not None:  # "top_n_by_age": the highest ages first; "bottom_n_by_age": the lowest
                parts.append(f"{'top' if first_desc else 'bottom'}_n_by_{first_name}")
            else:
                parts.append("first_n")
        elif order is not None:
            parts.append(f"sorted_by_{first_name}" + ("_desc" if first_desc else ""))
        if offset is not None:
            text += ", skipping a fixed number of rows first"
            parts.append("after_offset")
        return text, parts


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
    """The question's REST endpoint; raises ``Skip`` for a query one endpoint cannot answer (unreadable SQL, no
    SELECT, a table the schema lacks: ``rest_endpoint`` turns that into a Problem)."""
    tree, scopes = parsing.parse_query(question.query, schema)
    namer = _Namer(tree, scopes, schema)
    namer.parameterize(tree)
    what, rest = namer.query(tree)
    table_words = namer.main_table(tree)
    name = _fit_name(f"{table_words}_{rest}", question.db_id)
    sql = normalize_identifiers(tree, dialect="sqlite").sql("sqlite")
    description = f"Get {what}"
    params = list(namer.params.values())
    return Endpoint(name, f"/v1/{question.db_id}/{table_words}/{rest}", description, question.db_id, sql, params)


def rest_endpoint(question: Question, schema: Schema) -> Endpoint | Problem:
    """The question's REST endpoint (any single query: plain, nested or a set operation), or a Problem."""
    return parsing.guarded(question, compile_endpoint, schema)


def endpoint_key(endpoint: Endpoint) -> tuple[str, str]:
    """What makes two endpoints the same tool: the database and the parameterized SQL."""
    return endpoint.database, endpoint.sql


def dedupe(endpoints: list[Endpoint]) -> dict[tuple[str, str], Endpoint]:
    """Merge endpoints with the same parameterized SQL on the same database (one tool serves them all: questions that
    differ only in their values, sort columns or aggregated columns) and make the names and paths of different ones
    unique (``_2``, ``_3``, in input order). Keyed by ``(database, sql)``: the same SQL on two databases is two tools
    (spider-dev's ``SELECT count(*) FROM singer`` is in two). A merged endpoint keeps the first one's parameter
    values; each question's own gold values stay on its own endpoint."""
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
