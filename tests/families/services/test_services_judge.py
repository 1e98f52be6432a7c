"""The services checkpoints read by a judge model chosen in the suite config (``judge: {url, name, k}``), over real
HTTP: a scripted OpenAI-compatible server plays the grader, so that its votes are planned. The judge's votes decide
the checkpoints (and so base, relaxed and the episode's score), every vote is kept, and the plan accepts the field
for this family."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from helpers.endpoint import Reply, answer, scripted_server

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import Outcome
from undertow.env_core.suites import suite_ref
from undertow.scoring.services.judging import SYSTEM, read_yes_no
from undertow.workers.clients import PolicyModel
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec, run_shard

# checkpoints: ["thunderstorms", "rain tent"] (1.0), ["out of date"] said within two calls of the stale forecast
# (recovery, 0.5), ["out of date"] in the answer (recovery, 1.0)
CARD = "services.card.FM4"


def grader(refuse: str | None) -> Any:
    """A grader that says yes to every concept but ``refuse``, and counts nothing else as its job."""

    def script(body: dict[str, Any]) -> Reply:
        system, question = body["messages"][0]["content"], body["messages"][-1]["content"]
        assert system == SYSTEM
        concept = re.search(r"Required fact: (.+)", question)
        assert concept is not None
        return answer("No." if refuse is not None and concept[1].startswith(refuse) else "Yes, it says so.")

    return script


def judged_card(url: str) -> ShardOutput:
    ref = suite_ref({"family": "services", "judge": {"url": url, "name": "grader", "k": 3, "cache": False}})
    spec = ShardSpec(
        shard_id="judge",
        model=PolicyModel(name="oracle"),
        suite=ref,
        setting=PRESET_SETTINGS["base"],
        episodes=[EpisodePlan(episode_id="e", scenario_id=CARD, seed=0)],
    )
    return run_shard(spec)


def test_a_judge_that_agrees_passes_the_oracle_and_keeps_every_vote() -> None:
    with scripted_server(grader(None)) as server:
        output = judged_card(server.base_url)
        asked = len(server.chat_requests)
    [result] = output.results
    assert result.outcome == Outcome.scored
    assert result.correct and result.score == 1.0
    assert result.details["base_passed"] is True and result.details["relaxed_passed"] is True
    votes = result.details["concept_votes"]
    # four concepts (one of them at two stages), three votes each, all yes
    assert [v["concept"] for v in votes] == ["thunderstorms", "rain tent", "out of date", "out of date"]
    assert all([x["verdict"] for x in v["votes"]] == ["pass"] * 3 for v in votes)
    assert asked == 12


def test_the_judges_no_decides_a_checkpoint_and_the_episodes_score() -> None:
    with scripted_server(grader("out of date")) as server:
        output = judged_card(server.base_url)
    [result] = output.results
    # the rules read the oracle's narration and report as stating every concept; the judge says the recovery one
    # is not stated: both recovery checkpoints fail, base is the task checkpoint's 1.0 of the weights' 2.5, relaxed
    # (no checkpoints) still passes
    assert result.outcome == Outcome.scored
    assert not result.correct and result.score == 0.4 and result.checkpoint_score == 0.4
    assert result.details["base_passed"] is False and result.details["base_score"] == 0.4
    assert result.details["relaxed_passed"] is True
    refused = [v for v in result.details["concept_votes"] if v["concept"] == "out of date"]
    assert len(refused) == 2 and all([x["verdict"] for x in r["votes"]] == ["fail"] * 3 for r in refused)


def test_a_vote_is_the_replys_first_word() -> None:
    assert read_yes_no("Yes.") == "pass" and read_yes_no("no, it does not") == "fail"
    assert read_yes_no("**Yes**") == "pass"
    assert read_yes_no("It says so.") is None and read_yes_no("") is None


def test_the_plan_accepts_a_judge_for_services(tmp_path: Path) -> None:
    config = SweepConfig.model_validate(
        {
            "name": "judged",
            "models": ["oracle"],
            "suites": [{"family": "services", "limit": 2, "judge": {"url": "http://127.0.0.2:9/v1", "k": 3}}],
            "settings": ["base"],
            "run": {"store": str(tmp_path)},
        }
    )
    manifest = plan_sweep(config)
    assert sum(len(s.episodes) for s in manifest.shards) == 2
