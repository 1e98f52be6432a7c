"""FUXI through the real CLI on Ray: the shipped ``configs/middleware.yaml`` builds the suite from the Spider dev
databases, runs each environment in a suite of its own with the built-in policies (the database tasks under ReAct
with error feedback, the knowledge-base questions under ReAct and under decoupled generation, and the
schema-in-the-prompt baseline), and prints the paper's Tables 1 and 2."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from helpers.cli import run_cli
from helpers.shipped import limits, run_shipped

from undertow.cluster.store import RunStore
from undertow.env_core.model import EpisodeResult, Outcome

LIMIT = 100

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The shipped config, the first 100 tasks of each suite. Every task's oracle is checked on the whole suite by
    the family's tests; the full run is ``make bench``'s."""
    return run_shipped("middleware.yaml", tmp_path_factory.mktemp("middleware-run"), *limits("middleware.yaml", LIMIT))


def cells(folder: Path) -> dict[tuple[str, str, str], list[EpisodeResult]]:
    out: dict[tuple[str, str, str], list[EpisodeResult]] = defaultdict(list)
    for r in RunStore(folder).results():
        out[(r.model, r.suite.split(":")[-1], r.details.get("environment", "?"))].append(r)
    return out


def test_the_oracle_reaches_ex_100_and_f1_1_in_every_mode(shipped: tuple[Path, str]) -> None:
    by = cells(shipped[0])
    assert all(r.outcome == Outcome.scored for rows in by.values() for r in rows)
    assert {(suite, environment) for _, suite, environment in by} == {
        ("database-react", "database"),
        ("kb-react", "kb"),
        ("kb-decoupled", "kb"),
        ("database-no-tools", "database"),
    }  # each suite runs one environment
    database = by["oracle", "database-react", "database"]
    assert len(database) == LIMIT and all(r.details["ex"] and r.details["valid"] for r in database)
    for mode in ("kb-react", "kb-decoupled"):
        kb = by["oracle", mode, "kb"]
        assert len(kb) == LIMIT and all(r.details["f1"] == 1.0 for r in kb)
    baseline = by["oracle", "database-no-tools", "database"]
    assert len(baseline) == LIMIT and all(r.details["ex"] and r.n_tool_calls == 0 for r in baseline)
    decoupled = [r for r in by["oracle", "kb-decoupled", "kb"]]
    assert all(r.n_turns > r.n_tool_calls for r in decoupled)  # a thought and a choice request per step


def test_the_random_policy_fails_and_the_report_prints_both_tables(shipped: tuple[Path, str]) -> None:
    by = cells(shipped[0])
    random_kb = by["random", "kb-react", "kb"]
    assert random_kb and sum(r.details["f1"] for r in random_kb) / len(random_kb) < 0.05
    text = shipped[1]
    assert "FUXI Table 1" in text and "FUXI Table 2" in text
    for column in ("Req. Cont. (N) EX", "Req. Cont. (Y) VA", "Counting F1", "Superlative VA", "Overall F1"):
        assert column in text


def test_a_decoupled_episode_replays_to_the_same_trajectory_and_score(shipped: tuple[Path, str]) -> None:
    by = cells(shipped[0])
    for key in (("oracle", "kb-decoupled", "kb"), ("random", "database-react", "database")):
        episode = by[key][0].episode_id
        replayed = run_cli("replay", shipped[0].name, episode, "--store", str(shipped[0].parent), timeout=300)
        assert replayed.returncode == 0, replayed.stdout + replayed.stderr
        assert "identical" in replayed.stdout
