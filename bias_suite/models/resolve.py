"""Model names and folders to predictors.

:func:`bias_suite.models.base.as_predictor` turns a string or path into a
classifier through :func:`classifier_from_name`; keeping that step here lets
the predictor interface (:mod:`bias_suite.models.base`) and the transformers
wrapper (:mod:`bias_suite.models.hf`) stay independent of each other.
"""
from __future__ import annotations

import os

__all__ = ["classifier_from_name"]


def classifier_from_name(model: str | os.PathLike, **kwargs):
    """A :class:`~bias_suite.models.hf.HFClassifier` for a hub id, a local
    folder or a default-model name (``kwargs`` go to its constructor)."""
    from bias_suite.models.hf import HFClassifier

    return HFClassifier(model, **kwargs)
