r"""Did the bias change? The paired change of every judged value between two
models, with its interval and one of four words.

Both models' values come from the same examples, evaluated with the same
settings and the same seed, so the cluster bootstrap draws the same template
resamples for both (:mod:`bias_suite.stats.bootstrap`: the resamples depend
on the examples alone): replicate b of the baseline and replicate b of the
candidate are the same templates. Per judged row, with d the distance from
the no-bias value b on the scale its verdict is decided on
(:mod:`bias_suite.stats.verdicts`):

- the signed basis where the verdict uses one (FNED, TPR-Gap, CFGap, ...:
  the signed difference underneath; Subgroup AUC, BPSN, BNSP: AUC(group) −
  AUC(all)): d = |basis|;
- ratios: d = |log value|, against tau = log 1.25;
- other signed values (PosAEG, AccuracyDiff, ...): d = |value|;
- distances in the group view (AvgGF, judged one-sided): d = value;
- distances in the counterfactual view (AvgIF, PertSD, PertSR): d = value,
  but such a change can claim nothing (noise alone moves a distance);
- accumulated sums of |parts| (FNED, CFGap over all groups or pairs): d =
  the sum, and the change is decided by its parts.

the change is :math:`\Delta = d_\text{candidate} - d_\text{baseline}`
(negative: closer to no bias), per resample :math:`\Delta_b` from the paired
replicates, and its percentile interval. :func:`bias_suite.stats.verdicts.decide`
judges it as a signed value with no-bias value 0 and the row's tau, and the
claims are controlled together (:func:`bias_suite.stats.verdicts.control_claims`,
Holm by default, duplicates and mirrors counted once). Then ``change`` is

- ``improved`` / ``worsened``: |Δ| ≥ tau and the interval excludes 0 (the
  claim passes the error control); improved when Δ < 0;
- ``unchanged``: the interval lies within ±tau (a real change smaller than
  tau is unchanged, and its reason says so);
- ``inconclusive``: anything else: the interval holds 0 and reaches past
  ±tau, a real change whose interval reaches past ±tau, a claim that does
  not pass the error control, a value that rests on too few templates or
  events, or a row with no paired interval (the significance tests and the
  Bernstein rows are not resampled).

The evidence checks of the verdicts apply to the change: fewer than
``MIN_TEMPLATES`` templates, events in fewer than ``MIN_EVENT_TEMPLATES``
templates in both models, more than ``MAX_UNDEFINED_SHARE`` undefined
resamples in either model or in the paired change, fewer than ``MIN_N``
examples (group view): ``inconclusive``.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from ..exceptions import MetricError
from ..metrics.catalog import get_metric
from ..metrics.comparisons import ROUND_OFF
from ..metrics.generalized import GENERALIZED
from ..metrics.materiality import RATIO_BAND
from .evidence import MIN_EVENT_TEMPLATES
from .verdicts import MAX_UNDEFINED_SHARE, MIN_N, MIN_TEMPLATES, control_claims, decide, no_bias_reference

__all__ = ["paired_changes", "CHANGES", "CHANGE_COLUMNS", "KEY_COLUMNS", "SCALES"]

#: the four words, most urgent first (the order of findings and of the grid's "worst change")
CHANGES = ("worsened", "improved", "inconclusive", "unchanged")
#: the columns that identify a row (as in the results)
KEY_COLUMNS = ["metric", "family", "view", "attribute", "class", "group"]
CHANGE_COLUMNS = KEY_COLUMNS + ["value_baseline", "value_candidate", "delta", "verdict_baseline", "verdict_candidate",
                                "threshold", "scale", "change_value", "ci_low", "ci_high", "change", "reason"]
#: what the distance from the no-bias value is, per scale
SCALES = {
    "basis": "|signed difference|", "auc": "|AUC(group) − AUC(all)|", "log": "|log ratio|", "abs": "|value|",
    "value": "value (a distance)", "distance": "value (a counterfactual distance)", "parts": "sum of |parts|",
    "bernstein": "|disparity| (no paired interval)", "none": "no paired interval",
}
_NO_INTERVAL = ("bernstein", "none")


def _isnull(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def _f(v):
    return None if _isnull(v) else float(v)


def _fmt(x) -> str:
    return "–" if x is None else (f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}")


def _gkey(g):
    return g if isinstance(g, str) else None


def _basis_index(bs) -> dict:
    if bs is None or bs.basis is None or not len(bs.basis):
        return {}
    return {(r["attribute"], r["metric"], r["class"], _gkey(r["group"])): r for r in bs.basis.to_dict("records")}


def _key_index(bs) -> dict:
    if bs is None or bs.keys is None:
        return {}
    k = bs.keys
    return {(a, m, c, _gkey(g)): i for i, (a, m, c, g) in
            enumerate(zip(k["attribute"], k["metric"], k["class"], k["group"]))}


def _has_basis(b: dict | None) -> bool:
    return b is not None and all(_f(b.get(c)) is not None for c in ("basis_value", "basis_low", "basis_high"))


def _plan(r: dict, specs: dict, siblings: set, bb: dict | None, bc: dict | None) -> str:
    """The scale a row's change is measured on (a key of :data:`SCALES`),
    following the verdict's own choice (:func:`bias_suite.stats.verdicts.add_verdicts`)."""
    fam = r["family"]
    if fam == "bernstein":
        return "bernstein"
    if fam not in GENERALIZED:
        return "none"
    spec = specs.get(r["metric"])
    if spec is None:
        try:
            spec = get_metric(r["metric"])
        except MetricError:
            return "none"
    kind, _ = no_bias_reference(spec)
    basis = (_has_basis(bb), _has_basis(bc))
    if kind == "auc" or (any(basis) and kind in ("signed", "unsigned")):
        return ("auc" if kind == "auc" else "basis") if all(basis) else "none"
    if kind == "ratio":
        return "log"
    if kind == "signed":
        return "abs"
    if _gkey(r["group"]) is None and spec.generalized in ("PCM", "BCM") and \
            (r["metric"], r["attribute"], r["class"]) in siblings:
        return "parts"
    return "distance" if spec.view == "counterfactual" else "value"


