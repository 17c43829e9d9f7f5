"""When a suite is too small for its rate metrics to show that a difference
is below tau.

The per-class rate metrics of the group view (FNED, TPR-Gap, TPR-Diff,
Recall-Diff and their identity-span forms: differences of the true positive
or false negative rate of class c, judged against tau) compare rates that
have a chance only in the templates of gold class c. When the two sides of
such a difference differ in fewer than 5 of those n templates, the verdicts
bound it by the exact paired bound (docs/statistics.md, "Intervals that
cannot collapse"): with d of the n templates differing in one direction,
the share of such templates is at most the one-sided Clopper-Pearson upper
bound U(d, n) at the run's confidence. With no template different (a model
that treats the groups alike) and every template weighing the same, that
bound is

    1 - alpha^(1/n),      alpha = 1 - confidence,

so the row can be ``negligible`` (its interval within +-tau) only when
1 - alpha^(1/n) <= tau, i.e. n >= ln(alpha) / ln(1 - tau): 59 templates at
tau = 0.05 and 95%. With fewer, such a model is ``inconclusive`` on these
rows, however it predicts (templates of unequal weight need a few more).

:func:`size_warnings` counts a suite's templates per class and attribute
(:func:`bias_suite.suites.sizes.class_templates`; the task family says
which class a template counts for: its gold label, or for a tagger the
entity type of its identity slot) and returns one line
per suite whose smallest class falls short. The other functions are pure.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from ..metrics.comparisons import ROUND_OFF
from ..metrics.materiality import RATIO_BAND

__all__ = ["PER_CLASS_RATES", "zero_difference_bound", "templates_needed", "is_per_class_rate",
           "rate_metric_taus", "SizeShortfall", "size_shortfall", "format_shortfall", "size_warnings",
           "templates_for_tau", "POWER_HALF_WIDTH", "table_size_warning", "sized_reason"]

#: rate scores whose chances are the examples (spans) of gold class c
PER_CLASS_RATES = ("TPR", "FNR", "recall", "identity_recall", "identity_FNR")
#: how many metric names a warning lists before "..."
_SHOWN = 2


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2)


def zero_difference_bound(n: int, confidence: float = 0.95) -> float:
    """The one-sided Clopper-Pearson upper bound (at ``confidence``) on a
    share observed as 0 of ``n`` templates: 1 - (1 - confidence)^(1/n), the
    exact paired bound of a rate difference whose sides never differ."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n!r}")
    _z(confidence)  # (checks the level)
    return 1.0 - (1.0 - confidence) ** (1.0 / n)


