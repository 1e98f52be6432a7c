"""What tracking costs the driver: committing shards to S3 instead of a local folder, logging each commit to MLflow,
uploading after an outage, and rendering the report.

Usage: python -m benchmarks.tracking [--shards 60] [--episodes 16]

Starts the real services with ``infra/local-services.sh`` (SeaweedFS and an MLflow server whose artifacts go to it)
on free loopback ports in a temporary folder, and stops them at the end. The shards are real: the oracle and naive
policies on the smoke suite under clean and first_tried, run in-process once and committed to every store, so each
comparison in one run sees the same bytes. Figures are per shard commit (the driver's cost), medians and p95.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from undertow.cluster.config import SweepConfig, TrackingConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.store import RunStore
from undertow.cluster.tracking import Tracker
from undertow.storage import S3Objects
from undertow.workers.runner import ShardOutput, run_shard

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from services import BUCKET, LocalServices  # noqa: E402 - the tests' wrapper around infra/local-services.sh


def quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"p50 {1000 * statistics.median(ordered):.1f} ms, p95 {1000 * p95:.1f} ms"


def ms(samples: list[float]) -> str:
    """``p50 (p95)`` in milliseconds, as the README's table has them."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{1000 * statistics.median(ordered):.1f} ({1000 * p95:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=int, default=60, help="shards per store (spread over 4 groups)")
    parser.add_argument("--episodes", type=int, default=16, help="episodes per shard")
    args = parser.parse_args()
    seeds = max(1, -(-args.shards * args.episodes // (4 * 35)))
    config = SweepConfig.model_validate(
        {
            "name": "trackbench",
            "models": [{"name": "oracle", "size_b": 7}, {"name": "naive", "size_b": 1}],
            "suites": ["smoke"],
            "settings": ["clean", "first_tried"],
            "seeds": list(range(seeds)),
            "run": {"shard_size": args.episodes},
        }
    )
    manifest = plan_sweep(config)
    shards = manifest.shards[: args.shards]
    manifest = manifest.model_copy(update={"shards": shards})
    started = time.perf_counter()
    outputs: list[ShardOutput] = [run_shard(s) for s in shards]
    episodes = sum(len(o.results) for o in outputs)
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "",
    )
    print(f"{cpu or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"{len(outputs)} shards, {episodes} episodes run in-process in {time.perf_counter() - started:.1f} s")

    with tempfile.TemporaryDirectory(prefix="undertow-trackbench-") as tmp:
        folder = Path(tmp)
        services = LocalServices.allocate(folder / "services")
        up = time.perf_counter()
        services.up()
        services_s = time.perf_counter() - up
        print(f"services up (SeaweedFS + MLflow server) in {services_s:.1f} s")
        os.environ.update(services.env())
        try:
            stores = {
                "local folder": RunStore.create(folder / "local", manifest.run_id),
                "S3 (SeaweedFS)": RunStore.create(f"s3://{BUCKET}/bench", manifest.run_id, folder / "copy"),
            }
            commit: dict[str, list[float]] = {}
            for name, store in stores.items():
                store.write_manifest(manifest)
                commit[name] = []
                for output in outputs:
                    t0 = time.perf_counter()
                    store.commit(output)
                    commit[name].append(time.perf_counter() - t0)
                print(f"commit to {name}: {quantiles(commit[name])} per shard")
            ratio = statistics.median(commit["S3 (SeaweedFS)"]) / statistics.median(commit["local folder"])
            print(f"  S3 / local: {ratio:.1f}x")
            local, s3 = commit["local folder"], commit["S3 (SeaweedFS)"]
            readme = [
                "| commit a shard (traces + results) to a local folder / to S3, p50 (p95) | "
                f"{ms(local)} / {ms(s3)} ms: S3 {ratio:.1f}× local |"
            ]
            logged_by: dict[str, list[float]] = {}
            finished_by: dict[str, float] = {}

            trackers = {
                "MLflow server": TrackingConfig(mlflow_uri=services.mlflow_url, experiment="bench-server"),
                "MLflow local folder": TrackingConfig(mlflow_uri=str(folder / "mlruns"), experiment="bench-local"),
            }
            for name, tracking in trackers.items():
                tracker = Tracker.for_store(stores["local folder"], tracking)
                assert tracker is not None
                t0 = time.perf_counter()
                tracker.start()
                opened = time.perf_counter() - t0
                logged = []
                for output in outputs:
                    t0 = time.perf_counter()
                    tracker.shard_committed(output.shard_id, output.results)
                    logged.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                report = tracker.finish()
                finished = time.perf_counter() - t0
                assert not report.problems, report.problems
                print(
                    f"{name}: open runs {opened:.2f} s; per shard commit {quantiles(logged)}; "
                    f"end of run (final metrics, report, plots, results table) {finished:.2f} s"
                )
                logged_by[name], finished_by[name] = logged, finished
            server, folder_uri = "MLflow server", "MLflow local folder"
            readme.append(
                "| log a shard's group to the MLflow server / to a local MLflow folder, p50 (p95) | "
                f"{ms(logged_by[server])} / {ms(logged_by[folder_uri])} ms |"
            )
            readme.append(
                "| end of run: final metrics, gaps, HTML report, plots, results table — server / local folder | "
                f"{finished_by[server]:.2f} / {finished_by[folder_uri]:.2f} s |"
            )

            # an outage kept every shard off S3: the local copy holds the run, `undertow sync` uploads it
            staged = RunStore.create(folder / "staged", manifest.run_id)
            staged.write_manifest(manifest)
            for output in outputs:
                staged.commit(output)
            late = RunStore(staged.folder, S3Objects(f"s3://{BUCKET}/late/{manifest.run_id}"))
            t0 = time.perf_counter()
            uploaded = late.sync()
            elapsed = time.perf_counter() - t0
            size = sum(len(late.local.get(k)) for k in uploaded) / 1e6
            print(f"sync after an outage: {len(uploaded)} objects ({size:.1f} MB) in {elapsed:.2f} s")
            readme.append(
                f"| `undertow sync` of a run whose {len(outputs)} shards never reached S3 ({len(uploaded)} objects "
                f"with the manifest, {size:.1f} MB) | {elapsed:.2f} s |"
            )

            from undertow.cluster.report import figures, pick_trace, render_html
            from undertow.scoring.analysis import analyse

            results = stores["local folder"].results()
            t0 = time.perf_counter()
            analysis = analyse(results, {"oracle": 7, "naive": 1})
            analysed = time.perf_counter() - t0
            t0 = time.perf_counter()
            images = figures(analysis)
            drawn = time.perf_counter() - t0
            t0 = time.perf_counter()
            html = render_html(analysis, "bench", images, pick_trace(results, stores["local folder"].trajectories))
            rendered = time.perf_counter() - t0
            print(
                f"report over {len(results)} episodes: analysis {1000 * analysed:.0f} ms, plots {1000 * drawn:.0f} ms, "
                f"HTML {1000 * rendered:.0f} ms ({len(html) / 1e3:.0f} kB)"
            )
            readme.append(
                f"| report over {len(results)} episodes: analysis / plots / HTML | {1000 * analysed:.0f} ms / "
                f"{1000 * drawn:.0f} ms / {1000 * rendered:.0f} ms |"
            )
            print(f"README (the services started in {services_s:.1f} s):\n" + "\n".join(readme))
        finally:
            services.down()


if __name__ == "__main__":
    main()
