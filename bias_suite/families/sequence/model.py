"""Sequence-labelling models: loading a tagger and tagging every distinct
token sequence once into validated scored data.

Model choice: ``default``/``default-sentiment``/``default-ner`` -> the built
``default-ner`` tagger (MiniLM + CRF); a folder saved by
:class:`~bias_suite.models.crf.TransformerCrfTagger` -> that tagger; any other
folder or hub id -> :class:`~bias_suite.models.token.HFTokenClassifier`; an
object with ``predict(tokens_list)`` and ``tag_names`` -> used as is.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...exceptions import ModelError
from .scored import sequence_scored_from_predictions

DEFAULT_NAMES = ("default", "default-sentiment", "default-ner")


def load_model(model, *, device="auto", batch_size=64, progress=True, trust_remote_code=False, dtype=None):
    """A tagger (``predict(tokens_list) -> (pred_tags, tag_probs)``, ``tag_names``)
    and its display name, from a model argument (see module doc)."""
    if not isinstance(model, (str, Path)):
        if hasattr(model, "predict") and hasattr(model, "tag_names"):
            from ...models.base import model_name

            return model, model_name(model)
        raise ModelError(f"cannot use {type(model).__name__} as a tagger: it needs predict(tokens_list) and tag_names")
    name = str(model)
    from ...models.default_ner import passive_omp_threads

    passive_omp_threads()
    from ...models.crf import TransformerCrfTagger, is_crf_folder

    options = dict(device=device, batch_size=batch_size, progress=progress, dtype=dtype)
    if name in DEFAULT_NAMES:
        from ...models import ensure_model

        return TransformerCrfTagger(ensure_model("default-ner", progress=progress), **options), "default-ner"
    if is_crf_folder(Path(name).expanduser()):
        return TransformerCrfTagger(Path(name).expanduser(), **options), name
    from ...models.token import HFTokenClassifier

    return HFTokenClassifier(name, trust_remote_code=trust_remote_code, **options), name


def check_model(suites, predictor, class_map=None, table=None) -> None:
    """Any tag set serves: the entity types come from the tags."""


def score(examples, tagger, *, class_map=None, cache=False, engine="local", progress=False, stats: list | None = None):
    """Tag every distinct token sequence once and build the scored data
    (``cache``/``engine``: see :func:`bias_suite.predict.predict`)."""
    from ...predict import predict

    tokens = [list(t) for t in examples["tokens"]]
    (pred, probs), st = predict(tagger, tokens, cache=cache, engine=engine, progress=progress,
                                kind="sequence_labelling")
    if stats is not None:
        stats.append(st)
    if probs is not None:
        probs = [np.asarray(p, dtype=np.float64) for p in probs]
    return sequence_scored_from_predictions(examples, pred, probs, list(tagger.tag_names))


def run_meta(tagger, data) -> dict:
    return {"task": "sequence_labelling", "tag_names": list(tagger.tag_names), "classes": list(data.types)}
