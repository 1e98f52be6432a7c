"""CodeAct kernel overhead at both isolation levels: start-up, a trivial cell, a cell with one tool call.

Usage: python -m benchmarks.sandbox [--starts 30] [--cells 2000] [--json]

The two levels are measured in one run and interleaved, so that a noisy (say, 2-core, shared) machine treats them
alike: start i starts a ``namespaces`` kernel and an ``rlimits`` kernel, in an order that swaps every time; the cell
loops keep one kernel of each level open and run the same cell on both, again swapping the order each round.

What is timed, on the host's clock (``time.perf_counter``), as a worker sees it:
  start  ``Kernel(...)`` until it returns: the kernel is up, limits applied, tools defined (namespaces: the
         launcher, the id maps, the file-system view, pivot_root and exec included);
  close  ``Kernel.close()``: shutdown, kill of whatever is left (the whole PID namespace), reaping;
  cell   ``Kernel.run("x = 1")``: one round trip of the protocol, output read back from the host's file;
  call   ``Kernel.run("function_1()")``, whose tool answers at once: the cell plus one tool call round trip;
  memory sample: one sum of the RSS of a kernel's processes over /proc, what the host does every 0.1 s while a
         cell runs (trivial cells end before the first sample, so their figures do not include it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from typing import Any

from benchmarks import cpu_model
from undertow.env_core.sandbox.host import Kernel, Level, SandboxConfig, _tree_usage, available_isolation
from undertow.env_core.sandbox.protocol import FunctionStub, ToolReply

LEVELS: tuple[Level, ...] = ("namespaces", "rlimits")
TOOL = FunctionStub(name="function_1", parameters=[], description="answers at once")
# One kernel runs every cell of a loop: lift the per-episode cap on tool calls (1,024 by default) out of the way
BENCH_SANDBOX = SandboxConfig(calls_per_episode=10_000_000)
# The kernel before namespaces, as issue 14 states it; the rlimits level starts the kernel the same way
BEFORE = {"start_ms": 35.0, "cell_ms": 0.06}


def answer(name: str, arguments: dict[str, Any]) -> ToolReply:
    return ToolReply(ok=True, value=1)


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def summary(values: list[float]) -> dict[str, float]:
    # p90 by the "inclusive" method: a value of the sample's range, never extrapolated past the slowest one
    return {
        "n": len(values),
        "median": statistics.median(values),
        "p90": statistics.quantiles(values, n=10, method="inclusive")[8],
        "max": max(values),
    }


def rounds(levels: tuple[Level, ...], count: int) -> list[tuple[Level, ...]]:
    """``count`` orders of ``levels``, reversed every other round (neither level always goes first)."""
    return [levels if i % 2 == 0 else levels[::-1] for i in range(count)]


def time_starts(levels: tuple[Level, ...], starts: int) -> dict[str, dict[str, list[float]]]:
    times: dict[str, dict[str, list[float]]] = {level: {"start": [], "close": []} for level in levels}
    for order in rounds(levels, starts):
        for level in order:
            started = time.perf_counter()
            kernel = Kernel([TOOL], answer, level=level)
            times[level]["start"].append(ms_since(started))
            started = time.perf_counter()
            kernel.close()
            times[level]["close"].append(ms_since(started))
    return times


def time_cells(levels: tuple[Level, ...], code: str, cells: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {level: [] for level in levels}
    kernels = {level: Kernel([TOOL], answer, sandbox=BENCH_SANDBOX, level=level) for level in levels}
    try:
        for kernel in kernels.values():  # warm-up: the first cell compiles and caches more than the others
            for _ in range(20):
                kernel.run(code)
        for order in rounds(levels, cells):
            for level in order:
                started = time.perf_counter()
                result = kernels[level].run(code)
                times[level].append(ms_since(started))
                if result.error is not None:
                    raise SystemExit(f"{level}: the cell {code!r} failed: {result.error}")
    finally:
        for kernel in kernels.values():
            kernel.close()
    return times


def time_memory_sample(levels: tuple[Level, ...], samples: int = 200) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {level: [] for level in levels}
    for level in levels:
        with Kernel([], answer, level=level) as kernel:
            pid = kernel.pid
            assert pid is not None
            for _ in range(samples):
                started = time.perf_counter()
                _tree_usage(pid)
                times[level].append(ms_since(started))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=30, help="kernel starts per level")
    parser.add_argument("--cells", type=int, default=2000, help="cells per level, for each kind of cell")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    if args.starts < 2 or args.cells < 2:
        parser.error("--starts and --cells need at least 2 (a p90 needs two values)")

    found = available_isolation()
    levels: tuple[Level, ...] = LEVELS if found.level == "namespaces" else ("rlimits",)
    # Warm-up outside the figures: the first start of each level reads the interpreter and the libraries from disk
    time_starts(levels, 1)
    starts = time_starts(levels, args.starts)
    cells = time_cells(levels, "x = 1", args.cells)
    calls = time_cells(levels, "function_1()", args.cells)
    sampling = time_memory_sample(levels)

    results: dict[str, dict[str, dict[str, float]]] = {
        level: {
            "start_ms": summary(starts[level]["start"]),
            "close_ms": summary(starts[level]["close"]),
            "cell_ms": summary(cells[level]),
            "cell_with_call_ms": summary(calls[level]),
            "memory_sample_ms": summary(sampling[level]),
        }
        for level in levels
    }
    ratios = (
        {
            figure: results["namespaces"][figure]["median"] / results["rlimits"][figure]["median"]
            for figure in results["namespaces"]
        }
        if len(levels) == 2
        else {}
    )
    machine = {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version()}
    if args.json:
        report = {"machine": machine, "isolation": found.detail, "results": results, "ratio_namespaces_rlimits": ratios}
        print(json.dumps(report, indent=2))
        return

    print(f"machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}")
    print(f"isolation available: {found.level} ({found.detail})")
    columns = "".join(f"{level + ' p50':>16s}{'p90':>9s}" for level in levels)
    print(f"{'':26s}{columns}{'ratio p50':>11s}" if ratios else f"{'':26s}{columns}")
    labels = {
        "start_ms": f"start ({args.starts}), ms",
        "close_ms": f"close ({args.starts}), ms",
        "cell_ms": f"cell x = 1 ({args.cells:,}), ms",
        "cell_with_call_ms": f"cell + 1 call ({args.cells:,}), ms",
        "memory_sample_ms": "memory sample (200), ms",
    }
    for figure, label in labels.items():
        row = "".join(
            f"{results[level][figure]['median']:16.3f}{results[level][figure]['p90']:9.3f}" for level in levels
        )
        print(f"{label:26s}{row}" + (f"{ratios[figure]:10.2f}x" if ratios else ""))
    rl = results["rlimits"]
    call_rt = {
        level: results[level]["cell_with_call_ms"]["median"] - results[level]["cell_ms"]["median"] for level in levels
    }
    print(
        "one tool call round trip (cell + call minus cell, medians): "
        + ", ".join(f"{level} {call_rt[level]:.3f} ms" for level in levels)
    )
    print(
        f"issue 14's figures for the kernel before namespaces: start ≈ {BEFORE['start_ms']:.0f} ms, "
        f"cell ≈ {BEFORE['cell_ms']:.2f} ms; rlimits here: start {rl['start_ms']['median']:.0f} ms, "
        f"cell {rl['cell_ms']['median']:.3f} ms"
    )
    setup = f"{machine['cores']} cores, {machine['cpu']}"
    if len(levels) == 1:
        print(
            f"README: CodeAct kernel (`python -m benchmarks.sandbox`, {setup}; namespaces unavailable here: "
            f"{found.detail}): rlimits level only, start p50 {rl['start_ms']['median']:.0f} ms, a trivial cell "
            f"p50 {rl['cell_ms']['median']:.2f} ms, a cell with one tool call p50 "
            f"{rl['cell_with_call_ms']['median']:.2f} ms."
        )
        return
    ns = results["namespaces"]
    print(
        f"README: CodeAct kernel (`python -m benchmarks.sandbox`, {setup}, levels interleaved): with namespaces a "
        f"kernel starts in {ns['start_ms']['median']:.0f} ms (p90 {ns['start_ms']['p90']:.0f}; rlimits only "
        f"{rl['start_ms']['median']:.0f} ms, {ratios['start_ms']:.1f}×, over {args.starts} starts each), a trivial "
        f"cell costs {ns['cell_ms']['median']:.2f} ms (p90 {ns['cell_ms']['p90']:.2f}; rlimits "
        f"{rl['cell_ms']['median']:.2f} ms) and a cell with one tool call {ns['cell_with_call_ms']['median']:.2f} ms "
        f"(p90 {ns['cell_with_call_ms']['p90']:.2f}; rlimits {rl['cell_with_call_ms']['median']:.2f} ms), medians of "
        f"{args.cells:,} cells each. The rlimits level starts the kernel as it was started before namespaces (issue "
        f"14 gave ≈ {BEFORE['start_ms']:.0f} ms start and {BEFORE['cell_ms']:.2f} ms per cell then)."
    )


if __name__ == "__main__":
    main()
