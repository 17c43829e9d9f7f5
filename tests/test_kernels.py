"""The bootstrap's compiled loops (bias_suite.stats.bootstrap.kernels)
against independent references: pairs counted one by one, scipy's
weighted Wasserstein distance, products taken directly; small cases by
hand, then random ones with many ties (hypothesis)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance

from bias_suite.stats.bootstrap import kernels


def _weights(W, T, tpl, term, mult):
    w = W[:, tpl].astype(np.int64) * mult
    if T.shape[1]:
        w = w * T[:, term]
    return w


def _kt(W, T, dtype=np.float64):
    """The draws in the kernels' layout (resamples last)."""
    return kernels.draws_for_kernels(W, T if T is not None and T.shape[1] else None, dtype)


def _blocks(x, seg):
    """The last item of each item's block of equal scores within its segment."""
    n = x.size
    bend = np.arange(n)
    for i in range(n - 2, -1, -1):
        if x[i] == x[i + 1] and seg[i] == seg[i + 1]:
            bend[i] = bend[i + 1]
    return bend.astype(np.int64)


@st.composite
def items(draw, max_n=24):
    """Sorted scores from a few values (ties), groups, templates, terms and
    draws of a few resamples."""
    n = draw(st.integers(0, max_n))
    k = draw(st.integers(1, 4))
    J = draw(st.integers(1, 5))
    R = draw(st.integers(1, 3))
    n_terms = draw(st.integers(0, 4))
    x = np.sort(np.array(draw(st.lists(st.sampled_from([0.1, 0.25, 0.5, 0.7, 0.9]), min_size=n, max_size=n))))
    g = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=np.int64)
    tpl = np.array(draw(st.lists(st.integers(0, J - 1), min_size=n, max_size=n)), dtype=np.int64)
    term = (np.array(draw(st.lists(st.integers(0, n_terms - 1), min_size=n, max_size=n)), dtype=np.int64)
            if n_terms else np.zeros(n, np.int64))
    mult = np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), dtype=np.int32)
    W = np.array(draw(st.lists(st.integers(0, 3), min_size=R * J, max_size=R * J)), dtype=np.int32).reshape(R, J)
    T = np.array(draw(st.lists(st.integers(0, 3), min_size=R * n_terms, max_size=R * n_terms)),
                 dtype=np.int32).reshape(R, n_terms)
    return dict(x=x, g=g, tpl=tpl, term=term, mult=mult, W=W, T=T, k=k, J=J)


def test_u2_by_hand():
    # scores 0.2, 0.5, 0.5, 0.8; low items 0 and 2, high items 1, 2, 3; one template drawn twice
    x = np.array([0.2, 0.5, 0.5, 0.8])
    low = np.array([True, False, True, False])
    high = np.array([False, True, True, True])
    W = np.array([[2]], np.int32)
    T = np.zeros((1, 0), np.int32)
    z = np.zeros(4, np.int64)
    one = np.ones(4, np.int32)
    out = kernels.u2_cells(*_kt(W, T, np.int64), z, z, one, low, high, _blocks(x, z), np.r_[True, False, False, False],
                           z, 1)
    # every weight 2: item 1 over 0 (2 * 2 * 2) and tied with 2 (2 * 2 * 1); item 2 over 0 (8), with itself (4);
    # item 3 over 0 and 2 (8 + 8): 2U = 8 + 4 + 8 + 4 + 16
    assert out.tolist() == [[40]]


@settings(max_examples=150, deadline=None)
@given(items(), st.booleans(), st.data())
def test_u2_counts_every_pair(it, segmented, data):
    n, k = it["x"].size, it["k"]
    # segments: by group (items sorted by group, then score) or one; cells: by group or a column of the data
    if segmented:
        order = np.lexsort((it["x"], it["g"]))
        for key in ("x", "g", "tpl", "term", "mult"):
            it[key] = it[key][order]
        seg = it["g"]
    else:
        seg = np.zeros(n, np.int64)
    low = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    high = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    cell = np.ascontiguousarray(seg if segmented else it["g"], dtype=np.int64)
    new_segment = np.r_[True, seg[1:] != seg[:-1]] if n else np.zeros(0, bool)
    out = kernels.u2_cells(*_kt(it["W"], it["T"], np.int64), it["tpl"], it["term"], it["mult"], low, high,
                           _blocks(it["x"], seg), new_segment, cell, k).T
    w = _weights(it["W"], it["T"], it["tpl"], it["term"], it["mult"])
    want = np.zeros((it["W"].shape[0], k), np.int64)
    for i in range(n):
        for j in range(n):
            if high[i] and low[j] and seg[i] == seg[j]:
                twice = 2 if it["x"][j] < it["x"][i] else 1 if it["x"][j] == it["x"][i] else 0
                want[:, cell[i]] += w[:, i] * w[:, j] * twice
    np.testing.assert_array_equal(out, want)


