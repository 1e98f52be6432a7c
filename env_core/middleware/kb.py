"""The knowledge-base environment of the middleware family (FUXI): a triple store kept in one SQLite file, and the
seven KB tools of the paper's Appendix A with which an agent explores it one step at a time.

The store (``TripleStore``) holds::

    entities(id, name, type)        every entity has one type; names are unique within a KB
    relations(id, name)             relation names, Freebase style ("concert.stadium")
    attribute_names(id, name)       numeric attribute names ("stadium.capacity")
    triples(s, r, o)                primary key (s, r, o), which serves lookups by (s, r); indexes on (o, r) and r
    attributes(s, a, v REAL)        primary key (s, a, v), which serves lookups by (s, a)
    meta(key, value)                the format marker and where the KB came from

Relations are followed forwards only: ``get_relations`` lists the edges that start at a variable, as in the paper,
so a KB that should be walked both ways stores both directions (``undertow.env_core.middleware.convert`` does).

A *variable* is a set of entities that a tool made: ``get_neighbors``, ``intersection``, ``argmax`` and ``argmin``
each add one, numbered ``#0``, ``#1``, … in order. A tool's ``variable`` argument is either such a label or an
entity's name. The rules of Appendix A hold every call to what the agent has actually seen: ``get_neighbors(v, r)``
takes only a relation that an earlier ``get_relations(v)`` of the same ``v`` listed, ``argmax``/``argmin(v, a)`` only
an attribute an earlier ``get_attributes(v)`` listed, and ``intersection``, ``get_attributes``, ``argmax``,
``argmin`` and ``count`` work on variables, not on entity names. A call that breaks a rule fails with a message from
a fixed template per tool (the paper's error feedback); ``valid_actions`` lists every call the rules allow at a
given point (the candidates of the paper's decoupled generation).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.errors import DataError, did_you_mean
from undertow.env_core.middleware.episode_tools import EpisodeTools
from undertow.env_core.model import Scenario, ToolSpec
from undertow.env_core.tools import QUERY_TIMEOUT_S, QueryTimeout, ToolBox, ToolExecutionError, time_limit, tool
from undertow.env_core.untrusted import capped

ENVIRONMENT = "kb"
FORMAT = "undertow-kb/1"  # meta.format of a store this module wrote
VARIABLE = re.compile(r"#(\d+)")
DEFAULT_TYPE = "entity"  # the type of an entity whose source names none

# ---------------------------------------------------------------------------------------------------------------
# The store

_TABLES = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entities(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, type TEXT NOT NULL);
CREATE TABLE relations(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE attribute_names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE triples(s INTEGER NOT NULL, r INTEGER NOT NULL, o INTEGER NOT NULL, PRIMARY KEY (s, r, o))
    WITHOUT ROWID;
CREATE TABLE attributes(s INTEGER NOT NULL, a INTEGER NOT NULL, v REAL NOT NULL, PRIMARY KEY (s, a, v))
    WITHOUT ROWID;
"""
# built after the bulk load: cheaper than keeping them up to date row by row
_INDEXES = """
CREATE INDEX triples_or ON triples(o, r);
CREATE INDEX triples_r ON triples(r);
CREATE INDEX entities_name_nocase ON entities(name COLLATE NOCASE);
"""


@dataclass(frozen=True)
class KBStats:
    """The size of a KB: entities, distinct relation names, triples, attribute values (one per entity, attribute
    and value) and distinct attribute names."""

    entities: int
    relations: int
    triples: int
    attributes: int
    attribute_names: int


def _clean(text: str) -> str:
    return " ".join(text.split())


def unique_names(entities: Sequence[tuple[str, str, str]]) -> list[str]:
    """Unique, deterministic names for ``(name, type, key)`` entities, in order.

    A blank name becomes ``"<type> <key>"``. A name several entities share is given to none of them as it is:
    each gets ``"<name> (<type> <key>)"``, so that no entity silently owns a name the others also carry. A name
    that reads as a variable label (``#3``) is suffixed the same way, so that labels always mean variables."""
    base = [_clean(name) or f"{kind} {key}" for name, kind, key in entities]
    counts = Counter(base)
    names: list[str] = []
    used: set[str] = set()
    for name, (_, kind, key) in zip(base, entities, strict=True):
        wanted = name if counts[name] == 1 and not VARIABLE.fullmatch(name) else f"{name} ({kind} {key})"
        candidate, n = wanted, 2
        while candidate in used:  # only when a suffixed name meets another entity's own name
            candidate, n = f"{wanted} [{n}]", n + 1
        used.add(candidate)
        names.append(candidate)
    return names


