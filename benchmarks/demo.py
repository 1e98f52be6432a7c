"""End-to-end wall time of the README's sweeps, run as a user runs them: ``.venv/bin/undertow run CONFIG``.

Usage: python -m benchmarks.demo [SWEEP ...] [--repeats N]
  SWEEP: quickstart, sqlfuncs, hohw, hohw-closed, services, services-harness, liveapi, middleware, failtalms

Each repetition is a fresh subprocess of the ``undertow`` command with a temporary ``--store`` (and, for
``sqlfuncs``, an empty build cache, so the first build of the suite and the open world's embeddings are included,
as the README says), timed from start to exit: interpreter start, imports, planning, a local Ray starting and
stopping, the episodes, the summary. ``quickstart`` is what ``make demo`` runs after installation; the other shipped
configs run here at full size (the tests run them as shipped but ``limit:``ed). Prints the median and the range, and
one line ready to paste into the README.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIGS = {
    "quickstart": ("configs/quickstart.yaml", "`make demo` (315 episodes, including Ray start-up) takes"),
    "sqlfuncs": (
        "configs/sqlfuncs.yaml",
        "`.venv/bin/undertow run configs/sqlfuncs.yaml` (the first build of the suite included) takes",
    ),
    # the shipped configs the tests run limited, at full size (each the first build of its suite included)
    **{
        name: (f"configs/{name}.yaml", f"`undertow run configs/{name}.yaml` (its suite built first) takes")
        for name in ("hohw", "hohw-closed", "services", "services-harness", "liveapi", "middleware", "failtalms")
    },
}
SLOW = {"hohw", "hohw-closed", "services", "services-harness", "liveapi", "middleware", "failtalms"}


def undertow() -> str:
    """The command next to this interpreter (the venv's), as ``make demo`` calls it."""
    beside = Path(sys.executable).parent / "undertow"
    return str(beside) if beside.exists() else str(REPO / ".venv" / "bin" / "undertow")


def time_run(config: str) -> tuple[float, str]:
    with tempfile.TemporaryDirectory(prefix="undertow-demo-") as tmp:
        # an empty build cache: the suite is compiled as on a first run (smoke is built in; this changes nothing)
        env = {**os.environ, "UNDERTOW_CACHE": str(Path(tmp) / "cache")}
        env.pop("MLFLOW_TRACKING_URI", None)  # tracking off: the README's figure is the plain run
        started = time.perf_counter()
        done = subprocess.run(
            [undertow(), "run", config, "--store", str(Path(tmp) / "runs")],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise SystemExit(f"undertow run {config} exited {done.returncode}:\n{tail}")
    return wall, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweeps", nargs="*", metavar="SWEEP", help=f"any of {', '.join(CONFIGS)} (default: all)")
    parser.add_argument("--repeats", type=int, default=None, help="runs of each (default: 3; 1 for a full config)")
    args = parser.parse_args()
    unknown = [name for name in args.sweeps if name not in CONFIGS]
    if unknown:
        parser.error(f"unknown sweep {unknown[0]!r}; expected one of {', '.join(CONFIGS)}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    for name in args.sweeps or list(CONFIGS):
        config, sentence = CONFIGS[name]
        walls = []
        repeats = args.repeats or (1 if name in SLOW else 3)
        for attempt in range(1, repeats + 1):
            wall, _ = time_run(config)
            walls.append(wall)
            print(f"{name} run {attempt}: {wall:.1f} s")
        median = statistics.median(walls)
        print(f"{name}: median {median:.1f} s, range {min(walls):.1f}–{max(walls):.1f} s over {len(walls)} runs")
        print(f"README: {sentence} {min(walls):.0f}–{max(walls):.0f} s (median {median:.0f} s of {len(walls)} runs)")


if __name__ == "__main__":
    main()
