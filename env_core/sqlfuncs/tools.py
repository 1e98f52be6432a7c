"""Executing compiled SQL functions: strict argument types and the paper's "Did you mean" hint."""

from __future__ import annotations

import difflib
from typing import Any

from undertow.env_core.model import ToolSpec
from undertow.env_core.tools import EpisodeDatabases, SqliteToolBox, ToolExecutionError, ToolOutput

_PYTHON_TYPES = {"str": str, "int": int, "float": float, "list": list}


def type_error(arguments: dict[str, Any], params: list[dict[str, Any]]) -> str | None:
    """The paper's message for the first argument of the wrong Python type ("Expected float but got int for x")."""
    for param in params:
        value = arguments.get(param["name"])
        expected = _PYTHON_TYPES[param["type"]]
        if value is None or isinstance(value, bool) or not isinstance(value, expected):
            return f"Expected {param['type']} but got {type(value).__name__} for {param['name']}"
    return None


class SqlFunctionToolBox(SqliteToolBox):
    """SQL functions compiled by ``env_core.sqlfuncs``: typed arguments, and when a string argument matches no row,
    a hint with the closest existing value of the column it is compared with."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._column_values: dict[tuple[str, str, str], dict[str, str]] = {}

    def _values(self, database: str, table: str, column: str) -> dict[str, str]:
        """Lower-cased -> original text values of a column, cached (hints are rare, columns small)."""
        key = (database, table, column)
        if key not in self._column_values:
            rows = self.query(f'SELECT DISTINCT "{column}" AS v FROM "{table}"', database=database)
            self._column_values[key] = {str(r["v"]).lower(): str(r["v"]) for r in rows if r["v"] is not None}
        return self._column_values[key]

    def execute(self, state: EpisodeDatabases, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        params = spec.binding.get("params", [])
        message = type_error(arguments, params)
        if message is not None:
            raise ToolExecutionError(message, error_type="argument_type")
        rows = super().execute(state, spec, arguments)
        if rows and any(v is not None for v in rows[0].values()):
            return rows
        notes = []
        for param in params:
            value = arguments[param["name"]]
            if param["type"] != "str" or not param.get("column"):
                continue
            known = self._values(spec.binding["database"], *param["column"])
            if value in known.values():
                continue
            notes.append(f"Could not find entry with `{param['name']}` value `{value}`.")
            match = difflib.get_close_matches(value.lower(), list(known), n=1, cutoff=0.8)
            if match:
                notes.append(f"Did you mean '{known[match[0]]}'?")
        return ToolOutput(rows, notes) if notes else rows
