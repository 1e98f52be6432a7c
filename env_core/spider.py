"""Reading a Spider-format text-to-SQL folder (``tables.json``, the questions file, ``database/<db>/<db>.sqlite``):
the shared source of the families that compile SQL questions into tools. Nothing here raises on bad input: a
malformed file, database or question becomes a ``Problem`` the build reports and skips."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from undertow.env_core.families import SuiteConfig, resolve_path


class SpiderSuite(SuiteConfig):
    """The fields of a suite compiled from a Spider-format folder (the families that turn SQL questions into
    tools share them); a relative path is read from the config file's folder."""

    spider: str = Field(description="Spider-format folder: tables.json, questions, database/<db_id>/<db_id>.sqlite")
    questions: str | None = Field(default=None, description="questions file name in the folder (default: dev.json)")

    _resolve_spider = field_validator("spider")(resolve_path)


@dataclass(frozen=True)
class Problem:
    """One item the build skipped, and why. ``kind`` is the short category the build summary counts."""

    item: str  # "tables.json", "tables.json[3]", "database concert_singer", "question 17"
    kind: str
    reason: str


@dataclass
class Schema:
    db_id: str
    tables: dict[str, list[str]]  # table name (as in the database) -> column names
    # Spider's natural-language names and column types, keyed by original (table, column) / table name
    column_names: dict[tuple[str, str], str] = field(default_factory=dict)
    column_types: dict[tuple[str, str], str] = field(default_factory=dict)
    table_names: dict[str, str] = field(default_factory=dict)

    def has_column(self, name: str) -> bool:
        lowered = name.lower()
        return any(lowered == c.lower() for columns in self.tables.values() for c in columns)

    def table_of(self, name: str) -> str | None:
        for table in self.tables:
            if table.lower() == name.lower():
                return table
        return None


@dataclass
class Question:
    index: int
    db_id: str
    text: str
    query: str


@dataclass
class SpiderData:
    schemas: dict[str, Schema]
    databases: dict[str, Path]
    questions: list[Question]
    problems: list[Problem] = field(default_factory=list)
    digest: str = ""  # identity of the dataset: tables, questions and database bytes


def _read_json_list(path: Path, what: str, digest: Any, problems: list[Problem]) -> list[Any]:
    """A JSON file holding a list (its bytes join the dataset digest); unreadable -> [] and a problem."""
    try:
        text = path.read_bytes()
        digest.update(text)
        value = json.loads(text)
        if not isinstance(value, list):
            raise ValueError(f"expected a list of {what}, got {type(value).__name__}")
    except (OSError, ValueError) as exc:
        problems.append(Problem(path.name, f"unreadable {path.name}", str(exc)))
        return []
    return value


def read_spider(folder: str | Path, questions_file: str | None = None) -> SpiderData:
    """Read ``tables.json``, the questions file and ``database/<db_id>/<db_id>.sqlite``; collect problems."""
    folder = Path(folder)
    problems: list[Problem] = []
    digest = hashlib.sha256()
    schemas: dict[str, Schema] = {}
    for i, entry in enumerate(_read_json_list(folder / "tables.json", "schema entries", digest, problems)):
        try:
            db_id = entry["db_id"]
            names = entry["table_names_original"]
            tables: dict[str, list[str]] = {name: [] for name in names}
            natural = entry.get("column_names") or []
            types = entry.get("column_types") or []
            schema = Schema(db_id, tables)
            for position, (table_index, column) in enumerate(entry["column_names_original"]):
                if table_index >= 0:
                    table = names[table_index]
                    tables[table].append(column)
                    if position < len(natural) and isinstance(natural[position], list | tuple):
                        schema.column_names[(table, column)] = str(natural[position][1])
                    if position < len(types):
                        schema.column_types[(table, column)] = str(types[position])
            for position, table in enumerate(names):
                table_natural = entry.get("table_names") or []
                schema.table_names[table] = str(table_natural[position]) if position < len(table_natural) else table
            schemas[db_id] = schema
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            problems.append(Problem(f"tables.json[{i}]", "malformed schema entry", f"{type(exc).__name__}: {exc}"))

    databases: dict[str, Path] = {}
    for db_id in sorted(schemas):
        path = folder / "database" / db_id / f"{db_id}.sqlite"
        if not path.is_file():
            problems.append(Problem(f"database {db_id}", "database file missing", f"{path} not found"))
            continue
        data = path.read_bytes()
        if not data.startswith(b"SQLite format 3\x00"):
            problems.append(Problem(f"database {db_id}", "not a SQLite database", f"{path} is not a SQLite file"))
            continue
        digest.update(db_id.encode() + hashlib.sha256(data).digest())
        databases[db_id] = path

    candidates = [questions_file] if questions_file else ["dev.json", "questions.json", "train_spider.json"]
    questions: list[Question] = []
    questions_path = next((folder / c for c in candidates if (folder / c).is_file()), None)
    if questions_path is None:
        problems.append(
            Problem("questions", "no questions file", f"none in {folder} (looked for {', '.join(candidates)})")
        )
        return SpiderData(schemas, databases, questions, problems, digest.hexdigest())
    for i, item in enumerate(_read_json_list(questions_path, "questions", digest, problems)):
        if not (isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("db_id", "question", "query"))):
            problems.append(
                Problem(f"question {i}", "malformed question", "needs string fields db_id, question, query")
            )
            continue
        questions.append(Question(i, item["db_id"], item["question"].strip(), item["query"].strip()))
    return SpiderData(schemas, databases, questions, problems, digest.hexdigest())
