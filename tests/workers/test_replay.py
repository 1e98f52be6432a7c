"""Replaying a recorded episode reproduces its trajectory and score exactly, without the model."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from helpers.endpoint import answer, closed_port, scripted_server, tool_calls
from typer.testing import CliRunner

from undertow.cluster.cli import app
from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.scheduler import execute
from undertow.cluster.store import RunStore
from undertow.env_core.suites import Suite

runner = CliRunner()


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory: pytest.TempPathFactory, smoke: Suite, ray_local: None) -> RunStore:
    """A run of a scripted model, the oracle, and an unreachable endpoint, on three smoke scenarios."""
    direct = {s.id: s.gold.plans[0][0] for s in smoke.scenarios[:3]}

    def reply(request: dict[str, Any]) -> Any:
        last = request["messages"][-1]
        if last["role"] == "tool":  # answer with what the tool said, right or wrong
            return answer(last["content"].split("\n")[0], usage=(30, 7))
        task = request["messages"][1]["content"]
        call = next(c for s, c in direct.items() if smoke.by_id[s].task == task)
        return tool_calls((call.tool, call.arguments), usage=(20, 5))

    root = tmp_path_factory.mktemp("replay")
    with scripted_server(reply) as server:
        config = SweepConfig.model_validate(
            {
                "name": "replay",
                "models": [
                    {"name": "scripted", "kind": "openai", "base_url": server.base_url, "max_retries": 0},
                    "oracle",
                    {
                        "name": "ghost",
                        "kind": "openai",
                        "base_url": f"http://127.0.0.1:{closed_port()}/v1",
                        "max_retries": 0,
                        "timeout_s": 2,
                    },
                ],
                "suites": [{"family": "smoke", "limit": 3}],
                "settings": ["clean", "first_tried"],
                "run": {"store": str(root)},
            }
        )
        manifest = plan_sweep(config)
        store = RunStore(root / manifest.run_id)
        store.write_manifest(manifest)
        execute(manifest, store)
    return store  # the server is gone: a replay cannot ask it anything


def replay(store: RunStore, episode: str) -> tuple[int, str]:
    result = runner.invoke(app, ["replay", store.folder.name, episode, "--store", str(store.folder.parent)])
    return result.exit_code, " ".join(result.output.split())


def test_every_recorded_episode_replays_identically(recorded_run: RunStore) -> None:
    results = [r for r in recorded_run.results() if r.model != "ghost"]
    assert len(results) == 2 * 2 * 3
    assert any(r.solved for r in results) and any(not r.solved for r in results)
    for result in results:
        code, output = replay(recorded_run, result.episode_id[:10])
        assert code == 0, output
        assert output.startswith("identical trajectory and score") and f"score {result.score}" in output


def test_recorded_turns_carry_the_reply_and_its_hashes(recorded_run: RunStore) -> None:
    trajectory = next(t for t in recorded_run.trajectories() if t.model == "scripted")
    first = trajectory.turns[0]
    assert len(first.request_sha256) == 64 and len(first.response_sha256) == 64
    assert first.tool_calls and first.usage.prompt_tokens == 20


def test_a_tampered_recording_is_reported(recorded_run: RunStore) -> None:
    result = next(r for r in recorded_run.results() if r.model == "scripted" and r.setting == "clean")
    path = recorded_run.folder / "traces" / f"{result.shard_id}.jsonl.gz"
    original = gzip.decompress(path.read_bytes()).decode()
    lines = []
    for line in original.splitlines():
        record = json.loads(line)
        if record["episode_id"] == result.episode_id:  # the model "said" something else on its last turn
            record["turns"][-1]["content"] = '[{"nothing": "to see"}]'
        lines.append(json.dumps(record))
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    try:
        code, output = replay(recorded_run, result.episode_id)
    finally:
        path.write_bytes(gzip.compress(original.encode()))
    assert code == 1 and "replay differs" in output
    assert "solved: recorded True, replayed False" in output or "final_answer" in output


def test_replay_refuses_what_it_cannot_replay(recorded_run: RunStore) -> None:
    ghost = next(r for r in recorded_run.results() if r.model == "ghost")
    code, output = replay(recorded_run, ghost.episode_id)
    assert code == 2 and "ended in infra_error: there is no reply to replay; rerun it" in output
    code, output = replay(recorded_run, "zzzz")
    assert code == 2 and "matches 0 episodes" in output
