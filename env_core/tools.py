"""Tool execution: argument validation against each tool's JSON schema, and the tool boxes that run tools.

A *tool box* is a family's executable tool universe. It creates fresh per-episode state (``new_state``) and
executes one call over that state (``execute``). Families that answer from a database use ``SqliteToolBox``,
whose tools are parameterized SQL queries run on a private in-memory copy of the database.
"""

from __future__ import annotations

import json
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from env_core.model import ToolSpec


class ToolExecutionError(Exception):
    """Raised by a tool implementation for an error the agent should read (bad value, no such row, ...)."""


class ToolBox(ABC):
    """A family's tools plus the code that runs them."""

    def __init__(self, specs: Iterable[ToolSpec]):
        self.specs: dict[str, ToolSpec] = {}
        for spec in specs:
            if spec.name in self.specs:
                raise ValueError(f"duplicate tool name '{spec.name}'")
            self.specs[spec.name] = spec
        self._validators: dict[str, Draft202012Validator] = {}

    @abstractmethod
    def new_state(self) -> Any:
        """Fresh state for one episode: no episode can see another's writes."""

    @abstractmethod
    def execute(self, state: Any, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        """Run one validated call. Raise ``ToolExecutionError`` for errors the agent should see."""

    def close_state(self, state: Any) -> None:  # noqa: B027 - optional hook
        """Release per-episode resources."""

    def argument_error(self, spec: ToolSpec, arguments: dict[str, Any]) -> str | None:
        """A readable message if ``arguments`` do not satisfy the tool's schema, else None."""
        validator = self._validators.get(spec.name)
        if validator is None:
            validator = self._validators[spec.name] = Draft202012Validator(spec.parameters)
        error = best_match(validator.iter_errors(arguments))
        if error is None:
            return None
        where = ".".join(str(p) for p in error.absolute_path)
        return f"Invalid arguments for {spec.name}: {error.message}" + (f" (at '{where}')" if where else "")


class SqliteToolBox(ToolBox):
    """Tools that are parameterized SQLite queries.

    Each spec's ``binding`` holds ``sql`` with named placeholders (``:name``). List arguments are passed as JSON
    text, so a query reads them with ``json_each(:name)`` and stays fully parameterized. The database is loaded
    into memory once; each episode gets its own in-memory copy, so writes never leak between episodes.
    """

    def __init__(self, specs: Iterable[ToolSpec], database: sqlite3.Connection | str):
        super().__init__(specs)
        for spec in self.specs.values():
            if "sql" not in spec.binding:
                raise ValueError(f"tool '{spec.name}' has no binding.sql")
        self._source = sqlite3.connect(":memory:", check_same_thread=False)
        if isinstance(database, str):
            with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as disk:
                disk.backup(self._source)
        else:
            database.backup(self._source)

    def new_state(self) -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._source.backup(conn)
        return conn

    def close_state(self, state: sqlite3.Connection) -> None:
        state.close()

    def execute(self, state: sqlite3.Connection, spec: ToolSpec, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        params = {k: json.dumps(v) if isinstance(v, list) else v for k, v in arguments.items()}
        for name in spec.parameters.get("properties", {}):
            params.setdefault(name, None)
        try:
            cursor = state.execute(spec.binding["sql"], params)
        except sqlite3.Error as exc:
            raise ToolExecutionError(f"{spec.name} failed: {exc}") from exc
        columns = [d[0] for d in cursor.description or ()]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def query(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run read-only SQL on the pristine database (used to compute gold answers)."""
        cursor = self._source.execute(sql, params or {})
        columns = [d[0] for d in cursor.description or ()]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def database_bytes(self) -> bytes:
        return self._source.serialize()
