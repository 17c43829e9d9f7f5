"""Group-vs-background findings attributed to the group that causes them
(bias_suite.stats.attribution), on data whose truth is planted."""
import numpy as np
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
