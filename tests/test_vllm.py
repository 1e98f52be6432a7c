"""A real vLLM server (the CPU build) with a tiny random-weight model the tests build: through undertow's own
deployment code, through the plain OpenAI-compatible kind, a server killed mid-run, and bad input.

The tiny model's text is nonsense: these tests check protocol behaviour and outcome classes, not accuracy."""

from __future__ import annotations

import os
import signal
import socket
import time
import urllib.request
from pathlib import Path

import pytest
import ray
from tiny_model import build_tiny_model

from cluster.config import SweepConfig
from cluster.deployments import DeploymentError, VLLMServer
from cluster.plan import plan_sweep
from cluster.scheduler import execute
from cluster.store import RunStore
from env_core.faults import PRESET_SETTINGS
from env_core.model import Outcome
from workers.clients import ModelConfig
from workers.runner import EpisodePlan, ShardSpec, run_shard

MODEL_OUTCOMES = {Outcome.scored, Outcome.model_error, Outcome.parse_error, Outcome.budget_exhausted}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def tiny_config(tiny: Path, **changes: object) -> ModelConfig:
    fields = {
        "name": "tiny",
        "kind": "vllm",
        "weights": str(tiny),
        "device": "cpu",
        "dtype": "float32",
        "max_model_len": 8192,
        "concurrency": 24,
        "startup_timeout_s": 300,
        "max_retries": 0,
        "timeout_s": 120,
        "sampling": {"max_tokens": 24, "temperature": 1.0},
    }
    return ModelConfig.model_validate({**fields, **changes})


@pytest.fixture(scope="module")
def server(tiny: Path, tmp_path_factory: pytest.TempPathFactory, ray_local: None):
    """One server started through the deployment actor, shared by the tests that need a running server."""
    from cluster.deployments import start_replica

    actor = start_replica(tiny_config(tiny), str(tmp_path_factory.mktemp("deploy")), max_num_seqs=24)
    ray.get(actor.start.remote(), timeout=400)
    yield actor
    ray.get(actor.stop.remote(), timeout=120)
    ray.kill(actor)


def shard_against(url: str, smoke_ref, count: int, **agent: object) -> ShardSpec:
    suite = smoke_ref.load()
    model = ModelConfig(
        name="tiny",
        kind="openai",
        base_url=url,
        max_retries=0,
        timeout_s=120,
        concurrency=count,
        sampling={"max_tokens": 24, "temperature": 1.0},
    )
    return ShardSpec(
        shard_id="vllm",
        model=model,
        suite=smoke_ref,
        setting=PRESET_SETTINGS["clean"],
        agent={"max_turns": 2, **agent},
        episodes=[
            EpisodePlan(episode_id=f"e{i}", scenario_id=s.id, seed=0) for i, s in enumerate(suite.scenarios[:count])
        ],
    )


def test_a_sweep_serves_the_model_through_the_deployment_code(tiny: Path, tmp_path: Path, ray_local: None) -> None:
    config = SweepConfig.model_validate(
        {
            "name": "vllm",
            "models": [tiny_config(tiny).model_dump()],
            "suites": [{"name": "smoke", "limit": 20}],
            "settings": ["clean"],
            "agent": {"max_turns": 2},
            "run": {"store": str(tmp_path), "shard_size": 20},
        }
    )
    manifest = plan_sweep(config)
    store = RunStore(tmp_path / manifest.run_id)
    store.write_manifest(manifest)
    started = time.perf_counter()
    execution = execute(manifest, store, workers=1)
    results = store.results()
    assert execution.unreachable == {}
    assert len(results) == 20 and {r.outcome for r in results} <= MODEL_OUTCOMES
    assert all(r.prompt_tokens > 0 and r.completion_tokens > 0 for r in results)
    wall_ms = (time.perf_counter() - started) * 1000
    # one worker ran all 20 episodes against the server at once: their model time overlaps
    assert sum(r.model_ms for r in results) > 2 * max(r.wall_ms for r in results)
    assert sum(r.model_ms for r in results) > 0 and wall_ms > 0
    assert (tmp_path / manifest.run_id / "deployments").is_dir()  # the server's log and cache live in the run


