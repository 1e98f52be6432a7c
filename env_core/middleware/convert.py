"""Knowledge bases for the middleware family's KB environment: a relational database turned into a KB
(``database_to_kb``), multi-hop questions with gold tool calls derived from a KB (``derive_questions``) and chosen
over several KBs (``select_questions``), as FUXI §4 selects its questions (see "Questions" below), and a large
synthetic KB for benchmarks (``synthetic_kb``).

How a database becomes a KB:

- A *junction* table (exactly two foreign keys, and no primary-key column outside them; e.g. singer_in_concert,
  or Has_Pet, which has no primary key at all) links the two rows each of its rows references, both ways. Its other
  columns are dropped.
- Every other table with a primary key is an *entity* table: each row is an entity whose type is the table's name
  and whose name is its most name-like text column (``Name``, ``…_name``, ``title``, a column named like its table;
  else the text column with the most distinct values, if at least half its values differ; a first and a last name
  are joined). A row without one is called ``"<table> <key>"`` (a composite key joined with ``/``). Names several
  entities share get ``" (<table> <key>)"`` (``TripleStore.create``).
- Tables with neither are left out (a table without a primary key has no identity to give its rows).
- Keys match after trimming and reading numbers as numbers (Spider stores ``' APG'`` against ``'APG'`` and ``'1'``
  against ``1``); a reference that matches no row is dropped.
- A non-key column whose values are all numbers (``NULL``, ``''`` and ``'null'`` aside) is an attribute
  ``<table>.<column>`` (text columns holding numbers count: Spider keeps years and ages as text).

Relation names are lower snake case, Freebase style (``<table>.<property>``):

- a foreign key ``child.Column -> parent`` gives ``child.<column>`` (a trailing ``_id`` dropped, the parent's
  name when nothing is left): ``concert.stadium``, ``flights.source_airport``;
- and its inverse ``parent.<child>``: ``stadium.concert``; when the child has several keys to the parent,
  ``parent.<child>_by_<column>``: ``airports.flights_by_source_airport``;
- a junction ``J`` between ``A`` and ``B`` gives ``a.j.<column to B>`` and ``b.j.<column to A>``:
  ``concert.singer_in_concert.singer`` and ``singer.singer_in_concert.concert``.

A name that is already taken gets ``_2``, ``_3``, … so every relation is distinct.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from undertow.env_core.errors import DataError
from undertow.env_core.middleware.kb import (
    KBState,
    KBStats,
    KBWriter,
    TripleStore,
    as_number,
    run_tool,
)
from undertow.env_core.spider import Schema

__all__ = [
    "KBStats",
    "Question",
    "attribute_kind",
    "database_to_kb",
    "derive_questions",
    "select_questions",
    "synthetic_kb",
]

# ---------------------------------------------------------------------------------------------------------------
# Database -> KB


@dataclass(frozen=True)
class _ForeignKey:
    columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...]


@dataclass
class _Table:
    name: str
    columns: list[str]
    declared: dict[str, str]
    primary: list[str]
    foreign: list[_ForeignKey] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def key_columns(self) -> set[str]:
        return set(self.primary) | {c for fk in self.foreign for c in fk.columns}

    @property
    def junction(self) -> bool:
        linked = {c for fk in self.foreign for c in fk.columns}
        return len(self.foreign) == 2 and set(self.primary) <= linked


_INTEGER = re.compile(r"[+-]?\d+")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def snake(name: str) -> str:
    """``SourceAirport`` -> ``source_airport``, ``Official_ratings_(millions)`` -> ``official_ratings_millions``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_").lower() or "x"


def _stem(fk: _ForeignKey) -> str:
    """The property a foreign key stands for: its column without a trailing ``_id`` (the parent's name for a
    composite key or when nothing is left)."""
    if len(fk.columns) != 1:
        return snake(fk.parent)
    stem = snake(fk.columns[0])
    stem = "" if stem == "id" else stem.removesuffix("_id")
    return stem or snake(fk.parent)


