"""The sequence-labelling (NER) branch of :func:`bias_suite.run.run`:
NER suites -> examples (tokens, gold BILOU) -> tagger -> scored sequences ->
metrics (+ significance) -> files.

Model choice for NER suites: ``default``/``default-sentiment``/``default-ner``
-> the built ``default-ner`` tagger (MiniLM + CRF); a folder saved by
:class:`~bias_suite.models.crf.TransformerCrfTagger` -> that tagger; any
other folder or hub id -> :class:`~bias_suite.models.token.HFTokenClassifier`;
an object with ``predict(tokens_list)`` and ``tag_names`` -> used as is.

When one run mixes classification and NER suites, the classification part
runs as before (files in ``out_dir``) and the NER part writes its files to
``out_dir/ner``; that needs a default model name (the two tasks need two
models).
"""
from __future__ import annotations

import datetime as _dt
import platform
from pathlib import Path

import numpy as np

from . import __version__
from .exceptions import BiasSuiteError, ModelError

__all__ = ["load_tagger", "tag_examples", "run_sequence", "DEFAULT_TAGGER_NAMES", "NER_SUBDIR"]

DEFAULT_TAGGER_NAMES = ("default", "default-sentiment", "default-ner")
NER_SUBDIR = "ner"


def load_tagger(model, *, device="auto", batch_size=64, progress=True, trust_remote_code=False, dtype=None):
    """A tagger (``predict(tokens_list) -> (pred_tags, tag_probs)``, ``tag_names``)
    and its display name, from a model argument (see module doc)."""
    if not isinstance(model, (str, Path)):
        if hasattr(model, "predict") and hasattr(model, "tag_names"):
            return model, getattr(model, "name", type(model).__name__)
        raise ModelError(f"cannot use {type(model).__name__} as a tagger: it needs predict(tokens_list) and tag_names")
    name = str(model)
    from .models.default_ner import passive_omp_threads

    passive_omp_threads()
    from .models.crf import TransformerCrfTagger, is_crf_folder

    if name in DEFAULT_TAGGER_NAMES:
        from .models import ensure_model

        path = ensure_model("default-ner", progress=progress)
        return TransformerCrfTagger(path, device=device, batch_size=batch_size, progress=progress,
                                    dtype=dtype), "default-ner"
    if is_crf_folder(Path(name).expanduser()):
        return TransformerCrfTagger(Path(name).expanduser(), device=device, batch_size=batch_size, progress=progress,
                                    dtype=dtype), name
    from .models.token import HFTokenClassifier

    return HFTokenClassifier(name, device=device, batch_size=batch_size, progress=progress,
                             trust_remote_code=trust_remote_code, dtype=dtype), name


def tag_examples(examples, tagger, *, cache=False, engine="local", progress=False, stats: list | None = None):
    """Tag every distinct token sequence once and build the scored data
    (``cache``/``engine``: see :func:`bias_suite.predict.predict`)."""
    from .predict import predict
    from .scoring.sequence import sequence_scored_from_predictions

    tokens = [list(t) for t in examples["tokens"]]
    (pred, probs), st = predict(tagger, tokens, cache=cache, engine=engine, progress=progress,
                                kind="sequence_labelling")
    if stats is not None:
        stats.append(st)
    names = list(tagger.tag_names)
    if probs is not None:
        probs = [np.asarray(p, dtype=np.float64) for p in probs]
    return sequence_scored_from_predictions(examples, pred, probs, names)


