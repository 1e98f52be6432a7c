"""Tool indexes: dense (sentence-transformers + faiss), lexical (BM25 with bm25s), and hybrid (reciprocal rank fusion).

A tool's document is its name, description and argument descriptions (``undertow.env_core.search.tool_document``). Every
index answers ``search(query, k) -> [tool names]``, the interface the environment's ``search_tools`` uses; the
environment applies the episode's faults and disclosure rules on top (a removed tool never comes back).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from undertow.env_core.model import Strict, ToolSpec
from undertow.env_core.search import tool_document
from undertow.env_core.suites import cache_root
from undertow.retrieval.cache import EmbeddingCache
from undertow.retrieval.embedder import DEFAULT_MODEL, Embedder

RRF_K = 60  # the usual reciprocal-rank-fusion constant: rank 1 counts 1/61


class RetrievalConfig(Strict):
    """How ``search_tools`` is served in open-world suites whose access says ``search: bm25 | dense | hybrid``."""

    model: str = Field(default=DEFAULT_MODEL, description="sentence-transformers model: name or local path")
    device: str = Field(default="cpu", description="cpu | cuda | cuda:N")
    batch_size: int = Field(default=64, ge=1, le=65_536, description="texts per embedding batch")
    index: Literal["flat", "ivf", "hnsw"] = Field(default="flat", description="faiss index for dense search")
    cache: str | None = Field(
        default=None, description="embedding cache: folder or s3:// URI (default: in the run store)"
    )
    service: Literal["actor", "local"] = Field(
        default="actor", description="one index actor per Ray node, or an index in every worker process"
    )
    query_cache: int = Field(default=4096, ge=0, le=10_000_000, description="query embeddings kept (LRU)")


def default_cache() -> Path:
    return cache_root() / "embeddings"


def universe_key(specs: Iterable[ToolSpec]) -> str:
    """Identity of a tool universe: the hash of its documents, in order."""
    digest = hashlib.sha256()
    for spec in specs:
        digest.update(tool_document(spec).encode())
        digest.update(b"\0")
    return digest.hexdigest()[:24]


class ToolIndex:
    """One universe's index in one mode. ``build_s`` and ``encoded`` say what building cost."""

    def __init__(
        self,
        specs: list[ToolSpec],
        mode: Literal["bm25", "dense", "hybrid"],
        config: RetrievalConfig | None = None,
        embedder: Embedder | None = None,
    ):
        self.config = config or RetrievalConfig()
        self.mode = mode
        self.names = [s.name for s in specs]
        self.documents = [tool_document(s) for s in specs]
        self.embedder = embedder
        self.encoded = 0
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        started = time.perf_counter()
        self._bm25: Any = self._build_bm25() if mode in ("bm25", "hybrid") else None
        self._faiss: Any = self._build_dense() if mode in ("dense", "hybrid") else None
        self.build_s = time.perf_counter() - started

    def _build_bm25(self) -> Any:
        import bm25s

        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(self.documents, stopwords="en", show_progress=False), show_progress=False)
        return retriever

    def _build_dense(self) -> Any:
        import faiss

        if self.embedder is None:
            self.embedder = Embedder(self.config.model, self.config.device, self.config.batch_size)
        cache = EmbeddingCache(self.config.cache or default_cache())
        vectors, self.encoded = cache.embed(self.embedder.model_id, self.documents, self.embedder.encode)
        dimension = vectors.shape[1]
        index: faiss.Index
        if self.config.index == "hnsw":
            hnsw = faiss.IndexHNSWFlat(dimension, 32, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efSearch = 64
            index = hnsw
        elif self.config.index == "ivf":
            lists = max(1, int(math.sqrt(len(vectors))))
            ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(dimension), dimension, lists, faiss.METRIC_INNER_PRODUCT)
            ivf.train(vectors)
            ivf.nprobe = min(lists, 8)
            index = ivf
        else:
            index = faiss.IndexFlatIP(dimension)
        index.add(vectors)
        return index

    def _query_vector(self, query: str) -> np.ndarray:
        cached = self._queries.get(query)
        if cached is not None:
            self._queries.move_to_end(query)
            return cached
        assert self.embedder is not None
        vector = self.embedder.encode([query])
        if self.config.query_cache:
            self._queries[query] = vector
            if len(self._queries) > self.config.query_cache:
                self._queries.popitem(last=False)
        return vector

    def _dense(self, query: str, k: int) -> list[int]:
        _, ids = self._faiss.search(self._query_vector(query), min(k, len(self.names)))
        return [int(i) for i in ids[0] if i >= 0]

    def _lexical(self, query: str, k: int) -> list[int]:
        import bm25s

        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        ids, scores = self._bm25.retrieve(tokens, k=min(k, len(self.names)), show_progress=False)
        return [int(i) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

    def search(self, query: str, k: int) -> list[str]:
        """Tool names, best first. Hybrid fuses the dense and BM25 rankings (reciprocal rank fusion)."""
        if not query.strip() or k <= 0 or not self.names:
            return []
        if self.mode == "dense":
            ranked = self._dense(query, k)
        elif self.mode == "bm25":
            ranked = self._lexical(query, k)
        else:
            depth = max(k * 5, 50)
            scores: dict[int, float] = {}
            for ranking in (self._dense(query, depth), self._lexical(query, depth)):
                for rank, i in enumerate(ranking):
                    scores[i] = scores.get(i, 0.0) + 1.0 / (RRF_K + rank + 1)
            ranked = sorted(scores, key=lambda i: (-scores[i], i))
        return [self.names[i] for i in ranked[:k]]
