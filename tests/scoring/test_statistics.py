"""Paired and clustered statistics (scoring.stats): McNemar's test, paired and cluster bootstrap intervals, the
recovery gap and paired model comparisons. Expected values are computed independently (math.comb, math.erfc) or
checked by coverage on synthetic data with a known mean."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from undertow.scoring.stats import (
    Gap,
    McNemar,
    PairedComparison,
    bootstrap_difference_interval,
    bootstrap_interval,
    cluster_bootstrap_interval,
    compare_paired,
    mcnemar_test,
    paired_bootstrap_interval,
    recovery_gap,
)


def table(both_right: int, only_a: int, only_b: int, both_wrong: int) -> tuple[list[bool], list[bool]]:
    """Paired outcomes with the given 2x2 table, in a scrambled order (the test must not depend on order)."""
    pairs = (
        [(True, True)] * both_right
        + [(True, False)] * only_a
        + [(False, True)] * only_b
        + [(False, False)] * both_wrong
    )
    order = np.random.default_rng(0).permutation(len(pairs))
    return [pairs[i][0] for i in order], [pairs[i][1] for i in order]


# ---------------------------------------------------------------------------------------------------------------
# McNemar


def test_mcnemar_exact_matches_a_hand_computed_binomial_tail() -> None:
    a, b = table(both_right=30, only_a=10, only_b=2, both_wrong=8)
    result = mcnemar_test(a, b)
    expected = 2 * sum(math.comb(12, k) for k in range(3)) / 2**12
    assert expected == 0.03857421875
    assert result.method == "exact"
    assert result.p_value == pytest.approx(expected, rel=1e-12)
    assert (result.n, result.both_right, result.only_a, result.only_b, result.both_wrong) == (50, 30, 10, 2, 8)
    assert result.statistic == 2.0
    # Two-sided: swapping the models changes nothing but which count is which.
    swapped = mcnemar_test(b, a)
    assert (swapped.only_a, swapped.only_b) == (2, 10)
    assert swapped.p_value == pytest.approx(expected, rel=1e-12)


def test_mcnemar_uses_continuity_corrected_chi2_for_many_discordant_pairs() -> None:
    a, b = table(both_right=100, only_a=40, only_b=20, both_wrong=40)
    result = mcnemar_test(a, b)
    statistic = (abs(40 - 20) - 1) ** 2 / 60
    assert result.method == "chi2"
    assert result.statistic == pytest.approx(statistic, rel=1e-12)
    assert result.statistic == pytest.approx(6.016666666666667)
    # Survival function of chi-square with one degree of freedom: P(Z^2 > x) = erfc(sqrt(x / 2)).
    assert result.p_value == pytest.approx(math.erfc(math.sqrt(statistic / 2)), rel=1e-9)
    assert result.p_value == pytest.approx(0.01418, abs=5e-5)


def test_mcnemar_switches_to_chi2_at_25_discordant_pairs() -> None:
    assert mcnemar_test(*table(0, 20, 4, 0)).method == "exact"
    assert mcnemar_test(*table(0, 20, 5, 0)).method == "chi2"
    # Equal discordant counts are no evidence at all; the continuity correction must not overshoot past zero.
    balanced = mcnemar_test(*table(5, 15, 15, 5))
    assert (balanced.method, balanced.statistic, balanced.p_value) == ("chi2", 0.0, 1.0)


def test_mcnemar_without_discordant_pairs_has_p_value_one() -> None:
    result = mcnemar_test(*table(both_right=7, only_a=0, only_b=0, both_wrong=3))
    assert (result.statistic, result.p_value, result.method) == (0.0, 1.0, "exact")
    empty = mcnemar_test([], [])
    assert (empty.n, empty.p_value, empty.method) == (0, 1.0, "exact")


def test_mcnemar_accepts_zero_one_and_refuses_other_values() -> None:
    assert mcnemar_test([1, 0, 1], [0, 0, 1]) == mcnemar_test([True, False, True], [False, False, True])
    with pytest.raises(ValueError, match=r"a must hold booleans \(or 0/1\), got 0\.5"):
        mcnemar_test([1, 0.5], [1, 0])
    with pytest.raises(ValueError, match=r"b must hold booleans"):
        mcnemar_test([True], ["yes"])


def test_mcnemar_names_both_lengths_when_they_differ() -> None:
    with pytest.raises(ValueError, match=r"len\(a\)=3 and len\(b\)=2"):
        mcnemar_test([True, False, True], [True, False])


def test_mcnemar_as_dict_is_plain_and_json_ready() -> None:
    data = mcnemar_test(*table(3, 10, 2, 1)).as_dict()
    assert data == {
        "n": 16,
        "both_right": 3,
        "only_a": 10,
        "only_b": 2,
        "both_wrong": 1,
        "statistic": 2.0,
        "p_value": pytest.approx(0.03857421875),
        "method": "exact",
    }
    assert {type(value) for value in data.values()} <= {int, float, str}
    json.dumps(data)


# ---------------------------------------------------------------------------------------------------------------
# coverage on synthetic data


def test_bootstrap_interval_covers_a_bernoulli_mean_at_close_to_the_nominal_rate() -> None:
    rng = np.random.default_rng(2024)
    repetitions, covered = 400, 0
    for repetition in range(repetitions):
        sample = (rng.random(200) < 0.3).astype(float)
        low, high = bootstrap_interval(sample, resamples=2_000, seed=repetition)
        covered += low <= 0.3 <= high
    assert 0.91 <= covered / repetitions <= 0.98


def clustered_sample(rng: np.random.Generator, n_clusters: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """0/1 outcomes whose success probability varies by cluster: p ~ Beta(0.6, 1.4), mean 0.3, intra-cluster
    correlation 1 / (0.6 + 1.4 + 1) = 1/3, i.e. a design effect of 1 + (size - 1) / 3."""
    rates = rng.beta(0.6, 1.4, size=n_clusters)
    labels = np.repeat(np.arange(n_clusters), size)
    return (rng.random(labels.size) < rates[labels]).astype(float), labels


def test_cluster_bootstrap_is_near_nominal_where_the_iid_bootstrap_under_covers() -> None:
    rng = np.random.default_rng(7)
    repetitions, naive, clustered = 400, 0, 0
    for repetition in range(repetitions):
        values, labels = clustered_sample(rng, n_clusters=60, size=10)
        low, high = bootstrap_interval(values, resamples=2_000, seed=repetition)
        naive += low <= 0.3 <= high
        low, high = cluster_bootstrap_interval(values, labels, resamples=2_000, seed=repetition)
        clustered += low <= 0.3 <= high
    naive_rate, clustered_rate = naive / repetitions, clustered / repetitions
    # Design effect 4: the iid interval is about half as wide as it should be (nominal coverage of ~67%).
    assert naive_rate < 0.8
    assert clustered_rate - naive_rate > 0.15
    assert 0.91 <= clustered_rate <= 0.98


def test_cluster_bootstrap_with_singleton_clusters_agrees_with_the_plain_bootstrap() -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(1.0, 2.0, size=300)
    plain = bootstrap_interval(values, seed=1)
    clustered = cluster_bootstrap_interval(values, [f"scenario-{i}" for i in range(300)], seed=1)
    assert clustered == pytest.approx(plain, abs=0.03)
    binary = (rng.random(500) < 0.4).astype(float)
    assert cluster_bootstrap_interval(binary, range(500)) == pytest.approx(bootstrap_interval(binary), abs=0.01)


def test_cluster_bootstrap_weights_clusters_by_size() -> None:
    # Cluster "big" has nine 0s, cluster "small" one 1: the mean is 0.1. Resamples are {big, big} -> 0,
    # {big, small} -> 1/10 (half the time) and {small, small} -> 1, so the middle 40% is exactly 0.1; averaging
    # cluster means instead would put it at 0.5.
    values = [0.0] * 9 + [1.0]
    labels = ["big"] * 9 + ["small"]
    assert cluster_bootstrap_interval(values, labels, confidence=0.4) == (pytest.approx(0.1), pytest.approx(0.1))
    assert cluster_bootstrap_interval(values, labels) == (0.0, 1.0)


def test_cluster_bootstrap_edge_cases() -> None:
    assert all(math.isnan(x) for x in cluster_bootstrap_interval([], []))
    assert cluster_bootstrap_interval([0.2, 0.2, 0.2], ["a", "b", "b"]) == (0.2, 0.2)
    # One cluster: every resample is the whole sample.
    assert cluster_bootstrap_interval([0.0, 1.0, 1.0, 0.0], [("s", 1)] * 4) == (0.5, 0.5)


def test_cluster_bootstrap_is_deterministic_for_a_seed_and_fast() -> None:
    rng = np.random.default_rng(11)
    labels = np.repeat(np.arange(5_000), rng.integers(1, 4, size=5_000))
    values = (rng.random(labels.size) < 0.6).astype(float)
    start = time.perf_counter()
    first = cluster_bootstrap_interval(values, labels, resamples=10_000, seed=5)
    elapsed = time.perf_counter() - start
    assert first == cluster_bootstrap_interval(values, labels, resamples=10_000, seed=5)
    assert first != cluster_bootstrap_interval(values, labels, resamples=10_000, seed=6)
    assert first[0] < values.mean() < first[1]
    assert elapsed < 2.0  # typically ~0.2 s; generous so a loaded machine does not make this flaky


# ---------------------------------------------------------------------------------------------------------------
# paired vs unpaired


def correlated_pairs(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the same episodes under two settings: mostly episode difficulty, a little setting noise."""
    rng = np.random.default_rng(5)
    difficulty = rng.normal(0.0, 1.0, size=n)
    return difficulty + rng.normal(0.3, 0.2, size=n), difficulty + rng.normal(0.0, 0.2, size=n)


