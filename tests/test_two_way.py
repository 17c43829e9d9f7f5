"""Two-way cluster bootstrap: templates and identity terms resampled
(bias_suite.stats.bootstrap with bias_suite.stats.bootstrap.terms).

The closed form must give the generic path's replicate values (resample
templates and terms, then the engine's own code) for every named metric,
on full and ragged designs; groups with one term must give exactly the
template-only replicates; and on data with a real term-level effect,
template-only intervals under-cover while two-way intervals cover.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_suite.exceptions import MetricError
from bias_suite.families import scored_from_arrays
from bias_suite.metrics import compute as evaluate
from bias_suite.metrics.catalog import NAMED_METRICS, get_metric
from bias_suite.stats import bootstrap as bsm
from bias_suite.stats.bootstrap import bootstrap, bootstrap_replicates, resampling_bootstrap
from bias_suite.stats.bootstrap.terms import attribute_terms, draw_term_weights, resample_terms_option, term_weights
from bias_suite.suites.views import counterfactual_view

CLASSES = ("neg", "neu", "pos")


def ragged_table(n_templates=12, seed=0, keep=0.75, dup=0.15, unlabelled=0.1):
    """Attribute "attr": groups a (3 terms), b (2 terms), c (1 term); each
    template holds a random subset of the terms (some templates lack a
    group), some (template, term) cells hold two examples; attribute
    "one": two groups of one term each."""
    rng = np.random.default_rng(seed)
    rows, P = [], []
    terms = {"a": ["a0", "a1", "a2"], "b": ["b0", "b1"], "c": ["c0"]}
    for attr, tg in (("attr", terms), ("one", {"x": ["x0"], "y": ["y0"]})):
        for j in range(n_templates):
            gold = CLASSES[rng.integers(3)]
            for gi, (g, ts) in enumerate(tg.items()):
                for t in ts:
                    if attr == "attr" and rng.random() > keep:
                        continue
                    for _ in range(1 + int(rng.random() < dup)):
                        lab = None if rng.random() < unlabelled else (gold if rng.random() < 0.75 else CLASSES[rng.integers(3)])
                        rows.append(dict(id=f"r{len(rows)}", template=f"{attr}{j}", attribute=attr, group=g, term=t,
                                         text="x", label=lab))
                        logit = rng.normal(size=3) + 0.8 * (np.array(CLASSES) == gold) + 0.3 * gi
                        p = np.exp(logit)
                        P.append(p / p.sum())
    return scored_from_arrays(pd.DataFrame(rows), np.array(P), list(CLASSES))


def _as_dict(keys, values):
    return {tuple(k): v for k, v in zip(keys.itertuples(index=False), values)}


def _same(a, b):
    na, nb = np.isnan(a), np.isnan(b)
    return np.array_equal(na, nb) and np.allclose(a[~na], b[~nb], rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ the draws
def test_terms_are_resampled_within_blocks_of_terms_that_share_templates():
    fr = pd.DataFrame(dict(attribute="A", template=["t1"] * 4 + ["t2"] * 4 + ["t3"] * 2 + ["t4"],
                           group=list("xxyy") + list("xxyy") + list("xy") + ["y"],
                           term=["a", "b", "m", "n", "a", "c", "m", "n", "d", "o", None]))
    at = attribute_terms(fr, "A")
    assert list(at.name) == ["a", "b", "m", "n", "c", "d", "o", None]
    assert list(at.group) == list("xxyyxxyy")
    # a, b, c share templates (through a); m, n too; d, o and the unknown term are each alone
    assert list(at.block) == [0, 0, 1, 1, 0, 2, 3, 4]
    assert at.several() and not at.known
    T = term_weights(at.block, 300, np.random.default_rng(1))
    assert (T[:, [0, 1, 4]].sum(axis=1) == 3).all() and (T[:, [2, 3]].sum(axis=1) == 2).all()
    assert (T[:, 5:] == 1).all() and abs(T[:, :5].mean() - 1) < 0.1
    # nested terms only ('Muslim' in singular slots, 'Muslims' in plural ones): nothing to resample
    nested = pd.DataFrame(dict(attribute="A", template=["s1", "s1", "p1", "p1"], group=["x", "y", "x", "y"],
                               term=["Muslim", "Jew", "Muslims", "Jews"]))
    assert not attribute_terms(nested, "A").several()
    with pytest.raises(MetricError, match="term for every example"):
        draw_term_weights(scored_from_arrays(fr.assign(id=[str(i) for i in range(len(fr))]),
                                             np.full((len(fr), 3), 1 / 3), list(CLASSES)), 10, 0, True)
    assert resample_terms_option("yes") is True and resample_terms_option("no") is False
    with pytest.raises(MetricError, match="resample_terms"):
        resample_terms_option("sometimes")


def test_template_draws_and_one_term_groups_do_not_change():
    """Term draws come from a child of the seed's seed sequence: the template
    weights, and every replicate of an attribute whose groups have one term
    each, are those of the template-only bootstrap, bit for bit."""
    data = ragged_table(seed=3)
    k1, v1 = bootstrap_replicates(data, B=30, seed=5, max_tuples=4, resample_terms=True)
    k0, v0 = bootstrap_replicates(data, B=30, seed=5, max_tuples=4, resample_terms=False)
    two, one = _as_dict(k1, v1), _as_dict(k0, v0)
    assert set(two) == set(one)
    assert all(np.array_equal(two[k], one[k], equal_nan=True) for k in one if k[0] == "one")
    assert sum(not np.array_equal(two[k], one[k], equal_nan=True) for k in one if k[0] == "attr") > 50
    bs = bootstrap(data, B=30, seed=5, max_tuples=4)
    resampled = bs.basis.groupby("attribute")["terms_resampled"].agg(["all", "any"])
    assert resampled.loc["attr", "all"] and not resampled.loc["one", "any"]


# ------------------------------------------------------------ the closed form
def _two_by_two():
    """Templates t0, t1; groups a (a1, a2) and b (b1, b2), one example per
    template and term, every example gold 'pos' (two classes)."""
    p = {("t0", "a1"): .9, ("t0", "a2"): .6, ("t0", "b1"): .3, ("t0", "b2"): .2,
         ("t1", "a1"): .8, ("t1", "a2"): .4, ("t1", "b1"): .85, ("t1", "b2"): .1}
    rows = [dict(id=f"{t}{w}", template=t, attribute="A", group=w[0], term=w, text="x", label="pos") for t, w in p]
    P = np.array([[1 - v, v] for v in p.values()])
    return scored_from_arrays(pd.DataFrame(rows), P, ["neg", "pos"])


def test_hand_checked_two_templates_by_two_terms():
    data = _two_by_two()
    cf = counterfactual_view(data.frame, max_tuples=None)
    prep = bsm.prepare_attribute(data, cf["A"], "A", None, "balanced", attribute_terms(data.frame, "A"))
    # resample 1: t0 once, t1 twice; a1 twice, a2 never; resample 2: each template once, b1 twice
    W = np.array([[1, 2], [1, 1]])
    T = np.array([[2, 0, 1, 1], [1, 1, 2, 0]])
    specs = [get_metric(m) for m in ("ParityGap", "CFGap", "AvgScoreDiff", "AvgIF", "PosAEG")]
    vals, _ = bsm.fast_attribute(prep, specs, W, T)
    # positive rate (pred 'pos' where p > 1/2); item weights W[template] * T[term]:
    # resample 1: a = {a1: .9 (2), .8 (4)} -> 1; b = {.3 (1), .2 (1), .85 (2), .1 (2)} -> 2/6
    assert vals[("ParityGap", "pos", "a|b")][0] == pytest.approx(2 / 3)
    # resample 2: a = {.9, .6, .8, .4} -> 3/4; b = {.3 (2), .85 (2)} -> 1/2
    assert vals[("ParityGap", "pos", "a|b")][1] == pytest.approx(1 / 4)
    # CFGap: tuples (a, b) of a template weigh W * T_a * T_b
    cfg = (2 * .6 + 2 * .7 + 4 * .05 + 4 * .7) / 12
    assert vals[("CFGap", "pos", "a|b")][0] == pytest.approx(cfg)
    cfg2 = (2 * .6 + 2 * .3 + 2 * .05 + 2 * .45) / 8
    assert vals[("CFGap", "pos", "a|b")][1] == pytest.approx(cfg2)
    # AvgScoreDiff: T-weighted group means in each template, then W-weighted over templates
    asd = (1 * abs(.9 - .25) + 2 * abs(.8 - .475)) / 3
    assert vals[("AvgScoreDiff", "pos", "a|b")][0] == pytest.approx(asd)
    assert vals[("AvgScoreDiff", "pos", "a|b")][1] == pytest.approx((abs(.75 - .3) + abs(.6 - .85)) / 2)
    # AvgIF: W1 between the T-weighted sets of a template
    w1 = (1 * (.6 + .7) / 2 + 2 * (.05 + .7) / 2) / 3
    assert vals[("AvgIF", "pos", "a|b")][0] == pytest.approx(w1)
    assert vals[("AvgIF", "pos", "a|b")][1] == pytest.approx(((.6 + .3) / 2 + (.05 + .45) / 2) / 2)
    # PosAEG(a), resample 1: pairs between the two copies of t1 left out; of the 28 pairs (a over its
    # rest), 24 have a above b (only t1's a1 under t1's b1, within a copy)
    assert vals[("PosAEG", "pos", "a")][0] == pytest.approx(24 / 28 - 0.5)
    # the generic path (copies of the rows, then the engine) agrees on every metric
    gen, _ = bsm.generic_attribute(prep, list(NAMED_METRICS), W, T)
    for key, v in vals.items():
        assert _same(v, gen[key]), key


@pytest.mark.parametrize("seed", [0, 1])
def test_fast_path_equals_generic_path_on_a_ragged_design(seed):
    data = ragged_table(seed=seed)
    kf, vf = bootstrap_replicates(data, B=20, seed=seed, max_tuples=4, method="fast")
    kg, vg = bootstrap_replicates(data, B=20, seed=seed, max_tuples=4, method="generic")
    fast, generic = _as_dict(kf, vf), _as_dict(kg, vg)
    assert set(fast) <= set(generic)
    assert all(np.isnan(generic[k]).all() for k in set(generic) - set(fast))
    from bias_suite.metrics.engine import metric_input_kind

    classifier = [m for m in NAMED_METRICS if metric_input_kind(data, m)[0] is not None]  # a classifier's metrics
    assert {k[1] for k in fast if k[0] == "attr"} == {m.name for m in classifier if not m.two_groups}
    bad = [k for k in fast if not _same(fast[k], generic[k])]
    assert not bad, bad[:5]


def forms_table(n_templates=10, seed=0):
    """Attribute "attr": groups a (3 terms) and b (2 terms) and c (2 terms),
    each term in two parallel forms (singular 'a0', plural 'a0s'); a
    template uses one form of every term, once (the first template of each
    form twice), so each form of a group's terms is a block of its own."""
    rng = np.random.default_rng(seed)
    rows, P = [], []
    groups = {"a": ["a0", "a1", "a2"], "b": ["b0", "b1"], "c": ["c0", "c1"]}
    for j in range(n_templates):
        gold, form = CLASSES[rng.integers(3)], ("", "s")[j % 2]
        for gi, (g, ts) in enumerate(groups.items()):
            for t in ts:
                for _ in range(1 + (j < 2)):
                    rows.append(dict(id=f"r{len(rows)}", template=f"t{j}", attribute="attr", group=g, term=t + form,
                                     text="x", label=gold))
                    logit = rng.normal(size=3) + 0.8 * (np.array(CLASSES) == gold) + 0.3 * gi
                    P.append(np.exp(logit) / np.exp(logit).sum())
    return scored_from_arrays(pd.DataFrame(rows), np.array(P), list(CLASSES))


