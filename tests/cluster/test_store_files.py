"""The run store's files: one Parquet schema for every shard, store errors that name the store, all-or-nothing
creation of a run, and the accounting of results against the plan."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from undertow.cluster.cli import app
from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import RunManifest, plan_sweep
from undertow.cluster.store import JSON_COLUMNS, RESULT_SCHEMA, RunStore, StoreError
from undertow.env_core.errors import InfraError
from undertow.env_core.model import EpisodeResult
from undertow.workers.runner import ShardOutput, run_shard

# an endpoint nobody listens on: its episodes end in infra_error with an error text, quickly
DOWN = {"name": "down", "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "timeout_s": 2}


def manifest_of(*models: object, limit: int = 3, shard_size: int = 2) -> RunManifest:
    config = {
        "models": list(models),
        "suites": [{"family": "smoke", "limit": limit}],
        "settings": ["clean"],
        "run": {"shard_size": shard_size},
    }
    return plan_sweep(SweepConfig.model_validate(config))


def new_run(root: Path, manifest: RunManifest) -> RunStore:
    store = RunStore.create(root, manifest.run_id)
    store.write_manifest(manifest)
    return store


def test_every_shard_has_one_schema_and_the_results_folder_reads_as_one_table(tmp_path: Path) -> None:
    manifest = manifest_of("oracle", DOWN)
    store = new_run(tmp_path / "runs", manifest)
    outputs = [run_shard(shard) for shard in manifest.shards]
    for output in outputs:
        store.commit(output)
    errors = {o.shard_id: {r.error is None for r in o.results} for o in outputs}
    assert {True} in errors.values() and {False} in errors.values()  # an all-null error shard and a string one
    folder = store.folder / "results"
    table = pq.read_table(folder)
    assert table.num_rows == manifest.n_episodes == 6
    assert table.schema.field("error").type == pa.string() and table.schema.field("error_trace").type == pa.string()
    assert table.schema.field("outcome").type == pa.string() and table.schema.field("details").type == pa.string()
    assert table.schema.field("checkpoint_score").type == pa.float64()
    assert ds.dataset(folder, format="parquet").to_table().num_rows == 6
    for path in folder.glob("*.parquet"):  # every file carries the same schema, names and types
        assert pq.read_schema(path).remove_metadata() == RESULT_SCHEMA
    frame = pd.read_parquet(folder)
    assert len(frame) == 6 and frame["error"].notna().sum() == 3 and frame["error_trace"].notna().sum() == 3
    assert sorted(frame["outcome"].unique()) == ["infra_error", "scored"]
    assert set(RESULT_SCHEMA.names) == set(EpisodeResult.model_fields) and frozenset({"details"}) == JSON_COLUMNS
    # read back through the store: the same results, field for field
    assert [r.model_dump() for r in store.results()] == [r.model_dump() for o in outputs for r in o.results]
    for output in outputs:
        assert store.shard_results(output.shard_id) == output.results


def test_a_store_folder_that_cannot_be_created_is_named_with_its_reason(tmp_path: Path) -> None:
    manifest = manifest_of("oracle")
    with pytest.raises(StoreError) as refused:
        new_run(Path("/proc/self"), manifest)
    assert str(refused.value) == (
        f"store /proc/self: cannot create the run folder /proc/self/{manifest.run_id}: No such file or directory"
    )
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError) as refused:
        new_run(blocker / "runs", manifest)
    assert str(refused.value) == (
        f"store {blocker / 'runs'}: cannot create the run folder {blocker / 'runs' / manifest.run_id}: "
        f"{blocker} is a file"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


# Writes in a process whose files may not grow past 200 bytes (RLIMIT_FSIZE): the manifest cannot be written, as on
# a full disk, after the run folder was created.
SMALL_FILES = """
import resource, signal, sys
from pathlib import Path
from undertow.cluster.plan import RunManifest
from undertow.cluster.store import RunStore, StoreError
manifest = RunManifest.model_validate_json(Path(sys.argv[1]).read_text())
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, (200, resource.RLIM_INFINITY))
for root in sys.argv[2:]:
    try:
        RunStore.create(root, manifest.run_id).write_manifest(manifest)
    except StoreError as exc:
        print(exc)
