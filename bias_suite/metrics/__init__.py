"""Metric engine: generalized bias metrics and the registry of named ones.

- :func:`evaluate` — scored examples in, tidy results out.
- :class:`MetricSpec` — a metric as data (phi, d, N, beta, view).
- ``REGISTRY`` / :func:`catalog_frame` — the named metrics of docs/metrics.md.
- ``scores`` / ``comparisons`` — the building blocks phi and d.
"""
from . import comparisons, scores
from .catalog import NAMED_METRICS, REGISTRY, MetricSpec, catalog_frame, explain, get_metric, register, unregister
from .comparisons import COMPARISONS, Comparison, get_comparison
from .engine import RESULT_COLUMNS, evaluate, results_frame
from .scores import SCORES, AucScore, GoldProbScore, MeanScore, RateScore, SetScore, get_score, rate_score

__all__ = [
    "evaluate", "MetricSpec", "REGISTRY", "NAMED_METRICS", "catalog_frame", "get_metric", "register", "unregister",
    "RESULT_COLUMNS", "results_frame", "scores", "comparisons", "SCORES", "COMPARISONS", "Comparison",
    "get_comparison", "get_score", "rate_score", "RateScore", "SetScore", "AucScore", "GoldProbScore", "MeanScore",
]
