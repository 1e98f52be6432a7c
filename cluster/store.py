"""The run store: one folder per run, and the ledger of which shards are done.

```
runs/<run_id>/
  manifest.json              the plan, written first and never changed
  traces/<shard_id>.jsonl    one trajectory per line
  results/<shard_id>.parquet one EpisodeResult per row; its existence means the shard is committed
```

A shard is committed by writing its traces, then its results file, each to a temporary name and renamed into place
(atomic on one filesystem). A shard without a results file is pending or failed: that is the whole ledger.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from cluster.plan import RunManifest
from env_core.model import EpisodeResult, Trajectory
from workers.runner import ShardOutput


class StoreError(ValueError):
    pass


def _atomic_write(path: Path, write: Callable[[str], object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class RunStore:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    @classmethod
    def open(cls, run: str, root: str | Path = "runs") -> RunStore:
        """A run by id under ``root``, or by the path of its folder."""
        for candidate in (Path(run), Path(root) / run):
            if (candidate / "manifest.json").is_file():
                return cls(candidate)
        runs = sorted(p.name for p in Path(root).glob("*/manifest.json")) if Path(root).is_dir() else []
        hint = f"; runs under {root}: {', '.join(p.split('/')[0] for p in runs[-5:])}" if runs else ""
        raise StoreError(f"run '{run}' not found (no manifest.json in {run} or {Path(root) / run}){hint}")

    @property
    def manifest_path(self) -> Path:
        return self.folder / "manifest.json"

    def write_manifest(self, manifest: RunManifest) -> None:
        if self.manifest_path.exists():
            raise StoreError(f"{self.manifest_path} already exists: a manifest is written once")
        text = manifest.model_dump_json(indent=2)
        _atomic_write(self.manifest_path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))

    def manifest(self) -> RunManifest:
        return RunManifest.model_validate_json(self.manifest_path.read_text(encoding="utf-8"))

    def _results_path(self, shard_id: str) -> Path:
        return self.folder / "results" / f"{shard_id}.parquet"

    def committed(self) -> set[str]:
        folder = self.folder / "results"
        return {p.stem for p in folder.glob("*.parquet")} if folder.is_dir() else set()

    def commit(self, output: ShardOutput) -> None:
        """Write a finished shard: traces first, then the results file that marks it done."""
        lines = "".join(t.model_dump_json() + "\n" for t in output.trajectories)
        _atomic_write(
            self.folder / "traces" / f"{output.shard_id}.jsonl",
            lambda tmp: Path(tmp).write_text(lines, encoding="utf-8"),
        )
        # details differ by family: kept as JSON text so every shard file has the same columns
        rows = [{**r.model_dump(mode="json"), "details": json.dumps(r.details)} for r in output.results]
        table = pa.Table.from_pylist(rows)
        _atomic_write(self._results_path(output.shard_id), lambda tmp: pq.write_table(table, tmp))

    def shard_results(self, shard_id: str) -> list[EpisodeResult]:
        path = self._results_path(shard_id)
        if not path.is_file():
            return []
        return [
            EpisodeResult.model_validate({**r, "details": json.loads(r.get("details") or "{}")})
            for r in pq.read_table(path).to_pylist()
        ]

    def supersede(self, shard_id: str) -> None:
        """Move a committed shard's files aside (``history/``) before it runs again: reruns keep the record."""
        history = self.folder / "history"
        history.mkdir(exist_ok=True)
        n = len(list(history.glob(f"{shard_id}.*.parquet"))) + 1
        for kind, suffix in (("results", "parquet"), ("traces", "jsonl")):
            path = self.folder / kind / f"{shard_id}.{suffix}"
            if path.is_file():
                os.replace(path, history / f"{shard_id}.{n}.{suffix}")

    def results(self) -> list[EpisodeResult]:
        """Committed results in manifest order (model, suite, setting as planned)."""
        return list(self.iter_results())

    def iter_results(self) -> Iterator[EpisodeResult]:
        """The same, one shard file at a time: summaries of large runs stream instead of loading everything."""
        for shard in self.manifest().shards:
            yield from self.shard_results(shard.shard_id)

    def trajectories(self, shard_id: str | None = None) -> Iterator[Trajectory]:
        paths = (
            [self.folder / "traces" / f"{shard_id}.jsonl"]
            if shard_id
            else sorted((self.folder / "traces").glob("*.jsonl"))
        )
        for path in paths:
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    yield Trajectory.model_validate_json(line)
