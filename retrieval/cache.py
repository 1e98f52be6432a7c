"""Embedding cache keyed by (model id, sha256 of the document text).

Vectors are stored per model as chunk files (``<root>/<model key>/<chunk>.npz``: the text hashes and the vectors).
Each build that encodes new documents adds one chunk, written to a temporary name and renamed, so concurrent
builders on a shared folder never see half a file and never lose each other's work. Rebuilding an index over an
unchanged universe reads the chunks and encodes nothing.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _folder(self, model_id: str) -> Path:
        return self.root / hashlib.sha256(model_id.encode()).hexdigest()[:16]

    def load(self, model_id: str) -> dict[str, np.ndarray]:
        """Every cached vector of a model, by text hash."""
        found: dict[str, np.ndarray] = {}
        folder = self._folder(model_id)
        for chunk in sorted(folder.glob("*.npz")) if folder.is_dir() else []:
            with np.load(chunk) as data:
                found.update(zip(data["hashes"].tolist(), data["vectors"], strict=True))
        return found

    def store(self, model_id: str, hashes: list[str], vectors: np.ndarray) -> None:
        if not hashes:
            return
        folder = self._folder(model_id)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "model.txt").write_text(model_id + "\n")
        name = hashlib.sha256("".join(hashes).encode()).hexdigest()[:20]
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".npz.tmp")
        os.close(fd)
        with open(tmp, "wb") as handle:
            np.savez(handle, hashes=np.array(hashes), vectors=vectors.astype(np.float32))
        os.replace(tmp, folder / f"{name}.npz")

    def embed(
        self, model_id: str, texts: list[str], encode: Callable[[list[str]], np.ndarray]
    ) -> tuple[np.ndarray, int]:
        """Vectors for ``texts`` in order, encoding only the ones not cached; also how many were encoded."""
        hashes = [text_hash(t) for t in texts]
        cached = self.load(model_id)
        missing = list(dict.fromkeys(h for h in hashes if h not in cached))
        if missing:
            by_hash = {h: t for h, t in zip(hashes, texts, strict=True)}
            vectors = encode([by_hash[h] for h in missing])
            self.store(model_id, missing, vectors)
            cached.update(zip(missing, vectors, strict=True))
        return np.stack([cached[h] for h in hashes]).astype(np.float32), len(missing)