def test_paired_interval_is_narrower_for_positively_correlated_pairs() -> None:
    a, b = correlated_pairs()
    paired = paired_bootstrap_interval(a, b, seed=2)
    unpaired = bootstrap_difference_interval(a, b, seed=2)
    assert paired[1] - paired[0] < 0.5 * (unpaired[1] - unpaired[0])
    assert paired[0] < float(np.mean(a - b)) < paired[1]
    # The paired interval is the bootstrap of the per-pair differences.
    assert paired == bootstrap_interval(a - b, seed=2)


def test_paired_bootstrap_is_deterministic_for_a_seed() -> None:
    a, b = correlated_pairs(50)
    assert paired_bootstrap_interval(a, b, seed=9) == paired_bootstrap_interval(a, b, seed=9)
    assert paired_bootstrap_interval(a, b, seed=9) != paired_bootstrap_interval(a, b, seed=10)


def test_paired_bootstrap_edge_cases() -> None:
    assert all(math.isnan(x) for x in paired_bootstrap_interval([], []))
    assert paired_bootstrap_interval([1, 0, 1], [0, 0, 1]) != (0.0, 0.0)
    assert paired_bootstrap_interval([1.0, 0.5], [0.5, 0.0]) == (0.5, 0.5)  # constant difference


# ---------------------------------------------------------------------------------------------------------------
# recovery gap

