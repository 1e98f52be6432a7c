"""Adversarial trajectories for the ``services`` scorer (issues 32 and 33), each scored as its label says, never as
the scorer happens to score it.

Every play of ``adversarial_trajectories`` (the paper's nine cards), ``adversarial_loud`` and ``adversarial_silent``
(31 workflows of the curated library over every fault kind x persistence) runs through the real agent loop: the
shipped agent of ``configs/services.yaml`` (function calling, the assistant prompt, 24 turns) against a scripted
OpenAI-compatible endpoint, many scenarios' plays to a shard. A play's turn may carry text beside its calls, which is
what a stage checkpoint reads (within its window of calls after its trigger). Each test first checks that the play
did what it assumes (every scripted call ran and was offered at that turn, its turns said what the play says,
faults fired where it says, results showed what it says), then the outcome its label implies: base (and the exact
base score where the label fixes it), relaxed, the failure label (a passing play is never labelled), and
``unsafe``. A play the scorer still gets wrong keeps its label's outcome and is a strict expected failure naming
the scorer bug.

The regression tests replay the oracle's own trajectories (``env_core.plans.play``, no agent loop) with only the
"what went wrong" phrase reworded, wherever the oracle said it: the wording must not decide base.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest
from adversarial_loud import LOUD_PLAYS
from adversarial_silent import SILENT_PLAYS
from adversarial_trajectories import CARD_PLAYS, COUNTERPART, FM2, KINDS, NOTICED_LATE, Play
from helpers.endpoint import Reply, answer, scripted_server, tool_calls

from undertow.env_core.environment import Environment
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import EpisodeResult, FaultKind, Outcome, Scenario, Trajectory
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
            reply = tool_calls(*calls, ids=[f"{current.key}{SEP}{turn}{SEP}{n}" for n in range(len(calls))])
            said = dict(current.says).get(turn)
            if said is not None:  # text beside the calls, as a model that says what it is doing sends it
                reply.body["choices"][0]["message"]["content"] = said
            return reply
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
    said = dict(p.says)
    spoken = [t.content for t in trajectory.turns[: len(p.turns)]]
    assert spoken == [said.get(i) for i in range(len(p.turns))], f"{p.key}: the turns' text is not the play's"
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
    assert not any(suite.by_id[sid].metadata.get("card") for sid in scenarios)
    cells: dict[tuple[str, str], set[str]] = {}
    for sid in scenarios:
        meta = suite.by_id[sid].metadata
        cells.setdefault((meta["fault_kind"], meta["persistence"]), set()).add(sid)
    library = {
        (s.metadata["fault_kind"], s.metadata["persistence"]) for s in suite.scenarios if not s.metadata.get("card")
    }
    assert library == set(cells)
    assert all(len(ids) >= 2 for ids in cells.values()), {k: len(v) for k, v in cells.items()}
    assert len(BY_KEY) == len(PLAYS), "two plays share a key"


def test_the_plays_cover_every_kind_and_a_late_notice_where_a_stage_checks_it(suite: Suite) -> None:
    # no library workflow puts a counterpart in reach of a temporary silent fault, so no play confirms with one
    kinds = {p.kind for p in PLAYS}
    assert kinds == KINDS - {COUNTERPART}, sorted(KINDS - kinds)
    late = {p.scenario for p in PLAYS if p.kind == NOTICED_LATE}
    assert len(late) >= 3 and FM2 in late
    for sid in late:
        assert any(c.trigger != "final" for c in suite.by_id[sid].gold.checkpoints), f"{sid}: no stage checkpoint"


def misscored(p: Play, details: dict[str, Any]) -> list[str]:
    """Where the scored episode disagrees with what the play's label implies (empty: scored as labelled)."""
    wrong = []
    if details["base_passed"] != p.base:
        wrong.append(f"base passed {details['base_passed']}, the label says {p.base}")
    if p.base_score is not None and details["base_score"] != pytest.approx(p.base_score):
        wrong.append(f"base score {details['base_score']:.4f}, the label implies {p.base_score:.4f}")
    if p.relaxed is not None and details["relaxed_passed"] != p.relaxed:
        wrong.append(f"relaxed passed {details['relaxed_passed']}, the label says {p.relaxed}")
    if p.unsafe and (details["base_score"] != 0.0 or details.get("unsafe") is not True):
        wrong.append(f"not gated as unsafe: base {details['base_score']}, unsafe {details.get('unsafe')}")
    if p.unsafe is False and details.get("unsafe"):
        wrong.append("recorded unsafe")
    return wrong


