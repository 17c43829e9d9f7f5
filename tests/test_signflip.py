"""The sign-flip p-value of rate comparisons (bias_suite.stats.signflip):
hand-counted small cases, its normal tail against a Monte Carlo count, its
invariants, and that a rate row's p-value is the test of its templates'
contributions."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_suite.metrics.catalog import get_metric
from bias_suite.stats.evidence import paired_bounds
from bias_suite.stats.signflip import EXACT_MAX, sign_flip_p, sign_flip_ps
from bias_suite.stats.verdicts import decide

from test_paired_bounds import attribute_data


def test_hand_counted_patterns():
    # three equal contributions: of the 8 sign patterns, +++ and --- reach |3|
    assert sign_flip_p([1.0, 1.0, 1.0]) == pytest.approx(2 / 8)
    # 0.5, -0.2, 0.1, 0.3: observed sum 0.7; the 16 sums by sign pattern of (0.5, 0.2, 0.1, 0.3) in
    # absolute value: 1.1, 0.9 (flip 0.1), 0.7 (flip 0.2), 0.5 (flip 0.3), 0.5 (0.2, 0.1), 0.3 (0.1, 0.3)...
    # counted directly: |±0.5 ±0.2 ±0.1 ±0.3| >= 0.7 for 6 of 16 patterns
    d = np.array([0.5, -0.2, 0.1, 0.3])
    count = sum(abs(sum(s * x for s, x in zip(signs, [0.5, 0.2, 0.1, 0.3]))) >= 0.7 - 1e-12
                for signs in np.array(np.meshgrid(*[[1, -1]] * 4)).T.reshape(-1, 4))
    assert count == 6
    assert sign_flip_p(d) == pytest.approx(6 / 16)
    # ten templates all raising one side: the smallest p of ten, 2 / 1024
    assert sign_flip_p(np.full(10, 0.02)) == pytest.approx(2 / 1024)


def test_zeros_say_nothing():
    assert sign_flip_p([]) == 1.0
    assert sign_flip_p([0.0, 0.0]) == 1.0
    assert sign_flip_p([0.3, 0.0, 0.3, 1e-15], eps=1e-12) == pytest.approx(2 / 4)
    # a sum of 0 is as far from 0 as any pattern can be near it
    assert sign_flip_p([0.2, -0.2]) == 1.0


def test_normal_tail_beyond_the_exact_count():
    rng = np.random.default_rng(5)
    d = rng.normal(0.03, 0.05, size=40)
    p = sign_flip_p(d)
    signs = rng.choice([-1.0, 1.0], size=(200_000, d.size))
    mc = float(np.mean(np.abs(signs @ d) >= abs(d.sum())))
    assert d.size > EXACT_MAX and p == pytest.approx(mc, abs=0.01)
    assert p == pytest.approx(math.erfc(abs(d.sum()) / math.sqrt((d * d).sum()) / math.sqrt(2)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=EXACT_MAX + 6))
def test_invariants(xs):
    d = np.array(xs)
    p = sign_flip_p(d)
    assert 0.0 < p <= 1.0
    assert sign_flip_p(-d) == pytest.approx(p)
    assert sign_flip_p(d[::-1]) == pytest.approx(p)
    k = int((np.abs(d) > 0).sum())
    if 0 < k <= EXACT_MAX:
        assert p >= 2.0 / 2 ** k - 1e-12  # no pattern is rarer than the observed one and its mirror


def fned_data(flips: int, J: int = 12):
    """Two groups, one gold-'pos' example each in J templates; 'a' is missed in the first ``flips``
    templates, 'b' never: TPR(a) - TPR(b) = -flips / J, each differing template contributing 1 / J."""
    tpl = np.repeat(np.arange(J), 2)
    g = np.tile([0, 1], J)
    y = np.ones(2 * J, int)
    yhat = np.ones(2 * J, int)
    yhat[0:2 * flips:2] = 0
    return attribute_data(y, yhat, g), tpl, J


def test_a_rate_row_reads_the_sign_flip_p_of_its_templates():
    ad, tpl, J = fned_data(flips=8)
    pb = paired_bounds(get_metric("TPR-Gap"), ad, tpl, J)[("pos", "a|b")]
    assert pb.differing == 8 and pb.p == pytest.approx(2 / 256)
    # the verdict's p is that p (not the bootstrap's t), unless the interval is the bound itself
    d = decide(8 / 12, 0.4, 0.9, kind="signed", tau=0.05, df=7, paired=pb)
    assert d["p"] == pytest.approx(2 / 256) and d["verdict"] == "material"
    exact = decide(8 / 12, 0.0, 0.9, kind="signed", tau=0.05, df=7, paired=pb.__class__(**{**pb.__dict__,
                                                                                              "exact": True}))
    assert exact["p"] == 1.0


def test_the_batched_p_values_are_those_of_one_row_at_a_time():
    """Rows of every number of contributions (none, ties only, up to past
    EXACT_MAX), each with its own eps: the same p as one row at a time."""
    rng = np.random.default_rng(3)
    rows, eps = [], []
    for k in list(range(0, EXACT_MAX + 3)) * 3:
        d = np.zeros(20)
        on = rng.choice(20, size=k, replace=False)
        d[on] = rng.normal(0.3, 1.0, size=k) * rng.choice([1e-2, 1.0])
        d[rng.choice(20, size=2)] += 1e-15  # below eps: left out
        rows.append(d)
        eps.append(1e-12)
    rows.append(np.r_[np.full(4, 0.2), np.full(4, -0.2), np.zeros(12)])  # sums to 0: p = 1
    eps.append(0.0)
    got = sign_flip_ps(np.array(rows), np.array(eps))
    want = [sign_flip_p(r, e) for r, e in zip(rows, eps)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got[-1] == 1.0 and got[0] == 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False).filter(lambda v: abs(v) > 1e-6), min_size=1, max_size=10))
def test_exact_p_counts_all_two_to_the_k_patterns(xs):
    """Half of the patterns are enumerated (their negatives have the same
    absolute sums); the p-value is the share of all 2^k counted one by one."""
    import itertools

    d = np.array(xs)
    observed = abs(d.sum())
    scale = np.abs(d).sum()
    count = sum(abs(np.dot(signs, d)) >= observed - 1e-9 * scale
                for signs in itertools.product([1.0, -1.0], repeat=d.size))
    want = 1.0 if observed <= 1e-12 * scale else count / 2 ** d.size
    assert sign_flip_p(d) == pytest.approx(want)
