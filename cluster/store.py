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

Creating a run is all or nothing: :meth:`RunStore.write_manifest` creates the folder, and when anything fails
before the manifest is in place (an unreachable S3, a folder that cannot be written) it removes what it created.

Every results object has the same Parquet schema (:data:`RESULT_SCHEMA`, derived from
:class:`undertow.env_core.model.EpisodeResult`), so a ``results/`` folder reads as one table (``pandas.read_parquet``,
``pyarrow.dataset``). :meth:`RunStore.accounting` checks that the results match the plan, episode by episode.

A run on S3 (``store: s3://bucket/prefix``) also keeps a local copy under ``run.local_copy`` (``runs/<run_id>``),
written first. If S3 is unreachable mid-run the driver goes on writing the local copy, which then holds every
result; ``undertow sync RUN`` uploads what S3 lacks when it is back. The copy records where it belongs in
``origin.json``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import time
import types
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from undertow.cluster.plan import RunManifest
from undertow.env_core.errors import ConfigError, InfraError
from undertow.env_core.model import EpisodeResult, Trajectory
from undertow.env_core.search import ToolAccess
from undertow.env_core.untrusted import clean_value
from undertow.storage import LocalObjects, S3Objects, StorageUnavailable, is_s3, join_uri
from undertow.workers.runner import ShardOutput

ORIGIN = "origin.json"
MANIFEST = "manifest.json"
# after a failed upload, commits skip S3 for this long instead of each paying the connection timeout
RETRY_REMOTE_AFTER_S = 20.0


class StoreError(ConfigError):
    """A run or store that cannot be found or written, as the user named it."""


def _reason(exc: OSError) -> str:
    """What the system said, without the ``[Errno N]`` prefix and the file name (the message names the path)."""
    return exc.strerror or str(exc)


@dataclass(frozen=True)
class Accounting:
    """A run's results against its plan (:meth:`RunStore.accounting`). ``outcomes`` counts the planned episodes
    of committed shards by outcome, each once; ``pending`` the episodes of shards not committed yet; ``missing``
    the planned episodes of committed shards without a result; ``extra`` the results of episodes not planned in
    their shard, or recorded a second time."""

    planned: int
    outcomes: dict[str, int] = field(default_factory=dict)
    pending: int = 0
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def balanced(self) -> bool:
        """Every planned episode is accounted for exactly once: recorded with an outcome, or in a pending shard."""
        return not self.missing and not self.extra and self.planned == sum(self.outcomes.values()) + self.pending


class RunStore:
    """A run's objects. ``local`` always exists (the run folder, or the local copy of an S3 run); ``remote`` is
    the S3 location for S3 runs, None for local ones."""

    def __init__(self, folder: str | Path, remote: S3Objects | None = None, root: str | Path | None = None):
        self.local = LocalObjects(folder)
        self.remote = remote
        # the store as the user named it, for messages
        self.root = str(root) if root is not None else (remote.uri if remote else str(Path(folder).parent))
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
        """The store of a new run under ``root`` (a folder or ``s3://bucket/prefix``). Nothing is written until
        :meth:`write_manifest`, which creates the run."""
        if not is_s3(root):
            return cls(Path(root) / run_id, root=root)
        return cls(Path(local_copy) / run_id, S3Objects(join_uri(root, run_id), endpoint_url), root=root)

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
        """Create the run: its folder (the local copy, for S3), ``origin.json`` (S3) and the manifest, on S3 too.
        All or nothing: when any of it fails, what this call created is removed and nothing is left behind."""
        if self.local.exists(MANIFEST):
            raise StoreError(f"{self.folder / MANIFEST} already exists: a manifest is written once")
        data = manifest.model_dump_json(indent=2).encode()
        objects = [(MANIFEST, data)]
        if self.remote is not None:
            # S3 is asked first, before anything local exists: an unreachable S3 fails the run here, leaving nothing
            self.remote.ensure_bucket()
            if self.remote.exists(MANIFEST):
                raise StoreError(f"{self.remote.uri}/{MANIFEST} already exists: a manifest is written once")
            origin = {"store": self.remote.uri, "endpoint_url": self.remote.endpoint_url}
            objects.insert(0, (ORIGIN, json.dumps(origin).encode()))
        created = self._create_folder()
        written: list[str] = []
        try:
            for key, blob in objects:
                existed = self.local.exists(key)
                try:
                    self.local.put(key, blob)
                except OSError as exc:
                    raise StoreError(
                        f"store {self.root}: cannot write {Path(os.path.abspath(self.local.path(key)))}: {_reason(exc)}"
                    ) from exc
                if not existed:
                    written.append(key)
            if self.remote is not None:
                self.remote.put(MANIFEST, data)  # not through _write: an outage here must stop the run
        except BaseException:
            self._undo(written, created)
            raise

    def _create_folder(self) -> list[Path]:
        """Create the run folder and its missing parents; the folders this call created (outermost first), so
        that a failure can remove exactly those. Raises :class:`StoreError` naming the store and the reason."""
        folder = Path(os.path.abspath(self.folder))
        wanted: list[Path] = []
        for path in (folder, *folder.parents):
            if path.is_dir():
                break
            wanted.append(path)
        created: list[Path] = []
        what = "its local copy" if self.remote is not None else "the run folder"
        try:
            for path in reversed(wanted):
                if path.exists() and not path.is_dir():
                    raise StoreError(f"store {self.root}: cannot create {what} {folder}: {path} is a file")
                try:
                    path.mkdir()
                except FileExistsError:  # made meanwhile by someone else: not ours to remove
                    if not path.is_dir():
                        raise
                    continue
                created.append(path)
        except OSError as exc:
            self._undo([], created)
            raise StoreError(f"store {self.root}: cannot create {what} {folder}: {_reason(exc)}") from exc
        except BaseException:
            self._undo([], created)
            raise
        return created

    def _undo(self, keys: list[str], folders: list[Path]) -> None:
        """Remove the objects and folders a failed creation made, and nothing else: a folder only when empty."""
        for key in keys:
            with contextlib.suppress(OSError):
                self.local.delete(key)
        for folder in reversed(folders):
            try:
                folder.rmdir()
            except OSError:
                break

    def commit(self, output: ShardOutput) -> None:
        """Write a finished shard: traces first, then the results object that marks it done."""
        lines = "".join(_trajectory_line(t) for t in output.trajectories).encode()
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
        return [result_from_row(r) for r in parquet_rows(data)]

    def results(self) -> list[EpisodeResult]:
        """Committed results in manifest order (model, suite, setting as planned)."""
        return list(self.iter_results())

    def iter_results(self) -> Iterator[EpisodeResult]:
        """The same, one shard object at a time: summaries of large runs stream instead of loading everything."""
        committed = self.committed()
        for shard in self.manifest().shards:
            if shard.shard_id in committed:
                yield from (_with_access(r, shard.suite.access) for r in self.shard_results(shard.shard_id))

    def accounting(self, manifest: RunManifest | None = None) -> Accounting:
        """Every planned episode against the results, one shard object at a time (only ids and outcomes are read):
        which are recorded (by outcome), pending, missing from a committed shard, or recorded where not planned
        or twice."""
        manifest = manifest or self.manifest()
        committed = self.committed()
        outcomes: Counter[str] = Counter()
        pending = 0
        missing: list[str] = []
        extra: list[str] = []
        seen: set[str] = set()

        def read(shard_id: str) -> list[dict[str, Any]]:
            try:
                data = self._read(f"results/{shard_id}.parquet")
            except KeyError:  # listed on S3 but gone since: as if never committed
                return []
            return parquet_rows(data, columns=["episode_id", "outcome"])

        for shard in manifest.shards:
            planned = [e.episode_id for e in shard.episodes]
            if shard.shard_id not in committed:
                pending += len(planned)
                continue
            wanted = set(planned)
            found: set[str] = set()
            for row in read(shard.shard_id):
                episode = row["episode_id"]
                if episode not in wanted or episode in seen:
                    extra.append(episode)
                    continue
                seen.add(episode)
                found.add(episode)
                outcomes[row["outcome"]] += 1
            missing.extend(e for e in planned if e not in found)
        planned_shards = {s.shard_id for s in manifest.shards}
        for shard_id in sorted(committed - planned_shards):  # a results object of a shard the plan does not have
            extra.extend(row["episode_id"] for row in read(shard_id))
        return Accounting(
            planned=manifest.n_episodes, outcomes=dict(outcomes), pending=pending, missing=missing, extra=extra
        )

    def check_accounting(self, manifest: RunManifest | None = None, shown: int = 5) -> Accounting:
        """:meth:`accounting`, raising :class:`InfraError` (naming the run and the first ``shown`` episodes of
        each kind) when the results do not match the plan."""
        manifest = manifest or self.manifest()
        found = self.accounting(manifest)
        if found.balanced:
            return found

        def listed(ids: list[str]) -> str:
            more = f", … ({len(ids)} in all)" if len(ids) > shown else ""
            return ", ".join(ids[:shown]) + more

        problems = []
        if found.missing:
            problems.append(
                f"{len(found.missing)} planned episode(s) of committed shards have no result: {listed(found.missing)}"
            )
        if found.extra:
            problems.append(f"{len(found.extra)} result(s) not planned or recorded twice: {listed(found.extra)}")
        if not problems:
            problems.append(
                f"{found.planned} episodes planned, {sum(found.outcomes.values())} recorded and {found.pending} pending"
            )
        raise InfraError(
            f"run {manifest.run_id} ({self.location}): results do not match the plan: {'; '.join(problems)}"
        )

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
            # "\n" only: str.splitlines also breaks at U+2028, U+2029 and NEL, which JSON strings carry unescaped
            for line in text.split("\n"):
                if line:
                    yield Trajectory.model_validate_json(line)


def _trajectory_line(trajectory: Trajectory) -> str:
    """One trajectory as a JSON line. Its model text was cleaned when it entered it (env_core.untrusted); should a
    value ever slip past, it is cleaned here rather than failing the shard's commit."""
    try:
        return trajectory.model_dump_json() + "\n"
    except ValueError:  # pydantic's serialization error (a lone surrogate, a number it cannot print)
        return json.dumps(clean_value(trajectory.model_dump(mode="python")), ensure_ascii=False) + "\n"


def parquet_rows(data: bytes, columns: list[str] | None = None) -> list[dict[str, Any]]:
    """The rows of a results Parquet object (only ``columns`` when given), read single-threaded: arrow's pool
    threads still alive at interpreter exit can abort a process that has finished its work ("terminate called
    without an active exception", apache/arrow#34314)."""
    return pq.ParquetFile(pa.BufferReader(data)).read(columns=columns, use_threads=False).to_pylist()


_ARROW_TYPES: dict[Any, pa.DataType] = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}