def _key_text(value: Any) -> str | None:
    """A key value as matched across tables: numbers as numbers, text trimmed; None for a missing value."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = " ".join(str(value).split())
    if _INTEGER.fullmatch(text):
        return str(int(text))  # exactly, however long: a float would merge neighbouring large ids
    number = as_number(text)
    if number is not None:
        return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)
    return text or None


def _shown(value: Any) -> str:
    text = _key_text(value)
    return "" if text is None else text


def _read_tables(conn: sqlite3.Connection, schema: Schema | None, db_path: Path) -> list[_Table]:
    present = [
        str(r[0])
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    ]
    by_lower = {name.lower(): name for name in present}
    names = present
    if schema is not None:
        wanted = [t for t in schema.tables if not t.lower().startswith("sqlite_")]  # SQLite's own bookkeeping
        missing = [t for t in wanted if t.lower() not in by_lower]
        if missing:
            raise DataError(f"{db_path}: the schema names tables the database lacks: {', '.join(missing)}")
        names = [by_lower[t.lower()] for t in wanted]
    tables: list[_Table] = []
    for name in names:
        info = conn.execute(f"PRAGMA table_info({_quote(name)})").fetchall()
        columns = [str(row[1]) for row in info]
        primary = [str(row[1]) for row in sorted((row for row in info if row[5]), key=lambda row: row[5])]
        tables.append(_Table(name, columns, {str(row[1]): str(row[2] or "") for row in info}, primary))
    known = {t.name.lower(): t for t in tables}
    for table in tables:
        column_of = {c.lower(): c for c in table.columns}
        groups: dict[int, list[tuple[Any, ...]]] = {}
        for row in conn.execute(f"PRAGMA foreign_key_list({_quote(table.name)})"):
            groups.setdefault(int(row[0]), []).append(tuple(row))
        for _, parts in sorted(groups.items()):
            parts.sort(key=lambda row: row[1])
            parent = known.get(str(parts[0][2]).lower())
            if parent is None:  # a reference to a table that is not there: nothing to link to
                continue
            parent_column_of = {c.lower(): c for c in parent.columns}
            local = tuple(column_of.get(str(p[3]).lower(), "") for p in parts)
            if parts[0][4] is None:
                targets = tuple(parent.primary)
            else:
                targets = tuple(parent_column_of.get(str(p[4]).lower(), "") for p in parts)
            if all(local) and all(targets) and len(targets) == len(local):
                table.foreign.append(_ForeignKey(local, parent.name, targets))
    return tables


_FIRST = {"fname", "firstname", "givenname", "forename"}
_LAST = {"lname", "lastname", "surname", "familyname"}
_DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _name_columns(table: _Table) -> list[str]:
    """The column(s) whose text names a row; [] when none does (see the module docstring)."""
    linked = {c for fk in table.foreign for c in fk.columns}
    position = {c: i for i, c in enumerate(table.columns)}
    texts: dict[str, list[str]] = {}
    for column in table.columns:
        if column in linked or any(w in table.declared[column].upper() for w in ("DATE", "TIME")):
            continue
        values = [row[position[column]] for row in table.rows]
        present = [v for v in values if v is not None and str(v).strip()]
        if not present or all(as_number(v) is not None for v in present):
            continue
        if sum(bool(_DATE_LIKE.match(str(v).strip())) for v in present) * 2 > len(present):
            continue
        texts[column] = [" ".join(str(v).split()) for v in present]
    plain = {c: re.sub(r"[^0-9a-z]", "", c.lower()) for c in texts}
    first = [c for c in texts if plain[c] in _FIRST]
    last = [c for c in texts if plain[c] in _LAST]
    if first and last:
        return [first[0], last[0]]
    table_plain = re.sub(r"[^0-9a-z]", "", table.name.lower())

    def score(column: str) -> int:
        name = plain[column]
        if name in ("name", "title", "fullname"):
            return 3
        if name.endswith(("name", "title")):
            return 2
        if len(name) >= 3 and (table_plain.startswith(name) or name.startswith(table_plain.removesuffix("s"))):
            return 1
        return 0

    def distinct(column: str) -> int:
        return len(set(texts[column]))

    named = [c for c in texts if score(c) > 0]
    if named:
        best = max(
            named,
            key=lambda c: (score(c), plain[c].startswith(table_plain.removesuffix("s")), distinct(c), -position[c]),
        )
        return [best]
    rows = max(len(table.rows), 1)
    varied = [c for c in texts if distinct(c) * 2 >= rows]
    if not varied:
        return []
    return [min(varied, key=lambda c: (c in table.primary, -distinct(c), position[c]))]


def _numeric_columns(table: _Table) -> list[str]:
    position = {c: i for i, c in enumerate(table.columns)}
    found = []
    for column in table.columns:
        if column in table.key_columns:
            continue
        values = [row[position[column]] for row in table.rows]
        present = [v for v in values if v is not None and str(v).strip().lower() not in ("", "null", "none", "nan")]
        if present and all(as_number(v) is not None for v in present):
            found.append(column)
    return found


class _Names:
    """Relation names handed out once each (a taken one gets ``_2``, ``_3``, …)."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def claim(self, wanted: str) -> str:
        name, n = wanted, 2
        while name in self.taken:
            name, n = f"{wanted}_{n}", n + 1
        self.taken.add(name)
        return name


