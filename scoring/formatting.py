"""Numbers as report text, one way everywhere: the terminal tables, the HTML report and the families' tables.

Rates and differences are fractions in [0, 1] and are shown in percent (points for differences); an undefined
value (None, NaN, an infinity: no valid episode) is shown as an em dash.
"""

from __future__ import annotations

import math

MISSING = "—"


def _defined(*values: float | None) -> bool:
    return all(value is not None and math.isfinite(value) for value in values)


def pct(value: float | None, digits: int = 1) -> str:
    """A rate in percent: ``0.25`` → ``25.0%``."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{100 * value:.{digits}f}%"


def points(value: float | None, signed: bool = True, digits: int = 1) -> str:
    """A difference of rates in percentage points: ``0.25`` → ``+25.0``."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{100 * value:+.{digits}f}" if signed else f"{100 * value:.{digits}f}"


def ci_range(low: float | None, high: float | None, digits: int = 1) -> str:
    """The bounds of a rate's interval in percent, without the sign: ``12.5–40.0``."""
    if low is None or high is None or not _defined(low, high):
        return MISSING
    return f"{100 * low:.{digits}f}–{100 * high:.{digits}f}"


def signed_interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """The interval of a difference in signed points: ``+2.0 … +18.5``."""
    if low is None or high is None or not _defined(low, high):
        return MISSING
    return f"{100 * low:+.{digits}f} … {100 * high:+.{digits}f}"


def with_ci(value: float | None, low: float | None, high: float | None, digits: int = 1, ci_digits: int = 0) -> str:
    """A rate with its interval: ``71.4% [52–86]``; a dash unless all three are defined."""
    if value is None or low is None or high is None or not _defined(value, low, high):
        return MISSING
    return f"{pct(value, digits)} [{ci_range(low, high, ci_digits)}]"


def p_value(value: float | None) -> str:
    """A p-value with three decimals, or ``<0.001``."""
    if value is None or not math.isfinite(value):
        return MISSING
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def number(value: float | None, digits: int = 1) -> str:
    """A plain number (a mean number of turns, a share already in percent)."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{value:.{digits}f}"
