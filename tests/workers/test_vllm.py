"""A real vLLM server (the CPU build) with a tiny random-weight model the tests build: sweeps through `undertow run`
with the shipped defaults, deployments that cannot start, the start-up deadline, a replica actor that dies, tool
calls the server leaves in the text, a server killed mid-run, a stop during a relaunch, and the restart limit.

The tiny model's text is nonsense: these tests check protocol behaviour, lifecycles and outcome classes, not
accuracy. Where a test needs the model to write something precise, vLLM's structured outputs force it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import ray
import yaml
from helpers.cli import UNDERTOW
from helpers.paths import FAIL_TALMS
from helpers.processes import children_of, processes_with
from helpers.tiny_model import build_tiny_model

from undertow.cluster.config import SweepConfig
from undertow.cluster.deployments import start_replica
from undertow.cluster.plan import plan_sweep
from undertow.cluster.scheduler import execute
from undertow.cluster.server_guard import group_members
from undertow.cluster.store import RunStore
from undertow.env_core.failtalms.build import build_released
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import ASK_HUMAN, Action, HelperModel, Outcome, ToolCall
from undertow.env_core.suites import load_ref, suite_ref
from undertow.workers.clients import EndpointModel, HelperClient, PolicyModel, VLLMModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard

pytestmark = pytest.mark.vllm  # a real vLLM CPU server (the tiny model the tests build)

MODEL_OUTCOMES = {Outcome.scored, Outcome.model_error, Outcome.parse_error, Outcome.budget_exhausted}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model, at one path for every server of this module: vLLM keys its compile cache on the model's path
    and the server's batch size, so the servers below that share both (the sweep's, the shared one, the one that
    crashes) compile the model once, as a user's repeated runs of one model do."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


# What a default sweep gives a CPU server: concurrency 32 x one worker per CPU (2 here), as cluster.scheduler sizes it
DEFAULT_MAX_NUM_SEQS = 64


def tiny_entry(weights: str | Path, **changes: object) -> dict[str, Any]:
    """The tiny model as a user would configure it: only what a CPU model needs differs from the defaults."""
    return {
        "name": "tiny",
        "kind": "vllm",
        "weights": str(weights),
        "device": "cpu",
        "dtype": "float32",
        "max_model_len": 8192,
        "tool_call_parser": "hermes",
        "sampling": {"max_tokens": 24, "temperature": 1.0},
        **changes,
    }


def tiny_config(weights: str | Path, **changes: object) -> VLLMModel:
    return VLLMModel.model_validate(tiny_entry(weights, **changes))


def wait_for(condition: Any, timeout_s: float, what: str, every_s: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


# ---------------------------------------------------------------------------------------------------------------
# 1. `undertow run` as users run it


def _run_cli(config: dict[str, Any], folder: Path, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    (folder / "sweep.yaml").write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    started = time.monotonic()
    done = subprocess.run(
        [str(UNDERTOW), "run", str(folder / "sweep.yaml")],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return done, time.monotonic() - started


def test_a_sweep_with_the_default_workers_deploys_the_model_and_finishes(tiny: Path, tmp_path: Path) -> None:
    # weights relative to the config file (written beside the model's folder), run from another folder; every run
    # option at its default
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    config = {
        "name": "served",
        "models": [tiny_entry(tiny.name)],
        "suites": ["smoke"],  # 35 scenarios: 3 shards of the default 16
        "settings": ["clean"],
        "agent": {"max_turns": 2},
    }
    done, _ = _run_cli(config, tiny.parent, cwd=elsewhere)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "35/35" in done.stdout and "model 'tiny': 1 replica(s) ready" in done.stdout
    (run_dir,) = (elsewhere / "runs").iterdir()
    store = RunStore(run_dir)
    results = store.results()
    assert len(results) == 35 and len(store.committed()) == 3
    assert {r.outcome for r in results} <= MODEL_OUTCOMES, Counter(r.error for r in results)
    assert all(r.prompt_tokens > 0 for r in results)
    assert len({r.worker for r in results}) == 2  # the default pool: one worker per CPU Ray reports, both used
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["models"][0]["weights"] == str(tiny)
    (log,) = (run_dir / "deployments").glob("tiny-*.log")  # the server's log, in the run's own folder
    assert log.stat().st_size > 0
    assert processes_with("--served-model-name tiny") == []  # nothing of the server outlives the run
    # the driver's VLLM_CACHE_ROOT reached the server: its compilation is in the shared cache, not in the run
    assert list(Path(os.environ["VLLM_CACHE_ROOT"]).glob("torch_compile_cache/*"))
    assert not list(run_dir.rglob("torch_compile_cache"))


def test_a_deployment_that_cannot_start_ends_the_run_with_its_log(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("this is not a model configuration")
    config = {"name": "broken", "models": [tiny_entry("broken", name="broken")], "suites": ["smoke"]}
    done, elapsed = _run_cli(config, tmp_path, cwd=tmp_path)
    stderr = " ".join(done.stderr.split())
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert "model 'broken': vLLM deployment failed: vLLM exited with code 1 while starting; its log ends:" in stderr
    assert "is not a valid JSON file" in stderr  # vLLM's own last lines
    assert "none of the 35 episode(s) could be scored" in stderr
    assert elapsed < 600  # well within the default start-up limit: the exit was noticed, not waited out
    (run_dir,) = (tmp_path / "runs").iterdir()
    results = RunStore(run_dir).results()
    assert len(results) == 35 and {r.outcome for r in results} == {Outcome.infra_error}


# ---------------------------------------------------------------------------------------------------------------
# 2. Deadlines and dying actors (in-process, on the session's Ray)


def _manifest(tmp_path: Path, model: dict[str, Any], limit: int = 4, shard_size: int = 16, seeds: int = 1):
    config = SweepConfig.model_validate(
        {
            "name": "vllm",
            "models": [model],
            "suites": [{"family": "smoke", "limit": limit}],
            "settings": ["clean"],
            "seeds": list(range(seeds)),
            "agent": {"max_turns": 2},
            "run": {"store": str(tmp_path), "shard_size": shard_size},
        }
    )
    manifest = plan_sweep(config)
    store = RunStore(tmp_path / manifest.run_id)
    store.write_manifest(manifest)
    return manifest, store


def test_a_server_that_misses_its_start_up_deadline_is_ended_and_named(
    tiny: Path, tmp_path: Path, ray_local: None
) -> None:
    manifest, store = _manifest(tmp_path, tiny_entry(tiny, name="slowstart", startup_timeout_s=8))
    started = time.monotonic()
    execution = execute(manifest, store)
    assert time.monotonic() - started < 8 + 60
    reason = execution.unreachable["slowstart"]
    assert reason.startswith("vLLM deployment failed: vLLM did not answer /health within 8 s; its log ends:")
    results = store.results()
    assert len(results) == 4 and all(r.outcome == Outcome.infra_error and r.error == reason for r in results)
    assert processes_with("--served-model-name slowstart") == []


def test_a_replica_actor_that_dies_takes_its_server_with_it(tiny: Path, tmp_path: Path, ray_local: None) -> None:
    actor = start_replica(tiny_config(tiny, name="orphan"), str(tmp_path), max_num_seqs=4)
    starting = actor.start.remote()
    info = wait_for(lambda: (i := ray.get(actor.info.remote())) and i["pid"] and i, 60, "the server process")
    group = info["pid"]  # the guard leads the server's process group
    wait_for(lambda: len(group_members(group)) >= 3, 120, "vLLM's engine process (guard, API server, engine)")
    os.kill(info["actor_pid"], signal.SIGKILL)
    wait_for(lambda: not group_members(group), 60, "the server's process group to end")
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(starting, timeout=60)
    assert processes_with("--served-model-name orphan") == []


# ---------------------------------------------------------------------------------------------------------------
# 3. One running server, shared by the tests below (in this order: the last one stops it)


@pytest.fixture(scope="module")
def server(tiny: Path, tmp_path_factory: pytest.TempPathFactory, ray_local: None):
    actor = start_replica(tiny_config(tiny), str(tmp_path_factory.mktemp("deploy")), max_num_seqs=DEFAULT_MAX_NUM_SEQS)
    ray.get(actor.start.remote(), timeout=700)
    yield actor
    ray.get(actor.stop.remote(), timeout=120)
    ray.kill(actor)


def shard_against(url: str, smoke_ref, count: int, **agent: object) -> ShardSpec:
    suite = load_ref(smoke_ref)
    model = EndpointModel(
        name="tiny",
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
    assert all(r.outcome == Outcome.config_error for r in output.results), [r.error for r in output.results]
    assert all("sampling.max_tokens: exceeds the model's context" in r.error for r in output.results)


@pytest.mark.parametrize(
    ("family", "stage", "text_calls"),
    [("llama3_json", "json", 2), ("mistral_args", "mistral_args", 2), ("hermes", None, 0)],
)
def test_tool_calls_the_server_leaves_in_the_text_are_run(
    server, smoke_ref, smoke, family: str, stage: str | None, text_calls: int
) -> None:
    """The server parses Hermes calls (its --tool-call-parser); a model writing Llama 3 JSON or Mistral's format
    gets its calls back as text, and the harness reads and runs them instead of scoring them as answers."""
    scenario = smoke.scenarios[0]
    (call,) = scenario.gold.plans[0]
    arguments = json.dumps(dict(call.arguments))
    text = {
        "llama3_json": f'{{"name": "{call.tool}", "parameters": {arguments}}}',
        "mistral_args": f"[TOOL_CALLS]{call.tool}[ARGS]{arguments}",
        "hermes": f'<tool_call>{{"name": "{call.tool}", "arguments": {arguments}}}</tool_call>',
    }[family]
    url = ray.get(server.info.remote())["url"]
    shard = shard_against(url, smoke_ref, 1)
    # structured outputs make the random model write exactly this, every turn
    forced = {"max_tokens": 200, "temperature": 0.0, "extra_body": {"structured_outputs": {"choice": [text]}}}
    shard = shard.model_copy(update={"model": shard.model.model_copy(update={"sampling": forced})})
    output = run_shard(shard)
    (result,), (trajectory,) = output.results, output.trajectories
    assert result.outcome == Outcome.budget_exhausted, (result.error, trajectory.turns[0].content)
    assert (result.n_tool_calls, result.n_text_calls, result.n_parse_failures) == (2, text_calls, 0)
    assert [t.parse_stage for t in trajectory.turns] == [stage, stage]
    for step in trajectory.tool_steps():
        assert (step.action.tool_call.name, step.action.tool_call.arguments) == (call.tool, dict(call.arguments))
        assert step.observation.ok and step.observation.result == scenario.gold.answer


def test_a_real_model_emulates_tools_judges_and_plays_the_person(
    server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper models against a real server: the released FAIL-TaLMs files imported, their tools answered by the
    tiny model, every episode graded by three of its votes (nonsense: judge errors or random verdicts, never a
    crash), and the Ask-and-Help person played by it; a rerun reads every helper reply from the cache."""
    monkeypatch.setenv("UNDERTOW_CACHE", str(tmp_path / "cache"))
    url = ray.get(server.info.remote())["url"]
    folder = tmp_path / "released"
    build_released(FAIL_TALMS, folder)
    helper = {"url": url, "name": "tiny", "max_tokens": 24, "max_retries": 0}
    ref = suite_ref({"path": str(folder), "emulator": helper, "judge": {**helper, "k": 3}})
    suite = load_ref(ref)
    chosen = [s for s in suite.scenarios if s.condition == "none"][:3]
    spec = ShardSpec(
        shard_id="helpers",
        model=PolicyModel(name="random"),
        suite=ref,
        setting=PRESET_SETTINGS["perfect"],
        episodes=[EpisodePlan(episode_id=f"e{i}", scenario_id=s.id, seed=0) for i, s in enumerate(chosen)],
    )
    output = run_shard(spec)
    assert {r.outcome for r in output.results} == {Outcome.scored}
    observed = [s.observation for t in output.trajectories for s in t.steps if s.observation is not None]
    assert observed and all(o.emulated and o.ok for o in observed)
    judged = [r for r in output.results if not r.details["skipped"]]
    assert judged
    for result in judged:
        votes = result.details["judge_votes"]
        assert len(votes) == 3 and {v["verdict"] for v in votes} <= {"pass", "fail", "error"}
        passes, fails = (sum(v["verdict"] == kind for v in votes) for kind in ("pass", "fail"))
        assert result.details["passed"] == (None if passes + fails == 0 else passes > fails)
    assert [r.details for r in run_shard(spec).results] == [r.details for r in output.results]

    scenario = next(s for s in suite.scenarios if s.condition == "underspecified" and "intended" in s.metadata)
    setting = PRESET_SETTINGS["underspecified"].model_copy(update={"ask_human": True})
    env = suite.environment(scenario, 0, setting, person=HelperClient(HelperModel(**helper)))
    env.reset()
    ask = Action(kind="tool_call", tool_call=ToolCall(id="q", name=ASK_HUMAN, arguments={"question": "Which one?"}))
    observation = env.step(ask)
    assert observation is not None and observation.ok and isinstance(observation.result["reply"], str)


