"""Tracking on the real tracking_stack, through the CLI as users run it: a sweep's store on SeaweedFS and its runs on an
MLflow server (artifacts in the same S3), read back and checked against the local results; an outage of either
service mid-run; and a local MLflow folder."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers.cli import UNDERTOW
from helpers.tracking_stack import BUCKET, TrackingStack

from undertow.cluster.store import RunStore, parquet_rows
from undertow.scoring.summary import summarize

pytestmark = pytest.mark.tracking  # the real S3 and MLflow servers

SECTIONS = ("summary", "plots", "recovery", "comparisons", "families", "trace", "about")


def write_config(folder: Path, name: str, latency_s: float = 0.0, **run: object) -> Path:
    config = {
        "name": name,
        "models": [
            {"name": "oracle", "size_b": 7, "latency_s": latency_s},
            {"name": "naive", "size_b": 1, "latency_s": latency_s},
        ],
        "suites": [{"family": "smoke", "limit": 12}],
        "settings": ["clean", "first_tried"],
        "run": {"shard_size": 6, "workers": 2, **run},
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def cli_env(tracking_stack: TrackingStack) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MLFLOW_"))}
    return {**env, **tracking_stack.env(), "COLUMNS": "160"}


def cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(UNDERTOW), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=400, check=False
    )


def local_copy(folder: Path) -> RunStore:
    """The local copy of an S3 run, read as a plain folder (no S3 involved)."""
    (run_dir,) = [p.parent for p in folder.glob("*/manifest.json")]
    return RunStore(run_dir)


def s3_objects(tracking_stack: TrackingStack, prefix: str) -> dict[str, bytes]:
    client = tracking_stack.s3_client()
    keys = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        keys += [o["Key"] for o in page.get("Contents", [])]
    return {k.removeprefix(prefix): client.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in keys}


def local_objects(store: RunStore) -> dict[str, bytes]:
    return {k: store.local.get(k) for k in store.local.list_keys() if k != "origin.json"}


def mlflow_runs(url: str, experiment: str, run_id: str) -> tuple[object, object, dict[tuple[str, str], object]]:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=url)
    found = client.get_experiment_by_name(experiment)
    assert found is not None, f"no MLflow experiment {experiment}"
    runs = client.search_runs([found.experiment_id], filter_string=f"tags.`undertow.run_id` = '{run_id}'")
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 1, [r.data.tags for r in runs]
    children = {(r.data.tags["undertow.model"], r.data.tags["undertow.setting"]): r for r in runs if r not in parents}
    return client, parents[0], children


def check_mlflow_matches(client, parent, children, store: RunStore, tmp_path: Path) -> None:
    """Every group's numbers in MLflow equal the ones computed from the store; the parent has its artifacts."""
    manifest = store.manifest()
    results = store.results()
    rows = {(r.model, r.setting): r for r in summarize(results)}
    assert set(children) == set(rows) and len(children) == 4
    for key, child in children.items():
        metrics, params = child.data.metrics, child.data.params
        assert metrics["n"] == rows[key].n == 12
        assert metrics["accuracy"] == pytest.approx(rows[key].accuracy)
        assert metrics["accuracy_ci_low"] == pytest.approx(rows[key].ci_low)
        assert metrics["outcome.scored"] == rows[key].outcomes["scored"]
        assert metrics["tokens.prompt"] == rows[key].prompt_tokens
        assert "time.episode_s" in metrics and "accuracy_cluster_ci_high" in metrics
        assert params["model.name"] == key[0] and params["setting"] == key[1]
        assert params["suite.data_hash"] == manifest.suites[0].content_hash
        assert params["code_version"] == manifest.versions["undertow"]
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.info.status == "FINISHED"
    # naive solves every clean episode and none once the first tool it tries is down; oracle recovers
    assert children[("naive", "first_tried")].data.metrics["recovery_gap.estimate"] == pytest.approx(1.0)
    assert children[("oracle", "first_tried")].data.metrics["recovery_gap.estimate"] == pytest.approx(0.0)
    assert parent.data.params["n_episodes"] == "48"
    names = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"report.html", "results.parquet", "analysis.json", "manifest.json", "plots"} <= names
    plots = {a.path for a in client.list_artifacts(parent.info.run_id, "plots")}
    assert {"plots/accuracy_vs_size.png", "plots/clean_vs_faulted.png", "plots/outcomes.png"} <= plots
    downloaded = Path(client.download_artifacts(parent.info.run_id, "", str(tmp_path / "artifacts")))
    table = parquet_rows((downloaded / "results.parquet").read_bytes())
    assert sorted((r["episode_id"], r["solved"]) for r in table) == sorted((r.episode_id, r.solved) for r in results)
    html = (downloaded / "report.html").read_text()
    assert all(f'id="{section}"' in html for section in SECTIONS)


