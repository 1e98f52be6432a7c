"""Sweeps on Ray: config, planning, scheduling, the run store, reports and the `undertow` CLI."""
