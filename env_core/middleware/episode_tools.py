"""The middleware family's tools as an episode class declares them: methods marked with the kit's ``@tool(kind,
description=..., environment=...)`` whose typed parameters (``Annotated[type, Field(description=...)]``) are the
tool's arguments. ``EpisodeTools`` collects them in the order the class defines them: the ToolSpecs the suite
publishes, and by tool name the methods that run the calls (one registry: no spec list beside a dispatch table).

The published specs keep the shape the family has always shown models (the prompts print them, the random policy
reads them): ``{"type": "object", "properties": ..., "required": ...}`` with ``type`` before ``description`` in each
property, a value that is a string or a number typed ``["string", "number"]``, ``additionalProperties: false`` only
where the environment refuses unknown arguments, the description exactly as written (line breaks included) and a
binding of ``environment`` then ``kind``. The kit's ``tool_spec`` gives pydantic's shape (sorted keys, ``anyOf``,
always closed, whitespace collapsed); ``published_spec`` lays its schema out in the family's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from undertow.env_core.errors import did_you_mean
from undertow.env_core.model import ToolSpec
from undertow.env_core.tools import marked_tools, tool_mark, tool_spec

# the keys pydantic writes for a described parameter of a plain type, or of a union of plain types
_PLAIN_KEYS = {"type", "description"}
_UNION_KEYS = {"anyOf", "description"}


def _plain_property(tool: str, name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """One parameter's schema as the family writes it: ``{"type": ..., "description": ...}``."""
    if set(schema) == _PLAIN_KEYS:
        kind: Any = schema["type"]
    elif set(schema) == _UNION_KEYS and all(set(form) == {"type"} for form in schema["anyOf"]):
        kind = [form["type"] for form in schema["anyOf"]]
    else:  # a bound or a default would be dropped here: such a parameter needs this layout extended first
        raise TypeError(f"tool {tool}: parameter {name} has a schema the family's layout does not show: {schema}")
    return {"type": kind, "description": schema["description"]}


def published_spec(method: Callable[..., Any], *, closed: bool) -> ToolSpec:
    """The ToolSpec of a marked episode method (its first parameter, the episode, is no argument) in the family's
    layout; ``closed`` adds ``additionalProperties: false`` (the environment refuses unknown arguments)."""
    generated = tool_spec(method, skip_first=True)
    mark = tool_mark(method)
    if mark is None or mark.description is None or "environment" not in mark.binding:
        raise TypeError(f"{method.__qualname__}: a middleware tool is marked with a description and an environment")
    properties = {
        name: _plain_property(generated.name, name, schema)
        for name, schema in generated.parameters["properties"].items()
    }
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(generated.parameters.get("required", [])),
    }
    if closed:
        parameters["additionalProperties"] = False
    return ToolSpec(
        name=generated.name,
        description=mark.description,
        parameters=parameters,
        binding={"environment": mark.binding["environment"], "kind": mark.kind},
    )


class EpisodeTools:
    """The tools an episode class declares, in the order it defines them: ``specs`` (what a suite publishes) and
    ``run`` (a call, on an episode of that class, to the method that implements the tool)."""

    def __init__(self, episode: type, *, closed: bool, family: str):
        self.family = family  # the words of an unknown-tool refusal: "not a database tool"
        self.methods: dict[str, Callable[..., Any]] = {}
        self.specs: list[ToolSpec] = []
        self.parameters: dict[str, tuple[str, ...]] = {}
        for method in marked_tools(vars(episode).values()).values():
            spec = published_spec(method, closed=closed)
            self.specs.append(spec)
            self.methods[spec.name] = method
            self.parameters[spec.name] = tuple(spec.parameters["properties"])
        self.names = tuple(self.methods)

    def check(self, names: Iterable[str]) -> None:
        """Refuse a tool box whose specs name a tool this class does not declare."""
        for name in names:
            if name not in self.methods:
                raise ValueError(f"tool '{name}' is not a {self.family} tool; {did_you_mean(name, self.names)}")

    def run(self, episode: Any, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call the tool ``name`` on ``episode`` with the arguments its method declares (an open schema lets others
        through: they are ignored, as they always were)."""
        declared = self.parameters[name]
        return self.methods[name](episode, **{key: value for key, value in arguments.items() if key in declared})
