"""Soak: many oracle episodes through Ray exactly as a user runs them, watching the processes for leaks. Not CI.

Usage: python -m benchmarks.soak [--episodes 10000] [--workers N] [--interval 2] [--json PATH]

The built-in ``oracle`` policy on the built-in ``smoke`` suite under clean / first_tried / impossible, with as many
seeds as it takes to reach ``--episodes`` (105 episodes per seed), goes through ``cluster.api.run`` with a config
written to a temporary folder and a temporary store: default shard size, default worker count (unless
``--workers``), a local Ray started by the run. A sampler thread records every ``--interval`` seconds the driver's
RSS and open file descriptors and, for each episode worker process (``ray::EpisodeWorker``, a child of the raylet
this run started), its RSS, descriptors and child processes, plus every process under this run.

Each series is read after warm-up (the first sample once 10% of the episodes are done), at the end (the moment the
last shard commits, Ray still up) and compared against the bounds below. The exit status is 1 if any check fails.
Needs psutil (installed with the serving extras, as ``make bench`` does: ``pip install psutil`` otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# Bounds on growth between warm-up and the end. Why these numbers:
# - The driver keeps no results while a run goes (they stream to the store; benchmarks.scheduler measures ~25 MB
#   over 100,000 episodes), so 200 MB over the run is allocator and pyarrow noise with room to spare; a leak of
#   20 KB per episode would cross it at 10,000 episodes.
# - A worker holds one shard at a time; the suite, its database and the imports are loaded before warm-up ends.
#   150 MB each leaves room for the allocator's high-water mark and flags a leak of ~30 KB per episode it ran (two
#   workers share 10,000 episodes).
# - Descriptors: a leaked SQLite connection, database copy or socket per shard (630 shards at 10,000 episodes)
#   would add hundreds; 16 absorbs Ray's own connections opening lazily and a shard in flight (a worker holds ~7
#   more while it runs one: its database copies), since a reading may catch a worker busy or idle.
# - Child processes: the oracle starts none (no CodeAct kernel); any left is a leak. The number of processes under
#   the run must not grow (a worker restarted means a crash), and none may remain once the run has returned.
BOUNDS = {
    "driver_rss_growth_mb": 200.0,
    "worker_rss_growth_mb": 150.0,
    "fd_growth": 16,
    "worker_children_at_end": 0,
    "process_growth": 0,
    "processes_left_after_run": 0,
}
WARMUP_SHARE = 0.10
EPISODES_PER_SEED = 35 * 3  # smoke's scenarios x the three settings
# Ray titles an actor's process "ray::EpisodeWorker", and "ray::EpisodeWorker.run_shard" while a method runs
WORKER_TITLE = "ray::EpisodeWorker"


def _psutil() -> Any:
    try:
        import psutil
    except ImportError:
        raise SystemExit("benchmarks.soak needs psutil: pip install psutil (make bench installs it)") from None
    return psutil


@dataclass
class Sample:
    t: float  # seconds since the run started
    done: int  # episodes committed
    driver_rss_mb: float
    driver_fds: int
    processes: int  # every process under this run (Ray's included), the driver excluded
    workers: dict[int, dict[str, float]] = field(default_factory=dict)  # pid -> rss_mb, fds, children


class Sampler:
    """Samples the driver and its process tree on a thread; ``mark`` takes one sample now, on the caller's
    thread, and keeps it under a name (warm-up, end)."""

    def __init__(self, interval: float):
        self.psutil = _psutil()
        self.me = self.psutil.Process()
        self.interval = interval
        self.started = time.perf_counter()
        self.done = 0
        self.series: list[Sample] = []
        self.marks: dict[str, Sample] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="soak-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def mark(self, name: str) -> Sample:
        sample = self.sample()
        with self._lock:
            self.marks[name] = sample
            self.series.append(sample)
        return sample

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            sample = self.sample()
            with self._lock:
                self.series.append(sample)

    def descendants(self) -> list[Any]:
        try:
            return list(self.me.children(recursive=True))
        except self.psutil.Error:
            return []

    def sample(self) -> Sample:
        ps = self.psutil
        memory = self.me.memory_info().rss / 2**20
        sample = Sample(time.perf_counter() - self.started, self.done, memory, self.me.num_fds(), 0)
        tree = self.descendants()
        sample.processes = len(tree)
        for proc in tree:
            try:
                # the episode workers: the raylet's children that Ray titled after the actor class
                title = (proc.cmdline() or [""])[0]
                if title != WORKER_TITLE and not title.startswith(WORKER_TITLE + "."):
                    continue
                with proc.oneshot():
                    sample.workers[proc.pid] = {
                        "rss_mb": proc.memory_info().rss / 2**20,
                        "fds": proc.num_fds(),
                        "children": len(proc.children(recursive=True)),
                    }
            except ps.Error:  # gone between the listing and the read
                continue
        return sample


def write_config(folder: Path, seeds: int) -> Path:
    """The sweep as a user writes it: only what the soak needs, every run option at its default but the store."""
    path = folder / "soak.yaml"
    path.write_text(
        "name: soak\n"
        "models: [oracle]\n"
        "suites: [smoke]\n"
        "settings: [clean, first_tried, impossible]\n"
        f"seeds: {list(range(seeds))}\n"
        f"run: {{store: {folder / 'runs'}}}\n"
    )
    return path


def worker_warm_up(series: list[Sample], warm: Sample, pid: int, settle: float) -> dict[str, float] | None:
    """A worker's warm-up reading: its first sample after the run's warm-up mark that is also ``settle`` seconds
    after the worker first showed up (a worker Ray placed late is still importing and loading the suite)."""
    first = next((s.t for s in series if pid in s.workers), None)
    if first is None:
        return None
    return next((s.workers[pid] for s in series if pid in s.workers and s.t >= max(warm.t, first + settle)), None)


def growth_checks(
    series: list[Sample], warm: Sample, end: Sample, left: list[str], settle: float
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def check(name: str, start: float, final: float, bound: float, growth: bool = True) -> None:
        value = final - start if growth else final
        rows.append(
            {
                "series": name,
                "warm_up": round(start, 1),
                "end": round(final, 1),
                "growth": round(final - start, 1),
                "bound": f"growth <= {bound:g}" if growth else f"= {bound:g}",
                "pass": value <= bound,
            }
        )

    check("driver RSS (MB)", warm.driver_rss_mb, end.driver_rss_mb, BOUNDS["driver_rss_growth_mb"])
    check("driver open fds", warm.driver_fds, end.driver_fds, BOUNDS["fd_growth"])
    seen = sorted({pid for s in series for pid in s.workers})
    for pid in seen:
        first, last = worker_warm_up(series, warm, pid, settle), end.workers.get(pid)
        if last is None:  # a worker that died before the end: a crash (Ray starts another)
            rows.append(
                {"series": f"worker {pid}", "warm_up": "", "end": "gone", "growth": "", "bound": "alive at the end"}
            )
            rows[-1]["pass"] = False
            continue
        if first is None:  # started too late to settle before the end: read from its first sample
            first = next(s.workers[pid] for s in series if pid in s.workers)
        check(f"worker {pid} RSS (MB)", first["rss_mb"], last["rss_mb"], BOUNDS["worker_rss_growth_mb"])
        check(f"worker {pid} open fds", first["fds"], last["fds"], BOUNDS["fd_growth"])
        check(
            f"worker {pid} child processes",
            first["children"],
            last["children"],
            BOUNDS["worker_children_at_end"],
            False,
        )
    check("processes under the run", warm.processes, end.processes, BOUNDS["process_growth"])
    rows.append(
        {
            "series": "processes left after the run",
            "warm_up": "",
            "end": len(left),
            "growth": "",
            "bound": f"= {BOUNDS['processes_left_after_run']}",
            "pass": len(left) <= BOUNDS["processes_left_after_run"],
            "left": left,
        }
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=10_000, help="at least this many (whole seeds of 105)")
    parser.add_argument("--workers", type=int, default=None, help="worker actors (default: the run's default)")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between samples")
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        help="where the series go (default: .bench/soak-<UTC time>.json, ignored by git)",
    )
    args = parser.parse_args()

    from undertow.cluster import api

    # tracking stays off whatever the shell says: the soak measures the harness, not an MLflow server
    os.environ.pop("MLFLOW_TRACKING_URI", None)
    seeds = -(-args.episodes // EPISODES_PER_SEED)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    out = args.json or Path(".bench") / f"soak-{stamp}.json"
    sampler = Sampler(args.interval)
    baseline = sampler.sample()
    total = [0]

    def progress(p: api.RunProgress) -> None:
        sampler.done = p.done
        total[0] = p.total
        if "warm_up" not in sampler.marks and p.done >= WARMUP_SHARE * p.total:
            sampler.mark("warm_up")
        if p.done >= p.total and p.total and "end" not in sampler.marks:
            sampler.mark("end")  # the last shard just committed: workers and Ray still up

    with tempfile.TemporaryDirectory(prefix="undertow-soak-") as tmp:
        config = write_config(Path(tmp), seeds)
        sampler.start()
        started = time.perf_counter()
        outcome = api.run(config, workers=args.workers, hooks=api.Hooks(progress=progress))
        wall = time.perf_counter() - started
        sampler.stop()
        # Ray is shut down by now; give its processes a moment to exit before counting what is left
        deadline = time.monotonic() + 15
        while sampler.descendants() and time.monotonic() < deadline:
            time.sleep(0.5)
        left = [f"{p.pid} {p.name()}" for p in sampler.descendants()]
        after = sampler.sample()
        stored = sum(sum(row.outcomes.values()) for row in outcome.rows)

    series = sorted(sampler.series, key=lambda sample: sample.t)
    warm, end = sampler.marks.get("warm_up"), sampler.marks.get("end")
    if warm is None or end is None:
        raise SystemExit("the run ended before the warm-up and end samples were taken")
    planned = outcome.manifest.n_episodes
    classes = dict(sorted(outcome.outcomes.items()))
    accounting_ok = planned == sum(classes.values()) == stored and not (
        classes.get("infra_error", 0) or classes.get("config_error", 0)
    )
    checks = growth_checks(series, warm, end, left, settle=2 * args.interval)
    checks.insert(
        0,
        {
            "series": "accounting",
            "warm_up": "",
            "end": f"planned {planned}, " + ", ".join(f"{k} {v}" for k, v in classes.items()) + f", stored {stored}",
            "growth": "",
            "bound": "planned = sum of classes = stored; no infra/config errors",
            "pass": accounting_ok,
        },
    )
    rate = planned / outcome.elapsed_s
    passed = all(c["pass"] for c in checks)

    machine = f"{os.cpu_count()} cores, Python {platform.python_version()}"
    print(
        f"soak: {planned:,} oracle episodes ({seeds} seeds x 105) in {len(outcome.manifest.shards)} shards, "
        f"{len(end.workers)} episode workers; {machine}"
    )
    print(
        f"run {outcome.elapsed_s:.1f} s ({rate:.0f} episodes/s), {wall:.1f} s with Ray start-up and the summary; "
        f"warm-up at {warm.done:,} episodes ({warm.t:.1f} s), end at {end.done:,} ({end.t:.1f} s); "
        f"{len(series)} samples"
    )
    print(
        f"driver before the run: {baseline.driver_rss_mb:.0f} MB RSS, {baseline.driver_fds} fds; after: "
        f"{after.driver_rss_mb:.0f} MB, {after.driver_fds} fds"
    )
    header = f"{'series':34s} {'warm-up':>10s} {'end':>10s} {'growth':>8s}  {'bound':28s} result"
    print(header)
    print("-" * len(header))
    for c in checks:
        if c["series"] == "accounting":
            print(f"{'accounting':34s} {c['end']}  {'PASS' if c['pass'] else 'FAIL'}")
            continue
        print(
            f"{c['series']:34s} {c['warm_up']!s:>10s} {c['end']!s:>10s} {c['growth']!s:>8s}  {c['bound']:28s} "
            f"{'PASS' if c['pass'] else 'FAIL'}"
        )
    worker_growth = [c["growth"] for c in checks if c["series"].endswith("RSS (MB)") and "worker" in c["series"]]
    fd_growth = [c["growth"] for c in checks if c["series"].endswith("open fds")]
    children = sum(int(c["end"]) for c in checks if c["series"].endswith("child processes"))
    failed = [c["series"] for c in checks if not c["pass"]]
    driver_growth = next(c["growth"] for c in checks if c["series"] == "driver RSS (MB)")
    print(
        f"\nREADME: soak (`python -m benchmarks.soak`): {planned:,} oracle episodes through Ray in "
        f"{outcome.elapsed_s:.0f} s ({rate:.0f} episodes/s); from warm-up to the end driver RSS "
        f"{driver_growth:+.0f} MB, worker RSS {' / '.join(f'{g:+.0f}' for g in worker_growth)} MB, open fds "
        f"{max(fd_growth, default=0):+.0f} at most, {children} child process(es) at the end, {len(left)} process(es) "
        f"left after the run: {'PASS' if passed else 'FAIL (' + ', '.join(failed) + ')'}"
    )
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "episodes": planned,
        "shards": len(outcome.manifest.shards),
        "run_s": outcome.elapsed_s,
        "wall_s": wall,
        "episodes_per_s": rate,
        "outcomes": classes,
        "bounds": BOUNDS,
        "checks": checks,
        "passed": passed,
        "baseline": baseline.__dict__,
        "after": after.__dict__,
        "series": [s.__dict__ for s in series],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=str))
    print(f"series: {out}")
    raise SystemExit(0 if passed else 1)


if __name__ == "__main__":
    main()
