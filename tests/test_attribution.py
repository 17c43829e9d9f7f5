"""Group-vs-background findings attributed to the group that causes them
(bias_suite.stats.attribution), on data whose truth is planted."""
import numpy as np
import pandas as pd
import pytest


def _one_group_missed(n_templates=60, seed=0):
    """4 groups x 2 terms, gold 'pos' or 'neg' by template. The model misses 'pos' for g0 in most
    templates and treats g1, g2, g3 identically (the same probabilities, term for term)."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_templates):
        label = "pos" if t % 2 == 0 else "neg"
        base = rng.uniform(0.6, 0.95) if label == "pos" else rng.uniform(0.05, 0.4)
        hard = rng.random() < 0.15  # a template every group finds hard
        for g in range(4):
            for k in range(2):
                p = base
                if label == "pos" and (hard or (g == 0 and rng.random() < 0.8)):
                    p = 0.3
                rows.append(dict(id=f"{t}-{g}-{k}", template=f"t{t}", attribute="x", group=f"g{g}", term=f"g{g}{k}",
                                 text=f"{t} {g} {k}", label=label, probs={"neg": 1 - p, "pos": p}))
    return rows


def test_spill_over_is_attributed_to_its_source():
    from bias_suite.evaluation import evaluate

    res = evaluate(_one_group_missed(), metrics=["FNED", "FNR-Ratio"])
    own = res[(res["metric"] == "FNED") & (res["class"] == "pos") & (res["group"] == "g0")].iloc[0]
    assert own["verdict"] == "material" and own["source"] is None
    others = res[(res["metric"] == "FNED") & (res["class"] == "pos") & res["group"].isin(["g1", "g2", "g3"])]
    # the others differ from a background that holds g0 ...
    assert (others["verdict"] == "material").all(), others[["group", "value", "verdict", "reason"]]
    # ... but not from each other: the effect is g0's
    assert (others["source"] == "g0").all()
    assert others["reason"].str.contains("shifted by 'g0'").all()


def test_two_groups_get_no_source():
    from bias_suite.evaluation import evaluate

    rows = [r for r in _one_group_missed() if r["group"] in ("g0", "g1")]
    res = evaluate(rows, metrics=["FNED"])
    judged = res[res["verdict"].isin(["material", "small"])]
    # two groups: each is the other's whole background, so whose effect it is cannot be told apart
    assert len(judged) and judged["source"].isna().all()


def _groups_missed(missed, n_templates=60, seed=0, n_groups=5, terms=None, tied=False):
    """``n_groups`` groups, gold 'pos' or 'neg' by template. The model misses 'pos' for the ``missed``
    groups in most templates and treats the others identically. ``terms``: {group: terms} (default 2).
    ``tied``: every template gets the same probabilities (a model that scores no word of the templates),
    so that the scores tie everywhere but for the missed groups."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_templates):
        label = "pos" if t % 2 == 0 else "neg"
        base = (0.8 if label == "pos" else 0.2) if tied else (
            rng.uniform(0.6, 0.95) if label == "pos" else rng.uniform(0.05, 0.4))
        hard = not tied and rng.random() < 0.15
        for g in range(n_groups):
            name = f"g{g}"
            for k in range((terms or {}).get(name, 2)):
                p = base
                if label == "pos" and (hard or (name in missed and (tied or rng.random() < 0.8))):
                    p = 0.3
                rows.append(dict(id=f"{t}-{g}-{k}", template=f"t{t}", attribute="x", group=name, term=f"{name}{k}",
                                 text=f"{t} {g} {k}", label=label, probs={"neg": 1 - p, "pos": p}))
    return rows


def _group_rows(res, metric, cls="pos"):
    return res[(res["metric"] == metric) & (res["class"] == cls) & res["group"].map(lambda g: isinstance(g, str))]


def test_two_groups_that_shift_the_background_together_are_both_named():
    from bias_suite.metrics.engine import evaluate as values_of
    from bias_suite.evaluation import evaluate

    rows = _groups_missed(("g0", "g1"))
    res = evaluate(rows, metrics=["FNED", "BNSP"])
    for metric in ("FNED", "BNSP"):
        r = _group_rows(res, metric).set_index("group")
        assert (r.loc[["g0", "g1"], "verdict"] == "material").all() and r.loc[["g0", "g1"], "source"].isna().all()
        others = r.loc[["g2", "g3", "g4"]]
        assert (others["verdict"] == "material").all(), others[["value", "verdict", "reason"]]
        assert (others["source"] == "g0, g1").all(), others[["source", "reason"]]
        assert others["reason"].str.contains("shifted by 'g0', 'g1': without them").all()
    # one group at a time is not enough: without g0 alone, g2's FNR is still more than tau from all examples'
    fned = values_of([r for r in rows if r["group"] != "g0"], metrics=["FNED"])
    assert _group_rows(fned, "FNED").set_index("group").loc["g2", "value"] >= 0.05 * 1.5


