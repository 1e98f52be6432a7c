"""Scoring runs inside the episode's error handling (issue 29): an answer that cannot be compared is the model's
wrong answer, recorded as ``unscorable_answer``; a scorer that fails for any other reason fails its own episode as
``infra_error``, never the shard, and never the neighbours. Episodes run as a Ray worker runs them
(``run_shard``), against a scripted OpenAI-compatible endpoint speaking function calling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.endpoint import Reply, answer, scripted_server
from toy_family.metrics import DETAILS_BUG

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.env_core.model import Outcome
from undertow.env_core.suites import load_ref, suite_ref
from undertow.workers.runner import ShardSpec, run_shard


def one_shard(tmp_path: Path, models: list[Any], suite: dict[str, Any]) -> ShardSpec:
    config = SweepConfig.model_validate(
        {"name": "scoring", "models": models, "suites": [suite], "settings": ["clean"], "run": {"store": str(tmp_path)}}
    )
    (shard,) = plan_sweep(config).shards
    return shard


def test_an_answer_too_deep_or_too_long_is_a_wrong_answer_and_its_neighbours_are_scored(tmp_path: Path) -> None:
    """Function calling: the reply text is the answer. The smoke family's gold is a list of records."""
    deep = "[" * 600 + "1" + "]" * 600
    huge = "[1" + "0" * 400 + "]"  # past float range: compared exactly, so simply wrong
    long_number = "[1" + "0" * 4200 + "]"  # near the longest number Python reads: compared exactly, so wrong
    suite = {"family": "smoke", "limit": 4}
    scenarios = load_ref(suite_ref(suite)).scenarios
    replies = {scenarios[0].task: deep, scenarios[1].task: huge, scenarios[2].task: long_number}

    def reply(request: dict[str, Any]) -> Reply:
        return answer(replies.get(str(request["messages"][1]["content"]), "no idea"))

    with scripted_server(reply) as server:
        model = {"name": "hostile", "kind": "openai", "base_url": server.base_url, "max_retries": 0}
        output = run_shard(one_shard(tmp_path, [model], suite))
    index_of = {s.id: i for i, s in enumerate(scenarios)}
    by_index = {index_of[r.scenario_id]: r for r in output.results}
    assert all(r.outcome == Outcome.scored and not r.solved and not r.correct for r in output.results)
    deep_result = by_index[0]
    assert deep_result.details["unscorable_answer"] == {
        "why": "UnscorableAnswer: nested deeper than 64 levels",
        "answer": "[" * 200 + "… (1,201 characters)",
    }
    for index in (1, 2, 3):
        assert "unscorable_answer" not in by_index[index].details, by_index[index].details


def test_a_scorer_bug_fails_its_episode_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DETAILS_BUG, "1")  # the test family registers itself here; conftest removes it afterwards
    shard = one_shard(tmp_path, ["oracle"], {"family": "toy_family:FAMILY", "countries": 4})
    output = run_shard(shard)
    assert len(output.results) == 4
    broken = [r for r in output.results if r.outcome != Outcome.scored]
    assert len(broken) == 1
    (result,) = broken
    assert result.outcome == Outcome.infra_error  # the harness's bug: excluded from rates, rerunnable
    assert result.error == 'scorer error: KeyError: "a deliberate bug in the toy family\'s details"'
    assert result.error_trace is not None and "metrics.py" in result.error_trace
    assert all(r.correct for r in output.results if r is not result)


def test_numbers_past_float_range_are_compared_exactly_through_the_agent_loop(tmp_path: Path) -> None:
    """Gold answers past 2**53 (a float would merge neighbours) and past float range: the right number in other
    words passes, a neighbouring number in the same words fails."""
    (base,) = [s for s in load_ref(suite_ref("smoke")).scenarios if s.id == "smoke-budget-01"]
    cases = {  # gold -> (an answer in other words that is right, the same words around a wrong number)
        2**53 + 1: ("The budget adds up to 9,007,199,254,740,993 in total.", "The budget is 9007199254740992."),
        10**400: ("[1" + "0" * 400 + "]", "[1" + "0" * 399 + "1]"),
    }
    lines, replies, expected = [], {}, {}
    for n, (gold, answers) in enumerate(cases.items()):
        for right, text in zip((True, False), answers, strict=True):
            task = f"{base.task} (case {n}, {'right' if right else 'wrong'})"
            scenario = base.model_copy(
                update={
                    "id": f"big-{n}-{right}",
                    "task": task,
                    "gold": base.gold.model_copy(update={"answer": [{"total_budget": gold}]}),
                }
            )
            lines.append(scenario.model_dump_json())
            replies[task], expected[scenario.id] = text, right
    (tmp_path / "big.jsonl").write_text("\n".join(lines) + "\n")

    def reply(request: dict[str, Any]) -> Reply:
        return answer(replies[str(request["messages"][1]["content"])])

    with scripted_server(reply) as server:
        model = {"name": "exact", "kind": "openai", "base_url": server.base_url, "max_retries": 0}
        output = run_shard(one_shard(tmp_path, [model], {"family": "smoke", "scenarios": str(tmp_path / "big.jsonl")}))
    assert {r.scenario_id: (r.outcome, r.solved) for r in output.results} == {
        scenario_id: (Outcome.scored, right) for scenario_id, right in expected.items()
    }


def test_a_strict_answer_in_any_fence_form_is_read_and_a_wrong_one_in_a_fence_fails(tmp_path: Path) -> None:
    """Strict matching reads one code fence around the records (env_core.text.strip_fence): the right records in
    fence forms other than ```json ... ``` (an upper-case tag, no tag, a fence the reply never closed) pass; a
    wrong number inside the usual fence fails."""
    (base,) = [s for s in load_ref(suite_ref("smoke")).scenarios if s.id == "smoke-budget-01"]
    gold = json.dumps(base.gold.answer)
    (total,) = base.gold.answer[0].values()
    wrong = json.dumps([{"total_budget": total + 1}])
    cases = {  # reply -> solved
        f"```JSON\n{gold}\n```": True,
        f"```\n{gold}\n```": True,
        f"```json\n{gold}": True,
        f"```json\n{wrong}\n```": False,
    }
    lines, replies, expected = [], {}, {}
    for n, (text, right) in enumerate(cases.items()):
        task = f"{base.task} (case {n})"
        scenario = base.model_copy(update={"id": f"fence-{n}", "task": task})
        lines.append(scenario.model_dump_json())
        replies[task], expected[scenario.id] = text, right
    (tmp_path / "fences.jsonl").write_text("\n".join(lines) + "\n")

    def reply(request: dict[str, Any]) -> Reply:
        return answer(replies[str(request["messages"][1]["content"])])

    suite = {"family": "smoke", "scenarios": str(tmp_path / "fences.jsonl"), "answers": "strict"}
    with scripted_server(reply) as server:
        model = {"name": "fenced", "kind": "openai", "base_url": server.base_url, "max_retries": 0}
        output = run_shard(one_shard(tmp_path, [model], suite))
    assert {r.scenario_id: (r.outcome, r.solved) for r in output.results} == {
        scenario_id: (Outcome.scored, right) for scenario_id, right in expected.items()
    }