def _distance(plan: str, x):
    """Distance from b of values ``x`` (an array or a number) on ``plan``'s scale."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if plan == "log":
            return np.abs(np.log(np.maximum(np.where(x >= 0, x, np.nan), 1e-12)))
        if plan in ("basis", "auc", "abs", "bernstein"):
            return np.abs(x)
        return x


def _observed(plan, r_b, r_c, bb, bc):
    """(d_baseline, d_candidate) of the observed values (None when undefined)."""
    if plan in ("basis", "auc"):
        vb, vc = _f(bb["basis_value"]), _f(bc["basis_value"])
    else:
        vb, vc = _f(r_b["value"]), _f(r_c["value"])
    if plan == "log":  # a ratio of 0 or less cannot be judged (as in the verdicts)
        vb, vc = (v if v is not None and v > 0 else None for v in (vb, vc))
    if vb is None or vc is None or not (np.isfinite(vb) and np.isfinite(vc)):
        return None, None
    return float(_distance(plan, vb)), float(_distance(plan, vc))


def paired_changes(base: pd.DataFrame, cand: pd.DataFrame, base_bs, cand_bs, *, confidence: float = 0.95,
                   multiplicity: str = "holm", metrics=None) -> tuple[pd.DataFrame, int]:
    """The change of every judged row present in both results.

    Parameters
    ----------
    base, cand : the two models' judged results on the same examples with
        the same settings (:func:`bias_suite.evaluation.evaluate_with_replicates`).
    base_bs, cand_bs : their :class:`~bias_suite.stats.bootstrap.BootstrapResult`
        with replicates (the same seed and examples, so the same resamples).
    confidence : the level of the change's interval and of the error control.
    multiplicity : "holm" or "bh", over the changes that could make a claim.
    metrics : user-defined :class:`~bias_suite.metrics.MetricSpec` objects
        that are not registered.

    Returns
    -------
    (rows with :data:`CHANGE_COLUMNS`, the family size m of the error control).
    """
    specs = {get_metric(m).name: get_metric(m) for m in (metrics or []) if not isinstance(m, str)}
    judged = lambda r: r[r["verdict"].notna()] if "verdict" in r.columns else r.iloc[0:0]
    b, c = judged(base), judged(cand)
    fill = lambda df: df.assign(_g=df["group"].map(lambda g: g if isinstance(g, str) else ""))
    on = [k for k in KEY_COLUMNS if k != "group"] + ["_g"]
    m = fill(b).reset_index(drop=True).merge(fill(c).reset_index(drop=True), on=on, how="inner",
                                             suffixes=("_b", "_c"), sort=False)
    recs = m.to_dict("records")
    if not recs:
        return pd.DataFrame(columns=CHANGE_COLUMNS), 0
    siblings = {(r["metric"], r["attribute"], r["class"]) for r in recs if r["_g"]}
    basis_b, basis_c = _basis_index(base_bs), _basis_index(cand_bs)
    idx_b, idx_c = _key_index(base_bs), _key_index(cand_bs)
    B = 0 if base_bs is None or base_bs.replicates is None else base_bs.replicates.shape[1]
    R = len(recs)
    D = np.full((R, max(B, 1)), np.nan)  # the paired change per resample
    rows = []
    for i, r in enumerate(recs):
        g = r["_g"] or None
        key = (r["attribute"], r["metric"], r["class"], g)
        bb, bc = basis_b.get(key), basis_c.get(key)
        r_b = {"value": r["value_b"]}
        r_c = {"value": r["value_c"]}
        plan = _plan({"family": r["family"], "metric": r["metric"], "group": g, "attribute": r["attribute"],
                      "class": r["class"]}, specs, siblings, bb, bc)
        d_b, d_c = _observed(plan, r_b, r_c, bb, bc) if plan != "none" else (None, None)
        row = {"plan": plan, "key": key, "d": None if d_b is None else d_c - d_b, "bb": bb, "bc": bc,
               "interval": False}
        ib, ic = idx_b.get(key), idx_c.get(key)
        if plan not in _NO_INTERVAL and ib is not None and ic is not None and B:
            src = "basis_replicates" if plan in ("basis", "auc") else "replicates"
            xb, xc = getattr(base_bs, src)[ib], getattr(cand_bs, src)[ic]
            D[i] = _distance(plan, xc) - _distance(plan, xb)
            row["interval"] = True
        rows.append(row)
    lo, hi, undefined = _intervals(D, [r["interval"] for r in rows], confidence)
    decided = []
    for i, (r, row) in enumerate(zip(recs, rows)):
        row.update(lo=lo[i], hi=hi[i], undefined=undefined[i])
        decided.append(_decide(r, row, confidence))
    family = control_claims([{"attribute": r["attribute"], "group": r["_g"] or None} for r in recs],
                            decided, 1.0 - confidence, multiplicity)
    out = []
    for r, row, d in zip(recs, rows, decided):
        out.append(_row(r, row, d, multiplicity, family, 1.0 - confidence))
    _by_parts(out)
    df = pd.DataFrame(out, columns=CHANGE_COLUMNS)
    for col in ("value_baseline", "value_candidate", "delta", "threshold", "change_value", "ci_low", "ci_high"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df["group"] = df["group"].astype(object).where(df["group"].notna(), None)
    return df, family


def _intervals(D: np.ndarray, has: list, confidence: float):
    """Percentile intervals of the rows of D with a paired interval; the share of undefined resamples."""
    R = D.shape[0]
    lo, hi = np.full(R, np.nan), np.full(R, np.nan)
    has = np.asarray(has, dtype=bool)
    finite = np.isfinite(D)
    undefined = np.where(has, 1.0 - finite.mean(axis=1), np.nan)
    alpha = 1.0 - confidence
    probs = [alpha / 2, 1 - alpha / 2]
    full = has & finite.all(axis=1)
    if full.any():  # (np.quantile is vectorised; nanquantile goes row by row)
        lo[full], hi[full] = np.quantile(D[full], probs, axis=1)
    part = has & ~full & finite.any(axis=1)
    if part.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo[part], hi[part] = np.nanquantile(D[part], probs, axis=1)
    return lo, hi, undefined


def _evidence(r: dict, row: dict) -> str | None:
    """Why the change cannot be judged on this row's data (None: it can)."""
    bb, bc = row["bb"] or {}, row["bc"] or {}
    templates = [int(x["templates"]) for x in (bb, bc) if _f(x.get("templates")) is not None]
    if templates and min(templates) < MIN_TEMPLATES:
        return f"only {min(templates)} templates (the intervals need at least {MIN_TEMPLATES})"
    events = [int(x["event_templates"]) for x in (bb, bc) if _f(x.get("event_templates")) is not None]
    if events and max(events) < MIN_EVENT_TEMPLATES:
        return (f"rests on events in only {max(events)} template{'s' if max(events) != 1 else ''} in either model "
                f"(at least {MIN_EVENT_TEMPLATES} are needed): too few to judge the change")
    undefined = [float(x["undefined"]) for x in (bb, bc) if _f(x.get("undefined")) is not None]
    if row["undefined"] is not None and np.isfinite(row["undefined"]):
        undefined.append(float(row["undefined"]))
    if undefined and max(undefined) > MAX_UNDEFINED_SHARE:
        return (f"undefined in {max(undefined):.0%} of the template resamples (an interval without them would be "
                "too narrow)")
    ns = [int(r[k]) for k in ("n_b", "n_c") if _f(r.get(k)) is not None]
    if r["view"] == "group" and ns and min(ns) < MIN_N:
        return f"only {min(ns)} examples (fewer than {MIN_N})"
    return None


