"""How the middleware family declares its tools: methods of an episode class marked with the kit's ``@tool``, whose
specs keep the layout the family publishes (the prompts print them as JSON), listed in definition order and run
by name on an episode."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated

import pytest
from pydantic import Field

from undertow.env_core.middleware.database import DATABASE_TOOLS
from undertow.env_core.middleware.episode_tools import EpisodeTools, published_spec
from undertow.env_core.middleware.kb import KB_TOOLS
from undertow.env_core.tools import tool

Word = Annotated[str, Field(description="a word")]


@dataclass
class Notebook:
    """A toy episode: two tools that write into it, declared out of alphabetical order."""

    lines: list[str] = field(default_factory=list)

    @tool("functional", description="Writes a word.\nPrerequisite: n/a", environment="toy")
    def write(self, word: Word, times: Annotated[int | float, Field(description="how often")]) -> int:
        self.lines += [word] * int(times)
        return len(self.lines)

    @tool("navigational", description="Reads the notebook.", environment="toy")
    def read(self) -> list[str]:
        return self.lines


def test_a_spec_has_the_familys_layout_whatever_pydantic_writes() -> None:
    spec = published_spec(Notebook.write, closed=False)
    assert json.dumps(spec.model_dump()) == json.dumps(
        {
            "name": "write",
            "description": "Writes a word.\nPrerequisite: n/a",  # the line break kept
            "parameters": {
                "type": "object",
                "properties": {
                    "word": {"type": "string", "description": "a word"},
                    "times": {"type": ["integer", "number"], "description": "how often"},
                },
                "required": ["word", "times"],
            },
            "binding": {"environment": "toy", "kind": "functional"},
        }
    )
    assert published_spec(Notebook.read, closed=True).parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_a_parameter_the_layout_cannot_show_is_refused_rather_than_dropped() -> None:
    @tool("functional", description="d", environment="toy")
    def bounded(episode: Notebook, count: Annotated[int, Field(ge=0, description="a count")]) -> None:
        """A bound the published layout has no place for."""

    @tool("functional", description="d")
    def nowhere(episode: Notebook) -> None:
        """No environment: the family's tool boxes route a call by it."""

    with pytest.raises(TypeError, match="parameter count has a schema the family's layout does not show"):
        published_spec(bounded, closed=True)
    with pytest.raises(TypeError, match="marked with a description and an environment"):
        published_spec(nowhere, closed=True)


def test_the_tools_are_listed_in_definition_order_and_run_by_name() -> None:
    tools = EpisodeTools(Notebook, closed=False, family="toy")
    assert tools.names == ("write", "read") == tuple(spec.name for spec in tools.specs)
    notebook = Notebook()
    assert tools.run(notebook, "write", {"word": "salt", "times": 2, "unknown": "ignored"}) == 2
    assert tools.run(notebook, "read", {}) == ["salt", "salt"]
    with pytest.raises(ValueError, match="tool 'raed' is not a toy tool; did you mean 'read'"):
        tools.check(["write", "raed"])


def test_the_nineteen_tools_keep_their_published_json() -> None:
    """Specs written out as the suite stores them: key order, an open and a closed schema, the binding."""
    published = {spec.name: spec for spec in [*DATABASE_TOOLS, *KB_TOOLS]}
    value_in_column = published["is_value_in_column"]
    assert json.dumps(value_in_column.parameters) == json.dumps(
        {
            "type": "object",
            "properties": {
                "table": {"type": "string", "description": "the table's name"},
                "column": {"type": "string", "description": "the column's name"},
                "value": {
                    "type": ["string", "number"],
                    "description": "a cell value as stored in the rows (not a column name)",
                },
            },
            "required": ["table", "column", "value"],
        }
    )
    assert json.dumps(value_in_column.binding) == '{"environment": "database", "kind": "navigational"}'
    # a KB tool refuses unknown arguments, and its schema says so last
    neighbors = published["get_neighbors"].parameters
    assert list(neighbors) == ["type", "properties", "required", "additionalProperties"]
    assert neighbors["required"] == ["variable", "relation"] and neighbors["additionalProperties"] is False
    assert json.dumps(neighbors["properties"]["relation"]) == (
        '{"type": "string", "description": "a relation get_relations listed"}'
    )
    kb_order = ["get_relations", "get_neighbors", "intersection", "get_attributes", "argmax", "argmin", "count"]
    assert list(published)[-7:] == kb_order
