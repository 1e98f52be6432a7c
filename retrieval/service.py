"""Serving indexes: one Ray actor per node holds the embedding model and one index per tool universe, so hundreds
of concurrent episodes share them; outside Ray (or with ``service: local``) an index lives in the process.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Literal

from undertow.env_core.model import ToolSpec
from undertow.retrieval.embedder import Embedder
from undertow.retrieval.index import RetrievalConfig, ToolIndex, universe_key

Mode = Literal["bm25", "dense", "hybrid"]


class Indexes:
    """Indexes by (universe, mode) sharing one embedder: the body of both the actor and the in-process form."""

    def __init__(self, config: RetrievalConfig):
        self.config = config
        self.embedder = Embedder(config.model, config.device, config.batch_size)
        self.indexes: dict[tuple[str, str], ToolIndex] = {}

    def has(self, key: str, mode: Mode) -> bool:
        return (key, mode) in self.indexes

    def ensure(self, key: str, mode: Mode, specs: list[ToolSpec]) -> dict[str, Any]:
        if (key, mode) not in self.indexes:
            self.indexes[(key, mode)] = ToolIndex(specs, mode, self.config, self.embedder)
        index = self.indexes[(key, mode)]
        return {"tools": len(index.names), "build_s": index.build_s, "encoded": index.encoded}

    def search(self, key: str, mode: Mode, query: str, k: int) -> list[str]:
        return self.indexes[(key, mode)].search(query, k)

    def stats(self) -> dict[str, Any]:
        rss_kb = 0
        try:
            with open("/proc/self/status", encoding="ascii") as status:
                rss_kb = next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
        except OSError:
            pass
        return {
            "pid": os.getpid(),
            "rss_mb": rss_kb / 1024,
            "indexes": len(self.indexes),
            "encoded": self.embedder.encoded,
        }


class LocalSearcher:
    """An index in this process, behind the environment's ``search(query, k)`` interface."""

    def __init__(self, indexes: Indexes, key: str, mode: Mode):
        self.indexes, self.key, self.mode = indexes, key, mode

    def search(self, query: str, k: int) -> list[str]:
        return self.indexes.search(self.key, self.mode, query, k)


class ActorSearcher:
    """The node's index actor behind the same interface (a blocking call: searches take milliseconds)."""

    def __init__(self, actor: Any, key: str, mode: Mode):
        self.actor, self.key, self.mode = actor, key, mode

    def search(self, query: str, k: int) -> list[str]:
        import ray

        names: list[str] = ray.get(self.actor.search.remote(self.key, self.mode, query, k))
        return names


_local: dict[str, Indexes] = {}
_actors: dict[tuple[str, str], Any] = {}  # handles kept for the life of the process: an owner's handle keeps it alive


def _config_key(config: RetrievalConfig) -> str:
    return hashlib.sha256(config.model_dump_json().encode()).hexdigest()[:12]


def index_actor(config: RetrievalConfig, node_id: str | None = None) -> Any:
    """The index actor for ``config`` on a node (default: this one), created on first use and found by name later.

    The run's driver creates one per node before dispatching work (``cluster.scheduler``), so it owns them and they
    live until the run ends; a worker that finds none creates it, and this process keeps the handle."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    node = node_id or ray.get_runtime_context().get_node_id()
    key = (node, _config_key(config))
    if key not in _actors:
        service = ray.remote(num_cpus=0)(Indexes)
        _actors[key] = service.options(
            name=f"undertow-index-{node[:12]}-{key[1]}",
            get_if_exists=True,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
        ).remote(config)
    return _actors[key]


def release_index_actors() -> None:
    """Stop the index actors this process created or found (the driver calls it when a run ends)."""
    import ray

    for actor in _actors.values():
        ray.kill(actor, no_restart=True)
    _actors.clear()


def searcher_for(specs: list[ToolSpec], mode: Mode, config: RetrievalConfig) -> LocalSearcher | ActorSearcher:
    """A searcher over this universe: the node's actor inside a Ray worker (``service: actor``), else in-process."""
    import ray

    key = universe_key(specs)
    if config.service == "actor" and ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None:
        actor = index_actor(config)
        if not ray.get(actor.has.remote(key, mode)):  # ship the universe only once per node
            ray.get(actor.ensure.remote(key, mode, specs))
        return ActorSearcher(actor, key, mode)
    indexes = _local.setdefault(_config_key(config), Indexes(config))
    indexes.ensure(key, mode, specs)
    return LocalSearcher(indexes, key, mode)
