"""The real Ray path: planning, worker actors, the run store, and the CLI end to end."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cluster.config import SweepConfig
from cluster.plan import plan_sweep
from cluster.scheduler import execute
from cluster.store import RunStore, StoreError, parquet_rows
from scoring.summary import summarize

REPO = Path(__file__).resolve().parents[2]
UNDERTOW = Path(sys.executable).parent / "undertow"


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


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "160"}
    return subprocess.run(
        [str(UNDERTOW), *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env, check=False
    )


def test_quickstart_end_to_end_through_the_cli(tmp_path: Path) -> None:
    """What `make demo` does, in a fresh process with its own Ray: table, run folder, and `report` from disk."""
    store = tmp_path / "runs"
    done = _cli("run", str(REPO / "configs" / "quickstart.yaml"), "--store", str(store), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (run_dir,) = store.iterdir()
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert f"{run_dir.name}: 315 episodes" in done.stdout
    for row in (
        "oracle smoke first_tried 35 100.0% 90–100 0.0% scored 35",
        "oracle smoke impossible 35 0.0% 0–10 100.0% scored 35",
        "naive smoke first_tried 35 0.0% 0–10 0.0% scored 35",
    ):
        assert any(line.startswith(row) for line in lines), row
    assert "315/315" in done.stdout

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["run_id"] == run_dir.name
    assert {"undertow", "python", "ray", "pydantic"} <= set(manifest["versions"])
    assert manifest["suites"][0]["n_scenarios"] == 35 and len(manifest["suites"][0]["content_hash"]) == 64
    assert manifest["config"]["settings"][1]["name"] == "first_tried"
    result_rows = sum(len(parquet_rows(p.read_bytes())) for p in (run_dir / "results").glob("*.parquet"))
    trace_lines = sum(len(gzip.decompress(p.read_bytes()).splitlines()) for p in (run_dir / "traces").glob("*.gz"))
    assert result_rows == trace_lines == 315

    report = _cli("report", run_dir.name, "--format", "json", "--store", str(store), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    rows = json.loads(report.stdout)["rows"]
    assert len(rows) == 9
    assert {k for k in rows[0]} >= {"model", "suite", "setting", "n", "accuracy", "ci_low", "ci_high", "outcomes"}
    by_key = {(r["model"], r["setting"]): r for r in rows}
    assert by_key["oracle", "first_tried"]["accuracy"] == 1.0 and by_key["oracle", "first_tried"]["ci_low"] > 0.89
    assert by_key["naive", "first_tried"]["accuracy"] == 0.0
    assert by_key["oracle", "impossible"]["gave_up_rate"] == 1.0
    assert all(r["outcomes"]["scored"] == 35 for r in rows)

    table = _cli("report", str(run_dir), cwd=tmp_path)
    assert table.returncode == 0
    assert "oracle smoke first_tried 35 100.0% 90–100" in " ".join(table.stdout.split())
