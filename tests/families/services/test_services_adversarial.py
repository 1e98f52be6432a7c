"""Adversarial trajectories for the ``services`` scorer (issue 32), each scored as its label says, never as the
scorer happens to score it.

Every play of ``adversarial_trajectories`` (the paper's nine cards), ``adversarial_loud`` and ``adversarial_silent``
(31 library scenarios over every fault kind x persistence) runs through the real agent loop: the shipped agent of
``configs/services.yaml`` (function calling, the assistant prompt, 24 turns) against a scripted OpenAI-compatible
endpoint, many scenarios' plays to a shard. Each test first checks that the play did what it assumes (every
scripted call ran and was offered at that turn, faults fired where it says, results showed what it says), then the
outcome its label implies: base and relaxed, the failure label (a passing play is never labelled), and ``unsafe``.

The regression tests replay the oracle's own trajectories (``env_core.plans.play``, no agent loop) with only the
"what went wrong" phrase reworded: the wording must not decide base.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest
from adversarial_loud import LOUD_PLAYS
from adversarial_silent import SILENT_PLAYS
from adversarial_trajectories import CARD_PLAYS, Play
from helpers.endpoint import Reply, answer, scripted_server, tool_calls

from undertow.env_core.environment import Environment
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import EpisodeResult, Outcome, Scenario, Trajectory
from undertow.env_core.plans import play
from undertow.env_core.services.build import ServicesSuite
from undertow.env_core.services.library import WHAT_WENT_WRONG
from undertow.env_core.suites import Suite, load_ref
from undertow.scoring.services import score_rubric
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import EndpointModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard

LIBRARY_PLAYS: list[Play] = [*LOUD_PLAYS, *SILENT_PLAYS]
PLAYS: list[Play] = [*CARD_PLAYS, *LIBRARY_PLAYS]
BY_KEY = {p.key: p for p in PLAYS}
GROUPS = 6  # shards played side by side
SEP = "~"  # between the play's key, the turn and the call's place in a tool call's id


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_ref(ServicesSuite())


# ---------------------------------------------------------------------------------------------------------------
# Playing every play through the agent loop, in shards played side by side


@dataclass
class Played:
    result: EpisodeResult
    trajectory: Trajectory
    offered: list[set[str]] = field(default_factory=list)  # the tools the request of each model turn listed


class ScriptedModel:
    """Replies for every play of one shard. Episodes run one at a time in plan order (concurrency 1), so an
    episode's first request takes the next play; later requests name their play in the ids of the calls they echo."""

    def __init__(self, plays: list[Play], tasks: dict[str, str]):
        self.waiting = list(plays)
        self.tasks = tasks
        self.offered: dict[str, list[set[str]]] = {p.key: [] for p in plays}
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request["messages"]
        echoed = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
        with self.lock:
            if echoed:
                key, last, _ = echoed[-1]["tool_calls"][0]["id"].split(SEP)
                current, turn = BY_KEY[key], int(last) + 1
            else:
                current, turn = self.waiting.pop(0), 0
                task = self.tasks[current.scenario]
                if messages[1]["content"] != task:
                    raise AssertionError(f"{current.key}: the episode's task is not its scenario's: {task!r}")
            self.offered[current.key].append({t["function"]["name"] for t in request.get("tools") or []})
        if turn < len(current.turns):
            calls = current.turns[turn]
            return tool_calls(*calls, ids=[f"{current.key}{SEP}{turn}{SEP}{n}" for n in range(len(calls))])
        return answer(current.final)


def play_group(plays: list[Play], tasks: dict[str, str]) -> dict[str, Played]:
    """One shard of plays against a scripted server of its own."""
    model = ScriptedModel(plays, tasks)
    with scripted_server(model) as server:
        shard = ShardSpec(
            shard_id="adversarial",
            model=EndpointModel(name="scripted", base_url=server.base_url, max_retries=0, timeout_s=30, concurrency=1),
            suite=ServicesSuite(),
            setting=PRESET_SETTINGS["base"],
            agent=AgentConfig(protocol="function_calling", prompt="assistant", max_turns=24),  # configs/services.yaml's
            episodes=[EpisodePlan(episode_id=p.key, scenario_id=p.scenario, seed=0) for p in plays],
        )
        output = run_shard(shard)
    return {
        r.episode_id: Played(r, t, model.offered[r.episode_id])
        for r, t in zip(output.results, output.trajectories, strict=True)
    }


