"""Reading the released FAIL-TaLMs files (../shared/data/fail-talms): the split sizes, tools that every scenario can
name, valid and unique tool names, parameter schemas, and malformed entries and files reported as problems while the
rest is still read."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import FAIL_TALMS

from undertow.env_core.failtalms.released import (
    SETTINGS,
    Released,
    _json_type,
    _tool_names,
    read_released,
    source_digest,
)
from undertow.env_core.model import Scenario

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
EXPECTED = {"perfect": 575, "underspecified": 599, "replaceable": 204, "non_replaceable": 297, "no_tools": 575}


@pytest.fixture(scope="module")
def released() -> Released:
    if not FAIL_TALMS.is_dir():
        pytest.fail(f"{FAIL_TALMS} is missing: the tests need ../shared beside the repository")
    return read_released(FAIL_TALMS)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A private copy of the released folder, to break."""
    if not FAIL_TALMS.is_dir():
        pytest.fail(f"{FAIL_TALMS} is missing: the tests need ../shared beside the repository")
    folder = tmp_path / "fail-talms"
    shutil.copytree(FAIL_TALMS, folder)
    return folder


def _edit(path: Path, change: Any) -> None:
    entries = json.loads(path.read_text())
    change(entries)
    path.write_text(json.dumps(entries))


# ---------------------------------------------------------------------------------------------------------------
# The released data


def test_split_sizes_and_no_problems(released: Released) -> None:
    assert released.counts == EXPECTED
    assert released.problems == []
    assert len(released.scenarios) == sum(EXPECTED.values())
    by_setting: dict[str, int] = {}
    for scenario in released.scenarios:
        by_setting[scenario.metadata["setting"]] = by_setting.get(scenario.metadata["setting"], 0) + 1
    assert by_setting == EXPECTED


def test_scenarios_are_well_formed(released: Released) -> None:
    ids = [s.id for s in released.scenarios]
    assert len(set(ids)) == len(ids)
    first = released.scenarios[0]
    assert first.id == "failtalms/released/perfect/0001"
    assert first.task.startswith("Could you list all the cryptocurrency exchanges")
    assert first.tools == ["coinlore_get_all_exchanges", "coinmap_get_atm_operators"]
    for scenario in released.scenarios:
        setting = scenario.metadata["setting"]
        assert scenario.family == "failtalms"
        assert scenario.id == f"failtalms/released/{setting}/{scenario.metadata['query_id']:04d}"
        assert scenario.metadata["source"] == "released" and scenario.metadata["emulated"] is True
        assert scenario.gold.answer is None and scenario.gold.plans == []
        assert scenario.task == scenario.task.strip() and scenario.task
    # every scenario round-trips through JSON
    assert Scenario.model_validate_json(first.model_dump_json()) == first


def test_every_tool_exists_and_no_tools_lists_none(released: Released) -> None:
    names = {tool.name for tool in released.tools}
    for scenario in released.scenarios:
        assert set(scenario.tools) <= names, scenario.id
        if scenario.metadata["setting"] == "no_tools":
            assert scenario.tools == []
        else:
            assert scenario.tools, scenario.id
            assert scenario.metadata["categories"], scenario.id
    # the unavailable-tool splits provide one tool (a few two): the unavailable one is left out
    sizes = {len(s.tools) for s in released.scenarios if s.metadata["setting"] == "replaceable"}
    assert sizes == {1}
    # a no_tools query repeats a perfect one: it carries that query's categories
    no_tools = [s for s in released.scenarios if s.metadata["setting"] == "no_tools"]
    assert sum(bool(s.metadata["categories"]) for s in no_tools) >= 570


def test_tool_names_valid_unique_and_bound(released: Released) -> None:
    names = [tool.name for tool in released.tools]
    assert len(set(names)) == len(names)
    assert all(NAME.match(name) for name in names)
    keys = [(t.binding["tool_name"], t.binding["api_name"]) for t in released.tools]
    assert len(set(keys)) == len(keys)
    assert len(released.tools) >= 858  # every tool_specs endpoint, and those only the queries name
    for tool in released.tools:
        assert tool.binding["kind"] == "emulated"
        assert tool.binding["category"]
        schema = tool.parameters
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])