def _result_schema() -> tuple[pa.Schema, frozenset[str]]:
    """The Parquet schema of :class:`EpisodeResult`, field by field, and the columns kept as JSON text. A field of a
    type not handled here fails at import, so a new field is given its column type on purpose."""
    fields = []
    json_columns = set()
    for name, info in EpisodeResult.model_fields.items():
        annotation, nullable = info.annotation, False
        if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            nullable = len(args) < len(typing.get_args(annotation))
            annotation = args[0] if len(args) == 1 else annotation
        if typing.get_origin(annotation) is typing.Annotated:  # a cleaned type (env_core.untrusted): its base
            annotation = typing.get_args(annotation)[0]
        if typing.get_origin(annotation) in (dict, list) or annotation in (dict, list):
            # family-specific facts (details) differ by family: JSON text keeps one column type for all shards
            kind = pa.string()
            json_columns.add(name)
        elif isinstance(annotation, type) and issubclass(annotation, Enum):
            kind = pa.string()  # the enum's value (outcome)
        elif typing.get_origin(annotation) is typing.Literal and all(
            isinstance(a, str) for a in typing.get_args(annotation)
        ):
            kind = pa.string()  # one of a few names (answers)
        elif annotation in _ARROW_TYPES:
            kind = _ARROW_TYPES[annotation]
        else:
            raise TypeError(f"EpisodeResult.{name}: no Parquet column type for {annotation!r} (cluster/store.py)")
        fields.append(pa.field(name, kind, nullable=nullable))
    return pa.schema(fields), frozenset(json_columns)


