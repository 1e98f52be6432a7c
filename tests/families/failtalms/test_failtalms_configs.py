"""FAIL-TaLMs through the real CLI on Ray: the shipped ``configs/failtalms.yaml`` runs the offline library under the
paper's settings (with and without Ask-and-Help) and the paper's agent protocol with the built-in policies, and the
report prints PR / Aware / Unexp / Skip / Inter per setting. (What a real model is sent under that protocol is
checked on a scripted endpoint in ``test_failtalms_protocol.py``.)"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from helpers.cli import UNDERTOW
from helpers.paths import CONFIGS

from undertow.cluster.store import RunStore
from undertow.env_core.failtalms.prompts import HUMAN_TOOL
from undertow.env_core.model import EpisodeResult
from undertow.scoring.stats import wilson_interval

pytestmark = pytest.mark.slow  # the shipped config as shipped: its settings need the whole library


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    store = tmp_path_factory.mktemp("failtalms-run")
    done = subprocess.run(
        [UNDERTOW, "run", str(CONFIGS / "failtalms.yaml"), "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (folder,) = [p for p in store.iterdir() if (p / "manifest.json").is_file()]
    return folder, done.stdout


def cells(folder: Path) -> dict[tuple[str, str], list[EpisodeResult]]:
    out: dict[tuple[str, str], list[EpisodeResult]] = defaultdict(list)
    for r in RunStore(folder).results():
        out[(r.model, r.setting)].append(r)
    return out


def rate(rows: list[EpisodeResult], key: str, value: object = True) -> float:
    return sum(r.details[key] == value for r in rows) / len(rows)


def test_the_oracle_passes_perfect_and_underspecified_when_it_may_ask(shipped: tuple[Path, str]) -> None:
    by = cells(shipped[0])
    assert all(r.outcome.judged for rows in by.values() for r in rows)
    assert rate(by["oracle", "perfect"], "passed") == 1.0
    assert rate(by["oracle", "underspecified_aah"], "passed") == 1.0
    assert rate(by["oracle", "underspecified_aah"], "asked_human") == 1.0
    # without anyone to ask, it says so and skips; where no tool can solve the task, it answers No
    for setting in ("underspecified", "non_replaceable", "non_replaceable_aah"):
        assert rate(by["oracle", setting], "awareness", "no") == 1.0 and rate(by["oracle", setting], "skipped") == 1.0
    # a missing tool a person could stand in for is a doubt (IDK, aware under the authors' metrics), not a skip
    assert (
        rate(by["oracle", "replaceable"], "awareness", "idk") == 1.0
        and rate(by["oracle", "replaceable"], "skipped") == 0
    )
    # a person can stand in for a replaceable tool: asked to do its work by hand, and the task done
    assert rate(by["oracle", "replaceable_aah"], "passed") == 1.0
    assert rate(by["oracle", "replaceable_aah"], "asked_human") == 1.0
    assert len(by["oracle", "perfect"]) >= 90 and len(by["oracle", "underspecified"]) >= 90
    assert sum(len(by["oracle", s]) for s in ("perfect", "underspecified", "replaceable", "non_replaceable")) >= 150


def test_the_episodes_ran_the_papers_protocol(shipped: tuple[Path, str]) -> None:
    store = RunStore(shipped[0])
    assert store.manifest().config["agent"]["prompt"] == "failtalms"
    oracle = [t for t in store.trajectories() if t.model == "oracle"]
    for trajectory in oracle:
        assert len([turn for turn in trajectory.turns if turn.index >= 0]) <= 5  # at most 5 steps
        if trajectory.setting == "perfect":  # both questions, the tool answer counted
            assert len([turn for turn in trajectory.turns if turn.index < 0]) == 2
            assert trajectory.awareness is not None and trajectory.awareness.question == "tool"
        if not trajectory.skipped and trajectory.outcome == "scored":  # answered through Finish
            assert [c.name for c in trajectory.turns[-1].tool_calls] == ["Finish"]
    asked = [
        step.action.tool_call
        for t in oracle
        if t.setting.endswith("_aah")
        for step in t.steps
        if step.action.tool_call is not None and step.action.tool_call.name == HUMAN_TOOL
    ]
    assert asked and all(call.arguments["requires_input"] is True for call in asked)


def test_the_naive_policy_never_doubts_and_never_asks(shipped: tuple[Path, str]) -> None:
    by = cells(shipped[0])
    assert rate(by["naive", "perfect"], "passed") == 1.0
    for setting in ("underspecified", "underspecified_aah", "non_replaceable"):
        assert rate(by["naive", setting], "awareness", "yes") == 1.0
        assert rate(by["naive", setting], "passed") == 0.0
    assert rate(by["naive", "underspecified_aah"], "asked_human") == 0.0


def test_the_report_prints_the_papers_metrics_per_setting(shipped: tuple[Path, str]) -> None:
    text = shipped[1]
    assert "FAIL-TaLMs Table 1" in text
    for column in ("PR", "Aware", "Unexp", "Skip", "Inter"):
        assert column in text
    oracle = {line.split("   ")[1].strip(): line for line in text.splitlines() if line.startswith(" oracle ")}
    n = len(cells(shipped[0])["oracle", "perfect"])
    low, _ = wilson_interval(n, n)
    assert f"1.00 [{low:.2f}–1.00]" in oracle["Perfect"] and f" {n} " in oracle["Perfect"]
    assert "Under-specified + AAH" in oracle and "No-tools" in oracle
