"""Build the ``failtalms`` suite: the offline tool library and its scenarios (FAIL-TaLMs' perfect requests, each with
hand-written under-specified variants and its tools flagged human-replaceable or not).

FAIL-TaLMs' settings are not separate files here: they are shared settings (``undertow.env_core.faults``: ``perfect``,
``underspecified``, ``replaceable``, ``non_replaceable``, ``no_tools``, each with ``ask_human`` for Ask-and-Help),
transformations that apply to any family's scenarios; this library gives them what they need (masks, flags).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from undertow.env_core.content import DATA, code_and_data_digest
from undertow.env_core.errors import ConfigError
from undertow.env_core.failtalms import released
from undertow.env_core.failtalms.judge_config import FailTalmsJudge
from undertow.env_core.failtalms.library import REQUESTS, library_scenarios, library_table
from undertow.env_core.failtalms.tools import ALL_TOOLS, FailTalmsToolBox
from undertow.env_core.families import ReportTable, SuiteConfig, missing_path, resolve_path
from undertow.env_core.model import ToolSpec
from undertow.env_core.suites import Suite, write_suite

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

    judge: FailTalmsJudge | None = Field(
        default=None,
        description="the grader model, with the authors' protocol as its defaults: 3 votes at temperature 1.0, "
        "each re-asked up to 3 times, read as their code reads them (reader: robust for undertow's reader)",
    )
    queries: str | None = Field(
        default=None,
        description="with released: the query ids to run, one range for every file (1-100: each file's queries 1 "
        "to 100, the subset the paper's published cells come from); the files number their queries apart",
    )

    # which queries run is how the suite is used, not what is built
    USE_FIELDS: ClassVar[frozenset[str]] = SuiteConfig.USE_FIELDS | {"queries"}

    _resolve_released = field_validator("released")(resolve_path)

    @field_validator("queries", mode="before")
    @classmethod
    def _query_range(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):  # YAML reads `queries: 7` as a number
            value = str(value)
        if isinstance(value, str):
            first, last = query_range(value)
            return f"{first}-{last}"
        return value

    @model_validator(mode="after")
    def _queries_need_released(self) -> FailTalmsSuite:
        if self.queries is not None and not self.released:
            # the offline library's requests have no query ids: the range would select nothing, or mean nothing
            raise ValueError("queries: selects query ids of the released files; set released: FOLDER, or remove it")
        return self

    def source_name(self) -> str:
        return "failtalms-released" if self.released else "failtalms-offline"


_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def query_range(text: str) -> tuple[int, int]:
    """``1-100`` (or one id, ``7``) as the first and last query id it selects; a ValueError saying what is wrong
    otherwise (the config's ``queries`` field is named where it is reported)."""
    found = _RANGE.fullmatch(text.replace(" ", ""))
    if found is None:
        raise ValueError(f"'{text}' is not a range of query ids; write FIRST-LAST, e.g. 1-100")
    first, last = int(found[1]), int(found[2] if found[2] is not None else found[1])
    if first > last:
        raise ValueError(f"'{text}' runs backwards (first {first} > last {last}); write {last}-{first}")
    return first, last


def adapt(suite: Suite, config: SuiteConfig) -> Suite:
    """A loaded suite with the config's ``queries`` applied: the released scenarios whose query id (numbered per
    file) is in the range; the suite as it is without one."""
    queries = getattr(config, "queries", None)  # any config of the family that takes the field
    if not isinstance(queries, str):
        return suite
    first, last = query_range(queries)
    kept = [s for s in suite.scenarios if first <= int(s.metadata.get("query_id", -1)) <= last]
    if not kept:
        ids = [int(s.metadata["query_id"]) for s in suite.scenarios if "query_id" in s.metadata]
        found = f"their ids run from {min(ids)} to {max(ids)}" if ids else "this suite's scenarios have no query ids"
        raise ConfigError(
            f"suite '{config.label}' has no query with an id in {first}-{last} ({found})", field="queries"
        )
    return Suite(suite.name, suite.family, suite.version, suite.toolbox, kept, suite.skipped)


def is_perfect(setting: Any) -> bool:
    """FAIL-TaLMs' Perfect setting: the whole request, every tool, no one to ask."""
    return setting.condition == "none" and not setting.faults and not setting.ask_human


def plan_check(config: Any, index: int, suite: Suite) -> list[ConfigError]:
    """What the paper's protocol refuses in a sweep over this suite (``Family.plan_check``): a No-tools setting
    without Perfect (its answer is scored against the same model's Perfect answer to the same query), and
    Ask-and-Help on the released files without ``human_model`` (their queries carry no value the scripted person
    could give: it would decline every question)."""
    problems: list[ConfigError] = []
    settings = list(config.settings)
    no_tools = [s for s in settings if s.condition == "no_tools"]
    if no_tools and not any(is_perfect(s) for s in settings):
        problems.append(
            ConfigError(
                f"setting '{no_tools[0].name}' (no_tools) is scored against the same model's Perfect episode of each "
                f"query, and no setting of the sweep is Perfect (suite '{config.suites[index].label}')",
                field="settings",
                hint="add perfect to settings",
            )
        )
    if suite.name == f"{FAMILY}:released":
        for i, setting in enumerate(settings):
            if setting.ask_human and setting.human_model is None:
                problems.append(
                    ConfigError(
                        f"setting '{setting.name}' offers Ask-and-Help on the released files of suite "
                        f"'{config.suites[index].label}', and no model plays the person (the scripted one knows "
                        "nothing of their queries and would decline every question)",
                        field=f"settings[{i}].human_model",
                        hint="add human_model: {url: http://HOST:PORT/v1, name: MODEL}",
                    )
                )
    return problems


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
    scenarios = library_scenarios(PACKAGE / DATA / REQUESTS)
    write_suite(
        out,
        name=f"{FAMILY}:offline",
        family=FAMILY,
        version=SUITE_VERSION,
        tools=list(ALL_TOOLS),
        scenarios=scenarios,
        databases={},
    )
    return [library_table(scenarios)]


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
