"""The toy family's suite: one tool that looks a country's capital up in a table, and four questions."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from undertow.env_core.families import ReportTable, SuiteConfig
from undertow.env_core.model import Gold, PlannedCall, Scenario, ToolSpec
from undertow.env_core.suites import write_suite
from undertow.env_core.tools import ToolBox, ToolExecutionError

NAME = "toy"
CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima", "Norway": "Oslo"}
BROKEN = "TOY_BACKEND_DOWN"  # a file named by this variable makes the backend fail (an infrastructure error)
SLOW = "TOY_LOOKUP_S"  # seconds each lookup takes (a slow backend: the sandbox counts tool time in a cell's budget)


class ToySuite(SuiteConfig):
    family: Literal["toy"] = "toy"
    countries: int = Field(default=4, ge=1, le=len(CAPITALS), description="how many questions")


def source_digest(config: SuiteConfig) -> str:
    return hashlib.sha256(json.dumps(CAPITALS, sort_keys=True).encode()).hexdigest()


def build(config: SuiteConfig, out: Path) -> list[ReportTable]:
    assert isinstance(config, ToySuite)
    tool = ToolSpec(
        name="lookup_capital",
        description="The capital city of a country.",
        parameters={
            "type": "object",
            "properties": {"country": {"type": "string", "description": "the country's English name"}},
            "required": ["country"],
        },
        binding={"capitals": CAPITALS},
    )
    scenarios = [
        Scenario(
            id=f"toy-{country.lower()}",
            family=NAME,
            task=f"What is the capital of {country}?",
            tools=[tool.name],
            gold=Gold(
                answer=[{"capital": capital}],
                plans=[[PlannedCall(tool=tool.name, arguments={"country": country})]],
            ),
        )
        for country, capital in list(CAPITALS.items())[: config.countries]
    ]
    write_suite(out, name=NAME, family=NAME, version="1", tools=[tool], scenarios=scenarios, databases={})
    return [ReportTable(title="toy build", columns=["questions"], rows=[[str(len(scenarios))]])]


class CapitalToolBox(ToolBox):
    """Not SQLite: the table lives in the tool's binding, and episodes share no state."""

    def new_state(self) -> dict[str, Any]:
        return {}

    def execute(self, state: dict[str, Any], spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        marker = os.environ.get(BROKEN)
        if marker and Path(marker).exists():
            raise RuntimeError("the toy backend is down")
        time.sleep(float(os.environ.get(SLOW, "0")))
        capital = spec.binding["capitals"].get(arguments["country"])
        if capital is None:
            raise ToolExecutionError(f"no capital known for {arguments['country']!r}")
        return [{"capital": capital}]


def toolbox(specs: list[ToolSpec], databases: Mapping[str, Path]) -> CapitalToolBox:
    return CapitalToolBox(specs)