def test_a_sweep_to_s3_and_an_mlflow_server_reads_back_as_the_local_results(
    tracking_stack: TrackingStack, tmp_path: Path
) -> None:
    prefix = f"tracked/{tmp_path.name}"
    config = write_config(tmp_path, "tracked", store=f"s3://{BUCKET}/{prefix}")
    env = cli_env(tracking_stack)
    done = cli("run", str(config), f"tracking.mlflow_uri={tracking_stack.mlflow_url}", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MLflow: http://127.0.0.1" in done.stdout and "unreachable" not in done.stderr
    store = local_copy(tmp_path / "runs")
    manifest = store.manifest()
    assert len(store.results()) == 48 and len(manifest.shards) == 8

    # S3 holds exactly the local copy, byte for byte
    remote = s3_objects(tracking_stack, f"{prefix}/{manifest.run_id}/")
    local = local_objects(store)
    assert set(remote) == set(local) and all(remote[k] == local[k] for k in local)
    assert sum(k.startswith("results/") for k in remote) == 8
    assert sum(len(parquet_rows(remote[k])) for k in remote if k.startswith("results/")) == 48

    client, parent, children = mlflow_runs(tracking_stack.mlflow_url, "tracked", manifest.run_id)
    check_mlflow_matches(client, parent, children, store, tmp_path)
    # logged as shards committed, not only at the end: each group's two shards gave steps 1 and 2
    history = client.get_metric_history(children[("oracle", "clean")].info.run_id, "n")
    assert sorted({m.step for m in history}) == [1, 2] and min(m.value for m in history) == 6
    # the MLflow server keeps its artifacts in the same S3
    assert any(k.endswith(f"{parent.info.run_id}/artifacts/report.html") for k in s3_objects(tracking_stack, "mlflow/"))

    # another machine reads the run from S3 alone
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    uri = f"s3://{BUCKET}/{prefix}/{manifest.run_id}"
    shown = cli("report", uri, "--format", "json", "--html", "report.html", cwd=elsewhere, env=env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == {
        "schema_version": 1,
        "rows": [row.model_dump(mode="json") for row in summarize(store.results())],
    }
    assert 'id="trace"' in (elsewhere / "report.html").read_text()
    # nothing is missing, so sync has nothing to do
    again = cli("sync", manifest.run_id, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    assert "uploaded" not in again.stdout and "(0 child run(s) updated)" in again.stdout


def _run_until_committed(args: list[str], cwd: Path, env: dict[str, str], folder: Path, count: int):
    """Start `undertow run` and return it once ``count`` shards are committed in ``folder`` (the local copy)."""
    process = subprocess.Popen(
        [str(UNDERTOW), *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and len(list(folder.glob("*/results/*.parquet"))) < count:
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)
    return process


@contextlib.contextmanager
def outage_mid_run(
    tracking_stack: TrackingStack, tmp_path: Path, service: str, config: Path
) -> Iterator[tuple[str, str]]:
    """`undertow run` of ``config`` (in tmp_path, local copy in tmp_path/runs), with ``service`` stopped once two
    shards are committed: yields the finished run's stdout and stderr while the service is still down, and starts
    it again on the way out."""
    args = ["run", str(config), f"tracking.mlflow_uri={tracking_stack.mlflow_url}"]
    process = _run_until_committed(args, tmp_path, cli_env(tracking_stack), tmp_path / "runs", 2)
    try:
        tracking_stack.down(service)
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stdout + stderr
        yield stdout, stderr
    finally:
        tracking_stack.up(service)


def test_an_s3_outage_mid_run_loses_nothing_and_sync_completes_the_upload(
    tracking_stack: TrackingStack, tmp_path: Path
) -> None:
    prefix = f"outage/{tmp_path.name}"
    # slow policies (about 8 s of shards left when S3 stops): the outage lands while most shards still run
    config = write_config(tmp_path, "s3outage", latency_s=0.5, store=f"s3://{BUCKET}/{prefix}")
    env = cli_env(tracking_stack)
    with outage_mid_run(tracking_stack, tmp_path, "s3", config) as (_, stderr):
        assert "unreachable" in stderr and "undertow sync" in stderr
        store = local_copy(tmp_path / "runs")
        manifest = store.manifest()
        # nothing lost: every shard is in the local copy, every episode once
        assert store.committed() == {s.shard_id for s in manifest.shards}
        assert sorted(r.episode_id for r in store.results()) == sorted(
            e.episode_id for s in manifest.shards for e in s.episodes
        )
    remote = s3_objects(tracking_stack, f"{prefix}/{manifest.run_id}/")
    missing = set(local_objects(store)) - set(remote)
    assert any(k.startswith("results/") for k in missing), "the outage should have kept some shards off S3"

    synced = cli("sync", manifest.run_id, cwd=tmp_path, env=env)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert f"uploaded {len(missing)} object(s)" in synced.stdout
    remote = s3_objects(tracking_stack, f"{prefix}/{manifest.run_id}/")
    local = local_objects(store)
    assert set(remote) == set(local) and all(remote[k] == local[k] for k in local)
    # MLflow's artifacts live in the same S3: they failed during the outage and sync logged them
    client, parent, children = mlflow_runs(tracking_stack.mlflow_url, "s3outage", manifest.run_id)
    check_mlflow_matches(client, parent, children, store, tmp_path)
    assert cli("sync", manifest.run_id, cwd=tmp_path, env=env).returncode == 0  # and again: idempotent


def test_an_mlflow_outage_mid_run_is_logged_by_sync(tracking_stack: TrackingStack, tmp_path: Path) -> None:
    config = write_config(tmp_path, "mlflowoutage", latency_s=0.25, store=str(tmp_path / "runs"))
    with outage_mid_run(tracking_stack, tmp_path, "mlflow", config) as (_, stderr):
        assert "MLflow (http://127.0.0.1" in stderr and "undertow sync" in stderr
    store = local_copy(tmp_path / "runs")
    assert len(store.results()) == 48
    synced = cli(
        "sync", store.manifest().run_id, "--store", str(tmp_path / "runs"), cwd=tmp_path, env=cli_env(tracking_stack)
    )
    assert synced.returncode == 0, synced.stdout + synced.stderr
    client, parent, children = mlflow_runs(tracking_stack.mlflow_url, "mlflowoutage", store.manifest().run_id)
    check_mlflow_matches(client, parent, children, store, tmp_path)


def test_a_local_mlflow_folder_needs_no_server(tmp_path: Path) -> None:
    """`tracking.mlflow_uri: mlruns` (a folder): a sqlite-backed store and artifacts in it, no server."""
    config = write_config(tmp_path, "localtracking", store=str(tmp_path / "runs"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    done = cli("run", str(config), "tracking.mlflow_uri=mlruns", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    store = local_copy(tmp_path / "runs")
    client, parent, children = mlflow_runs(
        f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}", "localtracking", store.manifest().run_id
    )
    check_mlflow_matches(client, parent, children, store, tmp_path)
    assert (tmp_path / "mlruns" / "artifacts").is_dir()


def test_sync_and_tracking_bad_input(tmp_path: Path, tracking_stack: TrackingStack) -> None:
    env = cli_env(tracking_stack)
    missing = cli("sync", "no-such-run", "--store", str(tmp_path), cwd=tmp_path, env=env)
    assert missing.returncode == 2 and "run 'no-such-run' not found" in missing.stderr
    # a store nobody can reach is refused before anything runs
    config = write_config(tmp_path, "unreachable", store="s3://undertow/x", s3_endpoint_url="http://127.0.0.1:9")
    refused = cli("run", str(config), cwd=tmp_path, env=env)
    assert refused.returncode == 2 and "S3 store s3://undertow/x/" in refused.stderr
    assert "unreachable" in refused.stderr and "nothing was run" in refused.stderr
    # a tracking server that is down does not stop an evaluation; sync says it is still down
    down = write_config(tmp_path, "trackingdown", store=str(tmp_path / "runs"))
    done = cli("run", str(down), "tracking.mlflow_uri=http://127.0.0.1:9", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "MLflow (http://127.0.0.1:9)" in done.stderr and "undertow sync" in done.stderr
    run_id = local_copy(tmp_path / "runs").manifest().run_id
    again = cli("sync", run_id, "--store", str(tmp_path / "runs"), cwd=tmp_path, env=env)
    assert again.returncode == 1 and "MLflow (http://127.0.0.1:9)" in again.stderr
