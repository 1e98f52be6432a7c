"""How well search finds a scenario's solution functions when the query is the task text.

This is the ceiling of the HoHW "search failure" category: an agent that searches with the question itself finds a
solution among the first k results at most ``hit@k`` of the time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from undertow.env_core.model import Scenario
from undertow.env_core.search import Searcher


def recall_at_k(scenarios: Sequence[Scenario], searcher: Searcher, ks: Sequence[int]) -> dict[str, Any]:
    """Per k: ``recall`` (mean share of a scenario's solution functions in the top k), ``hit`` (share of scenarios
    with at least one solution function in the top k) and ``direct`` (share whose direct function, the first
    plan's, is in the top k). Scenarios without gold plans are skipped; no scenario gives zeros."""
    depth = max(ks)
    totals = {k: {"recall": 0.0, "hit": 0.0, "direct": 0.0} for k in ks}
    counted = 0
    for scenario in scenarios:
        solutions = set(scenario.gold.solution_tools())
        if not solutions:
            continue
        counted += 1
        direct = {call.tool for call in scenario.gold.plans[0]}
        ranked = searcher.search(scenario.task, depth)
        for k in ks:
            top = set(ranked[:k])
            totals[k]["recall"] += len(top & solutions) / len(solutions)
            totals[k]["hit"] += bool(top & solutions)
            totals[k]["direct"] += direct <= top
    return {
        "scenarios": counted,
        "at": {
            k: {name: (value / counted if counted else 0.0) for name, value in row.items()} for k, row in totals.items()
        },
    }
