"""What the families share (scoring.family_summary): episode rows grouped by model × setting, stored flags and counts
read past the NaN of a missing cell, Wilson rates, the "needs…" stand-in table, the failure-share figure and the
default metrics of a per-model × setting summary; and each family's typed details (``details_model``): what the
runner stores is the model's dump, the same keys in the same order as the family wrote them, and details that do
not fit fail their own episode."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import episode_result
from pydantic import ValidationError
from toy_family.metrics import DETAILS_SHAPE

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.env_core.families import get_family
from undertow.env_core.model import Outcome
from undertow.scoring.family_summary import (
    ModelSettingSummary,
    absent,
    by_model_then_setting,
    category_counts,
    count,
    failures_figure,
    flag,
    missing_table,
    n_range,
    rate,
    result_rows,
    share_bar,
)
from undertow.scoring.stats import wilson_interval
from undertow.workers.runner import run_shard

# ---------------------------------------------------------------------------------------------------------------
# Rows, flags and rates


def test_rows_carry_the_named_fields_and_the_details_and_group_in_order_of_appearance() -> None:
    results = [
        episode_result(1, model="b", setting="clean", details={"x": 1}),
        episode_result(2, model="a", setting="faulted", outcome="infra_error", n_turns=4),
        episode_result(3, model="b", setting="faulted"),
        episode_result(4, model="b", setting="clean"),
    ]
    rows = result_rows(results, "n_turns")
    assert rows[0] == {"model": "b", "setting": "clean", "outcome": "scored", "n_turns": 0, "x": 1}
    assert rows[1]["outcome"] == "infra_error" and rows[1]["n_turns"] == 4
    groups = by_model_then_setting(rows)
    assert list(groups) == ["b", "a"] and list(groups["b"]) == ["clean", "faulted"]
    assert [r["n_turns"] for r in groups["b"]["clean"]] == [0, 0]


@pytest.mark.parametrize(
    ("value", "as_flag", "as_count"),
    [(None, None, 0), (math.nan, None, 0), (True, True, 1), (0, False, 0), (3, True, 3), (2.0, True, 2)],
)
def test_a_missing_cell_is_neither_true_nor_false(value: Any, as_flag: bool | None, as_count: int) -> None:
    assert (flag(value), count(value), absent(value)) == (as_flag, as_count, as_flag is None)


def test_categories_are_counted_with_zeros_and_the_uncategorized() -> None:
    rows = [{"c": "id"}, {"c": None}, {"c": "odd"}, {"c": "id"}, {}]
    assert category_counts(rows, "c", ("search", "id")) == {"search": 0, "id": 2, "uncategorized": 2, "odd": 1}
    assert category_counts(rows, "c", ("search", "id"), unlabelled=None) == {"search": 0, "id": 2, "odd": 1}


def test_a_rate_has_its_wilson_interval_and_nothing_without_episodes() -> None:
    low, high = wilson_interval(3, 4)
    assert rate(3, 4).model_dump() == {"n": 4, "k": 3, "rate": 0.75, "ci_low": low, "ci_high": high}
    assert rate(0, 0).model_dump() == {"n": 0, "k": 0, "rate": None, "ci_low": None, "ci_high": None}


def test_the_needs_line_and_the_episode_range() -> None:
    table = missing_table("Table 9", "a run with errors")
    assert (table.columns, table.rows) == ([], [])
    assert table.note == "Table 9 needs a run with errors: not in this run, left out."
    assert (n_range([]), n_range([5, 5]), n_range([12, 3, 7])) == ("0", "5", "3–12")


def test_failure_shares_draw_one_bar_per_group_that_failed() -> None:
    bars = [share_bar("m1", {"id": 1, "search": 3, "other": 0}), share_bar("m2", {"id": 0}), share_bar("m3", {"x": 2})]
    assert bars[1] is None and bars[0] is not None
    assert (bars[0].shares, bars[0].n) == ({"id": 25.0, "search": 75.0}, 4)
    (figure,) = failures_figure("errors", "Failures", "alt", bars, "model")
    assert figure.categories == ["id", "search", "x"] and [b.label for b in figure.bars] == ["m1", "m3"]
    (ordered,) = failures_figure("errors", "Failures", "alt", bars, "model", order=("search", "id"))
    assert ordered.categories == ["search", "id"]  # the order given, those used only
    assert failures_figure("errors", "Failures", "alt", [None], "model") == []


class _Summary(ModelSettingSummary):
    family: str = "demo"
    cells: dict[str, dict[str, dict[str, Any]]]

    def setting_parts(self, model: str, setting: str) -> list[tuple[str, Any]]:
        found = self.cells.get(model, {}).get(setting)
        return [("", found), ("again", found)] if found else []


def test_the_default_metrics_flatten_the_parts_of_one_model_and_setting() -> None:
    summary = _Summary(cells={"m": {"clean": {"rate": 0.5, "n": 4, "note": "text", "undefined": None}}})
    assert summary.metrics("m", "clean") == {
        "demo.rate": 0.5,
        "demo.n": 4.0,
        "demo.again.rate": 0.5,
        "demo.again.n": 4.0,
    }
    assert summary.metrics("m", "faulted") == {}


# ---------------------------------------------------------------------------------------------------------------
# Each family's typed details

STORED: list[tuple[str, dict[str, Any]]] = [
    (
        "sqlfuncs",
        {"error_category": "search", "backup_plan_calls": 2, "search_calls": 3, "solution_seen_in_search": False},
    ),
    (
        "failtalms",
        {
            "passed": None,
            "pr_by": None,
            "emulated_calls": 1,
            "awareness": "idk",
            "asked_human": False,
            "skipped": False,
            "category": "science",
            "tool_awareness": None,
            "info_awareness": "idk",
            "win_rate": None,
            "perfect_passed": None,
            "perfect_scenario": None,
            "awareness_unreadable": False,
            "imported": False,
            "imported_from": None,
        },
    ),
    (
        "middleware",
        {
            "environment": "database",
            "valid": True,
            "ex": False,
            "requires_content": True,
            "tools": True,
            "sql_errors": "sqlite",
            "answered_without_calling": False,
        },
    ),
    (
        "middleware",
        {
            "environment": "kb",
            "valid": True,
            "f1": 0.5,
            "kind": "argmax",
            "hops": 2,
            "answered_without_calling": True,
        },
    ),
]


@pytest.mark.parametrize(("family", "details"), STORED)  # services and liveapi: in their own scoring tests
def test_stored_details_are_the_models_dump_key_for_key(family: str, details: dict[str, Any]) -> None:
    model = get_family(family).details_model
    assert model is not None
    assert list(model.model_validate(details).model_dump(mode="json").items()) == list(details.items())


@pytest.mark.parametrize(
    ("family", "details"),
    [
        ("sqlfuncs", {**STORED[0][1], "error_category": "bad luck"}),
        ("services", {"rubric": "clean", "base_score": 0.0}),  # a clean episode has no base score
        ("liveapi", {"formulation": "slot", "mode": "direct"}),  # the counts are missing
        ("failtalms", {**STORED[1][1], "awareness": "maybe"}),
        ("middleware", {"environment": "kb", "valid": True, "ex": True}),
    ],
)
def test_details_that_drift_from_the_model_are_refused(family: str, details: dict[str, Any]) -> None:
    model = get_family(family).details_model
    assert model is not None
    with pytest.raises(ValidationError):
        model.model_validate(details)


def test_the_built_in_family_without_details_declares_no_model() -> None:
    assert get_family("smoke").details_model is None


def test_details_that_do_not_fit_fail_their_episode_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DETAILS_SHAPE, "1")  # the toy family's Peru question writes a field ToyDetails lacks
    config = {"name": "details", "models": ["oracle"], "settings": ["clean"], "run": {"store": str(tmp_path)}}
    config["suites"] = [{"family": "toy_family:FAMILY", "countries": 4}]
    (shard,) = plan_sweep(SweepConfig.model_validate(config)).shards
    output = run_shard(shard)
    broken = [r for r in output.results if r.outcome != Outcome.scored]
    assert len(output.results) == 4 and len(broken) == 1
    assert broken[0].outcome == Outcome.infra_error  # the family's bug, never the model's
    assert broken[0].error is not None and broken[0].error.startswith("scorer error: ValidationError")
    assert "capital" in broken[0].error
    assert all(list(r.details) == ["lookups"] for r in output.results if r is not broken[0])