def database_to_kb(db_path: str | Path, schema: Schema | None, out_path: str | Path) -> KBStats:
    """Convert a SQLite database into a KB file at ``out_path`` (rules in the module docstring). ``schema``, when
    given, says which tables to take and in what order (Spider's ``tables.json`` entry); keys come from the
    database's own declarations. The database is opened read-only."""
    db_path = Path(db_path)
    if not db_path.is_file():
        raise DataError(f"database {db_path} not found")
    conn = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        conn.execute("PRAGMA query_only = ON")
        tables = _read_tables(conn, schema, db_path)
        for table in tables:
            if table.primary or table.junction:
                order = ", ".join(_quote(c) for c in (table.primary or table.columns))
                columns = ", ".join(_quote(c) for c in table.columns)
                table.rows = conn.execute(f"SELECT {columns} FROM {_quote(table.name)} ORDER BY {order}").fetchall()
    except sqlite3.DatabaseError as exc:
        raise DataError(f"{db_path}: {exc}") from exc
    finally:
        conn.close()

    entity_tables = {t.name: t for t in tables if t.primary and not t.junction}
    entities: list[tuple[str, str, str]] = []
    first_id: dict[str, int] = {}
    for table in entity_tables.values():
        first_id[table.name] = len(entities)
        position = {c: i for i, c in enumerate(table.columns)}
        naming = _name_columns(table)
        for row in table.rows:
            key = "/".join(_shown(row[position[c]]) for c in table.primary)
            parts = [" ".join(str(row[position[c]]).split()) for c in naming if row[position[c]] is not None]
            entities.append((" ".join(p for p in parts if p), table.name, key))

    lookups: dict[tuple[str, tuple[str, ...]], dict[tuple[str | None, ...], int]] = {}

    def lookup(parent: str, columns: tuple[str, ...]) -> dict[tuple[str | None, ...], int]:
        """Row key -> entity id of an entity table, by the given columns (a foreign key may target any)."""
        if (parent, columns) not in lookups:
            table = entity_tables[parent]
            index = [table.columns.index(c) for c in columns]
            found: dict[tuple[str | None, ...], int] = {}
            for offset, row in enumerate(table.rows):
                found.setdefault(tuple(_key_text(row[i]) for i in index), first_id[parent] + offset)
            lookups[parent, columns] = found
        return lookups[parent, columns]

    def targets(table: _Table, fk: _ForeignKey) -> list[int | None]:
        """For each row of ``table``, the entity its foreign key references (None: no such row)."""
        found = lookup(fk.parent, fk.parent_columns)
        index = [table.columns.index(c) for c in fk.columns]
        return [found.get(tuple(_key_text(row[i]) for i in index)) for row in table.rows]

    names = _Names()
    triples: list[tuple[int, str, int]] = []
    links = [(table, fk) for table in entity_tables.values() for fk in table.foreign if fk.parent in entity_tables]
    forward = [names.claim(f"{snake(t.name)}.{_stem(fk)}") for t, fk in links]
    inverse = []
    for table, fk in links:
        several = sum(other.parent == fk.parent for other in table.foreign) > 1 or table.name == fk.parent
        suffix = f"_by_{_stem(fk)}" if several else ""
        inverse.append(names.claim(f"{snake(fk.parent)}.{snake(table.name)}{suffix}"))
    for (table, fk), ahead, back in zip(links, forward, inverse, strict=True):
        for offset, parent in enumerate(targets(table, fk)):
            if parent is not None:
                child = first_id[table.name] + offset
                triples += [(child, ahead, parent), (parent, back, child)]
    for table in tables:
        if not table.junction or not all(fk.parent in entity_tables for fk in table.foreign):
            continue
        a, b = table.foreign
        a_to_b = names.claim(f"{snake(a.parent)}.{snake(table.name)}.{_stem(b)}")
        b_to_a = names.claim(f"{snake(b.parent)}.{snake(table.name)}.{_stem(a)}")
        for x, y in zip(targets(table, a), targets(table, b), strict=True):
            if x is not None and y is not None:
                triples += [(x, a_to_b, y), (y, b_to_a, x)]

    attributes: list[tuple[int, str, float]] = []
    for table in entity_tables.values():
        position = {c: i for i, c in enumerate(table.columns)}
        for column in _numeric_columns(table):
            attribute = f"{snake(table.name)}.{snake(column)}"
            for offset, row in enumerate(table.rows):
                value = as_number(row[position[column]])
                if value is not None:
                    attributes.append((first_id[table.name] + offset, attribute, value))
    return TripleStore.create(out_path, entities, triples, attributes, source=str(db_path))


# ---------------------------------------------------------------------------------------------------------------
# Questions
#
# Selected as FUXI §4 selects its KB questions: at least three relations, or two and an aggregation (a count or a
# superlative); some are conjunctions (the entities two named entities reach, intersected). Superlatives rank only
# attributes where an order means something (``attribute_kind``). The text names the entities and the ask in words
# drawn from the relation names (``_noun``), never the relation names themselves.

# words that make a column an identifier (a key, a code, a zip or postal code, a phone, fax or social security
# number) or a yes/no flag, when it is the column's last word, or anywhere for the unambiguous ones
_IDENTIFIER_LAST = {"id", "ids", "code", "codes", "zip", "zipcode", "postcode", "phone", "fax", "ssn", "key", "no",
                    "num", "number", "nbr", "flag"}  # fmt: skip
