"""What the paper's protocol refuses before a FAIL-TaLMs sweep runs, each in one line naming its field: No-tools
without Perfect (its answer is scored against the same model's Perfect answer), Ask-and-Help on the released files
without a model to play the person; and ``queries: FIRST-LAST``, the released query ids a suite runs (the subset the
published cells come from), with its bad values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import invoke, one_line
from helpers.paths import FAIL_TALMS

from undertow.cluster.config import load_config
from undertow.cluster.plan import plan_sweep
from undertow.env_core.errors import ConfigError
from undertow.env_core.suites import load_ref, suite_ref

URL = "http://127.0.0.2:9/v1"  # never called: planning only checks that the helpers are named
# the released query file of each setting (../shared/data/fail-talms/README.md)
FILES = {
    "perfect": "all_Original_queries.json",
    "underspecified": "all_Underspecified_queries.json",
    "replaceable": "all_Replaceable_queries.json",
    "non_replaceable": "all_Non-replaceable_queries.json",
    "no_tools": "all_No-tools_queries.json",
}
AAH = {"name": "underspecified_aah", "condition": "underspecified", "awareness": "info", "ask_human": True}


def released(queries: Any = "1-3") -> dict[str, Any]:
    if not FAIL_TALMS.is_dir():
        pytest.fail(f"{FAIL_TALMS} is missing: the tests need ../shared beside the repository")
    return {
        "family": "failtalms",
        "released": str(FAIL_TALMS),
        "queries": queries,
        "emulator": {"url": URL, "name": "emulator"},
        "judge": {"url": URL, "name": "judge", "k": 3},
    }


def write(tmp_path: Path, suite: Any, settings: list[Any], models: list[str] | None = None) -> Path:
    config = {
        "name": "plan",
        "models": models or ["oracle"],
        "suites": [suite],
        "settings": settings,
        "run": {"store": str(tmp_path / "runs")},
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def refused(path: Path) -> str:
    """``undertow validate PATH``'s one line of error output (exit status 2)."""
    code, out, err = invoke("validate", str(path))
    assert code == 2, out + err
    return " ".join(one_line(err).split())


# ---------------------------------------------------------------------------------------------------------------
# No-tools needs Perfect


@pytest.mark.parametrize(
    "settings",
    [
        ["no_tools"],
        ["underspecified", "no_tools"],
        # Perfect with someone to ask is Table 2's, not the Perfect episode a No-tools answer is compared with
        [{"name": "perfect_aah", "awareness": "info", "ask_human": True, "scenario_faults": False}, "no_tools"],
    ],
)
def test_no_tools_without_perfect_is_refused_naming_settings(tmp_path: Path, settings: list[Any]) -> None:
    path = write(tmp_path, {"family": "failtalms", "limit": 2}, settings)
    with pytest.raises(ConfigError) as found:
        plan_sweep(load_config(path))
    assert found.value.field == "settings" and found.value.hint == "add perfect to settings"
    assert refused(path) == (
        f"error: {path}: settings: setting 'no_tools' (no_tools) is scored against the same model's Perfect "
        "episode of each query, and no setting of the sweep is Perfect (suite 'failtalms-offline'); add perfect to "
        "settings"
    )


def test_no_tools_beside_perfect_plans_a_perfect_episode_for_every_no_tools_one(tmp_path: Path) -> None:
    path = write(tmp_path, {"family": "failtalms", "limit": 3}, ["no_tools", "perfect"], ["oracle", "naive"])
    manifest = plan_sweep(load_config(path))
    planned: dict[tuple[str, str], set[str]] = {}
    for shard in manifest.shards:
        key = (shard.model.name, shard.setting.name)
        planned.setdefault(key, set()).update(e.scenario_id for e in shard.episodes)
    for model in ("oracle", "naive"):
        assert len(planned[(model, "no_tools")]) == 3
        assert planned[(model, "no_tools")] == planned[(model, "perfect")]


def test_other_families_may_run_no_tools_alone(tmp_path: Path) -> None:
    manifest = plan_sweep(load_config(write(tmp_path, {"family": "smoke", "limit": 2}, ["no_tools"])))
    assert {s.setting.name for s in manifest.shards} == {"no_tools"}