def test_the_plain_openai_kind_against_the_same_kind_of_server(server, smoke_ref) -> None:
    url = ray.get(server.info.remote())["url"]
    output = run_shard(shard_against(url, smoke_ref, 20))
    assert len(output.results) == 20 and {r.outcome for r in output.results} <= MODEL_OUTCOMES
    assert all(t.turns and t.turns[0].request_sha256 for t in output.trajectories)


def test_a_reply_longer_than_the_context_is_a_model_error(server, smoke_ref) -> None:
    url = ray.get(server.info.remote())["url"]
    shard = shard_against(url, smoke_ref, 2)
    # the prompt (about 3,000 tokens) plus a reply of up to 8,000 does not fit the 8,192-token window
    long = shard.model.model_copy(update={"sampling": {"max_tokens": 8000, "extra_body": {"ignore_eos": True}}})
    output = run_shard(shard.model_copy(update={"model": long}))
    assert all(r.outcome == Outcome.model_error for r in output.results), [r.error for r in output.results]
    assert all("context" in r.error or "token limit" in r.error for r in output.results)
    # asking for more tokens than the model's context at all is the sweep's mistake, not the model's
    wrong = shard.model.model_copy(update={"sampling": {"max_tokens": 9000}})
    output = run_shard(shard.model_copy(update={"model": wrong}))
    assert all(r.outcome == Outcome.infra_error and "exceeds the model's context" in r.error for r in output.results)


def test_a_server_killed_mid_run_turns_in_flight_episodes_into_infra_errors_and_comes_back(server, smoke_ref) -> None:
    info = ray.get(server.info.remote())
    shard = shard_against(info["url"], smoke_ref, 20, max_turns=12)
    # long replies (no early end of sequence) keep requests in flight when the server dies
    # (a first turn of 4,000 tokens each keeps 20 requests busy for about 15 s here; the prompt is about 3,000)
    slow = shard.model.model_copy(update={"sampling": {"max_tokens": 4000, "extra_body": {"ignore_eos": True}}})
    shard = shard.model_copy(update={"model": slow})
    runner = ray.remote(num_cpus=0)(run_shard).remote(shard)
    deadline = time.monotonic() + 120
    # kill as soon as any request is being generated: under load a scrape can take seconds, and waiting for a
    # higher count could miss the whole busy period (CI once did)
    while time.monotonic() < deadline and _running_requests(info["url"]) < 1:
        time.sleep(0.05)
    os.killpg(info["pid"], signal.SIGKILL)  # the server we started, by its process group
    output = ray.get(runner, timeout=300)
    outcomes = [r.outcome for r in output.results]
    assert Outcome.infra_error in outcomes and len(outcomes) == 20
    assert all(r.error for r in output.results if r.outcome == Outcome.infra_error)
    deadline = time.monotonic() + 300
    after = ray.get(server.info.remote())
    while time.monotonic() < deadline and not (after["healthy"] and after["restarts"]):
        time.sleep(2)
        after = ray.get(server.info.remote())
    assert after["healthy"] and after["restarts"] == 1 and after["url"] == info["url"]
    again = run_shard(shard_against(after["url"], smoke_ref, 4))  # the failed episodes can be run again
    assert {r.outcome for r in again.results} <= MODEL_OUTCOMES


def _running_requests(url: str) -> float:
    """vLLM's own gauge of requests being generated right now."""
    try:
        with urllib.request.urlopen(url.removesuffix("/v1") + "/metrics", timeout=10) as response:
            text = response.read().decode()
    except OSError:
        return 0.0
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("vllm:num_requests_running")
    )


def test_bad_input(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="weights folder not found: /no/such/model"):
        ModelConfig(name="m", kind="vllm", weights="/no/such/model")
    with pytest.raises(ValueError, match="needs weights"):
        ModelConfig(name="m", kind="vllm")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = VLLMServer.__new__(VLLMServer)
        server.__init__  # noqa: B018 - constructed below without Ray's node address
        server.model, server.workdir, server.host, server.port = (
            tiny_config(tiny, port=port),
            tmp_path,
            "127.0.0.1",
            port,
        )
        server.process, server.restarts, server._stopping = None, 0, False
        with pytest.raises(DeploymentError, match=f"port {port} on 127.0.0.1 is in use"):
            server._launch()
