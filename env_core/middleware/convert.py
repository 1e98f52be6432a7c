"""Knowledge bases for the middleware family's KB environment: a relational database turned into a KB
(``database_to_kb``), multi-hop questions with gold tool calls derived from a KB (``derive_questions``), and a large
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
from collections.abc import Iterable, Sequence
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

__all__ = ["KBStats", "Question", "database_to_kb", "derive_questions", "synthetic_kb"]

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


@dataclass
class Question:
    """A question derived from a KB. ``actions`` are the gold tool calls from a fresh episode whose question names
    ``entity``; ``answer`` is what they give (entity names, sorted; for a count, the number as text), held by
    variable ``answer_variable`` (None for a count). ``hops`` counts the relations followed."""

    kind: str  # "path", "count", "argmax" or "argmin"
    text: str
    entity: str
    relations: list[str]
    actions: list[tuple[str, dict[str, str]]]
    answer: list[str]
    answer_variable: str | None
    attribute: str | None = None

    @property
    def hops(self) -> int:
        return len(self.relations)


@dataclass
class _Walk:
    state: KBState  # after the path's calls
    actions: list[tuple[str, dict[str, str]]]
    start_type: str


def _words(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).lower()


def _property(name: str) -> str:
    """A relation's or attribute's last part, in words: ``concert.singer_in_concert.singer`` -> ``singer``."""
    return _words(name.rsplit(".", 1)[-1])


def _walk(store: TripleStore, start: int, path: Sequence[str], max_answers: int) -> _Walk | None:
    """Follow ``path`` from ``start`` with the tools themselves; None when the walk is not a good question: a
    relation missing on the way, an answer empty or over ``max_answers``, the start among the answers, or a hop
    that leads back to a set already visited (a detour that adds nothing)."""
    name = store.names({start})[0]
    state = KBState(store=store, entities=[name])
    actions: list[tuple[str, dict[str, str]]] = []
    visited = [frozenset({start})]
    for hop, relation in enumerate(path):
        key = name if hop == 0 else f"#{hop - 1}"
        for tool, arguments in (
            ("get_relations", {"variable": key}),
            ("get_neighbors", {"variable": key, "relation": relation}),
        ):
            result = run_tool(state, tool, arguments)
            actions.append((tool, arguments))
            if tool == "get_relations" and relation not in result:
                return None
        reached = state.variables[-1].entities
        if not reached or reached in visited:
            return None
        visited.append(reached)
    final = visited[-1]
    if len(final) > max_answers or start in final:
        return None
    return _Walk(state, actions, store.entity_type(start))


def derive_questions(
    store: TripleStore,
    seed: int = 0,
    *,
    hops: Sequence[int] = (2, 3),
    per_pattern: int = 10,
    max_answers: int = 50,
    max_tries: int = 200,
) -> list[Question]:
    """Multi-hop questions over ``store``, each with its gold tool calls and answer.

    A *pattern* is a chain of relations (``hops`` long) whose types connect. For each, start entities are tried
    in a seeded random order (at most ``max_tries``); a start whose walk is a good question (see ``_walk``) gives
    one question, the kinds taking turns: plain path questions (up to ``per_pattern``), counts and superlatives
    (argmax or argmin over a numerical attribute that differs among the answers; up to ``per_pattern // 2`` each,
    at least one). A question whose kind, start and answer repeat an earlier one is skipped."""
    rng = random.Random(seed)
    signatures = store.signatures()
    domains = {r: {s for s, _ in pairs} for r, pairs in signatures.items()}
    ranges = {r: {o for _, o in pairs} for r, pairs in signatures.items()}
    relations = sorted(signatures)
    longest = max(hops, default=0)
    patterns: list[tuple[str, ...]] = []

    def extend(path: tuple[str, ...]) -> None:
        if len(path) in hops:
            patterns.append(path)
        if len(path) < longest:
            for relation in relations:
                if ranges[path[-1]] & domains[relation]:
                    extend((*path, relation))

    for relation in relations:
        extend((relation,))
    patterns.sort(key=lambda p: (len(p), p))

    questions: list[Question] = []
    seen: set[tuple[str, str, frozenset[str], str]] = set()
    kinds = ("path", "count", "superlative")
    for pattern in patterns:
        quota = {"path": per_pattern, "count": max(1, per_pattern // 2), "superlative": max(1, per_pattern // 2)}
        starts = store.subjects(pattern[0])
        rng.shuffle(starts)
        made = 0
        for start in starts[:max_tries]:
            if not any(quota.values()):
                break
            walk = _walk(store, start, pattern, max_answers)
            if walk is None:
                continue
            for turn in range(len(kinds)):
                kind = kinds[(made + turn) % len(kinds)]
                if not quota[kind]:
                    continue
                question = _question(walk, pattern, kind, rng)
                if question is None:
                    continue
                key = (question.kind, question.entity, frozenset(question.answer), question.attribute or "")
                if key in seen:
                    break
                seen.add(key)
                questions.append(question)
                quota[kind] -= 1
                made += 1
                break
    return questions


def _question(walk: _Walk, path: Sequence[str], kind: str, rng: random.Random) -> Question | None:
    """One question of ``kind`` from a finished walk (None when the walk cannot give that kind)."""
    state, actions = walk.state.fork(), walk.actions
    store = state.store
    assert store is not None
    entity = state.entities[0]
    last = f"#{len(state.variables) - 1}"
    final = state.variables[-1]
    chain = f'the {_words(walk.start_type)} "{entity}"'
    for relation in path:
        chain = f"the {_property(relation)} of {chain}"
    kind_of = _words(final.types[0])
    relations = list(path)
    if kind == "path":
        text = f"Which entities of type {kind_of} are {chain}?"
        return Question("path", text, entity, relations, actions, store.names(final.entities), last)
    if kind == "count":
        steps = [*actions, ("count", {"variable": last})]
        count = run_tool(state, "count", {"variable": last})
        return Question(
            "count", f"How many entities of type {kind_of} are {chain}?", entity, relations, steps, [str(count)], None
        )
    if len(final.entities) < 2:
        return None
    attributes = run_tool(state, "get_attributes", {"variable": last})
    usable = [
        a
        for a in attributes
        if len(values := store.values(final.entities, a, largest=True)) >= 2 and len(set(values.values())) > 1
    ]
    if not usable:
        return None
    attribute = rng.choice(usable)
    tool = rng.choice(("argmax", "argmin"))
    run_tool(state, tool, {"variable": last, "attribute": attribute})
    answer = f"#{len(state.variables) - 1}"
    steps = [*actions, ("get_attributes", {"variable": last}), (tool, {"variable": last, "attribute": attribute})]
    extreme = "largest" if tool == "argmax" else "smallest"
    text = f"Which of {chain} has the {extreme} {_property(attribute)}?"
    names = store.names(state.variables[-1].entities)
    return Question(tool, text, entity, relations, steps, names, answer, attribute)


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
