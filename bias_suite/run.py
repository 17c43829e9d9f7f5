"""The pipeline: suites -> examples -> predictions -> scored examples ->
metrics, intervals, tests, INV rows, verdicts -> files, for every task family.

Each step is the family's (:mod:`bias_suite.families`): ``run`` groups the
suites by family and runs each group the same way. A run that mixes families
needs a default model name (each family then takes its own default model);
the first family's files go to ``out_dir``, the others' to ``out_dir/<label>``
(``ner`` for sequence labelling).

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

import pandas as pd

from . import __version__
from .evaluation import evaluate
from .exceptions import BiasSuiteError
from .families import FAMILIES, TaskFamily, expand_suites, families_of, get_family, load_suite, write_scored
from .suites.loader import Suite, find_suite



@dataclass
class RunResult:
    """Everything a run produced."""

    examples: pd.DataFrame
    scored: object  # the family's validated scored data
    results: pd.DataFrame
    suites: list
    model: str
    paths: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    sequence: "RunResult | None" = None  # the next family's part of a run that mixes families (out_dir/<label>)
    failures: pd.DataFrame | None = None  # the failing INV cases (failures.jsonl)

    def parts(self) -> list:
        """This result and the other families' parts of the same run, in order."""
        out, p = [], self
        while p is not None:
            out.append(p)
            p = p.sequence
        return out

    @property
    def folder(self) -> Path | None:
        """The folder this part was written to (None when nothing was written)."""
        return Path(self.paths["metadata"]).parent if self.paths.get("metadata") else None


def load_predictor(model, *, device="auto", batch_size=64, progress=True, trust_remote_code=False, dtype=None):
    """A classifier from a model argument (see
    :func:`bias_suite.families.classification.model.load_model`)."""
    return FAMILIES["classification"].load_model(model, device=device, batch_size=batch_size, progress=progress,
                                                 trust_remote_code=trust_remote_code, dtype=dtype)


