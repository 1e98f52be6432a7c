"""services: tool-call latency with and without faults, and oracle episodes per second.

Usage: python -m benchmarks.services_bench [--rounds N] [--repeats N]

Latency: the oracle walks every scenario of the built library through an ``Environment``, and each call's own
timing (argument checks, the service method, the fault layer, disclosure) is collected, once with the
scenarios' own faults (``base``) and once with none (``clean``); p50 / p99 over all calls of ``--rounds`` rounds.
Throughput: the oracle's whole library as one shard per setting, run in this process by the episode runner (agent
loop, policy, scoring and the family's details included), best of ``--repeats``; the ratio of the two settings is
the figure to compare, the absolute rate depends on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

from benchmarks import percentile
from undertow.env_core.environment import Environment
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.plans import play
from undertow.env_core.services.build import ServicesSuite
from undertow.env_core.suites import Suite, load_ref
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import PolicyModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard


def latencies(suite: Suite, rounds: int, faults: bool) -> list[float]:
    """Per tool call of the oracle's walk of every scenario, the time ``Environment.step`` measured for it."""
    out: list[float] = []
    for _ in range(rounds):
        for scenario in suite.scenarios:
            walk = play(Environment(scenario, suite.toolbox, faults=None if faults else []), scenario, recover=True)
            out += [step.observation.latency_ms for step in walk.tool_steps() if step.observation is not None]
    return out


def throughput(ref: ServicesSuite, setting: str, repeats: int) -> tuple[float, int]:
    suite = load_ref(ref)
    shard = ShardSpec(
        shard_id="bench",
        model=PolicyModel(name="oracle"),
        suite=ref,
        setting=PRESET_SETTINGS[setting],
        agent=AgentConfig(prompt="assistant", max_turns=24),
        episodes=[EpisodePlan(episode_id=s.id, scenario_id=s.id, seed=0) for s in suite.scenarios],
    )
    best = 0.0
    for _ in range(repeats):
        output = run_shard(shard)
        assert all(r.outcome == "scored" and r.score == 1.0 for r in output.results), "the oracle must pass"
        best = max(best, len(output.results) / output.wall_s)
    return best, len(suite.scenarios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ref = ServicesSuite()
    started = time.perf_counter()
    suite = load_ref(ref)
    load_s = time.perf_counter() - started
    rows = {}
    for name, faults in (("clean", False), ("base", True)):
        values = latencies(suite, args.rounds, faults)
        rows[name] = {
            "calls": len(values),
            "p50_ms": percentile(values, 50),
            "p99_ms": percentile(values, 99),
            "mean_ms": statistics.fmean(values),
        }
    rates = {}
    for setting in ("clean", "base"):
        rate, n = throughput(ref, setting, args.repeats)
        rates[setting] = {"episodes": n, "episodes_per_s": rate}
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "build_or_load_s": round(load_s, 2),
        "tool_call_latency": rows,
        "oracle_throughput": rates,
        "base_over_clean_rate": rates["base"]["episodes_per_s"] / rates["clean"]["episodes_per_s"],
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
