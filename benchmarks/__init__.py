"""Benchmark scripts. Run them as modules from the repository root: python -m benchmarks.<name>."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name, for the machine line every benchmark prints."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, as the nearest measured value (no interpolation: every
    figure printed is one that was measured)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]
