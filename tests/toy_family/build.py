"""The toy family's suite: one question per country of the data file, answered by the one lookup tool. With the
family name, ``source_digest``, ``build`` and the tools' ``toolbox`` it is the family's build side
(a ``SuiteBuilder``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from toy_family.tools import SPECS, capitals
from toy_family.tools import toolbox as toolbox
from undertow.env_core.content import code_and_data_digest
from undertow.env_core.families import ReportTable, SuiteConfig
from undertow.env_core.model import Gold, PlannedCall, Scenario
from undertow.env_core.suites import write_suite

FAMILY = "toy"
VERSION = "2"


class ToySuite(SuiteConfig):
    family: Literal["toy"] = "toy"
    countries: int = Field(default=4, ge=1, le=5, description="how many questions")


def source_digest(config: SuiteConfig) -> str:
    """The code and the data files of the package: editing either rebuilds the suite."""
    return code_and_data_digest(Path(__file__).parent, VERSION)


def build(config: SuiteConfig, out: Path) -> list[ReportTable]:
    assert isinstance(config, ToySuite)
    (tool,) = SPECS
    scenarios = [
        Scenario(
            id=f"toy-{country.lower()}",
            family=FAMILY,
            task=f"What is the capital of {country}?",
            tools=[tool.name],
            gold=Gold(
                answer=[{"capital": capital}],
                plans=[[PlannedCall(tool=tool.name, arguments={"country": country})]],
            ),
        )
        for country, capital in list(capitals().items())[: config.countries]
    ]
    write_suite(out, name=FAMILY, family=FAMILY, version=VERSION, tools=SPECS, scenarios=scenarios, databases={})
    return [ReportTable(title="toy build", columns=["questions"], rows=[[str(len(scenarios))]])]
