"""The public face behind ``import bias_suite as bs`` (docs/api.md).

The pipeline (:mod:`bias_suite.pipeline`, :mod:`bias_suite.evaluation`)
computes and judges; this module, above the report layer, gives what it
returns the headline: :class:`Results` (a pandas DataFrame with
``.summary()``, ``.findings()``, ``.counts()``, ``.print()`` and a
notebook view); :class:`RunResult` is the pipeline's (its ``.print()`` is what
``bias-suite run`` prints after the same run).

>>> import bias_suite as bs
>>> res = bs.run(["sentiment_gender"], "default-sentiment", "results/gender")  # doctest: +SKIP
>>> res.print()  # doctest: +SKIP
"""
from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import pandas as pd

from . import comparison as _comparison
from . import pipeline as _pipeline
from .comparison import Comparison
from .evaluation import evaluate as _evaluate
from .exceptions import BiasSuiteError
from .report import runs as _runs
from .report import summary as _summary

__all__ = ["Results", "RunResult", "run", "evaluate", "compare", "expand", "score", "load_suite", "load_results",
           "write_report"]


def _console(file=None, width: int | None = None):
    """The console to print on: stdout as the command line sees it, or ``file``."""
    from .report.terminal import console_for

    return console_for(file, width)


class Results(pd.DataFrame):
    """Tidy results (a pandas DataFrame: one row per value, docs/formats.md)
    with the headline at hand.

    ``summary()`` is the overview (worst verdict and largest effect per
    attribute and topic), ``findings()`` the judged values ranked material,
    small, inconclusive, ``counts()`` the count of each verdict and
    ``print()`` the one-screen headline the command line prints. In a
    notebook the results of :func:`run`, :func:`evaluate` and
    :func:`load_results` show the overview and the top findings; frames
    derived from them (a filter, a selection of columns) show as tables.
    """

    _internal_names = pd.DataFrame._internal_names + ["_headline"]
    _internal_names_set = set(_internal_names)
    _headline = None  # how to print the headline of the run or evaluation these results came from

    @property
    def _constructor(self):
        return Results

    def summary(self) -> pd.DataFrame:
        """One row per attribute and topic: the worst verdict, the largest
        effect (×τ) and where it is, and the count of each verdict."""
        return _summary.overview(self)

    def findings(self, verdict=None, top: int | None = None) -> pd.DataFrame:
        """Judged values ranked material, small, inconclusive, negligible,
        undefined, largest effect first within each (``verdict``: keep one
        kind or a list of kinds; ``top``: the first rows only)."""
        return _summary.findings(self, verdict=verdict, top=top)

    def counts(self) -> dict:
        """``{verdict: number of values}`` for the five verdicts (as
        :meth:`bias_suite.Comparison.counts` counts the changes)."""
        return _summary.verdict_counts(self)

    def verdict_counts(self) -> dict:
        """Deprecated: :meth:`counts`."""
        import warnings

        warnings.warn("Results.verdict_counts() is now Results.counts()", DeprecationWarning, stacklevel=2)
        return self.counts()

    def by_group(self, *, trail: bool = False):
        """The per-group answer: per attribute, one row per group, worst off
        first, with its status (worse off, better off, mixed, undecided, no
        difference shown, cleared), its largest own effect in units of τ
        (positive: worse off), its largest own finding, its values by verdict
        (spill-overs apart) and what would settle an undecided group
        (:func:`bias_suite.stats.groups.by_group`). ``trail``: also return, as a second frame, every own row of
        every group, counted towards its status or set apart, and why."""
        from .report.groups import by_group

        return by_group(self, trail=trail)

    def print(self, *, detail: bool = False, lines: int = 60, file=None, width: int | None = None,
              quiet: bool = False) -> None:
        """Print the headline: for the results of a run, what ``bias-suite
        run`` prints after it (prediction counts, overview, top findings,
        an example pair, verdict counts, where the files are).

        detail : the per-group tables first (``--detail``).
        lines : at most this many lines (``--lines``).
        file, width : print to this stream at this width (default: stdout,
            in colour on a terminal).
        quiet : one line (``--quiet``).
        """
        show = self._headline or _Headline()
        show(self, console=_console(file, width), detail=detail, lines=lines, quiet=quiet)

    def _repr_html_(self):
        if self._headline is None or "verdict" not in self.columns:
            return super()._repr_html_()
        return _runs.headline_html(self, title=self._headline.title_for(self))


def _as_results(frame: pd.DataFrame, headline=None) -> Results:
    out = Results(frame)
    out.attrs.update(frame.attrs)
    out._headline = headline
    return out


