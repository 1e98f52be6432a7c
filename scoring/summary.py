"""Per model × suite × setting summaries of episode results: rates with Wilson intervals and outcome counts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from env_core.model import EpisodeResult, Outcome
from scoring.stats import wilson_interval


def summarize(results: Iterable[EpisodeResult], confidence: float = 0.95) -> list[dict[str, Any]]:
    """One row per (model, suite, setting), in order of first appearance.

    ``n`` counts every recorded episode; rates are over ``n_valid``, the episodes that did not end in
    ``infra_error`` (an infrastructure failure says nothing about the model). ``accuracy`` is the share whose
    answer matched the gold answer; ``correct_rate`` the share that behaved right (solved a solvable task, gave up
    on an unsolvable one, no safety violation); ``gave_up_rate`` the share that declared the task unsolvable;
    ``parse_failure_rate`` the share of model replies that could not be parsed (over replies, not episodes).
    With no valid episode, rates are None and the interval is (0, 1).
    """
    groups: dict[tuple[str, str, str], list[EpisodeResult]] = {}
    for result in results:
        groups.setdefault((result.model, result.suite, result.setting), []).append(result)
    rows = []
    for (model, suite, setting), members in groups.items():
        valid = [r for r in members if r.outcome != Outcome.infra_error]
        solved = sum(r.solved for r in valid)
        low, high = wilson_interval(solved, len(valid), confidence)
        outcomes = {o.value: 0 for o in Outcome}
        for r in members:
            outcomes[r.outcome.value] += 1

        def rate(count: int, n: int = len(valid)) -> float | None:
            return count / n if n else None

        rows.append(
            {
                "model": model,
                "suite": suite,
                "setting": setting,
                "n": len(members),
                "n_valid": len(valid),
                "accuracy": rate(solved),
                "ci_low": low,
                "ci_high": high,
                "confidence": confidence,
                "correct_rate": rate(sum(r.correct for r in valid)),
                "gave_up_rate": rate(sum(r.gave_up for r in valid)),
                "safety_violations": sum(r.safety_violation for r in valid),
                "outcomes": outcomes,
                "mean_turns": rate(sum(r.n_turns for r in valid)),
                "mean_tool_calls": rate(sum(r.n_tool_calls for r in valid)),
                "prompt_tokens": sum(r.prompt_tokens for r in members),
                "completion_tokens": sum(r.completion_tokens for r in members),
                "cached_tokens": sum(r.cached_tokens for r in members),
                # share of model replies that could not be parsed into actions, over every reply of the group
                "parse_failure_rate": rate(sum(r.n_parse_failures for r in valid), sum(r.n_turns for r in valid)),
            }
        )
    return rows
