"""liveapi: build time, REST request latency through the worker's live server, its start-up, and SQL-mode answers.

Usage: python -m benchmarks.liveapi_bench [--spider DIR] [--rounds N]

- **Build**: ``build_suite`` over the Spider folder (the gold answers checked for ties and empty results, parse,
  plan, REST endpoints, and every gold sequence run through the real tools to keep only reproducing items), best of
  three: in all and per 100 questions; with the REST construction figures (arguments per query, the share with
  none, candidates per query).
- **Server start**: the first REST call of a fresh tool box starts the FastAPI + uvicorn child process; timed from
  the call to its answer, for the whole built universe of endpoints, best of three.
- **Request latency**: every REST scenario's gold call, ``--rounds`` times, through ``Environment.step`` (argument
  checks, the fault layer, the HTTP GET to the server on 127.0.0.2, the SQL, the JSON back), one server reused
  across all episodes; p50 / p99 of the step latencies. The same calls through SLOT's in-process tools are shown
  beside it for scale.
- **SQL answers**: every REST question's gold SQL run as a SQL-mode final answer (``answer_result``: read-only,
  under the time limit, files refused), p50 / p99.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import percentile
from undertow.env_core.environment import Environment
from undertow.env_core.liveapi.build import LiveApiSuite, build, build_suite
from undertow.env_core.model import Action, ToolCall
from undertow.env_core.spider import read_spider
from undertow.env_core.suites import Suite, load_suite

SPIDER = Path(__file__).resolve().parents[2] / "shared" / "data" / "spider-dev"


def gold_action(call_id: str, tool: str, arguments: dict[str, object]) -> Action:
    return Action(kind="tool_call", tool_call=ToolCall(id=call_id, name=tool, arguments=arguments))


def step_latencies(suite: Suite, formulation: str, rounds: int) -> list[float]:
    """Each gold call's ``Environment.step`` latency, over every scenario of one formulation."""
    out: list[float] = []
    scenarios = [s for s in suite.scenarios if s.metadata["formulation"] == formulation]
    for _ in range(rounds):
        for scenario in scenarios:
            env = Environment(scenario, suite.toolbox, faults=[])
            env.reset()
            for n, call in enumerate(scenario.gold.plans[0]):
                action = Action(
                    kind="tool_call", tool_call=ToolCall(id=f"c{n}", name=call.tool, arguments=call.arguments)
                )
                observation = env.step(action)
                assert observation is not None and observation.ok, observation
                out.append(observation.latency_ms)
            env.close()
    return out


def sql_answer_latencies(suite: Suite, rounds: int) -> list[float]:
    """Each REST question's gold SQL run as a SQL-mode final answer, through the tool box's ``answer_result``."""
    toolbox = suite.toolbox
    out: list[float] = []
    scenarios = [s for s in suite.scenarios if s.metadata["formulation"] == "rest"]
    for _ in range(rounds):
        for scenario in scenarios:
            state = toolbox.new_state()
            toolbox.start(state, scenario.model_copy(update={"metadata": {**scenario.metadata, "mode": "sql"}}))
            started = time.perf_counter()
            result = toolbox.answer_result(state, scenario.metadata["sql"])
            out.append((time.perf_counter() - started) * 1000)
            assert isinstance(result, dict) and "rows" in result, result
            toolbox.close_state(state)
    return out


def server_start(folder: Path) -> float:
    """Seconds from a fresh tool box's first REST call to its answer (the child process starting included)."""
    suite = load_suite(folder)
    scenario = next(s for s in suite.scenarios if s.metadata["formulation"] == "rest")
    env = Environment(scenario, suite.toolbox, faults=[])
    env.reset()
    call = scenario.gold.plans[0][0]
    started = time.perf_counter()
    observation = env.step(
        Action(kind="tool_call", tool_call=ToolCall(id="c", name=call.tool, arguments=call.arguments))
    )
    took = time.perf_counter() - started
    assert observation is not None and observation.ok
    env.close()
    suite.toolbox.close()  # type: ignore[attr-defined]
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spider", type=Path, default=SPIDER)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    questions = len(read_spider(args.spider).questions)

    compile_s = []
    for _ in range(3):
        started = time.perf_counter()
        _, _, report = build_suite(args.spider)
        compile_s.append(time.perf_counter() - started)
    per_100 = min(compile_s) / questions * 100
    rest_stats = report["stats"]["formulations"]["rest"]

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "suite"
        build(LiveApiSuite(family="liveapi", spider=str(args.spider)), folder)
        endpoints = sum(1 for line in (folder / "tools.jsonl").read_text().splitlines() if '"kind":"rest"' in line)
        starts = [server_start(folder) for _ in range(3)]
        suite = load_suite(folder)
        suite.toolbox.rest_server()  # type: ignore[attr-defined]  # started before timing: its start is above
        rest = step_latencies(suite, "rest", args.rounds)
        slot = step_latencies(suite, "slot", args.rounds)
        sql = sql_answer_latencies(suite, args.rounds)
        suite.toolbox.close()  # type: ignore[attr-defined]
    figures = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "questions": questions,
        "build_s": round(min(compile_s), 2),
        "compile_s_per_100_questions": round(per_100, 3),
        "rest_queries": rest_stats["queries"],
        "rest_arguments_per_query": rest_stats["slots"],
        "rest_share_without_arguments": rest_stats["no_slots"],
        "rest_candidates_per_query": rest_stats["available"],
        "endpoints": endpoints,
        "server_start_s": round(min(starts), 2),
        "rest_calls": len(rest),
        "rest_p50_ms": round(percentile(rest, 50), 2),
        "rest_p99_ms": round(percentile(rest, 99), 2),
        "rest_mean_ms": round(statistics.fmean(rest), 2),
        "slot_calls": len(slot),
        "slot_p50_ms": round(percentile(slot, 50), 3),
        "slot_p99_ms": round(percentile(slot, 99), 3),
        "sql_answers": len(sql),
        "sql_p50_ms": round(percentile(sql, 50), 3),
        "sql_p99_ms": round(percentile(sql, 99), 3),
    }
    print(json.dumps(figures, indent=2))
    print(
        f"README: liveapi: build {min(compile_s):.2f} s ({per_100:.2f} s per 100 questions, {questions} in); REST "
        f"{rest_stats['slots']:.2f} arguments per query, {100 * rest_stats['no_slots']:.0f}% with none, "
        f"{rest_stats['available']:.1f} candidates per query; REST server start "
        f"{min(starts):.2f} s ({endpoints} endpoints, once per worker process, reused across episodes); REST call "
        f"p50 {figures['rest_p50_ms']} ms, p99 {figures['rest_p99_ms']} ms over {len(rest)} calls; SLOT call "
        f"p50 {figures['slot_p50_ms']} ms, p99 {figures['slot_p99_ms']} ms; SQL-mode answer p50 "
        f"{figures['sql_p50_ms']} ms, p99 {figures['sql_p99_ms']} ms over {len(sql)} queries"
    )


if __name__ == "__main__":
    main()
