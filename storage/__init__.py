"""Object storage addressed by URI: a local folder (the embedded default) or ``s3://bucket/prefix`` through boto3.

The run store (results, traces, manifest) and the embedding cache sit on this one interface, so both work the same
on a laptop and on a cluster. Writes are whole objects and atomic: a local write goes to a temporary name and is
renamed into place; an S3 write is a single PUT. A reader never sees half an object.

S3 endpoint and credentials come from the standard AWS chain (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``, profiles) or an explicit ``endpoint_url``. Secrets are never taken
from config files, so they never land in a run manifest.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path
from typing import Any, Protocol

S3_SCHEME = "s3://"


class StorageUnavailable(OSError):
    """The store could not be reached or refused us (network, credentials, missing bucket): not a missing object."""


class ObjectStore(Protocol):
    uri: str

    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes: ...

    def exists(self, key: str) -> bool: ...

    def list_keys(self, prefix: str = "") -> list[str]: ...

    def delete(self, key: str) -> None: ...

    def digests(self, prefix: str = "") -> dict[str, str]: ...


def is_s3(uri: str | Path) -> bool:
    return str(uri).startswith(S3_SCHEME)


def join_uri(root: str | Path, *parts: str) -> str:
    if is_s3(root):
        return "/".join([str(root).rstrip("/"), *parts])
    return str(Path(root).joinpath(*parts))


def open_store(uri: str | Path, endpoint_url: str | None = None) -> ObjectStore:
    """The store at ``uri``: ``s3://bucket/prefix`` or a local folder (created on first write)."""
    return S3Objects(str(uri), endpoint_url) if is_s3(uri) else LocalObjects(uri)


def md5_hex(data: bytes) -> str:
    # S3's ETag of a single-part PUT is the MD5 of the body: comparing it tells whether a copy is current
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def _create_temporary(path: Path) -> tuple[int, Path]:
    """A new hidden file beside ``path``, open for writing, with the mode a plain ``open()`` gives (0666 less the
    umask): ``tempfile.mkstemp`` makes 0600 files, which others sharing a cluster volume could not read."""
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:  # another writer drew the same name: draw again
            continue


class LocalObjects:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.uri = str(self.folder)

    def path(self, key: str) -> Path:
        return self.folder / key

    def put(self, key: str, data: bytes) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temporary(path)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        try:
            return self.path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            raise KeyError(f"{self.path(key)} not found") from None

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def list_keys(self, prefix: str = "") -> list[str]:
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.rglob("*"):
            if path.is_file() and not path.name.startswith("."):  # dot-files are temporaries of writes in flight
                key = path.relative_to(self.folder).as_posix()
                if key.startswith(prefix):
                    found.append(key)
        return sorted(found)

    def delete(self, key: str) -> None:
        self.path(key).unlink(missing_ok=True)

    def digests(self, prefix: str = "") -> dict[str, str]:
        return {key: md5_hex(self.path(key).read_bytes()) for key in self.list_keys(prefix)}


class S3Objects:
    def __init__(self, uri: str, endpoint_url: str | None = None):
        if not is_s3(uri):
            raise ValueError(f"not an s3:// URI: {uri}")
        bucket, _, prefix = uri[len(S3_SCHEME) :].partition("/")
        if not bucket:
            raise ValueError(f"no bucket in {uri!r}: expected s3://bucket/prefix")
        self.bucket, self.prefix = bucket, prefix.strip("/")
        self.uri = f"{S3_SCHEME}{bucket}/{self.prefix}".rstrip("/")
        self.endpoint_url = endpoint_url
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config

            config = Config(
                connect_timeout=5,
                read_timeout=60,
                retries={"max_attempts": 3, "mode": "standard"},
                # path-style addressing: self-hosted servers (SeaweedFS, MinIO) rarely have per-bucket DNS names
                s3={"addressing_style": "path"},
            )
            region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
            # a session of its own: credentials are read from the environment now, not cached from earlier
            session = boto3.session.Session()
            self._client = session.client("s3", endpoint_url=self.endpoint_url, region_name=region, config=config)
        return self._client

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _where(self) -> str:
        endpoint = self.endpoint_url or (self._client.meta.endpoint_url if self._client is not None else None)
        return self.uri + (f" at {endpoint}" if endpoint else "")

    def _call(self, operation: str, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self.client, operation)(Bucket=self.bucket, **kwargs)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in ("NoSuchKey", "404", "NotFound"):
                raise KeyError(f"{self.uri}/{kwargs.get('Key', '')} not found") from None
            message = exc.response.get("Error", {}).get("Message", str(exc))
            raise StorageUnavailable(f"S3 store {self._where()}: {code or 'error'}: {message}") from exc
        except BotoCoreError as exc:  # connection refused, timeouts, no credentials
            raise StorageUnavailable(f"S3 store {self._where()} unreachable: {exc}") from exc

    def put(self, key: str, data: bytes) -> None:
        self._call("put_object", Key=self._key(key), Body=data)

    def get(self, key: str) -> bytes:
        body: bytes = self._call("get_object", Key=self._key(key))["Body"].read()
        return body

    def exists(self, key: str) -> bool:
        try:
            self._call("head_object", Key=self._key(key))
        except KeyError:
            return False
        return True

    def _listing(self, prefix: str) -> dict[str, str]:
        base = self._key("")
        found: dict[str, str] = {}
        token: dict[str, str] = {}
        while True:
            page = self._call("list_objects_v2", Prefix=self._key(prefix), **token)
            for item in page.get("Contents", []):
                found[item["Key"][len(base) :]] = item.get("ETag", "").strip('"')
            if not page.get("IsTruncated"):
                return found
            token = {"ContinuationToken": page["NextContinuationToken"]}

    def list_keys(self, prefix: str = "") -> list[str]:
        return sorted(self._listing(prefix))

    def delete(self, key: str) -> None:
        self._call("delete_object", Key=self._key(key))

    def digests(self, prefix: str = "") -> dict[str, str]:
        return self._listing(prefix)

    def ensure_bucket(self) -> None:
        """Create the bucket when it does not exist (self-hosted servers start empty)."""
        from botocore.exceptions import ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError:
            self._call("create_bucket")
        except Exception as exc:
            raise StorageUnavailable(f"S3 store {self._where()} unreachable: {exc}") from exc