def test_a_server_killed_mid_run_ends_its_whole_group_and_comes_back(server, smoke_ref) -> None:
    info = ray.get(server.info.remote())
    shard = shard_against(info["url"], smoke_ref, 20, max_turns=12)
    # long replies (no early end of sequence) keep requests in flight when the server dies
    slow = shard.model.model_copy(update={"sampling": {"max_tokens": 4000, "extra_body": {"ignore_eos": True}}})
    shard = shard.model_copy(update={"model": slow})
    runner = ray.remote(num_cpus=0)(run_shard).remote(shard)
    deadline = time.monotonic() + 120
    # kill as soon as any request is being generated: under load a scrape can take seconds
    while time.monotonic() < deadline and _running_requests(info["url"]) < 1:
        time.sleep(0.05)
    group = info["pid"]
    (api_server,) = children_of(group)  # the guard's one child: vLLM's API server
    others = [pid for pid in group_members(group) if pid not in (group, api_server)]
    assert others, "vLLM's engine process was not found in the server's group"
    os.kill(api_server, signal.SIGKILL)  # the API server alone: its engine process is left behind
    output = ray.get(runner, timeout=300)
    outcomes = [r.outcome for r in output.results]
    assert Outcome.infra_error in outcomes and len(outcomes) == 20
    assert all(r.error for r in output.results if r.outcome == Outcome.infra_error)
    after = wait_for(
        lambda: (i := ray.get(server.info.remote()))["healthy"] and i["restarts"] == 1 and i, 400, "the relaunch", 2
    )
    assert after["url"] == info["url"] and after["state"] == "up"
    events = [what for _, what in after["events"]]
    # the old group was gone (engine process included) before the new server was launched
    gone, relaunched = events.index(f"group {group} gone"), events.index(f"launched {after['pid']}")
    assert events.index(f"exited {group} with 137") < gone < relaunched
    assert not [pid for pid in others if pid in group_members(group)]
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


