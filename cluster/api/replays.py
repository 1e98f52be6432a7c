"""A stored run one episode at a time: its episodes in plan order with how each ended (:func:`episodes`), and
one of them run again from its recorded model replies, without the model (:func:`replay`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from undertow.cluster.config import ConfigError
from undertow.cluster.pairing import pair_episodes
from undertow.cluster.store import RunStore, StoreError
from undertow.env_core.errors import close_match
from undertow.env_core.model import Outcome
from undertow.env_core.suites import load_ref

# What a replay must reproduce of an episode's result, besides the trajectory itself.
REPLAY_FIELDS: frozenset[str] = frozenset(
    {
        "solved",
        "gave_up",
        "expected_give_up",
        "correct",
        "safety_violation",
        "missing_required",
        "checkpoint_score",
        "score",
        "outcome",
        "n_turns",
        "n_tool_calls",
        "n_tool_errors",
        "faults_fired",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "n_parse_failures",
        "n_text_calls",
        "details",
    }
)


@dataclass(frozen=True)
class ReplayOutcome:
    """One episode run again from its recorded model replies; ``differences`` is empty when it reproduced the
    trajectory and every field of :data:`REPLAY_FIELDS`."""

    episode_id: str
    model: str
    suite: str
    setting: str
    scenario_id: str
    n_turns: int
    n_steps: int
    outcome: str
    score: float
    differences: list[str]

    @property
    def identical(self) -> bool:
        return not self.differences


def replay(run: str, episode: str, store: str | None = None) -> ReplayOutcome:
    """Re-run one episode (``episode``: its id, or a unique prefix) from its recorded model replies, without the
    model, and compare the trajectory and the score with the recorded ones."""
    from undertow.workers.replay import ReplayClient, first_difference, stable
    from undertow.workers.runner import Helpers, run_episode, shard_searcher

    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    found = [(s, e) for s in manifest.shards for e in s.episodes if e.episode_id.startswith(episode)]
    if len(found) != 1:
        raise StoreError(f"episode '{episode}' matches {len(found)} episodes of {manifest.run_id}; give more of its id")
    shard, planned = found[0]
    if shard.shard_id not in run_store.committed():
        raise StoreError(f"episode {planned.episode_id} has no committed result yet")
    recorded = next((t for t in run_store.trajectories(shard.shard_id) if t.episode_id == planned.episode_id), None)
    result = next((r for r in run_store.shard_results(shard.shard_id) if r.episode_id == planned.episode_id), None)
    if recorded is None or result is None:
        raise StoreError(f"episode {planned.episode_id} has no recorded trajectory or result")
    if recorded.outcome == Outcome.infra_error:
        raise StoreError(f"episode {planned.episode_id} ended in infra_error: there is no reply to replay; rerun it")
    shard = pair_episodes(manifest.shards).fill(shard, run_store)  # its judge reads the paired answers it read
    suite = load_ref(shard.suite)
    scenario = suite.by_id[planned.scenario_id]
    helpers = Helpers.of(shard)  # emulator, person and judge: their cached replies make the replay the same
    try:
        replayed, trajectory = asyncio.run(
            run_episode(shard, suite, scenario, planned, ReplayClient(recorded), shard_searcher(shard, suite), helpers)
        )
    finally:
        helpers.close()
    keep = set(REPLAY_FIELDS)
    found_differences = [
        first_difference(stable(recorded.model_dump(mode="json")), stable(trajectory.model_dump(mode="json"))),
        first_difference(result.model_dump(mode="json", include=keep), replayed.model_dump(mode="json", include=keep)),
    ]
    return ReplayOutcome(
        episode_id=planned.episode_id,
        model=shard.model.name,
        suite=shard.suite.label,
        setting=shard.setting.name,
        scenario_id=planned.scenario_id,
        n_turns=len(trajectory.turns),
        n_steps=len(trajectory.steps),
        outcome=replayed.outcome.value,
        score=replayed.score,
        differences=[d for d in found_differences if d],
    )


PENDING = "pending"  # the outcome :func:`episodes` gives an episode without a committed result


@dataclass(frozen=True)
class EpisodeRow:
    """One planned episode of a run and how it ended (``outcome``: an :class:`Outcome` value, or ``pending``)."""

    episode_id: str
    model: str
    suite: str
    setting: str
    seed: int
    scenario_id: str
    outcome: str
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def _check_choice(option: str, value: str | None, known: Sequence[str]) -> None:
    if value is not None and value not in known:
        raise ConfigError(f"'{value}' is not one of {', '.join(known)}", field=option, hint=close_match(value, known))


def episodes(
    run: str,
    store: str | None = None,
    *,
    model: str | None = None,
    setting: str | None = None,
    outcome: str | None = None,
) -> list[EpisodeRow]:
    """The episodes of a run in plan order, with the outcome and error of those committed: the ids :func:`replay`
    takes. ``model``, ``setting`` and ``outcome`` (an :class:`Outcome` value or ``pending``) keep only the episodes
    that match; a name the run does not have is refused with the names it has."""
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    _check_choice("--model", model, list(dict.fromkeys(s.model.name for s in manifest.shards)))
    _check_choice("--setting", setting, list(dict.fromkeys(s.setting.name for s in manifest.shards)))
    _check_choice("--outcome", outcome, [*(o.value for o in Outcome), PENDING])
    committed = run_store.committed()
    rows = []
    for shard in manifest.shards:
        if model not in (None, shard.model.name) or setting not in (None, shard.setting.name):
            continue
        results = (
            {r.episode_id: r for r in run_store.shard_results(shard.shard_id)} if shard.shard_id in committed else {}
        )
        for planned in shard.episodes:
            result = results.get(planned.episode_id)
            row = EpisodeRow(
                episode_id=planned.episode_id,
                model=shard.model.name,
                suite=shard.suite.label,
                setting=shard.setting.name,
                seed=planned.seed,
                scenario_id=planned.scenario_id,
                outcome=result.outcome.value if result is not None else PENDING,
                error=result.error if result is not None else None,
            )
            if outcome in (None, row.outcome):
                rows.append(row)
    return rows