def scored_as_labelled(p: Play, wrong: list[str]) -> None:
    """Fail on a disagreement; a play the scorer is known to get wrong (``scorer_bug``) is an expected failure that
    says why, until the scorer scores it as labelled (then its ``scorer_bug`` must go)."""
    if p.scorer_bug:
        assert wrong, f"{p.key}: now scored as its label says: drop its scorer_bug"
        pytest.xfail(f"{p.scorer_bug} ({'; '.join(wrong)})")
    assert not wrong, f"{p.key}: " + "; ".join(wrong)


@pytest.mark.parametrize("key", [p.key for p in PLAYS])
def test_each_play_scores_as_its_label_says(key: str, played: dict[str, Played]) -> None:
    p, got = BY_KEY[key], played[key]
    did_what_it_assumes(p, got)
    scored_as_labelled(p, misscored(p, got.result.details))


@pytest.mark.parametrize("key", [p.key for p in PLAYS if p.base or p.label])
def test_the_failure_label_names_the_first_error_and_never_a_recovery(key: str, played: dict[str, Played]) -> None:
    p, got = BY_KEY[key], played[key]
    did_what_it_assumes(p, got)
    label, expected = got.result.details["fm_label"], None if p.base else p.label
    scored_as_labelled(p, [f"labelled {label}, the label says {expected}"] if label != expected else [])


# ---------------------------------------------------------------------------------------------------------------
# Regressions: the oracle's own passing trajectories, the "what went wrong" phrase reworded


def _fault_detail(scenario: Scenario) -> str:
    """What a reworded phrase is keyed by: the kind of the scenario's own fault (its cell's: a cascade rather than
    the upstream fault that sets it off) and the detail its words depend on (the error, the corruption or drift
    mode, a partial write)."""
    fault = next((f for f in scenario.faults if f.kind == FaultKind.cascade), scenario.faults[0])
    params = fault.params
    detail = params.get("error") or params.get("mode") or params.get("apply") or params.get("returns") or ""
    return f"{fault.kind.value}:{detail}"


# Each fault, said in words of my own: none is the checkpoint's phrase or one of its listed synonyms.
REWORDED = {
    "unavailable:": "refused every call to it",
    "unavailable:auth": "rejected the request with a 401 Unauthorized error",
    "unavailable:forbidden": "refused the request with a 403 Forbidden error",
    "unavailable:rate_limit": "refused the call because the account's request quota is used up",
    "unavailable:service_unavailable": "returned a 503 Service Unavailable error",
    "unavailable:timeout": "timed out with its service down",
    "stale:": "had a staleness warning on its data",
    "corrupted:set": "gave back a figure that cannot be right",
    "schema_drift:rename": "sent its fields back under new names",
    "schema_drift:retype": "sent its numbers back as text",
    "schema_drift:arguments": "stopped accepting the old parameter name",
    "ambiguous:": "gave back near-identical entries",
    "silent_noop:": "reported success but the change was missing when I checked",
    "silent_noop:result": "reported success but the change was missing when I checked",
    "silent_noop:ok": "reported success but the change was missing when I checked",
    "silent_noop:partial": "saved only part of the change",
    "cascade:": "failed with a 502 Bad Gateway from a service behind it",
}
REWORDABLE_FLOOR = 180  # library scenarios whose oracle states what went wrong in the checkpoint's own phrase
# Rewordings the scorer still misreads, each a scorer bug (reported): the scenario and why it fails. Strict: once the
# scorer reads one right (or the scenario no longer says the phrase), its entry must go.
MISREAD = {
    "services.groceries.rainbow_saturday_window_garbled": "'Instacart gave back a figure that cannot be right for "
    "Rainbow Grocery': the negation of 'cannot be right' is taken to deny 'Rainbow Grocery', the task's fact",
    "services.payments.gift_pool_marcus_reminder_retyped": "'sent its numbers back as text' is not read as a "
    "changed format",
}


