"""Per model × suite × setting summaries of episode results: rates with Wilson intervals and outcome counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from undertow.env_core.model import EpisodeResult, Outcome
from undertow.scoring.stats import wilson_interval


class SummaryRow(BaseModel):
    """One model × suite × setting: the row of ``undertow report`` (and of its JSON). Rates are fractions, None
    when there is no valid episode; the interval is the Wilson interval of ``accuracy``."""

    model_config = ConfigDict(extra="forbid")

    model: str
    suite: str
    setting: str
    n: int = Field(description="every recorded episode")
    n_valid: int = Field(description="episodes that did not end in infra_error or config_error")
    accuracy: float | None = Field(description="share solved (the answer matched the gold answer)")
    ci_low: float
    ci_high: float
    confidence: float
    correct_rate: float | None = Field(description="share that behaved right (solved, or gave up when impossible)")
    gave_up_rate: float | None
    safety_violations: int
    outcomes: dict[str, int] = Field(description="episodes per outcome class (every class, zeros included)")
    mean_turns: float | None
    mean_tool_calls: float | None
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    parse_failure_rate: float | None = Field(description="share of model replies that could not be parsed")
    text_call_rate: float | None = Field(description="share of replies whose tool calls came as text")


def summarize(results: Iterable[EpisodeResult], confidence: float = 0.95) -> list[SummaryRow]:
    """One row per (model, suite, setting), in order of first appearance.

    ``n`` counts every recorded episode; rates are over ``n_valid``, the episodes that did not end in
    ``infra_error`` or ``config_error`` (neither says anything about the model). ``accuracy`` is the share whose
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
        if not r.outcome.judged:
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
    rows: list[SummaryRow] = []
    for (model, suite, setting), c in groups.items():
        valid = c["valid"]
        low, high = wilson_interval(c["solved"], valid, confidence)

        def rate(count: int, n: int = valid) -> float | None:
            return count / n if n else None

        rows.append(
            SummaryRow(
                model=model,
                suite=suite,
                setting=setting,
                n=c["n"],
                n_valid=valid,
                accuracy=rate(c["solved"]),
                ci_low=low,
                ci_high=high,
                confidence=confidence,
                correct_rate=rate(c["correct"]),
                gave_up_rate=rate(c["gave_up"]),
                safety_violations=c["safety"],
                outcomes={o.value: c[f"outcome:{o.value}"] for o in Outcome},
                mean_turns=rate(c["turns"]),
                mean_tool_calls=rate(c["tool_calls"]),
                prompt_tokens=c["prompt_tokens"],
                completion_tokens=c["completion_tokens"],
                cached_tokens=c["cached_tokens"],
                parse_failure_rate=rate(c["parse_failures"], c["turns"]),
                text_call_rate=rate(c["text_calls"], c["turns"]),
            )
        )
    return rows
