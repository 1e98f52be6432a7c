"""The offline FAIL-TaLMs library under the paper's settings: every hand-written mask of a request runs as its own
under-specified episode, each (request, removed tool) pair sits in one unavailable-tool split only, and a configured
judge decides the pass rate even where gold exists (the gold match is the default, named in the details).

Expected values are read from ``data/requests.jsonl`` itself (the raw JSON, not the library's reading of it)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.endpoint import Reply, answer, error, scripted_server

from undertow.cluster.config import load_config
from undertow.cluster.plan import plan_sweep
from undertow.env_core.content import DATA
from undertow.env_core.failtalms import build
from undertow.env_core.failtalms.library import REQUESTS
from undertow.env_core.failtalms.tools import ALL_TOOLS
from undertow.env_core.faults import PRESET_SETTINGS, Setting, not_applicable, posed, resolve_faults
from undertow.env_core.model import ASK_HUMAN, Outcome, Scenario
from undertow.env_core.suites import Suite, load_ref, suite_ref
from undertow.scoring.failtalms import GRADER_SYSTEM
from undertow.workers.clients import PolicyModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard

RAW = [json.loads(line) for line in (build.PACKAGE / DATA / REQUESTS).read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_ref(suite_ref({"family": "failtalms"}))


def request_of(scenario: Scenario) -> str:
    """The request a scenario runs: itself, or the request a further mask of it was cut from."""
    return scenario.variant_of or scenario.id


def by_text(suite: Suite) -> dict[str, str]:
    """Each request's id by its full text (the raw file knows requests by text, the suite by id)."""
    return {s.task: s.id for s in suite.scenarios if s.variant_of is None}


def applicable(suite: Suite, setting: str) -> list[Scenario]:
    return [s for s in suite.scenarios if not_applicable(s, PRESET_SETTINGS[setting]) is None]


# ---------------------------------------------------------------------------------------------------------------
# Every mask runs


def test_every_mask_of_a_request_is_its_own_underspecified_scenario(suite: Suite) -> None:
    # the file: 169 requests; 157 with one mask, 11 with two, one with none (179 masks)
    assert len(RAW) == 169
    assert Counter(len(r.get("masks", [])) for r in RAW) == {1: 157, 2: 11, 0: 1}
    ids = by_text(suite)
    wanted = {ids[r["task"]]: sorted(m["task"] for m in r.get("masks", [])) for r in RAW}
    phrases = {m["task"]: m["phrase"] for r in RAW for m in r.get("masks", [])}
    asked: dict[str, list[str]] = {}
    for scenario in applicable(suite, "underspecified"):
        shown = posed(scenario, PRESET_SETTINGS["underspecified"])
        asked.setdefault(request_of(scenario), []).append(shown.task)
        # what the text leaves out is kept for the person, as the file words it
        assert shown.metadata["masked"]["phrase"] == phrases[shown.task]
    assert {request: sorted(tasks) for request, tasks in asked.items()} == {r: t for r, t in wanted.items() if t}
    assert sum(len(t) for t in asked.values()) == 179
    # the request without a mask states no gold argument word for word: no automatic mask either, said so
    (bare,) = [r for r in RAW if not r.get("masks")]
    reason = not_applicable(suite.by_id[ids[bare["task"]]], PRESET_SETTINGS["underspecified"])
    assert reason is not None and "no mask" in reason


def test_further_masks_run_only_under_the_underspecified_condition(suite: Suite) -> None:
    # perfect and no_tools run every request once; a further mask is no request of its own
    for setting in ("perfect", "no_tools"):
        assert sorted(s.id for s in applicable(suite, setting)) == sorted(by_text(suite).values())
    variants = [s for s in suite.scenarios if s.variant_of is not None]
    assert len(variants) == 11  # the second masks
    for variant in variants:
        base = suite.by_id[variant.variant_of or ""]
        assert variant.task == base.masks[1].task and variant.gold == base.gold
        for setting in ("perfect", "replaceable", "non_replaceable", "no_tools"):
            assert "already in condition underspecified" in str(not_applicable(variant, PRESET_SETTINGS[setting]))


def sweep_config(tmp_path: Path, settings: list[Any], suite: dict[str, Any] | None = None) -> Any:
    config = {
        "name": "library",
        "models": [{"name": "oracle"}],
        "suites": [suite or {"family": "failtalms"}],
        "settings": settings,
        "run": {"store": str(tmp_path / "runs")},
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config))
    return load_config(path)


def test_a_sweep_plans_one_episode_per_mask_and_per_split(tmp_path: Path) -> None:
    manifest = plan_sweep(sweep_config(tmp_path, ["perfect", "underspecified", "replaceable", "non_replaceable"]))
    planned: Counter[str] = Counter()
    for spec in manifest.shards:
        planned[spec.setting.name] += len(spec.episodes)
    # 179 masks; requests with a planned tool flagged easy (50) and with one not flagged (147): see below
    assert planned == {"perfect": 169, "underspecified": 179, "replaceable": 50, "non_replaceable": 147}


