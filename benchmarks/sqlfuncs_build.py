"""sqlfuncs: the build table for a Spider folder, compile time, and per-call latency of generated functions.

Usage: python -m benchmarks.sqlfuncs_build [--spider PATH] [--repeats N] [--calls N] [--cells N] [--update-readme]
       python -m benchmarks.sqlfuncs_build --scale [--min-questions N] [--min-databases N] [--repeats N]

With --update-readme the build table in README.md (between the sqlfuncs-stats markers) is regenerated from this
run, so the figures there are never typed by hand.

With --scale it measures the build at the size of the whole of Spider: it generates a Spider-format folder of at
least 9,000 questions over at least 160 databases from --spider (each database cloned under new names, its
questions repeated with the name changed; the .sqlite files are hard links) and builds it in a fresh process per
build, serially and with the default pool of processes, reporting wall time and peak memory (ru_maxrss).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import percentile
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import Action, ToolCall
from undertow.env_core.sandbox.host import Kernel
from undertow.env_core.sandbox.protocol import FunctionStub, ToolReply, python_name
from undertow.env_core.sqlfuncs.build import PAPER, PAPER_COLUMN, SPLITS, build_suite, default_workers, write_build
from undertow.env_core.suites import load_suite

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SPIDER = REPO.parent / "shared" / "data" / "spider-dev"
BEGIN, END = "<!-- sqlfuncs-stats:begin -->", "<!-- sqlfuncs-stats:end -->"


def stats_table(stats: dict, spider: Path, regenerated: bool = True) -> str:
    lines = [
        f"Built from `{spider.name}` with seed {stats['seed']}, one augmentation tried per kept question"
        + (" (`python -m benchmarks.sqlfuncs_build --update-readme` regenerates this table)." if regenerated else "."),
        "",
        f"| stage | this build | {PAPER_COLUMN}, full Spider |",
        "|---|---:|---:|",
    ]

    def paper(key: str) -> str:
        return f"{PAPER[key]:,}" if key in PAPER else ""

    for stage, count in stats["stages"].items():
        lines.append(f"| {stage} | {count:,} | {paper(stage)} |")
    lines.append(f"| scenarios after augmentation | {stats['scenarios']:,} | {paper('scenarios')} |")
    for split in SPLITS:
        lines.append(f"| {split} scenarios | {stats['scenarios_by_split'][split]:,} | {paper(split)} |")
    lines.append(f"| functions generated | {stats['functions']:,} | {paper('functions')} |")
    for arity, count in stats["functions_by_arguments"].items():
        lines.append(f"| functions with {arity} argument(s) | {count:,} | {paper(arity)} |")
    lines.append(f"| items skipped (malformed, unparseable, failing) | {stats['skipped']:,} | |")
    return "\n".join(lines)


def update_readme(table: str) -> None:
    readme = REPO / "README.md"
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"README.md has no {BEGIN} ... {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")


def codeact(suite: Any, call: tuple[Any, Any], cells: int) -> tuple[list[float], list[float], list[float]]:
    """CodeAct costs, in ms: kernel start-up (to its ready message), and a cell that calls one generated function,
    beyond the time the call itself spends in the environment (which the kernel reaches over its pipe)."""
    scenario, planned = call
    spec = suite.toolbox.specs[planned.tool]
    stub = FunctionStub(planned.tool, list(spec.parameters.get("properties", {})), spec.description)
    env = suite.environment(scenario, 0, PRESET_SETTINGS["clean"])
    env.reset()
    inside: list[float] = []

    def call_tool(name: str, arguments: dict[str, Any]) -> ToolReply:
        started = time.perf_counter()
        observation = env.step(Action(kind="tool_call", tool_call=ToolCall(id="k", name=name, arguments=arguments)))
        inside.append((time.perf_counter() - started) * 1000)
        assert observation is not None and observation.ok, observation
        return ToolReply(ok=True, value=observation.result, notes=observation.notes)

    starts = []
    for _ in range(10):
        started = time.perf_counter()
        Kernel([stub], call_tool).close()
        starts.append((time.perf_counter() - started) * 1000)
    code = f"result = {python_name(planned.tool)}(**{planned.arguments!r})"
    extra, own = [], []
    with Kernel([stub], call_tool) as kernel:
        for _ in range(cells):
            inside.clear()
            started = time.perf_counter()
            result = kernel.run(code)
            wall = (time.perf_counter() - started) * 1000
            assert result.error is None, result.error
            extra.append(wall - sum(inside))
            own.append(sum(inside))
    env.close()
    return starts, extra, own


def generate_spider(source: Path, out: Path, min_questions: int = 9000, min_databases: int = 160) -> Path:
    """A Spider-format folder of at least ``min_questions`` questions over at least ``min_databases`` databases:
    ``source``'s databases cloned as ``<db_id>_c<k>`` (hard links, copies where links fail) with their questions."""
    tables = json.loads((source / "tables.json").read_text())
    questions = json.loads((source / "dev.json").read_text())
    copies = max(math.ceil(min_questions / len(questions)), math.ceil(min_databases / len(tables)))
    out.mkdir(parents=True, exist_ok=True)
    all_tables, all_questions = [], []
    for k in range(copies):
        for entry in tables:
            db_id = entry["db_id"]
            clone = f"{db_id}_c{k:02d}"
            all_tables.append({**entry, "db_id": clone})
            folder = out / "database" / clone
            folder.mkdir(parents=True, exist_ok=True)
            original = source / "database" / db_id / f"{db_id}.sqlite"
            try:
                os.link(original, folder / f"{clone}.sqlite")
            except OSError:
                shutil.copyfile(original, folder / f"{clone}.sqlite")
        all_questions += [{**q, "db_id": f"{q['db_id']}_c{k:02d}"} for q in questions]
    (out / "tables.json").write_text(json.dumps(all_tables))
    (out / "dev.json").write_text(json.dumps(all_questions))
    return out


