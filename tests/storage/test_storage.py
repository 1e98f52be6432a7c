"""The object store on a real S3 server (SeaweedFS) and on a local folder: the same behaviour through one
interface, the run store's objects on S3, the embedding cache shared through S3, and clear errors."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from helpers.ports import free_port_block
from helpers.tracking_stack import BUCKET, TrackingStack

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.store import RunStore, StoreError, parquet_rows
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.suites import load_ref
from undertow.retrieval.cache import EmbeddingCache
from undertow.storage import LocalObjects, S3Objects, StorageUnavailable, open_store
from undertow.workers.clients import PolicyModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.tracking)])
def objects(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "local":
        return open_store(tmp_path / "objects")
    services = request.getfixturevalue("s3_env")
    assert services
    return open_store(f"s3://{BUCKET}/tests/{tmp_path.name}")


def test_both_stores_behave_the_same(objects) -> None:
    assert objects.list_keys() == [] and not objects.exists("a/b.bin")
    objects.put("a/b.bin", b"one")
    objects.put("a/c.bin", b"two")
    objects.put("z.txt", b"three")
    objects.put("a/b.bin", b"uno")  # a second write replaces the object whole
    assert objects.get("a/b.bin") == b"uno" and objects.exists("a/c.bin")
    assert objects.list_keys() == ["a/b.bin", "a/c.bin", "z.txt"] and objects.list_keys("a/") == ["a/b.bin", "a/c.bin"]
    digests = objects.digests("a/")
    assert digests["a/c.bin"] == hashlib.md5(b"two").hexdigest()  # the S3 ETag of a plain PUT
    with pytest.raises(KeyError, match="not found"):
        objects.get("missing.bin")
    objects.delete("a/c.bin")
    assert objects.list_keys("a/") == ["a/b.bin"]


def test_a_wrong_secret_is_refused_with_a_clear_message(s3_env: TrackingStack, monkeypatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    store = S3Objects(f"s3://{BUCKET}/tests/refused")
    with pytest.raises(StorageUnavailable, match=r"S3 store s3://undertow/tests/refused at http://127\.0\.0\.1:\d+: "):
        store.put("x", b"x")
    with pytest.raises(StorageUnavailable, match=r"SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId"):
        store.list_keys()


def test_an_unreachable_server_is_storage_unavailable_not_a_missing_object(tmp_path: Path, monkeypatch) -> None:
    port = free_port_block(1)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    store = S3Objects(f"s3://{BUCKET}/x", endpoint_url=f"http://127.0.0.1:{port}")
    with pytest.raises(StorageUnavailable, match=rf"S3 store s3://undertow/x at http://127.0.0.1:{port} unreachable"):
        store.get("anything")


def test_bad_uris_are_refused() -> None:
    with pytest.raises(ValueError, match="no bucket in 's3://'"):
        S3Objects("s3://")
    with pytest.raises(ValueError, match="not an s3:// URI"):
        S3Objects("/tmp/folder")
    assert isinstance(open_store("relative/folder"), LocalObjects)


def _shard(smoke_ref, model: str = "oracle") -> ShardSpec:
    suite = load_ref(smoke_ref)
    return ShardSpec(
        shard_id=f"shard-{model}",
        model=PolicyModel(name=model),
        suite=smoke_ref,
        setting=PRESET_SETTINGS["first_tried"],
        episodes=[
            EpisodePlan(episode_id=f"{model}-{i}", scenario_id=s.id, seed=0) for i, s in enumerate(suite.scenarios[:6])
        ],
    )


def test_a_run_store_on_s3_holds_what_a_local_one_holds(s3_env: TrackingStack, smoke_ref, tmp_path: Path) -> None:
    config = SweepConfig.model_validate({"models": ["oracle"], "suites": [{"family": "smoke", "limit": 6}]})
    manifest = plan_sweep(config)
    output = run_shard(_shard(smoke_ref))
    # the shard is a hand-made one, not one of the manifest's: "forged-" keeps these stores out of the session's
    # accounting check (tests/conftest.py), which they would fail by design
    local = RunStore.create(tmp_path / "forged-local", manifest.run_id)
    remote = RunStore.create(
        f"s3://{BUCKET}/stores/{tmp_path.name}", manifest.run_id, local_copy=tmp_path / "forged-copy"
    )
    for store in (local, remote):
        store.write_manifest(manifest)
        store.commit(output)
    assert remote.location == f"s3://{BUCKET}/stores/{tmp_path.name}/{manifest.run_id}"
    client = s3_env.s3_client()
    prefix = f"stores/{tmp_path.name}/{manifest.run_id}/"
    keys = {o["Key"].removeprefix(prefix) for o in client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]}
    assert keys == {"manifest.json", "results/shard-oracle.parquet", "traces/shard-oracle.jsonl.gz"}
    body = client.get_object(Bucket=BUCKET, Key=prefix + "results/shard-oracle.parquet")["Body"].read()
    assert len(parquet_rows(body)) == 6
    traces = gzip.decompress(
        client.get_object(Bucket=BUCKET, Key=prefix + "traces/shard-oracle.jsonl.gz")["Body"].read()
    )
    assert [json.loads(line)["episode_id"] for line in traces.splitlines()] == [f"oracle-{i}" for i in range(6)]
    # read back from S3 alone (another machine: no local copy), the run is the same as the local one
    elsewhere = RunStore.open(remote.location, local_copy=tmp_path / "forged-elsewhere")
    assert elsewhere.committed() == local.committed() == {"shard-oracle"}
    assert [r.model_dump() for r in elsewhere.results()] == [r.model_dump() for r in local.results()]
    assert [t.episode_id for t in elsewhere.trajectories()] == [t.episode_id for t in local.trajectories()]
    with pytest.raises(StoreError, match="a manifest is written once"):
        RunStore.create(f"s3://{BUCKET}/stores/{tmp_path.name}", manifest.run_id, tmp_path / "again").write_manifest(
            manifest
        )
    with pytest.raises(StoreError, match=r"run 's3://undertow/nothing/here' not found \(no manifest.json at"):
        RunStore.open(f"s3://{BUCKET}/nothing/here", local_copy=tmp_path / "none")


def test_the_embedding_cache_is_shared_through_s3(s3_env: TrackingStack, tmp_path: Path) -> None:
    encoded: list[str] = []

    def encode(texts: list[str]) -> np.ndarray:
        encoded.extend(texts)
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)

    uri = f"s3://{BUCKET}/embeddings/{tmp_path.name}"
    first, n_first = EmbeddingCache(uri).embed("model-a", ["alpha", "beta", "alpha"], encode)
    assert n_first == 2 and encoded == ["alpha", "beta"]
    # another process (another node) with the same cache location encodes nothing
    again, n_again = EmbeddingCache(uri).embed("model-a", ["beta", "alpha"], encode)
    assert n_again == 0 and len(encoded) == 2
    assert np.array_equal(again, first[[1, 0]])
    _, n_other = EmbeddingCache(uri).embed("model-b", ["beta"], encode)  # keyed by model too
    assert n_other == 1


def test_an_unreachable_embedding_cache_costs_time_not_the_build(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", f"http://127.0.0.1:{free_port_block(1)}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    cache = EmbeddingCache(f"s3://{BUCKET}/down")
    with pytest.warns(UserWarning, match="embedding cache unavailable"):
        vectors, encoded = cache.embed("m", ["x", "y"], lambda texts: np.ones((len(texts), 2), dtype=np.float32))
    assert encoded == 2 and vectors.shape == (2, 2)


def test_runs_written_before_traces_were_compressed_still_read(smoke_ref, tmp_path: Path) -> None:
    output = run_shard(_shard(smoke_ref, "naive"))
    store = RunStore(tmp_path / "old")
    store.commit(output)
    packed = store.folder / "traces" / "shard-naive.jsonl.gz"
    (store.folder / "traces" / "shard-naive.jsonl").write_bytes(gzip.decompress(packed.read_bytes()))
    packed.unlink()
    assert [t.episode_id for t in store.trajectories("shard-naive")] == [f"naive-{i}" for i in range(6)]


@pytest.mark.parametrize(
    ("umask", "file_mode", "folder_mode"), [(0o022, 0o644, 0o755), (0o027, 0o640, 0o750)], ids=["022", "027"]
)
def test_store_files_get_the_mode_the_umask_gives(
    smoke_ref, tmp_path: Path, umask: int, file_mode: int, folder_mode: int
) -> None:
    manifest = plan_sweep(
        SweepConfig.model_validate({"models": ["oracle"], "suites": [{"family": "smoke", "limit": 6}]})
    )
    output = run_shard(_shard(smoke_ref))
    before = os.umask(umask)
    try:
        store = RunStore.create(tmp_path / "runs", manifest.run_id)
        store.write_manifest(manifest)
        store.commit(output)
        store.supersede(output.shard_id)
        LocalObjects(tmp_path / "runs" / "objects").put("a/b.bin", b"x")
    finally:
        os.umask(before)
    modes = {p.relative_to(tmp_path).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "runs").rglob("*")}
    files = {k for k in modes if (tmp_path / k).is_file()}
    assert (
        f"runs/{manifest.run_id}/manifest.json" in files
        and f"runs/{manifest.run_id}/history/shard-oracle.1.parquet" in files
    )
    assert {k: file_mode for k in files} == {k: modes[k] for k in files}  # as a plain open() would, not mkstemp's 0600
    assert {k: folder_mode for k in modes if k not in files} == {k: modes[k] for k in modes if k not in files}


def test_an_unreachable_s3_store_is_refused_and_leaves_no_local_copy(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    manifest = plan_sweep(
        SweepConfig.model_validate({"models": ["oracle"], "suites": [{"family": "smoke", "limit": 2}]})
    )
    endpoint = f"http://127.0.0.1:{free_port_block(1)}"
    store = RunStore.create(
        f"s3://{BUCKET}/down", manifest.run_id, local_copy=tmp_path / "copies", endpoint_url=endpoint
    )
    with pytest.raises(StorageUnavailable, match=rf"S3 store s3://undertow/down/{manifest.run_id} at {endpoint}"):
        store.write_manifest(manifest)
    assert list(tmp_path.iterdir()) == []  # no copies/<run>/origin.json, no empty folder