def _tau(r: dict, plan: str) -> float | None:
    if plan == "log":
        return math.log(RATIO_BAND)
    t = _f(r.get("threshold_b"))
    return t if t is not None and t > 0 else None


def _decide(r: dict, row: dict, confidence: float) -> dict | None:
    """The change judged as a signed value around 0 (``decide``), or None
    for rows that make no claim (they are decided in :func:`_row`)."""
    plan = row["plan"]
    row["tau"] = tau = _tau(r, plan)
    if row["d"] is None or plan in _NO_INTERVAL or plan == "parts" or not row["interval"] or tau is None:
        return None
    row["why_not"] = _evidence(r, row)
    lo, hi = row["lo"], row["hi"]
    if row["why_not"] is not None or not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    if plan == "distance":
        return None
    bb, bc = row["bb"] or {}, row["bc"] or {}
    t = [int(x["templates"]) for x in (bb, bc) if _f(x.get("templates")) is not None]
    e = [int(x["event_templates"]) for x in (bb, bc) if _f(x.get("event_templates")) is not None]
    templates = min(t) if t else None
    clusters = min(templates, max(e)) if templates is not None and e else templates
    df = clusters - 1 if clusters is not None and clusters >= 2 else None
    d = decide(row["d"], lo, hi, kind="signed", tau=tau, baseline=0.0, confidence=confidence, templates=templates,
               what="the change", df=df)
    d["before"] = d["verdict"]
    return d


