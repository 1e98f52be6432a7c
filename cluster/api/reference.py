"""Reference runs: a benchmark's published per-episode outputs written into the run store as one run, so that
``undertow report`` lays them out as the paper's tables and ``undertow compare`` sets them beside a user's run.

A reference run is a run like any other (a manifest, one shard per model × setting, one ``EpisodeResult`` per
published answer, with the details the family's metrics read) except that nothing ran here: its manifest says so
(``config["imported"]``), and it has no traces. The family reads its outputs (``Family.import_results``, an
``env_core.reference.ImportedResults``); this module writes them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from undertow.cluster.plan import RunManifest, SuiteRecord, versions
from undertow.cluster.store import RunStore
from undertow.env_core.families import SuiteConfig, get_family
from undertow.env_core.model import EpisodeResult, Outcome
from undertow.workers.clients import EndpointModel
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec

IMPORTED = "imported"  # the manifest's config key that marks a reference run
# a reference model has no endpoint; the manifest still names one, on a domain reserved never to resolve
NO_ENDPOINT = "http://reference.invalid/v1"


@dataclass
class ReferenceRun:
    """What :func:`write_reference` wrote: the run, its episodes and models, and what the family's reader skipped
    or listed, by heading."""

    run_id: str
    location: str
    episodes: int
    models: list[str]
    listed: dict[str, list[str]] = field(default_factory=dict)


def is_reference(manifest: RunManifest) -> bool:
    """Whether a run was imported from published outputs rather than run here."""
    return IMPORTED in manifest.config


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def write_reference(
    config: SuiteConfig, results: str | Path, store: str | Path = "runs", *, now: datetime | None = None
) -> ReferenceRun:
    """Read the published outputs under ``results`` with the family of ``config`` (the suite of the released
    files they answer) and write them into ``store`` as one reference run: one shard per model × setting, one
    episode per answer (seed 0)."""
    family = get_family(config.family, config.family_ref)
    assert family.import_results is not None, family.name
    read = family.import_results(config, Path(results))
    now = now or datetime.now(UTC)
    fingerprint = _digest(str(Path(results).resolve()), *(f"{s.model}/{s.setting.name}" for s in read.shards))
    run_id = f"reference-{family.name}-{now.strftime('%Y%m%d-%H%M%S')}-{fingerprint[:8]}"
    shards: list[ShardSpec] = []
    outputs: list[ShardOutput] = []
    for shard in read.shards:
        shard_id = f"ref-{_digest(run_id, shard.model, shard.setting.name)}"
        plans, rows = [], []
        for episode in shard.episodes:
            episode_id = f"{shard_id}-{episode.key}"
            plans.append(EpisodePlan(episode_id=episode_id, scenario_id=episode.scenario_id, seed=0))
            rows.append(
                EpisodeResult(
                    episode_id=episode_id,
                    shard_id=shard_id,
                    model=shard.model,
                    suite=config.label,
                    family=family.name,
                    setting=shard.setting.name,
                    seed=0,
                    scenario_id=episode.scenario_id,
                    outcome=Outcome.scored,
                    solved=episode.solved,
                    correct=episode.solved,
                    score=float(episode.solved),
                    details=episode.details,
                )
            )
        model = EndpointModel(name=shard.model, base_url=NO_ENDPOINT)
        shards.append(ShardSpec(shard_id=shard_id, model=model, suite=config, setting=shard.setting, episodes=plans))
        outputs.append(ShardOutput(shard_id, rows, [], 0.0))
    manifest = RunManifest(
        run_id=run_id,
        created=now.isoformat(),
        config={IMPORTED: {"family": family.name, **read.source, "models": read.models(), "listed": read.listed}},
        versions=versions(),
        suites=[
            SuiteRecord(
                label=config.label,
                family=family.name,
                version="reference",
                content_hash=read.content_hash,
                n_scenarios=read.n_scenarios,
            )
        ],
        shards=shards,
    )
    run_store = RunStore.create(store, run_id)
    run_store.write_manifest(manifest)
    for output in outputs:
        run_store.commit(output)
    return ReferenceRun(run_id, run_store.location, read.episodes, read.models(), read.listed)


def paired_with_reference(results: Sequence[EpisodeResult], reference_models: set[str]) -> list[EpisodeResult]:
    """A reference run's episodes have one answer per scenario × setting (seed 0): for ``undertow compare``, each
    is repeated under every seed the other runs have for that suite × setting × scenario, so that they pair on
    scenario × setting whatever seeds a user's run used."""
    seeds: dict[tuple[str, str, str], set[int]] = {}
    for r in results:
        if r.model not in reference_models:
            seeds.setdefault((r.suite, r.setting, r.scenario_id), set()).add(r.seed)
    out: list[EpisodeResult] = []
    for r in results:
        wanted = seeds.get((r.suite, r.setting, r.scenario_id)) if r.model in reference_models else None
        if not wanted:
            out.append(r)
            continue
        out.extend(
            r.model_copy(update={"seed": seed, "episode_id": f"{r.episode_id}-s{seed}"}) for seed in sorted(wanted)
        )
    return out
