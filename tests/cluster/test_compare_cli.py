"""`undertow compare` and `undertow report --html` on runs made of real episodes (built-in policies, no Ray), and
their bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from helpers.cli import invoke as cli
from helpers.paths import SCHEMAS
from helpers.runs import stored_run


def make_run(root: Path, name: str, models: list[object], settings: tuple[str, ...] = ("clean", "first_tried")) -> str:
    config = {
        "name": name,
        "models": models,
        "suites": [{"family": "smoke", "limit": 10}],
        "settings": list(settings),
        "run": {"shard_size": 10},
    }
    return stored_run(root, config).run_id


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    root = tmp_path_factory.mktemp("runs")
    first = make_run(root, "first", [{"name": "oracle", "size_b": 70}, {"name": "naive", "size_b": 7}])
    second = make_run(root, "second", [{"name": "naive", "size_b": 8, "latency_s": 0.001}])
    return root, first, second


def test_one_run_compares_its_models(runs: tuple[Path, str, str], tmp_path: Path) -> None:
    root, first, _ = runs
    code, out, _ = cli("compare", first, "--store", str(root), "--format", "json")
    assert code == 0
    analysis = json.loads(out)
    pairs = {(c["setting"], c["model_a"], c["model_b"]): c for c in analysis["comparisons"]}
    faulted = pairs[("first_tried", "oracle", "naive")]
    assert faulted["n"] == 10 and faulted["difference"] == 1.0 and faulted["mcnemar_only_a"] == 10
    assert faulted["mcnemar_p_value"] == pytest.approx(2 / 2**10)  # exact: 10 discordant pairs, all one way
    gaps = {(g["model"], g["setting"]): g for g in analysis["gaps"]}
    assert gaps[("naive", "first_tried")]["estimate"] == 1.0 and gaps[("oracle", "first_tried")]["estimate"] == 0.0
    html = tmp_path / "compare.html"
    code, _, err = cli("compare", first, "--store", str(root), "--html", str(html))
    assert code == 0 and f"wrote {html}" in err
    assert all(f'id="{s}"' in html.read_text() for s in ("summary", "plots", "comparisons", "recovery", "trace"))


def test_the_table_keeps_each_pair_on_one_line(runs: tuple[Path, str, str]) -> None:
    root, first, _ = runs
    code, out, _ = cli("compare", first, "--store", str(root))
    assert code == 0
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert "smoke first_tried oracle naive 10 100.0% 0.0% +100.0 +100.0 … +100.0 10 0 0.002" in lines
    assert "naive smoke first_tried 100.0% 0.0% +100.0 +100.0 … +100.0 10" in lines


def test_two_runs_keep_a_shared_model_name_apart(runs: tuple[Path, str, str]) -> None:
    root, first, second = runs
    code, out, _ = cli("compare", first, second, "--store", str(root), "--format", "json")
    assert code == 0
    analysis = json.loads(out)
    assert analysis["models"] == ["oracle", f"naive@{first}", f"naive@{second}"]
    assert analysis["sizes"] == {"oracle": 70, f"naive@{first}": 7, f"naive@{second}": 8}
    pairs = {(c["setting"], c["model_a"], c["model_b"]) for c in analysis["comparisons"]}
    assert ("clean", f"naive@{first}", f"naive@{second}") in pairs


def test_report_writes_the_html_report(runs: tuple[Path, str, str], tmp_path: Path) -> None:
    root, first, _ = runs
    page = tmp_path / "report.html"
    code, out, _ = cli("report", first, "--store", str(root), "--html", str(page))
    assert code == 0 and "oracle" in out
    text = page.read_text()
    assert all(f'id="{s}"' in text for s in ("summary", "plots", "recovery", "comparisons", "families", "trace"))
    assert text.count("data:image/png;base64,") >= 3 and "fault: first_tried" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["compare", "nope"], "run 'nope' not found"),
        (["compare", "FIRST", "FIRST"], "the same run is named twice"),
        (["compare", "FIRST", "--html", "/no/such/folder/x.html"], "--html: folder /no/such/folder does not exist"),
        (["compare", "FIRST", "--format", "xml"], "--format: expected 'table' or 'json', got 'xml'"),
        (
            ["compare", "FIRST", "--baseline", "clena"],
            "error: --baseline: unknown setting 'clena' (settings in the run(s): clean, first_tried); "
            "did you mean 'clean'?",
        ),
        (
            ["compare", "FIRST", "--baseline", "nosuch"],
            "error: --baseline: unknown setting 'nosuch' (settings in the run(s): clean, first_tried)",
        ),
        (["report", "FIRST", "--html", "/no/such/folder/x.html"], "--html: folder /no/such/folder does not exist"),
        (["sync", "nope"], "run 'nope' not found"),
    ],
)
def test_bad_input(runs: tuple[Path, str, str], args: list[str], message: str) -> None:
    root, first, _ = runs
    code, out, err = cli(*[first if a == "FIRST" else a for a in args], "--store", str(root))
    assert code == 2 and message in " ".join(err.split())
    assert out == "" and len(err.strip().splitlines()) == 1


def test_a_baseline_named_is_the_one_gaps_are_measured_from(runs: tuple[Path, str, str]) -> None:
    root, first, _ = runs
    code, out, _ = cli("compare", first, "--store", str(root), "--baseline", "first_tried", "--format", "json")
    assert code == 0
    gaps = {(g["model"], g["setting"]): (g["baseline"], g["estimate"]) for g in json.loads(out)["gaps"]}
    assert gaps == {("oracle", "clean"): ("first_tried", 0.0), ("naive", "clean"): ("first_tried", -1.0)}


LONG = "naive-with-a-rather-long-name"


def test_long_model_names_of_two_runs_stay_distinct_in_the_table(tmp_path: Path) -> None:
    # the same model in two runs of one config: the names differ only at the end of the run id, which a table
    # that cuts long names at their end made look identical
    first = make_run(tmp_path, "same", [{"name": LONG, "policy": "naive"}, "oracle"])
    second = make_run(tmp_path, "same", [{"name": LONG, "policy": "naive"}])
    code, out, _ = cli("compare", first, second, "--store", str(tmp_path))
    assert code == 0
    label = {run: f"{LONG[:12]}…{f'{LONG}@{run}'[-13:]}" for run in (first, second)}
    assert label[first] != label[second]
    lines = [line.split() for line in out.splitlines()]
    assert ["smoke", "clean", label[first], label[second], "10"] in [line[:5] for line in lines]
    assert [label[second], "smoke", "first_tried", "100.0%", "0.0%", "+100.0"] in [line[:6] for line in lines]
    assert "Long model names are shortened in the middle above; --format json gives them whole." in out
    code, out, _ = cli("compare", first, second, "--store", str(tmp_path), "--format", "json")
    assert json.loads(out)["models"] == [f"{LONG}@{first}", "oracle", f"{LONG}@{second}"]


def test_no_recovery_gap_where_giving_up_is_correct(tmp_path: Path) -> None:
    run = make_run(tmp_path, "hopeless", ["oracle", "naive"], settings=("clean", "first_tried", "impossible"))
    code, out, _ = cli("compare", run, "--store", str(tmp_path), "--format", "json")
    assert code == 0
    data = json.loads(out)
    validator = jsonschema.Draft202012Validator(json.loads((SCHEMAS / "compare.json").read_text()))
    validator.validate(data)
    gaps = {(g["model"], g["setting"]): g for g in data["gaps"]}
    for model in ("oracle", "naive"):
        hopeless = gaps[(model, "impossible")]
        assert not hopeless["recoverable"] and hopeless["estimate"] is None and hopeless["ci_low"] is None
        assert gaps[(model, "first_tried")]["recoverable"]
    assert gaps[("naive", "first_tried")]["estimate"] == 1.0

    page = tmp_path / "compare.html"
    code, out, _ = cli("compare", run, "--store", str(tmp_path), "--html", str(page))
    assert code == 0
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert "oracle smoke impossible 100.0% 0.0% n/a — —" in lines
    assert "naive smoke first_tried 100.0% 0.0% +100.0 +100.0 … +100.0 10" in lines
    assert (
        "n/a: no recovery possible — giving up is correct under 'impossible': every episode there expects the model "
        "to give up (see Gave up)." in lines
    )
    html = page.read_text()
    recovery = html[html.index('id="recovery-table"') : html.index("</table>", html.index('id="recovery-table"'))]
    row = recovery[recovery.index('data-model="naive" data-suite="smoke" data-setting="impossible"') :]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row[: row.index("</tr>")])
    assert cells == [
        "naive",
        "smoke",
        "impossible",
        "100.0%",
        "0.0%",
        "n/a",
        "no recovery possible — giving up is correct",
        "—",
    ]