class KBWriter:
    """Writes a new store with ids chosen by the caller (``TripleStore.create`` and the synthetic KB use it): into a
    temporary file next to ``path``, moved into place by ``finish`` only when complete."""

    def __init__(self, path: str | Path, source: str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.partial")
        self.temporary.unlink(missing_ok=True)
        self.conn = sqlite3.connect(self.temporary)
        # a half-written file is thrown away, never reopened: no journal needed
        self.conn.execute("PRAGMA journal_mode = OFF")
        self.conn.execute("PRAGMA synchronous = OFF")
        self.conn.executescript(_TABLES)
        self.conn.executemany("INSERT INTO meta VALUES (?, ?)", [("format", FORMAT), ("source", source)])
        self.relations: dict[str, int] = {}
        self.attribute_ids: dict[str, int] = {}

    def relation(self, name: str) -> int:
        return self.relations.setdefault(name, len(self.relations))

    def attribute(self, name: str) -> int:
        return self.attribute_ids.setdefault(name, len(self.attribute_ids))

    def add_entities(self, rows: Iterable[tuple[int, str, str]]) -> None:
        self.conn.executemany("INSERT INTO entities VALUES (?, ?, ?)", rows)

    def add_triples(self, rows: Iterable[tuple[int, int, int]]) -> None:
        self.conn.executemany("INSERT OR IGNORE INTO triples VALUES (?, ?, ?)", rows)

    def add_attributes(self, rows: Iterable[tuple[int, int, float]]) -> None:
        self.conn.executemany("INSERT OR IGNORE INTO attributes VALUES (?, ?, ?)", rows)

    def finish(self) -> KBStats:
        self.conn.executemany("INSERT INTO relations VALUES (?, ?)", [(i, n) for n, i in self.relations.items()])
        self.conn.executemany(
            "INSERT INTO attribute_names VALUES (?, ?)", [(i, n) for n, i in self.attribute_ids.items()]
        )
        self.conn.executescript(_INDEXES)
        self.conn.execute("ANALYZE")
        self.conn.commit()
        stats = _stats(self.conn)
        self.conn.close()
        os.replace(self.temporary, self.path)
        return stats

    def abort(self) -> None:
        self.conn.close()
        self.temporary.unlink(missing_ok=True)


def _stats(conn: sqlite3.Connection) -> KBStats:
    def count(table: str) -> int:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    # relations and attribute names that no fact uses are not counted: they are not part of the KB the agent sees
    relations = conn.execute("SELECT count(DISTINCT r) FROM triples").fetchone()[0]
    names = conn.execute("SELECT count(DISTINCT a) FROM attributes").fetchone()[0]
    return KBStats(count("entities"), int(relations), count("triples"), count("attributes"), int(names))


def _finite(value: float) -> bool:
    return not (math.isnan(value) or math.isinf(value))


class TripleStore:
    """A KB file opened read-only (``open``), or written once (``create`` and the loaders)."""

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn
        self.path = path
        self.relation_ids = {str(n): int(i) for i, n in conn.execute("SELECT id, name FROM relations")}
        self.relation_names = {i: n for n, i in self.relation_ids.items()}
        self.attribute_ids = {str(n): int(i) for i, n in conn.execute("SELECT id, name FROM attribute_names")}
        self.attribute_names = {i: n for n, i in self.attribute_ids.items()}

    # -- writing ---------------------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | Path,
        entities: Sequence[tuple[str, str, str]],
        triples: Iterable[tuple[int, str, int]],
        attributes: Iterable[tuple[int, str, float]] = (),
        source: str = "",
    ) -> KBStats:
        """Write a KB to ``path`` (replacing what is there). ``entities`` are ``(name, type, key)``; an entity's id
        is its position. Names are made unique with ``unique_names`` (``key`` tells namesakes apart). ``triples``
        are ``(subject id, relation name, object id)`` and ``attributes`` ``(entity id, attribute name, value)``;
        repeated facts are stored once, and non-finite values are dropped."""
        names = unique_names(entities)
        builder = KBWriter(path, source)
        try:
            builder.add_entities(
                (i, name, _clean(kind) or DEFAULT_TYPE)
                for i, (name, (_, kind, _)) in enumerate(zip(names, entities, strict=True))
            )
            count = len(entities)

            def checked(s: int, o: int | None = None) -> None:
                if not 0 <= s < count or (o is not None and not 0 <= o < count):
                    raise ValueError(f"entity id out of range (there are {count} entities): {s}, {o}")

            def triple_rows() -> Iterable[tuple[int, int, int]]:
                for s, r, o in triples:
                    checked(s, o)
                    yield s, builder.relation(r), o

            def attribute_rows() -> Iterable[tuple[int, int, float]]:
                for s, a, v in attributes:
                    checked(s)
                    if _finite(float(v)):
                        yield s, builder.attribute(a), float(v)

            builder.add_triples(triple_rows())
            builder.add_attributes(attribute_rows())
            return builder.finish()
        except BaseException:
            builder.abort()
            raise

    # -- reading ---------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path) -> TripleStore:
        """Open a KB read-only. A missing file or one this module did not write is a ``DataError``."""
        path = Path(path)
        if not path.is_file():
            raise DataError(f"knowledge base {path} not found", hint="build it with database_to_kb or a loader")
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        try:
            conn.execute("PRAGMA query_only = ON")
            marker = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise DataError(f"{path} is not a knowledge base: {exc}") from exc
        if marker is None or marker[0] != FORMAT:
            conn.close()
            raise DataError(f"{path} is not a knowledge base of format {FORMAT} (found {marker and marker[0]!r})")
        return cls(conn, path)

    def close(self) -> None:
        self.conn.close()

    def stats(self) -> KBStats:
        return _stats(self.conn)

    def _in(self, ids: Collection[int]) -> tuple[str, tuple[Any, ...]]:
        """A condition ``s <op> ...`` for a set of ids: one id binds directly (the common case, and the index
        plans it best); a set travels as one JSON array, so no query grows with its size."""
        if len(ids) == 1:
            return "= ?", (next(iter(ids)),)
        return "IN (SELECT value FROM json_each(?))", (json.dumps(sorted(ids)),)

    def entity_id(self, name: str) -> int | None:
        """The id of the entity called ``name``; a case-insensitive match when it is the only one."""
        row = self.conn.execute("SELECT id FROM entities WHERE name = ?", (name,)).fetchone()
        if row is not None:
            return int(row[0])
        rows = self.conn.execute("SELECT id FROM entities WHERE name = ? COLLATE NOCASE LIMIT 2", (name,)).fetchall()
        return int(rows[0][0]) if len(rows) == 1 else None

    def similar_names(self, name: str, limit: int = 2000) -> list[str]:
        """Entity names sharing ``name``'s first letters: the candidates of a did-you-mean hint (a KB may hold
        millions of names; comparing against all of them would take seconds)."""
        prefix = name.strip()[:3].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        if not prefix:
            return []
        rows = self.conn.execute(
            "SELECT name FROM entities WHERE name LIKE ? ESCAPE '\\' LIMIT ?", (prefix + "%", limit)
        ).fetchall()
        return [str(r[0]) for r in rows]

    def names(self, ids: Collection[int]) -> list[str]:
        if not ids:
            return []
        condition, params = self._in(ids)
        rows = self.conn.execute(f"SELECT name FROM entities WHERE id {condition}", params).fetchall()
        return sorted(str(r[0]) for r in rows)

    def types(self, ids: Collection[int]) -> tuple[str, ...]:
        """The types of ``ids``, the most frequent first (ties by name)."""
        if not ids:
            return ()
        condition, params = self._in(ids)
        rows = self.conn.execute(
            f"SELECT type, count(*) FROM entities WHERE id {condition} GROUP BY type", params
        ).fetchall()
        return tuple(str(t) for t, _ in sorted(rows, key=lambda row: (-row[1], row[0])))

    def entity_type(self, entity: int) -> str:
        row = self.conn.execute("SELECT type FROM entities WHERE id = ?", (entity,)).fetchone()
        return str(row[0]) if row else ""

    def relations_of(self, ids: Collection[int]) -> list[str]:
        """The relations of the edges that start at any of ``ids``, sorted."""
        if not ids:
            return []
        condition, params = self._in(ids)
        rows = self.conn.execute(f"SELECT DISTINCT r FROM triples WHERE s {condition}", params).fetchall()
        return sorted(self.relation_names[int(r[0])] for r in rows)

    def neighbors(self, ids: Collection[int], relation: str) -> set[int]:
        """The objects of the ``relation`` edges that start at any of ``ids``."""
        r = self.relation_ids.get(relation)
        if r is None or not ids:
            return set()
        condition, params = self._in(ids)
        rows = self.conn.execute(f"SELECT o FROM triples WHERE r = ? AND s {condition}", (r, *params)).fetchall()
        return {int(o) for (o,) in rows}

    def subjects(self, relation: str) -> list[int]:
        """Every entity that starts a ``relation`` edge, by id."""
        r = self.relation_ids.get(relation)
        if r is None:
            return []
        return [int(s) for (s,) in self.conn.execute("SELECT DISTINCT s FROM triples WHERE r = ? ORDER BY s", (r,))]

    def attributes_of(self, ids: Collection[int]) -> list[str]:
        """The attributes any of ``ids`` has a value of, sorted."""
        if not ids:
            return []
        condition, params = self._in(ids)
        rows = self.conn.execute(f"SELECT DISTINCT a FROM attributes WHERE s {condition}", params).fetchall()
        return sorted(self.attribute_names[int(a)] for (a,) in rows)

    def values(self, ids: Collection[int], attribute: str, largest: bool) -> dict[int, float]:
        """Each of ``ids`` that has ``attribute`` -> its value (its largest or smallest, when it has several)."""
        a = self.attribute_ids.get(attribute)
        if a is None or not ids:
            return {}
        condition, params = self._in(ids)
        pick = "max" if largest else "min"
        rows = self.conn.execute(
            f"SELECT s, {pick}(v) FROM attributes WHERE a = ? AND s {condition} GROUP BY s", (a, *params)
        ).fetchall()
        return {int(s): float(v) for s, v in rows}

    def signatures(self) -> dict[str, set[tuple[str, str]]]:
        """relation -> the (subject type, object type) pairs its edges join."""
        rows = self.conn.execute(
            "SELECT t.r, es.type, eo.type FROM triples t JOIN entities es ON es.id = t.s "
            "JOIN entities eo ON eo.id = t.o GROUP BY t.r, es.type, eo.type"
        ).fetchall()
        found: dict[str, set[tuple[str, str]]] = {}
        for r, subject, obj in rows:
            found.setdefault(self.relation_names[int(r)], set()).add((str(subject), str(obj)))
        return found