def test_parameter_schemas(released: Released) -> None:
    dexes = released.tool("geckoterminal_get_supported_dexes")
    assert dexes.description == "Get list of supported dexes on a network."
    assert dexes.parameters["required"] == ["network"]
    network = dexes.parameters["properties"]["network"]
    assert network["type"] == "string" and "blockchain network" in network["description"]
    assert dexes.parameters["properties"]["page"] == {
        "type": "integer",
        "description": "Page of results to retrieve.",
        "default": "1",
    }
    assert dexes.binding["template_response"] == {"data": [{"id": "string", "attributes": {"name": "string"}}]}
    assert dexes.binding["method"] == "GET"
    # a tool known only from tool_specs, whose parameters are bare names (spacex)
    capsules = released.tool("spacex_query_capsules")
    assert capsules.parameters["required"] == ["query", "options"]
    assert capsules.binding["category"] == "Science" and capsules.binding["method"] == "POST"


def test_json_types() -> None:
    assert _json_type("STRING") == {"type": "string"}
    assert _json_type("int") == {"type": "integer"}
    assert _json_type("FLOAT") == {"type": "number"}
    assert _json_type("BOOLEAN") == {"type": "boolean"}
    assert _json_type("DICT") == {"type": "object"}
    assert _json_type("LIST") == {"type": "array"}
    assert _json_type("LIST[INTEGER]") == {"type": "array", "items": {"type": "integer"}}
    assert _json_type("LIST OF STRINGS") == {"type": "array", "items": {"type": "string"}}
    assert _json_type("STRING or LIST of STRINGS") == {
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
    }
    assert _json_type("GEOMETRY") == {} and _json_type(None) == {}


def test_conflicts_keep_the_first(released: Released) -> None:
    # the release words some functions differently from query to query: the first wording is kept and counted
    assert released.conflicts
    for conflict in released.conflicts:
        assert conflict.kept != conflict.other and conflict.fields
    kucoin = released.tool("kucoin_get_ticker")
    assert kucoin.description == "Get Level 1 Market Data for a specific trading pair."


def test_tool_names_sanitized_hashed_when_needed() -> None:
    long_api = "get_" + "x" * 80
    names = _tool_names([("a b", "c.d"), ("a_b", "c_d"), ("my.tool", long_api), ("9lives", "get"), ("é", "ü")])
    assert len(set(names.values())) == 5
    assert all(NAME.match(name) for name in names.values())
    assert names[("9lives", "get")] == "t_9lives_get"
    assert names[("a b", "c.d")] != names[("a_b", "c_d")]  # both would be a_b_c_d: each gets a hash
    assert all(names[key].startswith("a_b_c_d_") for key in [("a b", "c.d"), ("a_b", "c_d")])
    assert len(names[("my.tool", long_api)]) <= 64 and names[("my.tool", long_api)].startswith("my_tool_get_x")
    assert names == _tool_names(list(reversed(list(names))))  # independent of order


def test_source_digest(copy: Path) -> None:
    digest = source_digest(copy)
    assert digest == source_digest(FAIL_TALMS) and re.fullmatch(r"[0-9a-f]{64}", digest)
    (copy / "README.md").write_text("not data")
    assert source_digest(copy) == digest
    spec = next((copy / "tool_specs").glob("*/*.json"))
    spec.write_bytes(spec.read_bytes() + b"\n")
    assert source_digest(copy) != digest


# ---------------------------------------------------------------------------------------------------------------
# Malformed input


