"""Bernstein-bounded uncertainty of bias estimates (Ethayarajh 2020, "Is Your
Classifier Actually Biased? Measuring Fairness under Uncertainty with
Bernstein Bounds"; docs/metrics.md, "Bernstein-bounded uncertainty").

Each example i has a cost c_i in [0, C] and an annotation f(x_i) in {+1
(protected), -1 (unprotected), 0 (neither)}. The amortized disparity is

    delta_hat_i = c_i f(x_i) / Pr[f(x) = f(x_i)],   delta_bar = mean_i delta_hat_i

with Pr[f(x) = +1] = gamma_A = n_A / n and Pr[f(x) = -1] = gamma_B = n_B / n
(the fractions of *all* n examples, rows annotated 0 included; those rows
have delta_hat = 0). With gamma = min(gamma_A, gamma_B), sigma^2 the
population variance (ddof 0) of the delta_hat_i, L = -log((1 - rho)/2) and
B = (2C / (3 gamma)) L, Bernstein's inequality gives the half-width

    t = (B + sqrt(B^2 + 8 n sigma^2 L)) / (2 n)

and the interval [delta_bar - t, delta_bar + t]. Claiming a bias delta_bar at
confidence rho needs n > (2 sigma^2 + (2C/(3 gamma)) |delta_bar|) L / delta_bar^2.
Note that t is also the smallest |bias| that n examples can support:
``min_detectable_bias(n, ...) == bernstein_t(n, ...)``.

Judgement calls (documented here because the spec leaves them open)
---------------------------------------------------------------------
* **delta_bar.** docs/metrics.md defines delta_bar as the mean of delta_hat and,
  for result rows, as "the mean cost of the group minus the mean cost of the
  rest". Both are the same number: since Pr[f = +1] = n_A / n,
  (1/n) sum_i delta_hat_i = (1/n)(n/n_A) sum_A c_i - (1/n)(n/n_B) sum_B c_i
  = mean_A(c) - mean_B(c), where A and B are the *annotated* rows of the
  group and of the rest. For DemographicParity every row is annotated, so A
  is the whole group; for EqualOpportunity (FalsePositiveParity) A and B are
  the rows with y = 1 (y = 0) -- reading "group" as every row of the group
  would make EqualOpportunity with cost 1 - y_hat the (negated) positive-rate
  gap, i.e. DemographicParity again, which is not what the preset measures.
  The value is computed as mean_A(c) - mean_B(c) (numerically the more
  accurate form); ``info["amortized_mean"]`` holds mean(delta_hat) for
  comparison (equal up to rounding).
* **gamma.** Unless ``gamma`` is given, gamma = min(n_A/n, n_B/n) is
  estimated from the annotation fractions (``info["gamma_source"]`` is
  "estimated" or "given"). The delta_hat_i always use the empirical
  fractions; a given gamma only enters t. gamma must lie in (0, 0.5] (it is
  the smaller of two fractions of the same n).
* **Undefined.** With no row annotated +1 or no row annotated -1 the
  interval is undefined (value None + note). A sample size for
  delta_bar = 0 does not exist (value None + note).
* **Unlabelled rows.** The Bernstein section of docs/metrics.md counts every row
  of the attribute in n, "rows annotated 0 still count in n".
  DemographicParity's cost 1 - y_hat and annotation need no gold label, so
  unlabelled rows are annotated like the others. EqualOpportunity and
  FalsePositiveParity annotate only rows whose label says y = 1 (y = 0); an
  unlabelled row cannot be that, so it is annotated 0: it counts in n (and
  in gamma_A = n_A / n, gamma_B = n_B / n) with delta_hat = 0, and never as
  a y = 0 row. Pass ``demographic_parity_uses_unlabelled=False`` to
  :func:`bernstein_rows` to drop unlabelled rows from every preset.
* **Per class.** y_hat = [pred = c] and y = [gold = c] one-vs-rest; the group
  t is protected (+1) and every other example of the attribute unprotected
  (-1); C = 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, NamedTuple, Sequence

import numpy as np
import pandas as pd

from bias_suite.exceptions import MetricError
from ._common import (
    empty_results, make_row, rows_to_frame, scored_data,
    select_attributes,
)

FAMILY = "bernstein"
VIEW = "group"

__all__ = [
    "BernsteinPreset", "DemographicParity", "EqualOpportunity",
    "FalsePositiveParity", "EqualizedOdds", "PRESETS", "SampleSize",
    "bernstein_t", "bernstein_interval", "sample_size", "min_detectable_bias",
    "bernstein_rows",
]


# --------------------------------------------------------------------------
# presets
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class BernsteinPreset:
    """How a bias notion maps to costs and annotations (per class c,
    y_hat = [pred = c], y = [gold = c], both 0/1 arrays).

    ``cost(y_hat, y)`` gives c_i in [0, 1]; ``annotated(y)`` says which rows
    get +1/-1 (the rest get 0); ``needs_labels`` says whether y is used.
    """
    name: str
    cost: Callable[[np.ndarray, np.ndarray | None], np.ndarray]
    annotated: Callable[[np.ndarray | None, int], np.ndarray]
    needs_labels: bool
    description: str = ""

    @property
    def metric(self) -> str:
        return f"Bernstein-{self.name}"

    def __repr__(self) -> str:
        return f"<BernsteinPreset {self.name}>"


DemographicParity = BernsteinPreset(
    "DemographicParity",
    cost=lambda yhat, y: 1.0 - yhat,
    annotated=lambda y, n: np.ones(n, dtype=bool),
    needs_labels=False,
    description="cost 1 - y_hat, every row annotated",
)
EqualOpportunity = BernsteinPreset(
    "EqualOpportunity",
    cost=lambda yhat, y: 1.0 - yhat,
    annotated=lambda y, n: np.asarray(y) == 1,
    needs_labels=True,
    description="cost 1 - y_hat, only rows with y = 1 annotated",
)
FalsePositiveParity = BernsteinPreset(
    "FalsePositiveParity",
    cost=lambda yhat, y: yhat.astype(float),
    annotated=lambda y, n: np.asarray(y) == 0,
    needs_labels=True,
    description="cost y_hat, only rows with y = 0 annotated",
)
#: Equalized odds = FalsePositiveParity and EqualOpportunity together.
EqualizedOdds = (EqualOpportunity, FalsePositiveParity)

PRESETS = {p.name: p for p in (DemographicParity, EqualOpportunity, FalsePositiveParity)}
_BUILT_IN = tuple(PRESETS.values())


def _resolve_presets(presets) -> list[BernsteinPreset]:
    if isinstance(presets, (str, BernsteinPreset)):
        presets = [presets]
    out: list[BernsteinPreset] = []
    for p in presets:
        if isinstance(p, str):
            if p == "EqualizedOdds":
                items = list(EqualizedOdds)
            elif p in PRESETS:
                items = [PRESETS[p]]
            else:
                raise MetricError(
                    f"unknown Bernstein preset {p!r}; known: "
                    f"{list(PRESETS) + ['EqualizedOdds']}")
        elif isinstance(p, BernsteinPreset):
            items = [p]
        elif isinstance(p, (tuple, list)):
            items = _resolve_presets(p)
        else:
            raise MetricError(f"a Bernstein preset must be a name or BernsteinPreset, got {p!r}")
        for it in items:
            if it not in out:
                out.append(it)
    return out


# --------------------------------------------------------------------------
# the bound
# --------------------------------------------------------------------------
def _check_params(confidence, max_cost, gamma=None):
    if not (0.0 < float(confidence) < 1.0):
        raise MetricError(f"confidence must lie in (0, 1), got {confidence!r}")
    if not (float(max_cost) > 0.0 and math.isfinite(float(max_cost))):
        raise MetricError(f"max_cost must be a positive number, got {max_cost!r}")
    if gamma is not None and not (0.0 < float(gamma) <= 0.5):
        raise MetricError(
            f"gamma = min(gamma_A, gamma_B) must lie in (0, 0.5], got {gamma!r}")


def _log_term(confidence: float) -> float:
    """L = -log((1 - rho) / 2) > 0."""
    return -math.log((1.0 - float(confidence)) / 2.0)


def bernstein_t(n: int, variance: float, *, confidence: float = 0.95,
                max_cost: float = 1.0, gamma: float = 0.5) -> float:
    """Half-width t = (B + sqrt(B^2 - 8 n sigma^2 log((1-rho)/2))) / (2n),
    B = -(2C/(3 gamma)) log((1-rho)/2)."""
    _check_params(confidence, max_cost, gamma)
    if n is None or int(n) < 1:
        raise MetricError(f"n must be a positive integer, got {n!r}")
    if variance is None or float(variance) < 0 or not math.isfinite(float(variance)):
        raise MetricError(f"variance must be a finite number >= 0, got {variance!r}")
    n = int(n)
    lg = math.log((1.0 - float(confidence)) / 2.0)  # negative
    b = -(2.0 * max_cost / (3.0 * gamma)) * lg
    return (b + math.sqrt(b * b - 8.0 * n * float(variance) * lg)) / (2.0 * n)


def bernstein_interval(costs, annotations, *, confidence: float = 0.95,
                       max_cost: float = 1.0, gamma: float | None = None):
    """Bernstein interval of the amortized disparity.

    ``costs``: c_i in [0, max_cost]; ``annotations``: f(x_i) in {+1, -1, 0}.
    Returns ``(delta_bar, low, high, info)``; when undefined (no example
    annotated +1 or -1) the three numbers are None and ``info["note"]`` says
    why. ``info`` also holds n, n_protected, n_unprotected, gamma_a, gamma_b,
    gamma, gamma_source ("estimated" or "given"), variance, t,
    amortized_mean (mean of delta_hat), confidence and max_cost.
    """
    _check_params(confidence, max_cost, gamma)
    c = np.asarray(costs, dtype=float).ravel()
    f = np.asarray(annotations, dtype=float).ravel()
    if c.shape != f.shape:
        raise MetricError(
            f"costs and annotations must have the same length, got {c.size} and {f.size}")
    if not np.all(np.isfinite(c)) or np.any((c < 0) | (c > max_cost)):
        raise MetricError(f"costs must lie in [0, max_cost={max_cost}]")
    if not np.all(np.isin(f, (-1.0, 0.0, 1.0))):
        raise MetricError("annotations must be +1 (protected), -1 (unprotected) or 0")
    return _interval(c, f == 1, f == -1, confidence=confidence, max_cost=max_cost, gamma=gamma)


def _interval(c: np.ndarray, a: np.ndarray, b: np.ndarray, *, confidence: float, max_cost: float,
              gamma: float | None):
    """:func:`bernstein_interval` of checked costs ``c`` with the rows
    annotated +1 (``a``) and -1 (``b``) as boolean masks."""
    n = int(c.size)
    n_a, n_b = int(a.sum()), int(b.sum())
    info = {
        "n": n, "n_protected": n_a, "n_unprotected": n_b,
        "gamma_a": n_a / n if n else None, "gamma_b": n_b / n if n else None,
        "gamma": None, "gamma_source": "given" if gamma is not None else "estimated",
        "variance": None, "t": None, "amortized_mean": None,
        "confidence": float(confidence), "max_cost": float(max_cost), "note": None,
    }
    if n == 0:
        info["note"] = "no examples"
        return None, None, None, info
    if n_a == 0 or n_b == 0:
        side = "+1 (protected)" if n_a == 0 else "-1 (unprotected)"
        info["note"] = f"no example annotated {side}: gamma = 0, disparity undefined"
        return None, None, None, info
    gamma_a, gamma_b = n_a / n, n_b / n
    delta_hat = np.zeros(n)
    delta_hat[a] = c[a] / gamma_a
    delta_hat[b] = -c[b] / gamma_b
    delta_bar = float(c[a].mean() - c[b].mean())
    variance = float(np.var(delta_hat))
    g = float(gamma) if gamma is not None else min(gamma_a, gamma_b)
    t = bernstein_t(n, variance, confidence=confidence, max_cost=max_cost, gamma=g)
    info.update(gamma=g, variance=variance, t=t, amortized_mean=float(delta_hat.mean()))
    return delta_bar, delta_bar - t, delta_bar + t, info


class SampleSize(NamedTuple):
    """``bound``: the number n must exceed; ``n``: the smallest such integer."""
    bound: float
    n: int


def _sample_bound(bias, confidence, gamma, max_cost, variance) -> float:
    d = abs(float(bias))
    return ((2.0 * variance + (2.0 * max_cost / (3.0 * gamma)) * d)
            * _log_term(confidence) / (d * d))


def sample_size(bias: float, *, confidence: float = 0.95, gamma: float = 0.5,
                max_cost: float = 1.0, variance: float | None = None) -> SampleSize:
    """Examples needed to claim a bias of |bias| at confidence rho:
    n > (2 sigma^2 + (2C/(3 gamma)) |bias|) (-log((1-rho)/2)) / bias^2.

    ``variance`` defaults to the worst case (C/gamma)^2. Returns
    ``SampleSize(bound, n)`` with n = floor(bound) + 1. A zero bias raises
    MetricError (no finite n suffices).
    """
    _check_params(confidence, max_cost, gamma)
    if bias is None or not math.isfinite(float(bias)):
        raise MetricError(f"bias must be a finite number, got {bias!r}")
    if float(bias) == 0.0:
        raise MetricError("bias must be non-zero: no sample size can establish a zero bias")
    if variance is None:
        variance = (max_cost / gamma) ** 2
    if float(variance) < 0 or not math.isfinite(float(variance)):
        raise MetricError(f"variance must be a finite number >= 0, got {variance!r}")
    bound = _sample_bound(bias, confidence, gamma, max_cost, float(variance))
    return SampleSize(bound, math.floor(bound) + 1)


def min_detectable_bias(n: int, *, confidence: float = 0.95, gamma: float = 0.5,
                        max_cost: float = 1.0, variance: float | None = None) -> float:
    """Smallest |bias| that n examples can support at confidence rho: the
    positive root of n d^2 - (2C/(3 gamma)) L d - 2 sigma^2 L = 0
    (L = -log((1-rho)/2)); every |bias| above it has sample-size bound < n.
    ``variance`` defaults to (C/gamma)^2. Equal to :func:`bernstein_t`."""
    _check_params(confidence, max_cost, gamma)
    if variance is None:
        variance = (max_cost / gamma) ** 2
    if n is None or int(n) < 1:
        raise MetricError(f"n must be a positive integer, got {n!r}")
    n = int(n)
    lt = _log_term(confidence)
    k = 2.0 * max_cost / (3.0 * gamma)
    return (k * lt + math.sqrt((k * lt) ** 2 + 8.0 * n * float(variance) * lt)) / (2.0 * n)


# --------------------------------------------------------------------------
# result rows
# --------------------------------------------------------------------------
def bernstein_rows(scored: pd.DataFrame, *, confidence: float = 0.95,
                   presets: Sequence = (DemographicParity, EqualOpportunity,
                                        FalsePositiveParity),
                   attributes: Iterable[str] | None = None,
                   demographic_parity_uses_unlabelled: bool = True) -> pd.DataFrame:
    """Per attribute, class c, group t and preset: a ``Bernstein-<Preset>``
    row (value delta_bar = mean cost of the group's annotated rows minus that
    of the rest's, ci_low/ci_high the Bernstein interval at ``confidence``,
    n the examples used) and a ``Bernstein-<Preset>-SampleSize`` row (value
    the bound n must exceed for the observed |delta_bar|, sigma^2 and gamma).
    Presets may be given by name; "EqualizedOdds" expands to
    EqualOpportunity and FalsePositiveParity. C = 1.
    """
    _check_params(confidence, 1.0)
    plist = _resolve_presets(presets)
    if isinstance(scored, pd.DataFrame) and scored.empty:
        return empty_results()
    data = scored_data(scored)
    classes = list(data.classes)
    rows: list[dict] = []
    # integer codes throughout: predicted and gold class indices, group codes in order of first appearance
    for attribute in select_attributes(data.frame, attributes):
        m = (data.frame["attribute"] == attribute).to_numpy()
        # every group of the attribute gets rows, also one whose rows are all left out below
        gcode, groups = pd.factorize(data.frame["group"].to_numpy(dtype=object)[m], use_na_sentinel=False)
        pred, yy = np.asarray(data.yhat)[m], np.asarray(data.y)[m]
        if not demographic_parity_uses_unlabelled:  # unlabelled rows left out of every preset
            keep = yy >= 0
            pred, yy, gcode = pred[keep], yy[keep], gcode[keep]
        labelled = yy >= 0
        for ci, c in enumerate(classes):
            yhat = (pred == ci).astype(float)
            y = (yy == ci).astype(int)          # unlabelled rows (-1) are not class c
            for k, t in enumerate(groups):
                protected = gcode == k
                for p in plist:  # unlabelled rows count in n, annotated 0 where y decides
                    rows.extend(_preset_rows(p, yhat, y, protected, attribute, c, t, confidence, labelled))
    return rows_to_frame(rows)


def _preset_rows(p: BernsteinPreset, yhat, y, protected, attribute, cls, group,
                 confidence, labelled=None) -> list[dict]:
    n = int(yhat.size)
    metric = p.metric
    size_metric = f"{metric}-SampleSize"
    if n == 0:
        note = "no labelled examples" if p.needs_labels else "no examples"
        return [make_row(metric, FAMILY, VIEW, attribute, cls, group, None, n=0, note=note),
                make_row(size_metric, FAMILY, VIEW, attribute, cls, group, None, n=0,
                         note=note)]
    cost = p.cost(yhat, y)
    annotated = np.asarray(p.annotated(y, n), dtype=bool)
    if p.needs_labels and labelled is not None:
        annotated &= labelled  # an unlabelled row is neither y = 1 nor y = 0: annotation 0
    if any(p is b for b in _BUILT_IN):  # costs of 0/1 predictions: bernstein_interval's checks hold
        delta, low, high, info = _interval(np.asarray(cost, dtype=float), annotated & protected,
                                           annotated & ~protected, confidence=confidence, max_cost=1.0, gamma=None)
    else:               # a user's preset: its costs are checked
        delta, low, high, info = bernstein_interval(cost, np.where(annotated, np.where(protected, 1, -1), 0),
                                                    confidence=confidence, max_cost=1.0)
    if delta is None:
        note = info["note"]
        return [make_row(metric, FAMILY, VIEW, attribute, cls, group, None, n=n, note=note),
                make_row(size_metric, FAMILY, VIEW, attribute, cls, group, None, n=n,
                         note=note)]
    out = [make_row(metric, FAMILY, VIEW, attribute, cls, group, delta, low, high, n=n)]
    if delta == 0.0:
        out.append(make_row(size_metric, FAMILY, VIEW, attribute, cls, group, None, n=n,
                            note="observed bias is 0: no sample size can establish it"))
    else:
        bound = _sample_bound(delta, confidence, info["gamma"], 1.0, info["variance"])
        out.append(make_row(size_metric, FAMILY, VIEW, attribute, cls, group, bound, n=n))
    return out
