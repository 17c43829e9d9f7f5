"""bias_suite models as CheckList predict functions (classifiers and taggers)
and the lookups that replay already scored probabilities.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import BiasSuiteError, ModelError
from .invariance import failure_source

# =========================================================================
# predictors -> CheckList predict functions


# =========================================================================
def checklist_predict_fn(model, class_names: Sequence[str] | None = None, *, cache: bool = True):
    """A CheckList predict function ``texts -> (preds, confs)`` from any
    bias_suite model (a :class:`~bias_suite.models.base.Predictor` such as
    ``HFClassifier``/``CallablePredictor``, a name ``bias-suite run --model``
    takes: ``"default-sentiment"``, a model folder or hub id, a plain or
    CheckList-style function with ``class_names``).

    ``preds`` are class indices (argmax), ``confs`` an ``(n, C)`` array of
    probabilities, as ``checklist.pred_wrapper.PredictorWrapper.wrap_softmax``
    gives. The function carries ``class_names``, ``conf = "softmax"`` and
    ``predictor``; with ``cache=True`` each distinct text is predicted once
    (the tests of one TestSuite share sentences).
    """
    from ..models.base import as_predictor
    from ..models.checks import renormalise_rows

    if class_names is None and getattr(model, "class_names", None) is not None:
        class_names = list(model.class_names)
    pred = as_predictor(model, class_names)
    names = list(pred.class_names)
    store: dict = {}

    def predict_and_confidence(texts):
        texts = [str(t) for t in texts]
        missing = [t for t in dict.fromkeys(texts) if t not in store]
        if missing:
            P = np.asarray(pred.predict_proba(missing), dtype=np.float64)
            if P.shape != (len(missing), len(names)):
                raise ModelError(f"model returned probabilities of shape {P.shape}, expected {(len(missing), len(names))}")
            P, fixed = renormalise_rows(P)  # rounded probabilities (within 1e-2 of 1)
            if fixed:
                import warnings

                from ..exceptions import ProbabilityWarning

                warnings.warn(f"{fixed} of {len(missing)} probability rows did not sum to 1 (off by at most 0.01) "
                              "and were renormalised", ProbabilityWarning, stacklevel=2)
            store.update(zip(missing, P))
        confs = np.stack([store[t] for t in texts]) if texts else np.zeros((0, len(names)))
        if not cache:
            store.clear()
        return confs.argmax(axis=1), confs

    predict_and_confidence.class_names = names
    predict_and_confidence.conf = "softmax"
    predict_and_confidence.predictor = pred
    return predict_and_confidence


def _seq_conf(tag_probs) -> float:
    """Confidence of one tagged sentence: the smallest per-token max probability."""
    if tag_probs is None:
        return 1.0
    best = []
    for tp in tag_probs:
        if isinstance(tp, Mapping):
            best.append(max(tp.values()) if tp else 1.0)
        else:
            arr = np.asarray(tp, dtype=float)
            best.append(float(arr.max()) if arr.size else 1.0)
    return float(min(best)) if best else 1.0


def tagger_predict_fn(tagger):
    """A CheckList predict function for a token tagger with the documented
    interface ``tagger.predict(tokens_list) -> (pred_tags, tag_probs)`` (or a
    callable with that signature). CheckList data are the space-joined
    tokens; ``preds`` are the space-joined predicted tags (strings, so that
    sentences of different lengths stay one CheckList array) and ``confs``
    the smallest per-token max tag probability (1.0 without probabilities).
    """
    fn = tagger.predict if hasattr(tagger, "predict") else tagger
    if not callable(fn):
        raise ModelError(f"a tagger needs predict(tokens_list), got {type(tagger).__name__}")

    def predict_and_confidence(texts):
        toks = [str(t).split(" ") for t in texts]
        out = fn(toks)
        if isinstance(out, tuple) and len(out) == 2:
            tags, probs = out
        else:
            tags, probs = out, None
        tags = list(tags)
        if len(tags) != len(toks):
            raise ModelError(f"tagger returned {len(tags)} tag sequences for {len(toks)} sentences")
        preds = []
        for i, (t, tk) in enumerate(zip(tags, toks)):
            t = [str(x) for x in t]
            if len(t) != len(tk):
                raise ModelError(f"tagger returned {len(t)} tags for the {len(tk)} tokens of sentence {i}: {tk}")
            preds.append(" ".join(t))
        confs = [_seq_conf(p) for p in probs] if probs is not None else [1.0] * len(preds)
        return preds, confs

    predict_and_confidence.task = "sequence_labelling"
    predict_and_confidence.tagger = tagger
    return predict_and_confidence


class ScoredLookup:
    """A :class:`~bias_suite.models.base.Predictor` that replays already-scored
    probabilities by text (the fast path of ``bias-suite run``: INV tests go
    through real CheckList objects without predicting again)."""

    def __init__(self, texts: Sequence[str], probs, class_names: Sequence[str]):
        self.class_names = [str(c) for c in class_names]
        P = np.asarray(probs, dtype=np.float64)
        self._index: dict = {}
        for t, row in zip(texts, P):
            self._index.setdefault(str(t), row)

    @classmethod
    def from_scored(cls, scored) -> "ScoredLookup":
        src = failure_source(scored)
        if src.probs is None:
            raise BiasSuiteError("the fast path needs scored examples (with probs)")
        return cls(src.table["text"].tolist(), src.probs, src.classes)

    def predict_proba(self, texts):
        try:
            return np.stack([self._index[str(t)] for t in texts]) if len(texts) else np.zeros((0, len(self.class_names)))
        except KeyError as e:
            raise ModelError(f"text not among the scored examples: {e.args[0]!r}") from None


class SequenceLookup:
    """Replays scored sequence-labelling predictions (``pred_tags``) by tokens."""

    def __init__(self, table: pd.DataFrame):
        self._index = {}
        probs = table["tag_probs"] if "tag_probs" in table.columns else [None] * len(table)
        for toks, tags, tp in zip(table["tokens"], table["pred_tags"], probs):
            self._index.setdefault(" ".join(map(str, toks)), (list(tags), tp))

    def predict(self, tokens_list):
        try:
            got = [self._index[" ".join(map(str, t))] for t in tokens_list]
        except KeyError as e:
            raise ModelError(f"sentence not among the scored examples: {e.args[0]!r}") from None
        tp = [g[1] for g in got]
        return [g[0] for g in got], (None if any(x is None for x in tp) else tp)
