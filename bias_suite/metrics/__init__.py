"""Metric engine: generalized bias metrics and the registry of named ones.

The registry, as ``bias_suite.metrics`` (``import bias_suite as bs``):
``bs.metrics.list()`` the names, ``bs.metrics.get(name)`` a
:class:`MetricSpec`, ``bs.metrics.explain(name)`` it in words,
``bs.metrics.register(spec)`` / ``unregister(name)`` your own,
``bs.metrics.catalog_frame()`` the table ``bias-suite metrics`` prints,
``bs.metrics.compute(scored)`` the metric values alone (no intervals or
verdicts: ``bias_suite.evaluate`` adds them), ``rate_score`` and
:class:`Distance` the building blocks phi and d of your own metric.
Those names are ``__all__`` (and ``list``, left out of it so that a star
import does not shadow the builtin); the other names of this package are
internal:

- :class:`MetricSpec` — a metric as data (phi, d, N, beta, view).
- ``REGISTRY`` / :func:`catalog_frame` — the named metrics of docs/metrics.md.
- ``scores`` / ``comparisons`` — the building blocks phi and d.
"""
import warnings as _warnings

from . import comparisons, scores
from .catalog import NAMED_METRICS, REGISTRY, MetricSpec, catalog_frame, explain, get_metric, register, unregister
from .comparisons import COMPARISONS, Distance, get_comparison
from .engine import RESULT_COLUMNS, results_frame
from .engine import evaluate as compute
from .scores import SCORES, AucScore, GoldProbScore, MeanScore, RateScore, Score, SetScore, get_score, rate_score

get = get_metric


def list(*, view: str | None = None, topic: str | None = None):  # noqa: A001 - the registry's namespace
    """The names of the registered metrics, in registry order (``view``:
    "group" or "counterfactual"; ``topic``: e.g. "errors")."""
    return [m.name for m in REGISTRY.values()
            if (view is None or m.view == view) and (topic is None or m.topic == topic)]


# ``list`` is left out of __all__: a star import would shadow the builtin
__all__ = ["get", "explain", "register", "unregister", "MetricSpec", "catalog_frame", "compute", "rate_score",
           "Distance"]

#: old names -> (the new name, what to say)
_DEPRECATED = {"evaluate": ("compute", "bias_suite.metrics.evaluate is now bias_suite.metrics.compute (the values "
                                      "alone; bias_suite.evaluate judges them)"),
               "Comparison": ("Distance", "bias_suite.metrics.Comparison (a comparison function d) is now "
                                          "bias_suite.metrics.Distance; bias_suite.Comparison compares models")}


def __getattr__(name: str):
    if name in _DEPRECATED:
        new, said = _DEPRECATED[name]
        _warnings.warn(said, DeprecationWarning, stacklevel=2)
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*__all__, "list"])