def _w1(x, wu, wv):
    if wu.sum() == 0 or wv.sum() == 0:
        return np.nan
    return wasserstein_distance(x, x, wu, wv)


@settings(max_examples=150, deadline=None)
@given(items(), st.booleans())
def test_w1_groups_is_scipys_wasserstein(it, rest):
    x, g, k = it["x"], it["g"], it["k"]
    dx = np.r_[np.diff(x), 0.0] if x.size else np.zeros(0)
    out = kernels.w1_groups(*_kt(it["W"], it["T"]), it["tpl"], it["term"], it["mult"], g, dx, k, rest).T
    w = _weights(it["W"], it["T"], it["tpl"], it["term"], it["mult"]).astype(float)
    for b in range(w.shape[0]):
        for t in range(k):
            own = w[b] * (g == t)
            background = w[b] - own if rest else w[b]
            want = _w1(x, own, background) if x.size else np.nan
            np.testing.assert_allclose(out[b, t], want, rtol=1e-9, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(items())
def test_w1_pairs_is_scipys_wasserstein(it):
    x, g, k = it["x"], it["g"], it["k"]
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    pa = np.array([a for a, _ in pairs], np.int64)
    pb = np.array([b for _, b in pairs], np.int64)
    ends = np.r_[pa, pb]
    pair_of = (np.argsort(ends, kind="stable") % max(len(pairs), 1)).astype(np.int64)
    start = np.r_[0, np.cumsum(np.bincount(ends, minlength=k))].astype(np.int64)
    out = kernels.w1_pairs(*_kt(it["W"], it["T"]), it["tpl"], it["term"], it["mult"], g, x, k, pa, pb, start,
                           pair_of).T
    w = _weights(it["W"], it["T"], it["tpl"], it["term"], it["mult"]).astype(float)
    assert out.shape == (w.shape[0], len(pairs))
    for b in range(w.shape[0]):
        for p, (a, c) in enumerate(pairs):
            want = _w1(x, w[b] * (g == a), w[b] * (g == c)) if x.size else np.nan
            np.testing.assert_allclose(out[b, p], want, rtol=1e-9, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(items())
def test_within_template_pairs_counts_pairs_inside_templates(it):
    k, J = it["k"], it["J"]
    order = np.lexsort((it["x"], it["tpl"]))
    for key in ("x", "g", "tpl", "term", "mult"):
        it[key] = it[key][order]
    x, g, tpl = it["x"], it["g"], it["tpl"]
    n = x.size
    T = it["T"] if it["T"].shape[1] else np.ones((it["W"].shape[0], 1), np.int32)
    term = it["term"] if it["T"].shape[1] else np.zeros(n, np.int64)
    new_template = np.r_[True, tpl[1:] != tpl[:-1]] if n else np.zeros(0, bool)
    U, NN = kernels.within_template_pairs(*_kt(it["W"], T), tpl, term, it["mult"].astype(float), g,
                                          _blocks(x, tpl), new_template, k)
    U, NN = np.moveaxis(U, -1, 1), np.moveaxis(NN, -1, 1)
    R = it["W"].shape[0]
    tw = (T[:, term] * it["mult"]).astype(float)  # term weights only: the template's draws weigh whole templates
    for b in range(R):
        Uj = np.zeros((J, k, k))
        Nj = np.zeros((J, k))
        for i in range(n):
            Nj[tpl[i], g[i]] += tw[b, i]
            for j in range(n):
                if tpl[i] == tpl[j]:
                    Uj[tpl[i], g[i], g[j]] += tw[b, i] * tw[b, j] * (1.0 if x[j] < x[i] else 0.5 if x[j] == x[i] else 0)
        d = it["W"][b].astype(float)
        for s, Q in enumerate((d * d - d, d * d)):
            np.testing.assert_allclose(U[s, b], np.einsum("j,jac->ac", Q, Uj), rtol=1e-12, atol=1e-9)
            np.testing.assert_allclose(NN[s, b], np.einsum("j,ja,jc->ac", Q, Nj, Nj), rtol=1e-12, atol=1e-9)


def test_tuple_weights_are_products():
    W = np.array([[1.0, 2.0], [0.0, 3.0]])
    T = np.array([[1.0, 2.0, 3.0], [2.0, 0.0, 1.0]])
    tpl = np.array([0, 1, 1], np.int64)
    members = np.array([[0, 1], [2, 2], [1, 0]], np.int64)
    out = kernels.tuple_weights(*_kt(W, T), tpl, members).T
    assert out.tolist() == [[1 * 1 * 2, 2 * 3 * 3, 2 * 2 * 1], [0.0, 3 * 1 * 1, 3 * 0 * 2]]


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_single_item(n):
    W = np.ones((2, 1), np.int32)
    T = np.zeros((2, 0), np.int32)
    z = np.zeros(n, np.int64)
    out = kernels.w1_groups(*_kt(W, T), z, z, np.ones(n, np.int32), z, np.zeros(n), 2, False).T
    assert np.isnan(out[:, 1]).all()  # a group without items: undefined
    assert (out[:, 0] == 0).all() if n else np.isnan(out[:, 0]).all()  # one item against itself: 0
    pa, pb = np.array([0], np.int64), np.array([1], np.int64)
    out = kernels.w1_pairs(*_kt(W, T), z, z, np.ones(n, np.int32), z, np.zeros(n), 2, pa, pb,
                           np.array([0, 1, 2], np.int64), np.array([0, 0], np.int64)).T
    assert np.isnan(out).all()


def test_u_sums_refuse_weights_that_would_overflow():
    """The exact U sums are 64-bit integers: draws large enough to overflow
    them are refused with the way out named, not summed wrongly."""
    from test_bootstrap import small_table

    from bias_suite.exceptions import MetricError
    from bias_suite.stats import bootstrap as bsm
    from bias_suite.stats.bootstrap.weighted_items import CATS, ClassItems
    from bias_suite.suites.views import counterfactual_view

    data = small_table(n_templates=6, terms=1, two=False)
    prep = bsm.prepare_attribute(data, counterfactual_view(data.frame)["attr"], "attr", None)
    items = ClassItems(prep, 0)
    items.start(np.ones((2, prep.J), np.int32))
    assert np.isfinite(items.u_over_all(CATS["pos"], CATS["neg"])).all()
    items.start(np.full((2, prep.J), 2**30, np.int32))
    with pytest.raises(MetricError, match="overflow the exact U sums.*method='generic'"):
        items.u_over_all(CATS["pos"], CATS["neg"])


@settings(max_examples=100, deadline=None)
@given(items(), st.booleans())
def test_template_mean_gaps_are_the_weighted_means_differences(it, absolute):
    """Per resample and template, the groups' term-weighted mean scores, the
    pairs' differences where every group weighs, summed with the template
    draws; counted directly."""
    from bias_suite.stats.bootstrap.term_kernels import _mean_cells
    from types import SimpleNamespace

    k, J = it["k"], it["J"]
    n_terms = max(it["T"].shape[1], 1)
    T = it["T"] if it["T"].shape[1] else np.ones((it["W"].shape[0], 1), np.int32)
    # each term belongs to one group: term t of group t % k
    g = it["g"]
    term = (g + k * (it["term"] % max(n_terms // k, 1))) % n_terms if n_terms >= k else np.zeros_like(g)
    term_g = np.arange(n_terms) % k if n_terms >= k else np.zeros(n_terms, np.int64)
    g = term_g[term]
    prep = SimpleNamespace(ad=SimpleNamespace(k=k), term_g=term_g, n_terms=n_terms)
    x, tpl = it["x"], it["tpl"]
    cells = _mean_cells(prep, x, tpl, term, J)
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    pa = np.array([a for a, _ in pairs], np.int64)
    pb = np.array([b for _, b in pairs], np.int64)
    num, sgn, den = kernels.template_mean_gaps(*_kt(it["W"], T), np.arange(J, dtype=np.int64), *cells, pa, pb,
                                               absolute, 1e-9)
    W = it["W"].astype(float)
    for b in range(W.shape[0]):
        tw = T[b, term].astype(float)
        want_num, want_sgn, want_den = np.zeros(len(pairs)), np.zeros(len(pairs)), 0.0
        for j in range(J):
            means = []
            for t in range(k):
                sel = (tpl == j) & (g == t)
                wsum = tw[sel].sum()
                means.append((tw[sel] * x[sel]).sum() / wsum if wsum > 0 else np.nan)
            if not np.isfinite(means).all():
                continue
            want_den += W[b, j]
            for p, (a, c) in enumerate(pairs):
                d = means[a] - means[c]
                d = 0.0 if abs(d) <= 1e-9 else d
                want_num[p] += W[b, j] * (abs(d) if absolute else d)
                want_sgn[p] += W[b, j] * d
        np.testing.assert_allclose(den[b], want_den, rtol=1e-12)
        np.testing.assert_allclose(num[:, b], want_num, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(sgn[:, b], want_sgn, rtol=1e-9, atol=1e-9)