CLEAN = {("s1", 0): 1.0, ("s1", 1): 1.0, ("s2", 0): 0.0, ("s2", 1): 1.0, ("s3", 0): 1.0, ("only-clean", 0): 0.0}
FAULTED = {("s1", 0): 0.0, ("s1", 1): 1.0, ("s2", 0): 0.0, ("s2", 1): 0.0, ("s3", 0): 1.0, ("only-faulted", 0): 1.0}
SHARED = [("s1", 0), ("s1", 1), ("s2", 0), ("s2", 1), ("s3", 0)]


def test_recovery_gap_is_paired_on_shared_keys_only() -> None:
    gap = recovery_gap(CLEAN, FAULTED, seed=4)
    assert isinstance(gap, Gap)
    assert gap.paired
    assert (gap.n_clean, gap.n_faulted, gap.n_paired) == (6, 6, 5)
    # Shared differences: 1, 0, 0, 1, 0.
    assert gap.estimate == pytest.approx(2 / 5)
    expected = paired_bootstrap_interval([CLEAN[k] for k in SHARED], [FAULTED[k] for k in SHARED], seed=4)
    assert (gap.ci_low, gap.ci_high) == expected
    assert gap.ci_low <= gap.estimate <= gap.ci_high
    # Values of unshared keys play no part.
    changed = recovery_gap({**CLEAN, ("only-clean", 0): 1.0}, {**FAULTED, ("only-faulted", 0): 0.0}, seed=4)
    assert (changed.estimate, changed.ci_low, changed.ci_high) == (gap.estimate, gap.ci_low, gap.ci_high)


