"""The FAIL-TaLMs tool library: everyday tools (a calculator, calendars, weather, quotes, recipes, ...) that run
offline and deterministically.

Each tool is a typed function of a domain module (:mod:`.science`, :mod:`.dates`, ...) marked with
:func:`~undertow.env_core.tools.tool`, its category as the mark's kind; its :class:`ToolSpec` comes from the
signature and the ``Annotated`` parameter descriptions. The data the tools serve are the seed tables of
``data/tables/`` (:mod:`.shared`). This module gathers the tools in category order and runs them by name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from undertow.env_core.errors import did_you_mean
from undertow.env_core.failtalms import (
    dates,
    finance,
    food,
    games,
    geo,
    health,
    inspiration,
    language,
    music,
    science,
    sports,
    transport,
    weather,
)
from undertow.env_core.failtalms.shared import fail
from undertow.env_core.model import ToolSpec
from undertow.env_core.tools import ToolBox, ToolExecutionError, marked_tools, tool_mark, tool_spec

# the domains in the order their tools are listed (the suite's tools.jsonl keeps it)
DOMAINS: tuple[ModuleType, ...] = (
    science,
    dates,
    geo,
    finance,
    weather,
    language,
    inspiration,
    food,
    games,
    sports,
    music,
    health,
    transport,
)

# The suite stores every spec as JSON and the random policy reads the schemas, so a spec keeps the shape the
# library has always written: these keys in this order, and a binding of the category and the function's name.
_PROPERTY_KEYS = ("type", "description", "minimum", "exclusiveMinimum", "maximum", "maxLength", "default")


def _domain_tools(module: ModuleType) -> dict[str, Callable[..., Any]]:
    """The tools a domain module defines, in the order it defines them."""
    defined = [f for f in vars(module).values() if inspect.isfunction(f) and f.__module__ == module.__name__]
    return marked_tools(defined)


def _spec(function: Callable[..., Any]) -> ToolSpec:
    spec = tool_spec(function)
    mark = tool_mark(function)
    assert mark is not None  # tool_spec raises for an unmarked function
    properties: dict[str, Any] = {}
    for name, prop in spec.parameters["properties"].items():
        unknown = set(prop) - set(_PROPERTY_KEYS)
        if unknown:
            raise TypeError(f"{function.__name__}.{name}: schema keywords the library does not order: {unknown}")
        properties[name] = {key: prop[key] for key in _PROPERTY_KEYS if key in prop}
    parameters = {
        "type": "object",
        "properties": properties,
        "required": spec.parameters.get("required", []),
        "additionalProperties": False,
    }
    return spec.model_copy(
        update={"parameters": parameters, "binding": {"category": mark.kind, "function": function.__name__}}
    )


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: function for module in DOMAINS for name, function in _domain_tools(module).items()
}
ALL_TOOLS: list[ToolSpec] = [_spec(function) for function in _FUNCTIONS.values()]
_SPECS = {spec.name: spec for spec in ALL_TOOLS}
_VALIDATORS: dict[str, Draft202012Validator] = {}


def categories() -> dict[str, list[str]]:
    """Tool names by category, in library order."""
    grouped: dict[str, list[str]] = {}
    for spec in ALL_TOOLS:
        grouped.setdefault(spec.binding["category"], []).append(spec.name)
    return grouped


def run(name: str, arguments: Mapping[str, Any]) -> Any:
    """Run a tool by name. Arguments are checked against its schema first; a bad call raises ToolExecutionError
    with a message the caller can act on."""
    function = _FUNCTIONS.get(name)
    if function is None:
        fail(f"unknown tool {name!r}; {did_you_mean(name, _FUNCTIONS)}")
    validator = _VALIDATORS.get(name)
    if validator is None:
        validator = _VALIDATORS[name] = Draft202012Validator(_SPECS[name].parameters)
    error = best_match(validator.iter_errors(dict(arguments)))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        raise ToolExecutionError(
            f"invalid arguments for {name}: {error.message}" + (f" (at '{where}')" if where else ""),
            "invalid_arguments",
        )
    return function(**arguments)


class FailTalmsToolBox(ToolBox):
    """The offline tools. They are pure functions of their arguments, so an episode's state is an empty dict (not
    None: the environment reads a None state as "not reset yet")."""

    def __init__(self, specs: Iterable[ToolSpec] | None = None) -> None:
        super().__init__(ALL_TOOLS if specs is None else specs)

    def new_state(self) -> dict[str, Any]:
        return {}

    def execute(self, state: Any, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return run(spec.binding.get("function", spec.name), arguments)
