"""Interoperability with other behavioural-testing tools.

- :mod:`bias_suite.interop.checklist`: CheckList (``checklist`` package):
  invariance (INV) tests built from bias_suite suites, bias_suite predictors
  as CheckList predict functions, raw-file export/import, Editor outputs as
  bias_suite examples, and bias_suite metric/significance tests that sit in a
  CheckList ``TestSuite`` (docs/checklist.md).

- :func:`perturb`: CheckList's ``Perturb`` class, importable offline
  (:mod:`bias_suite.interop.perturb`).

Importing this package does not import ``checklist`` (which imports spaCy and
torch); :func:`invariance_for_run` imports it when called.
"""
from __future__ import annotations

import warnings

from .perturb import perturb

__all__ = ["invariance_for_run", "perturb"]


def invariance_for_run(scored, *, threshold: float = 0.1, seed: int = 0, group_order_override=None,
                       criterion: str | None = None, mode: str = "all_terms", with_failures: bool = False):
    """INV fail-rate rows for ``bias-suite run`` (fast path: the already
    scored probabilities are replayed, nothing is predicted again); with
    ``with_failures`` also the failing cases (``(rows, failures)``).

    Defaults follow CheckList: ``criterion="checklist"`` (``Expect.inv``: a
    case fails only when the prediction flips) and ``mode="all_terms"``
    (every term of every group in one case, as a CheckList perturbation
    gives). ``criterion="prob"`` gives ``INV-ProbShift-FailRate`` rows.

    Returns an empty results table (and no failures), with a warning, when
    the ``checklist`` package is not installed, so that runs without it still
    finish.
    """
    try:
        from .checklist import invariance_and_failures
    except ImportError as e:  # checklist (or one of its dependencies) missing
        from ..io.results import empty_results

        warnings.warn(f"invariance (CheckList INV) rows skipped: cannot import checklist ({e})", stacklevel=2)
        return (empty_results(), None) if with_failures else empty_results()
    rows, fails = invariance_and_failures(scored, threshold=threshold, seed=seed,
                                          group_order_override=group_order_override, criterion=criterion, mode=mode)
    return (rows, fails) if with_failures else rows
