"""What the families' summaries share: episode rows from results, grouped by model × setting; stored flags and
counts read with a guard against the NaN a table puts in a gap; rates with their Wilson interval; the one-line
"this table needs…" stand-in; and :class:`ModelSettingSummary`, a family summary whose MLflow metrics are its
per-model × setting fields, flattened.

A family module builds its rows with :func:`result_rows`, groups them with :func:`by_model_setting` or
:func:`by_model_then_setting`, and subclasses :class:`ModelSettingSummary` with the parts of one model × setting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from undertow.env_core.families import Bar, FamilySummary, ReportTable, StackedBars, flat_metrics
from undertow.env_core.model import EpisodeResult, Outcome
from undertow.scoring.stats import wilson_interval

# An episode as a family's summary reads it: ``model``, ``setting``, ``outcome`` (its value), the result fields the
# family asked for, and the family's details.
Row = Mapping[str, Any]

UNCATEGORIZED = "uncategorized"  # the category of a failure that carries none


class StrictModel(BaseModel):
    """A pydantic model that refuses fields it does not declare (summaries and details are read back from JSON)."""

    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------------------------------------------
# Rows and groups


def result_rows(results: Iterable[EpisodeResult], *fields: str) -> list[dict[str, Any]]:
    """One row per result: ``model``, ``setting``, ``outcome`` (its value), the named ``EpisodeResult`` fields,
    then the family's details."""
    return [
        {
            "model": r.model,
            "setting": r.setting,
            "outcome": r.outcome.value,
            **{name: getattr(r, name) for name in fields},
            **r.details,
        }
        for r in results
    ]


def judged(row: Row) -> bool:
    """Whether the episode says something about the model (not an infra or config error)."""
    return Outcome(row["outcome"]).judged


def by_model_setting(rows: Iterable[Row]) -> dict[tuple[str, str], list[Row]]:
    """Rows by (model, setting), in order of first appearance."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((str(row["model"]), str(row["setting"])), []).append(row)
    return groups


def by_model_then_setting(rows: Iterable[Row]) -> dict[str, dict[str, list[Row]]]:
    """Rows by model, then by setting, both in order of first appearance."""
    groups: dict[str, dict[str, list[Row]]] = {}
    for (model, setting), members in by_model_setting(rows).items():
        groups.setdefault(model, {})[setting] = members
    return groups


def category_counts(
    rows: Iterable[Row], key: str, categories: Sequence[str], *, unlabelled: str | None = UNCATEGORIZED
) -> dict[str, int]:
    """How many rows carry each category under ``key``: every one of ``categories`` (zeros included), then any
    other found; a row without one counts as ``unlabelled``, or not at all when that is None."""
    counts = dict.fromkeys(categories, 0)
    for row in rows:
        category = row.get(key)
        found = category if isinstance(category, str) and category else unlabelled
        if found is not None:
            counts[found] = counts.get(found, 0) + 1
    return counts


# ---------------------------------------------------------------------------------------------------------------
# Stored values: a missing cell of a table comes back as NaN


def absent(value: Any) -> bool:
    """None, or the NaN that pandas puts in a missing cell."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def flag(value: Any) -> bool | None:
    """A stored boolean (or count: more than 0 is True); None when absent."""
    return None if absent(value) else bool(value)


def count(value: Any) -> int:
    """A stored count; 0 when absent."""
    return 0 if absent(value) else int(value)


# ---------------------------------------------------------------------------------------------------------------
# Rates


def wilson_bounds(k: int, n: int, confidence: float = 0.95) -> tuple[float | None, float | None]:
    """The Wilson interval of ``k`` of ``n``; (None, None) without episodes (nothing to show, not 0–1)."""
    return wilson_interval(k, n, confidence) if n else (None, None)


class Rate(StrictModel):
    """``k`` of ``n`` with its Wilson interval (at the summary's confidence); rate and bounds None when n is 0."""

    n: int
    k: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None


def rate(k: int, n: int, confidence: float = 0.95) -> Rate:
    """``k`` of ``n`` as a :class:`Rate`."""
    low, high = wilson_bounds(k, n, confidence)
    return Rate(n=n, k=k, rate=k / n if n else None, ci_low=low, ci_high=high)


# ---------------------------------------------------------------------------------------------------------------
# Tables


def missing_table(name: str, needs: str) -> ReportTable:
    """The one line that stands for a table whose data the run does not have."""
    return ReportTable(title=name, columns=[], note=f"{name} needs {needs}: not in this run, left out.")


def n_range(ns: Iterable[int]) -> str:
    """``12`` or ``10–12``: how many episodes stand behind the cells shown (``0`` when none)."""
    found = sorted(set(ns))
    if not found:
        return "0"
    return str(found[0]) if len(found) == 1 else f"{found[0]}–{found[-1]}"


def share_bar(label: str, counts: Mapping[str, int]) -> Bar | None:
    """A bar of the non-zero ``counts`` as percent of their total; None when there is none."""
    total = sum(counts.values())
    if not total:
        return None
    return Bar(label=label, shares={c: 100 * n / total for c, n in counts.items() if n}, n=total)


def failures_figure(
    name: str, title: str, alt: str, bars: Iterable[Bar | None], x_label: str, order: Sequence[str] | None = None
) -> list[StackedBars]:
    """Failed episodes by category as stacked shares, a bar per group (:func:`share_bar`); none when nothing
    failed. Categories in ``order`` (those used), else in order of first appearance."""
    drawn = [bar for bar in bars if bar is not None]
    if not drawn:
        return []
    used = list(dict.fromkeys(c for bar in drawn for c in bar.shares))
    return [
        StackedBars(
            name=name,
            title=title,
            alt=alt,
            categories=[c for c in order if c in used] if order is not None else used,
            bars=drawn,
            y_label="share of failed episodes (%)",
            x_label=x_label,
        )
    ]


# ---------------------------------------------------------------------------------------------------------------
# The summary base


class ModelSettingSummary(FamilySummary):
    """A family summary whose numbers are kept per model × setting: :meth:`metrics` flattens the parts
    :meth:`setting_parts` names (``family.<part>.<field>...``, numbers only)."""

    def setting_parts(self, model: str, setting: str) -> Iterable[tuple[str, Any]]:
        """(name under the family, data) of one model × setting; "" puts the data's fields right under the
        family's name. None by default."""
        return ()

    def metrics(self, model: str, setting: str) -> dict[str, float]:
        """Numbers for one model × setting, logged to MLflow: the finite numeric leaves of :meth:`setting_parts`."""
        out: dict[str, float] = {}
        for name, data in self.setting_parts(model, setting):
            flat_metrics(f"{self.family}.{name}" if name else self.family, data, out)
        return out


def any_with_details(rows: Iterable[Row], has_details: Callable[[Row], bool]) -> bool:
    """Whether some judged row carries the family's details (a summary of none would be empty)."""
    return any(judged(row) and has_details(row) for row in rows)
