"""Retrieval over a 5,000-tool universe: index build time cold and cached, search latency in-process and through
the per-node Ray index actor, and the actor's memory.

Usage: python -m benchmarks.retrieval [--tools 5000] [--queries 300] [--spider PATH] [--only latency|recall]

Then recall@9 / hit@9 per search mode on the sqlfuncs suite compiled from the shared Spider dev folder (the figures
the README's Tool retrieval section quotes).

The universe is generated (deterministic templates over verbs, entities and conditions), so the figures do not
depend on any dataset. Targets on the 2-core development machine: cached rebuild < 1 s, in-process search p50 < 2 ms,
through the actor p50 < 10 ms.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import platform
import random
import tempfile
import time
from pathlib import Path

import ray

from undertow.env_core.model import ToolSpec
from undertow.retrieval.embedder import Embedder
from undertow.retrieval.index import RetrievalConfig, ToolIndex, universe_key
from undertow.retrieval.service import index_actor

DEFAULT_SPIDER = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "spider-dev"

VERBS = ["List", "Count", "Find", "Sum", "Average", "Rank", "Group", "Export", "Compare", "Summarize"]
ENTITIES = [
    "employees",
    "invoices",
    "flights",
    "singers",
    "concerts",
    "students",
    "courses",
    "orders",
    "customers",
    "airports",
    "cars",
    "makers",
    "pets",
    "owners",
    "documents",
    "templates",
    "countries",
    "cities",
    "languages",
    "stadiums",
    "teachers",
    "orchestras",
    "performances",
    "shops",
    "hiring records",
    "evaluations",
    "battles",
    "ships",
    "museums",
    "visitors",
    "books",
    "authors",
    "loans",
    "patients",
    "doctors",
    "appointments",
    "trains",
    "stations",
    "players",
    "matches",
    "albums",
    "tracks",
    "artists",
    "movies",
    "reviews",
    "products",
    "suppliers",
    "warehouses",
    "shipments",
    "accounts",
]
CONDITIONS = [
    "whose name matches the given text",
    "created after the given year",
    "with a value above the given amount",
    "located in the given city",
    "belonging to the given list of ids",
    "sorted by date, newest first",
    "that have no related records",
    "grouped by category",
    "with the largest total",
    "whose status is the given one",
]


def universe(size: int) -> list[ToolSpec]:
    combos = list(itertools.product(VERBS, ENTITIES, CONDITIONS))
    random.Random(0).shuffle(combos)
    tools = []
    for n, (verb, entity, condition) in enumerate(combos[:size], start=1):
        tools.append(
            ToolSpec(
                name=f"function_{n}",
                description=f"{verb} the {entity} {condition}.",
                parameters={
                    "type": "object",
                    "properties": {"alpha_beta": {"type": "string", "description": f"a value for the {entity}"}},
                },
            )
        )
    return tools


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def recall(spider: Path) -> None:
    """Recall@9 and hit@9 of each scenario's solution functions on the sqlfuncs suite compiled from ``spider``, the
    task text as the query: what ``undertow retrieval-eval --suite sqlfuncs spider=PATH --k 9`` prints."""
    from undertow.cluster import api

    modes = ("dense", "hybrid", "lexical", "bm25")
    result = api.retrieval_eval("sqlfuncs", [f"spider={spider}"], modes=modes, ks=[9])
    at9 = {mode: result.modes[mode]["at"][9] for mode in modes}
    for mode in modes:
        print(f"{mode:8s} hit@9 {100 * at9[mode]['hit']:5.1f}%  recall@9 {100 * at9[mode]['recall']:5.1f}%")
    hits = ", ".join(
        f"{100 * at9[m]['hit']:.1f}% {name}"
        for m, name in zip(modes, ("dense", "hybrid", "TF-IDF", "BM25"), strict=True)
    )
    recalls = " / ".join(f"{100 * at9[m]['recall']:.1f}" for m in modes)
    print(
        f"\nREADME: On the {len(list((spider / 'database').iterdir()))} shared Spider dev databases ({result.tools} "
        f"functions, {result.scenarios} scenarios), hit@9 is {hits} (recall@9: {recalls}%)"
    )


def latency(size: int, count: int) -> None:
    tools = universe(size)
    rng = random.Random(1)
    queries = [f"{rng.choice(VERBS).lower()} {rng.choice(ENTITIES)} {rng.choice(CONDITIONS)}" for _ in range(count)]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{len(tools)} tools, {len(queries)} distinct queries"
    )

    with tempfile.TemporaryDirectory() as cache:
        config = RetrievalConfig(cache=cache)
        started = time.perf_counter()
        embedder = Embedder()
        embedder.encode(["warm-up"])
        load_s = time.perf_counter() - started
        print(f"model load (first encode included): {load_s:.2f} s")
        builds = {}
        for mode in ("bm25", "dense", "hybrid"):
            started = time.perf_counter()
            index = ToolIndex(tools, mode, config, embedder)
            builds[mode] = (time.perf_counter() - started, index)
            print(f"build {mode:6s}: {builds[mode][0]:7.2f} s (encoded {index.encoded})")
        started = time.perf_counter()
        fresh = Embedder()
        cached = ToolIndex(tools, "dense", config, fresh)
        cached_s = time.perf_counter() - started
        print(
            f"rebuild dense from the cache, new process state: {cached_s:.3f} s (encoded {cached.encoded}, "
            f"model loaded: {fresh._model is not None})"
        )
        from_cache = {}
        for index_kind in ("ivf", "hnsw"):
            started = time.perf_counter()
            ToolIndex(tools, "dense", RetrievalConfig(cache=cache, index=index_kind), embedder)
            from_cache[index_kind] = time.perf_counter() - started
            print(f"build dense/{index_kind} from the cache: {from_cache[index_kind]:.3f} s")

        print("\nsearch latency in-process (k=9), distinct queries / repeated query:")
        figures: dict[str, tuple[float, float, float]] = {}
        for mode, (_, index) in builds.items():
            samples = []
            for query in queries:
                started = time.perf_counter()
                index.search(query, 9)
                samples.append((time.perf_counter() - started) * 1000)
            repeated = []
            for _ in range(len(queries)):
                started = time.perf_counter()
                index.search(queries[0], 9)
                repeated.append((time.perf_counter() - started) * 1000)
            p50, p99 = percentiles(samples)
            r50, r99 = percentiles(repeated)
            print(f"  {mode:6s} p50 {p50:6.2f} ms  p99 {p99:6.2f} ms   | repeated p50 {r50:5.2f} ms  p99 {r99:5.2f} ms")
            figures[mode] = (p50, p99, r50)
        # where a dense search's time goes: the query's forward pass through the model, then faiss
        encode, lookup = [], []
        dense_index = builds["dense"][1]
        for query in queries:
            started = time.perf_counter()
            vector = embedder.encode([query])  # no cache on this path: a forward pass each time
            encode.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            dense_index._faiss.search(vector, 9)
            lookup.append((time.perf_counter() - started) * 1000)
        print(
            f"  dense split: query embedding p50 {percentiles(encode)[0]:.2f} ms, faiss search p50 "
            f"{percentiles(lookup)[0]:.3f} ms"
        )

        ray.init(
            _node_ip_address="127.0.0.2", include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False
        )
        try:
            actor = index_actor(config)
            key = universe_key(tools)
            started = time.perf_counter()
            ray.get(actor.ensure.remote(key, "dense", tools))
            print(f"\nactor: first ensure (model load + cached vectors + faiss): {time.perf_counter() - started:.2f} s")
            ray.get(actor.search.remote(key, "dense", "warm up", 9))
            samples = []
            for query in queries:
                started = time.perf_counter()
                ray.get(actor.search.remote(key, "dense", query, 9))
                samples.append((time.perf_counter() - started) * 1000)
            p50, p99 = percentiles(samples)
            print(f"search through the actor (dense, k=9): p50 {p50:.2f} ms, p99 {p99:.2f} ms")
            stats = ray.get(actor.stats.remote())
            print(f"actor memory (RSS): {stats['rss_mb']:.0f} MB with {stats['indexes']} index of {len(tools)} tools")
        finally:
            ray.shutdown()
    bm25, dense = figures["bm25"], figures["dense"]
    print(
        f"\nREADME: dense build cold {builds['dense'][0]:.1f} s; rebuild from the cache {cached_s:.3f} s; BM25 build "
        f"/ IVF / HNSW from the cache {builds['bm25'][0]:.2f} / {from_cache['ivf']:.2f} / {from_cache['hnsw']:.2f} s; "
        "in-process "
        f"p50 / p99 BM25 {bm25[0]:.2f} / {bm25[1]:.2f} ms, dense {dense[0]:.1f} / {dense[1]:.1f} ms, dense repeated "
        f"p50 {dense[2]:.2f} ms; through the actor {p50:.1f} / {p99:.1f} ms; actor {stats['rss_mb']:.0f} MB RSS"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--spider", type=Path, default=DEFAULT_SPIDER, help="Spider folder for recall@9")
    parser.add_argument("--only", choices=["latency", "recall"], help="one part (default: both)")
    args = parser.parse_args()
    if args.only != "recall":
        latency(args.tools, args.queries)
    if args.only != "latency":
        print()
        recall(args.spider)


if __name__ == "__main__":
    main()
