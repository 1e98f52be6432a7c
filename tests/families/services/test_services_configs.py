"""The Failing Tools configs as shipped: ``configs/services.yaml`` (Table 1: base / relaxed / clean) and
``configs/services-harness.yaml`` (Table 2: H0–H3) run with the built-in policies through the real CLI on Ray, and
``undertow report --layout`` prints the paper's tables from them. Each runs ``limit:``ed to the first scenarios of
the library, which cover every fault kind the naive policy fails on (the whole library is checked by the build
itself: every scenario's oracle, and the naive policy's pass rates; the full runs are ``make bench``'s)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from helpers.shipped import limits, report_layout, run_shipped, shipped_suite

from undertow.cluster.store import RunStore
from undertow.env_core.model import EpisodeResult

pytestmark = pytest.mark.slow

LIMIT = 45  # the first 45 scenarios: 7 services, every fault kind but ambiguous


def cells(results: list[EpisodeResult]) -> dict[tuple[str, str], list[EpisodeResult]]:
    out: dict[tuple[str, str], list[EpisodeResult]] = defaultdict(list)
    for r in results:
        out[(r.model, r.setting)].append(r)
    return out


@pytest.fixture(scope="module")
def table1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    shipped_suite("services")
    return run_shipped("services.yaml", tmp_path_factory.mktemp("services"), *limits("services.yaml", LIMIT))[0]


def test_the_services_config_separates_the_policies_as_the_library_promises(table1: Path) -> None:
    results = RunStore(table1).results()
    assert results and all(r.outcome == "scored" for r in results)
    by = cells(results)
    assert set(by) == {(m, s) for m in ("oracle", "naive", "random") for s in ("clean", "base")}
    n = len(by["oracle", "base"])
    assert n == LIMIT
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
    text = report_layout(table1, "failing_tools")
    assert "Table 1" in text
    rows = {
        line.split()[0]: line.split()[1:] for line in text.splitlines() if line.strip().startswith(("oracle", "naive"))
    }
    # half the Wilson interval at 45 of 45 is z²/(2(n + z²)) = 3.841459 / 97.682918 = 3.93 points (not 0)
    assert rows["oracle"][:9] == ["100.00", "±", "3.93", "100.00", "±", "3.93", "100.00", "±", "3.93"]
    assert rows["naive"][0] == "0.00" and rows["naive"][6] == "100.00"


def test_the_harness_config_gives_table_2(tmp_path: Path) -> None:
    shipped_suite("services")
    folder, _ = run_shipped("services-harness.yaml", tmp_path, *limits("services-harness.yaml", 6))
    text = report_layout(folder, "harness")
    assert "Table 2" in text
    for chain in ("H0 (control)", "H1 (preamble)", "H2 (schema annotation)", "H3 (OOD few-shot)"):
        assert chain in text
    settings = {r.setting for r in RunStore(folder).results()}
    assert settings == {"base", "h1_preamble", "h2_schema_notes", "h3_few_shot"}
