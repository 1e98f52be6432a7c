"""The Failing Tools configs as shipped: ``configs/services.yaml`` (Table 1: base / relaxed / clean) and
``configs/services-harness.yaml`` (Table 2: H0–H3) run with the built-in policies through the real CLI on Ray, and
``undertow report --layout`` prints the paper's tables from them."""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from cluster.store import RunStore
from env_core.model import EpisodeResult

UNDERTOW = str(Path(sys.executable).parent / "undertow")
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def run(config: str, store: Path) -> Path:
    done = subprocess.run(
        [UNDERTOW, "run", str(CONFIGS / config), "--store", str(store)], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (folder,) = [p for p in store.iterdir() if (p / "manifest.json").is_file()]
    return folder


def layout(folder: Path, name: str) -> str:
    done = subprocess.run([UNDERTOW, "report", str(folder), "--layout", name], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def cells(results: list[EpisodeResult]) -> dict[tuple[str, str], list[EpisodeResult]]:
    out: dict[tuple[str, str], list[EpisodeResult]] = defaultdict(list)
    for r in results:
        out[(r.model, r.setting)].append(r)
    return out


@pytest.fixture(scope="module")
def table1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run("services.yaml", tmp_path_factory.mktemp("services"))


def test_the_services_config_separates_the_policies_as_the_library_promises(table1: Path) -> None:
    results = RunStore(table1).results()
    assert results and all(r.outcome == "scored" for r in results)
    by = cells(results)
    assert set(by) == {(m, s) for m in ("oracle", "naive", "random") for s in ("clean", "base")}
    n = len(by["oracle", "base"])
    assert n >= 218
    for setting in ("clean", "base"):
        assert all(r.score == 1.0 for r in by["oracle", setting])
    assert all(r.details["relaxed_passed"] for r in by["oracle", "base"])
    assert all(r.details["forbidden_calls"] == 0 for rows in by.values() for r in rows if r.model == "oracle")
    naive_clean = sum(r.correct for r in by["naive", "clean"]) / n
    naive_base = sum(r.correct for r in by["naive", "base"]) / n
    assert naive_clean >= 0.9 and naive_base <= 0.05
    labels = {r.details["fm_label"] for r in by["naive", "base"]}
    assert {"FM1", "FM2", "FM3", "FM4"} <= labels  # the naive policy shows the paper's modes


def test_report_prints_table_1(table1: Path) -> None:
    text = layout(table1, "failing_tools")
    assert "Table 1" in text
    rows = {
        line.split()[0]: line.split()[1:] for line in text.splitlines() if line.strip().startswith(("oracle", "naive"))
    }
    assert rows["oracle"][:9] == ["100.00", "±", "0.00", "100.00", "±", "0.00", "100.00", "±", "0.00"]
    assert rows["naive"][0] == "0.00" and rows["naive"][6] == "100.00"


def test_the_harness_config_gives_table_2(tmp_path: Path) -> None:
    folder = run("services-harness.yaml", tmp_path)
    text = layout(folder, "harness")
    assert "Table 2" in text
    for chain in ("H0 (control)", "H1 (preamble)", "H2 (schema annotation)", "H3 (OOD few-shot)"):
        assert chain in text
    settings = {r.setting for r in RunStore(folder).results()}
    assert settings == {"base", "h1_preamble", "h2_schema_notes", "h3_few_shot"}
