"""Metrics over trajectories and results: answer matching, safety-gated scores, intervals, summaries."""