# ---------------------------------------------------------------------------------------------------------------
# Loaders

_TYPE_RELATIONS = {"type", "rdf:type", "type.object.type", "a"}
_NAME_RELATIONS = {"label", "rdfs:label", "name", "type.object.name"}
_MISSING_WORDS = {"", "null", "none", "nan", "n/a", "na"}


def as_number(value: Any) -> float | None:
    """``value`` as a finite number when it is one or reads as one (stray blanks allowed), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = float(value)
    else:
        text = str(value).strip()
        if text.lower() in _MISSING_WORDS:
            return None
        try:
            number = float(text)
        except ValueError:
            return None
    return number if _finite(number) else None


class _Collector:
    """Entities met while reading a file of facts, with the facts that name them."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.labels: dict[int, str] = {}
        self.kinds: dict[int, str] = {}
        self.keys: list[str] = []
        self.triples: list[tuple[int, str, int]] = []
        self.attributes: list[tuple[int, str, float]] = []

    def entity(self, key: str) -> int:
        if key not in self.ids:
            self.ids[key] = len(self.keys)
            self.keys.append(key)
        return self.ids[key]

    def store(self, out_path: str | Path, source: Path, local: Callable[[str], str]) -> KBStats:
        entities = [
            (self.labels.get(i, local(key)), self.kinds.get(i, DEFAULT_TYPE), local(key))
            for i, key in enumerate(self.keys)
        ]
        return TripleStore.create(out_path, entities, self.triples, self.attributes, source=str(source))


