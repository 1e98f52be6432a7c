"""The ledger in action: resume after the driver died, rerun failed shards, status, and bad input."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import ray
import yaml
from helpers.cli import UNDERTOW, invoke
from helpers.endpoint import answer, error, scripted_server, tool_calls

from undertow.cluster.store import RunStore
from undertow.env_core.model import Scenario


def cli(*args: str) -> tuple[int, str]:
    """The command in this process; its output (stdout and stderr) in one line, as the terminal wraps it."""
    code, out, err = invoke(*args)
    return code, " ".join((out + err).split())


def write_sweep(tmp_path: Path, config: dict[str, Any]) -> Path:
    """``config`` as the sweep file the commands read."""
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run_sweep(tmp_path: Path, config: dict[str, Any]) -> tuple[Path, Path]:
    """``undertow run`` of ``config`` (its store under tmp_path/runs), finished: the sweep file and the run folder."""
    path = write_sweep(tmp_path, config)
    assert cli("run", str(path))[0] == 0
    (run_dir,) = list((tmp_path / "runs").iterdir())
    return path, run_dir


def direct_reply(scenarios: dict[str, Scenario], request: dict[str, Any]) -> Any:
    """What a model that knows the way replies: the first call of the question's direct plan, then the first line
    the tool returned as the answer."""
    last = request["messages"][-1]
    if last["role"] == "tool":
        return answer(last["content"].split("\n")[0])
    call = scenarios[request["messages"][1]["content"]].gold.plans[0][0]
    return tool_calls((call.tool, call.arguments))


def mtimes(store: RunStore, shard_ids: set[str]) -> dict[str, int]:
    return {s: (store.folder / "results" / f"{s}.parquet").stat().st_mtime_ns for s in shard_ids}


@pytest.mark.slow
def test_resume_after_the_driver_died_runs_only_pending_shards(tmp_path: Path, ray_local: None) -> None:
    config = {
        "name": "killed",
        "models": [{"name": "oracle", "latency_s": 0.05}],  # slow enough to kill the driver mid-run
        "suites": ["smoke"],
        "settings": ["clean", "first_tried"],
        "seeds": list(range(8)),
        "run": {"store": str(tmp_path / "runs"), "shard_size": 10},
    }
    path = write_sweep(tmp_path, config)
    address = ray.get_runtime_context().gcs_address  # the test session's cluster: it outlives the driver
    driver = subprocess.Popen(
        [UNDERTOW, "run", str(path), "--address", address, "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    results = tmp_path / "runs"
    while time.monotonic() < deadline:
        done = list(results.glob("*/results/*.parquet"))
        if len(done) >= 4:
            break
        time.sleep(0.2)
    driver.send_signal(signal.SIGKILL)  # the driver we started dies mid-run
    driver.wait(timeout=30)
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    store = RunStore(run_dir)
    manifest = store.manifest()
    before = store.committed()
    assert 4 <= len(before) < len(manifest.shards)
    stamps = mtimes(store, before)
    code, output = cli("resume", str(run_dir), str(path))
    assert code == 0, output
    assert f"{len(manifest.shards) - len(before)} of {len(manifest.shards)} shard(s) to run" in output
    assert mtimes(store, before) == stamps  # committed shards were never executed again
    planned = sorted(e.episode_id for s in manifest.shards for e in s.episodes)
    assert sorted(r.episode_id for r in store.results()) == planned  # every episode exactly once
    code, output = cli("resume", str(run_dir))
    assert code == 0 and f"0 of {len(manifest.shards)} shard(s) to run" in output


def test_resume_refuses_a_changed_config_and_names_the_difference(tmp_path: Path, ray_local: None) -> None:
    config = {
        "name": "c",
        "models": ["oracle"],
        "suites": [{"family": "smoke", "limit": 4}],
        "run": {"store": str(tmp_path / "runs")},
    }
    path, run_dir = run_sweep(tmp_path, config)
    path.write_text(yaml.safe_dump({**config, "agent": {"max_turns": 3}}))
    code, output = cli("resume", str(run_dir), str(path))
    assert code == 2
    assert (
        "differs from the run's config, refusing to resume: agent.max_turns: the run has 12, the config has 3" in output
    )


def test_rerun_failed_runs_only_the_failed_shards(tmp_path: Path, ray_local: None, smoke) -> None:
    healthy = {"on": False}
    scenarios = {s.task: s for s in smoke.scenarios[:4]}

    def reply(request: dict[str, Any]) -> Any:
        return direct_reply(scenarios, request) if healthy["on"] else error(503, "overloaded")

    with scripted_server(reply) as server:
        config = {
            "name": "planted",
            "models": ["oracle", {"name": "flaky", "kind": "openai", "base_url": server.base_url, "max_retries": 0}],
            "suites": [{"family": "smoke", "limit": 4}],
            "settings": ["clean", "first_tried"],
            "run": {"store": str(tmp_path / "runs"), "shard_size": 2},
        }
        _, run_dir = run_sweep(tmp_path, config)
        store = RunStore(run_dir)
        manifest = store.manifest()
        flaky = {s.shard_id for s in manifest.shards if s.model.name == "flaky"}
        others = {s.shard_id for s in manifest.shards} - flaky
        assert all(r.outcome.value == "infra_error" for r in store.results() if r.model == "flaky")
        code, output = cli("status", str(run_dir))
        assert code == 0 and "flaky smoke clean 0 2 0 4 4" in output and "503" in output
        stamps = mtimes(store, others)
        healthy["on"] = True
        code, output = cli("rerun", str(run_dir), "--failed")
        assert code == 0, output
        assert f"rerunning {len(flaky)} failed shard(s), 8 episode(s)" in output
        assert mtimes(store, others) == stamps  # untouched
        assert not [r for r in store.results() if r.outcome.value == "infra_error"]
        assert len(list((run_dir / "history").glob("*.parquet"))) == len(flaky)  # the failed attempts are kept
        assert cli("rerun", str(run_dir), "--failed")[1].endswith("no failed shard; nothing to rerun")


def test_bad_input(tmp_path: Path) -> None:
    code, output = cli("rerun", "x")
    assert code == 2 and "--failed" in output
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")  # a store inside a file cannot be created, whoever runs the test
    config = write_sweep(tmp_path, {"models": ["oracle"], "suites": ["smoke"], "run": {"store": str(blocker / "r")}})
    code, output = cli("run", str(config))
    assert code == 2 and f"store {blocker / 'r'}: cannot create the run folder" in output
    code, output = cli("run", str(config), "run.store=" + str(tmp_path / "ok"), "--address", "127.0.0.2:9")
    assert code == 2 and "no Ray cluster answers at 127.0.0.2:9" in output


def test_rerun_only_the_infra_error_episodes_of_failed_shards(tmp_path: Path, ray_local: None, smoke) -> None:
    scenarios = {s.task: s for s in smoke.scenarios[:4]}
    lost = {smoke.scenarios[1].task}  # the endpoint fails for this question only, the first time
    state = {"healthy": False}

    def reply(request: dict[str, Any]) -> Any:
        task = request["messages"][1]["content"]
        if task in lost and not state["healthy"]:
            return error(503, "overloaded")
        return direct_reply(scenarios, request)

    with scripted_server(reply) as server:
        config = {
            "name": "partial",
            "models": [{"name": "flaky", "kind": "openai", "base_url": server.base_url, "max_retries": 0}],
            "suites": [{"family": "smoke", "limit": 4}],
            "run": {"store": str(tmp_path / "runs")},
        }
        _, run_dir = run_sweep(tmp_path, config)
        store = RunStore(run_dir)
        before = {r.episode_id: r for r in store.results()}
        assert [r.outcome.value for r in before.values()].count("infra_error") == 1
        state["healthy"] = True
        requests = len(server.chat_requests)
        code, output = cli("rerun", str(run_dir), "--failed", "--infra-only")
        assert code == 0 and "rerunning 1 failed shard(s), 1 episode(s)" in output, output
        after = {r.episode_id: r for r in store.results()}
        assert sorted(after) == sorted(before)  # every episode, once
        assert not [r for r in after.values() if r.outcome.value == "infra_error"]
        for episode_id, result in before.items():
            if result.outcome.value != "infra_error":
                assert after[episode_id] == result  # kept as it was, not run again
        assert len(server.chat_requests) - requests == 2  # one episode: one call, one answer
        assert sorted(t.episode_id for t in store.trajectories()) == sorted(before)