def test_per_template_w1_is_linear_in_the_term_weights_with_parallel_forms(monkeypatch):
    """With one form of every term in a template, a group's weight there is
    the same in every resample (each form's terms are a block whose weights
    sum to its size), so per-template W1 takes the linear plan, never the
    cumulative sums; its values are the generic path's."""
    import bias_suite.stats.bootstrap.term_kernels as kernels

    data = forms_table()
    blocks = attribute_terms(data.frame, "attr")
    assert len(set(blocks.block)) == 6  # 3 groups x 2 forms
    metrics = ["AvgIF", "AvgIF-TC", "CFGap", "AvgScoreDiff"]
    kg, vg = bootstrap_replicates(data, metrics=metrics, B=25, seed=2, resample_terms=True, method="generic")

    def no_sums(*args, **kwargs):
        raise AssertionError("per-template W1 by cumulative sums")

    monkeypatch.setattr(kernels, "_w1_general", no_sums)
    kf, vf = bootstrap_replicates(data, metrics=metrics, B=25, seed=2, resample_terms=True, method="fast")
    fast, generic = _as_dict(kf, vf), _as_dict(kg, vg)
    assert {k[1] for k in fast} == set(metrics)
    assert set(fast) == set(generic)
    bad = [k for k in fast if not _same(fast[k], generic[k])]
    assert not bad, bad[:5]
    pairs = [k for k in fast if k[1] == "AvgIF" and "|" in str(k[3])]
    assert len(pairs) == 3 * 3 and all(np.isfinite(fast[k]).all() for k in pairs)  # 3 pairs x 3 classes