def build_once(folder: Path, workers: int) -> None:
    """(in a fresh process) One build of ``folder``; prints its time, peak memory and counts as JSON."""
    started = time.perf_counter()
    built = build_suite(folder, seed=0, augment=1, workers=workers)
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "worker_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                "stats": built.stats,
            }
        )
    )


def scale(args: argparse.Namespace) -> None:
    """Build time and peak memory at the size of the whole of Spider, serial and with the default pool."""
    pool = max(2, default_workers(10**9))
    with tempfile.TemporaryDirectory() as tmp:
        folder = generate_spider(args.spider, Path(tmp) / "spider-scale", args.min_questions, args.min_databases)
        databases = len(json.loads((folder / "tables.json").read_text()))
        runs: dict[int, list[dict[str, Any]]] = {1: [], pool: []}
        for _ in range(args.repeats):
            for workers in runs:
                command = [sys.executable, "-m", "benchmarks.sqlfuncs_build", "--build-once", str(folder)]
                done = subprocess.run(
                    [*command, "--workers", str(workers)], cwd=REPO, capture_output=True, text=True, check=True
                )
                runs[workers].append(json.loads(done.stdout.strip().splitlines()[-1]))
    stats = runs[1][0]["stats"]
    assert all(r["stats"] == stats for rs in runs.values() for r in rs), "builds differ"
    questions = stats["stages"]["questions in"]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average {os.getloadavg()[0]:.1f} at the end"
    )
    for workers, results in runs.items():
        seconds = [r["seconds"] for r in results]
        print(
            f"{workers} process(es): median {statistics.median(seconds):.2f} s, min {min(seconds):.2f} s over "
            f"{len(seconds)} builds; peak memory {max(r['peak_mb'] for r in results):.0f} MB"
            + (f" (+ {max(r['worker_peak_mb'] for r in results):.0f} MB per worker)" if workers > 1 else "")
        )
    print()
    print(stats_table(stats, folder, regenerated=False))
    serial = statistics.median(r["seconds"] for r in runs[1])
    pooled = statistics.median(r["seconds"] for r in runs[pool])
    print(
        f"\nREADME: building a generated Spider-format folder of {questions:,} questions over {databases} databases "
        f"(the {len(json.loads((args.spider / 'tables.json').read_text()))} shared Spider dev databases cloned, the "
        f"size of the whole of Spider), augmentation included, takes {serial:.1f} s in one process and "
        f"{pooled:.1f} s with {pool} (median of {args.repeats} builds each, {os.cpu_count()} cores); peak memory "
        f"{max(r['peak_mb'] for r in runs[1]):.0f} MB in one process, {max(r['peak_mb'] for r in runs[pool]):.0f} "
        f"MB + {max(r['worker_peak_mb'] for r in runs[pool]):.0f} MB per worker with {pool}."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spider", type=Path, default=DEFAULT_SPIDER)
    parser.add_argument("--repeats", type=int, default=5, help="builds to time")
    parser.add_argument("--calls", type=int, default=3000, help="function calls to time")
    parser.add_argument("--cells", type=int, default=300, help="CodeAct cells to time")
    parser.add_argument("--update-readme", action="store_true")
    parser.add_argument("--scale", action="store_true", help="build a generated folder the size of all of Spider")
    parser.add_argument("--min-questions", type=int, default=9000, help="--scale: questions at least")
    parser.add_argument("--min-databases", type=int, default=160, help="--scale: databases at least")
    parser.add_argument("--build-once", type=Path, help=argparse.SUPPRESS)  # --scale's child process
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_once is not None:
        build_once(args.build_once, args.workers)
        return
    if args.scale:
        scale(args)
        return

    compile_s = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        built = build_suite(args.spider, seed=0, augment=1)
        compile_s.append(time.perf_counter() - started)
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        folder = write_build(built, Path(out) / "suite")
        write_s = time.perf_counter() - started
        started = time.perf_counter()
        suite = load_suite(folder)
        first_load_s = time.perf_counter() - started  # includes the imports the first load of a family makes
        loads = []
        for _ in range(5):
            started = time.perf_counter()
            load_suite(folder)
            loads.append(time.perf_counter() - started)
        load_s = statistics.median(loads)

        # Per call through the environment (fault layer, schema validation, type checks, SQL on the episode's
        # private copy): the gold calls of every plan of every scenario, round-robin.
        calls = [
            (scenario, planned)
            for scenario in suite.scenarios
            for plan in scenario.gold.plans
            for planned in plan
            if all(not isinstance(v, dict) and not hasattr(v, "from_call") for v in planned.arguments.values())
        ]
        env_by_scenario = {}
        for scenario, _ in calls:
            if scenario.id not in env_by_scenario:
                env = suite.environment(scenario, 0, PRESET_SETTINGS["clean"])
                env.reset()
                env_by_scenario[scenario.id] = env
        latencies = []
        for i in range(args.calls):
            scenario, planned = calls[i % len(calls)]
            action = Action(
                kind="tool_call", tool_call=ToolCall(id="b", name=planned.tool, arguments=planned.arguments)
            )
            started = time.perf_counter()
            observation = env_by_scenario[scenario.id].step(action)
            latencies.append((time.perf_counter() - started) * 1000)
            assert observation is not None and observation.ok, observation
        # a fresh episode copies the database it touches on first use: measure that separately
        first_call = []
        for scenario, planned in calls[: min(200, len(calls))]:
            env = suite.environment(scenario, 0, PRESET_SETTINGS["clean"])
            env.reset()
            action = Action(
                kind="tool_call", tool_call=ToolCall(id="b", name=planned.tool, arguments=planned.arguments)
            )
            started = time.perf_counter()
            env.step(action)
            first_call.append((time.perf_counter() - started) * 1000)
            env.close()
        kernel_start, cell_extra, cell_call = codeact(suite, calls[0], args.cells)

    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}"
    )
    print(
        f"compile {args.spider.name} ({built.stats['stages']['questions in']} questions, "
        f"{len(built.databases)} databases): median {statistics.median(compile_s):.3f} s, "
        f"min {min(compile_s):.3f} s over {args.repeats} builds"
    )
    print(
        f"write the suite folder: {write_s:.3f} s; load it: {load_s:.3f} s (median of 5; the first load in the "
        f"process, imports included: {first_load_s:.3f} s)"
    )
    print(
        f"function call through the environment ({args.calls} calls): p50 {percentile(latencies, 50):.3f} ms, "
        f"p99 {percentile(latencies, 99):.3f} ms"
    )
    print(
        f"first call of an episode (database copy included, {len(first_call)} calls): "
        f"p50 {percentile(first_call, 50):.3f} ms, p99 {percentile(first_call, 99):.3f} ms"
    )
    print(
        f"CodeAct kernel start ({len(kernel_start)} starts): p50 {percentile(kernel_start, 50):.1f} ms; a cell with "
        f"one function call ({len(cell_extra)} cells): p50 {percentile(cell_extra, 50):.3f} ms beyond the call's own "
        f"p50 {percentile(cell_call, 50):.3f} ms"
    )
    print(
        f"\nREADME: compiling the {len(built.databases)} shared Spider dev databases "
        f"({built.stats['stages']['questions in']} questions) takes {statistics.median(compile_s):.2f} s (median of "
        f"{args.repeats} builds); writing and loading the suite folder {1000 * write_s:.0f} / {1000 * load_s:.0f} ms. "
        "A generated function called through the environment (fault layer, schema validation, type checks, SQL on the "
        f"episode's private copy): p50 "
        f"{percentile(latencies, 50):.3f} ms, p99 {percentile(latencies, 99):.2f} ms over {args.calls:,} calls; an "
        f"episode's first call, which copies the database, p50 {percentile(first_call, 50):.2f} ms, p99 "
        f"{percentile(first_call, 99):.2f} ms. (The CodeAct kernel's own figures: python -m benchmarks.sandbox.)"
    )
    table = stats_table(built.stats, args.spider)
    print()
    print(table)
    if args.update_readme:
        update_readme(table)
        print("\nREADME.md updated")


if __name__ == "__main__":
    main()