def load_tsv(source: str | Path, out_path: str | Path) -> KBStats:
    """Build a KB from a file of ``subject<TAB>relation<TAB>object`` lines.

    An object that reads as a number is an attribute value; any other object is an entity named by the text.
    A ``type`` relation (also ``rdf:type``, ``type.object.type``) sets the subject's type instead of adding an
    edge (the type is ``entity`` otherwise). Blank lines and lines starting with ``#`` are skipped; any other line
    without exactly three fields is a ``DataError`` naming it."""
    source = Path(source)
    found = _Collector()
    with source.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            text = line.rstrip("\r\n")
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            fields = [f.strip() for f in text.split("\t")]
            if len(fields) != 3 or not all(fields):
                raise DataError(
                    f"expected subject, relation and object separated by tabs, got {len(fields)} field(s)",
                    file=str(source),
                    line=number,
                )
            subject, relation, obj = fields
            s = found.entity(subject)
            value = as_number(obj)
            if relation.lower() in _TYPE_RELATIONS:
                found.kinds.setdefault(s, obj)
            elif value is not None:
                found.attributes.append((s, relation, value))
            else:
                found.triples.append((s, relation, found.entity(obj)))
    return found.store(out_path, source, lambda key: key)


_TERM = r'<[^>]*>|_:\S+|"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9-]+|\^\^<[^>]*>)?'
_NTRIPLE = re.compile(rf"\s*({_TERM})\s+({_TERM})\s+({_TERM})\s*\.\s*(?:#.*)?")
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        return chr(int(code[1:], 16)) if code[0] in "uU" and len(code) > 1 else _SIMPLE_ESCAPES.get(code, code)

    return _ESCAPE.sub(one, text)


