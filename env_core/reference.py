"""What a family hands the cluster when it reads a benchmark's published per-episode outputs
(``Family.import_results``, for ``undertow import FAMILY PATH --results DIR``): the episodes as they will be stored in
one *reference run*, grouped by model × setting, and what the reader skipped or listed. Nothing here is about one
family; the cluster writes it (``undertow.cluster.api.reference``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from undertow.env_core.faults import Setting


@dataclass(frozen=True)
class ImportedEpisode:
    """One published answer: its scenario, whether the paper's main rate counts it solved, and the family's
    details (what its metrics read). ``key`` is unique within its shard (it names the episode)."""

    key: str
    scenario_id: str
    solved: bool
    details: dict[str, Any]


@dataclass
class ImportedShard:
    """The published answers of one model under one setting."""

    model: str
    setting: Setting
    episodes: list[ImportedEpisode] = field(default_factory=list)


@dataclass
class ImportedResults:
    """A benchmark's published outputs read as episodes. ``listed``: what the reader skipped or kept with a doubt,
    by heading (each item names where, e.g. ``file[index]``); ``source``: what the run's manifest records of where
    the outputs came from; ``n_scenarios`` and ``content_hash``: the suite they link to."""

    shards: list[ImportedShard] = field(default_factory=list)
    listed: dict[str, list[str]] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    n_scenarios: int = 0
    content_hash: str = ""

    @property
    def episodes(self) -> int:
        return sum(len(shard.episodes) for shard in self.shards)

    def models(self) -> list[str]:
        return list(dict.fromkeys(shard.model for shard in self.shards))
