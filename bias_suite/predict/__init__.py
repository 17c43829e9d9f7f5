"""Predictions at scale: one plan for every model and engine.

- :mod:`bias_suite.predict.outputs`: :class:`Outputs` (ragged predictions of
  classifiers and taggers) and the task adapters.
- :mod:`bias_suite.predict.cache`: the on-disk prediction cache
  (:class:`PredictionCache`), keyed by model fingerprint and input.
- :mod:`bias_suite.predict.runner`: :func:`predict` (de-duplicate, cache,
  chunk, run, reassemble) and :class:`PredictionStats`.
- :mod:`bias_suite.predict.engines`: the local engine and the engine interface;
  :mod:`bias_suite.predict.ray_engine`: Ray Data actor pools (``engine="ray"``);
  :mod:`bias_suite.predict.specs`: how a predictor travels to a worker.
"""
from bias_suite.predict.cache import CacheWarning, PredictionCache
from bias_suite.predict.engines import LocalEngine, get_engine
from bias_suite.predict.outputs import Outputs
from bias_suite.predict.runner import PredictionStats, predict

__all__ = ["predict", "PredictionStats", "PredictionCache", "CacheWarning", "Outputs", "LocalEngine",
           "get_engine"]
