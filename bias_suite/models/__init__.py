"""Models: texts in, class probabilities out.

- :mod:`bias_suite.models.base`: the :class:`Predictor` protocol,
  :class:`CallablePredictor` (plain functions, CheckList ``(preds, confs)``
  functions) and :func:`as_predictor`.
- :mod:`bias_suite.models.hf`: :class:`HFClassifier` for transformers models.
- :mod:`bias_suite.models.default`: reproducible offline builds of the default
  models (``build_model``, ``list_models``, ``ensure_default_sentiment``).

Importing this package does not import torch or transformers.
"""
from bias_suite.models.base import CallablePredictor, Predictor, as_predictor
from bias_suite.models.default import (DEFAULT_MODELS, build_default_sentiment,
                                       build_model, ensure_default_sentiment,
                                       ensure_model, list_models)
from bias_suite.models.hf import HFClassifier

__all__ = [
    "Predictor", "CallablePredictor", "as_predictor", "HFClassifier",
    "DEFAULT_MODELS", "build_default_sentiment", "build_model",
    "ensure_default_sentiment", "ensure_model", "list_models",
]