class _Headline:
    """Prints the headline of one part of a run, or of an evaluation."""

    def __init__(self, part=None, scored=None, source: str | None = None):
        self.part, self.scored, self.source = part, scored, source

    def title_for(self, results) -> str:
        if self.part is not None:
            return _runs.run_title([self.part])
        what = f"{len(self.scored)} examples, " if self.scored is not None else ""
        return f"{self.source + ': ' if self.source else ''}{what}{len(results)} result rows"

    def __call__(self, results, *, console, detail, lines, quiet):
        if self.part is not None:
            _runs.print_run(dataclasses.replace(self.part, sequence=None), console=console, quiet=quiet, detail=detail,
                            lines=lines)
            return
        _runs.print_results([(results, self.scored, "")], title=self.title_for(results),
                            files=[], intervals=results.attrs.get("intervals"),
                            console=console, quiet=quiet, detail=detail, lines=lines)


#: the result of :func:`run` (one class: the pipeline's; :func:`run` gives it the command line's headline)
RunResult = _pipeline.RunResult


class _RunView:
    """How a :class:`RunResult` of :func:`run` prints and shows in a notebook."""

    @staticmethod
    def print(result, *, detail, lines, file, width, quiet):
        _runs.print_run(result, console=_console(file, width), quiet=quiet, detail=detail, lines=lines)

    @staticmethod
    def html(result) -> str:
        return "".join(p.results._repr_html_() for p in result.parts())


class _ComparisonView:
    """How a :class:`Comparison` of :func:`compare` prints and shows in a notebook."""

    @staticmethod
    def print(comp, *, lines, file, width):
        from .report.compare import print_comparison

        print_comparison(comp, console=_console(file, width), max_lines=lines)

    @staticmethod
    def html(comp) -> str:
        from .report.compare import comparison_html

        return comparison_html(comp)


def _with_headlines(result: RunResult) -> RunResult:
    """``result`` that prints its headline, with each part's results as
    :class:`Results` that print that part's (and a comparison with its
    baseline that prints itself)."""
    for part in result.parts():
        part._view = _RunView
        part.results = _as_results(part.results, _Headline(part=part))
        if part.comparison is not None:
            part.comparison._view = _ComparisonView
    return result


@functools.wraps(_comparison.compare)
def compare(baseline, candidate, *more, **options) -> Comparison:
    comp = _comparison.compare(baseline, candidate, *more, **options)
    comp._view = _ComparisonView
    return comp


def run(suites, model, out_dir=None, options=None, **overrides) -> RunResult:
    """Expand the suites, predict with ``model``, judge every value once and
    write the run folder (nothing is written when ``out_dir`` is None).

    suites : bundled suite names, suite files or :class:`~bias_suite.suites.loader.Suite`
        objects; or one examples table (a file, a DataFrame, or
        :func:`~bias_suite.suites.tables.read_examples`'s table).
    model : a default model name ("default-sentiment"), a local folder, a hub
        id, a predictor (``class_names`` and ``predict_proba``), or a
        callable with a ``class_names`` attribute
        (``CallablePredictor(fn, class_names)`` wraps one without).
    options : a :class:`~bias_suite.options.RunOptions`; keyword
        ``overrides`` replace single options (``bootstrap=50``).
    """
    return _with_headlines(_pipeline.run(suites, model, out_dir, options, **overrides))


def evaluate(scored, options=None, **keywords) -> Results:
    """Metrics, intervals, tests and verdicts on scored examples (a file, a
    DataFrame or scored data), as :class:`Results`: the same table as
    ``bias-suite evaluate``.

    options : a :class:`~bias_suite.options.EvaluationOptions` (default: its
        defaults); or keywords: metrics, attributes, groups, max_tuples,
        seed, bootstrap, confidence, thresholds, significance, bernstein,
        multiplicity, weighting, resample_terms (the fields, with their
        defaults and meanings: ``help(bs.EvaluationOptions)``), and
        group_order_override, extra_rows, beyond_terms
        (:func:`bias_suite.evaluation.evaluate`). A keyword that is none of
        them is an error that names the nearest."""
    from .families import as_scored
    from .options import EvaluationOptions

    extra = ("group_order_override", "extra_rows", "beyond_terms")
    for k in keywords:
        if k not in EvaluationOptions.names() and k not in extra:
            raise EvaluationOptions.not_an_option(k, extra)
    if options is not None:  # keywords beside an options object replace single fields of it
        fields = {k: keywords.pop(k) for k in list(keywords) if k not in extra}
        options = EvaluationOptions.of(options, **fields)
    data = as_scored(scored)  # read and validated once
    source = str(scored) if isinstance(scored, (str, Path)) else "scored examples"
    return _as_results(_evaluate(data, options=options, **keywords), _Headline(scored=data, source=source))


