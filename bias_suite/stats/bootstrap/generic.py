"""The generic path of the cluster bootstrap: build each resample's data
(rows of template j repeated ``W[b, j]`` times as distinct template copies,
in each copy a row of term t repeated ``T[b, t]`` times, the observed tuples
repeated with them) and evaluate it with the engine's own code. Slower than
the closed form and correct by construction: the tests check that both
give the same replicate values (:mod:`bias_suite.stats.bootstrap`).
"""
from __future__ import annotations

import numpy as np

from ...metrics.comparisons import get_comparison
from ...metrics.engine import metric_rows
from ...metrics.generalized import AttributeData
from .prepared import Prepared
from .term_kernels import ACROSS_TEMPLATES, aeg_without_copy_pairs

__all__ = ["resampled_attribute", "generic_attribute"]


# --------------------------------------------------------------------------
def resampled_attribute(prep: Prepared, w: np.ndarray, t: np.ndarray | None = None) -> AttributeData:
    """The attribute's data in one resample: rows of template j repeated
    ``w[j]`` times, each copy a template of its own; the observed tuples of a
    complete template repeated with its copies. With term weights ``t``
    (n_terms,): in each copy, a row of term t repeated ``t[t]`` times, and
    each observed tuple once per combination of its members' copies."""
    if t is not None:
        return _resampled_with_terms(prep, w, t)
    ad = prep.ad
    w = np.asarray(w, dtype=np.int64)
    n = len(ad.g)
    reps = w[prep.tpl] if n else np.zeros(0, np.int64)
    new_rows = np.repeat(np.arange(n), reps)
    start = np.cumsum(reps) - reps
    copy = np.arange(new_rows.size) - start[new_rows]
    wc = w[prep.complete_idx] if len(prep.complete_idx) else np.zeros(0, np.int64)
    comp_start = np.cumsum(wc) - wc
    rt = ad.row_template[new_rows]
    new_rt = np.where(rt >= 0, comp_start[np.maximum(rt, 0)] + copy if wc.size else -1, -1)
    templates = [f"{ad.templates[j]}#{r}" for j in range(len(wc)) for r in range(int(wc[j]))]
    tt = ad.tuple_template
    if len(tt):
        tw = wc[tt]
        idx = np.repeat(np.arange(len(tt)), tw)
        tcopy = np.arange(idx.size) - (np.cumsum(tw) - tw)[idx]
        tuples = start[ad.tuples[idx]] + tcopy[:, None]
        tuple_template = comp_start[tt[idx]] + tcopy
    else:
        tuples = np.zeros((0, ad.k), dtype=np.int64)
        tuple_template = np.zeros(0, dtype=np.int64)
    y, yhat = ad.y[new_rows], ad.yhat[new_rows]
    return AttributeData(
        attribute=ad.attribute, groups=list(ad.groups), classes=ad.classes, g=ad.g[new_rows], y=y, yhat=yhat,
        counts=lambda c, f=ad.counts: {k: v[new_rows] for k, v in f(c).items()}, item_row=np.arange(new_rows.size), item_P=ad.item_P[new_rows],
        item_y=ad.item_y[new_rows], tuples=tuples.astype(np.int64), tuple_template=tuple_template.astype(np.int64),
        templates=templates, row_template=new_rt.astype(np.int64),
        row_weight=None if ad.row_weight is None else ad.row_weight[new_rows],
    )


