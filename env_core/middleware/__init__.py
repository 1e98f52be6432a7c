"""The middleware family (FUXI): database and knowledge-base environments."""
