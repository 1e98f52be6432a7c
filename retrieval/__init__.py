"""Tool search over large tool universes: offline sentence-transformers embeddings, an embedding cache, faiss / BM25 /
hybrid indexes, and a per-node Ray actor that serves them. Knows nothing about scoring."""
