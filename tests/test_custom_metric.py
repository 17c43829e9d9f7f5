"""A user-defined metric in a few lines (the README's example), hand-computed."""
import math

import pandas as pd
import pytest

from bias_suite.exceptions import MetricError
from bias_suite.metrics import MetricSpec, compute as evaluate, get_metric, rate_score, register, unregister


def table():
    # group a: 4 gold-pos rows with p(pos) .9 .8 .3 .2 -> TP 2, FN 2; 2 gold-neg rows .7 .4 -> FP 1, TN 1
    # group b: 4 gold-pos rows with p(pos) .9 .7 .6 .1 -> TP 3, FN 1; 2 gold-neg rows .2 .3 -> FP 0, TN 2
    spec = {"a": ([0.9, 0.8, 0.3, 0.2], [0.7, 0.4]), "b": ([0.9, 0.7, 0.6, 0.1], [0.2, 0.3])}
    rows = []
    for g, (pos, neg) in spec.items():
        for i, p in enumerate(pos + neg):
            rows.append({"id": f"{g}{i}", "template": f"t{i}", "attribute": "x", "group": g, "term": g, "text": "",
                         "label": "pos" if i < len(pos) else "neg", "probs": {"neg": 1 - p, "pos": p}})
    return pd.DataFrame(rows)


FNR_SPREAD = MetricSpec("FNR-Spread", generalized="MCM", view="group", score="FNR", comparison="std")
FDR = rate_score("FDR", lambda s: (s["fp"] / (s["tp"] + s["fp"]), (s["tp"] + s["fp"]) == 0, "FDR undefined: no predicted positives"))
FDR_RATIO = MetricSpec("FDR-Ratio", generalized="VBCM", score=FDR, comparison="ratio_to_background", background="rest")


def val(res, metric, cls, group=None):
    sub = res[(res.metric == metric) & (res["class"] == cls)]
    sub = sub[sub.group.isna()] if group is None else sub[sub.group == group]
    assert len(sub) == 1
    return sub.iloc[0]


def test_user_metrics_hand_computed():
    res = evaluate(table(), metrics=[FNR_SPREAD, FDR_RATIO])
    # FNR(pos): a = 2/4, b = 1/4 -> population std = 0.125
    assert val(res, "FNR-Spread", "pos")["value"] == pytest.approx(0.125)
    # FNR(neg) as a class: gold-neg rows a: p(neg) .3 .6 -> 1 FN of 2; b: .8 .7 -> 0 FN of 2 -> std(0.5, 0) = 0.25
    assert val(res, "FNR-Spread", "neg")["value"] == pytest.approx(0.25)
    # FDR(pos): a = 1/(2+1) = 1/3, b = 0/3 = 0; ratio group / rest
    r = val(res, "FDR-Ratio", "pos", "a")
    assert r["value"] is None or math.isnan(r["value"])
    assert "zero denominator" in r["note"]
    assert val(res, "FDR-Ratio", "pos", "b")["value"] == pytest.approx(0.0)
    assert set(res.family) == {"MCM", "VBCM"}


def test_register_and_use_by_name():
    spec = MetricSpec("FNR-Range-test", generalized="MCM", score="FNR", comparison="range")
    register(spec)
    try:
        assert get_metric("fnr-range-test") is spec
        res = evaluate(table(), metrics=["FNR-Range-test"])
        assert val(res, "FNR-Range-test", "pos")["value"] == pytest.approx(0.25)
        with pytest.raises(MetricError, match="already registered"):
            register(spec)
        # one registry entry puts it in the default set
        assert "FNR-Range-test" in set(evaluate(table())["metric"])
    finally:
        unregister("FNR-Range-test")
    assert "FNR-Range-test" not in set(evaluate(table())["metric"])
    with pytest.raises(MetricError, match="cannot be removed"):
        unregister("FNED")


def test_bad_specs_are_rejected():
    with pytest.raises(MetricError, match="needs a background"):
        MetricSpec("X", generalized="BCM", score="FNR", comparison="abs")
    with pytest.raises(MetricError, match="unknown comparison"):
        MetricSpec("Y", generalized="PCM", score="FNR", comparison="cosine")
    with pytest.raises(MetricError, match="unknown metric"):
        evaluate(table(), metrics=["NoSuchMetric"])