def test_a_cause_whose_own_rows_are_inconclusive_is_named():
    from bias_suite.evaluation import evaluate

    # g0 has one term: its PosAEG rows rest on fewer than 20 examples and are inconclusive, while every other
    # group's row against a background that holds g0 is material
    res = evaluate(_groups_missed(("g0",), n_templates=30, terms={"g0": 1}, n_groups=4, seed=1),
                   metrics=["PosAEG"])
    r = _group_rows(res, "PosAEG").set_index("group")
    assert r.loc["g0", "verdict"] == "inconclusive" and "fewer than 20" in r.loc["g0", "reason"]
    others = r.loc[["g1", "g2", "g3"]]
    assert (others["verdict"] == "material").all(), others[["value", "verdict", "reason"]]
    assert (others["source"] == "g0").all(), others[["source", "reason"]]


def test_values_without_groups_are_the_engines_on_the_data_without_them():
    from bias_suite.families import as_scored
    from bias_suite.metrics.engine import metric_values
    from bias_suite.stats.bernstein import bernstein_rows
    from bias_suite.stats.causes import Cell, Values
    from bias_suite.suites.views import counterfactual_view

    # unequal terms per group (template-balance weights), two groups left out
    data = as_scored(_groups_missed(("g0",), n_templates=20, terms={"g0": 1, "g3": 3}, seed=3))
    groups = ["g0", "g1", "g2", "g3", "g4"]
    values = Values(data, "x", groups, counterfactual_view(data.frame)["x"], weighting="balanced")
    metrics = ["PosAEG", "FNED", "FPR-Ratio", "BNSP", "AvgGF", "Bernstein-EqualOpportunity"]
    left_out = ("g0", "g2")
    values.ensure(left_out, {(m, c) for m in metrics for c in ("pos", "neg")})
    keep = data.take(np.flatnonzero(~data.frame["group"].isin(left_out).to_numpy()))
    expect = metric_values(keep, metrics=metrics[:-1], group_order_override={"x": ["g1", "g3", "g4"]})
    expect = pd.concat([expect, bernstein_rows(keep, presets=["EqualOpportunity"])])
    checked = 0
    for m, c, g, v in zip(expect["metric"], expect["class"], expect["group"], expect["value"]):
        if m in metrics and isinstance(g, str) and "|" not in g:
            got = values.value(Cell(m, c, "difference", 0.05), left_out, g)
            assert (got is None and pd.isna(v)) or got == pytest.approx(v, abs=1e-12), (m, c, g, got, v)
            checked += 1
    assert checked == len(metrics) * 2 * 3
    # the overall AUC of the AUC metrics' no-bias value, without the groups too
    from bias_suite.stats.causes import overall_aucs

    assert values.aucs[left_out]["pos"] == pytest.approx(overall_aucs(keep, "x", "balanced", None)["pos"])


