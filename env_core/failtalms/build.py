"""Build the ``failtalms`` suite: the offline tool library and its scenarios (FAIL-TaLMs' perfect requests, each with
hand-written under-specified variants and its tools flagged human-replaceable or not).

FAIL-TaLMs' settings are not separate files here: they are shared settings (``undertow.env_core.faults``: ``perfect``,
``underspecified``, ``replaceable``, ``non_replaceable``, ``no_tools``, each with ``ask_human`` for Ask-and-Help),
transformations that apply to any family's scenarios; this library gives them what they need (masks, flags).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from undertow.env_core.content import DATA, code_and_data_digest
from undertow.env_core.errors import ConfigError
from undertow.env_core.failtalms import released
from undertow.env_core.failtalms.library import REQUESTS, base_scenarios
from undertow.env_core.failtalms.tools import ALL_TOOLS, FailTalmsToolBox
from undertow.env_core.families import ReportTable, SuiteConfig, missing_path, resolve_path
from undertow.env_core.model import ToolSpec
from undertow.env_core.suites import write_suite

FAMILY = "failtalms"
SUITE_VERSION = "1"
PACKAGE = (
    Path(__file__).resolve().parent
)  # its code and data/ (the requests, the tools' seed tables) are what a build reads


class FailTalmsSuite(SuiteConfig):
    """The offline FAIL-TaLMs library (deterministic local tools over seeded tables, with gold answers), or with
    ``released`` the paper's released files: their tools emulated by the suite's ``emulator``, their episodes graded
    by its ``judge``."""

    family: Literal["failtalms"] = FAMILY  # type: ignore[assignment]
    released: str | None = Field(
        default=None,
        description="a folder of the released FAIL-TaLMs files (the five query files and tool_specs/) to import "
        "instead of the offline library",
    )

    _resolve_released = field_validator("released")(resolve_path)

    def source_name(self) -> str:
        return "failtalms-released" if self.released else "failtalms-offline"


def source_digest(config: SuiteConfig) -> str:
    """The library is code and data: the package's code and data files are what the build depends on (with the
    released files, when imported)."""
    assert isinstance(config, FailTalmsSuite)
    digest = code_and_data_digest(PACKAGE, SUITE_VERSION)
    if not config.released:
        return digest
    imported = released.source_digest(_released_folder(config.released))
    return hashlib.sha256(f"{digest}\n{imported}".encode()).hexdigest()


def _released_folder(path: str) -> Path:
    folder = Path(path)
    if not folder.is_dir():
        raise ConfigError(missing_path(folder), field="released")
    return folder


def build(config: SuiteConfig, out: Path) -> list[ReportTable]:
    """Write the suite folder (the offline library, or the imported released files); returns what it holds."""
    assert isinstance(config, FailTalmsSuite)
    if config.released:
        return build_released(_released_folder(config.released), out)
    scenarios = base_scenarios(PACKAGE / DATA / REQUESTS)
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


def build_released(folder: Path, out: Path) -> list[ReportTable]:
    """Import the released files into a suite folder: every well-formed query a scenario already in its setting's
    condition, every tool emulated; returns the counts per setting and what was skipped (never fatal)."""
    found = released.read_released(folder)
    if not found.scenarios:
        reasons = "; ".join(f"{p.item}: {p.reason}" for p in found.problems[:3])
        raise ConfigError(f"{folder}: no query could be read from the released files ({reasons})", field="released")
    write_suite(
        out,
        name=f"{FAMILY}:released",
        family=FAMILY,
        version=SUITE_VERSION,
        tools=found.tools,
        scenarios=found.scenarios,
        databases={},
    )
    counts = ReportTable(
        title=f"{FAMILY} import: {folder}",
        columns=["setting", "file", "scenarios", "condition", "linked to their original"],
        right=[False, False, True, False, True],
    )
    linked = Counter(s.metadata["setting"] for s in found.scenarios if "intended" in s.metadata)
    for setting, (filename, condition) in released.SETTINGS.items():
        link = str(linked[setting]) if setting != "perfect" else ""
        counts.rows.append([setting, filename, str(found.counts[setting]), condition, link])
    counts.rows.append(["all", "", str(sum(found.counts.values())), "", str(sum(linked.values()))])
    counts.sections = [len(counts.rows) - 1]
    counts.note = (
        f"{len(found.tools)} tools, every one emulated: a sweep over this folder needs emulator {{url, name}} (the "
        "model that answers them from their documentation) and judge {url, name, k} (there are no gold answers). "
        "Each scenario runs under the settings of its own condition only. Linked: the perfect query it was derived "
        "from was found (same text, or the most alike with the same tools), which tells the person played by a model "
        "what the user meant and which tools were taken away."
    )
    tables = [counts]
    if found.problems:
        by_kind = Counter(p.kind for p in found.problems)
        skipped = ReportTable(
            title=f"{FAMILY} import: {len(found.problems)} entries skipped",
            columns=["reason", "entries", "first"],
            right=[False, True, False],
        )
        for kind, n in by_kind.most_common():
            first = next(p for p in found.problems if p.kind == kind)
            skipped.rows.append([kind, str(n), f"{first.item}: {first.reason}"])
        tables.append(skipped)
    if found.conflicts:
        tables.append(
            ReportTable(
                title=f"{FAMILY} import: {len(found.conflicts)} functions specified twice, differently (first kept; "
                f"{min(20, len(found.conflicts))} shown)",
                columns=["tool", "api", "kept", "other", "differs in"],
                rows=[[c.tool_name, c.api_name, c.kept, c.other, ", ".join(c.fields)] for c in found.conflicts[:20]],
            )
        )
    return tables
