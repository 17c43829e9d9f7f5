"""The pipeline: suites -> examples -> predictions -> scored examples ->
metrics, intervals, tests, INV rows, verdicts -> files, for every task family.

Each step is the family's (:mod:`bias_suite.families`): ``run`` groups the
suites by family and runs each group the same way. A run that mixes families
needs a default model name (each family then takes its own default model);
the first family's files go to ``out_dir``, the others' to ``out_dir/<label>``
(``ner`` for sequence labelling).

The public entry point is ``bias_suite.run`` (:mod:`bias_suite.api`), which
calls :func:`run` here and gives its results their headline.
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
from .exceptions import BiasSuiteError, option
from .options import RunOptions
from .families import FAMILIES, TaskFamily, expand_suites, families_of, get_family, load_suite, write_scored
from .suites.loader import Suite, find_suite



@dataclass(repr=False)
class RunResult:
    """Everything a run produced: ``examples``, ``scored`` (the scored
    examples), ``results`` (``bias_suite.Results`` when the run came from
    ``bias_suite.run``), ``suites``, ``model`` (its name), ``paths`` and
    ``metadata`` (what ``run.json`` holds), ``failures`` (the failing INV
    cases), ``comparison`` (with ``baseline=``) and, for a run that mixes
    task families, ``sequence`` (the next family's part; ``parts()`` lists
    them all). ``print()`` prints what ``bias-suite run`` prints after the
    same run; a notebook shows the same headline."""

    examples: pd.DataFrame
    scored: object  # the family's validated scored data
    results: pd.DataFrame
    suites: list
    model: str
    paths: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    sequence: "RunResult | None" = None  # the next family's part of a run that mixes families (out_dir/<label>)
    failures: pd.DataFrame | None = None  # the failing INV cases (failures.jsonl)
    comparison: object = None  # with run(..., baseline=...): the Comparison (bias_suite.comparison)

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

    # How the run shows itself (print, a notebook's view): set by ``bias_suite.run``
    # (bias_suite.api, above the report layer); None for a run made here directly.
    _view = None

    def print(self, *, detail: bool = False, lines: int = 60, file=None, width: int | None = None,
              quiet: bool = False) -> None:
        """The headline of every part of the run, as ``bias-suite run``
        prints it (options as ``bias_suite.Results.print``)."""
        if self._view is None:
            raise BiasSuiteError("this run has no headline to print: bias_suite.run gives runs that print")
        self._view.print(self, detail=detail, lines=lines, file=file, width=width, quiet=quiet)

    def _repr_html_(self):
        return None if self._view is None else self._view.html(self)

    def __repr__(self) -> str:
        parts = "; ".join(f"{p.model}: {len(p.examples)} examples, {len(p.results)} result rows"
                          + (f" in {p.folder}" if p.folder is not None else "") for p in self.parts())
        return f"<RunResult {parts}; .print() for the headline>"


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


def run(suites: Iterable, model, out_dir=None, options: RunOptions | None = None, **overrides) -> RunResult:
    """Expand suites, predict, then judge every part once (metrics,
    intervals, tests, Bernstein and INV rows in one verdict stage), and
    write the results.

    Parameters
    ----------
    suites : suite paths, bundled suite names or :class:`Suite` objects; or
        one examples table instead: a table file's path (CSV, TSV, JSONL,
        Parquet, ``datasets`` folder, CoNLL; default columns), an
        :class:`~bias_suite.suites.tables.ExamplesTable` from ``read_examples``
        (any column mapping) or a DataFrame of examples.
    model : a default model name ("default-sentiment"), a local folder, a hub
        id, a predictor object (``class_names`` and ``predict_proba``) or a
        callable with a ``class_names`` attribute
        (:class:`~bias_suite.models.CallablePredictor` wraps one without).
    out_dir : folder for ``examples.*``, ``scored.*``, ``results.*`` and
        ``run.json``; nothing is written when None.
    options : a :class:`~bias_suite.options.RunOptions` (default: its
        defaults); ``overrides`` replace single fields of it
        (``bootstrap=50``).
    """
    opts = RunOptions.of(options, **overrides)
    opts.check()  # bad options fail before any prediction
    baseline = opts.baseline
    if baseline is not None:  # an unreadable baseline fails before any prediction
        from .comparison import read_model

        baseline = read_model(baseline, "baseline")
    from .stats.bootstrap.terms import resample_terms_option

    opts = opts.replace(resample_terms=resample_terms_option(opts.resample_terms))
    table = examples_table_of(suites, opts.attributes)  # an examples table instead of suites (bias_suite.suites.tables)
    loaded = [] if table is not None else [s if isinstance(s, Suite) else load_suite(find_suite(s)) for s in suites]
    if not loaded and table is None:
        raise BiasSuiteError("no suites given")
    if loaded:
        from .suites.selection import check_attributes

        check_attributes(loaded, opts.attributes)
    if opts.groups:  # a selection of groups, the suite files unchanged
        from .suites.selection import select_groups

        table, loaded = ((table.select_groups(opts.groups), loaded) if table is not None
                         else (None, select_groups(loaded, opts.groups)))
    if opts.sample_terms is not None:  # a seeded sample of terms per group, the suite files unchanged
        if table is not None:
            raise BiasSuiteError(f"{option('sample_terms=', '--sample-terms')} samples the terms of template "
                                 "suites; an examples table has its own rows (select them before the run)")
        from .suites.selection import sample_terms

        loaded = sample_terms(loaded, opts.sample_terms, opts.seed)
    opts = opts.replace(thresholds=suite_thresholds(loaded, opts.thresholds, opts.metrics))
    if out_dir is not None:  # a bad --out fails now, not after the predictions (nothing created yet)
        from .io.results import prepare_run_folder

        prepare_run_folder(out_dir, create=False)
    if table is not None and not table.has_template:  # each row its own template: group view only
        opts = opts.replace(metrics=_group_view_only(opts.metrics), significance=False, invariance=False)
    parts = {table.task: []} if table is not None else families_of(loaded)
    if len(parts) > 1 and not (isinstance(model, str) and all(model in get_family(k).default_names for k in parts)):
        raise BiasSuiteError(
            "this run mixes task families (" + "; ".join(f"{k}: {[s.name for s in v]}" for k, v in parts.items())
            + f"); with model {model!r} run them separately (one model serves one task), or use "
            + option("model='default'", "--model default") + " "
            "(each family's default model: " + ", ".join(get_family(k).default_model for k in parts) + ")")
    order = sorted(parts, key=list(FAMILIES).index)  # the first family's files go to out_dir
    results = []
    for i, name in enumerate(order):
        fam = get_family(name)
        part_model = model if len(parts) == 1 else fam.default_model
        part_dir = out_dir if i == 0 or out_dir is None else Path(out_dir) / _subfolder(fam)
        results.append(_run_family(fam, parts[name], table, part_model, part_dir, opts))
    for first, nxt in zip(results, results[1:]):
        first.sequence = nxt
    if baseline is not None:
        from .comparison import compare_with_baseline

        results[0].comparison = compare_with_baseline(results[0], baseline)
    return results[0]


def _subfolder(fam: TaskFamily) -> str:
    return (fam.label or fam.name).lower()


def _run_family(fam: TaskFamily, suites: list, table, model, out_dir, opts: RunOptions) -> RunResult:
    """One family's part of a run: expand, load the model, predict, judge once, write."""
    examples = expand_suites(suites, attributes=opts.attributes) if table is None else table.frame
    if examples.empty:
        raise BiasSuiteError(f"the suites expand to no examples (check {option('attributes=', '--attribute')})")
    predictor, model_name = fam.load_model(model, device=opts.device, batch_size=opts.batch_size,
                                           progress=opts.progress, trust_remote_code=opts.trust_remote_code,
                                           dtype=opts.dtype)
    fam.check_model(suites, predictor, opts.class_map, table=table)
    if suites:  # (once the model and the output folder are known to be usable: an error comes alone)
        _warn_small_suites(suites, opts)
    elif table is not None and table.has_template:  # an examples table or perturbed sentences: the same check
        _warn_small_table(table, fam, opts)
    pstats: list = []
    inv_failures = None
    scored = fam.score(examples, predictor, class_map=opts.class_map, cache=opts.cache, engine=opts.engine,
                       progress=opts.progress, stats=pstats)
    order = _present({a: t.groups for s in suites for a, t in s.identity.items()} if table is None
                     else table.group_order(), examples)
    inv_rows = []
    invariance = opts.invariance and bool(fam.inv_criteria)
    criterion = None
    if invariance:  # CheckList INV fail rates on the scored predictions (no new predictions)
        from .interop import invariance_for_run

        criterion = opts.inv_criterion if opts.inv_criterion in fam.inv_criteria else fam.inv_criteria[0]
        rows, inv_failures = invariance_for_run(scored, threshold=opts.inv_threshold, seed=opts.seed,
                                                group_order_override=order, criterion=criterion, mode=opts.inv_cases,
                                                with_failures=True)
        inv_rows.append(rows)
    # metrics, intervals, tests, Bernstein and INV rows: judged once, in one error-control family
    res = evaluate(scored, metrics=opts.metrics, max_tuples=opts.max_tuples, seed=opts.seed,
                   group_order_override=order, bootstrap=opts.bootstrap, confidence=opts.confidence,
                   thresholds=opts.thresholds, significance=opts.significance, bernstein=opts.bernstein,
                   multiplicity=opts.multiplicity, weighting=opts.weighting, extra_rows=inv_rows,
                   resample_terms=opts.resample_terms)
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
        "max_tuples": opts.max_tuples,
        "seed": opts.seed,
        "bootstrap": opts.bootstrap,
        "intervals": dict(res.attrs.get("intervals") or {}, bootstrap=opts.bootstrap),
        "thresholds": dict(opts.thresholds or {}),
        "rules": [{"source": f"{st.path or st.name} thresholds[{i}]", **d}
                  for st in suites for i, d in enumerate(getattr(st, "thresholds", None) or [])],
        "confidence": opts.confidence,
        "weighting": opts.weighting,
        "resample_terms": opts.resample_terms,
        "terms_resampled": _terms_resampled(scored, opts),
        "beyond_terms": (_terms_resampled(scored, opts.replace(resample_terms="auto"))
                         if opts.resample_terms is False else None),
        "groups": {a: list(g) for a, g in opts.groups.items()} if opts.groups else None,
        "sample_terms": opts.sample_terms,
        "group_orders": order,
        "invariance": bool(opts.invariance),
        "inv_threshold": opts.inv_threshold if opts.invariance else None,
        "inv_criterion": criterion if opts.invariance and fam.inv_criteria else None,
        "inv_cases": opts.inv_cases if opts.invariance else None,
        "predictions": pstats[0].to_dict() if pstats else None,
        "python": platform.python_version(),
        "versions": _library_versions(),
    }
    paths = write_run(out_dir, examples, scored, res, meta, failures=inv_failures) if out_dir is not None else {}
    return RunResult(examples, scored, res, list(suites), model_name, paths, meta, failures=inv_failures)


