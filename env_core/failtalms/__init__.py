"""FAIL-TaLMs: an offline library of everyday tools and fully specified tasks over them."""
