"""Runs without Ray or the CLI: a sweep config planned, and its shards run in this process by the worker's own
``run_shard`` and committed, as the driver commits them; every scenario of a suite played by a built-in policy; one
episode of a scripted model."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import RunManifest, plan_sweep
from undertow.cluster.store import RunStore
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import EpisodeResult
from undertow.env_core.suites import SuiteRef, load_ref
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import EndpointModel, PolicyModel
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec, run_shard

# The CodeAct agent of the episode tests: few turns, a short step timeout
CODEACT: dict[str, Any] = {"protocol": "codeact", "max_turns": 6, "step_timeout_s": 5.0}


def policy_sweep(name: str, limit: int) -> dict[str, Any]:
    """A sweep config: the two built-in policies (oracle, naive) over the first ``limit`` smoke scenarios, clean and
    first_tried."""
    return {
        "name": name,
        "models": ["oracle", "naive"],
        "suites": [{"family": "smoke", "limit": limit}],
        "settings": ["clean", "first_tried"],
    }


def stored_run(
    root: Path,
    config: Mapping[str, Any],
    *,
    committed: Callable[[list[ShardSpec]], list[ShardSpec]] = lambda shards: shards,
    output: Callable[[ShardSpec, ShardOutput], ShardOutput] = lambda shard, out: out,
) -> RunManifest:
    """Plan ``config`` (its ``run.store`` is set to ``root``), run the shards ``committed`` picks (all by default)
    and commit what ``output`` makes of each shard's output (as it is by default); returns the run's manifest."""
    sweep = SweepConfig.model_validate({**config, "run": {**config.get("run", {}), "store": str(root)}})
    manifest = plan_sweep(sweep)
    store = RunStore.create(root, manifest.run_id)
    store.write_manifest(manifest)
    for shard in committed(manifest.shards):
        store.commit(output(shard, run_shard(shard)))
    return manifest


def scripted_episode(
    ref: SuiteRef, base_url: str, scenario_id: str, setting: str = "clean", **agent: Any
) -> ShardOutput:
    """One episode (seed 0) of the scenario in a preset ``setting``, played by the scripted model a test server at
    ``base_url`` serves (no retries) with the ``agent`` configuration."""
    shard = ShardSpec(
        shard_id="scripted",
        model=EndpointModel(name="scripted", base_url=base_url, max_retries=0, timeout_s=10),
        suite=ref,
        setting=PRESET_SETTINGS[setting],
        agent=AgentConfig(**agent),
        episodes=[EpisodePlan(episode_id="e", scenario_id=scenario_id, seed=0)],
    )
    return run_shard(shard)


def policy_results(ref: SuiteRef, policy: str, setting: str) -> list[EpisodeResult]:
    """Every scenario of the suite once (seed 0) in a preset ``setting``, played by the built-in ``policy``."""
    episodes = [EpisodePlan(episode_id=s.id, scenario_id=s.id, seed=0) for s in load_ref(ref).scenarios]
    shard = ShardSpec(
        shard_id="t", model=PolicyModel(name=policy), suite=ref, setting=PRESET_SETTINGS[setting], episodes=episodes
    )
    return run_shard(shard).results
