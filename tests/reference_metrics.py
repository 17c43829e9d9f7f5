"""Independent, deliberately simple reference implementation of METRICS.md
(classification only, named metrics only, no significance / Bernstein / NER).

It is written from ../shared/METRICS.md and ../shared/FORMATS.md only,
without looking at bias_suite/metrics/.  Plain loops everywhere except where
the spec names a library function: scipy.stats.wasserstein_distance (W1),
scipy.stats.mannwhitneyu (AEG) and sklearn.metrics.roc_auc_score (AUCs).

Readings of the spec where it is open or ambiguous (numbered so they can be
compared with the engine's choices):

 1. "W1: 1-Wasserstein distance" is read as the order-1 Wasserstein distance
    itself (scipy.stats.wasserstein_distance(u, v)), NOT "1 minus the
    distance".  (Identical groups then give 0, like every other abs metric.)
 2. The 1/N factor applies only to the accumulated value.  A BCM per-group row
    is d(phi(beta^t), phi(S^t)) and a PCM per-pair row is d(phi(S^a), phi(S^b))
    without the 1/N (e.g. FPED* per-group rows equal FPED per-group rows).
    Counterfactual pair rows are "the mean over tuples of its d" (no 1/N).
 3. Label-based group metrics work on the labelled rows only, for the group
    AND for the background: beta = S means all labelled rows of the
    attribute, S \\ S^t the labelled rows of the other groups.  Label-free
    AvgGF uses every row (unlabelled too) for both the group and S.
 4. TC variants restrict both the group set and the background set to rows
    with gold class c (AvgGF-TC: S is the gold-c rows of the attribute).
 5. Positive rate (ParityGap) = |{yhat=c}| / |S^t| over all rows of the group,
    unlabelled ones included (ParityGap is label-free).  The prediction of an
    unlabelled row is still `pred` if given, else argmax.
 6. Accuracy = |{yhat=y}| / |labelled rows of the group|; AccuracyDiff is
    reported once per attribute with class "all".
 7. FNR = 1 - TPR and TNR = 1 - FPR, so they are null exactly when TPR / FPR
    are.  Recall = TPR, so Recall-Diff == TPR-Diff.
 8. F1 is null when precision (TP+FP=0) or recall (TP+FN=0) is undefined, or
    when P+R = 0 (TP = 0 with both defined).  Hence a defined F1 is never 0
    and F1-Ratio only becomes null through a null F1.
 9. Ratio metrics (FPR-Ratio, FNR-Ratio, F1-Ratio) are null when either
    operand is null or the denominator is 0 (0/0 included).
10. AUC metrics are null when the evaluated set does not contain both a
    positive and a negative (roc_auc_score would raise); BPSN/BNSP are null if
    the background positives (negatives) or the group negatives (positives)
    are empty.
11. AEG = 1/2 - U/(|B||G|) with U = mannwhitneyu(B, G).statistic (U of the
    background sample); null when B or G is empty.  PosAEG uses rows with
    y = c, NegAEG rows with y != c (labelled rows only), background = the
    other groups' rows of the same kind.
12. Group order = first appearance of the group among the rows of that
    attribute; pairs = itertools.combinations in group order, written "a|b".
    |T| (for N and for the "only when |T| = 2" rule) counts every group of the
    attribute, including groups whose rows are all unlabelled.
13. Counterfactual view: templates are keyed by (attribute, template id); the
    same template id used under two attributes is two separate templates.
    A template is complete iff every group of the attribute has at least one
    row in it (unlabelled rows count).  S_j^t keeps all rows, unlabelled ones
    included, in order of first appearance.
14. Tuples are built (and sampled) once from S_j^t with all rows, shared by
    every counterfactual metric; label-based counterfactual metrics then
    filter them: PertSS/PertSD/PertSR skip tuples with any unlabelled member,
    CFGap-TC keeps tuples whose members all have gold c.  Sampling therefore
    consumes random draws for a complete template even if all of its tuples
    are filtered out later.  Tuple distinctness is by example index.
15. CFGap-TC's "tuples of templates with gold c" is read through the TC rule
    ("a tuple counts for class c iff every member has gold c").
16. AvgIF, AvgIF-TC and AvgScoreDiff never use tuples: per complete template
    they compare the full score sets / means of S_j^t, so sampling does not
    affect them.  Template value = (1/C(|T|,2)) sum over pairs; accumulated =
    mean over templates; a pair row = mean over templates of that pair's d.
    AvgScoreDiff has no TC variant and uses unlabelled rows.
17. AvgIF-TC skips templates where some group has no gold-c row; null if no
    template is left (n = 0).  CFGap-TC / PertS* with no qualifying tuple, and
    any counterfactual metric of an attribute without a complete template,
    still emit their rows, with value null.
18. Nulls propagate: a null pair / group value makes the accumulated value
    null; the other pair / group rows keep their values.
19. PertSD = population std (ddof 0) of f(x, y(x)) over the |T| members of
    the tuple, PertSR = max - min, both averaged over tuples; PertSS is a PCM
    with pair rows.  All three have class "all".
20. n (not compared for group metrics): group metrics use the size of the
    set phi was computed on (group rows; accumulated: all rows of the
    attribute used by that metric); counterfactual tuple metrics use the
    number of tuples used, AvgIF / AvgScoreDiff the number of templates used.
21. Two-group metrics (AccuracyDiff, TPR-Diff, F1-Diff, Recall-Diff,
    F1-Ratio) are emitted (pair row "a|b" + accumulated row, identical value,
    N = 1) only when the attribute has exactly 2 groups; otherwise this
    reference emits nothing for them.
22. A given `pred` overrides the argmax row by row: a `pred` column whose
    value is null on some rows falls back to argmax on those rows.  Argmax
    ties (exact float equality) go to the first class in class order.
23. DisparityScore divides the sum over pairs by |T| (number of groups), as
    the table says, although the sum runs over C(|T|,2) pairs.
"""
from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu, wasserstein_distance
from sklearn.metrics import roc_auc_score

