"""Percentile intervals of the bootstrap's replicates into the results,
with the verdict basis beside them, and the interval that cannot collapse
for rates whose resampling degenerates (the exact paired bound of
:func:`bias_suite.stats.evidence.paired_bounds`)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ...metrics.generalized import GENERALIZED
from ..evidence import MIN_EVENT_TEMPLATES

__all__ = ["fill", "row_quantiles", "hull", "extend_by", "MAX_UNDEFINED", "NOTE_FRACTION"]

#: undefined-replicate fractions: above NOTE_FRACTION a note, above MAX_UNDEFINED no interval
NOTE_FRACTION = 0.01
MAX_UNDEFINED = 0.5


# --------------------------------------------------------------------------
# percentiles into the results
# --------------------------------------------------------------------------
def row_quantiles(V: np.ndarray, probs, ok: np.ndarray) -> np.ndarray:
    """(len(probs), rows) ``np.quantile`` of each row of ``V`` over its
    entries ``ok`` (NaN for a row without any): the rows with the same
    number of entries in one call (``np.nanquantile`` would take the rows
    with a NaN one by one in Python)."""
    q = np.full((len(probs), V.shape[0]), np.nan)
    n = ok.sum(axis=1)
    for m in np.unique(n[n > 0]):
        rows = np.flatnonzero(n == m)
        q[:, rows] = np.quantile(V[rows][ok[rows]].reshape(rows.size, int(m)), probs, axis=1)
    return q


def fill(results: pd.DataFrame, keys, reps, extra, confidence: float, B: int):
    out = results.copy()
    index = {k: i for i, k in enumerate(keys)}
    alpha = 1.0 - float(confidence)
    defined = np.isfinite(reps)
    frac_undef = 1.0 - defined.mean(axis=1) if reps.size else np.zeros(len(keys))
    probs = [alpha / 2, 1 - alpha / 2]
    q = row_quantiles(reps, probs, defined)
    lows, highs, notes = out["ci_low"].to_numpy(dtype=float).copy(), out["ci_high"].to_numpy(dtype=float).copy(), \
        out["note"].to_numpy(dtype=object).copy()
    basis_q = _basis_quantiles(extra, probs)
    # the rows that get an interval: a generalized metric's non-null value whose replicates exist
    group = [g if isinstance(g, str) else None for g in out["group"]]
    rkeys = list(zip(out["attribute"], out["metric"], out["class"], group))
    at = np.array([index.get(k, -1) for k in rkeys], dtype=np.int64)
    pick = out["family"].isin(GENERALIZED).to_numpy() & (at >= 0) & out["value"].notna().to_numpy()
    pos = np.flatnonzero(pick)
    i = at[pos]
    ex = [extra.get(rkeys[p], {}) for p in pos]
    J = np.array([e.get("templates", 0) for e in ex], dtype=np.int64)
    fu = frac_undef[i] if len(i) else np.zeros(0)
    few, undefined = J < 2, (J >= 2) & (fu > MAX_UNDEFINED)
    good = ~few & ~undefined
    lows[pos[good]], highs[pos[good]] = q[0, i[good]], q[1, i[good]]
    for n in np.flatnonzero(few | undefined | (good & (fu > NOTE_FRACTION))):
        if few[n]:
            msg = f"bootstrap: needs at least 2 templates, found {J[n]}; no interval"
        elif undefined[n]:
            msg = f"bootstrap: undefined in {fu[n]:.0%} of {B} template resamples; no interval"
        else:
            msg = f"bootstrap: undefined in {fu[n]:.0%} of {B} template resamples (dropped from the interval)"
        _add_note(notes, pos[n], msg)
    bq = [basis_q.get(rkeys[p]) if good[n] else None for n, p in enumerate(pos)]
    vals = out["value"].to_numpy(dtype=float)
    _hold_values(pos[good], vals, lows, highs, notes)
    for n in np.flatnonzero(good):  # the signed basis holds its observed value too
        if bq[n] is not None and np.isfinite(ex[n].get("basis_obs", np.nan)):
            v, (lo_, hi_) = float(ex[n]["basis_obs"]), bq[n]
            if lo_ <= v <= hi_:
                continue
            bq[n] = (min(lo_, v), max(hi_, v))
            msg = (f"signed interval extended to its value (the percentile interval lay "
                   f"{'above' if v < lo_ else 'below'} it)")
            _add_note(notes, pos[n], msg)
    paired = [None] * len(pos)
    for n in np.flatnonzero(good):  # rates whose resampling degenerates: at least the exact paired bound
        e, p = ex[n], pos[n]
        pb = e.get("paired")
        if pb is None:
            continue
        paired[n] = pb
        ev = e.get("event_templates")
        few_events = ev is not None and ev < MIN_EVENT_TEMPLATES
        exact = few_events or pb.differing < MIN_EVENT_TEMPLATES
        if not (exact or pb.sparse):
            continue  # (an interval of no width from the same difference in every template is evidence)
        basis_on = bq[n] is not None and np.isfinite(e.get("basis_obs", np.nan))
        lo_, hi_ = bq[n] if basis_on else (lows[p], highs[p])
        absolute = not basis_on and pb.scale == "abs"
        if exact:
            widened = hull(lo_, hi_, pb, absolute=absolute)
            paired[n] = dataclasses.replace(pb, exact=True)
        else:  # one kind of template rests on a few: its own bound added to what the bootstrap held fixed
            widened = extend_by(lo_, hi_, pb.extend, absolute=absolute)
        if basis_on:
            bq[n] = widened
            a, b = abs(widened[0]), abs(widened[1])
            lows[p] = min(lows[p], 0.0 if widened[0] <= 0 <= widened[1] else min(a, b))
            highs[p] = max(highs[p], a, b)
        else:
            lows[p], highs[p] = widened
        if (widened[0], widened[1]) == (lo_, hi_):
            continue  # the bootstrap's interval already holds the bound
        if not exact:
            _add_note(notes, p, f"interval widened by the exact paired bound where the sides differ in {pb.sparse}")
            continue
        why = f"the sides differ in {pb.differing} of {pb.n} templates"
        if few_events:
            why += f"; events in {ev}"
        _add_note(notes, p, f"interval widened to the exact paired bound ({why})")
    basis = pd.DataFrame({
        "metric": [rkeys[p][1] for p in pos], "attribute": [rkeys[p][0] for p in pos],
        "class": [rkeys[p][2] for p in pos], "group": [rkeys[p][3] for p in pos],
        "undefined": fu.astype(float), "templates": J, "event_templates": [e.get("event_templates") for e in ex],
        "B": B, "confidence": float(confidence),
        "terms_resampled": [bool(e.get("terms_resampled", False)) for e in ex],
        "basis": [e["basis"] if b is not None else None for e, b in zip(ex, bq)],
        "basis_value": [float(e["basis_obs"]) if b is not None else None for e, b in zip(ex, bq)],
        "basis_low": [float(b[0]) if b is not None else None for b in bq],
        "basis_high": [float(b[1]) if b is not None else None for b in bq],
        "paired": paired,
    }, columns=["metric", "attribute", "class", "group", "undefined", "templates", "event_templates", "B",
                "confidence", "terms_resampled", "basis", "basis_value", "basis_low", "basis_high", "paired"])
    out["ci_low"], out["ci_high"], out["note"] = lows, highs, notes
    out["note"] = out["note"].astype(object).where(out["note"].notna(), None)
    return out, basis


def _add_note(notes, i: int, msg: str) -> None:
    """Append ``msg`` to the note of row ``i`` (in place), after any note it has."""
    old = notes[i]
    notes[i] = msg if old is None or (isinstance(old, float) and np.isnan(old)) else f"{old}; {msg}"


def _hold_values(rows, vals, lows, highs, notes) -> None:
    """Extend the intervals of ``rows`` (in place) to hold their values. A
    percentile interval can lie wholly on one side of its value: resampling
    adds noise to a distance (the W1 of AvgGF and AvgIF), so every resample's
    distance may exceed the observed one. An interval that does not hold
    its own value would let a value below the threshold be called at least
    the threshold (the whole interval above it); the note says so."""
    v, lo, hi = vals[rows], lows[rows], highs[rows]
    ok = np.isfinite(v) & np.isfinite(lo) & np.isfinite(hi)
    below, above = ok & (v < lo), ok & (v > hi)
    lows[rows[below]], highs[rows[above]] = v[below], v[above]
    for r, side in [(r, "above") for r in rows[below]] + [(r, "below") for r in rows[above]]:
        _add_note(notes, r, f"interval extended to its value (the percentile interval lay {side} it)")


def hull(low: float, high: float, pb, absolute: bool = False) -> tuple[float, float]:
    """The hull of [low, high] and the exact paired bound ``pb``
    (:class:`bias_suite.stats.evidence.PairedBound`), which bounds the signed
    difference or the ratio a row is decided on; ``absolute``: the row is
    an absolute difference without its signed basis, bounded by [0, the
    larger end of the bound]. The bound holds no bias, so the hull does."""
    a, b = pb.low, pb.high
    if absolute:
        a, b = 0.0, max(-a, b)
    return (float(min(low, a)), float(max(high, b)))


def extend_by(low: float, high: float, by: tuple, absolute: bool = False) -> tuple[float, float]:
    """[low, high] moved out by ``by`` = (below ≤ 0, above ≥ 0): a part of
    the difference that the bootstrap held fixed, bounded exactly
    (:attr:`bias_suite.stats.evidence.PairedBound.extend`); ``absolute``: an
    absolute difference without its signed basis, moved out by the larger
    of the two, never below 0."""
    if absolute:
        m = max(-by[0], by[1])
        return (float(max(low - m, 0.0)), float(high + m))
    return (float(low + by[0]), float(high + by[1]))


def _basis_quantiles(extra, probs) -> dict:
    """{key: (low, high)} percentile interval of each signed basis defined in
    at least half of the resamples (and at the observed data), all rows in
    one quantile call (NaN replicates left out)."""
    keys = [k for k, e in extra.items() if "basis_reps" in e and np.isfinite(e["basis_obs"])]
    if not keys:
        return {}
    V = np.vstack([extra[k]["basis_reps"] for k in keys])
    ok = np.isfinite(V)
    use = ok.mean(axis=1) >= 1 - MAX_UNDEFINED
    q = row_quantiles(V, probs, ok & use[:, None])
    return {k: (q[0, i], q[1, i]) for i, k in enumerate(keys) if use[i]}