def load_suite(suite):
    """A suite by file or bundled name, checked by its task family
    (every problem one error naming the file, line and field)."""
    from .families import load_suite as _load
    from .suites.loader import Suite, find_suite

    return suite if isinstance(suite, Suite) else _load(find_suite(suite))


def expand(suites, *, attributes=None, max_examples: int | None = None) -> pd.DataFrame:
    """The examples of suites (names, files or :class:`Suite` objects; one
    or a list), one row per example: id, template, attribute, group, term,
    text, label (and the family's columns)."""
    from .families import expand_suites

    items = [suites] if isinstance(suites, (str, Path)) or not hasattr(suites, "__iter__") else list(suites)
    return expand_suites([load_suite(s) for s in items], attributes=attributes, max_examples=max_examples)


def _family_of_examples(examples: pd.DataFrame):
    from .families import FAMILIES

    if not isinstance(examples, pd.DataFrame) or "text" not in examples.columns:
        raise BiasSuiteError("examples are a DataFrame with a text column (bias_suite.expand, "
                             "bias_suite.read_examples)")
    have = set(examples.columns)
    # the family most of whose example columns are there (the first one on a tie)
    return max(FAMILIES.values(), key=lambda f: (len(set(f.columns) & have) - len(set(f.columns) - have)))


def score(examples: pd.DataFrame, model, *, class_map: dict | None = None, cache=False, engine="local",
            progress: bool = False, device: str = "auto", batch_size: int = 64, dtype=None,
            trust_remote_code: bool = False):
    """Predict every distinct text of ``examples`` once: the scored examples
    (docs/formats.md) that :func:`evaluate` takes. ``model`` as for
    :func:`run`; ``cache``: the prediction cache (False, True or a folder)."""
    from .suites.tables import ExamplesTable

    if isinstance(examples, ExamplesTable):
        examples = examples.frame
    fam = _family_of_examples(examples)
    predictor, _ = fam.load_model(model, device=device, batch_size=batch_size, progress=progress,
                                  trust_remote_code=trust_remote_code, dtype=dtype)
    return fam.score(examples, predictor, class_map=class_map, cache=cache, engine=engine, progress=progress)


def load_results(folder) -> Results:
    """The results a run or ``bias-suite evaluate`` wrote to ``folder``, as
    :class:`Results` (their ``print()`` shows the run's headline, with its
    worst counterfactual pair when the scored examples are there)."""
    from .io.results import read_results_table

    folder = Path(folder)
    res = read_results_table(folder)
    return _as_results(res, _FolderHeadline(folder))


class _FolderHeadline:
    """The headline of a results folder (read when printed)."""

    def __init__(self, folder: Path):
        self.folder = folder

    def title_for(self, results) -> str:
        meta = self._meta()
        what = f"{meta['examples']} examples, " if meta.get("examples") is not None else ""
        return f"{meta.get('model') or meta.get('scored') or _runs.shown(self.folder)}: {what}{len(results)} result rows"

    def _meta(self) -> dict:
        try:
            return json.loads((self.folder / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def __call__(self, results, *, console, detail, lines, quiet):
        from .io.results import run_file

        meta = self._meta()
        scored = None
        found = run_file(self.folder, "scored.parquet", "scored.jsonl") if self.folder.is_dir() else None
        if found is not None:
            from .families import read_scored

            scored = read_scored(found)
        d = _runs.shown(self.folder)
        report = self.folder / "report.html"
        files = [f"{d}/results.csv", str(d / "report.html") if report.exists() else f"bias-suite report {d}"]
        _runs.print_results([(results, scored, "")], title=self.title_for(results), files=files, intervals=meta.get("intervals"),
                            console=console, quiet=quiet, detail=detail, lines=lines)


def write_report(results, out=None, *, title: str | None = None) -> Path:
    """Write the self-contained HTML report of a run (a :class:`RunResult`
    that was written to a folder, or the folder itself); returns its path."""
    from .report.html import write_html_report

    folder = results.folder if isinstance(results, _pipeline.RunResult) else results
    if folder is None:
        raise BiasSuiteError("this run wrote no folder (out_dir=None); run it with out_dir to write a report")
    return write_html_report(folder, out, title=title)