def test_untied_support_counts_the_examples_that_break_ties():
    from bias_suite.families import as_scored
    from bias_suite.metrics.catalog import get_metric
    from bias_suite.metrics.engine import attribute_data
    from bias_suite.stats.ties import untied_support
    from bias_suite.suites.views import counterfactual_view

    # gold 'pos' everywhere; 'a' scores 0.5 in both templates, 'b' 0.5, 'c' 0.2 in t0 and 0.5 in t1
    p = {("a", 0): 0.5, ("a", 1): 0.5, ("b", 0): 0.5, ("b", 1): 0.5, ("c", 0): 0.2, ("c", 1): 0.5}
    rows = [dict(id=f"{g}{t}", template=f"t{t}", attribute="x", group=g, term=g, text=f"{g} {t}", label="pos",
                 probs={"neg": 1 - v, "pos": v}) for (g, t), v in p.items()]
    data = as_scored(rows)
    cf = counterfactual_view(data.frame)
    ad = attribute_data(data, "x", cf["x"], ["a", "b", "c"])
    tpl = np.array([0, 1, 0, 1, 0, 1])
    aeg = get_metric("PosAEG")  # each group against the rest
    # 'a' (0.5, 0.5) against b and c (0.5, 0.5, 0.2, 0.5): both of a's examples differ from c's 0.2; on the
    # rest's side only c's 0.2 differs from a's scores: 1 example in 1 template, of 'c' (2 examples there)
    assert untied_support(aeg, ad, tpl, "pos", "a") == [(2, 2, ["a"], 2), (1, 1, ["c"], 2)]
    # 'c' (0.2, 0.5) against a and b (all 0.5): c's 0.2 alone on its side; every one of the rest's examples
    # differs from c's 0.2
    assert untied_support(aeg, ad, tpl, "pos", "c") == [(1, 1, ["c"], 2), (4, 2, ["a", "b"], 4)]
    # the negative class has no gold examples: nothing on either side
    assert untied_support(aeg, ad, tpl, "neg", "a") == [(0, 0, [], 0), (0, 0, [], 0)]


def test_a_zero_width_interval_from_ties_is_no_claim_and_a_constant_shift_is():
    from bias_suite.evaluation import evaluate

    # every score ties but g0's: the others' PosAEG is the same in every resample (exactly g0's share of their
    # background over 2), which rests on g0's examples alone
    few = evaluate(_groups_missed(("g0",), n_templates=30, terms={"g0": 1}, n_groups=4, tied=True),
                   metrics=["PosAEG"])
    r = _group_rows(few, "PosAEG").set_index("group")
    others = r.loc[["g1", "g2", "g3"]]
    assert np.allclose(others["value"], 0.5 / 3) and np.allclose(others["ci_low"], others["ci_high"], rtol=0, atol=1e-12)
    # on their background's side only g0's 15 gold-'pos' examples break the ties: too few for a claim about g0
    assert (others["verdict"] == "inconclusive").all(), others[["verdict", "reason"]]
    assert others["reason"].str.contains("on the background's side only 15 examples in 15 templates differ from "
                                         "the other side's, of 'g0' (15 examples)", regex=False).all()
    # the same shift on g0's two terms in 30 gold-'pos' templates: 60 examples break the ties, the
    # no-width intervals are evidence (a shift in every template), and the others' rows are g0's spill-overs
    many = evaluate(_groups_missed(("g0",), n_templates=60, n_groups=4, tied=True), metrics=["PosAEG"])
    r = _group_rows(many, "PosAEG").set_index("group")
    assert r.loc["g0", "verdict"] == "material" and r.loc["g0", "value"] == -0.5
    others = r.loc[["g1", "g2", "g3"]]
    assert (others["verdict"] == "material").all() and (others["source"] == "g0").all(), others[["verdict", "reason"]]


@pytest.fixture(scope="module")
def keyword_religion():
    """A model that scores general sentiment words and, of all identity terms, only 'Muslim(s)', on the
    bundled religion suite (where 'muslim' has one term per slot: many of its rows rest on fewer than 20
    examples)."""
    from _tiny_models import lexicon_model
    from test_truth_known import SENTIMENT

    from bias_suite.models.base import CallablePredictor
    from bias_suite.pipeline import run

    model = lexicon_model({**SENTIMENT, "muslim": -1.5, "muslims": -1.5})
    return run(["templates/sentiment_religion.yaml"], CallablePredictor(model, ["negative", "neutral", "positive"]),
               None, progress=False, cache=False).results


def test_a_keyword_model_blames_no_bystander(keyword_religion):
    r = keyword_religion
    claims = r[r["verdict"].isin(["material", "small"]) & r["group"].map(lambda g: isinstance(g, str) and "|" not in g)]
    bystanders = claims[claims["group"] != "muslim"]
    assert len(bystanders) and (bystanders["source"] == "muslim").all(), \
        bystanders[["metric", "class", "group", "verdict", "source", "reason"]]
    assert set(r["source"].dropna()) == {"muslim"}
    # the cause's own PosAEG rows, whatever their verdicts, are its own (no source); the others' claims are
    # still its spill-overs
    aeg = r[(r["metric"] == "PosAEG") & (r["group"] == "muslim")]
    assert len(aeg) and aeg["source"].isna().all()
    other = claims[(claims["metric"] == "PosAEG") & (claims["group"] != "muslim")]
    assert len(other) and (other["source"] == "muslim").all()