def test_recovery_gap_with_clusters_bootstraps_differences_by_cluster() -> None:
    clusters = {key: key[0] for key in [*CLEAN, *FAULTED]}
    gap = recovery_gap(CLEAN, FAULTED, clusters=clusters, seed=4)
    expected = cluster_bootstrap_interval([1.0, 0.0, 0.0, 1.0, 0.0], ["s1", "s1", "s2", "s2", "s3"], seed=4)
    assert gap.paired and gap.n_paired == 5
    assert gap.estimate == pytest.approx(2 / 5)
    assert (gap.ci_low, gap.ci_high) == expected


def test_recovery_gap_falls_back_to_unpaired_without_shared_keys() -> None:
    clean = {("a", 0): 1.0, ("a", 1): 1.0, ("b", 0): 0.0, ("c", 0): 1.0}
    faulted = {("d", 0): 0.0, ("e", 0): 1.0, ("f", 0): 0.0}
    gap = recovery_gap(clean, faulted, seed=3)
    assert not gap.paired
    assert (gap.n_clean, gap.n_faulted, gap.n_paired) == (4, 3, 0)
    assert gap.estimate == pytest.approx(3 / 4 - 1 / 3)
    assert (gap.ci_low, gap.ci_high) == bootstrap_difference_interval([1, 1, 0, 1], [0, 1, 0], seed=3)


def test_recovery_gap_of_empty_inputs_is_nan() -> None:
    for clean, faulted in [({}, {}), ({"x": 1.0}, {}), ({}, {"x": 0.0})]:
        gap = recovery_gap(clean, faulted)
        assert math.isnan(gap.estimate) and math.isnan(gap.ci_low) and math.isnan(gap.ci_high)
        assert not gap.paired and gap.n_paired == 0


def test_gap_as_dict_is_plain_and_keeps_nan() -> None:
    data = recovery_gap(CLEAN, FAULTED, confidence=0.9).as_dict()
    assert set(data) == {"estimate", "ci_low", "ci_high", "n_clean", "n_faulted", "n_paired", "paired", "confidence"}
    assert data["paired"] is True and data["confidence"] == 0.9 and type(data["n_paired"]) is int
    json.dumps(data)
    empty = recovery_gap({}, {}).as_dict()
    assert math.isnan(empty["estimate"]) and type(empty["estimate"]) is float


# ---------------------------------------------------------------------------------------------------------------
# compare_paired


def test_compare_paired_matches_shared_keys_and_counts_the_rest() -> None:
    a = {f"e{i}": i % 4 != 0 for i in range(40)}  # 30 right
    b = {f"e{i}": i % 2 == 0 for i in range(40)}  # 20 right
    a.update({"a-only-1": True, "a-only-2": False})
    b.update({"b-only-1": True, "b-only-2": True, "b-only-3": True})
    result = compare_paired(a, b, seed=1)
    assert isinstance(result, PairedComparison)
    assert (result.n, result.only_in_a, result.only_in_b) == (40, 2, 3)
    assert result.accuracy_a == pytest.approx(30 / 40)
    assert result.accuracy_b == pytest.approx(20 / 40)
    assert result.difference == pytest.approx(0.25) and result.difference > 0
    assert result.ci_low < result.difference < result.ci_high
    # The table: i % 4 == 0 -> A wrong, B right; i % 4 == 2 -> both right; odd i -> A right, B wrong.
    mcnemar = result.mcnemar
    assert isinstance(mcnemar, McNemar)
    assert (mcnemar.n, mcnemar.both_right, mcnemar.only_a, mcnemar.only_b, mcnemar.both_wrong) == (40, 10, 20, 10, 0)
    assert mcnemar.n == mcnemar.both_right + mcnemar.only_a + mcnemar.only_b + mcnemar.both_wrong
    assert mcnemar.only_a - mcnemar.only_b == round(result.difference * result.n)
    assert mcnemar.method == "chi2"
    assert mcnemar.p_value == pytest.approx(math.erfc(math.sqrt((10 - 1) ** 2 / 30 / 2)))
    keys = [f"e{i}" for i in range(40)]
    assert (result.ci_low, result.ci_high) == paired_bootstrap_interval(
        [float(a[k]) for k in keys], [float(b[k]) for k in keys], seed=1
    )
    # Swapping the models flips the sign.
    swapped = compare_paired(b, a, seed=1)
    assert swapped.difference == pytest.approx(-result.difference)
    assert (swapped.only_in_a, swapped.only_in_b) == (3, 2)


