"""`undertow report RUN --layout NAME --format json`: every family layout's tables as JSON, rows keyed by column,
valid against docs/schema/report_layout.json (which is what the models generate); number columns read as numbers,
intervals split into their ends, the missing mark as null, text left as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.cli import invoke, one_line
from helpers.paths import SCHEMAS
from helpers.runs import stored_run
from helpers.spider import make_spider

from undertow.cluster import api
from undertow.cluster.report.layout_json import SCHEMA_FILE, main, schema_text, table_json
from undertow.env_core.families import ReportTable, families

REGENERATE = "regenerate with: python -m undertow.cluster.report.layout_json --write-schema docs/schema"


def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / SCHEMA_FILE).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_committed_schema_is_what_the_models_generate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (SCHEMAS / SCHEMA_FILE).read_text(encoding="utf-8") == schema_text(), REGENERATE
    main(["--write-schema", str(tmp_path)])
    assert "wrote" in capsys.readouterr().out
    assert (tmp_path / SCHEMA_FILE).read_text(encoding="utf-8") == schema_text()
    # the report schema beside it is another command's and stays its own
    assert json.loads((SCHEMAS / "report.json").read_text())["title"] == "ReportOutput"


def test_a_table_becomes_rows_keyed_by_column() -> None:
    table = ReportTable(
        title="T",
        columns=["Model", "Setting", "n", "PR", "Aware", "Clean", "Share", "Label", "Label"],
        right=[False, False, True, True, True, True, True, False, False],
        rows=[
            ["m1", "perfect", "99", "0.67 [0.55–0.78]", "—", "9.63 ± 3.94", "45%", "7", "a"],
            ["m2", "no_tools", "5", "—", "0.5", "—", "—", "b"],  # one cell short
        ],
        note="what it means",
    )
    out = table_json(table).model_dump(mode="json")
    assert out["columns"] == [
        "Model", "Setting", "n", "PR", "PR low", "PR high", "Aware", "Clean", "Clean ±", "Share", "Label", "Label (2)",
    ]  # fmt: skip
    assert out["rows"] == [
        {
            "Model": "m1",
            "Setting": "perfect",
            "n": 99,
            "PR": 0.67,
            "PR low": 0.55,
            "PR high": 0.78,
            "Aware": None,
            "Clean": 9.63,
            "Clean ±": 3.94,
            "Share": "45%",  # not a plain number: the text as shown
            "Label": "7",  # a text column: a number-like name stays text
            "Label (2)": "a",
        },
        {
            "Model": "m2",
            "Setting": "no_tools",
            "n": 5,
            "PR": None,
            "PR low": None,
            "PR high": None,
            "Aware": 0.5,
            "Clean": None,
            "Clean ±": None,
            "Share": None,
            "Label": "b",
            "Label (2)": None,
        },
    ]
    assert out["title"] == "T" and out["note"] == "what it means"
    validator().validate({"schema_version": 1, "run_id": "r", "layout": "x", "tables": [out]})


def test_a_column_with_one_cell_in_another_form_stays_text() -> None:
    table = ReportTable(title="T", columns=["PR"], right=[True], rows=[["0.67 [0.55–0.78]"], ["0.50"]])
    assert table_json(table).rows == [{"PR": "0.67 [0.55–0.78]"}, {"PR": 0.5}]


# ---------------------------------------------------------------------------------------------------------------
# Every family's layouts, from a run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The oracle and the naive policy on two scenarios of a suite of every family that has layouts."""
    root = tmp_path_factory.mktemp("runs")
    spider = make_spider(tmp_path_factory.mktemp("spider") / "spider")
    config = {
        "name": "layouts",
        "models": ["oracle", "naive"],
        "suites": [
            {"family": "sqlfuncs", "spider": str(spider), "seed": 5, "limit": 2},
            {"family": "services", "limit": 2},
            {"family": "liveapi", "spider": str(spider), "formulation": "slot", "mode": "direct", "limit": 2},
            {"family": "failtalms", "limit": 2},
        ],
        "settings": ["clean"],
    }
    return root, stored_run(root, config).run_id


LAYOUTS = [(family.name, name) for family in families() for name in family.layouts]


def test_the_run_has_a_suite_of_every_family_with_layouts(run: tuple[Path, str]) -> None:
    root, run_id = run
    families_run = {s.family for s in api.report(run_id, str(root)).manifest.suites}
    assert {family for family, _ in LAYOUTS} <= families_run, "add a suite of the new family to the run above"


@pytest.mark.parametrize(("family", "layout"), LAYOUTS)
def test_every_layout_prints_json_that_validates(run: tuple[Path, str], family: str, layout: str) -> None:
    root, run_id = run
    code, out, err = invoke("report", run_id, "--store", str(root), "--layout", layout, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    validator().validate(data)
    assert (data["schema_version"], data["run_id"], data["layout"]) == (1, run_id, layout)
    # the same tables the terminal shows, in order, each row with exactly the table's columns
    shown = api.report(run_id, str(root), layout=layout).layout_view
    assert shown is not None
    assert [t["title"] for t in data["tables"]] == [t.title for t in shown.tables]
    for table, printed in zip(data["tables"], shown.tables, strict=True):
        assert len(table["rows"]) == len(printed.rows)
        assert all(list(row) == table["columns"] for row in table["rows"])
        for row, cells in zip(table["rows"], printed.rows, strict=True):
            # text columns hold the text shown, the first column always
            assert row[table["columns"][0]] == cells[0]


def _oracle_row(data: dict[str, Any], column: str) -> dict[str, Any]:
    """The oracle's row of the first table that has ``column``."""
    table = next(t for t in data["tables"] if column in t["columns"])
    return next(row for row in table["rows"] if "oracle" in row.values())


def test_the_oracles_cells_read_as_numbers(run: tuple[Path, str]) -> None:
    root, run_id = run

    def report(layout: str) -> dict[str, Any]:
        code, out, err = invoke("report", run_id, "--store", str(root), "--layout", layout, "--format", "json")
        assert code == 0, err
        return dict(json.loads(out))

    # the oracle solves both of its episodes of each suite: a pass rate of 1 (100 %) of n = 2
    failtalms = _oracle_row(report("failtalms"), "PR")
    assert failtalms["PR"] == 1.0 and failtalms["n"] == 2
    assert failtalms["PR low"] < 1.0 and failtalms["PR high"] == 1.0  # two episodes leave the interval wide
    assert _oracle_row(report("live_api"), "Compl. Rate")["Compl. Rate"] == 1.0
    assert _oracle_row(report("failing_tools"), "Clean")["Clean"] == 100.0


def test_layout_json_and_the_family_analyses_are_not_asked_together(run: tuple[Path, str]) -> None:
    root, run_id = run
    code, out, err = invoke(
        "report", run_id, "--store", str(root), "--layout", "failtalms", "--format", "json", "--families"
    )
    assert code == 2 and not out
    assert " ".join(one_line(err).split()) == (
        "error: --families: the family analyses or a layout's tables, not both; drop one"
    )
    code, out, err = invoke("report", run_id, "--store", str(root), "--layout", "failtalm", "--format", "json")
    assert code == 2 and not out and "unknown layout 'failtalm'" in one_line(err)
