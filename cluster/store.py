"""The run store: one folder (or S3 prefix) per run, and the ledger of which shards are done.

```
<store>/<run_id>/
  manifest.json                 the plan, written first and never changed
  traces/<shard_id>.jsonl.gz    one trajectory per line, gzip-compressed
  results/<shard_id>.parquet    one EpisodeResult per row; its existence means the shard is committed
  history/                      earlier versions of rerun shards
```

A shard is committed by writing its traces, then its results object, each atomically (local: temporary name and
rename; S3: one PUT). A shard without a results object is pending or failed: that is the whole ledger.

A run on S3 (``store: s3://bucket/prefix``) also keeps a local copy under ``run.local_copy`` (``runs/<run_id>``),
written first. If S3 is unreachable mid-run the driver goes on writing the local copy, which then holds every
result; ``undertow sync RUN`` uploads what S3 lacks when it is back. The copy records where it belongs in
``origin.json``.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from cluster.plan import RunManifest
from env_core.model import EpisodeResult, Trajectory
from storage import LocalObjects, S3Objects, StorageUnavailable, is_s3, join_uri
from workers.runner import ShardOutput

ORIGIN = "origin.json"
MANIFEST = "manifest.json"
# after a failed upload, commits skip S3 for this long instead of each paying the connection timeout
RETRY_REMOTE_AFTER_S = 20.0


class StoreError(ValueError):
    pass


class RunStore:
    """A run's objects. ``local`` always exists (the run folder, or the local copy of an S3 run); ``remote`` is
    the S3 location for S3 runs, None for local ones."""

    def __init__(self, folder: str | Path, remote: S3Objects | None = None):
        self.local = LocalObjects(folder)
        self.remote = remote
        self.warn: Callable[[str], None] = lambda message: None
        self._remote_down_until = 0.0

    @property
    def folder(self) -> Path:
        return self.local.folder

    @property
    def location(self) -> str:
        return self.remote.uri if self.remote else str(self.folder)

    # ------------------------------------------------------------------------------------------------ opening

    @classmethod
    def create(
        cls, root: str | Path, run_id: str, local_copy: str | Path = "runs", endpoint_url: str | None = None
    ) -> RunStore:
        """The store of a new run under ``root`` (a folder or ``s3://bucket/prefix``)."""
        if not is_s3(root):
            return cls(Path(root) / run_id)
        remote = S3Objects(join_uri(root, run_id), endpoint_url)
        store = cls(Path(local_copy) / run_id, remote)
        store.local.put(ORIGIN, json.dumps({"store": remote.uri, "endpoint_url": endpoint_url}).encode())
        return store

    @classmethod
    def open(cls, run: str, root: str | Path = "runs", local_copy: str | Path = "runs") -> RunStore:
        """A run by id under ``root``, by the path of its folder, or by its ``s3://`` URI."""
        if is_s3(run) or is_s3(root):
            uri = run if is_s3(run) else join_uri(root, run)
            folder = Path(local_copy) / uri.rstrip("/").rsplit("/", 1)[-1]
            known = json.loads((folder / ORIGIN).read_text()) if (folder / ORIGIN).is_file() else {}
            remote = S3Objects(uri, known.get("endpoint_url"))
            if not (folder / MANIFEST).is_file() and not remote.exists(MANIFEST):
                raise StoreError(f"run '{run}' not found (no manifest.json at {remote.uri})")
            store = cls(folder, remote)
            store.local.put(ORIGIN, json.dumps({"store": remote.uri, "endpoint_url": remote.endpoint_url}).encode())
            return store
        for candidate in (Path(run), Path(root) / run):
            if (candidate / MANIFEST).is_file():
                origin = candidate / ORIGIN
                if origin.is_file():  # the local copy of an S3 run: its S3 side stays the place of record
                    data = json.loads(origin.read_text())
                    return cls(candidate, S3Objects(data["store"], data.get("endpoint_url")))
                return cls(candidate)
        runs = sorted(p.parent.name for p in Path(root).glob(f"*/{MANIFEST}")) if Path(root).is_dir() else []
        hint = f"; runs under {root}: {', '.join(runs[-5:])}" if runs else ""
        raise StoreError(f"run '{run}' not found (no manifest.json in {run} or {Path(root) / run}){hint}")

    # ------------------------------------------------------------------------------------------------ writing

    def _write(self, *objects: tuple[str, bytes]) -> None:
        """Local copy first (it never depends on the network), then S3 in the same order."""
        for key, data in objects:
            self.local.put(key, data)
        if self.remote is None or time.monotonic() < self._remote_down_until:
            return
        try:
            for key, data in objects:
                self.remote.put(key, data)
        except StorageUnavailable as exc:
            self._remote_down_until = time.monotonic() + RETRY_REMOTE_AFTER_S
            self.warn(f"{exc}; results are kept in {self.folder} (upload later: undertow sync)")

    def write_manifest(self, manifest: RunManifest) -> None:
        if self.local.exists(MANIFEST):
            raise StoreError(f"{self.folder / MANIFEST} already exists: a manifest is written once")
        data = manifest.model_dump_json(indent=2).encode()
        if self.remote is not None:
            self.remote.ensure_bucket()  # an unreachable S3 fails the run here, before any work
            if self.remote.exists(MANIFEST):
                raise StoreError(f"{self.remote.uri}/{MANIFEST} already exists: a manifest is written once")
            self.local.put(MANIFEST, data)
            self.remote.put(MANIFEST, data)  # not through _write: an outage here must stop the run
            return
        self._write((MANIFEST, data))

    def commit(self, output: ShardOutput) -> None:
        """Write a finished shard: traces first, then the results object that marks it done."""
        lines = "".join(t.model_dump_json() + "\n" for t in output.trajectories).encode()
        self._write(
            (f"traces/{output.shard_id}.jsonl.gz", gzip.compress(lines, compresslevel=6, mtime=0)),
            (f"results/{output.shard_id}.parquet", results_parquet(output.results)),
        )

    def supersede(self, shard_id: str) -> None:
        """Move a committed shard's objects aside (``history/``) before it runs again: reruns keep the record."""
        n = len(self._keys(f"history/{shard_id}.")) // 2 + 1
        for kind, suffix in (("results", "parquet"), ("traces", "jsonl.gz")):
            key = f"{kind}/{shard_id}.{suffix}"
            try:
                data = self._read(key)
            except KeyError:
                continue
            self._write((f"history/{shard_id}.{n}.{suffix}", data))
            self.local.delete(key)
            if self.remote is not None:
                try:
                    self.remote.delete(key)
                except StorageUnavailable as exc:
                    raise StoreError(f"cannot rerun shard {shard_id} while S3 is unreachable: {exc}") from exc

    def sync(self) -> list[str]:
        """Upload every object of the local copy that S3 lacks or holds in another version (after an outage);
        returns the keys uploaded."""
        if self.remote is None:
            return []
        uploaded = []
        self.remote.ensure_bucket()
        remote = self.remote.digests()
        local = self.local.digests()
        # manifest first, results last: S3 never shows a result whose traces are missing
        order = sorted((k for k in local if k != ORIGIN), key=lambda k: (k != MANIFEST, k.startswith("results/"), k))
        for key in order:
            if remote.get(key) != local[key]:
                self.remote.put(key, self.local.get(key))
                uploaded.append(key)
        self._remote_down_until = 0.0
        return uploaded

    # ------------------------------------------------------------------------------------------------ reading

    def _read(self, key: str) -> bytes:
        """The local copy when it has the object, else S3 (and keep what was fetched)."""
        try:
            return self.local.get(key)
        except KeyError:
            if self.remote is None:
                raise
        data = self.remote.get(key)
        self.local.put(key, data)
        return data

    def _keys(self, prefix: str) -> set[str]:
        found = set(self.local.list_keys(prefix))
        if self.remote is not None:
            try:
                found.update(self.remote.list_keys(prefix))
            except StorageUnavailable as exc:
                self.warn(f"{exc}; reading the local copy only")
        return found

    def manifest(self) -> RunManifest:
        return RunManifest.model_validate_json(self._read(MANIFEST))

    def result_digests(self) -> dict[str, str]:
        """MD5 of each committed shard's results object, by shard id: changes when a shard is rerun."""
        found: dict[str, str] = {}
        if self.remote is not None:
            try:
                found.update(self.remote.digests("results/"))
            except StorageUnavailable as exc:
                self.warn(f"{exc}; reading the local copy only")
        found.update(self.local.digests("results/"))  # the local copy is never older than S3
        return {k.removeprefix("results/").removesuffix(".parquet"): v for k, v in found.items()}

    def committed(self) -> set[str]:
        return {k.removeprefix("results/").removesuffix(".parquet") for k in self._keys("results/")}

    def shard_results(self, shard_id: str) -> list[EpisodeResult]:
        try:
            data = self._read(f"results/{shard_id}.parquet")
        except KeyError:
            return []
        return [
            EpisodeResult.model_validate({**r, "details": json.loads(r.get("details") or "{}")})
            for r in parquet_rows(data)
        ]

    def results(self) -> list[EpisodeResult]:
        """Committed results in manifest order (model, suite, setting as planned)."""
        return list(self.iter_results())

    def iter_results(self) -> Iterator[EpisodeResult]:
        """The same, one shard object at a time: summaries of large runs stream instead of loading everything."""
        committed = self.committed()
        for shard in self.manifest().shards:
            if shard.shard_id in committed:
                yield from self.shard_results(shard.shard_id)

    def trajectories(self, shard_id: str | None = None) -> Iterator[Trajectory]:
        shards = [shard_id] if shard_id else sorted(self.committed())
        for shard in shards:
            try:
                text = gzip.decompress(self._read(f"traces/{shard}.jsonl.gz")).decode()
            except KeyError:
                try:  # runs written before traces were compressed
                    text = self._read(f"traces/{shard}.jsonl").decode()
                except KeyError:
                    continue
            for line in text.splitlines():
                if line:
                    yield Trajectory.model_validate_json(line)


def parquet_rows(data: bytes) -> list[dict[str, Any]]:
    """The rows of a results Parquet object, read single-threaded: arrow's pool threads still alive at interpreter
    exit can abort a process that has finished its work ("terminate called without an active exception",
    apache/arrow#34314)."""
    return pq.ParquetFile(pa.BufferReader(data)).read(use_threads=False).to_pylist()


def results_parquet(results: Iterable[EpisodeResult]) -> bytes:
    """Episode results as one Parquet object, the store's results format."""
    # details differ by family: kept as JSON text so every shard file has the same columns
    rows = [{**r.model_dump(mode="json"), "details": json.dumps(r.details)} for r in results]
    # arrow's own buffers, not Python file objects: arrow threads that outlive a read must not need the GIL
    # (a BytesIO released by an arrow thread at interpreter exit aborts the process)
    buffer = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    return buffer.getvalue().to_pybytes()
