"""The execution layer: cluster vs in-process throughput, scheduling overhead per 1,000 shards, driver memory.

Usage: python -m benchmarks.scheduler [--latency 0.05] [--episodes 100000] [--workers N]

(a) the oracle with a fake model latency per reply, run in-process (one shard after another, episodes of a shard
    concurrently) and through Ray workers: the throughput ratio is the cluster's overhead (or gain);
(b) 1,000 one-episode shards with no latency: wall time per shard beyond the episode's own work;
(c) a plan of ``--episodes`` episodes: driver RSS after planning and its peak while the shards run and commit
    (results stream to the store; the driver keeps none), then after the end-of-run summary (streamed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import threading
import time
from pathlib import Path

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.scheduler import ensure_ray, execute
from undertow.cluster.store import RunStore
from undertow.scoring.summary import summarize
from undertow.workers.runner import run_shard_async


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def sweep(store: str, seeds: int, shard_size: int, latency: float) -> SweepConfig:
    return SweepConfig.model_validate(
        {
            "name": "bench",
            "models": [{"name": "oracle", "latency_s": latency, "concurrency": 64}],
            "suites": ["smoke"],
            "settings": ["clean", "first_tried", "impossible"],
            "seeds": list(range(seeds)),
            "run": {"store": store, "shard_size": shard_size},
        }
    )


def through_ray(config: SweepConfig, workers: int, sample: bool = False) -> dict[str, float]:
    manifest = plan_sweep(config)
    planned_mb = rss_mb()
    store = RunStore(Path(config.run.store) / manifest.run_id)
    store.write_manifest(manifest)
    peak = [planned_mb]
    running = [True]

    def watch() -> None:
        while running[0]:
            peak[0] = max(peak[0], rss_mb())
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    if sample:
        watcher.start()
    started = time.perf_counter()
    execute(manifest, store, workers=workers)
    wall = time.perf_counter() - started
    running[0] = False
    if sample:
        watcher.join()
    end_mb = rss_mb()
    summary_mb = None
    if sample:
        summarize(store.iter_results())  # what `undertow run` prints at the end: streamed over the shard files
        summary_mb = rss_mb()
    return {
        "episodes": manifest.n_episodes,
        "shards": len(manifest.shards),
        "wall_s": wall,
        "planned_mb": planned_mb,
        "peak_mb": peak[0],
        "end_mb": end_mb,
        "summary_mb": summary_mb,
    }


def in_process(config: SweepConfig) -> dict[str, float]:
    manifest = plan_sweep(config)
    started = time.perf_counter()
    for shard in manifest.shards:
        asyncio.run(run_shard_async(shard))
    return {"episodes": manifest.n_episodes, "wall_s": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.05, help="fake model latency per reply, seconds")
    parser.add_argument("--episodes", type=int, default=100_000, help="size of the plan for the memory check")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{args.workers} Ray workers"
    )
    ensure_ray()
    with tempfile.TemporaryDirectory() as store:
        config = sweep(store, seeds=4, shard_size=35, latency=args.latency)
        local = in_process(config)
        remote = through_ray(config, args.workers)
        local_rate, remote_rate = local["episodes"] / local["wall_s"], remote["episodes"] / remote["wall_s"]
        print(
            f"(a) oracle, {args.latency * 1000:.0f} ms per reply, {local['episodes']} episodes: in-process "
            f"{local_rate:.1f} ep/s, through Ray {remote_rate:.1f} ep/s (ratio {remote_rate / local_rate:.2f})"
        )
        readme = [
            f"| (a) {args.latency * 1000:.0f} ms per reply, {local['episodes']} episodes: in-process (shards one after "
            f"another) / through {args.workers} Ray workers | {local_rate:.0f} / {remote_rate:.0f} episodes/s "
            f"({remote_rate / local_rate:.2f}×) |"
        ]

        tiny = sweep(store, seeds=1, shard_size=1, latency=0.0)
        tiny.settings = tiny.settings[:1]
        shards = SweepConfig.model_validate({**tiny.model_dump(), "seeds": list(range(29))})  # 29 x 35 = 1,015
        local = in_process(shards)
        remote = through_ray(shards, args.workers)
        per_shard = (remote["wall_s"] - local["wall_s"] / args.workers) / remote["shards"] * 1000
        print(
            f"(b) {remote['shards']} one-episode shards: {remote['wall_s']:.2f} s through Ray vs "
            f"{local['wall_s']:.2f} s of episode work in-process: {per_shard:.2f} ms overhead per shard, "
            f"{per_shard:.2f} s per 1,000 shards"
        )
        readme.append(
            f"| (b) {remote['shards']:,} one-episode shards through Ray, beyond the episodes' own work | "
            f"{per_shard:.1f} ms per shard: {per_shard:.1f} s per 1,000 shards |"
        )

        seeds = max(1, args.episodes // 105)
        big = sweep(store, seeds=seeds, shard_size=64, latency=0.0)
        before = rss_mb()
        result = through_ray(big, args.workers, sample=True)
        print(
            f"(c) plan of {result['episodes']:,} episodes in {result['shards']:,} shards: driver RSS {before:.0f} MB "
            f"before planning, {result['planned_mb']:.0f} MB planned, peak {result['peak_mb']:.0f} MB while "
            f"running ({result['episodes'] / result['wall_s']:.0f} ep/s), {result['end_mb']:.0f} MB at the end, "
            f"{result['summary_mb']:.0f} MB after the summary (streamed over every result)"
        )
        readme.append(
            f"| (c) driver RSS for a plan of {result['episodes']:,} episodes ({result['shards']:,} shards): before / "
            f"planned / peak while running / end | {before:.0f} / {result['planned_mb']:.0f} / {result['peak_mb']:.0f} "
            f"/ {result['end_mb']:.0f} MB |"
        )
        readme.append(
            f"| (c) after the end-of-run summary, streamed over every shard file | {result['summary_mb']:.0f} MB |"
        )
        print("README:\n" + "\n".join(readme))


if __name__ == "__main__":
    main()