def test_compare_paired_with_clusters() -> None:
    a = {("s1", 0): True, ("s1", 1): True, ("s2", 0): False, ("s3", 0): True}
    b = {("s1", 0): False, ("s1", 1): True, ("s2", 0): True, ("s3", 0): False}
    result = compare_paired(a, b, clusters={key: key[0] for key in a}, seed=2)
    expected = cluster_bootstrap_interval([1.0, 0.0, -1.0, 1.0], ["s1", "s1", "s2", "s3"], seed=2)
    assert (result.ci_low, result.ci_high) == expected
    assert result.difference == pytest.approx(0.25)


def test_compare_paired_without_shared_keys_is_nan() -> None:
    result = compare_paired({"x": True}, {"y": False})
    assert (result.n, result.only_in_a, result.only_in_b) == (0, 1, 1)
    assert all(math.isnan(v) for v in (result.accuracy_a, result.difference, result.ci_low, result.ci_high))
    assert (result.mcnemar.p_value, result.mcnemar.method) == (1.0, "exact")


def test_paired_comparison_as_dict_is_flat_and_plain() -> None:
    data = compare_paired({"x": True, "y": False, "z": True}, {"x": False, "y": False, "z": True}).as_dict()
    assert data["n"] == 3 and data["difference"] == pytest.approx(1 / 3)
    assert data["mcnemar_only_a"] == 1 and data["mcnemar_method"] == "exact"
    assert "mcnemar" not in data
    assert {type(value) for value in data.values()} <= {int, float, str}
    json.dumps(data)


# ---------------------------------------------------------------------------------------------------------------
# bad input


def test_mismatched_lengths_are_refused_with_both_lengths() -> None:
    with pytest.raises(ValueError, match=r"len\(a\)=2 and len\(b\)=3"):
        paired_bootstrap_interval([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match=r"len\(a\)=0 and len\(b\)=1"):
        paired_bootstrap_interval([], [1])


def test_non_finite_values_are_refused() -> None:
    with pytest.raises(ValueError, match="a must be finite numbers"):
        paired_bootstrap_interval([1.0, math.nan], [1.0, 0.0])
    with pytest.raises(ValueError, match="b must be finite numbers"):
        paired_bootstrap_interval([1.0, 0.0], [math.inf, 0.0])
    with pytest.raises(ValueError, match="values must be finite numbers"):
        cluster_bootstrap_interval([1.0, -math.inf], ["a", "b"])
    with pytest.raises(ValueError, match="faulted must be finite numbers"):
        recovery_gap({"x": 1.0}, {"x": math.nan})
    with pytest.raises(ValueError, match="clean must be finite numbers"):
        recovery_gap({"unshared": math.nan}, {"x": 1.0})


def test_clusters_of_the_wrong_length_or_kind_are_refused() -> None:
    with pytest.raises(ValueError, match="clusters must label every value: got 2 labels for 3 values"):
        cluster_bootstrap_interval([1.0, 0.0, 1.0], ["a", "b"])
    with pytest.raises(ValueError, match="cluster labels must be hashable"):
        cluster_bootstrap_interval([1.0, 0.0], [["a"], ["b"]])
    with pytest.raises(ValueError, match=r"clusters has no label for episode key \('s3', 0\)"):
        recovery_gap(CLEAN, FAULTED, clusters={("s1", 0): "s1", ("s1", 1): "s1", ("s2", 0): "s2", ("s2", 1): "s2"})
    with pytest.raises(ValueError, match="clusters has no label for episode key 'y'"):
        compare_paired({"x": True, "y": False}, {"x": False, "y": True}, clusters={"x": 1})


def test_invalid_bootstrap_arguments_and_outcomes_are_refused() -> None:
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\), got 95"):
        paired_bootstrap_interval([1.0], [0.0], confidence=95)
    with pytest.raises(ValueError, match="resamples must be at least 1, got 0"):
        cluster_bootstrap_interval([1.0], ["a"], resamples=0)
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\), got 1.0"):
        recovery_gap({}, {}, confidence=1.0)
    with pytest.raises(ValueError, match=r"b must hold booleans \(or 0/1\), got 2"):
        compare_paired({"x": True}, {"x": 2})
