"""Episodes whose judge reads another episode's answer (a family's ``pairs_with``; FAIL-TaLMs' No-tools answer is
compared with the same model's Perfect one): which planned episode each is paired with, which shards must be
committed before a shard runs, and the answers a shard carries when it runs (``ShardSpec.paired_answers``), read
from the run store. The first run, a resume, a rerun and a replay all fill them here, the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from undertow.cluster.plan import RunManifest
from undertow.cluster.store import RunStore
from undertow.env_core.families import Family, get_family
from undertow.env_core.faults import Setting
from undertow.env_core.suites import Suite, load_ref
from undertow.workers.runner import ShardSpec

# (model, suite label, setting name, scenario id, seed): one planned episode of a run
EpisodeKey = tuple[str, str, str, str, int]


@dataclass
class Pairing:
    """The pairs of a run: for each shard with paired episodes, episode id -> (shard id, episode id) of the episode
    it is paired with. ``fill`` reads each paired shard's trajectories once per pairing."""

    pairs: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    _answers: dict[str, dict[str, tuple[str, str | None]]] = field(default_factory=dict)

    def needs(self, shard_id: str) -> set[str]:
        """The other shards whose episodes this shard's episodes are paired with."""
        return {paired for paired, _ in self.pairs.get(shard_id, {}).values()} - {shard_id}

    def fill(self, shard: ShardSpec, store: RunStore) -> ShardSpec:
        """``shard`` with the final answer of each of its episodes' paired episode, as the store holds it. An
        episode whose pair is not committed, or ended without saying anything about the model (an infra or config
        error), gets none: its judge records that no answer was paired with it."""
        pairs = self.pairs.get(shard.shard_id)
        if not pairs:
            return shard
        committed = store.committed()
        answers: dict[str, tuple[str, str | None]] = {}
        for plan in shard.episodes:
            pair = pairs.get(plan.episode_id)
            if pair is None or pair[0] not in committed:
                continue
            found = self._stored(pair[0], store)
            if pair[1] in found:
                answers[plan.episode_id] = found[pair[1]]
        return shard.model_copy(update={"paired_answers": answers}) if answers else shard

    def _stored(self, shard_id: str, store: RunStore) -> dict[str, tuple[str, str | None]]:
        # read when first needed, after the shard was committed: a shard is committed once per execution
        if shard_id not in self._answers:
            self._answers[shard_id] = {
                t.episode_id: (t.scenario_id, t.final_answer) for t in store.trajectories(shard_id) if t.outcome.judged
            }
        return self._answers[shard_id]


def _pairing_family(shard: ShardSpec) -> tuple[Family, Suite] | None:
    """The shard's family and suite when the family pairs episodes (the suite is loaded only then)."""
    try:
        family = get_family(shard.suite.family, shard.suite.family_ref) if shard.suite.family else None
        if family is not None and family.pairs_with is None:
            return None
        suite = load_ref(shard.suite)
        family = family or get_family(suite.family, shard.suite.family_ref)
    except Exception:  # a suite or family that cannot load fails its shard when it runs, with why
        return None
    return (family, suite) if family.pairs_with is not None else None


def pair_episodes(shards: Sequence[ShardSpec]) -> Pairing:
    """The pairs among the planned ``shards`` (a run's whole manifest): each episode whose family pairs it with an
    episode of the same model, suite and seed under another setting of the sweep, and that episode is planned."""
    planned: dict[EpisodeKey, tuple[str, str]] = {}
    for shard in shards:
        for plan in shard.episodes:
            key = (shard.model.name, shard.suite.label, shard.setting.name, plan.scenario_id, plan.seed)
            planned[key] = (shard.shard_id, plan.episode_id)
    settings: list[Setting] = list({s.setting.name: s.setting for s in shards}.values())
    pairing = Pairing()
    loaded: dict[str, tuple[Family, Suite] | None] = {}
    for shard in shards:
        ref = shard.suite.model_dump_json()
        if ref not in loaded:
            loaded[ref] = _pairing_family(shard)
        found = loaded[ref]
        if found is None:
            continue
        family, suite = found
        assert family.pairs_with is not None  # only pairing families are kept
        for plan in shard.episodes:
            scenario = suite.by_id.get(plan.scenario_id)
            target = family.pairs_with(scenario, suite.scenarios, shard.setting, settings) if scenario else None
            if target is None:
                continue
            scenario_id, setting = target
            pair = planned.get((shard.model.name, shard.suite.label, setting, scenario_id, plan.seed))
            if pair is not None and pair != (shard.shard_id, plan.episode_id):
                pairing.pairs.setdefault(shard.shard_id, {})[plan.episode_id] = pair
    return pairing


def run_pairing(manifest: RunManifest, store: RunStore) -> Pairing:
    """The pairs of the run in ``store``, from its whole manifest: a partial rerun's (``manifest``) lacks the
    episodes it keeps, and those may be the ones paired with."""
    try:
        shards = store.manifest().shards
    except KeyError:  # a store written without its manifest: the given one is the plan
        shards = manifest.shards
    return pair_episodes(shards)
