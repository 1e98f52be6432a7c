"""Model-written documentation for compiled functions: the prompt, the unit checks, and applying a checked doc.

HoHW (§3.2, appendix C) has a model document each function from its code and a description of the database, then
validates the result with unit checks (required fields present, aligned with the code) and lets the model correct
itself up to three times. The calling loop lives in ``workers.docgen``; here are the pure parts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from env_core.model import ToolSpec
from env_core.sqlfuncs.compile import JSON_TYPES

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
    if sorted(parameters.get("required", [])) != sorted(expected):
        problems.append(f"required must list every argument: {sorted(expected)}")
    return problems


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
