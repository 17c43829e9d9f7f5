r"""Verdicts: what an interval says about bias, in careful words.

:func:`add_verdicts` appends a ``verdict`` column (after ``note``) to the tidy
results (FORMATS.md). Every per-group, per-pair and accumulated metric value
with an interval, every adjusted significance p-value and every Bernstein
disparity gets one of three verdicts; every other row gets null:

- ``"bias detected: ..."`` - the interval excludes the no-bias value; for
  signed quantities the text gives the direction ("FNR higher for 'female'
  than all examples", "lower for 'a' than 'b'").
- ``"no evidence of bias at 95% (...)"`` - the interval contains the no-bias
  value *and* is narrow enough to be informative: it lies within the
  tolerance around it. This is not evidence that there is no bias, only that
  a bias larger than the tolerance is not supported; the text never says
  "no bias".
- ``"too little data: ..."`` - the interval contains the no-bias value but is
  too wide to decide, or the value rests on too few examples (``n < min_n``)
  or templates (``< min_templates``), or is undefined in most resamples. The
  text says how many examples would be needed: the Bernstein sample size
  (:func:`bias_suite.stats.bernstein.sample_size`) for the observed effect
  |value - no-bias value| (the tolerance when that is 0) with the worst-case
  defaults C = 1, gamma = 0.5, sigma^2 = (C/gamma)^2 = 4; the note says so.
  Bernstein rows use their own sample-size row (estimated gamma, sigma^2).

No-bias values and what is compared
-----------------------------------
- Differences, gaps, AEG, W1, std, range, Bernstein disparities: 0.
- Ratios (FPR-Ratio, FNR-Ratio, F1-Ratio; any d = ratio): 1, tolerance band
  [1/r, r] with r = ``ratio_tolerance`` (1.25, the four-fifths rule).
- AUCs (SubgroupAUC, BPSN, BNSP): the **overall AUC** of the class on the
  attribute's examples, not 0.5. 0.5 is chance level: an interval above 0.5
  says the model separates the classes, not that it treats a group alike.
  Borkan et al. (2019) read all three against the overall AUC (a subgroup,
  BPSN or BNSP AUC below it signals bias), and with no bias all three equal
  it. The bootstrap computes the paired contrast AUC(group) - AUC(all) on the
  same resamples (the ``basis`` of :func:`bias_suite.stats.bootstrap.bootstrap`);
  without that basis an AUC row gets no verdict.
- Unsigned values with a signed quantity underneath (d = abs of two scalar
  phis: FNED, FPED, FNED*, FPED* per group; TPR-Gap, TNR-Gap, ParityGap,
  DisparityScore(*) per pair): the verdict uses the interval of the signed
  difference phi(group) - phi(background) or phi(first) - phi(second) from the
  same resamples, which gives the direction and avoids the next problem.
- Unsigned values without one (AvgGF and AvgIF (W1), CFGap, PertSS,
  AvgScoreDiff, PertSD/PertSR, accumulated sums of absolute values): a
  percentile bootstrap of an absolute value or a distance is biased away from
  0 and essentially never contains 0, so "excludes 0" would call everything
  biased. These use a one-sided minimum-effect rule instead: "bias detected"
  when the whole interval lies above the tolerance (the bias is at least the
  tolerance at the given confidence), "no evidence" when it lies at or below
  it, "too little data" otherwise. The tolerance of an accumulated value is
  scaled by (number of parts) / N, so that it stays per part.
- Significance rows (family ``significance``): the Holm- (or BH-) adjusted
  p-value decides ("bias detected" when below 1 - confidence, with the
  direction for Wilcoxon from the sign of the rank-biserial r); "too little
  data" when even a perfectly consistent difference could not reach
  significance with that many templates (Wilcoxon: exact minimum p 2/2^n;
  Friedman: chi2.sf(n(k-1), k-1)). Only the adjusted p row gets the verdict.
- Bernstein rows (``Bernstein-<Preset>``): their own interval against 0.

The tolerance (default 0.05, an absolute difference of rates or
probabilities) is the smallest bias worth detecting; set it to what matters
for the application.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import MetricError
from ..metrics.catalog import get_metric
from ..metrics.generalized import GENERALIZED, normalizer_value
from ..metrics.scores import AucScore
from .bernstein import sample_size

__all__ = ["add_verdicts", "judge", "metric_verdict", "significance_verdict", "bernstein_verdict",
           "no_bias_reference", "DEFAULT_TOLERANCE", "DEFAULT_RATIO_TOLERANCE"]

DEFAULT_TOLERANCE = 0.05
DEFAULT_RATIO_TOLERANCE = 1.25
MIN_N = 20
MIN_TEMPLATES = 5

_SCORE_TEXT = {"positive_rate": "positive rate", "gold_prob": "gold-class probability", "recall": "recall"}
_BERNSTEIN_TEXT = {  # delta_bar > 0 means ...
    "DemographicParity": ("predicted '{c}' less often", "predicted '{c}' more often"),
    "EqualOpportunity": ("lower true-positive rate", "higher true-positive rate"),
    "FalsePositiveParity": ("higher false-positive rate", "lower false-positive rate"),
}


# --------------------------------------------------------------------------
# the decision
# --------------------------------------------------------------------------
def judge(low, high, *, kind: str = "signed", reference: float = 0.0, tolerance: float = DEFAULT_TOLERANCE,
          ratio_tolerance: float = DEFAULT_RATIO_TOLERANCE) -> str | None:
    """Classify an interval [low, high].

    kind "signed" (no-bias value ``reference``, band +-tolerance), "ratio"
    (reference 1, band [1/ratio_tolerance, ratio_tolerance]) or "unsigned"
    (one-sided against the tolerance). Returns "higher" / "lower" (the
    interval excludes the reference on that side), "at_least" (unsigned:
    above the tolerance), "no_evidence", "wide", or None (no interval).
    """
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return None
    if kind == "unsigned":
        if low > tolerance:
            return "at_least"
        return "no_evidence" if high <= tolerance else "wide"
    if kind == "ratio":
        reference, lo_band, hi_band = 1.0, 1.0 / ratio_tolerance, ratio_tolerance
    elif kind == "signed":
        lo_band, hi_band = reference - tolerance, reference + tolerance
    else:
        raise MetricError(f"kind must be 'signed', 'ratio' or 'unsigned', got {kind!r}")
    if low > reference:
        return "higher"
    if high < reference:
        return "lower"
    return "no_evidence" if (low >= lo_band and high <= hi_band) else "wide"


def no_bias_reference(spec) -> tuple[str, float]:
    """(kind, no-bias value) of a metric: ("ratio", 1), ("auc", overall AUC
    via the bootstrap contrast: 0 on the contrast), ("signed", 0) or
    ("unsigned", 0)."""
    spec = get_metric(spec)
    sc, d = spec.phi, spec.d
    if isinstance(sc, AucScore) and d.name == "value":
        return "auc", 0.0
    if d.name in ("ratio", "ratio_to_background"):
        return "ratio", 1.0
    if d.signed:
        return "signed", 0.0
    return "unsigned", 0.0


def _fmt(x) -> str:
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def _needed(effect, tolerance, confidence, n):
    """'≈N examples needed to detect a bias of e' and the note on how."""
    e = abs(float(effect)) if effect is not None and np.isfinite(effect) else 0.0
    if e < 1e-12:
        e = tolerance
    try:
        ss = sample_size(e, confidence=confidence)  # gamma 0.5, sigma^2 = (C/gamma)^2, C = 1
    except MetricError:
        return "", None
    have = "" if n is None else f"; n = {int(n)}"
    text = f"about {ss.n} examples needed to detect a bias of {_fmt(e)}{have}"
    if n is not None and n >= ss.n:
        text += " (enough examples: more templates would narrow the interval)"
    note = (f"needed examples: Bernstein sample size (Ethayarajh 2020) for |bias| = {_fmt(e)} at confidence "
            f"{confidence:g} with worst-case defaults C = 1, gamma = 0.5, sigma^2 = (C/gamma)^2 = 4")
    return text, note


def metric_verdict(value, low, high, *, kind: str, direction: tuple[str, str] | None = None, n=None,
                   confidence: float = 0.95, tolerance: float = DEFAULT_TOLERANCE,
                   ratio_tolerance: float = DEFAULT_RATIO_TOLERANCE, basis_value=None, basis_low=None,
                   basis_high=None, templates=None, undefined: float | None = None, what: str = "the value",
                   min_n: int = MIN_N, min_templates: int = MIN_TEMPLATES) -> tuple[str | None, str | None]:
    """Verdict (and a note or None) of one metric value.

    ``kind`` from :func:`no_bias_reference`; ``low``/``high`` its interval;
    ``basis_*`` the signed quantity underneath (signed difference or AUC
    contrast), which decides when given; ``direction`` the texts for
    (higher, lower) of the deciding quantity; ``what`` names an unsigned
    value ("the gap between 'a' and 'b'"); ``templates`` and ``undefined``
    come from the bootstrap.
    """
    if value is None or not np.isfinite(value):
        return None, None
    pct = f"{confidence:.0%}"
    if undefined is not None and undefined > 0.5 and (low is None or not np.isfinite(low)):
        t, note = _needed(None, tolerance, confidence, n)
        return f"too little data: undefined in {undefined:.0%} of the template resamples; {t}", note
    has_basis = basis_low is not None and basis_high is not None and np.isfinite(basis_low) and np.isfinite(basis_high)
    label = ""
    if kind == "auc":
        if not has_basis:
            return None, None
        decide_kind, lo, hi, ref, effect = "signed", basis_low, basis_high, 0.0, basis_value
        label = "AUC(group) - AUC(all) "
    elif has_basis and kind in ("unsigned", "signed"):
        decide_kind, lo, hi, ref, effect = "signed", basis_low, basis_high, 0.0, basis_value
        label = "signed difference "
    elif kind == "ratio":
        decide_kind, lo, hi, ref = "ratio", low, high, 1.0
        effect = basis_value if basis_value is not None else None
    else:
        decide_kind, lo, hi, ref = kind, low, high, 0.0
        effect = value if kind == "unsigned" else value - ref
    if templates is not None and templates < min_templates:
        t, note = _needed(effect, tolerance, confidence, n)
        return f"too little data: only {int(templates)} templates (the bootstrap needs at least {min_templates}); {t}", note
    res = judge(lo, hi, kind=decide_kind, reference=ref, tolerance=tolerance, ratio_tolerance=ratio_tolerance)
    if res is None:
        return None, None
    if n is not None and n < min_n:  # callers pass n only where it counts examples
        t, note = _needed(effect, tolerance, confidence, n)
        return f"too little data: only {int(n)} examples (fewer than {min_n}); {t}", note
    interval = f"{label}interval [{_fmt(lo)}, {_fmt(hi)}]"
    if res in ("higher", "lower"):
        if direction is not None:
            return "bias detected: " + (direction[0] if res == "higher" else direction[1]), None
        return f"bias detected: {'above' if res == 'higher' else 'below'} {_fmt(ref)} ({pct} {interval})", None
    if res == "at_least":
        return f"bias detected: {what} is at least {_fmt(tolerance)} ({pct} {interval})", None
    if res == "no_evidence":
        band = (f"within [{_fmt(1 / ratio_tolerance)}, {_fmt(ratio_tolerance)}]" if decide_kind == "ratio"
                else f"within ±{_fmt(tolerance)} of {_fmt(ref)}" if decide_kind == "signed"
                else f"at or below the tolerance {_fmt(tolerance)}")
        return f"no evidence of bias at {pct} ({interval} {band}; not proof of no bias)", None
    t, note = _needed(effect, tolerance, confidence, n)
    return f"too little data: {pct} {interval} too wide to decide; {t}", note


# --------------------------------------------------------------------------
# significance and Bernstein rows
# --------------------------------------------------------------------------
def _wilcoxon_min_p(n: int) -> float:
    return min(1.0, 2.0 / 2.0 ** n)


def _friedman_min_p(n: int, k: int) -> float:
    from scipy.stats import chi2

    return float(chi2.sf(n * (k - 1), k - 1))


def significance_verdict(p_adj, *, test: str, n=None, k=None, effect=None, groups: Sequence[str] | None = None,
                         confidence: float = 0.95, adjusted: str | None = "holm") -> str | None:
    """Verdict of an adjusted p-value of a Wilcoxon/Friedman test (see the
    module doc). ``effect``: the rank-biserial r (Wilcoxon, for the
    direction); ``groups``: the attribute's groups in order; ``k``: number of
    groups (Friedman)."""
    if p_adj is None or not np.isfinite(p_adj):
        return None
    alpha = 1.0 - confidence
    which = f"{adjusted.upper() if adjusted == 'bh' else adjusted.capitalize()}-adjusted p" if adjusted else "p (unadjusted)"
    if p_adj < alpha:
        if test == "Wilcoxon" and effect is not None and np.isfinite(effect) and effect != 0 and groups and len(groups) == 2:
            hi, lo = (groups[0], groups[1]) if effect > 0 else (groups[1], groups[0])
            return f"bias detected: scores higher for '{hi}' than '{lo}' across templates ({which} = {p_adj:.2g})"
        return f"bias detected: group scores differ across templates ({which} = {p_adj:.2g})"
    if n is not None:
        if test == "Wilcoxon":
            min_p = _wilcoxon_min_p(int(n))
            need = next(m for m in range(1, 200) if _wilcoxon_min_p(m) < alpha)
        elif k is not None and k >= 2:
            min_p = _friedman_min_p(int(n), int(k))
            need = next((m for m in range(1, 10_000) if _friedman_min_p(m, int(k)) < alpha), None)
        else:
            min_p, need = 0.0, None
        if min_p >= alpha:
            return (f"too little data: with {int(n)} templates the {test} test cannot reach p < {alpha:g}"
                    + (f" (needs at least {need})" if need else ""))
    return f"no evidence of bias at {confidence:.0%} ({which} = {p_adj:.2g}; not proof of no bias)"


def bernstein_verdict(value, low, high, *, preset: str, group, cls, n=None, needed=None,
                      confidence: float = 0.95, tolerance: float = DEFAULT_TOLERANCE,
                      min_n: int = MIN_N) -> tuple[str | None, str | None]:
    """Verdict of a ``Bernstein-<Preset>`` row (delta_bar = mean cost of the
    group minus the rest, Bernstein interval); ``needed`` is its
    ``-SampleSize`` value (the bound n must exceed)."""
    if value is None or not np.isfinite(value):
        return None, None
    res = judge(low, high, kind="signed", tolerance=tolerance)
    if res is None:
        return None, None
    pos, neg = _BERNSTEIN_TEXT.get(preset, ("higher cost", "lower cost"))
    if res in ("higher", "lower") and (n is None or n >= min_n):
        text = (pos if res == "higher" else neg).format(c=cls)
        return f"bias detected: {text} for '{group}' than the rest", None
    if res == "no_evidence" and (n is None or n >= min_n):
        return (f"no evidence of bias at {confidence:.0%} (interval [{_fmt(low)}, {_fmt(high)}] within "
                f"±{_fmt(tolerance)}; not proof of no bias)"), None
    have = "" if n is None else f"; n = {int(n)}"
    if needed is not None and np.isfinite(needed):
        return (f"too little data: more than {math.floor(needed)} examples needed for |δ̄| = {_fmt(abs(value))}"
                f"{have}"), ("needed examples: Bernstein sample size with the estimated gamma and sigma^2 of this "
                             "group (Ethayarajh 2020)")
    t, note = _needed(None, tolerance, confidence, n)
    return f"too little data: {t}", note


# --------------------------------------------------------------------------
# whole results
# --------------------------------------------------------------------------
def _isnull(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def _num(v):
    return None if _isnull(v) else float(v)


def _direction(spec, kind, group, cls, pair_names):
    """(higher text, lower text) for the quantity that decides (a value
    above / below the no-bias value)."""
    d = _direction_texts(spec, kind, group, cls, pair_names)
    # d(background, group) = background - group (or background / group) is
    # high when the group is low; AEG(first, second) is high when the second is high
    reverse = ((spec.generalized in ("BCM", "VBCM") and spec.d.name in ("diff", "ratio") and group is not None
                and "|" not in group) or (spec.generalized == "PCM" and spec.d.name == "AEG"))
    return d[::-1] if (d is not None and reverse and kind != "auc") else d


def _direction_texts(spec, kind, group, cls, pair_names):
    sc = spec.phi
    name = _SCORE_TEXT.get(getattr(sc, "name", ""), getattr(sc, "name", "value"))
    if kind == "auc":
        return (f"AUC higher for '{group}' than for all examples", f"AUC lower for '{group}' than for all examples")
    comp = spec.d.name
    if comp == "AEG":
        what = f"probability of '{cls}'"
        bg = "the rest" if spec.background in ("rest", "S\\S^t") else "all examples"
        if group is not None and "|" not in group:
            return (f"{what} higher for '{group}' than {bg}", f"{what} lower for '{group}' than {bg}")
    if group is None:
        if pair_names and len(pair_names) == 1 and spec.generalized == "PCM":
            a, b = pair_names[0].split("|", 1)
            return (f"{name} higher for '{a}' than '{b}'", f"{name} lower for '{a}' than '{b}'")
        return None
    if "|" in group:
        a, b = group.split("|", 1)
        return (f"{name} higher for '{a}' than '{b}'", f"{name} lower for '{a}' than '{b}'")
    bg = "the rest" if spec.background in ("rest", "S\\S^t") else "all examples"
    return (f"{name} higher for '{group}' than {bg}", f"{name} lower for '{group}' than {bg}")


def _what(group):
    if group is None:
        return "the accumulated value"
    if "|" in group:
        a, b = group.split("|", 1)
        return f"the difference between '{a}' and '{b}'"
    return f"the value for '{group}'"


def add_verdicts(results: pd.DataFrame, *, basis: pd.DataFrame | None = None, confidence: float = 0.95,
                 tolerance: float = DEFAULT_TOLERANCE, ratio_tolerance: float = DEFAULT_RATIO_TOLERANCE,
                 group_orders: Mapping[str, Sequence[str]] | None = None, metrics=None,
                 min_n: int = MIN_N, min_templates: int = MIN_TEMPLATES) -> pd.DataFrame:
    """Append (or complete) the ``verdict`` column of tidy results.

    Parameters
    ----------
    results : tidy results; rows that already carry a verdict keep it.
    basis : the ``basis`` frame of :func:`bias_suite.stats.bootstrap.bootstrap`
        (signed differences, AUC contrasts, undefined fractions, templates).
    confidence : the level of the intervals and of the tests (alpha = 1 - confidence).
    tolerance, ratio_tolerance : the smallest bias worth detecting (module doc).
    group_orders : {attribute: groups} (for the direction of Wilcoxon tests).
    metrics : user-defined :class:`MetricSpec` objects that are not registered.

    Returns
    -------
    DataFrame: the rows of ``results`` with a ``verdict`` column after
    ``note``; notes extended where a verdict needs explaining.
    """
    out = results.copy()
    if "verdict" not in out.columns:
        out["verdict"] = None
    cols = [c for c in out.columns if c != "verdict"]
    pos = cols.index("note") + 1 if "note" in cols else len(cols)
    out = out[cols[:pos] + ["verdict"] + cols[pos:]]
    specs = {}
    for m in (metrics or []):
        s = get_metric(m)
        specs[s.name] = s
    bmap = {}
    if basis is not None and len(basis):
        for r in basis.to_dict("records"):
            g = r["group"] if isinstance(r["group"], str) else None
            bmap[(r["metric"], r["attribute"], r["class"], g)] = r
    recs = out.to_dict("records")
    # sibling rows: parts of accumulated values, significance companions, sample sizes
    parts: dict = {}
    sig: dict = {}
    sizes: dict = {}
    for r in recs:
        g = r["group"] if isinstance(r["group"], str) else None
        if r["family"] in GENERALIZED and g is not None:
            parts.setdefault((r["metric"], r["attribute"], r["class"]), []).append(g)
        if r["family"] == "significance":
            sig[(r["attribute"], r["class"], r["metric"])] = r
        if str(r["metric"]).startswith("Bernstein-") and str(r["metric"]).endswith("-SampleSize"):
            sizes[(r["metric"][: -len("-SampleSize")], r["attribute"], r["class"], g)] = r
    verdicts, notes = [], []
    for r in recs:
        v, note = (r["verdict"], None) if not _isnull(r.get("verdict")) else _row_verdict(
            r, specs, bmap, parts, sig, sizes, confidence, tolerance, ratio_tolerance, group_orders, min_n,
            min_templates)
        verdicts.append(v)
        old = r.get("note")
        notes.append(old if note is None else (note if _isnull(old) else f"{old}; {note}"))
    out["verdict"] = pd.Series(verdicts, index=out.index, dtype=object)
    out["note"] = pd.Series(notes, index=out.index, dtype=object)
    out["note"] = out["note"].where(out["note"].notna(), None)
    out["verdict"] = out["verdict"].where(out["verdict"].notna(), None)
    return out


def _row_verdict(r, specs, bmap, parts, sig, sizes, confidence, tolerance, ratio_tolerance, group_orders, min_n,
                 min_templates):
    metric, fam = str(r["metric"]), r["family"]
    g = r["group"] if isinstance(r["group"], str) else None
    n = None if _isnull(r.get("n")) else int(r["n"])
    value = _num(r.get("value"))
    if fam == "significance":
        for suffix in ("-p-holm", "-p-bh"):
            if metric.endswith(suffix):
                test = metric[: -len(suffix)]
                adjusted = suffix[3:]
                break
        else:
            if metric.endswith("-p") and not any(
                    (r["attribute"], r["class"], metric + s) in sig for s in ("-holm", "-bh")):
                test, adjusted = metric[:-2], None
            else:
                return None, None
        eff = sig.get((r["attribute"], r["class"], f"{test}-r"))
        k = None
        groups = list(group_orders.get(r["attribute"], [])) if group_orders else None
        if groups:
            k = len(groups)
        elif test == "Friedman":
            st, w = sig.get((r["attribute"], r["class"], "Friedman")), sig.get((r["attribute"], r["class"], "Friedman-W"))
            if st is not None and w is not None and _num(w["value"]) and n:
                k = int(round(_num(st["value"]) / (_num(w["value"]) * n))) + 1
        return significance_verdict(value, test=test, n=n, k=k, effect=_num(eff["value"]) if eff is not None else None,
                                    groups=groups, confidence=confidence, adjusted=adjusted), None
    if fam == "bernstein":
        if metric.endswith("-SampleSize") or not metric.startswith("Bernstein-"):
            return None, None
        size = sizes.get((metric, r["attribute"], r["class"], g))
        return bernstein_verdict(value, _num(r.get("ci_low")), _num(r.get("ci_high")), preset=metric[len("Bernstein-"):],
                                 group=g, cls=r["class"], n=n, needed=_num(size["value"]) if size is not None else None,
                                 confidence=confidence, tolerance=tolerance, min_n=min_n)
    if fam not in GENERALIZED:
        return None, None
    spec = specs.get(metric)
    if spec is None:
        try:
            spec = get_metric(metric)
        except MetricError:
            return None, None
    kind, _ = no_bias_reference(spec)
    b = bmap.get((metric, r["attribute"], r["class"], g), {})
    siblings = parts.get((metric, r["attribute"], r["class"]), [])
    tol = tolerance
    if g is None and kind == "unsigned" and spec.generalized in ("PCM", "BCM") and siblings:
        k = len(siblings) if spec.generalized == "BCM" else int(round((1 + math.sqrt(1 + 8 * len(siblings))) / 2))
        N = normalizer_value(spec.normalizer, k)
        if N:
            tol = tolerance * len(siblings) / N
    pair_names = [s for s in siblings if "|" in s]
    return metric_verdict(
        value, _num(r.get("ci_low")), _num(r.get("ci_high")), kind=kind,
        direction=_direction(spec, kind, g, r["class"], pair_names), n=n if spec.view == "group" else None,
        confidence=confidence, tolerance=tol,
        ratio_tolerance=ratio_tolerance, basis_value=_num(b.get("basis_value")), basis_low=_num(b.get("basis_low")),
        basis_high=_num(b.get("basis_high")), templates=b.get("templates"), undefined=b.get("undefined"),
        what=_what(g), min_n=min_n, min_templates=min_templates)