_IDENTIFIER_ANY = {"id", "zip", "zipcode", "postcode", "postal", "phone", "fax", "ssn", "code"}
_DATE_WORDS = {"year", "years", "date", "founded", "established", "opened", "built", "born", "birth", "yr"}
_FLAG_FIRST = {"is", "has", "if"}
AGGREGATION_SHARE = 0.38  # the paper's share of counts and superlatives, what select_questions aims at
AGGREGATION_BOUNDS = (0.30, 0.45)
# a database over its cap keeps its plain questions first (the small databases offer mostly aggregations, the
# large ones most of the plain questions; keeping those lets more questions in), and aggregations for this share of
# its cap at least
CAPPED_AGGREGATIONS = 0.1


def attribute_kind(attribute: str, distinct_values: int) -> str | None:
    """Whether an attribute can be ranked: ``"date"`` (a year or a date), ``"measure"`` (any other quantity), or
    None for an identifier, key, code, zip or postal code, phone or fax number, SSN or yes/no flag. Decided by the
    column's words (``<table>.<column>``, snake case): an identifier word last (``_id``, ``code``, ``zip``,
    ``phone``, ``ssn``, ``number``, ``no``, …) or anywhere for the unambiguous ones (``id``, ``zip``, ``postal``,
    ``phone``, ``ssn``, ``code``), or a first word ``is``/``has``; and by its values: two distinct values or fewer
    over the whole KB is a flag (0/1, yes/no), not a measure."""
    words = attribute.split(".", 1)[-1].split("_")
    if distinct_values <= 2 or words[0] in _FLAG_FIRST:
        return None
    if words[-1] in _IDENTIFIER_LAST or set(words) & _IDENTIFIER_ANY:
        return None
    return "date" if set(words) & _DATE_WORDS else "measure"


@dataclass
class Question:
    """A question derived from a KB. ``actions`` are the gold tool calls from a fresh episode whose question names
    ``entity`` (and ``other``, for a conjunction); ``answer`` is what they give (entity names, sorted; for a count,
    the number as text), held by variable ``answer_variable`` (None for a count). ``hops`` counts the relations
    followed; a conjunction intersects what ``entity`` and ``other`` reach (``conjunction``)."""

    kind: str  # "path", "count", "argmax" or "argmin"
    text: str
    entity: str
    relations: list[str]
    actions: list[tuple[str, dict[str, str]]]
    answer: list[str]
    answer_variable: str | None
    attribute: str | None = None
    attribute_kind: str | None = None  # "measure" or "date" for a superlative
    other: str | None = None  # a conjunction's second entity

    @property
    def hops(self) -> int:
        return len(self.relations)

    @property
    def conjunction(self) -> bool:
        return self.other is not None

    @property
    def entities(self) -> list[str]:
        return [self.entity] if self.other is None else [self.entity, self.other]

    @property
    def aggregation(self) -> bool:
        return self.kind != "path"


def _words(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).lower()


_UNCOUNTED = ("data", "info", "information", "staff", "people", "media", "equipment")


def _plural(noun: str) -> str:
    """A noun's plural, roughly (English spelling rules, uncounted nouns and plurals kept as they are)."""
    if noun.endswith(_UNCOUNTED):
        return noun
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun if noun.endswith("s") else noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


def _singular(noun: str) -> str:
    """A table name's singular, roughly (Spider names tables both ways: ``singer``, ``Dogs``, ``countries``)."""
    if noun.endswith(_UNCOUNTED) or noun.endswith(("ss", "us", "is")):
        return noun
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith(("ches", "shes", "xes")):
        return noun[:-2]
    return noun.removesuffix("s")


def _noun(relation: str, target: str) -> str:
    """What a relation leads to, in words: its last part without a trailing key word (``dogs.breed_code`` ->
    ``breed``), a ``_by_<column>`` said as ``(by <column>)`` (``airports.flights_by_source_airport`` -> ``flight
    (by source airport)``); the target type's name when nothing is left."""
    last, _, by = relation.rsplit(".", 1)[-1].partition("_by_")
    words = last.split("_")
    while words and words[-1] in _IDENTIFIER_LAST:
        words.pop()
    noun = _singular(" ".join(words) or _words(target))
    return f"{noun} (by {_words(by)})" if by else noun


def _plural_noun(noun: str) -> str:
    head, bracket, rest = noun.partition(" (")
    return _plural(head) + (bracket + rest if bracket else "")


def _named(kind: str, name: str) -> str:
    return f'the {_singular(_words(kind))} "{name}"'