# One schema for every results object: a column never changes type from shard to shard (an all-null ``error``
# would otherwise be typed null in one file and string in the next, and the folder would not read as one table).
RESULT_SCHEMA, JSON_COLUMNS = _result_schema()


def _with_access(result: EpisodeResult, access: ToolAccess) -> EpisodeResult:
    """A result stored before results carried their suite's tool access gets it from the shard that ran it (the
    manifest knows), so that reports reading it (``--layout hohw``) treat old runs as new ones."""
    if result.access_mode is not None:
        return result
    return result.model_copy(
        update={
            "access_mode": access.mode,
            "access_functions": access.functions,
            "access_distractors": access.distractors,
        }
    )


def result_from_row(row: dict[str, Any]) -> EpisodeResult:
    """An :class:`EpisodeResult` from a results row (JSON columns decoded)."""
    return EpisodeResult.model_validate({**row, **{c: json.loads(row[c]) for c in JSON_COLUMNS if row.get(c)}})


def results_parquet(results: Iterable[EpisodeResult]) -> bytes:
    """Episode results as one Parquet object, the store's results format (:data:`RESULT_SCHEMA`)."""
    rows = []
    for result in results:
        row = result.model_dump(mode="json")
        rows.append({**row, **{c: json.dumps(row[c]) for c in JSON_COLUMNS}})
    # arrow's own buffers, not Python file objects: arrow threads that outlive a read must not need the GIL
    # (a BytesIO released by an arrow thread at interpreter exit aborts the process)
    buffer = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows, schema=RESULT_SCHEMA), buffer)
    return buffer.getvalue().to_pybytes()