def _local(term: str) -> str:
    """The readable end of an IRI (``<http://rdf.freebase.com/ns/people.person>`` -> ``people.person``)."""
    if term.startswith("<"):
        iri = term[1:-1]
        tail = re.split(r"[/#]", iri.rstrip("/#"))[-1]
        return _unescape(tail) or iri
    return term  # a blank node keeps its label


def load_ntriples(source: str | Path, out_path: str | Path) -> KBStats:
    """Build a KB from an N-Triples file.

    IRIs and blank nodes are entities; a predicate's name is the end of its IRI (``…/ns/people.person.profession``
    -> ``people.person.profession``). ``rdf:type`` sets the subject's type (the end of the class IRI) and a label
    (``rdfs:label``, ``type.object.name``, ``name``) its name, else the end of its IRI names it. A numeric literal
    (by datatype or text) is an attribute value; other literals are skipped (the tools only reach entities and
    numbers). A line that is not a triple is a ``DataError`` naming it."""
    source = Path(source)
    found = _Collector()
    with source.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            match = _NTRIPLE.fullmatch(text)
            if match is None or match.group(1).startswith('"') or not match.group(2).startswith("<"):
                raise DataError(
                    "not an N-Triples statement (subject predicate object .)", file=str(source), line=number
                )
            subject, predicate, obj = match.groups()
            s = found.entity(subject)
            relation = _local(predicate)
            if relation.lower() in _TYPE_RELATIONS:
                if not obj.startswith('"'):
                    found.kinds.setdefault(s, _local(obj))
            elif obj.startswith('"'):
                body, _, suffix = obj[1:].rpartition('"')
                literal = _unescape(body)
                if relation.lower() in _NAME_RELATIONS:
                    # the first label wins, an English one over any other
                    if s not in found.labels or suffix.lower() in {"@en", "@en-us"}:
                        found.labels[s] = literal
                elif (value := as_number(literal)) is not None:
                    found.attributes.append((s, relation, value))
            else:
                found.triples.append((s, relation, found.entity(obj)))
    return found.store(out_path, source, _local)


# ---------------------------------------------------------------------------------------------------------------
# Tools: the methods of the episode (``KBState``) marked with the kit's ``@tool``

_MAKERS = "get_neighbors, intersection, argmax or argmin"
EntityOrVariable = Annotated[str, Field(description="an entity's name, or a variable such as #0")]
VariableLabel = Annotated[str, Field(description="a variable, such as #0")]
ListedRelation = Annotated[str, Field(description="a relation get_relations listed")]
ListedAttribute = Annotated[str, Field(description="an attribute get_attributes listed")]
# argmax and argmin: which value, the tool, and what the example finds
_SUPERLATIVE = (
    "Returns, as a new variable, the entity of a variable with the {} value of an attribute. The attribute must be "
    "one get_attributes listed for this variable. Example: {}(#0, age) gives the {} entity of #0. "
    "Prerequisite: get_attributes."
)


@dataclass
class Variable:
    """A set of entity ids a tool made, and their types (the most frequent first)."""

    entities: frozenset[int]
    types: tuple[str, ...]


def _describe(label: str, variable: Variable) -> str:
    """The observation of a tool that made a variable (the paper's "variable #0, which are instances of …")."""
    size = len(variable.entities)
    if not size:
        return f"variable {label}, which is empty"
    counted = f"{size} entit{'y' if size == 1 else 'ies'}"
    return f"variable {label}, which are instances of {', '.join(variable.types)} ({counted})"