def test_aeg_pairs_inside_templates_agree_with_evaluating_every_resample():
    data = ragged_table(seed=2, n_templates=15)
    metrics = ["PosAEG", "NegAEG", bsm.MetricSpec("AEG-PCM", "PCM", "group", "prob_pos", "AEG", "pairs"),
               bsm.MetricSpec("AEG-all", "BCM", "group", "prob", "AEG", "groups", "all")]
    k1, v1 = bootstrap_replicates(data, metrics=metrics, B=20, seed=1, method="fast")
    kg, vg = bootstrap_replicates(data, metrics=metrics, B=20, seed=1, method="generic")
    a, g = _as_dict(k1, v1), _as_dict(kg, vg)
    assert {k[1] for k in a} == {"PosAEG", "NegAEG", "AEG-PCM", "AEG-all"}
    assert all(_same(a[k], g[k]) for k in a)


@pytest.mark.parametrize("keep, weighting", [(1.0, "balanced"), (0.75, "pooled")], ids=["full", "ragged-pooled"])
def test_evaluating_every_resample_again_agrees_with_the_closed_form(keep, weighting):
    """The path of the NER family (rows of template j and term t repeated
    W x T times, every resample evaluated again) on classification data:
    with every tuple kept it gives the closed form's replicates (AEG aside,
    whose copy pairs that path counts). With balanced weighting on a design
    where templates hold some of a group's terms, that path weighs each
    resampled template afresh and the closed form keeps the observed
    weights, so the check there is on pooled weighting."""
    data = ragged_table(seed=4, n_templates=8, dup=0.0, keep=keep)
    metrics = [m.name for m in NAMED_METRICS if "AEG" not in m.name]
    res = evaluate(data, metrics=metrics, max_tuples=None, weighting=weighting)
    slow = resampling_bootstrap(data, res, metrics=metrics, B=6, seed=2, max_tuples=None, keep_replicates=True,
                                n_jobs=1, weighting=weighting, resample_terms=True)
    fast = bootstrap(data, res, metrics=metrics, B=6, seed=2, max_tuples=None, keep_replicates=True,
                     weighting=weighting, resample_terms=True)
    s, f = _as_dict(slow.keys, slow.replicates), _as_dict(fast.keys, fast.replicates)
    common = set(s) & set(f)
    assert len(common) > 200 and {k[1] for k in common} >= {"CFGap", "AvgIF", "FNED", "BPSN", "PertSD"}
    assert not [k for k in common if not _same(s[k], f[k])]
    assert slow.basis["terms_resampled"].any()