COLUMNS = ["metric", "family", "view", "attribute", "class", "group", "value", "n", "note"]

TWO_GROUP_METRICS = ("AccuracyDiff", "TPR-Diff", "F1-Diff", "Recall-Diff", "F1-Ratio")


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------
def _isnull(v: Any) -> bool:
    if v is None:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _div(num, den):
    """num/den, None when undefined (None operand or zero denominator)."""
    if num is None or den is None or den == 0:
        return None
    return num / den


def _abs(x, y):
    if x is None or y is None:
        return None
    return abs(x - y)


def _diff(x, y):
    if x is None or y is None:
        return None
    return x - y


def _ratio(x, y):
    return _div(x, y)


def _w1(u, v):
    if len(u) == 0 or len(v) == 0:
        return None
    return float(wasserstein_distance(u, v))


def _aeg(background, group):
    if len(background) == 0 or len(group) == 0:
        return None
    u = mannwhitneyu(background, group).statistic
    return 0.5 - float(u) / (len(background) * len(group))


def _auc(labels, scores):
    if 1 not in labels or 0 not in labels:
        return None
    return float(roc_auc_score(labels, scores))


def _mean(values):
    if len(values) == 0:
        return None
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


class Ex:
    """One scored example."""

    def __init__(self, idx, attribute, template, group, label, probs, pred):
        self.idx = idx
        self.attribute = attribute
        self.template = template
        self.group = group
        self.label = label
        self.probs = probs
        self.pred = pred

    @property
    def labelled(self):
        return self.label is not None


# --------------------------------------------------------------------------
# prediction-based scores phi (one-vs-rest for class c)
# --------------------------------------------------------------------------
def _counts(exs, c):
    tp = fn = fp = tn = 0
    for e in exs:
        if not e.labelled:
            continue
        if e.label == c:
            if e.pred == c:
                tp += 1
            else:
                fn += 1
        else:
            if e.pred == c:
                fp += 1
            else:
                tn += 1
    return tp, fn, fp, tn


