"""Metric engine: generalized bias metrics and the registry of named ones.

The registry, as ``bias_suite.metrics`` (``import bias_suite as bs``):
``bs.metrics.list()`` the names, ``bs.metrics.get(name)`` a
:class:`MetricSpec`, ``bs.metrics.explain(name)`` it in words,
``bs.metrics.register(spec)`` / ``unregister(name)`` your own,
``bs.metrics.catalog_frame()`` the table ``bias-suite metrics`` prints.

- :func:`evaluate` — scored examples in, metric values out (no intervals or
  verdicts: ``bias_suite.evaluate`` adds them).
- :class:`MetricSpec` — a metric as data (phi, d, N, beta, view).
- ``REGISTRY`` / :func:`catalog_frame` — the named metrics of docs/metrics.md.
- ``scores`` / ``comparisons`` — the building blocks phi and d.
"""
from . import comparisons, scores
from .catalog import NAMED_METRICS, REGISTRY, MetricSpec, catalog_frame, explain, get_metric, register, unregister
from .comparisons import COMPARISONS, Comparison, get_comparison
from .engine import RESULT_COLUMNS, evaluate, results_frame
from .scores import SCORES, AucScore, GoldProbScore, MeanScore, RateScore, Score, SetScore, get_score, rate_score

get = get_metric


def list(*, view: str | None = None, topic: str | None = None):  # noqa: A001 - the registry's namespace
    """The names of the registered metrics, in registry order (``view``:
    "group" or "counterfactual"; ``topic``: e.g. "errors")."""
    return [m.name for m in REGISTRY.values()
            if (view is None or m.view == view) and (topic is None or m.topic == topic)]


# ``list`` is left out of __all__: a star import would shadow the builtin
__all__ = [
    "get", "explain",
    "evaluate", "MetricSpec", "REGISTRY", "NAMED_METRICS", "catalog_frame", "get_metric", "register", "unregister",
    "RESULT_COLUMNS", "results_frame", "scores", "comparisons", "SCORES", "COMPARISONS", "Comparison",
    "get_comparison", "get_score", "rate_score", "Score", "RateScore", "SetScore", "AucScore", "GoldProbScore",
    "MeanScore",
]
