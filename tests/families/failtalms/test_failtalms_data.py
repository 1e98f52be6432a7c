"""FAIL-TaLMs' content as data: the requests (``data/requests.jsonl``) and the tools' seed tables (``data/tables/``)
key the suite's build, so that editing one rebuilds the suite; a malformed line is an error naming the file, the
line and the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from undertow.env_core.content import DATA
from undertow.env_core.errors import DataError
from undertow.env_core.failtalms import build
from undertow.env_core.failtalms.finance import Stock
from undertow.env_core.failtalms.library import REQUESTS, read_requests
from undertow.env_core.failtalms.shared import TABLES, read_mapping, read_table
from undertow.env_core.suites import suite_folder, suite_ref

PACKAGE = build.PACKAGE


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the family's package (code and data) that the build reads instead of the installed one, and a
    cache of its own."""
    copy = tmp_path / "failtalms"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(build, "PACKAGE", copy)
    monkeypatch.setenv("UNDERTOW_CACHE", str(tmp_path / "cache"))
    return copy


def _rewrite(path: Path, number: int, change: Any) -> None:
    """Apply ``change`` to the record on line ``number`` (1-based) of a JSONL file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[number - 1])
    change(record)
    lines[number - 1] = json.dumps(record, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_data_files_are_in_the_package() -> None:
    assert (PACKAGE / DATA / REQUESTS).is_file()
    assert TABLES == PACKAGE / DATA / "tables" and len(list(TABLES.glob("*.json*"))) >= 20
    assert len(read_requests()) == 169


def test_editing_a_data_file_rebuilds_the_suite(package: Path) -> None:
    config = suite_ref({"family": "failtalms"})
    first = suite_folder(config)
    assert json.loads((first / "scenarios.jsonl").read_text().splitlines()[0])["id"] == "failtalms/science/01"

    # the same files: the same build, not made again
    assert suite_folder(config) == first

    # a request's text edited: another cache key, and the new build holds the edit
    _rewrite(package / DATA / REQUESTS, 1, lambda r: r.update(task=r["task"] + " Please be brief."))
    second = suite_folder(config)
    assert second != first and (first / "suite.json").is_file()
    task = json.loads((second / "scenarios.jsonl").read_text().splitlines()[0])["task"]
    assert task.endswith("Please be brief.")

    # a seed table edited: another cache key too
    digest = build.source_digest(config)
    _rewrite(package / DATA / "tables" / "stocks.jsonl", 1, lambda r: r.update(volume=r["volume"] + 1))
    assert build.source_digest(config) != digest
    assert suite_folder(config) not in (first, second)


def test_a_malformed_request_names_file_line_and_field(package: Path, tmp_path: Path) -> None:
    requests = package / DATA / REQUESTS
    _rewrite(requests, 3, lambda r: r["calls"][0].update(tool="calculator"))
    with pytest.raises(DataError) as caught:
        build.build(suite_ref({"family": "failtalms"}), tmp_path / "out")  # the build reads the copy
    error = caught.value
    assert (error.file, error.line, error.field) == (str(requests), 3, "calls.0.tool")
    assert str(error).startswith(f"{requests}:3: calls.0.tool: ") and "no library tool is named 'calculator'" in str(
        error
    )


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda r: r.update(answer=[]), "answer", "at least 1 item"),
        (lambda r: r.pop("task"), "task", "Field required"),
        (lambda r: r.update(colour="red"), "colour", "Extra inputs are not permitted"),
        # a list is none of an argument's forms: the field names the first form tried
        (lambda r: r["calls"][0]["arguments"].update(x=[1, 2]), "calls.0.arguments.x.str", "valid string"),
        (lambda r: r.update(easy=["stock_quote"]), None, "easy names tools the plan does not use: ['stock_quote']"),
        (
            lambda r: r["masks"][0].update(argument="colour"),
            None,
            "mask convert_units.colour: the plan has no such call argument",
        ),
    ],
)
def test_each_kind_of_bad_request_is_reported(package: Path, change: Any, field: str | None, message: str) -> None:
    requests = package / DATA / REQUESTS
    _rewrite(requests, 1, change)
    with pytest.raises(DataError) as caught:
        read_requests(requests)
    assert (caught.value.file, caught.value.line, caught.value.field) == (str(requests), 1, field)
    assert message in caught.value.message


def test_a_line_that_is_not_json_names_its_line(package: Path) -> None:
    requests = package / DATA / REQUESTS
    lines = requests.read_text(encoding="utf-8").splitlines()
    lines[4] = lines[4][:-1]  # the closing brace lost
    requests.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r":5: not a JSON line"):
        read_requests(requests)


def test_a_malformed_table_row_names_file_line_and_field(package: Path) -> None:
    tables = package / DATA / "tables"
    assert read_table("stocks", Stock, tables) == read_table("stocks", Stock)
    _rewrite(tables / "stocks.jsonl", 2, lambda r: r.update(volume="5100000"))  # a number written as text
    with pytest.raises(DataError) as caught:
        read_table("stocks", Stock, tables)
    assert (caught.value.file, caught.value.line, caught.value.field) == (str(tables / "stocks.jsonl"), 2, "volume")
    assert str(caught.value).startswith(f"{tables / 'stocks.jsonl'}:2: volume: Input should be a valid integer")


def test_a_malformed_mapping_table_names_file_and_field(package: Path) -> None:
    tables = package / DATA / "tables"
    scores = json.loads((tables / "letter_scores.json").read_text())
    (tables / "letter_scores.json").write_text(json.dumps(scores | {"q": "ten"}, indent=2))
    with pytest.raises(DataError) as caught:
        read_mapping("letter_scores", dict[str, int], tables)
    assert (caught.value.file, caught.value.field) == (str(tables / "letter_scores.json"), "q")
    (tables / "letter_scores.json").write_text('{"a": 1,\n "b": }')
    with pytest.raises(DataError) as caught:
        read_mapping("letter_scores", dict[str, int], tables)
    assert caught.value.line == 2 and "not JSON" in caught.value.message
