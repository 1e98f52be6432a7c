"""What the command line says to do next: hints that name the store, Ctrl-C, runs where nothing could be scored,
and `undertow episodes` for the ids `undertow replay` takes."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
from pathlib import Path

import pytest
import ray
import typer
import yaml
from helpers.cli import UNDERTOW
from helpers.cli import invoke as cli
from helpers.paths import REPO
from helpers.runs import policy_sweep, stored_run

from undertow.cluster import api
from undertow.cluster.cli import runs
from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.store import RunStore

QUICKSTART = REPO / "configs" / "quickstart.yaml"


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def write_config(folder: Path, store: str, models: list[object], **more: object) -> Path:
    config = {
        "name": "hint",
        "models": models,
        "suites": [{"family": "smoke", "limit": 2}],
        "settings": ["clean"],
        "run": {"store": store},
        **more,
    }
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def only_run(store: Path) -> str:
    (run_dir,) = [p for p in store.iterdir() if p.is_dir()]
    return run_dir.name


# ---------------------------------------------------------------------------------------------------------------
# Hints name the store


def test_the_reprint_hint_names_a_store_other_than_the_default(tmp_path: Path, ray_local: None) -> None:
    store = tmp_path / "elsewhere"
    code, out, err = cli("run", str(write_config(tmp_path, str(store), ["oracle"])))
    assert code == 0, err
    run_id = only_run(store)
    report = f"undertow report {run_id} --store {store}"
    expected = f"results: {store / run_id}  (reprint: {report}; with plots and a trace: {report} --html report.html)"
    assert expected in out.splitlines()
    code, out, _ = cli(*report.split()[1:])  # the hint works as printed
    assert code == 0 and run_id in out


def test_no_store_in_hints_for_a_run_in_the_default_store(
    tmp_path: Path, ray_local: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("run", str(write_config(tmp_path, "runs", ["oracle"])))
    assert code == 0, err
    run_id = only_run(tmp_path / "runs")
    assert f"(reprint: undertow report {run_id}; with plots and a trace: undertow report {run_id} --html" in out


# ---------------------------------------------------------------------------------------------------------------
# Ctrl-C


@pytest.mark.slow
def test_ctrl_c_keeps_committed_shards_and_says_how_to_resume(tmp_path: Path, ray_local: None) -> None:
    store = tmp_path / "store"
    overrides = ["seeds=[0,1]"]  # twice the episodes: still running when the signal comes
    address = ray.get_runtime_context().gcs_address  # the test session's cluster: no second Ray to start
    driver = subprocess.Popen(
        [UNDERTOW, "run", str(QUICKSTART), *overrides, "--store", str(store), "--address", address, "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a test session started in the background of a non-interactive shell inherits SIGINT ignored, and Python
        # then installs no Ctrl-C handler: the driver gets the default disposition, as in a user's terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    watchdog = threading.Timer(180, driver.kill)  # a driver that hangs fails the test instead of the session
    watchdog.start()
    try:
        assert driver.stdout is not None
        started = None
        for line in driver.stdout:  # the run id line comes once the store holds the run
            started = re.match(r"(quickstart-\S+): \d+ episodes in (\d+) shards", line)
            if started:
                break
        assert started, f"the run id line never came: {driver.communicate(timeout=60)}"
        run_id, n_shards = started.group(1), int(started.group(2))
        driver.send_signal(signal.SIGINT)
        out, err = driver.communicate(timeout=120)
    finally:
        watchdog.cancel()
    assert driver.returncode == 130, err
    assert "Traceback" not in out + err
    hint = f"interrupted: committed shards are kept; finish with: undertow resume {run_id} --store {store}"
    assert hint in err.splitlines()
    run_store = RunStore.open(run_id, store)
    manifest = run_store.manifest()
    committed = run_store.committed()
    assert len(committed) < len(manifest.shards)

    code, out, _ = cli("report", run_id, "--store", str(store))
    pending = len(manifest.shards) - len(committed)
    assert code == 0
    assert (
        f"{pending} of {n_shards} shard(s) have no committed results yet (if its driver stopped, finish the run with: "
        f"undertow resume {run_id} --store {store})." in " ".join(out.split())
    )

    # the run's config must come with the overrides it was started with
    code, _, err = cli("resume", run_id, str(QUICKSTART), "--store", str(store))
    assert code == 2 and "differs from the run's config, refusing to resume: seeds:" in one_line(err)
    code, out, err = cli("resume", run_id, str(QUICKSTART), *overrides, "--store", str(store))
    assert code == 0, err
    assert f"{run_id}: {pending} of {n_shards} shard(s) to run" in out
    planned = sorted(e.episode_id for s in manifest.shards for e in s.episodes)
    assert sorted(r.episode_id for r in run_store.results()) == planned  # every episode exactly once


# ---------------------------------------------------------------------------------------------------------------
# Nothing scored


def test_a_run_with_nothing_scored_exits_3_and_says_to_rerun(tmp_path: Path, ray_local: None) -> None:
    store = tmp_path / "runs"
    closed = {"name": "closed", "kind": "openai", "base_url": "http://127.0.0.2:9/v1", "max_retries": 0}
    code, _, err = cli("run", str(write_config(tmp_path, str(store), [closed])))
    run_id = only_run(store)
    expected = (
        "error: none of the 2 episode(s) could be scored: 2 ended in infra_error (when the cause is fixed, run them "
        f"again: undertow rerun {run_id} --failed --store {store})"
    )
    assert code == 3 and expected in err.splitlines()
    assert "Traceback" not in err
    code, _, err = cli("rerun", run_id, "--failed", "--store", str(store))
    assert code == 3 and expected in err.splitlines()


def outcome_of(folder: Path, outcomes: dict[str, int]) -> api.RunOutcome:
    """What `run` hands `finish` after a run whose episodes ended as ``outcomes`` say."""
    config = SweepConfig.model_validate(yaml.safe_load(write_config(folder, str(folder), ["oracle"]).read_text()))
    manifest = plan_sweep(config)
    location = str(folder / manifest.run_id)
    return api.RunOutcome(manifest.run_id, location, manifest, 1.0, sum(outcomes.values()), outcomes, [], {})


@pytest.mark.parametrize(
    ("outcomes", "none_scored"),
    [
        ({"config_error": 3}, True),
        ({"config_error": 3, "infra_error": 2}, True),
        ({"config_error": 3, "scored": 1}, False),
        ({"infra_error": 2, "model_error": 1}, False),  # a model error says something about the model
    ],
)
def test_config_errors_count_as_not_scored(tmp_path: Path, outcomes: dict[str, int], none_scored: bool) -> None:
    assert outcome_of(tmp_path, outcomes).none_scored is none_scored


def test_the_nothing_scored_line_says_what_to_do_about_each(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    outcome = outcome_of(tmp_path, {"config_error": 3, "infra_error": 2})
    with pytest.raises(typer.Exit) as stopped:
        runs.finish(outcome)
    assert stopped.value.exit_code == 3
    run = outcome.run_id
    assert one_line(capsys.readouterr().err) == (
        f"error: none of the 5 episode(s) could be scored: 2 ended in infra_error (when the cause is fixed, run them "
        f"again: undertow rerun {run} --failed --store {tmp_path}); 3 ended in config_error (a rerun fails the same "
        f"way: fix the config or data, see undertow status {run} --store {tmp_path}, and start a new run)"
    )


# ---------------------------------------------------------------------------------------------------------------
# undertow episodes


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run of real episodes (built-in policies, no Ray) with one shard left uncommitted."""
    root = tmp_path_factory.mktemp("episodes")
    config = policy_sweep("listed", limit=3)
    return root, stored_run(root, config, committed=lambda shards: shards[:-1]).run_id


