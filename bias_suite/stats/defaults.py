"""The defaults the statistics share with the options model.

Written once here, below both: the stats layer's own functions default to
them, and :mod:`bias_suite.options` (the options of ``evaluate``, ``run``,
``compare`` and the command line) reads them. No imports, so that the
command line's options import nothing heavy.
"""

__all__ = ["DEFAULT_B", "DEFAULT_CONFIDENCE", "DEFAULT_MULTIPLICITY"]

#: template resamples of the cluster bootstrap behind the intervals and verdicts
DEFAULT_B = 200
#: level of the intervals, tests and verdicts
DEFAULT_CONFIDENCE = 0.95
#: the error control over a run's claims (bias_suite.stats.multiplicity)
DEFAULT_MULTIPLICITY = "hierarchical"