def _terms_resampled(scored, opts: RunOptions):
    """{attribute: groups whose terms the bootstrap resampled} (None without intervals)."""
    from .stats.bootstrap.terms import resampled_groups

    return resampled_groups(scored, opts.resample_terms) if opts.bootstrap else None


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
                                 f"or topic (give it with {option('thresholds=', '--threshold')} to decide)", **where)
            merged[key], origin[key] = tau, s.path
    merged.update(check_thresholds(thresholds, specs))
    return merged or None


def _warn_small_suites(suites: Sequence[Suite], opts: RunOptions) -> None:
    """A :class:`~bias_suite.exceptions.SuiteWarning` for each suite with too
    few templates per class for its rate metrics to show that a difference
    is below tau (:mod:`bias_suite.stats.suite_size`), before any work."""
    import warnings

    from .exceptions import SuiteWarning
    from .stats.suite_size import size_warnings

    for line in size_warnings(suites, thresholds=opts.thresholds, confidence=opts.confidence,
                              attributes=opts.attributes, metrics=opts.metrics):
        warnings.warn(line, SuiteWarning, stacklevel=3)


def _warn_small_table(table, fam: TaskFamily, opts: RunOptions) -> None:
    """The too-few-templates warning of :func:`_warn_small_suites` for an examples table (its templates
    counted from its rows)."""
    import warnings

    from .exceptions import SuiteWarning
    from .stats.suite_size import table_size_warning

    line = table_size_warning(Path(str(table.source)).name, table.frame, thresholds=opts.thresholds,
                              confidence=opts.confidence, attributes=opts.attributes, metrics=opts.metrics,
                              identity_span=fam.identity_span, kind=fam.class_word)
    if line:
        warnings.warn(line, SuiteWarning, stacklevel=3)