def predict_examples(examples: pd.DataFrame, predictor, *, class_map: dict | None = None, cache=False,
                     engine="local", progress: bool = False, stats: list | None = None):
    """Predict every distinct text once into classification scored data
    (see :func:`bias_suite.families.classification.model.score`)."""
    return FAMILIES["classification"].score(examples, predictor, class_map=class_map, cache=cache, engine=engine,
                                            progress=progress, stats=stats)


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
    multiplicity: str = "hierarchical",
    weighting: str = "balanced",
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
    multiplicity : "hierarchical" (default: groups and pairs at a
        family-wise error rate, their values at a selective false-discovery
        rate), "holm" (family-wise error rate) or "bh" (false-discovery rate)
        over every claim of the run (docs/verdicts.md).
    weighting : "balanced" (each template counts once per group, default)
        or "pooled" (every example once) in the group view (docs/metrics.md).
    """
    from .metrics.engine import check_weighting
    from .stats.verdicts import MULTIPLICITY

    check_weighting(weighting)  # bad options fail before any prediction
    if multiplicity not in MULTIPLICITY:
        raise BiasSuiteError(f"multiplicity must be one of {list(MULTIPLICITY)}, got {multiplicity!r}")
    table = _examples_table(suites, attributes)  # an examples table instead of suites (bias_suite.suites.tables)
    loaded = [] if table is not None else [s if isinstance(s, Suite) else load_suite(find_suite(s)) for s in suites]
    if not loaded and table is None:
        raise BiasSuiteError("no suites given")
    thresholds = suite_thresholds(loaded, thresholds, metrics)
    if out_dir is not None:  # a bad --out fails now, not after the predictions (nothing created yet)
        from .io.results import prepare_run_folder

        prepare_run_folder(out_dir, create=False)
    if table is not None and not table.has_template:  # each row its own template: group view only
        metrics, significance, invariance = _group_view_only(metrics), False, False
    known = list(dict.fromkeys(c for f in FAMILIES.values() for c in f.inv_criteria))
    if invariance and inv_criterion not in known:
        raise BiasSuiteError(f"unknown INV criterion {inv_criterion!r}; expected one of {known}")
    parts = {table.task: []} if table is not None else families_of(loaded)
    if len(parts) > 1 and not (isinstance(model, str) and all(model in get_family(k).default_names for k in parts)):
        raise BiasSuiteError(
            "this run mixes task families (" + "; ".join(f"{k}: {[s.name for s in v]}" for k, v in parts.items())
            + f"); with model {model!r} run them separately (one model serves one task), or use --model default "
            "(each family's default model: " + ", ".join(get_family(k).default_model for k in parts) + ")")
    order = sorted(parts, key=list(FAMILIES).index)  # the first family's files go to out_dir
    options = dict(metrics=metrics, attributes=attributes, max_tuples=max_tuples, seed=seed, device=device,
                   batch_size=batch_size, class_map=class_map, significance=significance, invariance=invariance,
                   inv_threshold=inv_threshold, inv_criterion=inv_criterion, inv_cases=inv_cases, bootstrap=bootstrap,
                   thresholds=thresholds, confidence=confidence, bernstein=bernstein, progress=progress,
                   trust_remote_code=trust_remote_code, cache=cache, engine=engine, dtype=dtype,
                   multiplicity=multiplicity, weighting=weighting)
    results = []
    for i, name in enumerate(order):
        fam = get_family(name)
        part_model = model if len(parts) == 1 else fam.default_model
        part_dir = out_dir if i == 0 or out_dir is None else Path(out_dir) / _subfolder(fam)
        results.append(_run_family(fam, parts[name], table, part_model, part_dir, **options))
    for first, nxt in zip(results, results[1:]):
        first.sequence = nxt
    return results[0]


def _subfolder(fam: TaskFamily) -> str:
    return (fam.label or fam.name).lower()


def _run_family(fam: TaskFamily, suites: list, table, model, out_dir, *, metrics, attributes, max_tuples, seed, device,
                batch_size, class_map, significance, invariance, inv_threshold, inv_criterion, inv_cases, bootstrap,
                thresholds, confidence, bernstein, progress, trust_remote_code, cache, engine, dtype, multiplicity,
                weighting) -> RunResult:
    """One family's part of a run: expand, load the model, predict, judge, write."""
    examples = expand_suites(suites, attributes=attributes) if table is None else table.frame
    if examples.empty:
        raise BiasSuiteError("the suites expand to no examples (check --attribute)")
    predictor, model_name = fam.load_model(model, device=device, batch_size=batch_size, progress=progress,
                                           trust_remote_code=trust_remote_code, dtype=dtype)
    fam.check_model(suites, predictor, class_map, table=table)
    pstats: list = []
    inv_failures = None
    scored = fam.score(examples, predictor, class_map=class_map, cache=cache, engine=engine, progress=progress,
                       stats=pstats)
    order = _present({a: t.groups for s in suites for a, t in s.identity.items()} if table is None
                     else table.group_order(), examples)
    inv_rows = []
    if invariance and fam.inv_criteria:  # CheckList INV fail rates on the scored predictions (no new predictions)
        from .interop import invariance_for_run

        criterion = inv_criterion if inv_criterion in fam.inv_criteria else fam.inv_criteria[0]
        rows, inv_failures = invariance_for_run(scored, threshold=inv_threshold, seed=seed, group_order_override=order,
                                                criterion=criterion, mode=inv_cases, with_failures=True)
        inv_rows.append(rows)
    # metrics, intervals, tests, Bernstein and INV rows: judged once, in one error-control family
    res = evaluate(scored, metrics=metrics, max_tuples=max_tuples, seed=seed, group_order_override=order,
                   bootstrap=bootstrap, confidence=confidence, thresholds=thresholds, significance=significance,
                   bernstein=bernstein, multiplicity=multiplicity, weighting=weighting, extra_rows=inv_rows)
    meta = {
        "bias_suite": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "task": fam.name,
        "model": model_name,
        "model_fingerprint": getattr(predictor, "fingerprint", lambda: None)(),
        **fam.run_meta(predictor, scored),
        "suites": [{"name": s.name, "path": s.path} for s in suites],
        **({"examples_table": table.describe()} if table is not None else {}),
        "examples": int(len(examples)),
        "distinct_texts": int(examples["text"].nunique()),
        "max_tuples": max_tuples,
        "seed": seed,
        "bootstrap": bootstrap,
        "intervals": dict(res.attrs.get("intervals") or {}, bootstrap=bootstrap),
        "thresholds": dict(thresholds or {}),
        "rules": [{"source": f"{st.path or st.name} thresholds[{i}]", **d}
                  for st in suites for i, d in enumerate(getattr(st, "thresholds", None) or [])],
        "confidence": confidence,
        "weighting": weighting,
        "invariance": bool(invariance),
        "inv_threshold": inv_threshold if invariance else None,
        "inv_criterion": criterion if invariance and fam.inv_criteria else None,
        "inv_cases": inv_cases if invariance else None,
        "predictions": pstats[0].to_dict() if pstats else None,
        "python": platform.python_version(),
        "versions": _library_versions(),
    }
    paths = write_run(out_dir, examples, scored, res, meta, failures=inv_failures) if out_dir is not None else {}
    return RunResult(examples, scored, res, list(suites), model_name, paths, meta, failures=inv_failures)


def write_run(out_dir, examples, scored, results, meta, *, failures=None) -> dict:
    """Write a run folder: examples, scored examples (JSONL + Parquet), the
    failing INV cases (``failures.jsonl``, which the report shows), results
    (JSONL + CSV), each file atomically, then ``run.json`` listing
    them (size, SHA-256); files an earlier run left there are removed
    (:func:`bias_suite.io.results.commit_run_folder`)."""
    from .io.results import prepare_run_folder, write_results
    from .families import write_jsonl

    out = prepare_run_folder(out_dir)  # ".." resolved: no stray folders
    paths = {"examples": write_jsonl(examples, out / "examples.jsonl")}
    paths.update({f"scored_{k}": v for k, v in write_scored(scored, out).items()})
    if failures is not None:
        paths["failures"] = write_jsonl(failures, out / "failures.jsonl")
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
