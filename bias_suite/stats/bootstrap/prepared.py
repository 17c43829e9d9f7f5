"""The prepared attribute of the cluster bootstrap's closed form and the
scalar pieces its paths share (:mod:`bias_suite.stats.bootstrap` has the
method and the public API, :mod:`bias_suite.stats.bootstrap.fast` the
per-attribute fast path, :mod:`bias_suite.stats.bootstrap.weighted_items`
the weighted item sets of the set metrics,
:mod:`bias_suite.stats.bootstrap.term_kernels` what the term weights add).

- :class:`Prepared`: one attribute's arrays with every row's template (and
  term, where terms are resampled);
- :func:`scalar_values`: the engine's scalar group metrics on (R, k) arrays
  of phi values, with the signed basis beneath |x|;
- :func:`fast_supported`: which metrics the closed form covers (the
  score's own :meth:`~bias_suite.metrics.scores.Score.closed_form`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...exceptions import MetricError
from ...metrics.catalog import MetricSpec
from ...metrics.comparisons import get_comparison
from ...metrics.generalized import AttributeData, normalizer_value
from ...metrics.scores import get_score

#: resamples per chunk of the set-metric computations (their arrays are resamples x groups x groups)
RESAMPLES_PER_CHUNK = 256

BACKGROUND = {"all": "all", "S": "all", "rest": "rest", "S\\S^t": "rest"}


@dataclass
class Prepared:
    """One attribute: the engine's arrays plus every row's template among all
    of the attribute's templates (complete or not)."""

    ad: AttributeData
    tpl: np.ndarray  # (n,) all-template index per row
    J: int
    complete_idx: np.ndarray  # (Jc,) all-template index of each complete template
    term: np.ndarray | None = None  # (n,) term index per row (bias_suite.stats.bootstrap.terms)
    term_g: np.ndarray | None = None  # (n_terms,) group index (in ad.groups) of each term

    @property
    def n_terms(self) -> int:
        return 0 if self.term_g is None else len(self.term_g)

    def term_onehot(self) -> np.ndarray:
        """(n_terms, k) 1 where a term belongs to a group: group sums of per-term sums."""
        out = np.zeros((self.n_terms, self.ad.k))
        out[np.arange(self.n_terms), self.term_g] = 1.0
        return out


def _nan_where(bad, val):
    val = np.asarray(val, float)
    return np.where(bad | ~np.isfinite(val), np.nan, val)


def scalar_values(spec, ad, score, comp, phi, contrast=None):
    """Mirror of the engine's scalar group metrics on (R, k) phi arrays.
    Returns (values {group label: (R,)}, signed basis {label: (text, (R,))})."""
    gen, k = spec.generalized, ad.k
    gv, gb = phi["group"]
    out, signed = {}, {}
    phi_name = getattr(score, "name", "phi")
    if gen == "PCM":
        N = normalizer_value(spec.normalizer, k)
        pairs = ad.pairs()
        a = np.array([p[0] for p in pairs], dtype=np.int64)
        b = np.array([p[1] for p in pairs], dtype=np.int64)
        val, dbad = comp.fn(gv[:, a], gv[:, b])
        val = np.asarray(val, float)
        bad = gb[:, a] | gb[:, b] | np.asarray(dbad, bool)
        pv = _nan_where(bad, val)
        sd = _nan_where(bad, gv[:, a] - gv[:, b]) if comp.name == "abs" else None
        for i, name in enumerate(ad.pair_names()):
            out[name] = pv[:, i]
            if sd is not None:
                signed[name] = (f"{phi_name}(first) - {phi_name}(second)", sd[:, i])
        acc = np.full(gv.shape[0], np.nan) if N == 0 else _nan_where(bad.any(1), val.sum(1) / N)
        out[None] = acc
        return out, signed
    if gen in ("BCM", "VBCM"):
        if score.own_background:  # an AUC holds its background in its sides: the value as it is
            bv, bb = gv, np.zeros(gv.shape, bool)
        else:
            key = BACKGROUND.get(spec.background)
            if key is None:
                raise MetricError(f"{spec.name}: background must be 'all' or 'rest', got {spec.background!r}")
            bv, bb = phi[key]
        val, dbad = comp.fn(bv, gv)
        val = np.asarray(val, float)
        bad = gb | bb | np.asarray(dbad, bool)
        pv = _nan_where(bad, val)
        bg_text = "all" if BACKGROUND.get(spec.background) == "all" else "rest"
        sd, text = None, None
        if comp.name == "abs" and not score.own_background:
            sd, text = _nan_where(bad, gv - bv), f"{phi_name}(group) - {phi_name}({bg_text})"
        elif score.own_background and contrast is not None:
            sd, text = _nan_where(bad, contrast), "AUC(group) - AUC(all examples)"
        for t, name in enumerate(ad.groups):
            out[name] = pv[:, t]
            if sd is not None:
                signed[name] = (text, sd[:, t])
        if gen == "BCM":
            N = normalizer_value(spec.normalizer, k)
            out[None] = np.full(gv.shape[0], np.nan) if N == 0 else _nan_where(bad.any(1), val.sum(1) / N)
        return out, signed
    if gen == "MCM":
        if comp.kind != "multi":
            raise MetricError(f"{spec.name}: MCM needs a multi-group comparison (std, range), got {comp.name!r}")
        out[None] = _nan_where(gb.any(1), comp.fn(gv))
        return out, signed
    raise MetricError(f"unknown generalized metric {gen!r}")

def safe_ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, np.nan, num / np.where(den == 0, 1.0, den))


def accumulated(V, N):
    if N == 0 or V.shape[1] == 0:
        return np.full(V.shape[0], np.nan)
    bad = ~np.isfinite(V).all(axis=1)
    return np.where(bad, np.nan, np.nan_to_num(V).sum(axis=1) / N)


def fast_supported(spec: MetricSpec) -> bool:
    """Whether the vectorized path covers a metric (the score's
    :meth:`~bias_suite.metrics.scores.Score.closed_form`)."""
    return get_score(spec.score).closed_form(spec, get_comparison(spec.comparison))


def class_list(spec, ad):
    if not spec.per_class:
        return [(0, "all")]
    return list(enumerate(ad.classes))


def per_template_columns(ad, vals: np.ndarray, signed_on: bool):
    """The (R, pairs + 1 [+ pairs]) values of a per-template metric as
    ``({pair or None: (R,)}, {pair: (basis text, (R,))})``: a column per
    pair, the accumulated one, then, with ``signed_on``, the signed
    difference of the template means per pair."""
    labels = ad.pair_names() + [None]
    n = len(labels)
    signed = ({lab: ("mean f(first) - mean f(second), mean over templates", vals[:, n + i])
               for i, lab in enumerate(ad.pair_names())} if signed_on else {})
    return {lab: vals[:, i] for i, lab in enumerate(labels)}, signed