def _present(order: dict, examples: pd.DataFrame) -> dict:
    """Group orders from the identity-term files, restricted to the groups
    present in the examples."""
    out = {}
    for a, groups in order.items():
        present = set(examples.loc[examples["attribute"] == a, "group"])
        if present:
            out[a] = [g for g in groups if g in present]
    return out


def examples_table_of(suites, attributes):
    """The :class:`~bias_suite.suites.tables.ExamplesTable` when ``suites`` is
    one (or a DataFrame of examples, or one path to a table file), else None."""
    from .suites.tables import ExamplesTable, is_examples_table, read_examples

    from .models.real_text import is_real_text_suite

    items = [suites] if isinstance(suites, (str, Path, ExamplesTable, pd.DataFrame)) else list(suites)
    tables = [s for s in items if isinstance(s, (ExamplesTable, pd.DataFrame))
              or isinstance(s, (str, Path)) and is_examples_table(s)
              or is_real_text_suite(s) and not Path(s).exists()]
    if not tables:
        return None
    if len(items) != 1:
        raise BiasSuiteError("give either suites or one examples table, not both or several tables")
    t = tables[0]
    if is_real_text_suite(t) and not Path(t).exists():  # a bundled real-text suite, by name
        from dataclasses import replace

        from .models.real_text import real_text_examples
        from .suites.tables import from_frame

        frame, report = real_text_examples(t)
        t = replace(from_frame(frame, source=t), format=report.format, read_rows=report.rows)
    elif isinstance(t, pd.DataFrame):
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
                             f"no template column ({option('columns=Columns(template=...)', '--template-column')}); "
                             "ask for group metrics")
    return kept