def test_the_tuple_redraw_is_an_option():
    """``tuples="redraw"`` takes the path that evaluates every resample
    again and draws its tuples again (the NER family's), on any data;
    "observed" is the closed form's; "auto" the family's own."""
    data = ragged_table(seed=4, n_templates=8, dup=0.0, keep=1.0)
    metrics = ["CFGap", "FNED"]
    res = evaluate(data, metrics=metrics)
    slow = resampling_bootstrap(data, res, metrics=metrics, B=6, seed=2, keep_replicates=True, n_jobs=1)
    redraw = bootstrap(data, res, metrics=metrics, B=6, seed=2, keep_replicates=True, n_jobs=1, tuples="redraw")
    assert np.array_equal(slow.replicates, redraw.replicates, equal_nan=True)
    auto = bootstrap(data, res, metrics=metrics, B=6, seed=2, keep_replicates=True)
    observed = bootstrap(data, res, metrics=metrics, B=6, seed=2, keep_replicates=True, tuples="observed")
    assert np.array_equal(auto.replicates, observed.replicates, equal_nan=True)
    with pytest.raises(MetricError, match="tuples must be"):
        bootstrap(data, res, metrics=metrics, B=6, tuples="again")


# -------------------------------------------------------------- what it covers
def _term_effect_table(seed, n_templates=30, n_terms=8, term_sd=0.08):
    """Two groups of ``n_terms`` terms each, every template with every term;
    P(pos) = 0.5 + template effect + term effect + noise, the term effects
    drawn from one population for both groups: no group effect, a real term
    effect."""
    rng = np.random.default_rng(seed)
    u = rng.normal(0, 0.08, n_templates)
    v = rng.normal(0, term_sd, 2 * n_terms)
    rows, P = [], []
    for j in range(n_templates):
        for t in range(2 * n_terms):
            p = float(np.clip(0.5 + u[j] + v[t] + rng.normal(0, 0.02), 0.02, 0.98))
            rows.append(dict(id=f"{j}-{t}", template=f"t{j}", attribute="A", group="g0" if t < n_terms else "g1",
                             term=f"w{t}", text="x", label="pos"))
            P.append([1 - p, p])
    return scored_from_arrays(pd.DataFrame(rows), np.array(P), ["neg", "pos"])