def _interval_text(row) -> str:
    return f"{_fmt(row['d'])} [{_fmt(row['lo'])}, {_fmt(row['hi'])}]"


def _row(r: dict, row: dict, d: dict | None, method: str, family: int, alpha: float) -> dict:
    plan, tau = row["plan"], row.get("tau")
    vb, vc = _f(r["value_b"]), _f(r["value_c"])
    out = {k: r[k] for k in KEY_COLUMNS if k != "group"}
    out.update(group=r["_g"] or None, value_baseline=vb, value_candidate=vc,
               delta=None if vb is None or vc is None else vc - vb, verdict_baseline=r["verdict_b"],
               verdict_candidate=r["verdict_c"], threshold=tau, scale=SCALES[plan], change_value=row["d"],
               ci_low=row["lo"] if row["interval"] else None, ci_high=row["hi"] if row["interval"] else None)
    ch, why = _change(r, row, d, method, family, alpha)
    out.update(change=ch, reason=why)
    return out


def _change(r, row, d, method, family, alpha) -> tuple[str, str]:
    plan, tau = row["plan"], row.get("tau")
    if row["d"] is None:
        who = [n for n, v in (("the baseline", r["value_b"]), ("the candidate", r["value_c"])) if _isnull(v)]
        if plan in ("basis", "auc") and not who:
            who = ["one model's signed basis"]
        return "inconclusive", f"undefined for {' and '.join(who) or 'one model'}: no change to judge"
    if plan == "none":
        what = "a significance test" if r["family"] == "significance" else "this value"
        return "inconclusive", (f"{what} is not resampled, so it has no paired interval; its verdicts: "
                                f"{r['verdict_b']} → {r['verdict_c']}")
    if plan == "bernstein":
        return "inconclusive", (f"a Bernstein bound is not resampled, so it has no paired interval; the distance "
                                f"from 0 moved by {_fmt(row['d'])} ({r['verdict_b']} → {r['verdict_c']})")
    if plan == "parts":
        return "inconclusive", ""  # decided from its parts (_by_parts)
    if not row["interval"] or tau is None:
        return "inconclusive", f"the change is {_fmt(row['d'])} but has no interval to judge it by"
    if row.get("why_not"):
        return "inconclusive", row["why_not"]
    if not (np.isfinite(row["lo"]) and np.isfinite(row["hi"])):
        return "inconclusive", f"the change is {_fmt(row['d'])} but is undefined in most template resamples"
    shown = f"the change, {_interval_text(row)} (τ = {_fmt(tau)}),"
    tol = ROUND_OFF * max(1.0, tau)
    within = row["lo"] >= -tau - tol and row["hi"] <= tau + tol
    if plan == "distance":
        if within:
            return "unchanged", f"{shown} lies within ±τ"
        return "inconclusive", (f"{shown} reaches past ±τ, and a distance that noise alone makes positive cannot "
                                "show a change of bias (the signed metrics of the view decide)")
    adj = (f"{'q' if method == 'bh' else 'Holm-adjusted p'} = {d['q']:.2g}, {family} values" if d.get("q") is not None
           else "")
    closer = "closer to" if row["d"] < 0 else "further from"
    before, after = d["before"], d["verdict"]
    if after == "material":
        word = "improved" if row["d"] < 0 else "worsened"
        return word, f"{closer} no bias by {_fmt(abs(row['d']))}, at least τ = {_fmt(tau)}, and real ({adj})"
    what = "a false-discovery rate" if method == "bh" else "a family-wise error rate"
    if before == "material":  # demoted by the error control
        return "inconclusive", f"{shown} reaches τ but does not pass the error control at {what} of {alpha:.0%} ({adj})"
    if within and after == "small":
        return "unchanged", f"a real change, {_interval_text(row)}, {closer} no bias, but smaller than τ = {_fmt(tau)}"
    if within:
        return "unchanged", f"{shown} lies within ±τ"
    if after == "small":
        return "inconclusive", f"a real change, {_interval_text(row)}, but its interval reaches past ±τ = {_fmt(tau)}"
    if before == "small":
        return "inconclusive", (f"{shown} reaches past ±τ, and its departure from 0 does not pass the error control "
                                f"at {what} of {alpha:.0%} ({adj})")
    tail = d.get("reason", "").split(";", 1)
    more = tail[1].strip() if len(tail) > 1 else "more data would decide it"
    return "inconclusive", f"{shown} holds 0 and reaches past ±τ; {more}"