def _reach(nouns: Sequence[str], sizes: Sequence[int], anchor: str) -> str:
    """The entities a path reaches from ``anchor``: ``the stadiums of the concerts of the singer "Joe Sharp"`` (a
    noun in the singular where its hop reached one entity)."""
    phrase = anchor
    for noun, size in zip(nouns, sizes, strict=True):
        phrase = f"the {noun if size == 1 else _plural_noun(noun)} of {phrase}"
    return phrase


@dataclass
class _Walk:
    state: KBState  # after the path's calls
    actions: list[tuple[str, dict[str, str]]]
    start_type: str
    nouns: list[str]
    relations: list[str]
    phrase: str = ""  # the entities before the last hop, in words
    returns: bool = False  # the start is among the answers: no plain question (it would be its own answer)


def _walk(store: TripleStore, start: int, path: Sequence[str], max_answers: int) -> _Walk | None:
    """Follow ``path`` from ``start`` with the tools themselves; None when the walk is not a good question: a
    relation missing on the way, an answer empty or over ``max_answers``, or a hop that leads back to a set already
    visited (a detour that adds nothing). A walk whose answers hold the start is marked (``returns``)."""
    name = store.names({start})[0]
    state = KBState(store=store, entities=[name])
    actions: list[tuple[str, dict[str, str]]] = []
    visited = [frozenset({start})]
    for hop, relation in enumerate(path):
        key = name if hop == 0 else f"#{hop - 1}"
        if not _hop(state, actions, key, relation):
            return None
        reached = state.variables[-1].entities
        if not reached or reached in visited:
            return None
        visited.append(reached)
    final = visited[-1]
    if len(final) > max_answers:
        return None
    nouns = [_noun(r, state.variables[i].types[0]) for i, r in enumerate(path)]
    return _Walk(state, actions, store.entity_type(start), nouns, list(path), returns=start in final)


def _hop(state: KBState, actions: list[tuple[str, dict[str, str]]], key: str, relation: str) -> bool:
    """get_relations then get_neighbors from ``key``; False when ``relation`` does not leave it."""
    listed = run_tool(state, "get_relations", {"variable": key})
    actions.append(("get_relations", {"variable": key}))
    if relation not in listed:
        return False
    run_tool(state, "get_neighbors", {"variable": key, "relation": relation})
    actions.append(("get_neighbors", {"variable": key, "relation": relation}))
    return True


def _rankable(store: TripleStore) -> dict[str, str]:
    """attribute -> its kind (``attribute_kind``), for the attributes that can be ranked."""
    rows = store.conn.execute("SELECT a, count(DISTINCT v) FROM attributes GROUP BY a").fetchall()
    found = {}
    for a, distinct in rows:
        name = store.attribute_names[int(a)]
        kind = attribute_kind(name, int(distinct))
        if kind is not None:
            found[name] = kind
    return found