@dataclass
class KBState:
    """One episode: the store, the question's entities, the variables made so far, and what get_relations and
    get_attributes showed for each entity or variable (the rules of Appendix A refer to it). Its methods marked
    ``@tool`` are the seven KB tools, run on it."""

    store: TripleStore | None = None
    owns_store: bool = False  # a fork shares its parent's handle and must not close it
    kb: str = ""
    entities: list[str] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    relations_seen: dict[str, list[str]] = field(default_factory=dict)
    attributes_seen: dict[str, list[str]] = field(default_factory=dict)
    done: set[tuple[str, str]] = field(default_factory=set)

    def fork(self) -> KBState:
        return KBState(
            self.store,
            False,
            self.kb,
            list(self.entities),
            list(self.variables),  # variables are immutable: sharing them is safe
            {k: list(v) for k, v in self.relations_seen.items()},
            {k: list(v) for k, v in self.attributes_seen.items()},
            set(self.done),
        )

    def defined(self) -> str:
        """The variables defined so far, as an error message says it."""
        if not self.variables:
            return f"no variable is defined yet ({_MAKERS} make them)"
        return "defined so far: " + ", ".join(f"#{i}" for i in range(len(self.variables)))

    # -- what the tools' arguments name

    def _resolve(self, tool: str, value: Any) -> tuple[str, frozenset[int], bool]:
        """A variable argument as ``(key, entity ids, is a variable)``; ``key`` is ``#k`` or the entity's name."""
        text = str(value).strip()
        match = VARIABLE.fullmatch(text)
        if match:
            index = int(match.group(1))
            if index >= len(self.variables):
                raise ToolExecutionError(f"{tool}: {capped(text)} does not exist; {self.defined()}")
            return f"#{index}", self.variables[index].entities, True
        if text.startswith("#"):
            raise ToolExecutionError(
                f"{tool}: '{capped(text)}' is not a variable: variables are written #0, #1, …; {self.defined()}"
            )
        store = _store(self)
        entity = store.entity_id(text)
        if entity is None:
            known = [*self.entities, *store.similar_names(text)]
            hint = did_you_mean(text, known) if known else ""
            if hint.startswith("known"):  # a list of unrelated names helps nobody: name the question's entities only
                hint = f"the question names: {', '.join(self.entities)}" if self.entities else ""
            raise ToolExecutionError(
                f"{tool}: '{capped(text)}' is neither a variable (#0, #1, …) nor an entity of the knowledge base"
                + (f"; {hint}" if hint else "")
            )
        return store.names({entity})[0], frozenset({entity}), False

    def _variable_only(self, tool: str, value: Any) -> tuple[str, frozenset[int]]:
        key, entities, is_variable = self._resolve(tool, value)
        if not is_variable:
            raise ToolExecutionError(
                f"{tool}: '{key}' is an entity, not a variable; {tool} works on a variable that {_MAKERS} made "
                f"(first get_neighbors({key}, …)); {self.defined()}"
            )
        return key, entities

    def _new_variable(self, entities: Collection[int]) -> str:
        frozen = frozenset(entities)
        variable = Variable(frozen, _store(self).types(frozen))
        self.variables.append(variable)
        return _describe(f"#{len(self.variables) - 1}", variable)

    # -- the tools

    @tool(
        "navigational",
        description="Lists the relations (edges) that leave the given entity or variable, so you can pick the one "
        "that leads towards the answer. The argument is an entity's name or a variable such as #0, nothing else. "
        "Example: get_relations(Barack Obama) lists every relation starting at the entity Barack Obama. "
        "Prerequisite: none.",
        environment=ENVIRONMENT,
    )
    def get_relations(self, variable: EntityOrVariable) -> list[str]:
        key, entities, _ = self._resolve("get_relations", variable)
        relations = _store(self).relations_of(entities)
        self.relations_seen[key] = relations
        return relations

    @tool(
        "navigational",
        description="Follows a relation from an entity or variable and returns the entities at the other end as a "
        "new variable (#0, #1, …). The relation must be one that get_relations listed for this same entity or "
        "variable. Example: get_neighbors(Barack Obama, people.person.profession) gives Obama's professions. "
        "Prerequisite: get_relations.",
        environment=ENVIRONMENT,
    )
    def get_neighbors(self, variable: EntityOrVariable, relation: ListedRelation) -> str:
        key, entities, _ = self._resolve("get_neighbors", variable)
        relation = str(relation).strip()
        seen = self.relations_seen.get(key)
        if seen is None:
            raise ToolExecutionError(
                f"get_neighbors: call get_relations({key}) first; the relation must be one it lists for {key}"
            )
        if relation not in seen:
            hint = did_you_mean(relation, seen)
            raise ToolExecutionError(
                f"get_neighbors: relation '{relation}' is not connected to {key} (get_relations({key}) did not list "
                "it)" + (f"; {hint}" if hint else "; it listed no relation at all")
            )
        return self._new_variable(_store(self).neighbors(entities, relation))

    @tool(
        "functional",
        description="Returns the entities two variables have in common, as a new variable. Both variables must "
        "hold entities of the same type. Example: intersection(#0, #1). Prerequisite: get_neighbors.",
        environment=ENVIRONMENT,
    )
    def intersection(self, variable1: VariableLabel, variable2: VariableLabel) -> str:
        first, left = self._variable_only("intersection", variable1)
        second, right = self._variable_only("intersection", variable2)
        if first == second:
            raise ToolExecutionError(
                f"intersection: {first} and {second} are the same variable; give two different ones"
            )
        left_types = self.variables[int(first[1:])].types
        right_types = self.variables[int(second[1:])].types
        if left and right and not set(left_types) & set(right_types):
            raise ToolExecutionError(
                f"intersection: {first} holds {', '.join(left_types)} entities but {second} holds "
                f"{', '.join(right_types)} entities; the two variables must be of the same type"
            )
        return self._new_variable(left & right)

    @tool(
        "navigational",
        description="Lists the numerical attributes of a variable's entities. Use it only when the question asks "
        "for a superlative (the largest, the smallest), before argmax or argmin. Example: get_attributes(#0). "
        "Prerequisite: get_neighbors.",
        environment=ENVIRONMENT,
    )
    def get_attributes(self, variable: VariableLabel) -> list[str]:
        key, entities = self._variable_only("get_attributes", variable)
        attributes = _store(self).attributes_of(entities)
        self.attributes_seen[key] = attributes
        return attributes

    @tool("functional", description=_SUPERLATIVE.format("largest", "argmax", "oldest"), environment=ENVIRONMENT)
    def argmax(self, variable: VariableLabel, attribute: ListedAttribute) -> str:
        return self._superlative("argmax", variable, attribute, largest=True)

    @tool("functional", description=_SUPERLATIVE.format("smallest", "argmin", "youngest"), environment=ENVIRONMENT)
    def argmin(self, variable: VariableLabel, attribute: ListedAttribute) -> str:
        return self._superlative("argmin", variable, attribute, largest=False)

    @tool(
        "functional",
        description="Returns how many entities a variable holds. Example: count(#2). Prerequisite: get_neighbors.",
        environment=ENVIRONMENT,
    )
    def count(self, variable: VariableLabel) -> int:
        _, entities = self._variable_only("count", variable)
        return len(entities)

    def _superlative(self, tool: str, variable: str, attribute: str, *, largest: bool) -> str:
        key, entities = self._variable_only(tool, variable)
        attribute = str(attribute).strip()
        seen = self.attributes_seen.get(key)
        if seen is None:
            raise ToolExecutionError(f"{tool}: call get_attributes({key}) first; the attribute must be one it lists")
        if attribute not in seen:
            hint = did_you_mean(attribute, seen)
            raise ToolExecutionError(
                f"{tool}: '{attribute}' is not an attribute of {key} (get_attributes({key}) did not list it)"
                + (f"; {hint}" if hint else f"; {key} has no numerical attribute")
            )
        values = _store(self).values(entities, attribute, largest)
        best = max(values.values()) if largest else min(values.values())
        return self._new_variable([e for e, v in values.items() if v == best])  # ties: every entity that reaches it