def test_intervals_cover_a_term_effect_only_when_terms_are_resampled():
    """The true gap between the groups is 0 (their terms come from one
    population); the estimate misses it by the mean term effects of the
    terms at hand. Template-only intervals hold the template noise alone
    and miss 0 most of the time; two-way intervals cover it."""
    hit = {False: 0, "auto": 0}
    n = 30
    for seed in range(n):
        data = _term_effect_table(seed)
        res = evaluate(data, metrics=["AvgScoreDiff"])
        for mode in hit:
            b = bootstrap(data, res, metrics=["AvgScoreDiff"], B=200, seed=seed, resample_terms=mode).basis
            row = b[(b["class"] == "pos") & b["group"].notna()].iloc[0]
            hit[mode] += row["basis_low"] <= 0.0 <= row["basis_high"]
    assert hit[False] <= 0.4 * n, hit
    assert hit["auto"] >= 0.8 * n, hit


def test_auto_resamples_the_terms_a_model_tells_apart():
    from bias_suite.stats.bootstrap.terms import TERM_TEST_LEVEL, common_selection, selected_blocks, term_test

    # a real term effect (sd 0.08 against noise 0.02): both groups' blocks are selected
    data = _term_effect_table(0)
    p = term_test(data, "A")
    assert p.shape == (2,) and (p < 1e-6).all()
    assert selected_blocks(data, "auto") == {"A": (0, 1)}
    # no term effect: the F test holds its level (the share of p below 0.2 is about 0.2)
    ps = np.concatenate([term_test(_term_effect_table(seed, term_sd=0.0), "A") for seed in range(60)])
    assert 0.08 <= (ps < TERM_TEST_LEVEL).mean() <= 0.35, (ps < TERM_TEST_LEVEL).mean()
    # identical scores for every term of a template: no evidence of a term effect at all
    same = data.frame.assign(probs=[{"neg": 0.5, "pos": 0.5}] * len(data.frame))
    flat = scored_from_arrays(same.drop(columns=["probs"]), np.full((len(same), 2), 0.5), ["neg", "pos"])
    assert (term_test(flat, "A") == 1.0).all() and selected_blocks(flat, "auto") == {"A": ()}
    # yes and no need no test; several models share the blocks any of them selects
    assert selected_blocks(flat, True) == {"A": (0, 1)} and selected_blocks(data, False) == {"A": ()}
    assert common_selection([flat, data]) == {"A": (0, 1)}
    from bias_suite.stats.bootstrap.terms import resampled_groups

    assert resampled_groups(data) == {"A": ["g0", "g1"]} and resampled_groups(flat) == {"A": []}
    # a selection of none leaves the template-only path: no term weights
    out = bootstrap(flat, evaluate(flat, metrics=["AvgScoreDiff"]), metrics=["AvgScoreDiff"], B=20, seed=0)
    assert not out.basis["terms_resampled"].any()


