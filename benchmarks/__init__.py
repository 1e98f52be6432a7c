"""Benchmark scripts. Run them as modules from the repository root: python -m benchmarks.<name>."""