def _store(state: KBState) -> TripleStore:
    if state.store is None:
        raise RuntimeError("no knowledge base is open for this episode: start() was not called")
    return state.store


# the seven tools, in the order the suite lists them
TOOLS = EpisodeTools(KBState, closed=True, family="KB")
KB_TOOLS: list[ToolSpec] = TOOLS.specs
KB_TOOL_NAMES = TOOLS.names


def _signature(state: KBState, tool: str, arguments: Mapping[str, Any]) -> tuple[str, str]:
    """A call in canonical form (entity names as stored, blanks trimmed): what ``valid_actions`` compares."""
    canonical: dict[str, str] = {}
    for name, value in sorted(arguments.items()):
        text = str(value).strip()
        if name.startswith("variable") and not VARIABLE.fullmatch(text) and state.store is not None:
            entity = state.store.entity_id(text)
            text = state.store.names({entity})[0] if entity is not None else text
        canonical[name] = text
    return tool, json.dumps(canonical, sort_keys=True)


def run_tool(state: KBState, tool: str, arguments: Mapping[str, Any]) -> Any:
    """Run one KB tool on an episode's state: its observation, or ``ToolExecutionError`` with the message the
    agent reads."""
    if tool not in TOOLS.methods:
        raise ToolExecutionError(f"unknown KB tool '{tool}'; {did_you_mean(tool, KB_TOOL_NAMES)}")
    _store(state)  # a wiring bug, not the agent's: fails loudly before any argument is looked at
    result = TOOLS.run(state, tool, arguments)
    state.done.add(_signature(state, tool, arguments))
    return result