def test_the_term_draws_do_not_depend_on_which_blocks_are_selected():
    data = _term_effect_table(1)
    one = draw_term_weights(data, 30, 5, {"A": (1,)})["A"][1]
    both = draw_term_weights(data, 30, 5, True)["A"][1]
    at = attribute_terms(data.frame, "A")
    assert (one[:, at.block == 0] == 1).all()
    assert np.array_equal(one[:, at.block == 1], both[:, at.block == 1])


def test_aeg_values_lie_in_their_intervals_with_terms_resampled():
    from test_bootstrap import small_table

    rows = []
    for seed in range(3):
        data = small_table(n_templates=30, terms=3, seed=seed, shift=0.2)
        res = evaluate(data, metrics=["PosAEG", "NegAEG"])
        bs = bootstrap(data, res, metrics=["PosAEG", "NegAEG"], B=200, seed=seed, resample_terms=True)
        assert bs.basis["terms_resampled"].all()
        rows.append(bs.results[bs.results["ci_low"].notna()])
    out = pd.concat(rows)
    assert len(out) > 60
    assert ((out["ci_low"] <= out["value"] + 1e-12) & (out["value"] <= out["ci_high"] + 1e-12)).all()


# ------------------------------------------------------------------ the AEG across templates (verdict basis)
def test_aeg_basis_leaves_out_every_pair_inside_a_template():
    """Three templates, one term per group: PosAEG(a) over all nine pairs
    is 5/9 - 1/2; across templates only the six pairs of different
    templates count, four with a above b: 4/6 - 1/2."""
    cells = [("t0", "a", .9), ("t0", "b", .3), ("t1", "a", .6), ("t1", "b", .8), ("t2", "a", .2), ("t2", "b", .25)]
    rows = [dict(id=f"r{i}", template=t, attribute="A", group=g, term=g, text="x", label="pos")
            for i, (t, g, _) in enumerate(cells)]
    p = np.array([c[2] for c in cells])
    data = scored_from_arrays(pd.DataFrame(rows), np.column_stack([1 - p, p]), ["neg", "pos"])
    res = evaluate(data, metrics=["PosAEG"])
    out = bootstrap(data, res, metrics=["PosAEG"], B=30, seed=0)
    row = out.basis[(out.basis["group"] == "a") & (out.basis["class"] == "pos")].iloc[0]
    value = res[(res["group"] == "a") & (res["class"] == "pos")]["value"].iat[0]
    assert value == pytest.approx(5 / 9 - 0.5)
    assert row["basis_value"] == pytest.approx(4 / 6 - 0.5)
    assert row["basis"].startswith("AEG across templates")
    assert row["basis_low"] <= row["basis_value"] <= row["basis_high"]


@pytest.mark.parametrize("terms", [False, True])
def test_aeg_basis_of_the_fast_path_equals_the_generic_path(terms):
    data = ragged_table(seed=3, n_templates=14)
    metrics = ["PosAEG", "NegAEG", bsm.MetricSpec("AEG-PCM", "PCM", "group", "prob_pos", "AEG", "pairs"),
               bsm.MetricSpec("AEG-all", "BCM", "group", "prob", "AEG", "groups", "all")]
    res = evaluate(data, metrics=metrics)
    got = {}
    for method in ("fast", "generic"):
        out = bootstrap(data, res, metrics=metrics, B=25, seed=4, method=method, keep_replicates=True,
                        resample_terms=terms)
        keys = [tuple(k) for k in out.keys.itertuples(index=False)]
        got[method] = ({k: v for k, v in zip(keys, out.basis_replicates)},
                       {(r.attribute, r.metric, r[2], r.group): r.basis_value for r in out.basis.itertuples(index=False)})
    reps_f, obs_f = got["fast"]
    reps_g, obs_g = got["generic"]
    aeg = [k for k in reps_f if k[3] is not None and np.isfinite(reps_f[k]).any()]
    assert len(aeg) >= 20
    assert sum(np.isfinite(obs_f[k]) for k in aeg if obs_f[k] is not None) >= 20
    for k in aeg:
        assert _same(reps_f[k], reps_g[k]), k
        assert _same(np.array([obs_f[k]], float), np.array([obs_g[k]], float)), k