def test_a_stop_during_a_relaunch_leaves_no_server_running(server) -> None:
    before = ray.get(server.info.remote())
    os.killpg(before["pid"], signal.SIGKILL)  # the whole server: the supervisor relaunches it after its backoff
    launched = wait_for(
        lambda: (i := ray.get(server.info.remote()))["pid"] != before["pid"] and i["pid"], 120, "the relaunch", 0.05
    )
    ray.get(server.stop.remote(), timeout=120)  # while the new server is still starting
    after = ray.get(server.info.remote())
    events = [what for _, what in after["events"]]
    assert after["state"] == "stopped" and not after["healthy"]
    assert f"healthy {launched}" not in events  # it was stopped while starting
    assert events[-1] == "stopped" and events[-2] == f"group {launched} gone"
    assert group_members(launched) == []
    time.sleep(5)  # the supervisor does not launch again after the stop
    assert ray.get(server.info.remote())["events"] == after["events"]
    assert processes_with(f"--port {before['url'].rsplit(':', 1)[1].removesuffix('/v1')}") == []


# ---------------------------------------------------------------------------------------------------------------
# 4. A deployment that keeps crashing fails after its restart limit; the run records the rest with the reason


def test_a_deployment_past_its_restart_limit_fails_and_its_remaining_shards_say_why(
    tiny: Path, tmp_path: Path, ray_local: None
) -> None:
    # the module's model (its first start reads the compile cache the sweep above filled), broken once the server
    # runs and mended after: this is the module's last test, and the model is whole again for any rerun
    config = tiny / "config.json"
    whole = config.read_bytes()
    # 105 one-episode shards: many are still to run when the deployment gives up
    manifest, store = _manifest(tmp_path, tiny_entry(tiny, name="crashy"), limit=35, shard_size=1, seeds=3)
    broken: list[int] = []

    def crash_after_first_commit() -> None:
        wait_for(lambda: store.committed(), 600, "a first committed shard", 0.1)
        config.write_text("no longer a model configuration")  # every relaunch now fails
        (guard,) = processes_with("undertow.cluster.server_guard -- ", "--served-model-name crashy")
        (server,) = children_of(guard)  # vLLM's API server
        os.kill(server, signal.SIGKILL)
        broken.append(server)

    chaos = threading.Thread(target=crash_after_first_commit)
    chaos.start()
    try:
        execution = execute(manifest, store)
        chaos.join()
    finally:
        config.write_bytes(whole)
    assert broken, "the server was not killed"
    reason = execution.unreachable["crashy"]
    assert reason.startswith("vLLM deployment failed: vLLM exited with code 1; 3 restart(s) in a row; its log ends:")
    assert "is not a valid JSON file" in reason
    results = store.results()
    assert Counter(r.episode_id for r in results) == Counter(e.episode_id for s in manifest.shards for e in s.episodes)
    told = [r for r in results if r.error == reason]
    assert told and all(r.outcome == Outcome.infra_error for r in told)  # shards after the failure: its reason
    assert any(r.outcome != Outcome.infra_error for r in results)  # the shards before the crash were scored
    assert processes_with("--served-model-name crashy") == []
