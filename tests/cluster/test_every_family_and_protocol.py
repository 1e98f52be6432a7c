"""The fast lane's end-to-end floor: one ``limit:``ed episode of every built-in family, under each agent protocol,
planned and run the way ``undertow run`` does it (plan, Ray workers, the run store), with the oracle. What each
family and protocol does in depth is tested in their own modules; this proves they all still run together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.paths import SPIDER_DEV
from helpers.shipped import ONE_OF_EACH, shipped_suite

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.scheduler import execute
from undertow.cluster.store import RunStore
from undertow.env_core.families import family_names
from undertow.env_core.model import EpisodeResult, Outcome
from undertow.workers.runner import episode_agent


def sweep(tmp_path: Path, name: str, suites: list[dict[str, Any]], **agent: Any) -> RunStore:
    for entry in suites:  # built once per session, shared with the family tests
        shipped_suite(entry)
    config = SweepConfig.model_validate(
        {
            "name": name,
            "models": ["oracle"],
            "suites": suites,
            "settings": ["clean"],
            "agent": agent,
            "run": {"store": str(tmp_path)},
        }
    )
    manifest = plan_sweep(config)
    store = RunStore(tmp_path / manifest.run_id)
    store.write_manifest(manifest)
    execute(manifest, store)
    return store


def solved(store: RunStore) -> list[EpisodeResult]:
    results = store.results()
    for result in results:
        assert result.outcome == Outcome.scored and result.correct, (result.suite, result.error)
    return results


def test_one_episode_of_every_family_runs_and_the_oracle_solves_it(tmp_path: Path, ray_local: None) -> None:
    store = sweep(tmp_path, "every-family", [entry for entry, _ in ONE_OF_EACH])
    results = solved(store)
    assert len(results) == len(ONE_OF_EACH)
    assert {r.family for r in results} == set(family_names())  # every registered family, none left out
    protocols = {episode_agent(shard).protocol for shard in store.manifest().shards}
    assert (
        protocols == {protocol for _, protocol in ONE_OF_EACH} == {"function_calling", "direct", "react", "decoupled"}
    )


def test_codeact_runs_an_episode_in_the_sandboxed_kernel(tmp_path: Path, ray_local: None) -> None:
    store = sweep(
        tmp_path,
        "codeact",
        [{"family": "sqlfuncs", "spider": str(SPIDER_DEV), "limit": 1}],
        protocol="codeact",
        prompt="hohw",
    )
    assert len(solved(store)) == 1
    assert {episode_agent(shard).protocol for shard in store.manifest().shards} == {"codeact"}
    assert any(step.action.kind == "code" for step in next(iter(store.trajectories())).steps)


def test_every_protocol_has_an_episode_here() -> None:
    """A protocol added to the agent needs an episode above."""
    from undertow.workers.agent import PROTOCOLS

    assert set(PROTOCOLS) == {protocol for _, protocol in ONE_OF_EACH} | {"codeact"}
