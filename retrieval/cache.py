"""Embedding cache keyed by (model id, sha256 of the document text).

Vectors are stored per model as chunk objects (``<root>/<model key>/<chunk>.npz``: the text hashes and the
vectors) in a local folder or under ``s3://bucket/prefix``, so the nodes of a cluster share one cache. Each build
that encodes new documents adds one chunk, written atomically, so concurrent builders never see half a chunk and
never lose each other's work. Rebuilding an index over an unchanged universe reads the chunks and encodes nothing.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from undertow.storage import StorageUnavailable, open_store


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, root: str | Path):
        self.objects = open_store(root)

    def _prefix(self, model_id: str) -> str:
        return hashlib.sha256(model_id.encode()).hexdigest()[:16] + "/"

    def load(self, model_id: str) -> dict[str, np.ndarray]:
        """Every cached vector of a model, by text hash."""
        found: dict[str, np.ndarray] = {}
        for key in self.objects.list_keys(self._prefix(model_id)):
            if key.endswith(".npz"):
                with np.load(io.BytesIO(self.objects.get(key))) as data:
                    found.update(zip(data["hashes"].tolist(), data["vectors"], strict=True))
        return found

    def store(self, model_id: str, hashes: list[str], vectors: np.ndarray) -> None:
        if not hashes:
            return
        prefix = self._prefix(model_id)
        self.objects.put(prefix + "model.txt", (model_id + "\n").encode())
        name = hashlib.sha256("".join(hashes).encode()).hexdigest()[:20]
        buffer = io.BytesIO()
        np.savez(buffer, hashes=np.array(hashes), vectors=vectors.astype(np.float32))
        self.objects.put(f"{prefix}{name}.npz", buffer.getvalue())

    def embed(
        self, model_id: str, texts: list[str], encode: Callable[[list[str]], np.ndarray]
    ) -> tuple[np.ndarray, int]:
        """Vectors for ``texts`` in order, encoding only the ones not cached; also how many were encoded."""
        hashes = [text_hash(t) for t in texts]
        try:
            cached = self.load(model_id)
        except StorageUnavailable as exc:  # a cache that cannot be reached costs time, never the build
            warnings.warn(f"embedding cache unavailable, encoding everything: {exc}", stacklevel=2)
            cached = {}
        missing = list(dict.fromkeys(h for h in hashes if h not in cached))
        if missing:
            by_hash = {h: t for h, t in zip(hashes, texts, strict=True)}
            vectors = encode([by_hash[h] for h in missing])
            try:
                self.store(model_id, missing, vectors)
            except StorageUnavailable as exc:
                warnings.warn(f"embedding cache unavailable, vectors not kept: {exc}", stacklevel=2)
            cached.update(zip(missing, vectors, strict=True))
        return np.stack([cached[h] for h in hashes]).astype(np.float32), len(missing)
