"""Interval estimates and tests: Wilson intervals for rates, percentile-bootstrap intervals for means and their
differences (unpaired, paired and clustered), McNemar's test, the recovery gap and paired model comparisons."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import partial
from statistics import NormalDist
from typing import Any, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

FloatArray: TypeAlias = npt.NDArray[np.float64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
IntArray: TypeAlias = npt.NDArray[np.intp]
# what the public functions take: a list, or an array another of them made
Floats: TypeAlias = Sequence[float] | FloatArray
Bools: TypeAlias = Sequence[bool] | BoolArray
# an episode key (e.g. (scenario_id, seed)): one type per call, so a dict of tuple keys is accepted as it is
K = TypeVar("K", bound=Hashable)


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
    values: Floats, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
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


def bootstrap_standard_error(values: Floats, resamples: int = 10_000, seed: int = 0) -> float:
    """Bootstrap standard error of the mean of ``values``: the standard deviation (``ddof=1``) of ``resamples``
    resampled means, as ``scipy.stats.bootstrap`` reports it beside its interval (the "± SE" of a paper's table).

    The resampled means are those of :func:`bootstrap_interval` for the same ``seed`` (same draws), so an
    interval and a standard error of one sample agree. Deterministic for a seed. An empty input gives nan;
    constant values give 0.0; invalid arguments raise ``ValueError`` as in :func:`bootstrap_interval`.
    """
    data = _finite_array(values)
    _check_bootstrap_args(0.95, resamples)
    if data.size == 0:
        return math.nan
    means = _resampled_means(data, resamples, np.random.default_rng(seed))
    return float(np.std(means, ddof=1)) if means.size > 1 else 0.0


def bootstrap_difference_interval(
    a: Floats, b: Floats, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
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


def paired_bootstrap_interval(
    a: Floats, b: Floats, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """Percentile-bootstrap interval for ``mean(a) - mean(b)`` where ``a[i]`` and ``b[i]`` belong to the same episode.

    Episodes are resampled jointly, i.e. the per-pair differences ``a[i] - b[i]`` are bootstrapped, so the shared
    difficulty of an episode cancels: for positively correlated pairs (the same scenarios with and without faults,
    two models on one benchmark) this is narrower than :func:`bootstrap_difference_interval`, and still valid.
    Deterministic for a seed.

    Edge cases as in :func:`bootstrap_interval`: empty inputs give ``(nan, nan)``; inputs of different lengths,
    non-finite values, a confidence outside (0, 1) or ``resamples < 1`` raise ``ValueError``.
    """
    data_a, data_b = _finite_array(a, "a"), _finite_array(b, "b")
    _check_paired_lengths(data_a.size, data_b.size)
    _check_bootstrap_args(confidence, resamples)
    if data_a.size == 0:
        return math.nan, math.nan
    differences = data_a - data_b
    return _percentile_interval(_resampled_means(differences, resamples, np.random.default_rng(seed)), confidence)


def cluster_bootstrap_interval(
    values: Floats,
    clusters: Sequence[Hashable],
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile cluster-bootstrap interval for the mean of ``values`` when observations come in groups.

    Seeds and augmentations derived from one scenario are not independent: resampling them one by one pretends
    there is more information than there is and gives intervals that are too narrow. Here whole clusters
    (``clusters[i]`` labels observation ``i``; any hashable label) are drawn with replacement, and a resample's
    statistic is the sum of the values in the chosen clusters over their count, a ratio estimator, so clusters of
    unequal size are weighted by size exactly as in the plain mean. With every cluster of size one this is the
    ordinary bootstrap of :func:`bootstrap_interval`. Deterministic for a seed.

    Edge cases: an empty input gives ``(nan, nan)``; constant values or a single cluster give a zero-width interval.
    ``clusters`` of a different length than ``values``, unhashable labels, non-finite values, a confidence outside
    (0, 1) or ``resamples < 1`` raise ``ValueError``.
    """
    data = _finite_array(values)
    codes = _cluster_codes(clusters, data.size)
    _check_bootstrap_args(confidence, resamples)
    if data.size == 0:
        return math.nan, math.nan
    means = _cluster_resampled_means(data, codes, resamples, np.random.default_rng(seed))
    return _percentile_interval(means, confidence)


# McNemar's test is exact (binomial) below this many discordant pairs and the chi-square approximation from it on.
_MCNEMAR_EXACT_BELOW = 25


@dataclass(frozen=True)
class McNemar:
    """McNemar's test of two models on the same episodes, with the 2x2 table it was computed from.

    ``only_a`` counts episodes A got right and B wrong, ``only_b`` the reverse; only these discordant pairs say
    anything about which model is better. ``statistic`` is ``min(only_a, only_b)`` for ``method == "exact"`` and the
    continuity-corrected chi-square (one degree of freedom) for ``method == "chi2"``.
    """

    n: int
    both_right: int
    only_a: int
    only_b: int
    both_wrong: int
    statistic: float
    p_value: float
    method: str

    def as_dict(self) -> dict[str, Any]:
        """Plain ints, floats and strings, for JSON and MLflow."""
        return {field.name: _plain(getattr(self, field.name)) for field in fields(self)}


def mcnemar_test(a: Bools, b: Bools) -> McNemar:
    """Two-sided McNemar test that models A and B are equally accurate, from paired outcomes on the same episodes.

    ``a[i]`` and ``b[i]`` say whether model A and model B got episode ``i`` right. Pairing matters: two models
    that fail on the same hard episodes are much more precisely compared by their disagreements than by two
    independent accuracies. With fewer than 25 discordant pairs the exact binomial test of ``only_a`` out of
    ``only_a + only_b`` at 0.5 is used; from 25 on the chi-square approximation with continuity correction,
    ``(|only_a - only_b| - 1)^2 / (only_a + only_b)``, where the correction is not allowed to overshoot past zero
    (equal counts give statistic 0 and p-value 1). No discordant pairs (including no episodes): statistic 0.0,
    p-value 1.0, method "exact".

    Values must be booleans (or 0/1); sequences of different lengths raise ``ValueError``.
    """
    right_a, right_b = _bool_array(a, "a"), _bool_array(b, "b")
    _check_paired_lengths(right_a.size, right_b.size)
    both_right = int(np.count_nonzero(right_a & right_b))
    only_a = int(np.count_nonzero(right_a & ~right_b))
    only_b = int(np.count_nonzero(~right_a & right_b))
    both_wrong = int(right_a.size - both_right - only_a - only_b)
    discordant = only_a + only_b
    if discordant == 0:
        statistic, p_value, method = 0.0, 1.0, "exact"
    elif discordant < _MCNEMAR_EXACT_BELOW:
        statistic = float(min(only_a, only_b))
        p_value = float(scipy_stats.binomtest(only_a, discordant, 0.5).pvalue)
        method = "exact"
    else:
        statistic = max(abs(only_a - only_b) - 1, 0) ** 2 / discordant
        p_value = float(scipy_stats.chi2.sf(statistic, 1))
        method = "chi2"
    return McNemar(
        n=int(right_a.size),
        both_right=both_right,
        only_a=only_a,
        only_b=only_b,
        both_wrong=both_wrong,
        statistic=float(statistic),
        p_value=min(1.0, p_value),
        method=method,
    )


@dataclass(frozen=True)
class Gap:
    """The recovery gap, clean accuracy minus faulted accuracy, with its bootstrap interval.

    ``paired`` says whether it was computed on the ``n_paired`` episodes present in both settings (the others were
    ignored) or, when none are shared, from the two samples as independent.
    """

    estimate: float
    ci_low: float
    ci_high: float
    n_clean: int
    n_faulted: int
    n_paired: int
    paired: bool
    confidence: float

    def as_dict(self) -> dict[str, Any]:
        """Plain ints, floats, bools and strings, for JSON and MLflow."""
        return {field.name: _plain(getattr(self, field.name)) for field in fields(self)}


def recovery_gap(
    clean: Mapping[K, float],
    faulted: Mapping[K, float],
    clusters: Mapping[K, Hashable] | None = None,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Gap:
    """How much accuracy a fault costs: mean of ``clean`` minus mean of ``faulted``, with a bootstrap interval.

    Both map an episode key (e.g. ``(scenario_id, seed)``) to its outcome (0/1 or a score). When the two share
    keys, the same episodes are compared with and without the fault, which removes episode difficulty from the
    noise: the gap and its interval use the shared keys only, by :func:`paired_bootstrap_interval`, or by
    :func:`cluster_bootstrap_interval` of the per-key differences when ``clusters`` maps each key to its cluster
    (the scenario its seeds/augmentations came from). With no shared key the two are treated as independent
    samples (:func:`bootstrap_difference_interval`) and ``clusters`` is not used.

    Edge cases: if either mapping is empty the estimate and interval are nan. Non-finite values, a shared key
    missing from ``clusters``, or invalid bootstrap arguments raise ``ValueError``.
    """
    clean_values = _finite_array(list(clean.values()), "clean")
    faulted_values = _finite_array(list(faulted.values()), "faulted")
    _check_bootstrap_args(confidence, resamples)
    shared = [key for key in clean if key in faulted]
    gap = partial(Gap, n_clean=len(clean), n_faulted=len(faulted), confidence=float(confidence))
    if shared:
        differences = _finite_array([clean[key] for key in shared]) - _finite_array([faulted[key] for key in shared])
        low, high = _differences_interval(differences, shared, clusters, confidence, resamples, seed)
        estimate = float(differences.mean())
        return gap(estimate, low, high, n_paired=len(shared), paired=True)
    if clean_values.size == 0 or faulted_values.size == 0:
        return gap(math.nan, math.nan, math.nan, n_paired=0, paired=False)
    low, high = bootstrap_difference_interval(clean_values, faulted_values, confidence, resamples, seed)
    estimate = float(clean_values.mean() - faulted_values.mean())
    return gap(estimate, low, high, n_paired=0, paired=False)


@dataclass(frozen=True)
class PairedComparison:
    """Two models compared on the ``n`` episodes both were run on: accuracies, the difference ``accuracy_a -
    accuracy_b`` with its bootstrap interval, and McNemar's test. ``only_in_a``/``only_in_b`` count the episodes
    that could not be matched and were left out."""

    n: int
    only_in_a: int
    only_in_b: int
    accuracy_a: float
    accuracy_b: float
    difference: float
    ci_low: float
    ci_high: float
    confidence: float
    mcnemar: McNemar

    def as_dict(self) -> dict[str, Any]:
        """One flat dict of plain values for JSON and MLflow; the McNemar fields are prefixed ``mcnemar_``."""
        flat = {field.name: _plain(getattr(self, field.name)) for field in fields(self) if field.name != "mcnemar"}
        flat.update({f"mcnemar_{name}": value for name, value in self.mcnemar.as_dict().items()})
        return flat


def compare_paired(
    a: Mapping[K, bool],
    b: Mapping[K, bool],
    clusters: Mapping[K, Hashable] | None = None,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedComparison:
    """Compare model A with model B on the episodes both were run on.

    ``a`` and ``b`` map an episode key to whether the model got it right. Only shared keys are compared (so a run
    that lost some episodes does not bias the comparison); the interval for the accuracy difference is the paired
    bootstrap, or the cluster bootstrap of per-episode differences when ``clusters`` maps keys to cluster labels.
    With no shared key accuracies, difference and interval are nan and McNemar reports p-value 1.

    Values must be booleans (or 0/1); a shared key missing from ``clusters`` or invalid bootstrap arguments raise
    ``ValueError``.
    """
    _bool_array(list(a.values()), "a")
    _bool_array(list(b.values()), "b")
    _check_bootstrap_args(confidence, resamples)
    shared = [key for key in a if key in b]
    right_a = _bool_array([a[key] for key in shared], "a")
    right_b = _bool_array([b[key] for key in shared], "b")
    mcnemar = mcnemar_test(right_a, right_b)
    if shared:
        accuracy_a, accuracy_b = float(right_a.mean()), float(right_b.mean())
        differences = right_a.astype(float) - right_b.astype(float)
        low, high = _differences_interval(differences, shared, clusters, confidence, resamples, seed)
    else:
        accuracy_a = accuracy_b = low = high = math.nan
    return PairedComparison(
        n=len(shared),
        only_in_a=len(a) - len(shared),
        only_in_b=len(b) - len(shared),
        accuracy_a=accuracy_a,
        accuracy_b=accuracy_b,
        difference=accuracy_a - accuracy_b,
        ci_low=low,
        ci_high=high,
        confidence=float(confidence),
        mcnemar=mcnemar,
    )


# At most this many values are drawn at once, so large samples do not build a resamples x n matrix in one go.
_CHUNK_VALUES = 2_000_000


def _finite_array(values: Floats, name: str = "values") -> FloatArray:
    data = np.asarray(values, dtype=float)
    if data.ndim != 1:
        raise ValueError(f"need a flat sequence of numbers, got an array of shape {data.shape}")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{name} must be finite numbers")
    return data


def _check_bootstrap_args(confidence: float, resamples: int) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")


def _plain(value: Any) -> Any:
    """A numpy scalar or Python number as the plain Python type JSON and MLflow accept; nan stays nan."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value)
    return value


def _check_paired_lengths(n_a: int, n_b: int) -> None:
    if n_a != n_b:
        raise ValueError(f"paired inputs must have the same length, got len(a)={n_a} and len(b)={n_b}")


def _bool_array(values: Bools, name: str) -> BoolArray:
    """``values`` as a boolean array; accepts booleans and 0/1 numbers, refuses anything else."""
    data = np.asarray(values)
    if data.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of booleans, got an array of shape {data.shape}")
    if data.dtype == bool:
        return data
    if data.size == 0:
        return np.zeros(0, dtype=bool)
    if data.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold booleans (or 0/1), got {data.dtype} values such as {data[0].item()!r}")
    bad = (data != 0) & (data != 1)
    if np.any(bad):
        raise ValueError(f"{name} must hold booleans (or 0/1), got {data[np.argmax(bad)].item()!r}")
    return data.astype(np.bool_)  # only 0s and 1s are left


def _cluster_codes(clusters: Sequence[Hashable], n: int) -> IntArray:
    """Cluster labels as integer codes ``0..k-1`` in order of first appearance."""
    labels = list(clusters)
    if len(labels) != n:
        raise ValueError(f"clusters must label every value: got {len(labels)} labels for {n} values")
    codes: dict[Hashable, int] = {}
    try:
        return np.fromiter((codes.setdefault(label, len(codes)) for label in labels), dtype=np.intp, count=n)
    except TypeError as error:
        raise ValueError(f"cluster labels must be hashable: {error}") from None


def _cluster_resampled_means(data: FloatArray, codes: IntArray, resamples: int, rng: np.random.Generator) -> FloatArray:
    """``resamples`` ratio-estimator means of ``data`` (non-empty) with whole clusters drawn with replacement."""
    if np.all(data == data[0]):
        return np.full(resamples, data[0])
    sums = np.bincount(codes, weights=data)
    counts = np.bincount(codes).astype(float)
    k = sums.size
    chunk = max(1, _CHUNK_VALUES // k)
    parts = []
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        chosen = rng.integers(0, k, size=(rows, k))
        parts.append(sums[chosen].sum(axis=1) / counts[chosen].sum(axis=1))
    return np.concatenate(parts)


def _differences_interval(
    differences: FloatArray,
    keys: Sequence[K],
    clusters: Mapping[K, Hashable] | None,
    confidence: float,
    resamples: int,
    seed: int,
) -> tuple[float, float]:
    """Interval for the mean of per-episode differences: cluster bootstrap if ``clusters`` is given, else plain."""
    if clusters is None:
        return bootstrap_interval(differences, confidence, resamples, seed)
    labels = []
    for key in keys:
        if key not in clusters:
            raise ValueError(f"clusters has no label for episode key {key!r}")
        labels.append(clusters[key])
    return cluster_bootstrap_interval(differences, labels, confidence, resamples, seed)


def _resampled_means(data: FloatArray, resamples: int, rng: np.random.Generator) -> FloatArray:
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


def _percentile_interval(estimates: FloatArray, confidence: float) -> tuple[float, float]:
    tail = (1 - confidence) / 2
    low, high = np.quantile(estimates, [tail, 1 - tail])
    return float(low), float(high)
