"""middleware: the suite's build time over the shared databases, and tool latency p50 / p99 on the largest shared
database (world_1) and on a generated knowledge base of at least a million triples, each call through
``Environment.step`` (argument checks, the fault layer, the tool).

Usage: python -m benchmarks.middleware_bench [--spider DIR] [--triples N] [--calls N]

- **Database** (world_1: 3 tables, 5,302 rows with keys): every navigational tool with values drawn from the data
  (``find_columns_containing_value`` scans every column of every table; the fuzzy one matches substrings and close
  spellings), then a full clause chain (from → where → select → group_by → having → order_by), each clause checked by
  running the composed query.
- **Knowledge base** (``convert.synthetic_kb``): episodes walk from a random entity — get_relations, get_neighbors,
  get_relations on the variable, get_neighbors again, get_attributes, argmax, count, and an intersection of two
  variables of one type when there are some.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks import cpu_model, percentile
from undertow.env_core.environment import Environment
from undertow.env_core.middleware.build import MiddlewareSuite, build
from undertow.env_core.middleware.convert import synthetic_kb
from undertow.env_core.middleware.database import DATABASE_TOOLS, DatabaseToolBox
from undertow.env_core.middleware.kb import KB_TOOLS, KBToolBox, TripleStore
from undertow.env_core.model import Action, Gold, Scenario, ToolCall

SPIDER = Path(__file__).resolve().parents[2] / "shared" / "data" / "spider-dev"


def step(env: Environment, times: dict[str, list[float]], tool: str, **arguments: Any) -> Any:
    action = Action(kind="tool_call", tool_call=ToolCall(id="b", name=tool, arguments=arguments))
    started = time.perf_counter()
    observation = env.step(action)
    times[tool].append((time.perf_counter() - started) * 1000.0)
    assert observation is not None
    return observation


def database_latency(spider: Path, rounds: int) -> dict[str, list[float]]:
    path = spider / "database" / "world_1" / "world_1.sqlite"
    box = DatabaseToolBox(DATABASE_TOOLS, {"world_1": path})
    scenario = Scenario(
        id="bench/world_1",
        family="middleware",
        task="benchmark",
        tools=[t.name for t in DATABASE_TOOLS],
        gold=Gold(),
        metadata={"environment": "database", "database": "world_1"},
    )
    rng = random.Random(0)
    countries = ["France", "Brazil", "Japan", "Kenya", "Aruba", "Chile", "Nepal", "Peru"]
    cities = ["Kabul", "Paris", "Lima", "Osaka", "Quito", "Oslo", "Cairo", "Perth"]
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(rounds):
        env = Environment(scenario, box, seed=0)
        env.reset()
        country, city = rng.choice(countries), rng.choice(cities)
        step(env, times, "find_columns_containing_value", value=country)
        step(env, times, "find_columns_containing_value_fuzzy", value=city[:4].lower())
        step(env, times, "get_distinct_values", table="country", column="Continent")
        step(env, times, "is_value_in_column", table="city", column="Name", value=city)
        step(env, times, "get_date_format", table="country", column="IndepYear")
        step(env, times, "search_by_SQL", query=f"SELECT Name, Population FROM city WHERE Name = '{city}'")
        step(env, times, "from", from_statement="FROM city JOIN country ON city.CountryCode = country.Code")
        step(env, times, "where", where_statement="WHERE country.Continent = 'Europe'")
        step(env, times, "select", select_statement="SELECT country.Name, count(*)")
        step(env, times, "group_by", group_by_statement="GROUP BY country.Name")
        step(env, times, "having", having_statement="HAVING count(*) > 3")
        step(env, times, "order_by", order_by_statement="ORDER BY count(*) DESC LIMIT 5")
        env.close()
    return times


def kb_latency(kb: Path, episodes: int) -> tuple[dict[str, list[float]], int]:
    store = TripleStore.open(kb)
    try:
        subjects = [
            name
            for relation in sorted(store.signatures())[:40]
            for name in store.names(set(store.subjects(relation)[:50]))
        ]
    finally:
        store.close()
    box = KBToolBox(KB_TOOLS, {"synthetic": kb})
    rng = random.Random(0)
    times: dict[str, list[float]] = defaultdict(list)
    for n in range(episodes):
        entity = rng.choice(subjects)
        scenario = Scenario(
            id=f"bench/kb/{n}",
            family="middleware",
            task="benchmark",
            tools=[t.name for t in KB_TOOLS],
            gold=Gold(),
            metadata={"environment": "kb", "kb": "synthetic", "entities": [entity]},
        )
        env = Environment(scenario, box, seed=0)
        env.reset()
        relations = step(env, times, "get_relations", variable=entity).result
        if relations:
            step(env, times, "get_neighbors", variable=entity, relation=rng.choice(relations))
            more = step(env, times, "get_relations", variable="#0").result
            if more:
                step(env, times, "get_neighbors", variable="#0", relation=rng.choice(more))
            attributes = step(env, times, "get_attributes", variable="#0").result
            if attributes:
                step(env, times, "argmax", variable="#0", attribute=rng.choice(attributes))
            step(env, times, "count", variable="#0")
            if len(relations) > 1:
                step(env, times, "get_neighbors", variable=entity, relation=relations[-1])
                step(env, times, "intersection", variable1="#0", variable2=f"#{1 if not more else 2}")
        env.close()
    return times, len(subjects)


def table(times: dict[str, list[float]]) -> list[dict[str, Any]]:
    return [
        {"tool": tool, "calls": len(v), "p50_ms": percentile(v, 50), "p99_ms": percentile(v, 99)}
        for tool, v in times.items()
    ]


def build_time(spider: Path) -> float:
    """Seconds to build the whole suite (database tasks, knowledge bases, their questions) over ``spider``, best of
    two."""
    times = []
    for _ in range(2):
        with tempfile.TemporaryDirectory() as scratch:
            started = time.perf_counter()
            build(MiddlewareSuite(family="middleware", spider=str(spider)), Path(scratch) / "suite")
            times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spider", type=Path, default=SPIDER)
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=50, help="database episodes (12 calls each)")
    parser.add_argument("--episodes", type=int, default=1000, help="knowledge-base episodes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    suite_build_s = build_time(args.spider)
    database = table(database_latency(args.spider, args.rounds))
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        stats = synthetic_kb(Path(scratch) / "synthetic.kb", args.triples, seed=0)
        build_s = time.perf_counter() - started
        kb_times, _ = kb_latency(Path(scratch) / "synthetic.kb", args.episodes)
    kb = table(kb_times)
    report = {
        "machine": cpu_model(),
        "suite_build_s": suite_build_s,
        "database": {"name": "world_1", "tools": database},
        "kb": {"triples": stats.triples, "entities": stats.entities, "build_s": build_s, "tools": kb},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"machine: {report['machine']}")
    print(f"build of the suite over {args.spider.name}: {suite_build_s:.2f} s (best of 2)")
    for title, rows in (("world_1", database), (f"synthetic KB, {stats.triples:,} triples", kb)):
        print(title)
        for row in rows:
            print(
                f"  {row['tool']:38s} {row['calls']:6d} calls  p50 {row['p50_ms']:7.3f} ms  p99 {row['p99_ms']:7.3f} ms"
            )
    slowest_db = max(database, key=lambda r: r["p99_ms"])
    slowest_kb = max(kb, key=lambda r: r["p99_ms"])
    print(
        f"README: middleware: build {suite_build_s:.1f} s; world_1 tools p50 {min(r['p50_ms'] for r in database):.2f}–"
        f"{max(r['p50_ms'] for r in database):.2f} ms, p99 up to {slowest_db['p99_ms']:.1f} ms "
        f"({slowest_db['tool']}); KB of {stats.triples:,} triples built in {build_s:.1f} s, tools p50 "
        f"{min(r['p50_ms'] for r in kb):.3f}–{max(r['p50_ms'] for r in kb):.3f} ms, p99 up to "
        f"{slowest_kb['p99_ms']:.1f} ms ({slowest_kb['tool']})"
    )


if __name__ == "__main__":
    main()