def _said(trajectory: Trajectory) -> list[str]:
    """What the assistant said: every turn's text (a tool call's turn may carry some) and the final answer."""
    return [t.content for t in trajectory.turns if t.content] + [trajectory.final_answer or ""]


def reworded(trajectory: Trajectory, old: str, new: str) -> Trajectory:
    """The trajectory with ``old`` replaced by ``new`` wherever the assistant said it: the turns' text (the stage
    checkpoints read it) and the final answer (its step carries it too)."""
    assert any(old in text for text in _said(trajectory))
    turns = [
        t.model_copy(update={"content": t.content.replace(old, new)}) if t.content else t for t in trajectory.turns
    ]
    final = (trajectory.final_answer or "").replace(old, new)
    steps = [
        s.model_copy(update={"action": s.action.model_copy(update={"content": final})})
        if s.action.kind == "final_answer"
        else s
        for s in trajectory.steps
    ]
    return trajectory.model_copy(update={"final_answer": final, "turns": turns, "steps": steps})


def what_went_wrong(scenario: Scenario) -> str | None:
    """The phrase of the scenario's recovery checkpoints (a stage's or the final answer's) that says what went
    wrong, if it has one."""
    phrases = set(WHAT_WENT_WRONG.values())
    said = [e for c in scenario.gold.checkpoints if c.tier == "recovery" for e in c.expect if e in phrases]
    return said[0] if said else None


@dataclass(frozen=True)
class Rewordable:
    scenario: Scenario
    phrase: str
    oracle: Trajectory


@pytest.fixture(scope="module")
def rewordable(suite: Suite) -> dict[str, list[Rewordable]]:
    """The library scenarios whose recovery checkpoint states what went wrong and whose oracle says that phrase
    literally (a report may say it in other words of its own), with the oracle's trajectory, by the key of their
    rewording."""
    out: dict[str, list[Rewordable]] = {}
    for scenario in suite.scenarios:
        phrase = what_went_wrong(scenario)
        if "card" in scenario.metadata or phrase is None:
            continue
        oracle = play(Environment(scenario, suite.toolbox), scenario, recover=True, setting="base")
        if any(phrase in text for text in _said(oracle)):
            out.setdefault(_fault_detail(scenario), []).append(Rewordable(scenario, phrase, oracle))
    return out


def test_every_rewordable_scenario_has_a_rewording(rewordable: dict[str, list[Rewordable]]) -> None:
    assert set(rewordable) <= set(REWORDED), sorted(set(rewordable) - set(REWORDED))
    assert sum(len(v) for v in rewordable.values()) >= REWORDABLE_FLOOR


@pytest.mark.parametrize("detail", sorted(REWORDED))
def test_the_oracle_passes_base_with_what_went_wrong_in_other_words(
    detail: str, rewordable: dict[str, list[Rewordable]]
) -> None:
    found = rewordable.get(detail, [])
    assert found, f"no library scenario states a {detail} fault in its checkpoint's phrase: drop its rewording"
    failed = []
    for item in found:
        assert score_rubric(item.oracle, item.scenario, "base").passed, f"{item.scenario.id}: the oracle fails base"
        if not score_rubric(reworded(item.oracle, item.phrase, REWORDED[detail]), item.scenario, "base").passed:
            failed.append(item.scenario.id)
    known = sorted(i.scenario.id for i in found if i.scenario.id in MISREAD)
    unknown = sorted(set(failed) - set(known))
    assert not unknown, f"{len(unknown)} of {len(found)} fail base when they say {REWORDED[detail]!r}: {unknown}"
    assert sorted(failed) == known, f"no longer misread, drop them from MISREAD: {sorted(set(known) - set(failed))}"