"""


def test_a_manifest_that_cannot_be_written_leaves_no_run_folder(tmp_path: Path) -> None:
    manifest = manifest_of("oracle")
    plan = tmp_path / "plan.json"
    plan.write_text(manifest.model_dump_json())
    new, old = tmp_path / "new" / "runs", tmp_path / "old" / "runs"
    (old / manifest.run_id).mkdir(parents=True)  # a folder that was there before is not the call's to remove
    done = subprocess.run(
        [sys.executable, "-c", SMALL_FILES, str(plan), str(new), str(old)], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [
        f"store {root}: cannot write {root / manifest.run_id / 'manifest.json'}: File too large" for root in (new, old)
    ]
    assert not (tmp_path / "new").exists()  # every folder this call created is gone, parents too
    assert list((old / manifest.run_id).iterdir()) == []
    assert new_run(new, manifest).manifest() == manifest  # once it can be written, the run is created


def test_accounting_of_a_run_that_matches_its_plan(tmp_path: Path) -> None:
    manifest = manifest_of("oracle", limit=4)
    store = new_run(tmp_path / "runs", manifest)
    first, second = manifest.shards
    assert store.accounting() == store.check_accounting(manifest)
    found = store.accounting()
    assert (found.planned, found.outcomes, found.pending, found.missing, found.extra) == (4, {}, 4, [], [])
    store.commit(run_shard(first))
    found = store.check_accounting()
    assert found.balanced and found.outcomes == {"scored": 2} and found.pending == 2
    store.commit(run_shard(second))
    assert store.check_accounting() == dataclasses.replace(found, outcomes={"scored": 4}, pending=0)


def test_accounting_finds_a_result_recorded_twice_and_one_missing(tmp_path: Path) -> None:
    manifest = manifest_of("oracle", limit=4)
    store = new_run(tmp_path / "forged-runs", manifest)  # left out of the session's accounting check
    first, second = (run_shard(shard) for shard in manifest.shards)
    duplicated, lost = first.results[1].episode_id, second.results[0].episode_id
    # forged outputs, committed as the scheduler commits: one episode twice, one left out
    store.commit(dataclasses.replace(first, results=[*first.results, first.results[1]]))
    store.commit(dataclasses.replace(second, results=second.results[1:]))
    found = store.accounting()
    assert found.missing == [lost] and found.extra == [duplicated] and not found.balanced
    assert found.outcomes == {"scored": 3} and found.pending == 0
    with pytest.raises(InfraError) as unbalanced:
        store.check_accounting()
    assert str(unbalanced.value) == (
        f"run {manifest.run_id} ({store.folder}): results do not match the plan: 1 planned episode(s) of committed "
        f"shards have no result: {lost}; 1 result(s) not planned or recorded twice: {duplicated}"
    )
    # a results object of a shard the plan does not have: all of its episodes are extra
    store.commit(dataclasses.replace(first, shard_id="not-planned"))
    assert store.accounting().extra == [duplicated, *(r.episode_id for r in first.results)]


def test_accounting_names_the_first_few_of_many(tmp_path: Path) -> None:
    manifest = manifest_of("oracle", limit=8, shard_size=8)
    store = new_run(tmp_path / "forged-runs", manifest)  # left out of the session's accounting check
    output = run_shard(manifest.shards[0])
    store.commit(ShardOutput(output.shard_id, [], output.trajectories, output.wall_s))
    planned = [e.episode_id for e in manifest.shards[0].episodes]
    with pytest.raises(InfraError, match=r"results do not match the plan: 8 planned episode\(s\) of committed") as e:
        store.check_accounting()
    assert str(e.value).endswith(f"have no result: {', '.join(planned[:5])}, … (8 in all)")


def test_the_cli_refuses_a_store_it_cannot_create_and_leaves_nothing(
    tmp_path: Path, ray_local: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump({"models": ["oracle"], "suites": [{"family": "smoke", "limit": 2}]}))
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(config), "run.store=/proc/self"])
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert output.startswith("error: store /proc/self: cannot create the run folder /proc/self/sweep-")
    assert output.endswith(": No such file or directory")
    # an S3 store nobody answers: refused before anything runs, and no local copy (origin.json) is left behind
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    overrides = ["run.store=s3://undertow/x", "run.s3_endpoint_url=http://127.0.0.1:9", "run.local_copy=copies"]
    result = runner.invoke(app, ["run", str(config), *overrides])
    assert result.exit_code == 2 and "nothing was run" in result.output, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.yaml"]  # no copies/<run>/origin.json


def test_commit_never_fails_on_a_trajectory_that_slipped_past_the_cleaning(tmp_path: Path) -> None:
    """Model text is cleaned as it enters a trajectory (env_core.untrusted); a value built without validation (here
    on purpose, through ``model_construct``) is cleaned by the commit itself instead of failing the shard."""
    from undertow.env_core.model import Trajectory

    fields = Trajectory(episode_id="e", scenario_id="s", model="m", setting="clean", seed=0).__dict__
    raw = Trajectory.model_construct(**{**fields, "final_answer": "Sofia \ud800"})
    # line and paragraph separators, which JSON strings carry unescaped, do not split a stored line
    separated = Trajectory(episode_id="f", scenario_id="s", model="m", setting="clean", seed=0)
    separated.final_answer = "one\u2028two\u2029three\x85four"
    store = RunStore(tmp_path)
    store.commit(ShardOutput(shard_id="s1", results=[], trajectories=[raw, separated], wall_s=0.0))
    back, again = store.trajectories("s1")
    assert back.final_answer == "Sofia \ufffd"
    assert again.final_answer == "one\u2028two\u2029three\x85four"