def _by_parts(out: list) -> None:
    """An accumulated sum of |parts| changes as its parts do: worsened when
    one part worsened, else improved when one improved, else unchanged when
    all are, else inconclusive."""
    parts: dict = {}
    for o in out:
        if o["group"] is not None:
            parts.setdefault((o["family"], o["view"], o["metric"], o["attribute"], o["class"]), []).append(o)
    for o in out:
        if o["scale"] != SCALES["parts"] or o["change_value"] is None or _isnull(o["change_value"]):
            continue
        got = parts.get((o["family"], o["view"], o["metric"], o["attribute"], o["class"]), [])
        if not got:
            o["change"], o["reason"] = "inconclusive", "a sum of parts without parts to judge it by"
            continue
        n = {w: sum(p["change"] == w for p in got) for w in CHANGES}
        word = ("worsened" if n["worsened"] else "improved" if n["improved"] else
                "unchanged" if n["unchanged"] == len(got) else "inconclusive")
        said = ", ".join(f"{k} {w}" for w, k in n.items() if k)
        top = max([p for p in got if p["change"] == word] or got,
                  key=lambda p: -1.0 if _isnull(p["change_value"]) else abs(p["change_value"]))
        name = "' vs '".join(str(top["group"]).split("|", 1))
        o["change"] = word
        o["reason"] = (f"judged by its {len(got)} parts ({said})" + (f"; largest: '{name}'" if word != "unchanged" else ""))