def _resampled_with_terms(prep: Prepared, w, t) -> AttributeData:
    """:func:`resampled_attribute` with term weights (rows of template j and
    term t repeated ``w[j] * t[t]`` times; a template copy is complete when
    every group keeps a row in it)."""
    ad = prep.ad
    w, t = np.asarray(w, dtype=np.int64), np.asarray(t, dtype=np.int64)
    n, k = len(ad.g), ad.k
    tr = t[prep.term] if n else np.zeros(0, np.int64)  # each row's term weight
    reps = w[prep.tpl] * tr if n else np.zeros(0, np.int64)
    new_rows = np.repeat(np.arange(n), reps)
    start = np.cumsum(reps) - reps
    copy = np.arange(new_rows.size) - start[new_rows]
    tcopy = copy // np.maximum(tr[new_rows], 1)  # the template copy a repeated row belongs to
    Jc = len(prep.complete_idx)
    rt = ad.row_template
    alive = (rt >= 0) & (tr > 0)
    has = np.bincount(rt[alive] * k + ad.g[alive], minlength=Jc * k).reshape(Jc, k) > 0
    wc = (w[prep.complete_idx] * has.all(axis=1)) if Jc else np.zeros(0, np.int64)
    comp_start = np.cumsum(wc) - wc
    rtn = rt[new_rows]
    ok = rtn >= 0
    ok[ok] = wc[rtn[ok]] > 0
    new_rt = np.where(ok, comp_start[np.maximum(rtn, 0)] + tcopy if Jc else -1, -1)
    templates = [f"{ad.templates[j]}#{r}" for j in range(Jc) for r in range(int(wc[j]))]
    tt = ad.tuple_template
    if len(tt):
        mt = tr[ad.tuples]  # (M, k) members' term weights
        per = np.prod(mt, axis=1)
        cnt = wc[tt] * per
        idx = np.repeat(np.arange(len(tt)), cnt)
        q = np.arange(idx.size) - (np.cumsum(cnt) - cnt)[idx]
        c, rem = q // np.maximum(per[idx], 1), q % np.maximum(per[idx], 1)
        tuples = np.empty((idx.size, k), dtype=np.int64)
        for i in range(k - 1, -1, -1):  # member copies in mixed radix
            base = mt[idx, i]
            s, rem = rem % base, rem // base
            tuples[:, i] = start[ad.tuples[idx, i]] + c * base + s
        tuple_template = comp_start[tt[idx]] + c
    else:
        tuples = np.zeros((0, k), dtype=np.int64)
        tuple_template = np.zeros(0, dtype=np.int64)
    return AttributeData(
        attribute=ad.attribute, groups=list(ad.groups), classes=ad.classes, g=ad.g[new_rows], y=ad.y[new_rows],
        yhat=ad.yhat[new_rows], counts=lambda cl, f=ad.counts: {m: v[new_rows] for m, v in f(cl).items()},
        item_row=np.arange(new_rows.size), item_P=ad.item_P[new_rows], item_y=ad.item_y[new_rows],
        tuples=tuples, tuple_template=tuple_template.astype(np.int64), templates=templates,
        row_template=new_rt.astype(np.int64), row_weight=None if ad.row_weight is None else ad.row_weight[new_rows],
    )


def generic_attribute(prep: Prepared, specs, W, T=None) -> tuple[dict, dict]:
    """({(metric, class, group): (B,) replicate values}, {(metric, class,
    group): verdict basis}) of one attribute by evaluating every resample;
    an AEG row's basis is its AEG across templates (as the fast path's)."""
    B = W.shape[0]
    out: dict = {}
    basis: dict = {}
    for b in range(B):
        adb = resampled_attribute(prep, W[b], None if T is None else T[b])
        for spec in specs:
            for r in metric_rows(spec, adb):
                key = (r["metric"], r["class"], r["group"])
                if key not in out:
                    out[key] = np.full(B, np.nan)
                if r["value"] is not None:
                    out[key][b] = r["value"]
    # the observed data are one more resample (every weight 1) for the AEG basis's observed value
    Wx = np.vstack([W, np.ones((1, W.shape[1]), dtype=W.dtype)])
    Tx = None if T is None else np.vstack([T, np.ones((1, T.shape[1]), dtype=T.dtype)])
    for spec in specs:  # AEG: the pairs between copies of one template are left out, as in the closed form
        if spec.view != "group" or get_comparison(spec.comparison).name != "AEG":
            continue
        observed = {(r["class"], r["group"]): r["value"] for r in metric_rows(spec, prep.ad)}
        for c, cls in (list(enumerate(prep.ad.classes)) if spec.per_class else [(0, "all")]):
            vals = {g: v for (m, cc, g), v in out.items() if m == spec.name and cc == cls}
            ext = {g: np.append(v, np.nan if observed.get((cls, g)) is None else observed[(cls, g)])
                   for g, v in vals.items()}
            across = aeg_without_copy_pairs(prep, spec, c, Wx, ext, Tx, across=True)
            for g, v in aeg_without_copy_pairs(prep, spec, c, W, vals, T).items():
                out[(spec.name, cls, g)] = v
                if g is not None and g in across:
                    basis[(spec.name, cls, g)] = {"basis": ACROSS_TEMPLATES, "basis_reps": across[g][:B],
                                                  "basis_obs": across[g][B]}
    return out, basis
