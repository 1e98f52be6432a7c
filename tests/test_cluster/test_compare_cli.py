"""`undertow compare` and `undertow report --html` on runs made of real episodes (built-in policies, no Ray), and
their bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cluster.cli import app
from cluster.config import SweepConfig
from cluster.plan import plan_sweep
from cluster.store import RunStore
from workers.runner import run_shard

runner = CliRunner()


def make_run(root: Path, name: str, models: list[object]) -> str:
    config = SweepConfig.model_validate(
        {
            "name": name,
            "models": models,
            "suites": [{"family": "smoke", "limit": 10}],
            "settings": ["clean", "first_tried"],
            "run": {"store": str(root), "shard_size": 10},
        }
    )
    manifest = plan_sweep(config)
    store = RunStore.create(root, manifest.run_id)
    store.write_manifest(manifest)
    for shard in manifest.shards:
        store.commit(run_shard(shard))
    return manifest.run_id


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    root = tmp_path_factory.mktemp("runs")
    first = make_run(root, "first", [{"name": "oracle", "size_b": 70}, {"name": "naive", "size_b": 7}])
    second = make_run(root, "second", [{"name": "naive", "size_b": 8, "latency_s": 0.001}])
    return root, first, second


def cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


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
        (["report", "FIRST", "--html", "/no/such/folder/x.html"], "--html: folder /no/such/folder does not exist"),
        (["sync", "nope"], "run 'nope' not found"),
    ],
)
def test_bad_input(runs: tuple[Path, str, str], args: list[str], message: str) -> None:
    root, first, _ = runs
    code, _, err = cli(*[first if a == "FIRST" else a for a in args], "--store", str(root))
    assert code == 2 and message in " ".join(err.split())