def templates_needed(tau: float, confidence: float = 0.95) -> int:
    """The smallest n with :func:`zero_difference_bound` (n) <= tau (up to
    the verdicts' round-off): the templates of a class at which a model that
    treats the groups alike can be shown to differ by less than ``tau``."""
    if not (math.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a positive number, got {tau!r}")
    n = max(1, math.ceil(math.log(1.0 - confidence) / math.log1p(-min(tau, 0.999999))))
    while n > 1 and zero_difference_bound(n - 1, confidence) <= tau + ROUND_OFF:
        n -= 1
    while zero_difference_bound(n, confidence) > tau + ROUND_OFF:
        n += 1
    return n


def is_per_class_rate(spec) -> bool:
    """Whether a metric spec is a difference (signed or absolute) of a
    per-class rate of :data:`PER_CLASS_RATES` in the group view."""
    if spec.view != "group" or not spec.per_class or spec.generalized not in ("PCM", "BCM", "VBCM"):
        return False
    return getattr(spec.phi, "parts", None) is not None and spec.phi.name in PER_CLASS_RATES and spec.d.name in ("abs", "diff")


def rate_metric_taus(thresholds: Mapping[str, float] | None = None, metrics=None, *,
                     identity_span: bool = False) -> dict[str, float]:
    """``{metric name: tau}`` of the per-class rate metrics a run computes
    (``metrics`` as a run takes them; default every registered metric), tau
    as the verdicts take it: ``thresholds`` by the metric's name, then by its
    topic, else the metric's default. The rates measured at the identity
    term's own span (IdentitySpan-FNED, ...) only with ``identity_span``
    (a family whose data has that span)."""
    from ..metrics.engine import resolve_metrics
    from ..metrics.scores import IDENTITY

    out = {}
    for spec in resolve_metrics(metrics):
        if not is_per_class_rate(spec):
            continue
        if getattr(spec.phi, "at", None) == IDENTITY and not identity_span:
            continue
        mat = spec.materiality
        tau = next((float(thresholds[k]) for k in (spec.name, mat.topic) if thresholds and k in thresholds),
                   mat.threshold)
        out[spec.name] = tau
    return out


@dataclass(frozen=True)
class SizeShortfall:
    """A suite whose classes have fewer templates than the rate metrics need."""

    suite: str
    needed: int  # templates per class
    tau: float
    metrics: tuple  # the metrics with that tau
    short: tuple  # ((class, templates, attribute or None), ...), fewest first
    kind: str = "class"  # "class" or "entity type"
    confidence: float = 0.95


def size_shortfall(suite: str, counts: Mapping[str, Mapping[str, int]], taus: Mapping[str, float],
                   confidence: float = 0.95, *, kind: str = "class") -> SizeShortfall | None:
    """The shortfall of one suite, or None when every class has enough.

    ``counts``: ``{attribute: {class: templates}}`` (classes without
    templates left out); ``taus``: ``{metric: tau}``. The metric with the
    smallest tau needs the most templates; a class falls short when one
    attribute gives it fewer (its smallest count is reported, with the
    attribute when the attributes give it different counts)."""
    if not taus or not counts:
        return None
    tau = min(taus.values())
    needed = templates_needed(tau, confidence)
    fewest: dict[str, tuple[int, str | None]] = {}
    differ = set()  # classes whose count depends on the attribute
    for attribute, per in counts.items():
        for c, n in per.items():
            if n <= 0:
                continue
            if c in fewest and n != fewest[c][0]:
                differ.add(c)
            if c not in fewest or n < fewest[c][0]:
                fewest[c] = (int(n), attribute)
    fewest = {c: (n, a if c in differ else None) for c, (n, a) in fewest.items()}
    short = sorted(((c, n, a) for c, (n, a) in fewest.items() if n < needed), key=lambda x: x[1])
    if not short:
        return None
    names = tuple(m for m, t in taus.items() if t == tau)
    return SizeShortfall(suite, needed, tau, names, tuple(short), kind, confidence)


def format_shortfall(s: SizeShortfall) -> str:
    """One line: ``SUITE: N templates of class C (also ...); the rate metrics
    (...) need about M per class to show that a difference is below τ = T``."""
    c, n, a = s.short[0]
    where = f" in attribute {a}" if a else ""
    also = ""
    if len(s.short) > 1:
        also = " (also " + ", ".join(f"{c2} {n2}" + (f" in {a2}" if a2 else "") for c2, n2, a2 in s.short[1:]) + ")"
    plain = [m for m in s.metrics if not m.endswith("*")] or list(s.metrics)
    names = ", ".join(plain[:_SHOWN]) + (", ..." if len(s.metrics) > _SHOWN else "")
    conf = "" if abs(s.confidence - 0.95) < 1e-12 else f" at {s.confidence:.0%} confidence"
    return (f"{s.suite}: {n} templates of {s.kind} {c}{where}{also}; the rate metrics ({names}) need about "
            f"{s.needed} per {s.kind} to show that a difference is below τ = {s.tau:g}{conf}")


def size_warnings(suites: Iterable, *, thresholds: Mapping[str, float] | None = None, confidence: float = 0.95,
                  attributes: Iterable[str] | None = None, metrics=None) -> list[str]:
    """One line per suite whose classes (a sequence-labelling suite: the
    entity type of its identity slot) have fewer counterfactual templates
    than the per-class rate metrics need (:func:`format_shortfall`);
    ``thresholds`` (tau per metric or topic), ``confidence``, ``attributes``
    and ``metrics`` as the run takes them."""
    from ..families import family_of
    from ..suites.sizes import class_templates

    out = []
    for suite in suites:
        fam = family_of(suite)
        counts = class_templates(suite, attributes=attributes, class_of=fam.template_class(suite))
        taus = rate_metric_taus(thresholds, metrics, identity_span=fam.identity_span)
        s = size_shortfall(suite.name, counts, taus, confidence, kind=fam.class_word)
        if s is not None:
            out.append(format_shortfall(s))
    return out


def table_size_warning(name: str, frame, *, thresholds: Mapping[str, float] | None = None,
                       confidence: float = 0.95, attributes: Iterable[str] | None = None, metrics=None,
                       identity_span: bool = False, kind: str = "class") -> str | None:
    """The warning of :func:`size_warnings` for an examples table or perturbed data set (its templates
    counted from its rows, :func:`bias_suite.suites.sizes.frame_class_templates`), or None."""
    from ..suites.sizes import frame_class_templates

    counts = frame_class_templates(frame, attributes=attributes)
    taus = rate_metric_taus(thresholds, metrics, identity_span=identity_span)
    s = size_shortfall(name, counts, taus, confidence, kind=kind)
    return None if s is None else format_shortfall(s)


#: the half-width at which an effect of τ is shown with about 80% power at 95%: τ = (1.96 + 0.84) se
POWER_HALF_WIDTH = 1.96 / (1.96 + 0.84)


def templates_for_tau(halfwidth: float, tau: float, templates) -> str:
    """'; an effect of τ needs about N templates (now n)': the templates under the same design that would show
    an effect of exactly τ (not the estimate, which was selected for being large) with about 80% power."""
    if not (halfwidth > 0) or not (tau > 0) or not templates:
        return ""
    n = float(templates)
    need = max(math.ceil(n * (halfwidth / (POWER_HALF_WIDTH * tau)) ** 2), int(n) + 1)
    if need > 100 * n:
        return "; an effect of τ needs more than 100× the templates"
    return f"; an effect of τ needs about {need} templates (now {int(n)})"


def sized_reason(d: dict):
    """An inconclusive row's reason with the templates that would decide an effect of τ (from its interval),
    where the reason names no number of templates yet (a row the error control or a check made
    inconclusive; an exact paired bound keeps its own count of the class's templates)."""
    reason, sc = d.get("reason"), d.get("scale")
    said = str(reason or "")
    if d.get("verdict") != "inconclusive" or not sc or "an effect of τ needs" in said or "would decide it" in said \
            or said.startswith("rests on events") or d.get("threshold") is None:
        return reason
    _, lo, hi = sc
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return reason
    tau = float(d["threshold"])
    if d.get("ratio"):
        lo, hi, tau = math.log(max(lo, 1e-12)), math.log(max(hi, 1e-12)), math.log(RATIO_BAND)
    return f"{reason}{templates_for_tau((hi - lo) / 2, tau, d.get('templates'))}"
