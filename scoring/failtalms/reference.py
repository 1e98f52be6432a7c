"""The authors' released FAIL-TaLMs outputs as a reference run (``Family.import_results``, for ``undertow import
failtalms PATH --results OUTPUTS``): each entry an episode with the details a live episode records
(:class:`~undertow.scoring.failtalms.FailTalmsDetails`), so that one implementation of the metrics
(:mod:`.metrics`) scores both.

The reading of the files is :mod:`undertow.env_core.failtalms.outputs`; here the entries become episodes: one shard
per model × setting (the Ask-and-Help settings named ``<setting>_aah``), No-tools joined to the same model's Perfect
entry of the same query id (as the authors join them), and an entry that links to no scenario kept under a scenario
id of its own (every rate divides by all entries of its cell).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from undertow.env_core.errors import ConfigError
from undertow.env_core.failtalms import build, released
from undertow.env_core.failtalms.outputs import OutputEntry, read_outputs
from undertow.env_core.families import SuiteConfig
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.reference import ImportedEpisode, ImportedResults, ImportedShard

# the headings of what the import lists
MALFORMED = "malformed entries (skipped)"
REPEATED = "repeated query ids (the first entry kept)"
UNLINKED = "entries that link to no scenario (kept)"


def entry_details(entry: OutputEntry, perfect: OutputEntry | None, details_model: type[BaseModel]) -> dict[str, Any]:
    """The details of one entry, checked against the family's details model; ``perfect``: the same model's Perfect
    entry of the same query (No-tools only)."""
    if entry.setting == "perfect":
        counted = entry.tool_awareness or entry.info_awareness
    elif entry.setting in ("replaceable", "non_replaceable"):
        counted = entry.tool_awareness
    else:
        counted = entry.info_awareness
    no_tools = entry.setting == "no_tools"
    details = {
        "passed": entry.passed,
        "emulated_calls": 0,
        "awareness": counted,
        "asked_human": entry.asked,
        "skipped": entry.skipped,
        "category": None,
        "tool_awareness": entry.tool_awareness,
        "info_awareness": entry.info_awareness,
        "win_rate": entry.win_rate if no_tools else None,
        "perfect_passed": perfect.passed if no_tools and perfect is not None else None,
        "perfect_scenario": perfect.scenario_id if no_tools and perfect is not None else None,
        "imported": True,
        "imported_from": entry.where,
    }
    return details_model.model_validate(details).model_dump(mode="json")


def import_results(config: SuiteConfig, results: Path, details_model: type[BaseModel]) -> ImportedResults:
    """The outputs under ``results`` as episodes of the suite ``config`` imports (its ``released`` folder)."""
    assert isinstance(config, build.FailTalmsSuite)
    if not config.released:
        raise ConfigError("--results: the outputs link to the released files; name their folder", field="released")
    folder = Path(config.released)
    found = released.read_released(folder)
    read = read_outputs(results, found.scenarios)
    if not read.entries:
        reasons = "; ".join(f"{p.item}: {p.reason}" for p in read.problems[:3])
        raise ConfigError(f"{results}: no output entry could be read ({reasons or 'no files'})", field="--results")
    perfect = {(e.model, e.query_id): e for e in read.entries if e.setting == "perfect" and not e.helped}
    shards: dict[tuple[str, str], ImportedShard] = {}
    for entry in read.entries:
        key = (entry.model, entry.run_setting)
        if key not in shards:
            preset = PRESET_SETTINGS[entry.setting]
            setting = preset.model_copy(update={"name": entry.run_setting, "ask_human": entry.helped})
            shards[key] = ImportedShard(entry.model, setting)
        scenario_id = entry.scenario_id or f"{released.FAMILY}/{released.SOURCE}/{entry.setting}/unlinked/{entry.where}"
        # solved where the paper's pass rate counts it (No-tools: passed, and tied or beat the Perfect answer)
        solved = entry.passed and (entry.setting != "no_tools" or (entry.win_rate or 0) >= 1)
        details = entry_details(entry, perfect.get((entry.model, entry.query_id)), details_model)
        shards[key].episodes.append(ImportedEpisode(f"{entry.query_id:04d}", scenario_id, solved, details))
    return ImportedResults(
        shards=list(shards.values()),
        listed={
            MALFORMED: [f"{p.item}: {p.reason}" for p in read.problems],
            REPEATED: read.duplicates,
            UNLINKED: read.unlinked,
        },
        source={
            "what": "the FAIL-TaLMs authors' released per-query outputs (their models' answers and judge's verdicts)",
            "results": str(results.resolve()),
            "released": str(folder.resolve()),
        },
        n_scenarios=len(found.scenarios),
        content_hash=found.digest,
    )