def derive_questions(
    store: TripleStore,
    seed: int = 0,
    *,
    per_pattern: int = 10,
    max_answers: int = 50,
    max_tries: int = 200,
) -> list[Question]:
    """Multi-hop questions over ``store``, each with its gold tool calls and answer.

    A *pattern* is a chain of relations whose types connect. Three-relation patterns give plain questions (up to
    ``per_pattern``), counts and superlatives (up to ``per_pattern // 2`` each, at least one); two-relation
    patterns give only counts and superlatives. Start entities are tried in a seeded random order (at most
    ``max_tries``), a good walk (see ``_walk``) giving one question, the kinds taking turns. A superlative ranks a
    rankable attribute (``attribute_kind``) that differs among the answers. Conjunctions (``_conjunctions``) join
    them. A question whose kind, entities and answer repeat an earlier one is skipped. ``select_questions`` then
    picks, over several databases, those a suite keeps."""
    rng = random.Random(seed)
    signatures = store.signatures()
    domains = {r: {s for s, _ in pairs} for r, pairs in signatures.items()}
    ranges = {r: {o for _, o in pairs} for r, pairs in signatures.items()}
    relations = sorted(signatures)
    rankable = _rankable(store)
    patterns: list[tuple[str, ...]] = []

    def extend(path: tuple[str, ...]) -> None:
        if len(path) in (2, 3):
            patterns.append(path)
        if len(path) < 3:
            for relation in relations:
                if ranges[path[-1]] & domains[relation]:
                    extend((*path, relation))

    for relation in relations:
        extend((relation,))
    patterns.sort(key=lambda p: (len(p), p))

    questions: list[Question] = []
    seen: set[tuple[str, tuple[str, ...], frozenset[str], str]] = set()

    def add(question: Question) -> bool:
        key = (question.kind, tuple(question.entities), frozenset(question.answer), question.attribute or "")
        if key in seen:
            return False
        seen.add(key)
        questions.append(question)
        return True

    for pattern in patterns:
        kinds = ("path", "count", "superlative") if len(pattern) == 3 else ("count", "superlative")
        quota = {"path": per_pattern, "count": max(1, per_pattern // 2), "superlative": max(1, per_pattern // 2)}
        starts = store.subjects(pattern[0])
        rng.shuffle(starts)
        made = 0
        for start in starts[:max_tries]:
            if not any(quota[k] for k in kinds):
                break
            walk = _walk(store, start, pattern, max_answers)
            if walk is None:
                continue
            sizes = [len(v.entities) for v in walk.state.variables]
            walk.phrase = _reach(walk.nouns[:-1], sizes[:-1], _named(walk.start_type, walk.state.entities[0]))
            for turn in range(len(kinds)):
                kind = kinds[(made + turn) % len(kinds)]
                if not quota[kind]:
                    continue
                question = _question(walk, kind, rng, rankable)
                if question is None:
                    continue
                if add(question):
                    quota[kind] -= 1
                    made += 1
                break
    for question in _conjunctions(store, rng, signatures, per_pattern, max_answers, max_tries):
        add(question)
    return questions


def _question(walk: _Walk, kind: str, rng: random.Random, rankable: dict[str, str]) -> Question | None:
    """One question of ``kind`` from a finished walk (None when the walk cannot give that kind)."""
    state, actions = walk.state.fork(), walk.actions
    store = state.store
    assert store is not None
    entity = state.entities[0]
    last = f"#{len(state.variables) - 1}"
    final = state.variables[-1]
    asked = _plural_noun(walk.nouns[-1])
    if kind == "path":
        if walk.returns:
            return None
        text = f"Which {asked} are linked to {walk.phrase}?"
        reached = store.names(final.entities)
        return Question("path", text, entity, walk.relations, actions, reached, last)
    if kind == "count":
        steps = [*actions, ("count", {"variable": last})]
        count = run_tool(state, "count", {"variable": last})
        text = f"How many {asked} are linked to {walk.phrase}?"
        return Question("count", text, entity, walk.relations, steps, [str(count)], None)
    if len(final.entities) < 2:
        return None
    attributes = run_tool(state, "get_attributes", {"variable": last})
    usable = [
        a
        for a in attributes
        if a in rankable
        and len(values := store.values(final.entities, a, largest=True)) >= 2
        and len(set(values.values())) > 1
    ]
    if not usable:
        return None
    attribute = rng.choice(usable)
    tool = rng.choice(("argmax", "argmin"))
    run_tool(state, tool, {"variable": last, "attribute": attribute})
    answer = f"#{len(state.variables) - 1}"
    steps = [*actions, ("get_attributes", {"variable": last}), (tool, {"variable": last, "attribute": attribute})]
    if rankable[attribute] == "date":
        extreme = "latest" if tool == "argmax" else "earliest"
    else:
        extreme = "largest" if tool == "argmax" else "smallest"
    measure = _words(attribute.split(".", 1)[-1])
    text = f"Among the {asked} linked to {walk.phrase}, which has the {extreme} {measure}?"
    names = store.names(state.variables[-1].entities)
    return Question(tool, text, entity, walk.relations, steps, names, answer, attribute, rankable[attribute])


def _conjunctions(
    store: TripleStore,
    rng: random.Random,
    signatures: dict[str, set[tuple[str, str]]],
    per_pattern: int,
    max_answers: int,
    max_tries: int,
) -> list[Question]:
    """Conjunctions: two entities, a relation from each into the same type, the entities both reach
    (``intersection``), then either one more relation (a plain question of three relations) or a count (two
    relations and an aggregation). A pair counts when what they share is neither empty nor all that either
    reaches (so both entities matter). Up to ``max(1, per_pattern // 2)`` per pair of relations."""
    ranges = {r: {o for _, o in pairs} for r, pairs in signatures.items()}
    domains = {r: {s for s, _ in pairs} for r, pairs in signatures.items()}
    relations = sorted(signatures)
    edges: dict[str, dict[int, set[int]]] = {}

    def adjacency(relation: str) -> dict[int, set[int]]:
        if relation not in edges:
            found: dict[int, set[int]] = {}
            rows = store.conn.execute("SELECT s, o FROM triples WHERE r = ?", (store.relation_ids[relation],))
            for s, o in rows:
                found.setdefault(int(s), set()).add(int(o))
            edges[relation] = found
        return edges[relation]

    questions: list[Question] = []
    for i, first in enumerate(relations):
        for second in relations[i:]:
            if not ranges[first] & ranges[second]:
                continue
            left, right = adjacency(first), adjacency(second)
            reached_by: dict[int, list[int]] = {}
            for s in sorted(right):
                for o in right[s]:
                    reached_by.setdefault(o, []).append(s)
            starts = sorted(left)
            rng.shuffle(starts)
            quota = max(1, per_pattern // 2)
            for a in starts[:max_tries]:
                if not quota:
                    break
                mates = sorted({b for o in left[a] for b in reached_by.get(o, ()) if b != a})
                rng.shuffle(mates)
                for b in mates[:10]:
                    shared = left[a] & right[b]
                    if not shared or shared == left[a] or shared == right[b] or len(shared) > max_answers:
                        continue
                    questions.append(_conjunction(store, a, first, b, second, rng, domains, max_answers, quota))
                    quota -= 1
                    break
    return questions


def _conjunction(
    store: TripleStore,
    a: int,
    first: str,
    b: int,
    second: str,
    rng: random.Random,
    domains: dict[str, set[str]],
    max_answers: int,
    turn: int,
) -> Question:
    """The conjunction question of entities ``a`` and ``b``: a third hop (every other question) when a good one
    leaves what they share (not back to them nor to the shared set, at most ``max_answers``), else a count."""
    name_a, name_b = store.names({a})[0], store.names({b})[0]
    state = KBState(store=store, entities=[name_a, name_b])
    actions: list[tuple[str, dict[str, str]]] = []
    _hop(state, actions, name_a, first)
    _hop(state, actions, name_b, second)
    run_tool(state, "intersection", {"variable1": "#0", "variable2": "#1"})
    actions.append(("intersection", {"variable1": "#0", "variable2": "#1"}))
    shared = state.variables[2]
    noun = _plural_noun(_noun(first, shared.types[0]))
    phrase = (
        f"the {noun} of {_named(store.entity_type(a), name_a)} that are also "
        f"{_plural_noun(_noun(second, shared.types[0]))} of {_named(store.entity_type(b), name_b)}"
    )
    listed = store.relations_of(shared.entities)
    options = [r for r in listed if shared.types[0] in domains.get(r, set())] if turn % 2 == 1 else []
    rng.shuffle(options)
    for relation in options:
        trial = state.fork()
        steps = list(actions)
        _hop(trial, steps, "#2", relation)
        reached = trial.variables[-1].entities
        if not reached or len(reached) > max_answers or reached in (shared.entities, frozenset({a}), frozenset({b})):
            continue
        if a in reached or b in reached:
            continue
        asked = _plural_noun(_noun(relation, trial.variables[-1].types[0]))
        text = f"Which {asked} are linked to {phrase}?"
        relations = [first, second, relation]
        return Question("path", text, name_a, relations, steps, store.names(reached), "#3", other=name_b)
    steps = [*actions, ("count", {"variable": "#2"})]
    count = run_tool(state, "count", {"variable": "#2"})
    text = f"How many {phrase.removeprefix('the ')}?"
    return Question("count", text, name_a, [first, second], steps, [str(count)], None, other=name_b)


def _level(counts: list[list[int]], index: int, target: int) -> None:
    """Lower ``counts[*][index]`` to a common ceiling, the highest whose sum is at most ``target``: the databases
    with the most give up questions first, and the small ones keep theirs."""
    ceiling = max((n[index] for n in counts), default=0)
    while ceiling > 0 and sum(min(n[index], ceiling) for n in counts) > target:
        ceiling -= 1
    for n in counts:
        n[index] = min(n[index], ceiling)


def select_questions(by_database: Mapping[str, list[Question]], seed: int = 0) -> dict[str, list[Question]]:
    """The questions kept of each database's (``derive_questions``), so that no database holds more than
    ``max(20%, 1 / number of databases)`` of all those kept, and counts and superlatives make
    ``AGGREGATION_BOUNDS`` of them (aiming at ``AGGREGATION_SHARE``).

    The numbers to keep shrink until both hold: a database over its cap keeps its plain questions first (and
    aggregations for ``CAPPED_AGGREGATIONS`` of its cap at least); aggregations (or plain questions) over their share
    are cut from the databases that have the most (``_level``), one of each sort left at least. When every question
    is of one sort the mix is out of reach and left as it is. Which are kept is seeded per database (conjunctions
    first, then superlatives), and they stay in their order."""
    share = max(0.2, 1 / len(by_database)) if by_database else 1.0
    low, high = AGGREGATION_BOUNDS
    kept = {db: [sum(q.aggregation for q in qs), sum(not q.aggregation for q in qs)] for db, qs in by_database.items()}
    while True:
        before = {db: list(n) for db, n in kept.items()}
        cap = int(share * sum(a + p for a, p in kept.values()))
        for n in kept.values():
            if n[0] + n[1] > cap:
                a = min(n[0], max(cap - n[1], round(CAPPED_AGGREGATIONS * cap)))
                n[1] = min(n[1], cap - a)
                n[0] = min(n[0], cap - n[1])
        aggregated = sum(n[0] for n in kept.values())
        plain = sum(n[1] for n in kept.values())
        total = aggregated + plain
        # a mix out of reach (every question of one sort, as in a small database) is left as it is
        if plain and aggregated > high * total:
            _level(list(kept.values()), 0, max(1, int(plain * AGGREGATION_SHARE / (1 - AGGREGATION_SHARE))))
        elif aggregated and aggregated < low * total:
            _level(list(kept.values()), 1, max(1, int(aggregated * (1 - AGGREGATION_SHARE) / AGGREGATION_SHARE)))
        if kept == before:
            break
    selected: dict[str, list[Question]] = {}
    for db, questions in by_database.items():
        rng = random.Random(f"{seed}:{db}")
        chosen: set[int] = set()
        for index, aggregation in ((0, True), (1, False)):
            pool = [i for i, q in enumerate(questions) if q.aggregation == aggregation]
            rng.shuffle(pool)
            # stable: conjunctions first, then superlatives (rarer than counts), the rest in the shuffled order
            pool.sort(key=lambda i: (not questions[i].conjunction, questions[i].kind not in ("argmax", "argmin")))
            chosen.update(pool[: kept[db][index]])
        selected[db] = [q for i, q in enumerate(questions) if i in chosen]
    return selected


# ---------------------------------------------------------------------------------------------------------------
# A synthetic KB for benchmarks

_TYPE_WORDS = (
    "person", "film", "city", "company", "book", "album", "team", "country",
    "university", "award", "river", "species", "disease", "drug", "game", "building",
)  # fmt: skip
_ATTRIBUTE_WORDS = ("size", "score", "year")


def synthetic_kb(path: str | Path, n_triples: int, seed: int = 0) -> KBStats:
    """Write a random KB of at least ``n_triples`` distinct triples to ``path`` (for benchmarks).

    16 types, ``n_triples // 8`` entities spread evenly over them, 48 typed relations and their inverses (so half
    the triples are forward edges), subjects and objects drawn with a skew towards a few popular entities (hubs,
    as in real KBs), and three numerical attributes per type, each present on about four entities in five."""
    if n_triples < 2:
        raise ValueError(f"n_triples must be at least 2, got {n_triples}")
    rng = np.random.default_rng(seed)
    n_types, n_relations = len(_TYPE_WORDS), 48
    n_entities = max(4 * n_types, n_triples // 8)
    per_type = np.bincount(np.arange(n_entities) % n_types, minlength=n_types)  # entity id = index * n_types + type
    domain = rng.integers(n_types, size=n_relations)
    target = rng.integers(n_types, size=n_relations)
    wanted = (n_triples + 1) // 2
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < wanted:
        m = int((wanted - len(keys)) * 1.2) + 16
        r = rng.integers(n_relations, size=m)
        s = (rng.random(m) ** 2 * per_type[domain[r]]).astype(np.int64) * n_types + domain[r]
        o = (rng.random(m) ** 3 * per_type[target[r]]).astype(np.int64) * n_types + target[r]
        drawn = np.concatenate([keys, (s * n_relations + r) * n_entities + o])
        _, first = np.unique(drawn, return_index=True)
        keys = drawn[np.sort(first)]  # distinct, in the order drawn
    keys = keys[:wanted]
    o = keys % n_entities
    r = (keys // n_entities) % n_relations
    s = keys // n_entities // n_relations
    subjects = np.concatenate([s, o])
    relation = np.concatenate([r, r + n_relations])
    objects = np.concatenate([o, s])
    order = np.lexsort((objects, relation, subjects))  # in key order: the fastest way into the primary key

    builder = KBWriter(path, f"synthetic n_triples={n_triples} seed={seed}")
    try:
        for k in range(n_relations):
            builder.relation(f"{_TYPE_WORDS[domain[k]]}.{_TYPE_WORDS[target[k]]}_{k:02d}")
        for k in range(n_relations):
            builder.relation(f"{_TYPE_WORDS[target[k]]}.{_TYPE_WORDS[domain[k]]}_{k:02d}_of")
        builder.add_entities(
            (i, f"{_TYPE_WORDS[i % n_types]} {i // n_types}", _TYPE_WORDS[i % n_types]) for i in range(n_entities)
        )
        builder.add_triples(
            zip(subjects[order].tolist(), relation[order].tolist(), objects[order].tolist(), strict=True)
        )
        builder.add_attributes(_synthetic_attributes(builder, rng, n_entities, n_types))
        return builder.finish()
    except BaseException:
        builder.abort()
        raise


def _synthetic_attributes(
    builder: KBWriter, rng: np.random.Generator, n_entities: int, n_types: int
) -> Iterable[tuple[int, int, float]]:
    ids = np.arange(n_entities)
    for position, word in enumerate(_ATTRIBUTE_WORDS):
        present = ids[rng.random(n_entities) < 0.8]
        values = np.round(rng.gamma(2.0, 50.0, size=len(present)), 2) + position * 1000
        attribute = [builder.attribute(f"{t}.{word}") for t in _TYPE_WORDS[:n_types]]
        for entity, value in zip(present.tolist(), values.tolist(), strict=True):
            yield entity, attribute[entity % n_types], value
