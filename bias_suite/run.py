"""Wire the stages: suites -> examples -> predictions -> scored examples ->
metrics (+ statistics) -> files and summary.

>>> from bias_suite.run import run
>>> result = run(["sentiment_gender"], model="default-sentiment", out_dir="results")  # doctest: +SKIP
>>> result.results.query("metric == 'FNED'")  # doctest: +SKIP
"""
from __future__ import annotations

import datetime as _dt
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from . import __version__
from .exceptions import BiasSuiteError, ModelError
from .evaluation import evaluate
from .metrics.engine import results_frame
from .scoring.scored import ScoredData, scored_from_arrays, write_scored
from .suites.expansion import expand_suites
from .suites.loader import Suite, find_suite, load_suite

DEFAULT_MODEL_NAMES = ("default", "default-sentiment")


@dataclass
class RunResult:
    """Everything a run produced."""

    examples: pd.DataFrame
    scored: ScoredData
    results: pd.DataFrame
    suites: list
    model: str
    paths: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    sequence: "RunResult | None" = None  # NER part of a run that mixes tasks (files in out_dir/ner)


def load_predictor(model, *, device="auto", batch_size=64, progress=True, trust_remote_code=False, dtype=None):
    """A predictor from a model argument: a predictor object or callable, the
    name of a bundled default model, a local folder or a hub id."""
    from .models import HFClassifier, as_predictor

    if not isinstance(model, (str, Path)):
        return as_predictor(model), getattr(model, "name", type(model).__name__)
    name = str(model)
    if name in DEFAULT_MODEL_NAMES:
        from .models import ensure_model

        path = ensure_model("default-sentiment", progress=progress)
        return HFClassifier(path, device=device, batch_size=batch_size, progress=progress, dtype=dtype), "default-sentiment"
    return (
        HFClassifier(name, device=device, batch_size=batch_size, progress=progress, trust_remote_code=trust_remote_code,
                     dtype=dtype),
        name,
    )


def predict_examples(examples: pd.DataFrame, predictor, *, class_map: dict | None = None, cache=False,
                     engine="local", progress: bool = False, stats: list | None = None) -> ScoredData:
    """Predict every distinct text once and join the probabilities to the
    examples as a :class:`ScoredData`.

    ``cache`` / ``engine``: see :func:`bias_suite.predict.predict` (off and
    local by default here; :func:`run` turns the cache on). The
    :class:`~bias_suite.predict.PredictionStats` are appended to ``stats``
    when a list is given.
    """
    from .predict import predict

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