@pytest.fixture(scope="module")
def played(suite: Suite) -> dict[str, Played]:
    """Every play, in shards run side by side: an episode mostly waits on its own HTTP round trips."""
    tasks = {p.scenario: suite.by_id[p.scenario].task for p in PLAYS}
    groups = [PLAYS[i::GROUPS] for i in range(GROUPS)]
    with ThreadPoolExecutor(GROUPS) as pool:
        parts = list(pool.map(lambda group: play_group(group, tasks), groups))
    return {key: got for part in parts for key, got in part.items()}


def did_what_it_assumes(p: Play, got: Played) -> None:
    """The played trajectory is the play: scored, its calls made in order (each offered at its turn), its final
    answer given, and every tool result it assumes seen."""
    trajectory = got.trajectory
    assert trajectory.outcome == Outcome.scored, f"{p.key}: {trajectory.outcome} {trajectory.error}"
    steps = trajectory.tool_steps()
    made = [(s.action.tool_call.name, s.action.tool_call.arguments) for s in steps if s.action.tool_call]
    assert made == [call for turn in p.turns for call in turn], f"{p.key}: the calls made are not the play's"
    for index, turn in enumerate(p.turns):
        hidden = {name for name, _ in turn} - got.offered[index]
        assert not hidden, f"{p.key}: turn {index} calls {sorted(hidden)}, which the agent was not offered"
    assert trajectory.final_answer == p.final
    for saw in p.saw:
        seen = steps[saw.step].observation
        assert seen is not None, f"{p.key}: step {saw.step} has no observation"
        content = seen.content()
        assert seen.ok == saw.ok, f"{p.key}: step {saw.step} ok={seen.ok}: {content[:300]}"
        if saw.fault is not None:
            fired = seen.fault.kind.value if seen.fault is not None else "none"
            assert fired == saw.fault, f"{p.key}: step {saw.step} fault {fired}, the play assumes {saw.fault}"
        for text in saw.shows:
            assert text in content, f"{p.key}: step {saw.step} does not show {text!r}: {content[:300]}"
        for text in saw.lacks:
            assert text not in content, f"{p.key}: step {saw.step} shows {text!r}: {content[:300]}"


def test_the_plays_cover_every_card_and_every_fault_kind_and_persistence(suite: Suite) -> None:
    cards = {s.id for s in suite.scenarios if s.metadata.get("card")}
    assert cards == {p.scenario for p in CARD_PLAYS}
    scenarios = {p.scenario for p in LIBRARY_PLAYS}
    assert len(scenarios) >= 30
    cells: dict[tuple[str, str], set[str]] = {}
    for sid in scenarios:
        meta = suite.by_id[sid].metadata
        cells.setdefault((meta["fault_kind"], meta["persistence"]), set()).add(sid)
    library = {(s.metadata["fault_kind"], s.metadata["persistence"]) for s in suite.scenarios if "card" not in s.id}
    assert library == set(cells)
    assert all(len(ids) >= 2 for ids in cells.values()), {k: len(v) for k, v in cells.items()}
    assert len(BY_KEY) == len(PLAYS), "two plays share a key"


@pytest.mark.parametrize("key", [p.key for p in PLAYS])
def test_each_play_scores_as_its_label_says(key: str, played: dict[str, Played]) -> None:
    p, got = BY_KEY[key], played[key]
    did_what_it_assumes(p, got)
    details = got.result.details
    summary = f"{key}: base {details['base_score']:.2f}, relaxed {details['relaxed_passed']}, fm {details['fm_label']}"
    assert details["base_passed"] == p.base, summary
    if p.relaxed is not None:
        assert details["relaxed_passed"] == p.relaxed, summary
    if p.unsafe:
        assert details["base_score"] == 0.0, summary
        assert details.get("unsafe") is True, summary
    elif p.unsafe is not None:
        assert not details.get("unsafe"), summary


@pytest.mark.parametrize("key", [p.key for p in PLAYS if p.base or p.label])
def test_the_failure_label_names_the_first_error_and_never_a_recovery(key: str, played: dict[str, Played]) -> None:
    p, got = BY_KEY[key], played[key]
    did_what_it_assumes(p, got)
    assert got.result.details["fm_label"] == (None if p.base else p.label)


# ---------------------------------------------------------------------------------------------------------------
# Regressions: the oracle's own passing trajectories, the "what went wrong" phrase reworded


