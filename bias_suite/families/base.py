"""The task-family protocol: what a kind of model (a text classifier, a
tagger, ...) supplies so that one pipeline, one metric engine, one set of
statistics and one report serve it.

A family is data: a :class:`TaskFamily` whose fields are the family's steps
(functions) and facts (flags, names). The layers above (metrics, stats,
pipeline, report) look a family up once by the ``task`` of a suite or of
scored data and call these fields; none of them branches on a task name.
docs/architecture.md shows a complete third family.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

__all__ = ["TaskFamily", "probability_column"]


def probability_column(data, cls):
    """Per example, the probability of class ``cls`` (None when the data has
    no such class): the example score of families with a ``probs`` array."""
    classes = list(getattr(data, "classes", ()))
    if cls not in classes or getattr(data, "probs", None) is None:
        return None
    return np.asarray(data.probs)[:, classes.index(cls)]


@dataclass(frozen=True)
class TaskFamily:
    """One task family.

    Suites
        ``check_suite(suite)``: the family's own checks of a loaded suite
        (raise :class:`~bias_suite.exceptions.SuiteError` with file, line and
        field). ``rows(suite, wanted, covering=False)`` yields one tuple per
        example in the order of ``columns`` (see
        :func:`bias_suite.suites.expansion.variants`).
        ``template_class(suite) -> (template -> class or None)``: the class
        whose per-class rates a template gives a chance (default: its gold
        ``label``), named ``class_word`` in messages; counts templates per
        class (:mod:`bias_suite.stats.suite_size`).
    Models and predictions
        ``load_model(model, **options) -> (predictor, name)``: a predictor
        from a model argument (names in ``default_names`` mean the built
        default model ``default_model``). ``check_model(suites, predictor,
        class_map)``: refuse a model that cannot serve the suites.
        ``score(examples, predictor, *, class_map, cache, engine, progress,
        stats) -> scored data``: predict every example and validate.
    Scored data
        ``marker_columns``: the columns that make a scored table this
        family's. ``check_scored(frame, source=) -> scored data`` validates a
        table (one error naming file, row and field); ``read_fast(path,
        kind)`` may read a file faster (None: read it row by row). Scored
        data objects carry ``task`` (this family's name), ``frame``,
        ``classes``, ``attributes()`` and ``take(rows, templates=)``.
    Metrics
        ``metric_input(data, attribute, cf, groups, probabilities) -> dict``:
        the arrays of one attribute that the generalized builders take
        (:class:`bias_suite.metrics.generalized.AttributeData` fields);
        ``probabilities`` asks for probability items, else count arrays
        suffice. ``items_are_examples``: one probability item per example
        (then one input serves both). ``score_notes``: score name -> the
        note of its null rows (None: not reported at all).
        ``identity_span``: the data has the identity term's own span, and
        ``metric_input(..., probabilities="identity")`` gives the counts and
        items of that span alone (the scores measured ``at="identity"``;
        other families do not report them).
        ``missing_probabilities(data)``: a note when the data has no
        probabilities, else None.
    Statistics
        ``block_scores(data, attribute, group_order) -> {class: template x
        group table}`` for the Wilcoxon/Friedman tests (None: no tests).
        ``fast_bootstrap``: the bootstrap's closed-form path applies (else
        templates are resampled and the metrics evaluated again).
        ``extra_parts``: names of further result parts (``"bernstein"``).
        ``inv_criteria``: the INV rules the family's data supports (the
        first is used when the run's rule is not among them).
    Runs and report
        ``run_meta(predictor, data) -> dict`` adds to ``run.json``;
        ``label`` names the family in summaries ("" for the first family);
        ``summary_stats(data) -> DataFrame``: the family's columns of the
        detailed per-group table (``attribute, group`` then any columns: a
        number, a string, or a tuple with one number per class);
        ``example_scores(data, cls)``: per example the score of class
        ``cls`` that the headline's example sentence pair compares, named
        ``example_score_name`` there. ``measured_on(spec, cls)``: what a
        metric's row of class ``cls`` counts, in words, for the findings
        ("all PER spans", "PER identity span"); None: the class says it.
    """

    name: str
    check_suite: Callable
    rows: Callable
    columns: tuple
    load_model: Callable
    check_model: Callable
    score: Callable
    marker_columns: tuple
    check_scored: Callable
    metric_input: Callable
    block_scores: Callable
    run_meta: Callable
    default_model: str
    default_names: tuple = ()
    read_fast: Callable | None = None
    items_are_examples: bool = False
    score_notes: Mapping[str, str | None] = field(default_factory=dict)
    identity_span: bool = False
    missing_probabilities: Callable = lambda data: None
    fast_bootstrap: bool = False
    extra_parts: tuple = ()
    inv_criteria: tuple = ("checklist", "prob")
    label: str = ""
    summary_stats: Callable | None = None
    example_scores: Callable = probability_column
    example_score_name: str = "probability"
    measured_on: Callable | None = None
    description: str = ""
    template_class: Callable = lambda suite: (lambda template: template.label)
    class_word: str = "class"