def test_the_oracle_runs_both_masks_of_a_request_asking_for_each_value(suite: Suite) -> None:
    setting = Setting(name="underspecified_aah", condition="underspecified", awareness="info", ask_human=True)
    two = next(r for r in RAW if len(r.get("masks", [])) == 2)
    request = by_text(suite)[two["task"]]
    scenarios = [s for s in applicable(suite, "underspecified") if request_of(s) == request]
    shard = ShardSpec(
        shard_id="library-two-masks",
        model=PolicyModel(name="oracle"),
        suite=suite_ref({"family": "failtalms"}),
        setting=setting,
        episodes=[EpisodePlan(episode_id=s.id, scenario_id=s.id, seed=0) for s in scenarios],
    )
    output = run_shard(shard)
    phrase = {m["task"]: m["phrase"] for m in two["masks"]}
    posed_tasks = {s.id: posed(s, setting).task for s in scenarios}
    assert sorted(posed_tasks.values()) == sorted(phrase)
    for trajectory, result in zip(output.trajectories, output.results, strict=True):
        assert result.details["passed"] is True and result.details["asked_human"] is True
        calls = [s for s in trajectory.tool_steps() if s.action.tool_call and s.action.tool_call.name == ASK_HUMAN]
        told = " ".join(str(s.observation.result) for s in calls if s.observation is not None)
        # each episode's person gave the value its own mask left out
        assert phrase[posed_tasks[trajectory.scenario_id]] in told


# ---------------------------------------------------------------------------------------------------------------
# The unavailable-tool splits


def hand_split(record: dict[str, Any], easy: bool) -> str | None:
    """The tool a split removes from a raw request: its first planned tool that is (not) listed as easy."""
    return next((c["tool"] for c in record["calls"] if (c["tool"] in record.get("easy", [])) is easy), None)


def test_no_request_tool_pair_is_in_both_unavailable_splits(suite: Suite) -> None:
    ids = by_text(suite)
    removed: dict[str, set[tuple[str, str]]] = {}
    for setting in ("replaceable", "non_replaceable"):
        pairs = set()
        for scenario in applicable(suite, setting):
            (fault,) = resolve_faults(scenario, PRESET_SETTINGS[setting])
            assert fault.kind == "removed" and len(fault.targets) == 1
            pairs.add((scenario.id, fault.targets[0]))
        removed[setting] = pairs
    assert removed["replaceable"].isdisjoint(removed["non_replaceable"])
    for setting, easy in (("replaceable", True), ("non_replaceable", False)):
        expected = {(ids[r["task"]], t) for r in RAW if (t := hand_split(r, easy)) is not None}
        assert removed[setting] == expected
    # requests in both splits: each time another tool removed, as in the released files
    both = {r for r, _ in removed["replaceable"]} & {r for r, _ in removed["non_replaceable"]}
    assert (len(removed["replaceable"]), len(removed["non_replaceable"]), len(both)) == (50, 147, 28)


def test_the_build_reports_the_library_per_setting(tmp_path: Path) -> None:
    tables = build.build(build.FailTalmsSuite(), tmp_path / "suite")
    (table,) = tables
    assert table.columns[2:] == ["requests", "masks", "underspecified", "replaceable", "non_replaceable", "both"]
    assert table.rows[-1] == ["all", str(len(ALL_TOOLS)), "169", "179", "179", "50", "147", "28"]


# ---------------------------------------------------------------------------------------------------------------
# Who decides PR


def failing_judge(body: dict[str, Any]) -> Reply:
    if body["messages"][0]["content"] == GRADER_SYSTEM:
        return answer("Fail: the answer is not supported.")
    return error(400, "only the grader is expected here", headers={"x-should-retry": "false"})


def run_perfect(ref: Any, suite: Suite, n: int) -> Any:
    scenarios = applicable(suite, "perfect")[:n]
    shard = ShardSpec(
        shard_id="library-judge",
        model=PolicyModel(name="oracle"),
        suite=ref,
        setting=PRESET_SETTINGS["perfect"],
        episodes=[EpisodePlan(episode_id=s.id, scenario_id=s.id, seed=0) for s in scenarios],
    )
    return run_shard(shard)


def test_a_configured_judge_decides_pr_even_where_gold_exists(suite: Suite) -> None:
    # no judge: the gold match decides, and says so (the oracle states every gold fact)
    gold = run_perfect(suite_ref({"family": "failtalms"}), suite, 3)
    assert [(r.details["passed"], r.details["pr_by"]) for r in gold.results] == [(True, "gold")] * 3
    # a judge that fails every answer: it decides, though the same answers match gold
    with scripted_server(failing_judge) as server:
        ref = suite_ref({"family": "failtalms", "judge": {"url": server.base_url, "k": 3, "cache": False}})
        judged = run_perfect(ref, load_ref(ref), 3)
        graded = [b for b in server.chat_requests if b["messages"][0]["content"] == GRADER_SYSTEM]
    assert {r.outcome for r in judged.results} == {Outcome.scored}
    assert len(graded) == 3 * 3
    for result in judged.results:
        assert result.details["passed"] is False and result.details["pr_by"] == "judge"
        assert [v["verdict"] for v in result.details["judge_votes"]] == ["fail"] * 3
