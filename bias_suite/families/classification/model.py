"""Classification models: loading a predictor, checking its classes, and
predicting every distinct text once into validated scored data."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...exceptions import ModelError
from .scored import ScoredData, scored_from_arrays

DEFAULT_NAMES = ("default", "default-sentiment")


def load_model(model, *, device="auto", batch_size=64, progress=True, trust_remote_code=False, dtype=None):
    """A predictor from a model argument: a predictor object or callable, the
    name of a bundled default model, a local folder or a hub id, or a
    language model behind a prompt (a :class:`~bias_suite.models.PromptSpec`
    or a model spec file, see :mod:`bias_suite.models.prompt_spec`); returns
    ``(predictor, display name)``."""
    from ...models import HFClassifier, as_predictor
    from ...models.base import model_name
    from ...models.prompt_spec import PromptSpec, is_prompt_spec_file, read_prompt_spec

    if is_prompt_spec_file(model):
        model = read_prompt_spec(model)
    if isinstance(model, PromptSpec):
        from ...models import PromptClassifier

        clf = PromptClassifier(model.model, **model.options(), device=device, batch_size=batch_size,
                               progress=progress, trust_remote_code=trust_remote_code, dtype=dtype,
                               name=model.display_name)
        return clf, model.display_name
    if not isinstance(model, (str, Path)):
        predictor = as_predictor(model)
        return predictor, model_name(predictor)
    name = str(model)
    options = dict(device=device, batch_size=batch_size, progress=progress, dtype=dtype)
    if name in DEFAULT_NAMES:
        from ...models import ensure_model

        return HFClassifier(ensure_model("default-sentiment", progress=progress), **options), "default-sentiment"
    return HFClassifier(name, trust_remote_code=trust_remote_code, **options), name


def check_model(suites, predictor, class_map: dict | None = None, table=None) -> None:
    """Every class of every suite, and every label of an examples ``table``
    (after ``class_map``), is one of the model's."""
    if table is not None:
        from ...suites.tables import check_labels

        check_labels(table, predictor.class_names, class_map)
    known = set(predictor.class_names)
    for s in suites:
        mapped = [class_map.get(c, c) if class_map else c for c in s.classes]
        missing = [c for c in mapped if c not in known]
        if missing:
            raise ModelError(
                f"suite {s.name!r} has classes {s.classes} but the model's classes are {list(predictor.class_names)}; "
                f"{missing} are unknown to the model (map them with --class-map SUITE_CLASS=MODEL_CLASS"
                + (", or give them answer words with --verbalizer CLASS=WORD[,WORD]"
                   if getattr(predictor, "verbalizer", None) is not None else "") + ")"
            )


def score(examples: pd.DataFrame, predictor, *, class_map: dict | None = None, cache=False, engine="local",
          progress: bool = False, stats: list | None = None) -> ScoredData:
    """Predict every distinct text once and join the probabilities to the
    examples (``cache``/``engine``: see :func:`bias_suite.predict.predict`);
    the :class:`~bias_suite.predict.PredictionStats` are appended to ``stats``."""
    from ...predict import predict

    texts = examples["text"].to_numpy(dtype=object)
    uniq, inverse = np.unique(texts, return_inverse=True)
    probs, st = predict(predictor, list(uniq), cache=cache, engine=engine, progress=progress, kind="classification")
    if stats is not None:
        st.inputs = int(len(texts))
        stats.append(st)
    classes = list(predictor.class_names)
    if probs.shape != (len(uniq), len(classes)):
        raise ModelError(f"model returned probabilities of shape {probs.shape}, expected {(len(uniq), len(classes))}")
    frame = examples.copy()
    if class_map:
        frame["label"] = frame["label"].map(lambda v: class_map.get(v, v) if v is not None else None)
    return scored_from_arrays(frame, probs[inverse], classes)


def run_meta(predictor, data) -> dict:
    return {"classes": list(data.classes)}
