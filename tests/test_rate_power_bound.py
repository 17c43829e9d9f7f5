"""The exact tests of benchmarks/rate_power_bound.py, on hand-computed
cases, and the calibration benchmark's "found" reading."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import calibration as cal  # noqa: E402
import rate_power_bound as rpb  # noqa: E402


def test_within_templates_one_template_whose_only_events_are_the_groups():
    # 18 examples, 3 events, all 3 of the group's: P(X = 3) = 1 / C(18, 3), two-sided twice that
    p = rpb.within_p(np.array([18]), np.array([3]), np.array([3]), np.array([3]))
    assert p == pytest.approx(2 / math.comb(18, 3))


def test_within_templates_convolves_templates_and_skips_those_without_both_outcomes():
    n, k = np.array([4, 4, 4, 4]), np.array([2, 2, 2, 2])
    e = np.array([2, 2, 0, 4])   # the last two templates say nothing
    x = np.array([2, 2, 0, 2])
    # per informative template X ~ Hypergeom(4, 2, 2): P(0) = 1/6, P(1) = 4/6, P(2) = 1/6;
    # T = X1 + X2 = 4 has probability 1/36 and is the upper end
    assert rpb.within_p(n, k, e, x) == pytest.approx(2 / 36)
    # the middle value is not evidence at all
    assert rpb.within_p(n, k, e, np.array([1, 1, 0, 2])) == 1.0


def test_across_templates_sign_flip_is_exact_over_the_discordant_templates():
    # group rate 1, rest 0 in three templates, equal in a fourth: |sum| = 3 in 2 of 8 sign patterns
    n, k = np.array([18, 18, 18, 18]), np.array([3, 3, 3, 3])
    e, x = np.array([3, 3, 3, 0]), np.array([3, 3, 3, 0])
    assert rpb.across_p(n, k, e, x) == pytest.approx(2 / 8)
    # opposite differences cancel: no evidence
    e2 = np.array([3, 15, 0, 0])
    x2 = np.array([3, 0, 0, 0])  # +1 in the first template, -1 in the second
    assert rpb.across_p(n, k, e2, x2) == 1.0
    assert rpb.across_p(n, k, np.zeros(4, int), np.zeros(4, int)) == 1.0


def test_events_count_the_planted_groups_examples_per_template():
    n, k, e, x = rpb.events("FNED", 30, seed=1, shift=0.0)
    assert (n == 18).all() and (k == 3).all() and n.size == (cal.generate(30, seed=1)["label"]
                                                             .iloc[::18] == cal.TARGET_CLASS).sum()
    assert ((0 <= x) & (x <= np.minimum(k, e))).all()
    # a large negative shift makes the planted group miss the class in more templates, never fewer
    _, _, e2, x2 = rpb.events("FNED", 30, seed=1, shift=-3.0)
    assert (x2 >= x).all() and x2.sum() > x.sum()


def test_found_reads_material_rows_about_the_planted_group_on_the_target_class():
    assert cal.found(["CFGap negative g0|g1"]) and cal.found(["FNED negative g0"])
    assert cal.found(["CFGap negative g2|g0"])
    assert not cal.found(["FNED positive g0", "CFGap negative g1|g2", "Friedman-p negative None"])
    assert not cal.found([])
