"""The door works: a family that lives only under tests/ (``tests/toy_family``), named in a sweep by
``module:attribute`` and importable the way a user's own package is (on PYTHONPATH), goes through everything users
run — ``undertow run`` on S3 with MLflow, ``report`` (table, JSON, HTML), ``compare``, ``status`` and ``rerun`` —
without any product file knowing it. Its backend first fails (an infrastructure error), then ``rerun`` completes it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml
from helpers.cli import UNDERTOW
from helpers.paths import TESTS
from helpers.tracking_stack import BUCKET, TrackingStack
from mlflow import MlflowClient


def cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(UNDERTOW), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=400, check=False
    )


def test_a_family_from_outside_the_product_runs_end_to_end(tracking_stack: TrackingStack, tmp_path: Path) -> None:
    broken = tmp_path / "backend-down"
    broken.touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MLFLOW_"))}
    env.update(tracking_stack.env(), COLUMNS="200", PYTHONPATH=str(TESTS), TOY_BACKEND_DOWN=str(broken))
    prefix = f"toy/{tmp_path.name}"
    config = {
        "name": "toy-sweep",
        "models": ["oracle", "naive"],
        "suites": [{"family": "toy_family:FAMILY", "countries": 4}],
        "settings": ["clean", "first_tried"],
        "run": {"store": f"s3://{BUCKET}/{prefix}", "shard_size": 2},
        "tracking": {"mlflow_uri": tracking_stack.mlflow_url},
    }
    (tmp_path / "toy.yaml").write_text(yaml.safe_dump(config))

    # the backend is down: every episode that reaches it is an infrastructure error (under first_tried the one tool
    # is disabled before it is reached: those episodes are scored)
    first = cli("run", "toy.yaml", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "8 episode(s) ended in infra_error" in first.stdout and "toy: lookups per episode" in first.stdout
    (run_dir,) = [p.parent for p in (tmp_path / "runs").glob("*/manifest.json")]
    run_id = run_dir.name
    status = cli("status", run_id, cwd=tmp_path, env=env)
    assert status.returncode == 0, status.stderr
    assert "the toy backend is down" in status.stdout + status.stderr

    # back up: rerun the failed shards; all 16 episodes are now scored, each once
    broken.unlink()
    rerun = cli("rerun", run_id, "--failed", cwd=tmp_path, env=env)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    report = cli("report", run_id, "--format", "json", cwd=tmp_path, env=env)
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert data["schema_version"] >= 1
    rows = {(r["model"], r["setting"]): r for r in data["rows"]}
    assert set(rows) == {(m, s) for m in ("oracle", "naive") for s in ("clean", "first_tried")}
    assert all(r["suite"] == "toy" and r["n"] == 4 and r["outcomes"]["scored"] == 4 for r in rows.values())
    assert rows[("oracle", "clean")]["accuracy"] == 1.0 and rows[("naive", "first_tried")]["accuracy"] == 0.0

    # the family's own summary, checked against its model, in JSON, in the terminal and in the HTML report
    families = json.loads(cli("report", run_id, "--format", "json", "--families", cwd=tmp_path, env=env).stdout)
    toy = families["families"]["toy"]
    assert toy["family"] == "toy" and toy["mean_lookups"]["oracle"]["clean"] == 1.0
    table = cli("report", run_id, "--html", "report.html", cwd=tmp_path, env=env)
    assert table.returncode == 0, table.stderr
    assert "toy: lookups per episode" in table.stdout
    html = (tmp_path / "report.html").read_text()
    assert "toy: lookups per episode" in html and "Toy lookups, suite toy" in html

    compared = cli("compare", run_id, "--format", "json", cwd=tmp_path, env=env)
    assert compared.returncode == 0, compared.stderr
    pairs = json.loads(compared.stdout)["comparisons"]
    assert {(c["model_a"], c["model_b"], c["setting"]) for c in pairs} >= {("oracle", "naive", "clean")}

    # MLflow has the family's metric beside the shared ones
    client = MlflowClient(tracking_uri=tracking_stack.mlflow_url)
    experiment = client.get_experiment_by_name("toy-sweep")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id], filter_string=f"tags.`undertow.run_id` = '{run_id}'")
    children = {
        (r.data.tags["undertow.model"], r.data.tags["undertow.setting"]): r
        for r in runs
        if "undertow.model" in r.data.tags
    }
    assert children[("oracle", "clean")].data.metrics["toy.mean_lookups"] == 1.0
    assert children[("oracle", "clean")].data.metrics["outcome.scored"] == 4