# ---------------------------------------------------------------------------------------------------------------
# Ask-and-Help on the released files needs a person


def test_ask_and_help_on_the_released_files_without_a_person_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, released(), ["perfect", AAH])
    with pytest.raises(ConfigError) as found:
        plan_sweep(load_config(path))
    assert found.value.field == "settings[1].human_model"
    assert refused(path) == (
        f"error: {path}: settings[1].human_model: setting 'underspecified_aah' offers Ask-and-Help on the released "
        "files of suite 'failtalms-released', and no model plays the person (the scripted one knows nothing of their "
        "queries and would decline every question); add human_model: {url: http://HOST:PORT/v1, name: MODEL}"
    )


def test_ask_and_help_with_a_person_plans_and_the_offline_library_needs_none(tmp_path: Path) -> None:
    person = {**AAH, "human_model": {"url": URL, "name": "person"}}
    manifest = plan_sweep(load_config(write(tmp_path, released(), ["perfect", person])))
    assert {s.setting.name for s in manifest.shards} == {"perfect", "underspecified_aah"}
    # the offline library's masks give the scripted person the value the request left out
    offline = plan_sweep(load_config(write(tmp_path, {"family": "failtalms", "limit": 40}, [AAH])))
    assert {s.setting.name for s in offline.shards} == {"underspecified_aah"}


# ---------------------------------------------------------------------------------------------------------------
# queries: FIRST-LAST


def _ids_in_file(name: str, first: int, last: int) -> int:
    """Entries of a released query file whose query_id is within [first, last], read from the file itself."""
    entries = json.loads((FAIL_TALMS / name).read_text())
    return sum(first <= int(entry["query_id"]) <= last for entry in entries)


def test_queries_select_the_same_id_range_in_every_file(tmp_path: Path) -> None:
    suite = load_ref(suite_ref(released("2-4")))
    per_setting: dict[str, int] = {}
    for scenario in suite.scenarios:
        assert 2 <= scenario.metadata["query_id"] <= 4
        per_setting[scenario.metadata["setting"]] = per_setting.get(scenario.metadata["setting"], 0) + 1
    assert per_setting == {setting: _ids_in_file(name, 2, 4) for setting, name in FILES.items()}
    assert all(n >= 3 for n in per_setting.values())  # every file numbers its queries from 1 on
    # the range is how the suite is used, not what is built: one build serves every range
    assert suite_ref(released("2-4")).build_fields() == suite_ref(released("1-100")).build_fields()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1-", "suites[0].queries: '1-' is not a range of query ids; write FIRST-LAST, e.g. 1-100"),
        ("100-1", "suites[0].queries: '100-1' runs backwards (first 100 > last 1); write 1-100"),
        ("abc", "suites[0].queries: 'abc' is not a range of query ids; write FIRST-LAST, e.g. 1-100"),
    ],
)
def test_bad_query_ranges_are_refused_in_one_line_naming_the_field(tmp_path: Path, value: str, expected: str) -> None:
    path = write(tmp_path, released(value), ["perfect"])
    line = refused(path)
    assert line.startswith(f"error: {path}:") and line.endswith(expected)


def test_a_range_that_selects_no_query_is_refused_naming_the_field(tmp_path: Path) -> None:
    # the longest released file (Underspecified) has 599 queries numbered from 1: nothing is numbered 900 or more
    assert refused(write(tmp_path, released("900-990"), ["perfect"])) == (
        "error: queries: suite 'failtalms-released' has no query with an id in 900-990 (their ids run from 1 to 599)"
    )


def test_queries_on_the_offline_library_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, {"family": "failtalms", "queries": "1-100"}, ["perfect"])
    assert refused(path).endswith(
        "suites[0]: queries: selects query ids of the released files; set released: FOLDER, or remove it"
    )


def test_a_single_id_and_a_yaml_number_are_ranges_of_one() -> None:
    assert suite_ref(released(7)).queries == "7-7"  # type: ignore[attr-defined]
    assert suite_ref(released(" 3 - 9 ")).queries == "3-9"  # type: ignore[attr-defined]