def _library_versions() -> dict:
    """Versions of the libraries that shape the numbers (for run.json)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in ("torch", "transformers", "tokenizers", "numpy", "pandas", "scipy", "scikit-learn"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def _check_classes(suites: Sequence[Suite], classes: Sequence[str], class_map: dict | None):
    known = set(classes)
    for s in suites:
        if s.task != "classification":
            continue
        mapped = [class_map.get(c, c) if class_map else c for c in s.classes]
        missing = [c for c in mapped if c not in known]
        if missing:
            raise ModelError(
                f"suite {s.name!r} has classes {s.classes} but the model's classes are {list(classes)}; "
                f"{missing} are unknown to the model (map them with --class-map SUITE_CLASS=MODEL_CLASS)"
            )


def run(
    suites: Iterable,
    model,
    out_dir=None,
    *,
    metrics=None,
    attributes=None,
    max_tuples: int | None = 100,
    seed: int = 0,
    device: str = "auto",
    batch_size: int = 64,
    class_map: dict | None = None,
    significance: bool = True,
    invariance: bool = True,
    inv_threshold: float = 0.1,
    inv_criterion: str = "checklist",
    inv_cases: str = "all_terms",
    bootstrap: int = 200,
    thresholds: dict | None = None,
    confidence: float = 0.95,
    bernstein: bool = True,
    progress: bool = True,
    trust_remote_code: bool = False,
    cache=True,
    engine="local",
    dtype=None,
) -> RunResult:
    """Expand suites, predict, score, compute metrics and write the results.

    Parameters
    ----------
    suites : suite paths, bundled suite names or :class:`Suite` objects; or
        one examples table instead: a table file's path (CSV, TSV, JSONL,
        Parquet, ``datasets`` folder, CoNLL; default columns), an
        :class:`~bias_suite.suites.tables.ExamplesTable` from ``read_examples``
        (any column mapping) or a DataFrame of examples.
    model : a default model name ("default-sentiment"), a local folder, a hub
        id, a predictor object or a callable (with ``class_names``).
    out_dir : folder for ``examples.*``, ``scored.*``, ``results.*`` and
        ``run.json``; nothing is written when None.
    bootstrap : template resamples of the cluster bootstrap (0: no intervals);
        with ``confidence`` the intervals behind the ``verdict`` column.
    bernstein : add the Bernstein-bounded disparity rows (classification).
    cache : the prediction cache: True (default folder), False, a folder or a
        :class:`~bias_suite.predict.PredictionCache`; a second run of the same
        suites and model makes no forward passes, an interrupted one resumes.
    engine : "local", "ray" or an engine object (:mod:`bias_suite.predict.engines`).
    inv_criterion / inv_cases : the INV rows: "checklist" (CheckList's
        ``Expect.inv``, metric ``INV-FailRate``) or "prob" (any class
        probability moves by more than ``inv_threshold``, metric
        ``INV-ProbShift-FailRate``); "all_terms" (every term of every group
        in one case, as a CheckList perturbation) or "per_group" (one seeded
        term per group).
    dtype : weights dtype of Hugging Face models ("bf16", "fp16" on GPUs;
        "int8": dynamic int8 quantization on the CPU).
    """
    table = _examples_table(suites, attributes)  # an examples table instead of suites (bias_suite.suites.tables)
    loaded = [] if table is not None else [s if isinstance(s, Suite) else load_suite(find_suite(s)) for s in suites]
    if not loaded and table is None:
        raise BiasSuiteError("no suites given")
    thresholds = suite_thresholds(loaded, thresholds, metrics)
    if out_dir is not None:  # a bad --out fails now, not after the predictions (nothing created yet)
        from .report.files import prepare_run_folder

        prepare_run_folder(out_dir, create=False)
    if table is not None and not table.has_template:  # each row its own template: group view only
        metrics, significance, invariance = _group_view_only(metrics), False, False
    if table is not None and table.task == "sequence_labelling":
        from .run_sequence import run_sequence

        return run_sequence(
            [], model, out_dir, metrics=metrics, max_tuples=max_tuples, seed=seed, device=device,
            batch_size=batch_size, significance=significance, progress=progress, trust_remote_code=trust_remote_code,
            cache=cache, engine=engine, dtype=dtype, invariance=invariance, inv_threshold=inv_threshold,
            bootstrap=bootstrap, confidence=confidence, table=table, thresholds=thresholds,
        )
    if any(s.task == "sequence_labelling" for s in loaded):  # NER suites: bias_suite.run_sequence
        from .run_sequence import run_mixed

        return run_mixed(
            loaded, model, out_dir, metrics=metrics, attributes=attributes, max_tuples=max_tuples, seed=seed,
            device=device, batch_size=batch_size, class_map=class_map, significance=significance, bootstrap=bootstrap,
            confidence=confidence, bernstein=bernstein, progress=progress, trust_remote_code=trust_remote_code,
            cache=cache, engine=engine, dtype=dtype, invariance=invariance, inv_threshold=inv_threshold,
            thresholds=thresholds,
        )
    examples = expand_suites(loaded, attributes=attributes) if table is None else table.frame
    if examples.empty:
        raise BiasSuiteError("the suites expand to no examples (check --attribute)")
    predictor, model_name = load_predictor(
        model, device=device, batch_size=batch_size, progress=progress, trust_remote_code=trust_remote_code, dtype=dtype
    )
    _check_classes(loaded, predictor.class_names, class_map)
    if table is not None:
        from .suites.tables import check_labels

        check_labels(table, predictor.class_names, class_map)
    pstats: list = []
    scored = predict_examples(examples, predictor, class_map=class_map, cache=cache, engine=engine, progress=progress,
                              stats=pstats)
    group_order = {a: t.groups for s in loaded for a, t in s.identity.items()} if table is None else table.group_order()
    results = evaluate(scored, metrics=metrics, max_tuples=max_tuples, seed=seed, group_order_override=_present(group_order, examples),
                       bootstrap=bootstrap, confidence=confidence, thresholds=thresholds,
                       significance=significance and metrics is None, bernstein=bernstein and metrics is None)
    parts = [results]  # metrics, intervals, tests, Bernstein rows: judged together (one Holm family)
    if significance and metrics is not None:
        from .stats import significance_tests

        parts.append(significance_tests(scored, adjust="holm"))
    if bernstein and metrics is not None:
        from .stats import bernstein_rows

        parts.append(bernstein_rows(scored, confidence=confidence))
    if invariance:  # CheckList INV fail rates on the scored probabilities (no new predictions)
        from .interop import invariance_for_run

        parts.append(invariance_for_run(scored, threshold=inv_threshold, seed=seed, group_order_override=_present(group_order, examples),
                                        criterion=inv_criterion, mode=inv_cases))
    records = [r for part in parts for r in part.to_dict("records")]  # (pd.concat warns on all-null columns)
    results = results_frame(records)
    results["verdict"] = pd.Series([r.get("verdict") for r in records], dtype=object)  # the bootstrap's metric verdicts
    from .stats.verdicts import add_verdicts  # significance and Bernstein verdicts

    results = add_verdicts(results, confidence=confidence, group_orders=_present(group_order, examples),
                           thresholds=thresholds)
    meta = {
        "bias_suite": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "model": model_name,
        "model_fingerprint": getattr(predictor, "fingerprint", lambda: None)(),
        "classes": list(scored.classes),
        "suites": [{"name": s.name, "path": s.path} for s in loaded],
        **({"examples_table": table.describe()} if table is not None else {}),
        "examples": int(len(examples)),
        "distinct_texts": int(examples["text"].nunique()),
        "max_tuples": max_tuples,
        "seed": seed,
        "bootstrap": bootstrap,
        "intervals": dict(results.attrs.get("intervals") or {}, bootstrap=bootstrap),
        "thresholds": dict(thresholds or {}),
        "rules": [{"source": f"{st.path or st.name} thresholds[{i}]", **d}
                  for st in loaded for i, d in enumerate(getattr(st, "thresholds", None) or [])],
        "confidence": confidence,
        "inv_threshold": inv_threshold if invariance else None,
        "inv_criterion": inv_criterion if invariance else None,
        "inv_cases": inv_cases if invariance else None,
        "predictions": pstats[0].to_dict(),
        "python": platform.python_version(),
        "versions": _library_versions(),
    }
    paths = write_run(out_dir, examples, scored, results, meta) if out_dir is not None else {}
    return RunResult(examples, scored, results, loaded, model_name, paths, meta)


def write_run(out_dir, examples, scored, results, meta) -> dict:
    """Write a run folder: examples, scored examples (JSONL + Parquet),
    results (JSONL + CSV), each file atomically, then ``run.json`` listing
    them (size, SHA-256); files an earlier run left there are removed
    (:func:`bias_suite.report.files.commit_run_folder`)."""
    from .report.files import prepare_run_folder, write_results
    from .scoring.scored import write_jsonl

    out = prepare_run_folder(out_dir)  # ".." resolved: no stray folders
    paths = {"examples": write_jsonl(examples, out / "examples.jsonl")}
    paths.update({f"scored_{k}": v for k, v in write_scored(scored, out).items()})
    paths.update(write_results(results, out, metadata=meta, files=list(paths.values())))
    return paths


def suite_thresholds(suites: Sequence[Suite], thresholds=None, metrics=None) -> dict | None:
    """tau per metric or topic: the suites' ``materiality`` entries, then
    ``thresholds`` (the command line's or the caller's) over them. A key that
    is no metric or topic, or two suites giving one key different values, is
    an error naming the suite file, line and field."""
    from .exceptions import MetricError, SuiteError
    from .metrics.engine import resolve_metrics
    from .stats.verdicts import check_thresholds

    specs = resolve_metrics(metrics) if metrics is not None else None
    merged: dict = {}
    origin: dict = {}
    for s in suites:
        for key, tau in (getattr(s, "materiality", None) or {}).items():
            where = dict(file=s.path, line=s.line_of("materiality", key), field=f"materiality.{key}")
            try:
                check_thresholds({key: tau}, specs)
            except MetricError as e:
                raise SuiteError(str(e), **where) from None
            if key in merged and merged[key] != tau and key not in (thresholds or {}):
                raise SuiteError(f"{origin[key]} sets {key}={merged[key]}; one run takes one threshold per metric "
                                 "or topic (give it with --threshold to decide)", **where)
            merged[key], origin[key] = tau, s.path
    merged.update(check_thresholds(thresholds, specs))
    return merged or None


def _present(order: dict, examples: pd.DataFrame) -> dict:
    """Group orders from the identity-term files, restricted to the groups
    present in the examples."""
    out = {}
    for a, groups in order.items():
        present = set(examples.loc[examples["attribute"] == a, "group"])
        if present:
            out[a] = [g for g in groups if g in present]
    return out


def _examples_table(suites, attributes):
    """The :class:`~bias_suite.suites.tables.ExamplesTable` when ``suites`` is
    one (or a DataFrame of examples, or one path to a table file), else None."""
    from .suites.tables import ExamplesTable, is_examples_table, read_examples

    items = [suites] if isinstance(suites, (str, Path, ExamplesTable, pd.DataFrame)) else list(suites)
    tables = [s for s in items if isinstance(s, (ExamplesTable, pd.DataFrame))
              or isinstance(s, (str, Path)) and is_examples_table(s)]
    if not tables:
        return None
    if len(items) != 1:
        raise BiasSuiteError("give either suites or one examples table, not both or several tables")
    t = tables[0]
    if isinstance(t, pd.DataFrame):
        from .suites.tables import from_frame

        t = from_frame(t)
    elif not isinstance(t, ExamplesTable):
        t = read_examples(t)
    return t.select(attributes)


def _group_view_only(metrics):
    """The group-view metrics among ``metrics`` (all of them when None)."""
    from .metrics.engine import resolve_metrics

    specs = resolve_metrics(metrics)
    kept = [m for m in specs if m.view == "group"]
    if not kept:
        raise BiasSuiteError(f"{[m.name for m in specs]} need counterfactual templates and the examples table has "
                             "no template column (--template-column); ask for group metrics")
    return kept