def tpr(exs, c):
    tp, fn, fp, tn = _counts(exs, c)
    return _div(tp, tp + fn)


def fnr(exs, c):
    t = tpr(exs, c)
    return None if t is None else 1 - t


def fpr(exs, c):
    tp, fn, fp, tn = _counts(exs, c)
    return _div(fp, fp + tn)


def tnr(exs, c):
    f = fpr(exs, c)
    return None if f is None else 1 - f


def f1(exs, c):
    tp, fn, fp, tn = _counts(exs, c)
    p = _div(tp, tp + fp)
    r = _div(tp, tp + fn)
    if p is None or r is None or p + r == 0:
        return None
    return 2 * p * r / (p + r)


def positive_rate(exs, c):
    """label-free: all rows of the group, unlabelled included."""
    k = 0
    for e in exs:
        if e.pred == c:
            k += 1
    return _div(k, len(exs))


def accuracy(exs, c=None):
    lab = [e for e in exs if e.labelled]
    k = 0
    for e in lab:
        if e.pred == e.label:
            k += 1
    return _div(k, len(lab))


# --------------------------------------------------------------------------
# main entry point
# --------------------------------------------------------------------------
def _parse(scored: pd.DataFrame):
    records = scored.to_dict("records")
    if not records:
        return [], []
    classes = list(records[0]["probs"].keys())
    exs = []
    for i, r in enumerate(records):
        probs = {c: float(r["probs"][c]) for c in classes}
        label = r.get("label")
        label = None if _isnull(label) else str(label)
        pred = r.get("pred") if "pred" in r else None
        if _isnull(pred):
            best = classes[0]
            for c in classes[1:]:
                if probs[c] > probs[best]:  # strict: ties keep the earlier class
                    best = c
            pred = best
        exs.append(Ex(i, str(r["attribute"]), str(r["template"]), str(r["group"]), label, probs, str(pred)))
    return exs, classes


