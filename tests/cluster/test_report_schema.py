"""The published JSON Schemas of `undertow report --format json` and `undertow compare --format json`: the committed
files are what the pydantic models generate, and what the commands print for real runs validates against them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.cli import invoke
from helpers.paths import SCHEMAS
from helpers.runs import stored_run
from helpers.spider import make_spider

from undertow.scoring.analysis import SCHEMA_VERSION, json_schemas, main, schema_text

REGENERATE = "regenerate with: python -m undertow.scoring.analysis --write-schemas docs/schema"


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def cli(*args: str) -> Any:
    code, out, err = invoke(*args)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The built-in policies on the smoke suite and on a sqlfuncs suite compiled from a small Spider folder."""
    root = tmp_path_factory.mktemp("runs")
    spider = make_spider(tmp_path_factory.mktemp("spider") / "spider")
    config = {
        "name": "schema",
        "models": [{"name": "oracle", "size_b": 70}, {"name": "naive", "size_b": 7}],
        "suites": [{"family": "smoke", "limit": 6}, {"family": "sqlfuncs", "spider": str(spider), "seed": 5}],
        "settings": ["clean", "first_tried"],
        "run": {"shard_size": 10},
    }
    return root, stored_run(root, config).run_id


@pytest.mark.parametrize("name", ["report.json", "compare.json"])
def test_the_committed_schemas_are_what_the_models_generate(name: str) -> None:
    generated = json_schemas()
    assert set(generated) == {"report.json", "compare.json"}
    assert (SCHEMAS / name).read_text(encoding="utf-8") == schema_text(generated[name]), REGENERATE
    jsonschema.Draft202012Validator.check_schema(generated[name])


def test_the_schemas_are_written_by_the_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["--write-schemas", str(tmp_path / "schema")])
    assert "wrote" in capsys.readouterr().out
    for name in ("report.json", "compare.json"):
        assert (tmp_path / "schema" / name).read_text(encoding="utf-8") == (SCHEMAS / name).read_text(encoding="utf-8")


def test_report_json_validates(run: tuple[Path, str]) -> None:
    root, run_id = run
    data = cli("report", run_id, "--store", str(root), "--format", "json")
    validator("report.json").validate(data)
    assert data["schema_version"] == SCHEMA_VERSION and list(data) == ["schema_version", "rows"]
    suites = {row["suite"] for row in data["rows"]}
    assert suites == {"smoke", "spider"} and len(data["rows"]) == 8
    oracle = next(r for r in data["rows"] if (r["model"], r["suite"], r["setting"]) == ("oracle", "smoke", "clean"))
    assert oracle["n"] == 6 and oracle["accuracy"] == 1.0 and oracle["outcomes"]["scored"] == 6


def test_report_families_json_validates_against_the_family_model(run: tuple[Path, str]) -> None:
    root, run_id = run
    data = cli("report", run_id, "--store", str(root), "--format", "json", "--families")
    schema = validator("report.json")
    schema.validate(data)
    assert data["schema_version"] == SCHEMA_VERSION and set(data["families"]) == {"spider"}  # smoke has none
    summary = data["families"]["spider"]
    assert summary["family"] == "sqlfuncs" and set(summary["models"]) == {"oracle", "naive"}
    # the family's own fields are checked, not just let through: a broken sqlfuncs summary is refused ...
    broken = copy.deepcopy(data)
    del broken["families"]["spider"]["models"]["naive"]["decrease"]
    assert not schema.is_valid(broken)
    # ... while a family this schema does not know passes with its name alone
    other = copy.deepcopy(data)
    other["families"]["elsewhere"] = {"family": "third_party", "anything": [1, 2]}
    schema.validate(other)
    assert not schema.is_valid({**data, "schema_version": 2})


def test_compare_json_validates(run: tuple[Path, str]) -> None:
    root, run_id = run
    data = cli("compare", run_id, "--store", str(root), "--format", "json")
    schema = validator("compare.json")
    schema.validate(data)
    assert data["schema_version"] == SCHEMA_VERSION and next(iter(data)) == "schema_version"
    assert data["suites"] == ["smoke", "spider"] and data["sizes"] == {"oracle": 70, "naive": 7}
    assert {(c["suite"], c["setting"]) for c in data["comparisons"]} == {
        (suite, setting) for suite in ("smoke", "spider") for setting in ("clean", "first_tried")
    }
    assert {(g["model"], g["suite"]) for g in data["gaps"]} == {
        (model, suite) for model in ("oracle", "naive") for suite in ("smoke", "spider")
    }
    assert data["families"]["spider"]["family"] == "sqlfuncs"
    assert not schema.is_valid({**data, "rows": [{"model": "x"}]})
