"""What a claim is about: the listed terms, and whether it holds beyond them.

A verdict speaks of the suite's listed terms: templates are the sample and
the terms are what the suite names, so the bootstrap behind the verdicts
resamples templates alone (``resample_terms="no"``, the default). Two
further readings say how far a claim reaches:

- **Term breakdown** (:func:`term_breakdown`): for every claim about a
  group or a pair (``material`` or ``small``), the row's signed quantity
  recomputed with the group kept to one of its listed terms at a time (each
  side of a pair in turn), and how many of those terms share the claim's
  sign. ``terms_agree`` holds "k of n"; ``term_effects`` each term with its
  signed distance from the no-bias value ("Muslim −0.21; Muslims −0.19").
- **Beyond the listed terms** (:func:`beyond_listed_terms`): the same
  signed quantity from a two-way bootstrap that resamples the terms of the
  groups whose terms the model tells apart as well as the templates
  (:mod:`bias_suite.stats.bootstrap.terms`, "auto"). ``beyond_low`` and
  ``beyond_high`` hold that interval on the verdict's scale, and ``beyond``
  says, for every claim, ``holds`` (its two-way interval still excludes
  the no-bias value on the same side) or ``not shown``; only the metrics
  with a claim in an attribute are bootstrapped again. Where the model tells
  no terms of an attribute apart, the two bootstraps are the same and the
  listed-terms interval is copied. The reading never changes a verdict: it
  qualifies it.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..exceptions import MetricError
from ..metrics.catalog import get_metric
from ..metrics.engine import metric_row_dicts
from ..suites.views import group_order
from ..metrics.materiality import RATIO_BAND

__all__ = ["term_breakdown", "beyond_listed_terms", "SCOPE_COLUMNS", "CLAIMS"]

#: the columns this module adds, after the verdict stage's own
SCOPE_COLUMNS = ["terms_agree", "term_effects", "beyond", "beyond_low", "beyond_high"]
#: verdicts that claim an effect
CLAIMS = ("material", "small")
_KEY = ["metric", "attribute", "class", "group"]
#: a term's difference this close to 0 is 0 (float round-off)
ROUND_OFF = 1e-9


def _ensure(out: pd.DataFrame) -> pd.DataFrame:
    for c in SCOPE_COLUMNS:
        if c not in out.columns:
            out[c] = None
        out[c] = out[c].astype(object)
    return out


def _spec(name, specs):
    if name in specs:
        return specs[name]
    try:
        return get_metric(name)
    except MetricError:
        return None


def _signed_spec(spec):
    """The metric whose value carries the row's sign: the same metric with
    d = x − y where it compares with an absolute difference, else itself;
    None where the sign lives only inside templates (per-template metrics)."""
    if spec.per_template:
        return None
    if spec.comparison == "abs" and spec.generalized in ("PCM", "BCM", "VBCM"):
        return dataclasses.replace(spec, name=f"{spec.name}\x00signed", comparison="diff", signed=True)
    return spec


def _distance(value, baseline, ratio: bool) -> float | None:
    if value is None or not np.isfinite(value):
        return None
    if ratio:
        return math.log(value) / math.log(RATIO_BAND) if value > 0 else None
    b = 0.0 if baseline is None or not np.isfinite(baseline) else float(baseline)
    return float(value) - b


def term_breakdown(results: pd.DataFrame, data, *, metrics=None, max_tuples: int | None = 100, seed: int = 0,
                   group_order_override=None, weighting: str = "balanced") -> pd.DataFrame:
    """Add ``terms_agree`` and ``term_effects`` to the claims (``material``
    or ``small``, no ``source``) about a group or a pair of groups whose
    groups have several listed terms (module doc). ``data``: the validated
    scored data the results were computed from; ``metrics``: user specs
    that are not registered."""
    out = _ensure(results.copy())
    if ("verdict" not in out.columns or out.empty or not hasattr(data, "take")
            or "term" not in getattr(data, "frame", pd.DataFrame()).columns):
        return out  # (a family whose data cannot be restricted by rows gets no breakdown)
    specs = {s.name: s for s in (metrics or []) if not isinstance(s, str)}
    src = out["source"] if "source" in out.columns else pd.Series(None, index=out.index, dtype=object)
    claim = (out["verdict"].isin(CLAIMS) & out["group"].map(lambda g: isinstance(g, str))
             & src.map(lambda s: not (isinstance(s, str) and s)) & out["family"].isin(["PCM", "BCM", "VBCM", "MCM"]))
    if not claim.any():
        return out
    fr = data.frame
    attr = fr["attribute"].to_numpy(dtype=object)
    grp = fr["group"].to_numpy(dtype=object)
    term = fr["term"].to_numpy(dtype=object)
    # (attribute, group) -> its listed terms, in order of first appearance
    listed: dict = {}
    for a, g, t in zip(attr, grp, term):
        if isinstance(t, str):
            listed.setdefault((a, g), {}).setdefault(t, None)
    # what to recompute: (attribute, group, term) -> metrics; and which rows read it
    wanted: dict = {}
    rows: dict = {}
    for idx in out.index[claim]:
        r = out.loc[idx]
        spec = _spec(str(r["metric"]), specs)
        sspec = _signed_spec(spec) if spec is not None else None
        if sspec is None or r.get("signed") is None or pd.isna(r.get("signed")) or _is_auc(sspec):
            continue  # nothing signed to break down; an AUC's reference moves with the terms kept
        sides = str(r["group"]).split("|")
        terms = [(g, t) for g in sides for t in listed.get((r["attribute"], g), {})]
        if len(terms) <= len(sides):  # one term per group: the breakdown is the row itself
            continue
        rows[idx] = (sspec, terms)
        for g, t in terms:
            wanted.setdefault((r["attribute"], g, t), {})[sspec.name] = sspec
    values = _term_values(data, wanted, attr, grp, term, max_tuples=max_tuples, seed=seed,
                          group_order_override=group_order_override, weighting=weighting)
    for idx, (sspec, terms) in rows.items():
        r = out.loc[idx]
        ratio = _is_ratio(sspec)
        ref = 1.0 if ratio else 0.0
        claimed = _distance(r.get("signed"), ref, ratio)  # signed: on the verdict's scale
        # a twin of a group-vs-background metric compares d(background, group): report group - background
        flip = -1.0 if sspec.name.endswith("\x00signed") and sspec.generalized != "PCM" else 1.0
        parts, counts = [], {}
        for g, t in terms:
            v = values.get((r["attribute"], g, t, sspec.name, r["class"], r["group"]))
            v = None if v is None else flip * v
            dist = _distance(v, ref, ratio)
            if dist is None:
                parts.append(f"{t} –")
                continue
            if abs(dist) < ROUND_OFF:
                dist = 0.0
            agree, known = counts.get(g, (0, 0))
            same = claimed is not None and claimed != 0 and np.sign(dist) == np.sign(claimed)
            counts[g] = (agree + bool(same), known + 1)
            parts.append(f"{t} {v:.3g}" if ratio else f"{t} {dist:+.3g}" if dist else f"{t} 0")
        said = [f"{k} of {n}" if len(counts) == 1 else f"{g}: {k} of {n}" for g, (k, n) in counts.items()]
        out.at[idx, "terms_agree"] = "; ".join(said) if said else None
        out.at[idx, "term_effects"] = "; ".join(parts).replace("-", "−")
    return out


def _term_values(data, wanted: dict, attr, grp, term, *, max_tuples, seed, group_order_override, weighting) -> dict:
    """{(attribute, group, term, metric, class, row group): value} of the
    metrics ``wanted`` {(attribute, group, term): {name: spec}}, each on
    the attribute's examples with ``group`` kept to ``term``, in the
    attribute's own group order (keeping one term can change which group
    appears first, and with it how a pair is labelled and oriented).

    Where the closed form can weigh the kept term as the kept rows would
    weigh (:func:`_weighted_term_values`), every kept term of an attribute
    is one row of term weights, all computed at once; the others are
    evaluated again on the kept rows."""
    values: dict = {}
    rest = dict(wanted)
    from ..families import family_of

    if family_of(data).fast_bootstrap:
        for a in dict.fromkeys(a for a, _, _ in wanted):
            done = _weighted_term_values(data, a, {k: v for k, v in wanted.items() if k[0] == a}, values,
                                         max_tuples=max_tuples, seed=seed,
                                         group_order_override=group_order_override, weighting=weighting)
            for k in done:
                rest.pop(k)
    orders: dict = {}
    for (a, g, t), sp in rest.items():
        if a not in orders:
            orders[a] = group_order(data.frame, a, group_order_override)
        sub = data.take(np.flatnonzero((attr == a) & ~((grp == g) & (term != t))))
        got = metric_row_dicts(sub, metrics=list(sp.values()), attributes=[a], max_tuples=max_tuples, seed=seed,
                               group_order_override={**(group_order_override or {}), a: orders[a]},
                               weighting=weighting)
        for r in got:
            v = r["value"]
            if isinstance(r["group"], str):
                values[(a, g, t, r["metric"], r["class"], r["group"])] = None if v is None or pd.isna(v) else float(v)
    return values


def _weighted_term_values(data, a, wanted: dict, values: dict, *, max_tuples, seed, group_order_override,
                          weighting) -> list:
    """The kept terms of attribute ``a`` that the bootstrap's closed form
    computes (:func:`~bias_suite.stats.bootstrap.fast.fast_attribute`, every
    template weighing 1): group g kept to term t is the term weights with
    g's other terms at 0 and t at c, where c makes t weigh in each template
    what the kept rows weigh there. Under ``balanced`` weighting a kept
    group counts once per template, so c = (g's examples in the template) /
    (t's examples in it), which must be the same whole number in every
    template that holds t (one form of every term per template, or every
    term once, gives the size of t's block); under ``pooled`` weighting,
    c = 1. Kept terms without such a c, or with a metric outside the closed
    form, are left to the caller. Where a template's counterfactual tuples
    were sampled, the kept term reads the sampled tuples that hold it.
    Fills ``values``; returns the (attribute, group, term) keys done."""
    from ..metrics.engine import metric_input_kind
    from ..suites.views import counterfactual_view
    from ._common import single_threaded_blas
    from .bootstrap import prepare_attribute
    from .bootstrap.fast import fast_attribute
    from .bootstrap.prepared import fast_supported
    from .bootstrap.terms import attribute_terms

    at = attribute_terms(data.frame, a)
    if not at.known or at.n_terms == 0:
        return []
    rows = np.flatnonzero(data.frame["attribute"].to_numpy(dtype=object) == a)
    tpl, _ = pd.factorize(pd.Series(data.frame["template"].to_numpy(dtype=object)[rows], dtype=object), sort=False)
    if tpl.size and tpl.min() < 0:
        return []
    J = int(tpl.max()) + 1 if tpl.size else 0
    per_term = np.zeros((at.n_terms, J))  # examples of each term in each template
    np.add.at(per_term, (at.codes, tpl), 1.0)
    gnames, gcode = np.unique(at.group.astype(str), return_inverse=True)
    per_group = np.zeros((len(gnames), J))
    np.add.at(per_group, gcode, per_term)
    reqs, weights = [], []
    for (_, g, t), sp in wanted.items():
        on = np.flatnonzero((at.group == g) & (at.name == t))
        if on.size != 1 or not all(fast_supported(s) for s in sp.values()):
            continue
        held = per_term[on[0]] > 0
        if weighting == "balanced":
            ratio = per_group[gcode[on[0]], held] / per_term[on[0], held]
            c = ratio[0] if ratio.size else 0.0
            if not ratio.size or not np.all(ratio == c) or c != round(c):
                continue
        else:
            c = 1.0
        T = np.ones(at.n_terms, dtype=np.int64)
        T[at.group == g] = 0
        T[on[0]] = int(c)
        reqs.append(((a, g, t), sp))
        weights.append(T)
    if not reqs:
        return []
    cf = counterfactual_view(data.frame, max_tuples=max_tuples, seed=seed,
                             group_order_override=group_order_override)[a]
    by_kind: dict = {}  # the metrics of each input the family gives (a classifier: one)
    for s in {n: s for _, sp in reqs for n, s in sp.items()}.values():
        by_kind.setdefault(metric_input_kind(data, s)[0], []).append(s)
    got: dict = {}
    for kind, specs in by_kind.items():
        if kind is None:
            continue
        prep = prepare_attribute(data, cf, a, group_order_override, weighting, at, probabilities=kind)
        with single_threaded_blas():
            got.update(fast_attribute(prep, specs, np.ones((len(reqs), prep.J), dtype=np.int64),
                                      np.vstack(weights))[0])
    for (m, c_, rg), v in got.items():
        if not isinstance(rg, str):
            continue
        for i, ((_, g, t), sp) in enumerate(reqs):
            if m in sp:
                x = float(v[i])
                values[(a, g, t, m, c_, rg)] = x if np.isfinite(x) else None
    return [k for k, _ in reqs]


def _is_auc(spec) -> bool:
    return spec.baseline == "overall_auc"


def _is_ratio(spec) -> bool:
    return spec.scale == "ratio"


def term_sizes(data, chosen: dict) -> dict:
    """{(attribute, group): terms per resampled block} for the blocks of
    ``chosen`` ({attribute: blocks}, :func:`~bias_suite.stats.bootstrap.terms.selected_blocks`);
    a group with blocks of several sizes gets the smallest."""
    from .bootstrap.terms import attribute_terms

    out: dict = {}
    for a, blocks in chosen.items():
        terms = attribute_terms(data.frame, a)
        if terms.block is None:
            continue
        sizes = np.bincount(terms.block)
        for b in blocks:
            on = terms.block == b
            for g in set(terms.group[on].tolist()):
                k = int(sizes[b])
                out[(a, g)] = min(out.get((a, g), k), k)
    return out


#: degrees of freedom of the templates' part of a standard error (as the verdicts cap them)
TEMPLATE_DF = 20


def _beyond_reading(v, lo, hi, lo2, hi2, ks, confidence):
    """The interval and the t reference of the reading beyond the listed terms.

    The two-way bootstrap's spread beyond the templates' own is the terms'
    part. A bootstrap over k terms estimates their variance with a factor
    (k − 1) / k, and its percentiles are normal ones, while the terms' part
    of a standard error rests on k − 1 degrees of freedom (per group of a
    pair, added): the terms' part is scaled by sqrt(k / (k − 1)) and the
    two parts are combined with Satterthwaite's degrees of freedom. Returns
    (low, high, se_low, se_high, df)."""
    from scipy.special import ndtri, stdtrit  # (the quantiles scipy.stats' norm and t use, without their overhead)

    z = float(ndtri(0.5 + confidence / 2))
    k = min(ks) if ks else None
    df_terms = sum(max(x - 1, 1) for x in ks) if ks else None
    out, ses, dfs = [], [], []
    for h1, h2, sign in ((v - lo, v - lo2, -1), (hi - v, hi2 - v, 1)):
        h1, h2 = max(h1, 0.0), max(h2, h1, 0.0)
        se_t = h1 / z
        se_k2 = (h2 ** 2 - h1 ** 2) / z ** 2
        if k is not None and k >= 2:
            se_k2 *= k / (k - 1)
        se2 = se_t ** 2 + se_k2
        if se2 <= 0:
            df = TEMPLATE_DF
        elif se_k2 > 0 and df_terms:
            df = se2 ** 2 / (se_t ** 4 / TEMPLATE_DF + se_k2 ** 2 / df_terms)
        else:
            df = TEMPLATE_DF
        se = math.sqrt(se2)
        out.append(v + sign * float(stdtrit(df, 0.5 + confidence / 2)) * se)
        ses.append(se)
        dfs.append(df)
    return out[0], out[1], ses[0], ses[1], min(dfs)


def beyond_listed_terms(results: pd.DataFrame, beyond: pd.DataFrame | None, *, confidence: float = 0.95,
                        sizes: dict | None = None) -> pd.DataFrame:
    """Add ``beyond``, ``beyond_low`` and ``beyond_high`` (module doc).
    ``beyond``: the judged results of the two-way bootstrap for the
    attributes whose terms it resamples (their ``signed_low`` and
    ``signed_high``); rows of the other attributes read their own. None:
    no two-way reading was made (the columns stay empty). ``sizes``:
    {(attribute, group): terms per resampled block} (:func:`term_sizes`).

    The reading's interval widens the two-way interval for the few terms
    it resamples (:func:`_beyond_reading`). A claim holds beyond the listed
    terms when that interval excludes the no-bias value on the claim's side
    and its p-value (the signed value over its standard error, Student's t)
    passes the same error control as the claim did: the claim's adjustment
    (q / p) is applied to it (where p is 0, the most cautious one, the
    number of values the control counts). Only claims are read: a
    ``negligible`` or ``inconclusive`` row has nothing to qualify."""
    from scipy.special import stdtr  # Student's t distribution function

    out = _ensure(results.copy())
    if beyond is None or "verdict" not in out.columns or "signed_low" not in out.columns:
        return out
    sizes = sizes or {}
    alpha = 1.0 - confidence
    family = float((results.attrs.get("intervals") or {}).get("family") or 1)
    two_way = {}
    attrs = set()
    if len(beyond) and "signed_low" in beyond.columns:
        attrs = set(beyond["attribute"].dropna())
        for k, lo, hi in zip(beyond[_KEY].itertuples(index=False, name=None), beyond["signed_low"],
                             beyond["signed_high"]):
            two_way[tuple(k)] = (lo, hi)
    p1 = out["p"] if "p" in out.columns else pd.Series(np.nan, index=out.index)
    q1 = out["q"] if "q" in out.columns else pd.Series(np.nan, index=out.index)
    for idx, r, p, q in zip(out.index, out[_KEY + ["verdict", "signed", "signed_low", "signed_high"]]
                            .itertuples(index=False, name=None), p1, q1):
        metric, a, c, g, verdict, v, lo, hi = r
        if verdict not in CLAIMS or _missing(v, lo, hi):
            continue
        lo2, hi2 = (two_way.get((metric, a, c, g), (None, None)) if a in attrs else (lo, hi))
        if _missing(lo2, hi2):
            continue
        ratio = metric_is_ratio(metric)
        to = (lambda x: math.log(x) if x > 0 else -math.inf) if ratio else float  # on the scale judged
        vd, lod, hid, lo2d, hi2d = (to(x) for x in (v, lo, hi, lo2, hi2))
        if not all(np.isfinite([vd, lod, hid, lo2d, hi2d])):
            continue
        ks = [sizes[(a, x)] for x in str(g).split("|") if (a, x) in sizes]
        blo, bhi, se_lo, se_hi, df = _beyond_reading(vd, lod, hid, min(lo2d, lod), max(hi2d, hid), ks, confidence)
        back = (lambda x: math.exp(x)) if ratio else (lambda x: x)
        out.at[idx, "beyond_low"], out.at[idx, "beyond_high"] = back(blo), back(bhi)
        ok = blo > 0 if vd > 0 else bhi < 0
        se = se_lo if vd > 0 else se_hi
        if ok and se > 0 and p is not None and pd.notna(p) and pd.notna(q):
            p_two = float(2 * stdtr(df, -abs(vd) / se))
            factor = q / p if p > 0 else family
            ok = p_two * factor <= alpha
        out.at[idx, "beyond"] = "holds" if ok else "not shown"
    for c in ("beyond_low", "beyond_high"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    return out


def _missing(*xs) -> bool:
    return any(x is None or pd.isna(x) for x in xs)


def metric_is_ratio(name) -> bool:
    try:
        return _is_ratio(get_metric(str(name)))
    except MetricError:
        return False