def run_sequence(suites, model, out_dir=None, *, metrics=None, attributes=None, max_tuples=100, seed=0,
                 device="auto", batch_size=64, significance=True, progress=True, trust_remote_code=False,
                 cache=True, engine="local", dtype=None, invariance=True, inv_threshold=0.1, bootstrap=200,
                 confidence=0.95, table=None, thresholds=None):
    """Expand NER suites (or take the examples of ``table``, an NER
    :class:`~bias_suite.suites.tables.ExamplesTable`), tag, score, evaluate;
    returns a ``RunResult``."""
    from .evaluation import evaluate
    from .metrics.engine import results_frame
    from .stats.significance import sequence_significance_tests
    from .run import RunResult, _present
    from .suites.expansion import expand_suites

    examples = expand_suites(suites, attributes=attributes) if table is None else table.frame
    if examples.empty:
        raise BiasSuiteError("the sequence-labelling suites expand to no examples (check --attribute)")
    tagger, model_name = load_tagger(model, device=device, batch_size=batch_size, progress=progress,
                                     trust_remote_code=trust_remote_code, dtype=dtype)
    pstats: list = []
    scored = tag_examples(examples, tagger, cache=cache, engine=engine, progress=progress, stats=pstats)
    order = _present({a: t.groups for s in suites for a, t in s.identity.items()} if table is None
                     else table.group_order(), examples)
    results = evaluate(scored, metrics=metrics, max_tuples=max_tuples, seed=seed, group_order_override=order,
                       bootstrap=bootstrap, confidence=confidence, thresholds=thresholds,
                       significance=significance and metrics is None)  # intervals, tests, verdicts
    parts = [results]
    if significance and metrics is not None:
        parts.append(sequence_significance_tests(scored, adjust="holm", group_order_override=order))
    if invariance:  # CheckList INV on the tagged sequences: fails when a tag outside the identity span changes
        from .interop import invariance_for_run

        parts.append(invariance_for_run(scored, threshold=inv_threshold, seed=seed, group_order_override=order))
    records = [r for part in parts for r in part.to_dict("records")]
    results = results_frame(records)
    import pandas as pd

    from .stats.verdicts import add_verdicts  # the bootstrap's verdicts stay; tests get theirs

    results["verdict"] = pd.Series([r.get("verdict") for r in records], dtype=object)
    results = add_verdicts(results, confidence=confidence, group_orders=order, thresholds=thresholds)
    meta = {
        "bias_suite": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "task": "sequence_labelling",
        "model": model_name,
        "model_fingerprint": getattr(tagger, "fingerprint", lambda: None)(),
        "tag_names": list(tagger.tag_names),
        "classes": list(scored.types),
        "suites": [{"name": s.name, "path": s.path} for s in suites],
        **({"examples_table": table.describe()} if table is not None else {}),
        "examples": int(len(examples)),
        "distinct_texts": int(examples["text"].nunique()),
        "max_tuples": max_tuples,
        "seed": seed,
        "predictions": pstats[0].to_dict(),
        "invariance": bool(invariance),
        "bootstrap": bootstrap,
        "intervals": dict(results.attrs.get("intervals") or {}, bootstrap=bootstrap),
        "thresholds": dict(thresholds or {}),
        "confidence": confidence,
        "python": platform.python_version(),
    }
    from .run import write_run

    paths = write_run(out_dir, examples, scored, results, meta) if out_dir is not None else {}
    return RunResult(examples, scored, results, list(suites), model_name, paths, meta)


def run_mixed(loaded, model, out_dir, **kw):
    """Run NER suites (and classification suites, if any) of one call."""
    from .run import run

    ner = [s for s in loaded if s.task == "sequence_labelling"]
    cls = [s for s in loaded if s.task != "sequence_labelling"]
    seq_kw = {k: kw[k] for k in ("metrics", "attributes", "max_tuples", "seed", "device", "batch_size", "significance",
                                 "progress", "trust_remote_code", "cache", "engine", "dtype", "invariance",
                                 "inv_threshold", "bootstrap", "confidence", "thresholds") if k in kw}
    if not cls:
        return run_sequence(ner, model, out_dir, **seq_kw)
    if not (isinstance(model, str) and model in ("default", "default-sentiment")):
        raise BiasSuiteError(
            f"this run mixes classification suites ({[s.name for s in cls]}) and sequence-labelling suites "
            f"({[s.name for s in ner]}); with model {model!r} run them separately (one model serves one task), "
            "or use --model default (default-sentiment for classification, default-ner for NER)")
    res = run(cls, model, out_dir, **kw)
    sub = None if out_dir is None else Path(out_dir) / NER_SUBDIR
    res.sequence = run_sequence(ner, "default-ner", sub, **seq_kw)
    return res