def valid_actions(state: KBState) -> list[tuple[str, dict[str, str]]]:
    """Every call the rules allow now, in a fixed order: get_relations on each of the question's entities and
    each variable, get_neighbors with each relation get_relations listed for its entity or variable, intersection
    of each pair of variables of a common type, get_attributes on each variable, argmax and argmin with each
    attribute get_attributes listed, and count on each variable. A call already made is left out: it could only
    repeat its observation or copy a variable."""
    labels = [f"#{i}" for i in range(len(state.variables))]
    actions: list[tuple[str, dict[str, str]]] = []
    actions += [("get_relations", {"variable": v}) for v in [*state.entities, *labels]]
    for key, relations in state.relations_seen.items():
        actions += [("get_neighbors", {"variable": key, "relation": r}) for r in relations]
    for i, left in enumerate(state.variables):
        for j in range(i + 1, len(state.variables)):
            right = state.variables[j]
            if not left.entities or not right.entities or set(left.types) & set(right.types):
                actions.append(("intersection", {"variable1": labels[i], "variable2": labels[j]}))
    actions += [("get_attributes", {"variable": v}) for v in labels]
    for superlative in ("argmax", "argmin"):
        for key, attributes in state.attributes_seen.items():
            actions += [(superlative, {"variable": key, "attribute": a}) for a in attributes]
    actions += [("count", {"variable": v}) for v in labels]
    return [(tool, args) for tool, args in actions if _signature(state, tool, args) not in state.done]


def answer_entities(state: KBState, variable: str) -> set[str]:
    """The names of the entities a variable (``#3``) holds: what the scorer compares with the gold set. A label
    that names no variable of the episode answers nothing (an empty set)."""
    match = VARIABLE.fullmatch(variable.strip())
    if match is None or int(match.group(1)) >= len(state.variables):
        return set()
    return set(_store(state).names(state.variables[int(match.group(1))].entities))


def f1(predicted: Collection[str], gold: Collection[str]) -> float:
    """The F1 of a predicted answer set against the gold one (KBQA's answer F1); two empty sets agree fully."""
    guess, truth = set(predicted), set(gold)
    if not guess and not truth:
        return 1.0
    common = len(guess & truth)
    if not common:
        return 0.0
    precision, recall = common / len(guess), common / len(truth)
    return 2 * precision * recall / (precision + recall)


class KBToolBox(ToolBox):
    """The KB tools over named KB files: each episode opens the KB its scenario names (``metadata["kb"]``) and
    starts from the question's entities (``metadata["entities"]``)."""

    def __init__(self, specs: Iterable[ToolSpec], kbs: Mapping[str, str | Path]):
        super().__init__(specs)
        TOOLS.check(self.specs)
        self.kbs = {name: Path(path) for name, path in kbs.items()}

    def new_state(self) -> KBState:
        return KBState()

    def start(self, state: KBState, scenario: Scenario) -> None:
        name = scenario.metadata.get("kb")
        if not isinstance(name, str) or name not in self.kbs:
            hint = did_you_mean(str(name), self.kbs) if isinstance(name, str) else "give metadata.kb"
            raise DataError(f"scenario {scenario.id}: unknown knowledge base {name!r}", field="metadata.kb", hint=hint)
        store = TripleStore.open(self.kbs[name])
        entities = scenario.metadata.get("entities") or []
        missing = [e for e in entities if not isinstance(e, str) or store.entity_id(e) is None]
        if missing:
            store.close()
            raise DataError(
                f"scenario {scenario.id}: {len(missing)} of its entities are not in knowledge base '{name}': "
                + ", ".join(repr(e) for e in missing[:5]),
                field="metadata.entities",
            )
        state.store, state.owns_store, state.kb = store, True, name
        state.entities = [store.names({i})[0] for e in entities if (i := store.entity_id(e)) is not None]

    def execute(self, state: KBState, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        if state.store is None:
            return run_tool(state, spec.name, arguments)  # refuses: the episode has not started
        try:  # lookups on the model's names and variables: bounded in time, like the database tools' queries
            with time_limit(state.store.conn, QUERY_TIMEOUT_S):
                return run_tool(state, spec.name, arguments)
        except QueryTimeout as exc:
            raise ToolExecutionError(f"{spec.name}() failed: {exc}") from exc

    def close_state(self, state: KBState) -> None:
        if state.owns_store and state.store is not None:
            with contextlib.suppress(sqlite3.Error):
                state.store.close()
        state.store = None

    def fork_state(self, state: KBState) -> KBState:
        return state.fork()

    def valid_actions(self, state: KBState) -> list[tuple[str, dict[str, Any]]]:
        """Every call the rules of Appendix A allow now (the module's ``valid_actions``): the candidate actions of
        the paper's decoupled generation."""
        return list(valid_actions(state))
