"""Build the ``failtalms`` suite: the offline tool library and its scenarios (FAIL-TaLMs' perfect requests, each with
hand-written under-specified variants and its tools flagged human-replaceable or not).

FAIL-TaLMs' settings are not separate files here: they are shared settings (``env_core.faults``: ``perfect``,
``underspecified``, ``replaceable``, ``non_replaceable``, ``no_tools``, each with ``ask_human`` for Ask-and-Help),
transformations that apply to any family's scenarios; this library gives them what they need (masks, flags).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from env_core.failtalms.library import base_scenarios
from env_core.failtalms.tools import ALL_TOOLS, FailTalmsToolBox
from env_core.families import ReportTable, SuiteConfig
from env_core.model import ToolSpec
from env_core.suites import write_suite

FAMILY = "failtalms"
SUITE_VERSION = "1"


class FailTalmsSuite(SuiteConfig):
    """The offline FAIL-TaLMs library: deterministic local tools over seeded tables, with gold answers."""

    family: Literal["failtalms"] = FAMILY  # type: ignore[assignment]

    def source_name(self) -> str:
        return "failtalms-offline"


def source_digest(config: SuiteConfig) -> str:
    """The library is code: its source is what the build depends on."""
    digest = hashlib.sha256(SUITE_VERSION.encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def build(config: SuiteConfig, out: Path) -> list[ReportTable]:
    """Write the library's suite folder; returns what it holds, by category."""
    scenarios = base_scenarios()
    write_suite(
        out,
        name=f"{FAMILY}:offline",
        family=FAMILY,
        version=SUITE_VERSION,
        tools=list(ALL_TOOLS),
        scenarios=scenarios,
        databases={},
    )
    tools = Counter(str(spec.binding.get("category")) for spec in ALL_TOOLS)
    by_category = Counter(str(s.metadata.get("category")) for s in scenarios)
    masked = Counter(str(s.metadata.get("category")) for s in scenarios if s.masks)

    def flagged(wanted: bool) -> Counter[str]:
        return Counter(
            str(s.metadata.get("category")) for s in scenarios if any(v is wanted for v in s.replaceable.values())
        )

    replaceable, hard = flagged(True), flagged(False)
    table = ReportTable(
        title=f"{FAMILY} build: the offline library",
        columns=["category", "tools", "scenarios", "with a mask", "a replaceable tool", "a non-replaceable tool"],
        right=[False, True, True, True, True, True],
    )
    for category in sorted(set(tools) | set(by_category)):
        table.rows.append(
            [
                category,
                str(tools[category]),
                str(by_category[category]),
                str(masked[category]),
                str(replaceable[category]),
                str(hard[category]),
            ]
        )
    table.rows.append(
        [
            "all",
            str(len(ALL_TOOLS)),
            str(len(scenarios)),
            str(sum(masked.values())),
            str(sum(replaceable.values())),
            str(sum(hard.values())),
        ]
    )
    table.sections = [len(table.rows) - 1]
    table.note = (
        "Each setting runs the scenarios it applies to: underspecified those with a mask, replaceable / "
        "non_replaceable those with a tool of that kind, perfect and no_tools all."
    )
    return [table]


def toolbox(specs: list[ToolSpec], databases: Mapping[str, Path]) -> FailTalmsToolBox:
    return FailTalmsToolBox(specs)
