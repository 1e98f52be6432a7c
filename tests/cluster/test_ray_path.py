"""The real Ray path: planning, worker actors, the run store, and the CLI end to end."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.scheduler import execute
from undertow.cluster.store import RunStore, StoreError
from undertow.scoring.summary import summarize


def sweep(tmp_path: Path, **changes: object) -> SweepConfig:
    data = {
        "name": "raytest",
        "models": ["oracle", "naive", "random"],
        "suites": ["smoke"],
        "settings": ["clean", "first_tried", "impossible"],
        "seeds": [0],
        "run": {"store": str(tmp_path), "shard_size": 8},
    }
    return SweepConfig.model_validate({**data, **changes})


def test_each_policy_through_ray_records_every_episode_exactly_once(tmp_path: Path, ray_local: None) -> None:
    manifest = plan_sweep(sweep(tmp_path))
    store = RunStore(tmp_path / manifest.run_id)
    store.write_manifest(manifest)
    committed: list[str] = []
    execution = execute(manifest, store, workers=2, on_commit=lambda out: committed.append(out.shard_id))

    planned = [e.episode_id for s in manifest.shards for e in s.episodes]
    results = store.results()
    assert manifest.n_episodes == 3 * 3 * 35 == len(planned) == len(set(planned))
    assert sorted(r.episode_id for r in results) == sorted(planned)
    assert sorted(committed) == sorted(s.shard_id for s in manifest.shards) == sorted(execution.committed)
    assert store.committed() == {s.shard_id for s in manifest.shards}
    # the episodes ran in Ray worker processes, not in the driver
    workers = {r.worker for r in results}
    assert workers and all(not w.endswith(f":{os.getpid()}") for w in workers)
    traces = list(store.trajectories())
    assert Counter(t.episode_id for t in traces) == Counter(planned)

    rows = {(r.model, r.setting): r for r in summarize(results)}
    assert rows["oracle", "clean"].accuracy == rows["oracle", "first_tried"].accuracy == 1.0
    assert rows["oracle", "impossible"].accuracy == 0.0 and rows["oracle", "impossible"].gave_up_rate == 1.0
    assert rows["naive", "clean"].accuracy == 1.0 and rows["naive", "first_tried"].accuracy == 0.0
    random = rows["random", "clean"].accuracy
    assert random is not None and random < 0.25
    assert all(r.outcomes["infra_error"] == 0 for r in rows.values())


def test_shard_ids_are_content_addressed(tmp_path: Path) -> None:
    first, again = plan_sweep(sweep(tmp_path)), plan_sweep(sweep(tmp_path))
    assert [s.shard_id for s in first.shards] == [s.shard_id for s in again.shards]
    changed = plan_sweep(sweep(tmp_path, agent={"max_turns": 5}))
    assert not {s.shard_id for s in first.shards} & {s.shard_id for s in changed.shards}
    assert all(len(s.episodes) <= 8 for s in first.shards)


def test_a_manifest_is_written_once(tmp_path: Path) -> None:
    manifest = plan_sweep(sweep(tmp_path))
    store = RunStore(tmp_path / manifest.run_id)
    store.write_manifest(manifest)
    with pytest.raises(StoreError, match="already exists"):
        store.write_manifest(manifest)


def test_executing_a_finished_run_again_runs_nothing(tmp_path: Path, ray_local: None) -> None:
    manifest = plan_sweep(sweep(tmp_path, models=["oracle"], settings=["clean"]))
    store = RunStore(tmp_path / manifest.run_id)
    store.write_manifest(manifest)
    assert len(execute(manifest, store).committed) == len(manifest.shards)
    before = {p: p.stat().st_mtime_ns for p in (store.folder / "results").iterdir()}
    assert execute(manifest, store).committed == []
    assert {p: p.stat().st_mtime_ns for p in (store.folder / "results").iterdir()} == before
