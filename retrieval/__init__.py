"""Tool search over large tool universes (embeddings, faiss / BM25 indexes). Arrives with its own issue."""
