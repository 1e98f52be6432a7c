"""Interval estimates: Wilson intervals for rates, percentile-bootstrap intervals for means and their differences."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial rate.

    Unlike the normal approximation it stays inside [0, 1] and is informative at 0% and 100%, which is where
    oracle and impossible settings live. ``n == 0`` gives ``(0.0, 1.0)``: nothing is known.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    z = _z(confidence)
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At 0 and n the bound is exact in theory; say so instead of returning rounding noise like 6.9e-18.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def _z(confidence: float) -> float:
    """Two-sided standard-normal quantile (1.96 for 95%)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def bootstrap_interval(
    values: Sequence[float], confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """Percentile-bootstrap interval for the mean of ``values`` (for accuracy: a list of 0/1 outcomes).

    ``resamples`` means of ``len(values)`` draws with replacement are taken with ``numpy.random.default_rng(seed)``;
    the interval is their ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles, so the same inputs and
    seed always give the same interval. For 0/1 data a resampled mean is drawn directly as Binomial(n, p) / n,
    which has exactly the distribution of the mean of n resampled values, only much faster.

    Edge cases: an empty input gives ``(nan, nan)`` (the mean of nothing is undefined; callers report "no data"
    themselves). One value, or all values equal, gives a zero-width interval at that value: the bootstrap cannot
    see variance it has not observed, so for tiny samples of a rate prefer :func:`wilson_interval`. Non-finite
    values, a confidence outside (0, 1) or ``resamples < 1`` raise ``ValueError``.
    """
    data = _finite_array(values)
    _check_bootstrap_args(confidence, resamples)
    if data.size == 0:
        return math.nan, math.nan
    means = _resampled_means(data, resamples, np.random.default_rng(seed))
    return _percentile_interval(means, confidence)


def bootstrap_difference_interval(
    a: Sequence[float], b: Sequence[float], confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """Percentile-bootstrap interval for ``mean(a) - mean(b)`` with ``a`` and ``b`` resampled independently.

    Independent (unpaired) resampling is right for two separate samples and conservative (wider) when the two are
    positively correlated, e.g. the same scenarios run with and without faults. Deterministic for a seed: one
    ``numpy.random.default_rng(seed)`` draws the resampled means of ``a``, then those of ``b``.

    Edge cases: if either input is empty the result is ``(nan, nan)``. If both are constant the interval has zero
    width at the observed difference. Invalid arguments raise ``ValueError`` as in :func:`bootstrap_interval`.
    """
    data_a, data_b = _finite_array(a), _finite_array(b)
    _check_bootstrap_args(confidence, resamples)
    if data_a.size == 0 or data_b.size == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means_a = _resampled_means(data_a, resamples, rng)
    means_b = _resampled_means(data_b, resamples, rng)
    return _percentile_interval(means_a - means_b, confidence)


# At most this many values are drawn at once, so large samples do not build a resamples x n matrix in one go.
_CHUNK_VALUES = 2_000_000


def _finite_array(values: Sequence[float]) -> np.ndarray:
    data = np.asarray(values, dtype=float)
    if data.ndim != 1:
        raise ValueError(f"need a flat sequence of numbers, got an array of shape {data.shape}")
    if not np.all(np.isfinite(data)):
        raise ValueError("values must be finite numbers")
    return data


def _check_bootstrap_args(confidence: float, resamples: int) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")


def _resampled_means(data: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``resamples`` bootstrap means of ``data`` (non-empty). Constant data draws nothing from ``rng``."""
    n = data.size
    if np.all(data == data[0]):
        return np.full(resamples, data[0])
    if np.all((data == 0) | (data == 1)):
        return rng.binomial(n, float(data.mean()), size=resamples) / n
    chunk = max(1, _CHUNK_VALUES // n)
    parts = []
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        parts.append(data[rng.integers(0, n, size=(rows, n))].mean(axis=1))
    return np.concatenate(parts)


def _percentile_interval(estimates: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1 - confidence) / 2
    low, high = np.quantile(estimates, [tail, 1 - tail])
    return float(low), float(high)
