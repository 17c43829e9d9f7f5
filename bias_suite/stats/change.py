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
- the AEGs (PosAEG, NegAEG) with a basis: d = |the AEG across templates|, as their verdict;
- other signed values (AccuracyDiff, ...): d = |value|;
- distances in the group view (AvgGF, judged one-sided): d = value;
- distances in the counterfactual view (AvgIF, PertSD, PertSR): d = value,
  but such a change can claim nothing (noise alone moves a distance);
- accumulated sums of |parts| (FNED, CFGap over all groups or pairs): d =
  the sum, and the change is decided by its parts.

the change is :math:`\Delta = d_\text{candidate} - d_\text{baseline}`
(both distances are columns: ``distance_baseline``, ``distance_candidate``)
(negative: closer to no bias), per resample :math:`\Delta_b` from the paired
replicates, and its percentile interval. :func:`bias_suite.stats.verdicts.decide`
judges it as a signed value with no-bias value 0 and the row's tau, and the
claims are controlled together (:func:`bias_suite.stats.verdicts.control_claims`,
the verdicts' default, duplicates and mirrors counted once). Then ``change`` is

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
from collections import Counter

import numpy as np
import pandas as pd

from ..exceptions import MetricError
from ..metrics.catalog import get_metric
from ..metrics.comparisons import ROUND_OFF
from ..metrics.generalized import GENERALIZED
from ..metrics.materiality import RATIO_BAND
from .evidence import MIN_EVENT_TEMPLATES
from .verdicts import MAX_DF, MAX_UNDEFINED_SHARE, MIN_N, MIN_TEMPLATES, control_claims, decide, no_bias_reference

__all__ = ["paired_changes", "CHANGES", "CHANGE_COLUMNS", "KEY_COLUMNS", "SCALES"]

#: the four words, most urgent first (the order of findings and of the grid's "worst change")
CHANGES = ("worsened", "improved", "inconclusive", "unchanged")
#: the columns that identify a row (as in the results)
KEY_COLUMNS = ["metric", "family", "view", "attribute", "class", "group"]
CHANGE_COLUMNS = KEY_COLUMNS + ["value_baseline", "value_candidate", "delta", "verdict_baseline", "verdict_candidate",
                                "threshold", "scale", "distance_baseline", "distance_candidate", "change_value",
                                "ci_low", "ci_high", "change", "reason"]
#: what the distance from the no-bias value is, per scale
SCALES = {
    "basis": "|signed difference|", "auc": "|AUC(group) − AUC(all)|", "log": "|log ratio|", "abs": "|value|",
    "value": "value (a distance)", "distance": "value (a counterfactual distance)", "parts": "sum of |parts|",
    "bernstein": "|disparity| (no paired interval)", "none": "no paired interval",
}
_NO_INTERVAL = ("bernstein", "none")


def _isnull(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def _fmt(x) -> str:
    return "–" if x is None or not np.isfinite(x) else (f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}")


def _floats(col) -> np.ndarray:
    return pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)


def _joined(base: pd.DataFrame, cand: pd.DataFrame) -> pd.DataFrame:
    """The judged rows present in both, one row each (columns suffixed _b, _c)."""
    judged = lambda r: r[r["verdict"].notna()] if "verdict" in r.columns else r.iloc[0:0]
    fill = lambda df: judged(df).assign(_g=lambda d: d["group"].map(lambda g: g if isinstance(g, str) else ""))
    on = [k for k in KEY_COLUMNS if k != "group"] + ["_g"]
    keep = on + ["value", "verdict", "threshold", "n"]
    b, c = (fill(x).reset_index(drop=True) for x in (base, cand))
    return b[[k for k in keep if k in b.columns]].merge(c[[k for k in keep if k in c.columns]], on=on, how="inner",
                                                         suffixes=("_b", "_c"), sort=False)


def _with_bootstrap(m: pd.DataFrame, bs, side: str) -> pd.DataFrame:
    """``m`` with one model's verdict basis (templates, events, undefined
    share, the signed basis) and the row of its replicates (-1: none)."""
    cols = ["undefined", "templates", "event_templates", "basis_value", "basis_low", "basis_high"]
    key = ["attribute", "metric", "class", "_g"]
    if bs is not None and bs.basis is not None and len(bs.basis):
        bf = bs.basis.assign(_g=bs.basis["group"].map(lambda g: g if isinstance(g, str) else ""))
        bf = bf[key + cols].drop_duplicates(key)
    else:
        bf = pd.DataFrame(columns=key + cols)
    if bs is not None and bs.keys is not None and len(bs.keys):
        kf = bs.keys.assign(_g=bs.keys["group"].map(lambda g: g if isinstance(g, str) else ""),
                            rep=np.arange(len(bs.keys)))[key + ["rep"]].drop_duplicates(key)
    else:
        kf = pd.DataFrame(columns=key + ["rep"])
    out = m.merge(bf, on=key, how="left", sort=False).merge(kf, on=key, how="left", sort=False)
    out["rep"] = _floats(out["rep"])
    out["rep"] = np.where(np.isfinite(out["rep"]), out["rep"], -1).astype(np.int64)
    return out.rename(columns={c: f"{c}{side}" for c in cols + ["rep"]})


def _plan(family: str, metric: str, attribute, cls, group: str, basis: tuple, specs: dict, siblings: set,
          kinds: dict) -> str:
    """The scale a row's change is measured on (a key of :data:`SCALES`),
    following the verdict's own choice (:func:`bias_suite.stats.verdicts.add_verdicts`);
    ``basis``: whether each model has a signed basis for it."""
    if family == "bernstein":
        return "bernstein"
    if family not in GENERALIZED:
        return "none"
    if metric not in kinds:  # looked up once per metric
        spec = specs.get(metric)
        if spec is None:
            try:
                spec = get_metric(metric)
            except MetricError:
                spec = None
        kinds[metric] = (spec, None if spec is None else no_bias_reference(spec)[0])
    spec, kind = kinds[metric]
    if spec is None:
        return "none"
    if kind == "auc" or (any(basis) and kind in ("signed", "unsigned")):
        return ("auc" if kind == "auc" else "basis") if all(basis) else "none"
    if kind == "ratio":
        return "log"
    if kind == "signed":
        return "abs"
    if not group and spec.generalized in ("PCM", "BCM") and (metric, attribute, cls) in siblings:
        return "parts"
    return "distance" if spec.view == "counterfactual" else "value"


def _distance(plan: str, x):
    """Distance from b of values ``x`` on ``plan``'s scale."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if plan == "log":  # as the verdicts: a ratio of 0 is log 1e-12
            return np.abs(np.log(np.maximum(np.where(x >= 0, x, np.nan), 1e-12)))
        if plan in ("basis", "auc", "abs", "bernstein"):
            return np.abs(x)
        return x


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
    (rows with :data:`CHANGE_COLUMNS`, the error control's sizes ``{"family": m, "units": U,
    "selected": R}``).
    """
    specs = {get_metric(m).name: get_metric(m) for m in (metrics or []) if not isinstance(m, str)}
    m = _joined(base, cand)
    if m.empty:
        return pd.DataFrame(columns=CHANGE_COLUMNS), 0
    m = _with_bootstrap(_with_bootstrap(m, base_bs, "_b"), cand_bs, "_c")
    R = len(m)
    col = {c: m[c].to_numpy(dtype=object) for c in ("metric", "family", "view", "attribute", "class", "_g")}
    has = {s: np.isfinite(_floats(m[f"basis_value{s}"])) & np.isfinite(_floats(m[f"basis_low{s}"]))
           & np.isfinite(_floats(m[f"basis_high{s}"])) for s in ("_b", "_c")}
    siblings = set(zip(col["metric"][col["_g"] != ""], col["attribute"][col["_g"] != ""], col["class"][col["_g"] != ""]))
    kinds: dict = {}
    plan = np.array([_plan(f, mt, a, c, g, (hb, hc), specs, siblings, kinds) for f, mt, a, c, g, hb, hc in zip(
        col["family"], col["metric"], col["attribute"], col["class"], col["_g"], has["_b"], has["_c"])], dtype=object)
    on_basis = np.isin(plan, ["basis", "auc"])
    obs = {}
    for s in ("_b", "_c"):  # the observed distances from b
        v = np.where(on_basis, _floats(m[f"basis_value{s}"]), _floats(m[f"value{s}"]))
        v = np.where((plan == "log") & ~(v > 0), np.nan, v)  # a ratio of 0 or less cannot be judged
        obs[s] = np.full(R, np.nan)
        for p in pd.unique(plan):
            rows = plan == p
            obs[s][rows] = _distance(p, v[rows])
    d = obs["_c"] - obs["_b"]
    d[np.isin(plan, list(_NO_INTERVAL[1:]))] = np.nan
    B = 0 if base_bs is None or base_bs.replicates is None else base_bs.replicates.shape[1]
    rep_b, rep_c = m["rep_b"].to_numpy(), m["rep_c"].to_numpy()
    interval = ~np.isin(plan, list(_NO_INTERVAL)) & (rep_b >= 0) & (rep_c >= 0) & (B > 0)
    D = np.full((R, max(B, 1)), np.nan)  # the paired change per resample
    for p in pd.unique(plan[interval]):  # one array operation per scale
        rows = np.flatnonzero(interval & (plan == p))
        src = "basis_replicates" if p in ("basis", "auc") else "replicates"
        D[rows] = _distance(p, getattr(cand_bs, src)[rep_c[rows]]) - _distance(p, getattr(base_bs, src)[rep_b[rows]])
    lo, hi, undefined = _intervals(D, interval, confidence)
    tau = np.where(plan == "log", math.log(RATIO_BAND), _floats(m["threshold_b"]))
    tau = np.where(tau > 0, tau, np.nan)
    why, templates, df = _evidence(m, undefined)
    claim = interval & np.isfinite(d) & np.isfinite(lo) & np.isfinite(hi) & np.isfinite(tau) \
        & np.array([w is None for w in why]) & ~np.isin(plan, ["distance", "parts"])
    decided: list = [None] * R
    for i in np.flatnonzero(claim):
        t = None if not np.isfinite(templates[i]) else int(templates[i])
        x = decide(float(d[i]), float(lo[i]), float(hi[i]), kind="signed", tau=float(tau[i]), baseline=0.0,
                   confidence=confidence, templates=t, what="the change", df=None if df[i] < 1 else int(df[i]))
        x["before"] = x["verdict"]
        decided[i] = x
    sizes = control_claims([{"attribute": a, "group": g or None, "family": f}
                            for a, g, f in zip(col["attribute"], col["_g"], col["family"])],
                           decided, alpha=1.0 - confidence, method=multiplicity)
    family = sizes["family"]
    vb, vc = _floats(m["value_b"]), _floats(m["value_c"])
    ver_b, ver_c = m["verdict_b"].to_numpy(dtype=object), m["verdict_c"].to_numpy(dtype=object)
    words, reasons = zip(*(_change(plan[i], col["family"][i], d[i], lo[i], hi[i], interval[i], tau[i], why[i],
                                   decided[i], ver_b[i], ver_c[i], np.isnan(vb[i]), np.isnan(vc[i]), multiplicity,
                                   family, 1.0 - confidence) for i in range(R)))
    out = pd.DataFrame({
        **{k: col[k] for k in ("metric", "family", "view", "attribute", "class")},
        "group": [g or None for g in col["_g"]], "value_baseline": vb, "value_candidate": vc, "delta": vc - vb,
        "verdict_baseline": m["verdict_b"].to_numpy(object), "verdict_candidate": m["verdict_c"].to_numpy(object),
        "threshold": tau, "scale": [SCALES[p] for p in plan],
        "distance_baseline": np.where(np.isfinite(d), obs["_b"], np.nan),
        "distance_candidate": np.where(np.isfinite(d), obs["_c"], np.nan), "change_value": d,
        "ci_low": np.where(interval, lo, np.nan), "ci_high": np.where(interval, hi, np.nan),
        "change": list(words), "reason": list(reasons)}, columns=CHANGE_COLUMNS)
    out["group"] = out["group"].astype(object).where(out["group"].notna(), None)
    return _by_parts(out), sizes


def _intervals(D: np.ndarray, has: np.ndarray, confidence: float):
    """Percentile intervals of the rows of D with a paired interval; the share of undefined resamples."""
    R = D.shape[0]
    lo, hi = np.full(R, np.nan), np.full(R, np.nan)
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


def _evidence(m: pd.DataFrame, undefined: np.ndarray):
    """Per row: why the change cannot be judged on its data (None: it can),
    the templates it rests on and the degrees of freedom of its p-value (the
    clusters less one, the event templates where fewer; 0: normal)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN pairs stay NaN
        t = np.fmin(_floats(m["templates_b"]), _floats(m["templates_c"]))
        e = np.fmax(_floats(m["event_templates_b"]), _floats(m["event_templates_c"]))
        u = np.fmax(np.fmax(_floats(m["undefined_b"]), _floats(m["undefined_c"])), undefined)
        n = np.fmin(_floats(m["n_b"]), _floats(m["n_c"])) if "n_b" in m.columns else np.full(len(m), np.nan)
    group_view = (m["view"] == "group").to_numpy()
    why = [None] * len(m)
    for i in np.flatnonzero((t < MIN_TEMPLATES) | (e < MIN_EVENT_TEMPLATES) | (u > MAX_UNDEFINED_SHARE)
                            | (group_view & (n < MIN_N))):
        if t[i] < MIN_TEMPLATES:
            why[i] = f"only {int(t[i])} templates (the intervals need at least {MIN_TEMPLATES})"
        elif e[i] < MIN_EVENT_TEMPLATES:
            k = int(e[i])
            why[i] = (f"rests on events in only {k} template{'s' if k != 1 else ''} in either model (at least "
                      f"{MIN_EVENT_TEMPLATES} are needed): too few to judge the change")
        elif u[i] > MAX_UNDEFINED_SHARE:
            why[i] = f"undefined in {u[i]:.0%} of the template resamples (an interval without them would be too narrow)"
        else:
            why[i] = f"only {int(n[i])} examples (fewer than {MIN_N})"
    clusters = np.where(np.isfinite(e), np.fmin(t, e), t)
    df = np.where(np.isfinite(clusters) & (clusters >= 2), np.minimum(clusters - 1, MAX_DF), 0)  # as the verdicts
    return why, t, df


def _change(plan, family, d, lo, hi, interval, tau, why, dec, verdict_b, verdict_c, null_b, null_c, method, m,
            alpha) -> tuple[str, str]:
    """The change word of one row and its reason."""
    if not np.isfinite(d):
        if plan == "none":
            what = "a significance test" if family == "significance" else "this value"
            return "inconclusive", (f"{what} is not resampled, so it has no paired interval; its verdicts: "
                                    f"{verdict_b} → {verdict_c}")
        who = [n for n, x in (("the baseline", null_b), ("the candidate", null_c)) if x]
        if plan in ("basis", "auc") and not who:
            who = ["one model's signed basis"]
        return "inconclusive", f"undefined for {' and '.join(who) or 'one model'}: no change to judge"
    if plan == "bernstein":
        return "inconclusive", (f"a Bernstein bound is not resampled, so it has no paired interval; the distance "
                                f"from 0 moved by {_fmt(d)} ({verdict_b} → {verdict_c})")
    if plan == "parts":
        return "inconclusive", ""  # decided from its parts (_by_parts)
    if not interval or not np.isfinite(tau):
        return "inconclusive", f"the change is {_fmt(d)} but has no interval to judge it by"
    if why is not None:
        return "inconclusive", why
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "inconclusive", f"the change is {_fmt(d)} but is undefined in most template resamples"
    iv = f"{_fmt(d)} [{_fmt(lo)}, {_fmt(hi)}]"
    shown = f"the change, {iv} (τ = {_fmt(tau)}),"
    tol = ROUND_OFF * max(1.0, tau)
    within = lo >= -tau - tol and hi <= tau + tol
    if plan == "distance":
        if within:
            return "unchanged", f"{shown} lies within ±τ"
        return "inconclusive", (f"{shown} reaches past ±τ, and a distance that noise alone makes positive cannot "
                                "show a change of bias (the signed metrics of the view decide)")
    label = {"bh": "q", "holm": "Holm-adjusted p"}.get(method, "adjusted p")
    adj = f"{label} = {dec['q']:.2g}, {m} values" if dec.get("q") is not None else ""
    closer = "closer to" if d < 0 else "further from"
    before, after = dec["before"], dec["verdict"]
    if after == "material":
        return ("improved" if d < 0 else "worsened"), f"{closer} no bias by {_fmt(abs(d))}, at least τ = {_fmt(tau)}, and real ({adj})"
    what = {"bh": "a false-discovery rate", "holm": "a family-wise error rate"}.get(
        method, "the hierarchical control (groups and pairs family-wise, their values by false-discovery rate)")
    if before == "material":  # demoted by the error control
        return "inconclusive", f"{shown} reaches τ but does not pass the error control at {what} of {alpha:.0%} ({adj})"
    if within and after == "small":
        return "unchanged", f"a real change, {iv}, {closer} no bias, but smaller than τ = {_fmt(tau)}"
    if within:
        return "unchanged", f"{shown} lies within ±τ"
    if after == "small":
        return "inconclusive", f"a real change, {iv}, but its interval reaches past ±τ = {_fmt(tau)}"
    if before == "small":
        return "inconclusive", (f"{shown} reaches past ±τ, and its departure from 0 does not pass the error control "
                                f"at {what} of {alpha:.0%} ({adj})")
    tail = dec.get("reason", "").split(";", 1)
    more = tail[1].strip() if len(tail) > 1 else "more data would decide it"
    return "inconclusive", f"{shown} holds 0 and reaches past ±τ; {more}"


def _by_parts(out: pd.DataFrame) -> pd.DataFrame:
    """An accumulated sum of |parts| changes as its parts do: worsened when
    one part worsened, else improved when one improved, else unchanged when
    all are, else inconclusive."""
    sums = np.flatnonzero(((out["scale"] == SCALES["parts"]) & out["change_value"].notna()).to_numpy())
    if not sums.size:
        return out
    key = ["family", "view", "metric", "attribute", "class"]
    keys = list(zip(*(out[k].to_numpy(dtype=object) for k in key)))
    groups, changes = out["group"].to_numpy(dtype=object), out["change"].to_numpy(dtype=object).copy()
    size = np.abs(out["change_value"].to_numpy(dtype=float))
    parts: dict = {}
    for i, g in enumerate(groups):
        if isinstance(g, str):
            parts.setdefault(keys[i], []).append(i)
    reasons = out["reason"].to_numpy(dtype=object).copy()
    for i in sums:
        got = parts.get(keys[i], [])
        if not got:
            reasons[i] = "a sum of parts without parts to judge it by"
            continue
        counted = Counter(changes[j] for j in got)
        n = {w: counted.get(w, 0) for w in CHANGES}
        word = ("worsened" if n["worsened"] else "improved" if n["improved"] else
                "unchanged" if n["unchanged"] == len(got) else "inconclusive")
        said = ", ".join(f"{k} {w}" for w, k in n.items() if k)
        pick = [j for j in got if changes[j] == word] or got
        top = max(pick, key=lambda j: size[j] if np.isfinite(size[j]) else -1.0)
        name = "' vs '".join(str(groups[top]).split("|", 1))
        changes[i] = word
        reasons[i] = f"judged by its {len(got)} parts ({said})" + (f"; largest: '{name}'" if word != "unchanged" else "")
    out["change"], out["reason"] = changes, reasons
    return out