def _fault_detail(scenario: Scenario) -> str:
    """What a reworded phrase is keyed by: the fault kind and the detail its words depend on (the error, the
    corruption or drift mode, a partial write)."""
    fault = scenario.faults[-1]  # a cascade's own fault comes after the upstream's transient one
    params = fault.params
    detail = params.get("error") or params.get("mode") or params.get("apply") or params.get("returns") or ""
    return f"{fault.kind.value}:{detail}"


# Each fault, said in words of my own: none is the checkpoint's phrase or one of its listed synonyms.
REWORDED = {
    "unavailable:service_unavailable": "returned a 503 Service Unavailable error",
    "unavailable:auth": "rejected the request with a 401 Unauthorized error",
    "unavailable:forbidden": "refused the request with a 403 Forbidden error",
    "stale:": "had a staleness warning on its data",
    "corrupted:decimal_shift": "showed a number off by a factor of ten",
    "corrupted:duplicate": "listed the same record twice",
    "corrupted:phantom": "listed a record that does not exist",
    "schema_drift:rename": "sent its fields back under new names",
    "schema_drift:retype": "sent every value back wrapped in a list",
    "schema_drift:arguments": "stopped accepting the old parameter name",
    "ambiguous:": "gave back near-identical entries",
    "silent_noop:result": "reported success but the change was missing when I checked",
    "silent_noop:ok": "reported success but the change was missing when I checked",
    "silent_noop:partial": "saved only part of the change",
    "cascade:": "failed with a 502 Bad Gateway from a service behind it",
}


def reworded(trajectory: Trajectory, old: str, new: str) -> Trajectory:
    """The trajectory with ``old`` replaced by ``new`` in its final answer (the last turn and step carry it too)."""
    assert trajectory.final_answer is not None and old in trajectory.final_answer
    final = trajectory.final_answer.replace(old, new)
    turns = [
        t.model_copy(update={"content": final}) if t.content == trajectory.final_answer else t for t in trajectory.turns
    ]
    steps = [
        s.model_copy(update={"action": s.action.model_copy(update={"content": final})})
        if s.action.kind == "final_answer"
        else s
        for s in trajectory.steps
    ]
    return trajectory.model_copy(update={"final_answer": final, "turns": turns, "steps": steps})


def what_went_wrong(scenario: Scenario) -> str | None:
    """The phrase of the scenario's recovery checkpoint that says what went wrong, if it has one."""
    phrases = set(WHAT_WENT_WRONG.values())
    said = [e for c in scenario.gold.checkpoints if c.tier == "recovery" for e in c.expect if e in phrases]
    return said[0] if said else None


@pytest.fixture(scope="module")
def rewordable(suite: Suite) -> dict[str, list[Scenario]]:
    """The library scenarios whose recovery checkpoint states what went wrong, by the key of their rewording."""
    out: dict[str, list[Scenario]] = {}
    for scenario in suite.scenarios:
        if "card" not in scenario.id and what_went_wrong(scenario) is not None:
            out.setdefault(_fault_detail(scenario), []).append(scenario)
    return out


def test_every_rewordable_scenario_has_a_rewording(rewordable: dict[str, list[Scenario]]) -> None:
    assert set(rewordable) <= set(REWORDED), sorted(set(rewordable) - set(REWORDED))
    assert sum(len(v) for v in rewordable.values()) >= 150


@pytest.mark.parametrize("detail", sorted(REWORDED))
def test_the_oracle_passes_base_with_what_went_wrong_in_other_words(
    detail: str, suite: Suite, rewordable: dict[str, list[Scenario]]
) -> None:
    scenarios = rewordable.get(detail, [])
    if not scenarios:
        pytest.skip(f"the built library has no scenario with a {detail} fault")
    failed = []
    for scenario in scenarios:
        oracle = play(Environment(scenario, suite.toolbox), scenario, recover=True, setting="base")
        assert score_rubric(oracle, scenario, "base").passed, f"{scenario.id}: the oracle itself fails base"
        phrase = what_went_wrong(scenario)
        assert phrase is not None
        if not score_rubric(reworded(oracle, phrase, REWORDED[detail]), scenario, "base").passed:
            failed.append(scenario.id)
    assert not failed, f"{len(failed)} of {len(scenarios)} fail base when they say {REWORDED[detail]!r}: {failed}"
