"""Live API-Bench through the real CLI: ``undertow build liveapi --spider DIR --out OUT`` prints Table 2 and writes a
folder that a sweep loads by path with its options; the shipped ``configs/liveapi.yaml`` runs the built-in policies
over SLOT, SEL and REST in direct and ReAct mode on Ray, and ``undertow report --layout live_api`` prints the
paper's Tables 3 and 4 from it."""

from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from helpers.cli import UNDERTOW
from helpers.paths import SPIDER_DEV as SPIDER
from helpers.shipped import limits, run_shipped

from undertow.cluster.store import RunStore
from undertow.env_core.model import EpisodeResult


def cli(*args: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([UNDERTOW, *args], capture_output=True, text=True, timeout=timeout)


def only_run(store: Path) -> Path:
    (folder,) = [p for p in store.iterdir() if (p / "manifest.json").is_file()]
    return folder


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped config, 10 questions per suite: every formulation, mode and policy (each kept item's oracle
    sequence is checked on the whole of spider-dev by the family's tests; the full run is ``make bench``'s)."""
    return run_shipped("liveapi.yaml", tmp_path_factory.mktemp("liveapi-run"), *limits("liveapi.yaml", 10))[0]


@pytest.mark.slow
def test_build_prints_table_2_and_a_sweep_loads_the_folder_with_options(tmp_path: Path) -> None:
    out = tmp_path / "built"
    done = cli("build", "liveapi", "--spider", str(SPIDER), "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Table 2" in done.stdout and "REST-BIRD (paper)" in done.stdout
    assert (out / "suite.json").is_file()
    config = {
        "name": "from-folder",
        "models": ["oracle"],
        "suites": [
            {"path": str(out), "formulation": "rest", "mode": "react", "limit": 12},
            {"path": str(out), "formulation": "sel", "limit": 12},
        ],
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config))
    store = tmp_path / "runs"
    done = cli("run", str(path), "--store", str(store))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = RunStore(only_run(store)).results()
    assert len(results) == 24 and all(r.solved and r.setting == "clean" for r in results)
    assert {r.details["mode"] for r in results} == {"direct", "react"}


def test_build_refuses_a_family_without_a_spider_source(tmp_path: Path) -> None:
    done = cli("build", "services", "--spider", str(SPIDER), "--out", str(tmp_path / "x"))
    assert done.returncode != 0
    assert "--spider: family 'services' does not build from a Spider-format folder" in done.stderr


@pytest.mark.slow
def test_the_shipped_config_separates_the_policies(shipped: Path) -> None:
    results: list[EpisodeResult] = RunStore(shipped).results()
    assert results and all(r.outcome.judged for r in results)
    by: dict[tuple[str, str, str], list[EpisodeResult]] = defaultdict(list)
    for r in results:
        by[(r.model, r.details["formulation"], r.details["mode"])].append(r)
    assert len(by) == 3 * 3 * 4  # models × formulations × modes (direct, tools, react, sql)
    for (model, formulation, mode), rows in by.items():
        rate = sum(r.solved for r in rows) / len(rows)
        if model in ("oracle", "naive"):
            assert rate == 1.0, (model, formulation, mode)
        else:
            assert rate < 0.2, (model, formulation, mode)


@pytest.mark.slow
def test_report_prints_tables_3_4_and_6(shipped: Path) -> None:
    done = cli("report", str(shipped), "--layout", "live_api")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "Table 3" in text and "Table 4" in text and "Table 6" in text
    for formulation in ("SLOT", "SEL", "REST"):
        assert formulation in text
    table3 = text.split("Table 3")[1].split("Table 4")[0]
    oracle = [line.split() for line in table3.splitlines() if " oracle " in line]
    assert len(oracle) == 6  # one row per formulation, tools in the prompt and as native tool calls
    assert sum("(Tools)" in row for row in oracle) == 3
    assert all(row[-9:-2] == ["1.00"] * 7 for row in oracle)  # intent P R F1, slot P R F1, completion
    table4 = text.split("Table 4")[1].split("Figure 2")[0]
    agents = [line.split() for line in table4.splitlines() if " oracle " in line]
    assert len(agents) == 3 and all(row[3:5] == ["1.00", "1.00"] for row in agents)  # base and agent completion
    assert "Figure 2" in text and "halluc." in text  # the random policy's failures by BFCL category
    table6 = text.split("Table 6")[1]
    (oracle_sql,) = [line.split() for line in table6.splitlines() if line.split()[:1] == ["oracle"]]
    assert oracle_sql[1:] == ["1.00"] * 6  # SLOT, SEL and REST: by the APIs and by SQL