def test_episodes_lists_every_episode_with_its_outcome(stored: tuple[Path, str]) -> None:
    root, run_id = stored
    code, out, _ = cli("episodes", run_id, "--store", str(root), "--format", "json")
    assert code == 0
    listed = json.loads(out)
    manifest = RunStore.open(run_id, root).manifest()
    assert [e["episode_id"] for e in listed] == [e.episode_id for s in manifest.shards for e in s.episodes]
    assert set(listed[0]) == {"episode_id", "model", "suite", "setting", "seed", "scenario_id", "outcome", "error"}
    assert [e["outcome"] for e in listed if e["model"] == "naive" and e["setting"] == "first_tried"] == ["pending"] * 3
    assert {e["outcome"] for e in listed if e["model"] == "oracle"} == {"scored"}

    code, out, _ = cli("episodes", run_id, "--store", str(root), "--model", "oracle", "--setting", "first_tried")
    assert code == 0
    rows = [line.split() for line in out.splitlines() if "oracle" in line]
    assert [r[1:4] + r[5:7] for r in rows] == [
        ["oracle", "smoke", "first_tried", f"smoke-reports-0{i}", "scored"] for i in (1, 2, 3)
    ]
    assert "3 episode(s)" in out

    code, out, _ = cli("episodes", run_id, "--store", str(root), "--outcome", "pending", "--format", "json")
    assert code == 0 and len(json.loads(out)) == 3


def test_an_id_from_episodes_replays(stored: tuple[Path, str]) -> None:
    root, run_id = stored
    code, out, _ = cli("episodes", run_id, "--store", str(root), "--model", "naive", "--outcome", "scored")
    first = next(line.split()[0] for line in out.splitlines() if " naive " in line)
    code, out, _ = cli("replay", run_id, first, "--store", str(root))
    assert code == 0 and f"identical trajectory and score — {first} (naive" in out


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--model", "orcle", "error: --model: 'orcle' is not one of oracle, naive; did you mean 'oracle'?"),
        ("--setting", "nosuch", "error: --setting: 'nosuch' is not one of clean, first_tried"),
        (
            "--outcome",
            "infra",
            "error: --outcome: 'infra' is not one of scored, model_error, parse_error, infra_error, budget_exhausted, "
            "config_error, sandbox_violation, pending; did you mean 'infra_error'?",
        ),
        ("--format", "xml", "error: --format: expected 'table' or 'json', got 'xml'"),
    ],
)
def test_episodes_bad_options(stored: tuple[Path, str], option: str, value: str, message: str) -> None:
    root, run_id = stored
    code, out, err = cli("episodes", run_id, "--store", str(root), option, value)
    assert code == 2 and out == "" and one_line(err) == message