def _first_appearance(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def reference_evaluate(scored: pd.DataFrame, *, max_tuples: int = 100, seed: int = 0) -> pd.DataFrame:
    exs, classes = _parse(scored)
    out: list[dict] = []
    rng = np.random.default_rng(seed)
    for attr in _first_appearance([e.attribute for e in exs]):
        aexs = [e for e in exs if e.attribute == attr]
        groups = _first_appearance([e.group for e in aexs])
        _group_metrics(out, attr, aexs, groups, classes)
        tuples, templates = _build_tuples(aexs, groups, max_tuples, rng)
        _counterfactual_metrics(out, attr, groups, classes, tuples, templates)
    df = pd.DataFrame(out, columns=COLUMNS)
    return df


# --------------------------------------------------------------------------
# emitters for the generalized metrics
# --------------------------------------------------------------------------
def _row(out, metric, family, view, attr, cls, group, value, n):
    out.append(
        {
            "metric": metric,
            "family": family,
            "view": view,
            "attribute": attr,
            "class": cls,
            "group": group,
            "value": value,
            "n": n,
            "note": None if value is not None else "undefined (reference)",
        }
    )


def _emit_bcm(out, metric, attr, cls, groups, per_group, N, n_groups, n_acc):
    """per_group: {t: d value or None}; accumulated = (1/N) sum, null if any null."""
    for t in groups:
        _row(out, metric, "BCM", "group", attr, cls, t, per_group[t], n_groups[t])
    vals = [per_group[t] for t in groups]
    if any(v is None for v in vals):
        acc = None
    else:
        s = 0.0
        for v in vals:
            s += v
        acc = s / N
    _row(out, metric, "BCM", "group", attr, cls, None, acc, n_acc)


def _emit_vbcm(out, metric, attr, cls, groups, per_group, n_groups):
    for t in groups:
        _row(out, metric, "VBCM", "group", attr, cls, t, per_group[t], n_groups[t])


def _emit_pcm(out, metric, attr, cls, groups, phi, d, N, n_groups, n_acc):
    """phi: {t: score or None}; per pair d(phi_a, phi_b); accumulated (1/N) sum."""
    vals = []
    for a, b in itertools.combinations(groups, 2):
        v = d(phi[a], phi[b])
        vals.append(v)
        _row(out, metric, "PCM", "group", attr, cls, f"{a}|{b}", v, n_groups[a] + n_groups[b])
    if any(v is None for v in vals):
        acc = None
    else:
        s = 0.0
        for v in vals:
            s += v
        acc = s / N
    _row(out, metric, "PCM", "group", attr, cls, None, acc, n_acc)


# --------------------------------------------------------------------------
# group view
# --------------------------------------------------------------------------
def _group_metrics(out, attr, aexs, groups, classes):
    by_group = {t: [e for e in aexs if e.group == t] for t in groups}
    lab_by_group = {t: [e for e in by_group[t] if e.labelled] for t in groups}
    lab_all = [e for e in aexs if e.labelled]
    k = len(groups)
    n_pairs = k * (k - 1) // 2
    n_lab = {t: len(lab_by_group[t]) for t in groups}
    n_all = {t: len(by_group[t]) for t in groups}

    for c in classes:
        # ---- BCM on rates, beta = S (labelled rows of the attribute)
        for metric, phi, N in (
            ("FPED", fpr, 1),
            ("FNED", fnr, 1),
            ("FPED*", fpr, k),
            ("FNED*", fnr, k),
        ):
            bg = phi(lab_all, c)
            per = {t: _abs(bg, phi(lab_by_group[t], c)) for t in groups}
            _emit_bcm(out, metric, attr, c, groups, per, N, n_lab, len(lab_all))

        # ---- AvgGF: label-free score sets, beta = S (all rows)
        all_scores = [e.probs[c] for e in aexs]
        per = {t: _w1(all_scores, [e.probs[c] for e in by_group[t]]) for t in groups}
        _emit_bcm(out, "AvgGF", attr, c, groups, per, k, n_all, len(aexs))

        # ---- AvgGF-TC: gold-c rows only
        tc_all = [e.probs[c] for e in lab_all if e.label == c]
        per = {}
        n_tc = {}
        for t in groups:
            g = [e.probs[c] for e in lab_by_group[t] if e.label == c]
            per[t] = _w1(tc_all, g)
            n_tc[t] = len(g)
        _emit_bcm(out, "AvgGF-TC", attr, c, groups, per, k, n_tc, len(tc_all))

        # ---- VBCM ratios, beta = S \ S^t
        for metric, phi in (("FPR-Ratio", fpr), ("FNR-Ratio", fnr)):
            per = {}
            for t in groups:
                rest = [e for e in lab_all if e.group != t]
                per[t] = _ratio(phi(lab_by_group[t], c), phi(rest, c))
            _emit_vbcm(out, metric, attr, c, groups, per, n_lab)

        # ---- ProbGap: mean f(x, c) of the group minus that of the rest, every row (labelled or not)
        per = {}
        for t in groups:
            g = [e.probs[c] for e in by_group[t]]
            b = [e.probs[c] for e in aexs if e.group != t]
            per[t] = (sum(g) / len(g) - sum(b) / len(b)) if g and b else None
        _emit_vbcm(out, "ProbGap", attr, c, groups, per, n_all)

        # ---- AEGs
        for metric, keep in (("PosAEG", lambda e: e.label == c), ("NegAEG", lambda e: e.label != c)):
            per = {}
            n_g = {}
            for t in groups:
                g = [e.probs[c] for e in lab_by_group[t] if keep(e)]
                b = [e.probs[c] for e in lab_all if e.group != t and keep(e)]
                per[t] = _aeg(b, g)
                n_g[t] = len(g)
            _emit_vbcm(out, metric, attr, c, groups, per, n_g)

        # ---- AUCs
        per_sub, per_bpsn, per_bnsp = {}, {}, {}
        for t in groups:
            grp = lab_by_group[t]
            rest = [e for e in lab_all if e.group != t]
            per_sub[t] = _auc([1 if e.label == c else 0 for e in grp], [e.probs[c] for e in grp])
            bpsn = [e for e in rest if e.label == c] + [e for e in grp if e.label != c]
            per_bpsn[t] = _auc([1 if e.label == c else 0 for e in bpsn], [e.probs[c] for e in bpsn])
            bnsp = [e for e in rest if e.label != c] + [e for e in grp if e.label == c]
            per_bnsp[t] = _auc([1 if e.label == c else 0 for e in bnsp], [e.probs[c] for e in bnsp])
        _emit_vbcm(out, "SubgroupAUC", attr, c, groups, per_sub, n_lab)
        _emit_vbcm(out, "BPSN", attr, c, groups, per_bpsn, n_lab)
        _emit_vbcm(out, "BNSP", attr, c, groups, per_bnsp, n_lab)

        # ---- PCM on prediction scores
        for metric, phi, N, n_map, n_acc in (
            ("DisparityScore", f1, k, n_lab, len(lab_all)),
            ("DisparityScore*", f1, n_pairs, n_lab, len(lab_all)),
            ("TPR-Gap", tpr, n_pairs, n_lab, len(lab_all)),
            ("TNR-Gap", tnr, n_pairs, n_lab, len(lab_all)),
            ("ParityGap", positive_rate, n_pairs, n_all, len(aexs)),
        ):
            src = by_group if metric == "ParityGap" else lab_by_group
            scores = {t: phi(src[t], c) for t in groups}
            _emit_pcm(out, metric, attr, c, groups, scores, _abs, N, n_map, n_acc)

        # ---- two-group signed metrics
        if k == 2:
            for metric, phi, d in (
                ("TPR-Diff", tpr, _diff),
                ("F1-Diff", f1, _diff),
                ("Recall-Diff", tpr, _diff),
                ("F1-Ratio", f1, _ratio),
            ):
                scores = {t: phi(lab_by_group[t], c) for t in groups}
                _emit_pcm(out, metric, attr, c, groups, scores, d, 1, n_lab, len(lab_all))

    if k == 2:
        scores = {t: accuracy(lab_by_group[t]) for t in groups}
        _emit_pcm(out, "AccuracyDiff", attr, "all", groups, scores, _diff, 1, n_lab, len(lab_all))


# --------------------------------------------------------------------------
# counterfactual view
# --------------------------------------------------------------------------
def _build_tuples(aexs, groups, max_tuples, rng):
    """Returns (tuples, templates).

    templates: list of (template id, {group: [examples in order]}) for the
    complete templates in order of first appearance.
    tuples: list of tuples of examples (one per group, in group order).
    """
    templates = []
    for tid in _first_appearance([e.template for e in aexs]):
        members = {t: [e for e in aexs if e.template == tid and e.group == t] for t in groups}
        if all(len(members[t]) > 0 for t in groups):
            templates.append((tid, members))
    tuples = []
    for tid, members in templates:
        lists = [members[t] for t in groups]
        product = 1
        for lst in lists:
            product *= len(lst)
        if product <= max_tuples:
            for combo in itertools.product(*[range(len(lst)) for lst in lists]):
                tuples.append(tuple(lists[i][j] for i, j in enumerate(combo)))
        else:
            kept = []
            seen = set()
            while len(kept) < max_tuples:
                combo = []
                for lst in lists:
                    combo.append(int(rng.integers(len(lst))))
                combo = tuple(combo)
                if combo in seen:
                    continue
                seen.add(combo)
                kept.append(combo)
            for combo in kept:
                tuples.append(tuple(lists[i][j] for i, j in enumerate(combo)))
    return tuples, templates


def _cf_pcm_over_tuples(out, metric, attr, cls, groups, tuples, score):
    """score(example) -> float; PCM abs, N = C(|T|,2), averaged over tuples."""
    pairs = list(itertools.combinations(range(len(groups)), 2))
    n = len(tuples)
    pair_sums = [0.0] * len(pairs)
    acc_sum = 0.0
    for tup in tuples:
        tuple_sum = 0.0
        for p, (i, j) in enumerate(pairs):
            d = abs(score(tup[i]) - score(tup[j]))
            pair_sums[p] += d
            tuple_sum += d
        acc_sum += tuple_sum / len(pairs)
    for p, (i, j) in enumerate(pairs):
        v = pair_sums[p] / n if n else None
        _row(out, metric, "PCM", "counterfactual", attr, cls, f"{groups[i]}|{groups[j]}", v, n)
    _row(out, metric, "PCM", "counterfactual", attr, cls, None, acc_sum / n if n else None, n)


def _cf_mcm_over_tuples(out, metric, attr, cls, tuples, score, agg):
    n = len(tuples)
    total = 0.0
    for tup in tuples:
        total += agg([score(e) for e in tup])
    _row(out, metric, "MCM", "counterfactual", attr, cls, None, total / n if n else None, n)


def _pop_std(values):
    m = sum(values) / len(values)
    s = 0.0
    for v in values:
        s += (v - m) ** 2
    return math.sqrt(s / len(values))


def _value_range(values):
    return max(values) - min(values)


def _cf_pcm_over_templates(out, metric, attr, cls, groups, template_sets, d):
    """template_sets: list of {group: [scores]} (already filtered); d(set_a, set_b)."""
    pairs = list(itertools.combinations(groups, 2))
    n = len(template_sets)
    pair_sums = [0.0] * len(pairs)
    acc_sum = 0.0
    for sets in template_sets:
        tsum = 0.0
        for p, (a, b) in enumerate(pairs):
            v = d(sets[a], sets[b])
            pair_sums[p] += v
            tsum += v
        acc_sum += tsum / len(pairs)
    for p, (a, b) in enumerate(pairs):
        _row(out, metric, "PCM", "counterfactual", attr, cls, f"{a}|{b}", pair_sums[p] / n if n else None, n)
    _row(out, metric, "PCM", "counterfactual", attr, cls, None, acc_sum / n if n else None, n)


def _counterfactual_metrics(out, attr, groups, classes, tuples, templates):
    if len(groups) < 2:
        return
    for c in classes:
        _cf_pcm_over_tuples(out, "CFGap", attr, c, groups, tuples, lambda e, c=c: e.probs[c])
        tc = [tup for tup in tuples if all(e.label == c for e in tup)]
        _cf_pcm_over_tuples(out, "CFGap-TC", attr, c, groups, tc, lambda e, c=c: e.probs[c])

        sets = [{t: [e.probs[c] for e in members[t]] for t in groups} for _, members in templates]
        _cf_pcm_over_templates(out, "AvgIF", attr, c, groups, sets, _w1)

        tc_sets = []
        for _, members in templates:
            s = {t: [e.probs[c] for e in members[t] if e.label == c] for t in groups}
            if all(len(s[t]) > 0 for t in groups):
                tc_sets.append(s)
        _cf_pcm_over_templates(out, "AvgIF-TC", attr, c, groups, tc_sets, _w1)

        _cf_pcm_over_templates(
            out, "AvgScoreDiff", attr, c, groups, sets, lambda u, v: abs(_mean(u) - _mean(v))
        )

    labelled = [tup for tup in tuples if all(e.labelled for e in tup)]
    gold = lambda e: e.probs[e.label]  # noqa: E731
    _cf_pcm_over_tuples(out, "PertSS", attr, "all", groups, labelled, gold)
    _cf_mcm_over_tuples(out, "PertSD", attr, "all", labelled, gold, _pop_std)
    _cf_mcm_over_tuples(out, "PertSR", attr, "all", labelled, gold, _value_range)
