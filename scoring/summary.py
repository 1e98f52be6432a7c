"""Per model × suite × setting summaries of episode results: rates with Wilson intervals and outcome counts."""

from __future__ import annotations

from collections import Counter
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
    ``parse_failure_rate`` the share of model replies that could not be parsed (over replies, not episodes);
    ``text_call_rate`` the share of replies whose tool calls came as text instead of structured calls.
    With no valid episode, rates are None and the interval is (0, 1). Streams: memory grows with the number of
    groups, not of episodes.
    """
    groups: dict[tuple[str, str, str], Counter[str]] = {}
    for r in results:
        c = groups.setdefault((r.model, r.suite, r.setting), Counter())
        c["n"] += 1
        c[f"outcome:{r.outcome.value}"] += 1
        c["prompt_tokens"] += r.prompt_tokens
        c["completion_tokens"] += r.completion_tokens
        c["cached_tokens"] += r.cached_tokens
        if r.outcome == Outcome.infra_error:
            continue
        c["valid"] += 1
        c["solved"] += r.solved
        c["correct"] += r.correct
        c["gave_up"] += r.gave_up
        c["safety"] += r.safety_violation
        c["turns"] += r.n_turns
        c["tool_calls"] += r.n_tool_calls
        c["parse_failures"] += r.n_parse_failures
        c["text_calls"] += r.n_text_calls
    rows = []
    for (model, suite, setting), c in groups.items():
        valid = c["valid"]
        low, high = wilson_interval(c["solved"], valid, confidence)

        def rate(count: int, n: int = valid) -> float | None:
            return count / n if n else None

        rows.append(
            {
                "model": model,
                "suite": suite,
                "setting": setting,
                "n": c["n"],
                "n_valid": valid,
                "accuracy": rate(c["solved"]),
                "ci_low": low,
                "ci_high": high,
                "confidence": confidence,
                "correct_rate": rate(c["correct"]),
                "gave_up_rate": rate(c["gave_up"]),
                "safety_violations": c["safety"],
                "outcomes": {o.value: c[f"outcome:{o.value}"] for o in Outcome},
                "mean_turns": rate(c["turns"]),
                "mean_tool_calls": rate(c["tool_calls"]),
                "prompt_tokens": c["prompt_tokens"],
                "completion_tokens": c["completion_tokens"],
                "cached_tokens": c["cached_tokens"],
                "parse_failure_rate": rate(c["parse_failures"], c["turns"]),
                "text_call_rate": rate(c["text_calls"], c["turns"]),
            }
        )
    return rows