def test_malformed_entries_are_problems(copy: Path) -> None:
    def original(entries: list[Any]) -> None:
        entries[3] = "just a string"
        del entries[5]["query"]
        entries[7]["api_list"][0].pop("api_name")
        entries[9]["api_list"] = {"not": "a list"}
        entries[11]["api_list"][0]["required_parameters"] = [{"type": "STRING"}]
        entries[13]["query_id"] = "thirteen"

    _edit(copy / "all_Original_queries.json", original)
    (copy / "all_Replaceable_queries.json").unlink()
    (copy / "all_Non-replaceable_queries.json").write_text("{not json")
    (copy / "tool_specs" / "Art" / "dogs.json").write_text("[1, 2]")
    result = read_released(copy)

    found = {(p.item, p.kind) for p in result.problems}
    assert found == {
        ("all_Original_queries.json[3]", "not an object"),
        ("all_Original_queries.json[5]", "no query text"),
        ("all_Original_queries.json[7]", "api without api_name"),
        ("all_Original_queries.json[9]", "api_list not a list"),
        ("all_Original_queries.json[11]", "parameter without a name"),
        ("all_Original_queries.json[13]", "bad query_id"),
        ("all_Replaceable_queries.json", "missing file"),
        ("all_Non-replaceable_queries.json", "unreadable file"),
        ("tool_specs/Art/dogs.json", "unreadable file"),
    }
    reasons = {p.item: p.reason for p in result.problems}
    assert "str" in reasons["all_Original_queries.json[3]"]
    assert (
        "api_list[0]" in reasons["all_Original_queries.json[7]"]
        and "api_name" in reasons["all_Original_queries.json[7]"]
    )
    assert "required_parameters[0]" in reasons["all_Original_queries.json[11]"]
    assert "not found" in reasons["all_Replaceable_queries.json"]
    # the rest is still read
    assert result.counts == {**EXPECTED, "perfect": 575 - 6, "replaceable": 0, "non_replaceable": 0}
    indexes = {s.metadata["index"] for s in result.scenarios if s.metadata["setting"] == "perfect"}
    assert {3, 5, 7, 9, 11, 13}.isdisjoint(indexes) and {0, 1, 2, 4, 6, 8} <= indexes
    names = {tool.name for tool in result.tools}
    assert all(set(s.tools) <= names for s in result.scenarios)


def test_bad_spec_endpoint_and_missing_specs_folder(copy: Path) -> None:
    path = copy / "tool_specs" / "Science" / "spacex.json"
    spec = json.loads(path.read_text())
    spec["api_list"][1].pop("name")
    spec["api_list"][2] = 42
    path.write_text(json.dumps(spec))
    result = read_released(copy)
    assert {(p.item, p.kind) for p in result.problems} == {
        ("tool_specs/Science/spacex.json[1]", "api without api_name"),
        ("tool_specs/Science/spacex.json[2]", "api not an object"),
    }
    assert "spacex_get_all_capsules" in {tool.name for tool in result.tools}

    shutil.rmtree(copy / "tool_specs")
    result = read_released(copy)
    assert [(p.item, p.kind) for p in result.problems] == [("tool_specs", "missing folder")]
    assert result.counts == EXPECTED  # the queries carry their own tool descriptions


def test_repeated_query_id_kept_with_a_suffix(copy: Path) -> None:
    def repeat(entries: list[Any]) -> None:
        entries[1]["query_id"] = entries[0]["query_id"]
        entries[2]["query_id"] = entries[0]["query_id"]

    _edit(copy / SETTINGS["underspecified"].file, repeat)
    result = read_released(copy)
    assert result.problems == [] and result.counts == EXPECTED
    ids = [s.id for s in result.scenarios if s.metadata["setting"] == "underspecified"][:3]
    assert ids == [
        "failtalms/released/underspecified/0001",
        "failtalms/released/underspecified/0001-2",
        "failtalms/released/underspecified/0001-3",
    ]
    assert read_released(copy).scenarios == result.scenarios  # deterministic


def test_differing_parameters_are_a_conflict(copy: Path) -> None:
    def alter(entries: list[Any]) -> None:
        api = entries[0]["api_list"][0]
        api["required_parameters"] = [{"name": "extra", "type": "STRING"}]

    _edit(copy / SETTINGS["underspecified"].file, alter)
    result = read_released(copy)
    first = json.loads((copy / SETTINGS["underspecified"].file).read_text())[0]["api_list"][0]
    key = (first["tool_name"], first["api_name"])
    conflict = next(c for c in result.conflicts if (c.tool_name, c.api_name) == key and "parameters" in c.fields)
    assert conflict.other == "all_Underspecified_queries.json[0]"
    kept = next(t for t in result.tools if (t.binding["tool_name"], t.binding["api_name"]) == key)
    assert "extra" not in kept.parameters["properties"]
