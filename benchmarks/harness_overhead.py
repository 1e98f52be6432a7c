"""Harness overhead with the oracle policy (no model latency): episodes/s and time per tool step.

Two measurements in one run, so their ratio is meaningful on a shared, noisy machine:
  1. in-process: shards run one after another in this process (one core);
  2. through Ray: the same kind of work planned as a sweep and executed by worker actors, committed to a run store.

Usage: python -m benchmarks.harness_overhead [--repeats N] [--seeds N] [--workers N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from benchmarks import cpu_model
from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.scheduler import ensure_ray, execute
from undertow.cluster.store import RunStore
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.suites import load_ref, suite_ref
from undertow.workers.clients import PolicyModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard

SETTINGS = ["clean", "first_tried", "impossible"]


def in_process(repeats: int) -> dict[str, float]:
    ref = suite_ref("smoke")
    suite = load_ref(ref)
    shards = [
        ShardSpec(
            shard_id=f"{setting}-{r}",
            model=PolicyModel(name="oracle"),
            suite=ref,
            setting=PRESET_SETTINGS[setting],
            episodes=[EpisodePlan(episode_id=f"{s.id}-{r}", scenario_id=s.id, seed=r) for s in suite.scenarios],
        )
        for r in range(repeats)
        for setting in SETTINGS
    ]
    run_shard(shards[0])  # warm-up: imports, validators, first database copy
    started = time.perf_counter()
    episodes = steps = turns = 0
    for shard in shards:
        output = run_shard(shard)
        episodes += len(output.results)
        steps += sum(r.n_tool_calls for r in output.results)
        turns += sum(r.n_turns for r in output.results)
    wall = time.perf_counter() - started
    return {"episodes": episodes, "tool_steps": steps, "turns": turns, "wall_s": wall}


def through_ray(seeds: int, workers: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as store_root:
        config = SweepConfig.model_validate(
            {
                "name": "bench",
                "models": ["oracle"],
                "suites": ["smoke"],
                "settings": SETTINGS,
                "seeds": list(range(seeds)),
                "run": {"store": store_root, "shard_size": 64},
            }
        )
        started = time.perf_counter()
        ensure_ray()
        ray_start = time.perf_counter() - started
        manifest = plan_sweep(config)
        store = RunStore(Path(store_root) / manifest.run_id)
        store.write_manifest(manifest)
        started = time.perf_counter()
        execute(manifest, store, workers=workers)
        wall = time.perf_counter() - started
        results = store.results()
    return {
        "episodes": len(results),
        "tool_steps": sum(r.n_tool_calls for r in results),
        "turns": sum(r.n_turns for r in results),
        "wall_s": wall,
        "ray_start_s": ray_start,
        "workers": workers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=10, help="in-process passes over smoke × 3 settings")
    parser.add_argument("--seeds", type=int, default=20, help="seeds in the Ray sweep (105 episodes per seed)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Ray worker actors")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    local = in_process(args.repeats)
    ray_run = through_ray(args.seeds, args.workers)
    rows = {}
    for name, m in (("in-process (1 core)", local), (f"Ray ({args.workers} workers)", ray_run)):
        cores = m.get("workers", 1)
        rows[name] = {
            "episodes": m["episodes"],
            "tool_steps": m["tool_steps"],
            "wall_s": round(m["wall_s"], 3),
            "episodes_per_s": round(m["episodes"] / m["wall_s"], 1),
            "tool_steps_per_s": round(m["tool_steps"] / m["wall_s"], 1),
            "tool_steps_per_s_per_core": round(m["tool_steps"] / m["wall_s"] / cores, 1),
            "harness_ms_per_step": round(1000 * m["wall_s"] / m["tool_steps"], 3),
            "harness_ms_per_turn": round(1000 * m["wall_s"] / m["turns"], 3),
        }
    ratio = rows[f"Ray ({args.workers} workers)"]["episodes_per_s"] / rows["in-process (1 core)"]["episodes_per_s"]
    report = {
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version()},
        "results": rows,
        "ray_vs_in_process_throughput": round(ratio, 2),
        "ray_start_s": round(ray_run["ray_start_s"], 2),
        "target": ">= 500 tool steps per second per core in-process",
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    machine = report["machine"]
    print(f"machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}")
    columns = ("episodes", "steps", "wall s", "ep/s", "steps/s/core", "ms/step")
    print(f"{'':24s} " + " ".join(f"{c:>{max(len(c), 8)}s}" for c in columns))
    for name, row in rows.items():
        print(
            f"{name:24s} {row['episodes']:8d} {row['tool_steps']:8d} {row['wall_s']:8.2f} {row['episodes_per_s']:8.1f}"
            f" {row['tool_steps_per_s_per_core']:12.1f} {row['harness_ms_per_step']:8.3f}"
        )
    print(f"Ray / in-process throughput: {ratio:.2f}x  (Ray start-up, not included above: {report['ray_start_s']} s)")
    print("README:")
    seeds = "" if args.seeds == 20 else f", `--seeds {args.seeds}`"
    for label, row in zip(
        ("in-process, 1 core", f"Ray, {args.workers} worker actors{seeds}"), rows.values(), strict=True
    ):
        print(
            f"| {label} | {row['episodes']:,} | {row['tool_steps']:,} | {row['wall_s']:.2f} s | "
            f"{row['episodes_per_s']:,.0f} | {row['tool_steps_per_s_per_core']:,.0f} | "
            f"{row['harness_ms_per_step']:.2f} ms |"
        )


if __name__ == "__main__":
    main()
