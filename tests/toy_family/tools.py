"""The toy family's one tool, declared with the kit's ``@tool``: its schema comes from the typed signature, its
description from the docstring, and its data from ``data/capitals.jsonl``."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field

from undertow.env_core.content import data_dir, read_records
from undertow.env_core.model import ToolSpec
from undertow.env_core.tools import ToolBox, ToolExecutionError, marked_tools, tool, tool_spec

DATA = data_dir(__file__)
BROKEN = "TOY_BACKEND_DOWN"  # a file named by this variable makes the backend fail (an infrastructure error)
SLOW = "TOY_LOOKUP_S"  # seconds each lookup takes (a slow backend: the sandbox counts tool time in a cell's budget)


class Capital(BaseModel):
    """One line of ``data/capitals.jsonl``."""

    country: str = Field(min_length=1)
    capital: str = Field(min_length=1)


@functools.cache
def capitals() -> dict[str, str]:
    """The table, read once per process; a bad line is an error naming the file, the line and the field."""
    return {row.country: row.capital for row in read_records(DATA / "capitals.jsonl", Capital)}


@tool("read")
def lookup_capital(country: Annotated[str, Field(description="the country's English name")]) -> list[dict[str, str]]:
    """The capital city of a country."""
    capital = capitals().get(country)
    if capital is None:
        raise ToolExecutionError(f"no capital known for {country!r}")
    return [{"capital": capital}]


TOOLS = marked_tools([lookup_capital])
# the binding names the function that runs a spec: a copy of a spec under another name (a mirror) runs it too
SPECS = [tool_spec(function, binding={"function": name}) for name, function in TOOLS.items()]


class CapitalToolBox(ToolBox):
    """Runs the function each spec's binding names; the episodes share no state."""

    def new_state(self) -> dict[str, Any]:
        return {}

    def execute(self, state: dict[str, Any], spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        marker = os.environ.get(BROKEN)
        if marker and Path(marker).exists():
            raise RuntimeError("the toy backend is down")
        time.sleep(float(os.environ.get(SLOW, "0")))
        return TOOLS[spec.binding["function"]](**arguments)


def toolbox(specs: list[ToolSpec], databases: Mapping[str, Path]) -> CapitalToolBox:
    return CapitalToolBox(specs)
