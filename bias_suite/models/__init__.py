"""Models: texts in, class probabilities out.

- :mod:`bias_suite.models.base`: the :class:`Predictor` protocol,
  :class:`CallablePredictor` (plain functions, CheckList ``(preds, confs)``
  functions) and :func:`as_predictor`; :mod:`bias_suite.models.checks`
  validates texts, class names and probabilities for every model wrapper.
- :mod:`bias_suite.models.hf`: :class:`HFClassifier` for transformers models.
- :mod:`bias_suite.models.prompt`: :class:`PromptClassifier`, a causal or
  masked language model behind a prompt and answer words;
  :mod:`bias_suite.models.prompt_spec`: :class:`PromptSpec` and model spec files.
- :mod:`bias_suite.models.default`: reproducible offline builds of the default
  models (``build_model``, ``list_models``, ``ensure_default_sentiment``).
- Sequence labelling (token lists in, tags and tag probabilities out):
  :class:`HFTokenClassifier` (:mod:`bias_suite.models.token`),
  :class:`TransformerCrfTagger` (:mod:`bias_suite.models.crf`) and the
  ``default-ner`` build (:mod:`bias_suite.models.default_ner`).

Importing this package does not import torch or transformers.
"""
from bias_suite.models.base import CallablePredictor, Predictor, as_predictor
from bias_suite.models.default import (DEFAULT_MODELS, build_default_sentiment,
                                       build_model, ensure_default_sentiment,
                                       ensure_model, list_models)
from bias_suite.models.hf import HFClassifier
from bias_suite.models.prompt import PromptClassifier
from bias_suite.models.prompt_spec import PromptSpec, read_prompt_spec
from bias_suite.models.crf import TransformerCrfTagger
from bias_suite.models.token import HFTokenClassifier

__all__ = [
    "Predictor", "CallablePredictor", "as_predictor", "HFClassifier",
    "DEFAULT_MODELS", "build_default_sentiment", "build_model",
    "ensure_default_sentiment", "ensure_model", "list_models",
    "HFTokenClassifier", "TransformerCrfTagger", "PromptClassifier", "PromptSpec", "read_prompt_spec",
]
