"""Hand-computed checks of every named classification metric of METRICS.md.

Every expected value below was computed by hand (arithmetic in the comments,
exact fractions where possible).  Each case is checked twice:

* test_reference_*  -> tests/reference_metrics.py (independent reference)
* test_engine_*     -> bias_suite.metrics.compute (the engine)

Run only the reference part with:  pytest tests/test_metrics_hand.py -k "not engine"

Conventions used in the comments: p = f(x, "pos") for binary cases (then
f(x, "neg") = 1 - p); TP/FN/FP/TN are one-vs-rest for the class named.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from reference_metrics import reference_evaluate

NULL = None  # expected "value is null"


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def _isnull(v) -> bool:
    if v is None:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def get(res: pd.DataFrame, metric: str, cls: str, group=None, attribute=None) -> dict:
    """Select exactly one row of a tidy result table.

    group None selects the accumulated row (group null: None or NaN both
    count); attribute None means "do not filter on attribute".
    Returns the row as a dict with `value`/`n`/`note` normalised (null -> None).
    """
    sel = (res["metric"] == metric) & (res["class"] == cls)
    if group is None:
        sel &= res["group"].map(_isnull)
    else:
        sel &= res["group"] == group
    if attribute is not None:
        sel &= res["attribute"] == attribute
    rows = res[sel]
    assert len(rows) == 1, (
        f"expected exactly one row for {metric=} {cls=} {group=} {attribute=}, got {len(rows)}:\n"
        f"{rows.to_string()}"
    )
    row = rows.iloc[0].to_dict()
    for k in ("value", "n", "note"):
        if k in row and _isnull(row[k]):
            row[k] = None
    return row


def engine_evaluate(df, **kw):
    from bias_suite.metrics import compute as evaluate  # imported lazily: the engine may not exist yet

    return evaluate(df, **{"weighting": "pooled", **kw})  # the published, pooled definitions


def make_df(rows, *, with_pred=False):
    """rows: (attribute, template, group, term, label, probs[, pred])."""
    recs = []
    for i, r in enumerate(rows):
        attribute, template, group, term, label, probs = r[:6]
        rec = {
            "id": f"ex{i}",
            "template": template,
            "attribute": attribute,
            "group": group,
            "term": term,
            "text": f"{template} with {term}",
            "label": label,
            "probs": dict(probs),
        }
        if with_pred:
            rec["pred"] = r[6] if len(r) > 6 else None
        recs.append(rec)
    return pd.DataFrame(recs)


def bin_probs(p):
    """binary probs with class order (neg, pos); p = f(x, pos)."""
    return {"neg": round(1 - p, 10), "pos": p}


def check(res, expectations, *, engine: bool, attribute=None):
    """expectations: list of (metric, cls, group, expected value or NULL[, n])."""
    problems = []
    for exp in expectations:
        metric, cls, group, value = exp[:4]
        n = exp[4] if len(exp) > 4 else None
        try:
            row = get(res, metric, cls, group, attribute=attribute)
        except AssertionError as err:
            problems.append(str(err).splitlines()[0])
            continue
        where = f"{metric} class={cls} group={group}"
        if value is NULL:
            if row["value"] is not None:
                problems.append(f"{where}: expected null, got {row['value']}")
            elif engine and not (isinstance(row.get("note"), str) and row["note"].strip()):
                problems.append(f"{where}: null value without a note ({row.get('note')!r})")
        else:
            if row["value"] is None:
                problems.append(f"{where}: expected {float(value)!r}, got null (note={row.get('note')!r})")
            elif row["value"] != pytest.approx(float(value), rel=1e-9, abs=1e-12):
                problems.append(f"{where}: expected {float(value)!r}, got {row['value']!r}")
        if n is not None and row.get("n") != n:
            problems.append(f"{where}: expected n={n}, got n={row.get('n')}")
    assert not problems, "\n".join(problems)


# ==========================================================================
# Case A: 2 groups (f, m), binary classes (neg, pos), one example per group
# and template, argmax tie and a `pred` override.
# ==========================================================================
#   template label  f: p      pred       m: p      pred
#   t1       pos       0.9    pos (TP)      0.6    pos (TP)
#   t2       neg       0.7    pos (FP)      0.2    neg (TN)
#   t3       pos       0.4    neg (FN)      0.8    pos (TP)
#   t4       neg       0.3    pos (given!)  0.5    neg (tie neg/pos -> first class "neg")
#   t5       neg       0.1    neg (TN)      0.45   neg (TN)
A_ROWS = [
    ("gender", "t1", "f", "she", "pos", bin_probs(0.9)),
    ("gender", "t1", "m", "he", "pos", bin_probs(0.6)),
    ("gender", "t2", "f", "she", "neg", bin_probs(0.7)),
    ("gender", "t2", "m", "he", "neg", bin_probs(0.2)),
    ("gender", "t3", "f", "she", "pos", bin_probs(0.4)),
    ("gender", "t3", "m", "he", "pos", bin_probs(0.8)),
    ("gender", "t4", "f", "she", "neg", bin_probs(0.3), "pos"),
    ("gender", "t4", "m", "he", "neg", {"neg": 0.5, "pos": 0.5}),
    ("gender", "t5", "f", "she", "neg", bin_probs(0.1)),
    ("gender", "t5", "m", "he", "neg", bin_probs(0.45)),
]

# class pos:  f: TP=1 FN=1 FP=2 TN=1   m: TP=2 FN=0 FP=0 TN=3   S: TP=3 FN=1 FP=2 TN=4
#   TPR f=1/2 m=1 S=3/4; FNR f=1/2 m=0 S=1/4; FPR f=2/3 m=0 S=2/6=1/3; TNR f=1/3 m=1
#   P f=1/3 m=2/2=1; R f=1/2 m=1; F1 f=2(1/3)(1/2)/(5/6)=2/5, m=1
#   positive rate f: t1,t2,t4 -> 3/5; m: t1,t3 -> 2/5
# class neg (positives = gold neg; pred neg: f t3,t5; m t2,t4,t5):
#   f: TP=1(t5) FN=2(t2,t4) FP=1(t3) TN=1(t1)   m: TP=3 FN=0 FP=0 TN=2   S: TP=4 FN=2 FP=1 TN=3
#   TPR f=1/3 m=1 S=2/3; FNR f=2/3 m=0 S=1/3; FPR f=1/2 m=0 S=1/4; TNR f=1/2 m=1
#   P f=1/2 m=1; F1 f=2(1/2)(1/3)/(5/6)=2/5, m=1; positive rate f 2/5, m 3/5
# accuracy f: t1,t5 correct -> 2/5; m: all 5 correct -> 1
#
# AvgGF (pos): f={.1,.3,.4,.7,.9} m={.2,.45,.5,.6,.8} S=both (10 values).
#   W1 with equal weights via quantile coupling: each f value matches 2 S values
#   W1(S,f) = 1/10[|.1-.1|+|.2-.1|+|.3-.3|+|.4-.3|+|.45-.4|+|.5-.4|+|.6-.7|+|.7-.7|+|.8-.9|+|.9-.9|]
#           = .55/10 = 0.055
#   W1(S,m) = 1/10[.1+0+.15+.05+.05+0+0+.1+0+.1] = 0.055 ; AvgGF = (0.055+0.055)/2 = 0.055
#   (neg scores are 1-p: W1 is reflection invariant -> same numbers)
# AvgGF-TC (pos): gold-pos rows f={.4,.9} m={.6,.8} S={.4,.6,.8,.9}
#   W1(S,f) = 1/4[0+.2+.1+0] = .075, W1(S,m) = 1/4[.2+0+0+.1] = .075 -> .075
# AvgGF-TC (neg): gold-neg rows, neg scores f={.3,.7,.9} m={.8,.5,.55} S={.3,.5,.55,.7,.8,.9}
#   W1(S,f) = 1/6[0+.2+.15+0+.1+0] = .075 ; W1(S,m) = 1/6[.2+0+0+.15+0+.1] = .075 -> .075
# AEG = 1/2 - P(b > g), b from the other group:
#   PosAEG pos: f g={.9,.4} b={.6,.8}: b>g pairs (.6>.4),(.8>.4) = 2/4 -> 0; m: 2/4 -> 0
#   NegAEG pos: f g={.7,.3,.1} b={.2,.5,.45}: .2>.1; .5>.3,.1; .45>.3,.1 -> 5/9 -> 1/2-5/9 = -1/18
#               m g={.2,.5,.45} b={.7,.3,.1}: .7>all 3; .3>.2 -> 4/9 -> +1/18
#   PosAEG neg (gold neg, neg scores): f g={.3,.7,.9} b={.8,.5,.55}: .8>.3,.7; .5>.3; .55>.3 -> 4/9 -> 1/18
#               m g={.8,.5,.55} b={.3,.7,.9}: .7>.5,.55; .9>all -> 5/9 -> -1/18
#   NegAEG neg (gold pos, neg scores): f g={.1,.6} b={.4,.2}: .4>.1, .2>.1 -> 2/4 -> 0; m -> 0
# AUC (pos): f pos {.9,.4} neg {.7,.3,.1}: .9>3, .4>2 -> 5/6 ; m pos {.6,.8} neg {.2,.5,.45} -> 6/6 = 1
#   BPSN f: m-pos {.6,.8} vs f-neg {.7,.3,.1}: 2+3 -> 5/6 ; m: f-pos {.9,.4} vs m-neg {.2,.5,.45}: 3+1 -> 2/3
#   BNSP f: f-pos {.9,.4} vs m-neg: 3+1 -> 2/3 ; m: m-pos {.6,.8} vs f-neg: 2+3 -> 5/6
#   class neg mirrors (scores 1-p, positives = gold neg): SubgroupAUC f 5/6, m 1;
#   BPSN_neg(f) = P(p_f,goldpos > p_m,goldneg) = 2/3, BPSN_neg(m) = 5/6; BNSP_neg(f) = 5/6, BNSP_neg(m) = 2/3
# Counterfactual: 5 tuples (one per template); |f-m| pos: .3,.5,.4,.2,.35 -> 1.75/5 = .35
#   CFGap-TC pos: t1,t3 -> (.3+.4)/2 = .35 (n=2); neg: t2,t4,t5 -> (.5+.2+.35)/3 = .35 (n=3)
#   PertSS: gold-class probs |.9-.6|,|.3-.8|,|.4-.8|,|.7-.5|,|.9-.55| -> .35 ; PertSD = |a-b|/2 -> .175 ; PertSR .35
#   AvgIF / AvgScoreDiff: singleton sets -> |a-b| per template -> .35 (n=5 templates)
A_EXPECT = [
    # BCM rate metrics (beta = S, per-group rows are undivided |phi(S) - phi(S^t)|)
    ("FPED", "pos", "f", F(1, 3)),  # |1/3 - 2/3|
    ("FPED", "pos", "m", F(1, 3)),  # |1/3 - 0|
    ("FPED", "pos", None, F(2, 3)),
    ("FPED*", "pos", "f", F(1, 3)),
    ("FPED*", "pos", None, F(1, 3)),  # (2/3)/2
    ("FNED", "pos", "f", F(1, 4)),  # |1/4 - 1/2|
    ("FNED", "pos", "m", F(1, 4)),  # |1/4 - 0|
    ("FNED", "pos", None, F(1, 2)),
    ("FNED*", "pos", None, F(1, 4)),
    ("FPED", "neg", None, F(1, 2)),  # |1/4-1/2| + |1/4-0|
    ("FPED*", "neg", None, F(1, 4)),
    ("FNED", "neg", None, F(2, 3)),  # |1/3-2/3| + |1/3-0|
    ("FNED*", "neg", None, F(1, 3)),
    # AvgGF
    ("AvgGF", "pos", "f", 0.055),
    ("AvgGF", "pos", "m", 0.055),
    ("AvgGF", "pos", None, 0.055),
    ("AvgGF", "neg", None, 0.055),
    ("AvgGF-TC", "pos", "f", 0.075),
    ("AvgGF-TC", "pos", None, 0.075),
    ("AvgGF-TC", "neg", "m", 0.075),
    ("AvgGF-TC", "neg", None, 0.075),
    # VBCM ratios (beta = the other group)
    ("FPR-Ratio", "pos", "f", NULL),  # (2/3) / FPR_m = (2/3)/0 -> undefined
    ("FPR-Ratio", "pos", "m", 0.0),  # 0 / (2/3)
    ("FNR-Ratio", "pos", "f", NULL),  # (1/2)/0
    ("FNR-Ratio", "pos", "m", 0.0),
    ("FPR-Ratio", "neg", "f", NULL),  # (1/2)/0
    ("FPR-Ratio", "neg", "m", 0.0),
    ("FNR-Ratio", "neg", "f", NULL),  # (2/3)/0
    ("FNR-Ratio", "neg", "m", 0.0),
    # AEG
    ("PosAEG", "pos", "f", 0.0),
    ("PosAEG", "pos", "m", 0.0),
    ("NegAEG", "pos", "f", F(-1, 18)),
    ("NegAEG", "pos", "m", F(1, 18)),
    ("PosAEG", "neg", "f", F(1, 18)),
    ("PosAEG", "neg", "m", F(-1, 18)),
    ("NegAEG", "neg", "f", 0.0),
    # AUCs
    ("SubgroupAUC", "pos", "f", F(5, 6)),
    ("SubgroupAUC", "pos", "m", 1.0),
    ("BPSN", "pos", "f", F(5, 6)),
    ("BPSN", "pos", "m", F(2, 3)),
    ("BNSP", "pos", "f", F(2, 3)),
    ("BNSP", "pos", "m", F(5, 6)),
    ("SubgroupAUC", "neg", "f", F(5, 6)),
    ("BPSN", "neg", "f", F(2, 3)),
    ("BPSN", "neg", "m", F(5, 6)),
    ("BNSP", "neg", "f", F(5, 6)),
    ("BNSP", "neg", "m", F(2, 3)),
    # PCM (pair "f|m")
    ("DisparityScore", "pos", "f|m", F(3, 5)),  # |2/5 - 1|
    ("DisparityScore", "pos", None, F(3, 10)),  # (3/5)/|T|=2
    ("DisparityScore*", "pos", None, F(3, 5)),  # (3/5)/C(2,2)=1
    ("DisparityScore", "neg", None, F(3, 10)),
    ("TPR-Gap", "pos", "f|m", F(1, 2)),
    ("TPR-Gap", "pos", None, F(1, 2)),
    ("TPR-Gap", "neg", None, F(2, 3)),  # |1/3 - 1|
    ("TNR-Gap", "pos", None, F(2, 3)),  # |1/3 - 1|
    ("TNR-Gap", "neg", None, F(1, 2)),  # |1/2 - 1|
    ("ParityGap", "pos", "f|m", F(1, 5)),  # |3/5 - 2/5|
    ("ParityGap", "pos", None, F(1, 5)),
    ("ParityGap", "neg", None, F(1, 5)),
    # two-group signed metrics (first minus second / first over second)
    ("AccuracyDiff", "all", "f|m", F(-3, 5)),  # 2/5 - 1
    ("AccuracyDiff", "all", None, F(-3, 5)),
    ("TPR-Diff", "pos", None, F(-1, 2)),  # 1/2 - 1
    ("TPR-Diff", "pos", "f|m", F(-1, 2)),
    ("Recall-Diff", "pos", None, F(-1, 2)),
    ("TPR-Diff", "neg", None, F(-2, 3)),  # 1/3 - 1
    ("Recall-Diff", "neg", None, F(-2, 3)),
    ("F1-Diff", "pos", None, F(-3, 5)),  # 2/5 - 1
    ("F1-Diff", "neg", "f|m", F(-3, 5)),
    ("F1-Ratio", "pos", None, F(2, 5)),  # (2/5)/1
    ("F1-Ratio", "neg", "f|m", F(2, 5)),
    # counterfactual (n = tuples / templates)
    ("CFGap", "pos", "f|m", 0.35, 5),
    ("CFGap", "pos", None, 0.35, 5),
    ("CFGap", "neg", None, 0.35, 5),
    ("CFGap-TC", "pos", None, 0.35, 2),
    ("CFGap-TC", "neg", None, 0.35, 3),
    ("PertSS", "all", None, 0.35, 5),
    ("PertSS", "all", "f|m", 0.35, 5),
    ("PertSD", "all", None, 0.175, 5),
    ("PertSR", "all", None, 0.35, 5),
    ("AvgIF", "pos", None, 0.35, 5),
    ("AvgIF", "neg", "f|m", 0.35, 5),
    ("AvgIF-TC", "pos", None, 0.35, 2),
    ("AvgIF-TC", "neg", None, 0.35, 3),
    ("AvgScoreDiff", "pos", None, 0.35, 5),
]


def case_a():
    return make_df(A_ROWS, with_pred=True)


# ==========================================================================
# Case B: 3 classes (a, b, c), 3 groups (x, y, z), one example per group and
# template; template t1 gold a, t2 gold b, t3 gold c.
# ==========================================================================
#   row  probs (a, b, c)       pred
#   x1   (.6, .3, .1)  gold a  a
#   x2   (.2, .5, .3)  gold b  b
#   x3   (.4, .4, .2)  gold c  a  (tie a/b -> first class a)
#   y1   (.3, .3, .4)  gold a  c
#   y2   (.1, .8, .1)  gold b  b
#   y3   (.2, .2, .6)  gold c  c
#   z1   (.5, .25,.25) gold a  a
#   z2   (.4, .35,.25) gold b  a
#   z3   (.1, .3, .6)  gold c  c
B_ROWS = [
    ("race", "t1", "x", "x-term", "a", {"a": 0.6, "b": 0.3, "c": 0.1}),
    ("race", "t1", "y", "y-term", "a", {"a": 0.3, "b": 0.3, "c": 0.4}),
    ("race", "t1", "z", "z-term", "a", {"a": 0.5, "b": 0.25, "c": 0.25}),
    ("race", "t2", "x", "x-term", "b", {"a": 0.2, "b": 0.5, "c": 0.3}),
    ("race", "t2", "y", "y-term", "b", {"a": 0.1, "b": 0.8, "c": 0.1}),
    ("race", "t2", "z", "z-term", "b", {"a": 0.4, "b": 0.35, "c": 0.25}),
    ("race", "t3", "x", "x-term", "c", {"a": 0.4, "b": 0.4, "c": 0.2}),
    ("race", "t3", "y", "y-term", "c", {"a": 0.2, "b": 0.2, "c": 0.6}),
    ("race", "t3", "z", "z-term", "c", {"a": 0.1, "b": 0.3, "c": 0.6}),
]
# class a: x TP1 FN0 FP1(x3) TN1; y TP0 FN1(y1) FP0 TN2; z TP1 FN0 FP1(z2) TN1; S TP2 FN1 FP2 TN4
#   TPR x1 y0 z1 S2/3; FNR x0 y1 z0 S1/3; FPR x1/2 y0 z1/2 S1/3; TNR x1/2 y1 z1/2
#   F1 x: P1/2 R1 -> 2/3; y: TP+FP=0 -> precision undefined -> null; z: 2/3
#   positive rate x 2/3, y 0, z 2/3
#   FPR rest: x->(y,z) FP1 TN3 = 1/4; y->(x,z) FP2 TN2 = 1/2; z->(x,y) = 1/4
#   FNR rest: x->(y,z) TP1 FN1 = 1/2; y->(x,z) TP2 FN0 = 0; z->(x,y) = 1/2
# class b: x TP1 TN2; y TP1 TN2; z FN1(z2) TN2; S TP2 FN1 FP0 TN6
#   TPR x1 y1 z0 S2/3; FNR 0 0 1 S1/3; FPR 0 0 0 S0; TNR 1 1 1
#   F1 x1 y1 z null (no predicted b); positive rate 1/3 1/3 0
# class c: x FN1(x3) TN2; y TP1 FP1(y1) TN1; z TP1 TN2; S TP2 FN1 FP1 TN5
#   TPR x0 y1 z1 S2/3; FNR 1 0 0 S1/3; FPR x0 y1/2 z0 S1/6; TNR 1 1/2 1
#   F1 x null (no predicted c), y: P1/2 R1 -> 2/3, z 1; positive rate 0 2/3 1/3
#
# AvgGF class a: x{.6,.2,.4} y{.3,.1,.2} z{.5,.4,.1}; S sorted .1,.1,.2,.2,.3,.4,.4,.5,.6
#   each group value matches 3 consecutive S values:
#   x sorted .2,.4,.6: [.1+.1+0]+[.2+.1+0]+[.2+.1+0] = .8 -> .8/9
#   y sorted .1,.2,.3: [0+0+.1]+[0+.1+.2]+[.1+.2+.3] = 1.0 -> 1/9
#   z sorted .1,.4,.5: [0+0+.1]+[.2+.1+0]+[.1+0+.1] = .6 -> .6/9
#   AvgGF = (.8+1+.6)/9/3 = 2.4/27 = 4/45
# AvgGF-TC class a: gold-a x{.6} y{.3} z{.5}, S{.3,.5,.6}
#   W1(S,{.6}) = (.3+.1+0)/3 = 2/15; W1(S,{.3}) = (0+.2+.3)/3 = 1/6; W1(S,{.5}) = (.2+0+.1)/3 = 1/10
#   AvgGF-TC = (2/15+1/6+1/10)/3 = (4+5+3)/30/3 = 2/15
# PosAEG a (gold a): x g{.6} b{.3,.5} -> P(b>g)=0 -> 1/2; y g{.3} b{.6,.5} -> 1 -> -1/2; z g{.5} b{.6,.3} -> 1/2 -> 0
# NegAEG a (gold != a, score f(x,a)): x g{.2,.4} b{.1,.2,.4,.1}:
#   g=.2: b>g {.4}=1, tie {.2}=.5 -> 1.5; g=.4: tie {.4} -> .5 ; total 2/8 -> 1/2-1/4 = 1/4
#   y g{.1,.2} b{.2,.4,.4,.1}: g=.1: 3 + .5 = 3.5; g=.2: 2 + .5 = 2.5 -> 6/8 -> -1/4
#   z g{.4,.1} b{.2,.4,.1,.2}: g=.4: .5; g=.1: 3 + .5 -> 4/8 -> 0
# SubgroupAUC c: x pos{.2} neg{.1,.3} -> 1/2; y pos{.6} neg{.4,.1} -> 1; z pos{.6} neg{.25,.25} -> 1
# BPSN a: x: pos (y1 .3, z1 .5) vs x-neg {.2,.4}: .3>.2; .5>both -> 3/4
#         y: pos {.6,.5} vs y-neg {.1,.2} -> 1;  z: pos {.6,.3} vs z-neg {.4,.1}: 2 + 1 -> 3/4
# BNSP a: x: x-pos {.6} vs rest-neg {.1,.2,.4,.1} -> 1; y: {.3} vs {.2,.4,.4,.1} -> 2/4;
#         z: {.5} vs {.2,.4,.1,.2} -> 1
# Counterfactual: 3 tuples (t1,t2,t3), pairs x|y, x|z, y|z (N=3)
#   CFGap a: t1 (.6,.3,.5): .3,.1,.2 ; t2 (.2,.1,.4): .1,.2,.3 ; t3 (.4,.2,.1): .2,.3,.1
#     every tuple mean .2 -> CFGap .2; pair rows (.3+.1+.2)/3=.2, (.1+.2+.3)/3=.2, (.2+.3+.1)/3=.2
#   CFGap-TC a: only t1 (all gold a): acc .2, x|y .3, x|z .1, y|z .2 (n=1)
#   PertSS: gold probs t1 (.6,.3,.5) -> .3,.1,.2 mean .2; t2 (.5,.8,.35) -> .3,.15,.45 mean .3;
#           t3 (.2,.6,.6) -> .4,.4,0 mean .8/3.  PertSS = (.2+.3+.8/3)/3 = 2.3/9
#           pairs: x|y (.3+.3+.4)/3 = 1/3 ; x|z (.1+.15+.4)/3 = .65/3 ; y|z (.2+.45+0)/3 = .65/3
#   PertSD: t1 (x30: 18,9,15, mean 14, dev 4,-5,1 -> var 42/3=14) -> sqrt(14)/30
#           t2 (x60: 30,48,21, mean 33, dev -3,15,-12 -> var 378/3=126) -> sqrt(126)/60
#           t3 (x15: 3,9,9, mean 7, dev -4,2,2 -> var 24/3=8) -> sqrt(8)/15
#   PertSR: ranges .3, .45, .4 -> 1.15/3
B_PERTSD = (math.sqrt(14) / 30 + math.sqrt(126) / 60 + math.sqrt(8) / 15) / 3
B_EXPECT = [
    ("FPED", "a", "x", F(1, 6)),  # |1/3 - 1/2|
    ("FPED", "a", "y", F(1, 3)),  # |1/3 - 0|
    ("FPED", "a", None, F(2, 3)),  # 1/6 + 1/3 + 1/6
    ("FPED*", "a", None, F(2, 9)),
    ("FPED", "b", None, 0.0),
    ("FPED", "c", None, F(2, 3)),  # S 1/6: 1/6 + 1/3 + 1/6
    ("FPED*", "c", None, F(2, 9)),
    ("FNED", "a", "y", F(2, 3)),  # |1/3 - 1|
    ("FNED", "a", None, F(4, 3)),  # 1/3 + 2/3 + 1/3
    ("FNED*", "a", None, F(4, 9)),
    ("FNED*", "b", None, F(4, 9)),
    ("FNED*", "c", None, F(4, 9)),
    ("FPR-Ratio", "a", "x", 2.0),  # (1/2)/(1/4)
    ("FPR-Ratio", "a", "y", 0.0),  # 0/(1/2)
    ("FPR-Ratio", "a", "z", 2.0),
    ("FPR-Ratio", "b", "x", NULL),  # 0/0
    ("FPR-Ratio", "c", "y", NULL),  # (1/2)/FPR(x,z)=0
    ("FPR-Ratio", "c", "x", 0.0),  # 0/(1/4)
    ("FNR-Ratio", "a", "x", 0.0),  # 0/(1/2)
    ("FNR-Ratio", "a", "y", NULL),  # 1/0
    ("FNR-Ratio", "b", "z", NULL),  # 1/0
    ("FNR-Ratio", "c", "x", NULL),  # 1/0
    ("FNR-Ratio", "c", "y", 0.0),
    ("DisparityScore", "a", "x|z", 0.0),  # |2/3 - 2/3|
    ("DisparityScore", "a", "x|y", NULL),  # F1_y null
    ("DisparityScore", "a", None, NULL),  # null propagates
    ("DisparityScore", "b", "x|y", 0.0),
    ("DisparityScore", "b", None, NULL),
    ("DisparityScore*", "c", "y|z", F(1, 3)),  # |2/3 - 1|
    ("DisparityScore*", "c", "x|y", NULL),
    ("DisparityScore*", "c", None, NULL),
    ("TPR-Gap", "a", "x|y", 1.0),
    ("TPR-Gap", "a", "x|z", 0.0),
    ("TPR-Gap", "a", None, F(2, 3)),  # (1+0+1)/3
    ("TPR-Gap", "b", None, F(2, 3)),  # (0+1+1)/3
    ("TPR-Gap", "c", None, F(2, 3)),  # (1+1+0)/3
    ("TNR-Gap", "a", "y|z", F(1, 2)),
    ("TNR-Gap", "a", None, F(1, 3)),  # (1/2+0+1/2)/3
    ("TNR-Gap", "b", None, 0.0),
    ("TNR-Gap", "c", None, F(1, 3)),
    ("ParityGap", "a", "x|y", F(2, 3)),
    ("ParityGap", "a", None, F(4, 9)),  # (2/3 + 0 + 2/3)/3
    ("ParityGap", "b", None, F(2, 9)),  # (0 + 1/3 + 1/3)/3
    ("ParityGap", "c", "x|z", F(1, 3)),
    ("ParityGap", "c", None, F(4, 9)),  # (2/3 + 1/3 + 1/3)/3
    ("AvgGF", "a", "x", F(8, 90)),
    ("AvgGF", "a", "y", F(1, 9)),
    ("AvgGF", "a", "z", F(6, 90)),
    ("AvgGF", "a", None, F(4, 45)),
    ("AvgGF-TC", "a", "x", F(2, 15)),
    ("AvgGF-TC", "a", "y", F(1, 6)),
    ("AvgGF-TC", "a", None, F(2, 15)),
    ("PosAEG", "a", "x", 0.5),
    ("PosAEG", "a", "y", -0.5),
    ("PosAEG", "a", "z", 0.0),
    ("NegAEG", "a", "x", 0.25),
    ("NegAEG", "a", "y", -0.25),
    ("NegAEG", "a", "z", 0.0),
    ("SubgroupAUC", "c", "x", 0.5),
    ("SubgroupAUC", "c", "y", 1.0),
    ("SubgroupAUC", "a", "x", 1.0),
    ("BPSN", "a", "x", 0.75),
    ("BPSN", "a", "y", 1.0),
    ("BPSN", "a", "z", 0.75),
    ("BNSP", "a", "x", 1.0),
    ("BNSP", "a", "y", 0.5),
    ("BNSP", "a", "z", 1.0),
    ("CFGap", "a", None, 0.2, 3),
    ("CFGap", "a", "x|y", 0.2, 3),
    ("CFGap", "a", "y|z", 0.2, 3),
    ("CFGap-TC", "a", None, 0.2, 1),
    ("CFGap-TC", "a", "x|y", 0.3, 1),
    ("CFGap-TC", "a", "x|z", 0.1, 1),
    ("CFGap-TC", "a", "y|z", 0.2, 1),
    ("PertSS", "all", None, 2.3 / 9, 3),
    ("PertSS", "all", "x|y", F(1, 3), 3),
    ("PertSS", "all", "x|z", 0.65 / 3, 3),
    ("PertSS", "all", "y|z", 0.65 / 3, 3),
    ("PertSD", "all", None, B_PERTSD, 3),
    ("PertSR", "all", None, 1.15 / 3, 3),
    ("AvgIF", "a", None, 0.2, 3),
    ("AvgScoreDiff", "a", None, 0.2, 3),
    ("AvgIF-TC", "a", None, 0.2, 1),
]


def case_b():
    return make_df(B_ROWS)


# ==========================================================================
# Case C: counterfactual, several terms per group, 2-group attribute and a
# 3-group attribute, templates missing a group.  The template ids "T1"/"T2"
# are deliberately reused by both attributes (templates are per attribute).
# ==========================================================================
# gender (f, m), binary, p = f(x, pos)
#   T1: f {.2 (pos), .6 (pos)}   m {.5 (pos)}
#   T2: f {.9 (pos)}             m {.3 (pos), .7 (neg)}
#   T3: f {.1 (pos)}             -- no m -> excluded from every counterfactual metric
#   tuples: (.2,.5) (.6,.5) (.9,.3) (.9,.7)
#   CFGap pos: |.3|+|.1|+|.6|+|.2| = 1.2/4 = .3 (n=4)
#   CFGap-TC pos: tuples all gold pos: (.2,.5),(.6,.5),(.9,.3) -> (.3+.1+.6)/3 = 1/3 (n=3)
#   CFGap-TC neg: no tuple all gold neg -> null (n=0)
#   AvgIF pos: T1 W1({.2,.6},{.5}) = (.3+.1)/2 = .2; T2 W1({.9},{.3,.7}) = (.6+.2)/2 = .4 -> .3 (n=2)
#   AvgIF-TC pos: T1 .2; T2 m gold-pos {.3}: |.9-.3| = .6 -> .4 (n=2)
#   AvgIF-TC neg: T1 no gold neg, T2 f has no gold neg -> every template skipped -> null
#   AvgScoreDiff pos: T1 |(.2+.6)/2 - .5| = .1; T2 |.9 - (.3+.7)/2| = .4 -> .25 (n=2)
#   PertSS: gold-class probs (.2,.5)->.3 (.6,.5)->.1 (.9,.3)->.6 (.9, f(x,neg)=.3)->.6 -> 1.6/4 = .4
#   PertSD = |a-b|/2 -> .2 ; PertSR .4
# religion (r1, r2, r3), all gold pos
#   T1: r1 {.1, .3}  r2 {.5}  r3 {.2}
#   T2: r1 {.4}      r2 {.4}  r3 {.8, .6}
#   T4: r1 {.7}      r3 {.9}          -- no r2 -> excluded
#   tuples (r1,r2,r3) and pair diffs (r1|r2, r1|r3, r2|r3):
#     (.1,.5,.2): .4 .1 .3 -> .8/3      (.3,.5,.2): .2 .1 .3 -> .6/3
#     (.4,.4,.8): 0  .4 .4 -> .8/3      (.4,.4,.6): 0  .2 .2 -> .4/3
#   CFGap pos = (.8+.6+.8+.4)/3/4 = 2.6/12 ; pairs r1|r2 .6/4=.15, r1|r3 .8/4=.2, r2|r3 1.2/4=.3
#   AvgIF pos: T1 W1({.1,.3},{.5}) = .3, W1({.1,.3},{.2}) = .1, W1({.5},{.2}) = .3 -> .7/3
#              T2 W1({.4},{.4}) = 0, W1({.4},{.8,.6}) = .3, W1({.4},{.8,.6}) = .3 -> .6/3
#              AvgIF = (.7/3 + .6/3)/2 = 1.3/6 ; pairs r1|r2 .15, r1|r3 .2, r2|r3 .3
#   AvgScoreDiff pos: T1 means .2 .5 .2 -> .3 0 .3 -> .2 ; T2 means .4 .4 .7 -> 0 .3 .3 -> .2
#              -> .2 ; pairs r1|r2 (.3+0)/2 = .15, r1|r3 (0+.3)/2 = .15, r2|r3 .3
#   PertSR (gold pos): ranges .4 .3 .4 .2 -> 1.3/4
#   PertSD: per tuple std x10: (1,5,2): mean 8/3, dev^2 (25+49+4)/9 /3 = 78/27
#           (3,5,2): 42/27 ; (4,4,8): 96/27 ; (4,4,6): 24/27  -> mean of sqrt(v)/10
C_ROWS = [
    ("gender", "T1", "f", "she", "pos", bin_probs(0.2)),
    ("gender", "T1", "f", "woman", "pos", bin_probs(0.6)),
    ("gender", "T1", "m", "he", "pos", bin_probs(0.5)),
    ("religion", "T1", "r1", "r1a", "pos", bin_probs(0.1)),
    ("religion", "T1", "r1", "r1b", "pos", bin_probs(0.3)),
    ("religion", "T1", "r2", "r2a", "pos", bin_probs(0.5)),
    ("religion", "T1", "r3", "r3a", "pos", bin_probs(0.2)),
    ("gender", "T2", "f", "she", "pos", bin_probs(0.9)),
    ("gender", "T2", "m", "he", "pos", bin_probs(0.3)),
    ("gender", "T2", "m", "man", "neg", bin_probs(0.7)),
    ("gender", "T3", "f", "she", "pos", bin_probs(0.1)),
    ("religion", "T2", "r1", "r1a", "pos", bin_probs(0.4)),
    ("religion", "T2", "r2", "r2a", "pos", bin_probs(0.4)),
    ("religion", "T2", "r3", "r3a", "pos", bin_probs(0.8)),
    ("religion", "T2", "r3", "r3b", "pos", bin_probs(0.6)),
    ("religion", "T4", "r1", "r1a", "pos", bin_probs(0.7)),
    ("religion", "T4", "r3", "r3a", "pos", bin_probs(0.9)),
]
C_PERTSD_REL = (
    math.sqrt(78 / 27) + math.sqrt(42 / 27) + math.sqrt(96 / 27) + math.sqrt(24 / 27)
) / 10 / 4
C_EXPECT_GENDER = [
    ("CFGap", "pos", None, 0.3, 4),
    ("CFGap", "pos", "f|m", 0.3, 4),
    ("CFGap", "neg", None, 0.3, 4),
    ("CFGap-TC", "pos", None, F(1, 3), 3),
    ("CFGap-TC", "neg", None, NULL),
    ("CFGap-TC", "neg", "f|m", NULL),
    ("AvgIF", "pos", None, 0.3, 2),
    ("AvgIF", "pos", "f|m", 0.3, 2),
    ("AvgIF-TC", "pos", None, 0.4, 2),
    ("AvgIF-TC", "neg", None, NULL),
    ("AvgScoreDiff", "pos", None, 0.25, 2),
    ("AvgScoreDiff", "neg", None, 0.25, 2),
    ("PertSS", "all", None, 0.4, 4),
    ("PertSD", "all", None, 0.2, 4),
    ("PertSR", "all", None, 0.4, 4),
]
C_EXPECT_RELIGION = [
    ("CFGap", "pos", None, 2.6 / 12, 4),
    ("CFGap", "pos", "r1|r2", 0.15, 4),
    ("CFGap", "pos", "r1|r3", 0.2, 4),
    ("CFGap", "pos", "r2|r3", 0.3, 4),
    ("CFGap-TC", "pos", None, 2.6 / 12, 4),
    ("CFGap-TC", "neg", None, NULL),
    ("AvgIF", "pos", None, 1.3 / 6, 2),
    ("AvgIF", "pos", "r1|r2", 0.15, 2),
    ("AvgIF", "pos", "r1|r3", 0.2, 2),
    ("AvgIF", "pos", "r2|r3", 0.3, 2),
    ("AvgIF-TC", "pos", None, 1.3 / 6, 2),
    ("AvgScoreDiff", "pos", None, 0.2, 2),
    ("AvgScoreDiff", "pos", "r1|r2", 0.15, 2),
    ("AvgScoreDiff", "pos", "r1|r3", 0.15, 2),
    ("AvgScoreDiff", "pos", "r2|r3", 0.3, 2),
    ("PertSR", "all", None, 1.3 / 4, 4),
    ("PertSD", "all", None, C_PERTSD_REL, 4),
    ("PertSS", "all", None, 2.6 / 12, 4),
]


def case_c():
    return make_df(C_ROWS)


# ==========================================================================
# Case D: unlabelled rows (label None) are used only by label-free metrics.
# ==========================================================================
#   T1: f .8 (pos)  m .6 (pos)
#   T2: f .3 (neg)  m .7 (neg)
#   T3: f .4 (None) m .2 (None)
# labelled only (class pos): f TP1 TN1; m TP1 FP1 -> FPR f 0, m 1, S 1/2 -> FPED = 1/2+1/2 = 1
#   accuracy f 2/2 = 1, m 1/2 -> AccuracyDiff 1/2 ; SubgroupAUC f 1, m 0 (.6 < .7)
# label-free: positive rate pos (all rows) f {.8 yes, .3 no, .4 no} = 1/3, m {.6,.7 yes, .2 no} = 2/3
#   -> ParityGap 1/3 (it would be |1/2 - 1| = 1/2 if unlabelled rows were dropped)
#   AvgGF pos: f{.3,.4,.8} m{.2,.6,.7} S sorted .2,.3,.4,.6,.7,.8 (each group value <-> 2 S values)
#     W1(S,f) = [.1+0]+[0+.2]+[.1+0] = .4/6 = 1/15 ; W1(S,m) = [0+.1]+[.2+0]+[0+.1] = 1/15 -> 1/15
#   CFGap pos: |.8-.6|, |.3-.7|, |.4-.2| -> .8/3 (n=3, unlabelled tuple included)
#   AvgIF / AvgScoreDiff pos: same .8/3 (n=3 templates)
# label-based counterfactual: PertSS skips the T3 tuple: |.8-.6| (gold pos), |.7-.3| (gold neg) -> .3 (n=2)
#   CFGap-TC pos: T1 only -> .2 (n=1); AvgIF-TC pos: T1 only -> .2 (n=1)
D_ROWS = [
    ("gender", "T1", "f", "she", "pos", bin_probs(0.8)),
    ("gender", "T1", "m", "he", "pos", bin_probs(0.6)),
    ("gender", "T2", "f", "she", "neg", bin_probs(0.3)),
    ("gender", "T2", "m", "he", "neg", bin_probs(0.7)),
    ("gender", "T3", "f", "she", None, bin_probs(0.4)),
    ("gender", "T3", "m", "he", None, bin_probs(0.2)),
]
D_EXPECT = [
    ("FPED", "pos", None, 1.0),
    ("FNED", "pos", None, 0.0),
    ("AccuracyDiff", "all", None, 0.5),
    ("SubgroupAUC", "pos", "f", 1.0),
    ("SubgroupAUC", "pos", "m", 0.0),
    ("ParityGap", "pos", None, F(1, 3)),
    ("AvgGF", "pos", None, F(1, 15)),
    ("CFGap", "pos", None, 0.8 / 3, 3),
    ("AvgIF", "pos", None, 0.8 / 3, 3),
    ("AvgScoreDiff", "pos", None, 0.8 / 3, 3),
    ("PertSS", "all", None, 0.3, 2),
    ("PertSR", "all", None, 0.3, 2),
    ("PertSD", "all", None, 0.15, 2),
    ("CFGap-TC", "pos", None, 0.2, 1),
    ("AvgIF-TC", "pos", None, 0.2, 1),
]


def case_d():
    return make_df(D_ROWS)


# ==========================================================================
# Case E: undefined values.  Group f has no gold-neg rows.
# ==========================================================================
#   T1: f .9 (pos, pred pos)  m .7 (pos, pred pos)
#   T2: f .4 (pos, pred neg)  m .6 (neg, pred pos)
#   T3:                       m .2 (neg, pred neg)     (T3 incomplete)
# class pos: f TP1 FN1, no negatives -> FPR_f undefined
#   m TP1 FN0 FP1 TN1 -> FPR_m 1/2 ; S negatives = m's -> FPR_S 1/2
#   FPED pos: f null, m |1/2-1/2| = 0, accumulated null (null propagates); FPED* idem
#   TNR_f null -> TNR-Gap null; FPR-Ratio f: null/(1/2) null; m: (1/2)/FPR_f null -> null
#   NegAEG pos f: no gold-neg rows in f -> empty group set -> null
# class neg: positives = gold neg: f has none -> TPR_f(neg) undefined -> FNED neg null,
#   TPR-Gap neg null, PosAEG neg f null; F1_f(neg) null (recall undefined) -> F1-Diff/F1-Ratio null
#   SubgroupAUC neg f: only one class -> null; SubgroupAUC pos f (both pos) -> null too
#   AvgGF-TC neg: f has no gold-neg row -> W1 with an empty set -> null, accumulated null
# counterfactual: CFGap-TC neg null, AvgIF-TC neg null (T2 f gold pos)
E_ROWS = [
    ("gender", "T1", "f", "she", "pos", bin_probs(0.9)),
    ("gender", "T1", "m", "he", "pos", bin_probs(0.7)),
    ("gender", "T2", "f", "she", "pos", bin_probs(0.4)),
    ("gender", "T2", "m", "he", "neg", bin_probs(0.6)),
    ("gender", "T3", "m", "he", "neg", bin_probs(0.2)),
]
E_EXPECT = [
    ("FPED", "pos", "f", NULL),
    ("FPED", "pos", "m", 0.0),
    ("FPED", "pos", None, NULL),
    ("FPED*", "pos", None, NULL),
    ("TNR-Gap", "pos", None, NULL),
    ("TNR-Gap", "pos", "f|m", NULL),
    ("FPR-Ratio", "pos", "f", NULL),
    ("FPR-Ratio", "pos", "m", NULL),
    ("NegAEG", "pos", "f", NULL),
    ("FNED", "neg", None, NULL),
    ("FNED", "neg", "f", NULL),
    ("TPR-Gap", "neg", None, NULL),
    ("PosAEG", "neg", "f", NULL),
    ("F1-Diff", "neg", None, NULL),
    ("F1-Ratio", "neg", None, NULL),
    ("SubgroupAUC", "neg", "f", NULL),
    ("SubgroupAUC", "pos", "f", NULL),
    ("AvgGF-TC", "neg", "f", NULL),
    ("AvgGF-TC", "neg", None, NULL),
    ("CFGap-TC", "neg", None, NULL),
    ("AvgIF-TC", "neg", None, NULL),
    # the defined ones next to them: FNR_S(pos) = FN/(TP+FN) = 1/3 (TP: f .9, m .7; FN: f .4)
    ("FNED", "pos", "m", F(1, 3)),  # FNR_m = 0 -> |1/3 - 0|
    ("FNED", "pos", "f", F(1, 6)),  # FNR_f = 1/2 -> |1/3 - 1/2|
    ("FNED", "pos", None, F(1, 2)),  # 1/6 + 1/3
    ("CFGap", "pos", None, 0.2, 2),  # T1 |.9-.7| = .2, T2 |.4-.6| = .2 (T3 incomplete)
]


def case_e():
    return make_df(E_ROWS)


CASES = {
    "A_two_groups_binary": (case_a, [(None, A_EXPECT)]),
    "B_three_classes_three_groups": (case_b, [(None, B_EXPECT)]),
    "C_counterfactual": (case_c, [("gender", C_EXPECT_GENDER), ("religion", C_EXPECT_RELIGION)]),
    "D_unlabelled": (case_d, [(None, D_EXPECT)]),
    "E_undefined": (case_e, [(None, E_EXPECT)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_hand(case):
    build, blocks = CASES[case]
    res = reference_evaluate(build())
    for attribute, expect in blocks:
        check(res, expect, engine=False, attribute=attribute)


@pytest.mark.parametrize("case", sorted(CASES))
def test_engine_hand(case):
    build, blocks = CASES[case]
    res = engine_evaluate(build(), max_tuples=100, seed=0)
    for attribute, expect in blocks:
        check(res, expect, engine=True, attribute=attribute)


# --------------------------------------------------------------------------
# Tuple sampling: reproduce the protocol of METRICS.md by hand.
# --------------------------------------------------------------------------
# attribute "a1" (groups g, h), then attribute "a2" (groups u, v, w):
#   a1/S1: g 3 examples, h 3 examples -> 9 tuples > max_tuples=4 -> sampled
#   a1/S2: g 1, h 2 -> 2 tuples <= 4 -> all, no draws
#   a1/S3: g 2 only -> incomplete, no draws
#   a2/S1: u 2, v 2, w 2 -> 8 tuples > 4 -> sampled (after a1's draws, same rng)
# p values chosen so that every tuple has a different |difference|.
SAMPLING_P = {
    ("a1", "S1", "g"): [0.05, 0.21, 0.43],
    ("a1", "S1", "h"): [0.12, 0.37, 0.91],
    ("a1", "S2", "g"): [0.5],
    ("a1", "S2", "h"): [0.33, 0.77],
    ("a1", "S3", "g"): [0.1, 0.2],
    ("a2", "S1", "u"): [0.15, 0.55],
    ("a2", "S1", "v"): [0.25, 0.85],
    ("a2", "S1", "w"): [0.3, 0.62],
}


def sampling_df():
    rows = []
    # interleave a little so that first appearance != key order, but keep
    # the per-(attribute, template, group) order of SAMPLING_P
    order = [
        ("a1", "S1", "g", 0), ("a1", "S1", "h", 0), ("a2", "S1", "u", 0), ("a1", "S1", "g", 1),
        ("a1", "S2", "g", 0), ("a1", "S1", "h", 1), ("a1", "S1", "g", 2), ("a1", "S1", "h", 2),
        ("a2", "S1", "v", 0), ("a2", "S1", "w", 0), ("a1", "S2", "h", 0), ("a1", "S2", "h", 1),
        ("a2", "S1", "u", 1), ("a2", "S1", "v", 1), ("a2", "S1", "w", 1), ("a1", "S3", "g", 0),
        ("a1", "S3", "g", 1),
    ]
    for attr, tpl, grp, i in order:
        p = SAMPLING_P[(attr, tpl, grp)][i]
        rows.append((attr, tpl, grp, f"{grp}{i}", "pos", bin_probs(p)))
    return make_df(rows)


def _draw(rng, sizes, k):
    kept = []
    while len(kept) < k:
        t = tuple(int(rng.integers(s)) for s in sizes)
        if t not in kept:
            kept.append(t)
    return kept


def sampling_expected(max_tuples=4, seed=0):
    rng = np.random.default_rng(seed)
    # a1: only S1 is sampled (S2 has 2 tuples, S3 incomplete)
    a1_s1 = _draw(rng, [3, 3], max_tuples)
    # a2: S1 sampled with the same rng
    a2_s1 = _draw(rng, [2, 2, 2], max_tuples)
    P = SAMPLING_P
    d1 = [abs(P[("a1", "S1", "g")][i] - P[("a1", "S1", "h")][j]) for i, j in a1_s1]
    d1 += [abs(0.5 - 0.33), abs(0.5 - 0.77)]  # S2: all tuples
    cfgap_a1 = sum(d1) / len(d1)
    d2 = []
    for i, j, k in a2_s1:
        u, v, w = P[("a2", "S1", "u")][i], P[("a2", "S1", "v")][j], P[("a2", "S1", "w")][k]
        d2.append((abs(u - v) + abs(u - w) + abs(v - w)) / 3)
    cfgap_a2 = sum(d2) / len(d2)
    return cfgap_a1, len(d1), cfgap_a2, len(d2)


def test_reference_sampling():
    e1, n1, e2, n2 = sampling_expected()
    assert (n1, n2) == (6, 4)
    res = reference_evaluate(sampling_df(), max_tuples=4, seed=0)
    check(res, [("CFGap", "pos", None, e1, n1)], engine=False, attribute="a1")
    check(res, [("CFGap", "pos", None, e2, n2)], engine=False, attribute="a2")


def test_engine_sampling():
    e1, n1, e2, n2 = sampling_expected()
    res = engine_evaluate(sampling_df(), max_tuples=4, seed=0)
    check(res, [("CFGap", "pos", None, e1, n1), ("CFGap", "neg", None, e1, n1)], engine=True, attribute="a1")
    check(res, [("CFGap", "pos", None, e2, n2)], engine=True, attribute="a2")
    # another seed gives the protocol's other draw
    e1b, n1b, e2b, n2b = sampling_expected(seed=7)
    res = engine_evaluate(sampling_df(), max_tuples=4, seed=7)
    check(res, [("CFGap", "pos", None, e1b, n1b)], engine=True, attribute="a1")
    check(res, [("CFGap", "pos", None, e2b, n2b)], engine=True, attribute="a2")


def test_reference_sampling_no_draw_when_small():
    # max_tuples = 9 -> a1/S1 (9 tuples) is used whole; a2/S1 (8) too: value is the full mean
    res = reference_evaluate(sampling_df(), max_tuples=9, seed=123)
    P = SAMPLING_P
    d = [abs(a - b) for a, b in itertools.product(P[("a1", "S1", "g")], P[("a1", "S1", "h")])]
    d += [abs(0.5 - 0.33), abs(0.5 - 0.77)]
    check(res, [("CFGap", "pos", None, sum(d) / len(d), 11)], engine=False, attribute="a1")


def test_engine_sampling_no_draw_when_small():
    res = engine_evaluate(sampling_df(), max_tuples=9, seed=123)
    P = SAMPLING_P
    d = [abs(a - b) for a, b in itertools.product(P[("a1", "S1", "g")], P[("a1", "S1", "h")])]
    d += [abs(0.5 - 0.33), abs(0.5 - 0.77)]
    check(res, [("CFGap", "pos", None, sum(d) / len(d), 11)], engine=True, attribute="a1")


# --------------------------------------------------------------------------
# Row structure rules
# --------------------------------------------------------------------------
PCM_GROUP = ["DisparityScore", "DisparityScore*", "TPR-Gap", "TNR-Gap", "ParityGap"]
TWO_GROUP = ["AccuracyDiff", "TPR-Diff", "F1-Diff", "Recall-Diff", "F1-Ratio"]
BCM = ["FPED", "FNED", "FPED*", "FNED*", "AvgGF", "AvgGF-TC"]
VBCM = ["FPR-Ratio", "FNR-Ratio", "PosAEG", "NegAEG", "SubgroupAUC", "BPSN", "BNSP"]
PCM_CF = ["CFGap", "CFGap-TC", "PertSS", "AvgIF", "AvgIF-TC", "AvgScoreDiff"]
MCM_CF = ["PertSD", "PertSR"]
CLASS_ALL = {"AccuracyDiff", "PertSS", "PertSD", "PertSR"}


def _structure_problems(res, attribute, groups, classes, *, engine):
    problems = []
    pairs = [f"{a}|{b}" for a, b in itertools.combinations(groups, 2)]
    sub = res[res["attribute"] == attribute]

    def groups_of(metric, cls):
        rows = sub[(sub["metric"] == metric) & (sub["class"] == cls)]
        return sorted("<acc>" if _isnull(g) else g for g in rows["group"])

    def expect(metric, family, view, wanted):
        for cls in (["all"] if metric in CLASS_ALL else classes):
            got = groups_of(metric, cls)
            if got != sorted(wanted):
                problems.append(f"{metric} class={cls}: groups {got} != {sorted(wanted)}")
        rows = sub[sub["metric"] == metric]
        if len(rows):
            fams = set(rows["family"]), set(rows["view"])
            if fams != ({family}, {view}):
                problems.append(f"{metric}: family/view {fams} != {family}/{view}")
        if metric in CLASS_ALL:
            bad = set(rows["class"]) - {"all"}
            if bad:
                problems.append(f"{metric}: classes {bad}, expected only 'all'")

    for m in BCM:
        expect(m, "BCM", "group", list(groups) + ["<acc>"])
    for m in VBCM:
        expect(m, "VBCM", "group", list(groups))
    for m in PCM_GROUP:
        expect(m, "PCM", "group", pairs + ["<acc>"])
    for m in PCM_CF:
        expect(m, "PCM", "counterfactual", pairs + ["<acc>"])
    for m in MCM_CF:
        expect(m, "MCM", "counterfactual", ["<acc>"])
    for m in TWO_GROUP:
        if len(groups) == 2:
            expect(m, "PCM", "group", pairs + ["<acc>"])
        else:
            rows = sub[sub["metric"] == m]
            if not engine and len(rows):
                problems.append(f"{m}: reference emitted rows for |T|={len(groups)}")
            if engine:  # not-applicable rows allowed, but then null with a note
                for _, r in rows.iterrows():
                    if not _isnull(r["value"]) or not (isinstance(r["note"], str) and r["note"].strip()):
                        problems.append(f"{m}: |T|={len(groups)} row not null-with-note: {r.to_dict()}")
    return problems


STRUCTURE = [
    ("A", case_a, "gender", ["f", "m"], ["neg", "pos"]),
    ("B", case_b, "race", ["x", "y", "z"], ["a", "b", "c"]),
    ("C-religion", case_c, "religion", ["r1", "r2", "r3"], ["neg", "pos"]),
]


@pytest.mark.parametrize("name,build,attribute,groups,classes", STRUCTURE)
def test_reference_structure(name, build, attribute, groups, classes):
    res = reference_evaluate(build())
    assert not _structure_problems(res, attribute, groups, classes, engine=False)


@pytest.mark.parametrize("name,build,attribute,groups,classes", STRUCTURE)
def test_engine_structure(name, build, attribute, groups, classes):
    res = engine_evaluate(build())
    for col in ["metric", "family", "view", "attribute", "class", "group", "value", "ci_low", "ci_high", "n", "note"]:
        assert col in res.columns, f"missing column {col}"
    problems = _structure_problems(res, attribute, groups, classes, engine=True)
    assert not problems, "\n".join(problems)


def test_engine_null_values_have_notes():
    """Every null value of a named metric carries a non-empty note (METRICS.md: never silently 0)."""
    named = set(BCM + VBCM + PCM_GROUP + PCM_CF + MCM_CF + TWO_GROUP)
    problems = []
    for name, (build, _) in CASES.items():
        res = engine_evaluate(build())
        res = res[res["metric"].isin(named)]
        for _, r in res.iterrows():
            if _isnull(r["value"]) and not (isinstance(r["note"], str) and r["note"].strip()):
                problems.append(f"{name}: {r['metric']} {r['class']} {r['group']}: null without note")
    assert not problems, "\n".join(problems[:40])


CLASS_ORDER_ROWS = [
    ("g", "t1", "f", "she", "pos", {"pos": 0.5, "neg": 0.5}),  # tie -> pos (first key)
    ("g", "t1", "m", "he", "neg", {"pos": 0.5, "neg": 0.5}),  # tie -> pos -> FP for class pos
    ("g", "t2", "f", "she", "neg", {"pos": 0.2, "neg": 0.8}),
    ("g", "t2", "m", "he", "neg", {"pos": 0.1, "neg": 0.9}),
]
# Class order = keys of probs in the first row (here pos before neg), and a
# missing `pred` column means argmax everywhere (tie -> first class = pos).
# class pos: f TP1 TN1 (FPR 0); m FP1 TN1 (FPR 1/2); S FP1 TN2 (FPR 1/3)
# FPED pos = |1/3 - 0| + |1/3 - 1/2| = 1/2 ; ParityGap pos = |1/2 - 1/2| = 0
# AccuracyDiff = 2/2 - 1/2 = 1/2
CLASS_ORDER_EXPECT = [
    ("FPED", "pos", None, F(1, 2)),
    ("ParityGap", "pos", None, 0.0),
    ("AccuracyDiff", "all", None, 0.5),
]


def test_reference_class_order_and_no_pred_column():
    check(reference_evaluate(make_df(CLASS_ORDER_ROWS)), CLASS_ORDER_EXPECT, engine=False)


def test_engine_class_order_and_no_pred_column():
    check(engine_evaluate(make_df(CLASS_ORDER_ROWS)), CLASS_ORDER_EXPECT, engine=True)


# --------------------------------------------------------------------------
# Case F: no template contains every group -> every counterfactual metric is
# undefined, but the row rules still hold ("PCM gives one row per pair plus
# the accumulated value"; MCM the accumulated value only): null + note.
# Group metrics are unaffected.
# --------------------------------------------------------------------------
#   T1: f .8 (pos)     T2: m .3 (pos)      (no complete template)
#   class pos: TPR f 1, m 0 -> TPR-Gap 1
F_ROWS = [
    ("gender", "T1", "f", "she", "pos", bin_probs(0.8)),
    ("gender", "T2", "m", "he", "pos", bin_probs(0.3)),
]
F_EXPECT = [("TPR-Gap", "pos", None, 1.0)] + [
    (m, c, g, NULL)
    for m in ["CFGap", "CFGap-TC", "AvgIF", "AvgIF-TC", "AvgScoreDiff"]
    for c in ["neg", "pos"]
    for g in [None, "f|m"]
] + [("PertSS", "all", "f|m", NULL), ("PertSS", "all", None, NULL),
     ("PertSD", "all", None, NULL), ("PertSR", "all", None, NULL)]


def test_reference_no_complete_template():
    check(reference_evaluate(make_df(F_ROWS)), F_EXPECT, engine=False)


def test_engine_no_complete_template():
    check(engine_evaluate(make_df(F_ROWS)), F_EXPECT, engine=True)


def _nan_labels(df):
    out = df.copy()
    out["label"] = [np.nan if lab is None else lab for lab in out["label"]]
    out["pred"] = np.nan  # an all-NaN pred column means "no prediction given"
    return out


def test_reference_nan_means_null():
    check(reference_evaluate(_nan_labels(case_d())), D_EXPECT, engine=False)


def test_engine_nan_means_null():
    """Parquet/pandas may carry a missing label or pred as NaN instead of None."""
    check(engine_evaluate(_nan_labels(case_d())), D_EXPECT, engine=True)


# ------------------------------------------------------------------ template balance
def _unbalanced():
    """Group 'a' has two terms in template t1 and one in t2; 'b' one term in each. Gold 'neg'
    everywhere; 'a' is predicted 'pos' (a false positive) in t1 only, 'b' in t2 only."""
    rows = []
    for t, a_terms, fp_group in (("t1", 2, "a"), ("t2", 1, "b")):
        for g, n in (("a", a_terms), ("b", 1)):
            for k in range(n):
                p = 0.9 if g == fp_group else 0.1
                rows.append(dict(id=f"{t}{g}{k}", template=t, attribute="x", group=g, term=f"{g}{k}", text=f"{t}{g}{k}",
                                 label="neg", probs={"neg": 1 - p, "pos": p}))
    return rows


def test_balanced_weighting_counts_each_template_once_per_group():
    from bias_suite.metrics import compute as evaluate

    def fpr_ratio(**kw):
        r = evaluate(_unbalanced(), metrics=["FPR-Ratio", "FPED"], **kw)
        r = r[(r["class"] == "pos")].set_index(["metric", "group"])
        return r.loc[("FPR-Ratio", "a"), "value"], r.loc[("FPED", "a"), "value"], r.loc[("FPR-Ratio", "a"), "n"]

    # pooled: FPR(a) = 2/3, FPR(b) = 1/2, ratio 4/3; FPR(all) = 3/5, FPED(a) = |3/5 - 2/3| = 1/15
    ratio, fped, n = fpr_ratio(weighting="pooled")
    assert ratio == pytest.approx(4 / 3) and fped == pytest.approx(1 / 15) and n == 3
    # balanced: each of a's two t1 examples weighs 1/2, so FPR(a) = (1/2 + 1/2) / 2 = 1/2 = FPR(b):
    # the model treats the groups alike template by template; n still counts examples
    ratio, fped, n = fpr_ratio()
    assert ratio == 1.0 and fped == 0.0 and n == 3


def test_balanced_equals_pooled_on_a_balanced_design():
    from bias_suite.metrics import compute as evaluate

    rows = [r for r in _unbalanced() if r["id"] != "t1a1"]  # one term per group and template
    a, b = evaluate(rows), evaluate(rows, weighting="pooled")
    assert a["value"].fillna(-9).tolist() == pytest.approx(b["value"].fillna(-9).tolist(), abs=1e-12)


def test_unknown_weighting_is_one_clear_error():
    from bias_suite.exceptions import MetricError
    from bias_suite.metrics import compute as evaluate

    with pytest.raises(MetricError, match="weighting must be one of"):
        evaluate(_unbalanced(), weighting="per-term")


# ---------------------------------------------------------------- round-off
from hypothesis import given, settings, strategies as st  # noqa: E402

_MAGS = st.sampled_from([1e-3, 0.5, 1.0, 3.0, 1e3, 1e6])
_GAPS = st.sampled_from([0.0, 1e-12, 1e-10, 5e-10, 1e-9, 2e-9, 1e-8, 1e-3])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**31 - 1), _MAGS, _GAPS, st.sampled_from([10, 9000]), st.booleans())
def test_round_off_equality_matches_its_definition(seed, mag, gap, size, broadcast):
    """|x - y| <= 1e-9 max(1, |x|, |y|), read element by element, whatever
    the path (few values: the scale everywhere; many: only near ties where
    a value passes 1), with NaN, infinities and broadcasting."""
    from bias_suite.metrics.comparisons import ROUND_OFF, equal_within_round_off

    rng = np.random.default_rng(seed)
    x = rng.normal(size=size) * mag
    y = x + rng.choice([-1.0, 1.0], size=size) * gap * np.maximum(np.abs(x), 1.0) * rng.random(size) * 2
    x[rng.random(size) < 0.05] = np.nan
    y[rng.random(size) < 0.02] = np.inf
    if broadcast:
        x = x.reshape(-1, 1)[:3]
    got = equal_within_round_off(x, y)
    xx, yy = np.broadcast_arrays(x, y)
    with np.errstate(invalid="ignore"):
        want = np.array([abs(a - b) <= ROUND_OFF * max(1.0, abs(a), abs(b)) for a, b in zip(xx.ravel(), yy.ravel())])
    assert got.shape == xx.shape
    np.testing.assert_array_equal(got.ravel(), want)
