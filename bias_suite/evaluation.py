"""``evaluate``: scored examples in, a judged results table out.

The metric values (:func:`bias_suite.metrics.compute`), cluster-bootstrap
intervals over templates (:mod:`bias_suite.stats.bootstrap`), the
Wilcoxon/Friedman tests (:mod:`bias_suite.stats.significance`) and the
Bernstein rows (:mod:`bias_suite.stats.bernstein`), all judged in one verdict
stage (:mod:`bias_suite.stats.verdicts`), for classification and sequence
labelling alike. ``bias-suite evaluate`` and :func:`bias_suite.pipeline.run` call
it; it sits above the metrics and stats layers, which it composes.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import pandas as pd

from .io.values import without_sentinels
from .exceptions import BiasSuiteError
from .families import as_scored, family_of
from .metrics.engine import evaluate as metric_values
from .metrics.engine import resolve_metrics, results_frame, select_attributes, single_group_nulls
from .options import EvaluationOptions
from .suites.views import group_order

__all__ = ["evaluate", "evaluate_with_replicates"]


_D = EvaluationOptions()  # the defaults, written once in the options model


def evaluate(
    scored,
    *,
    metrics: Iterable | None = _D.metrics,
    attributes: Iterable[str] | str | None = _D.attributes,
    groups: Mapping[str, Sequence[str]] | None = _D.groups,
    max_tuples: int | None = _D.max_tuples,
    seed: int = _D.seed,
    group_order_override: Mapping[str, Sequence[str]] | None = None,
    bootstrap: int = _D.bootstrap,
    confidence: float = _D.confidence,
    thresholds: Mapping[str, float] | None = _D.thresholds,
    significance: bool | None = _D.significance,
    bernstein: bool | None = _D.bernstein,
    multiplicity: str = _D.multiplicity,
    weighting: str = _D.weighting,
    extra_rows: Sequence[pd.DataFrame] = (),
    resample_terms=_D.resample_terms,
    beyond_terms: bool = True,
    options: EvaluationOptions | None = None,
) -> pd.DataFrame:
    """Compute bias metrics on scored examples, with intervals, tests and verdicts.

    Parameters
    ----------
    scored : DataFrame, list of dicts, path, or ScoredData
        Scored examples (docs/formats.md); validated once here.
    metrics, attributes, groups, max_tuples, seed, bootstrap, confidence, thresholds, significance, bernstein,
    multiplicity, weighting, resample_terms :
        The evaluation options: their defaults and meanings are the fields
        of :class:`bias_suite.options.EvaluationOptions` (``help(EvaluationOptions)``;
        ``bias-suite evaluate --help`` shows the same words).
    options : an :class:`~bias_suite.options.EvaluationOptions` instead of
        those keywords (they must then be left at their defaults).
    group_order_override : {attribute: [groups...]}
        Group order (first minus second in two-group metrics); default the
        order of first appearance (and with ``groups``, their order).
    extra_rows : further result rows (CheckList INV fail rates, say),
        judged in the same verdict stage.
    beyond_terms : bool, default True
        With ``resample_terms`` no: judge every claim a second time on a
        two-way bootstrap ("auto") of the metrics with a claim in an
        attribute whose terms the model tells apart, in the columns ``beyond``,
        ``beyond_low`` and ``beyond_high`` (never changing a verdict), and
        break each claim down by term (``terms_agree``, ``term_effects``;
        :mod:`bias_suite.stats.scope`).

    Returns
    -------
    DataFrame: the tidy result columns plus the verdict columns
    (``verdict, threshold, baseline, effect, reason``) whenever something
    was judged; one verdict stage judges every row, so the error control
    covers them all. ``bootstrap=0, significance=False`` gives the values
    alone (as :func:`bias_suite.metrics.compute`). ``bias_suite.evaluate``
    returns the same table as a ``bias_suite.Results``, whose
    ``.summary()``, ``.findings()`` and ``.print()`` give the headline.
    """
    given = dict(metrics=metrics, attributes=attributes, groups=groups, max_tuples=max_tuples, seed=seed,
                 bootstrap=bootstrap, confidence=confidence, thresholds=thresholds, significance=significance,
                 bernstein=bernstein, multiplicity=multiplicity, weighting=weighting, resample_terms=resample_terms)
    opts = _options_of(options, given)
    return _evaluate(scored, opts, group_order_override=group_order_override, extra_rows=extra_rows,
                     beyond_terms=beyond_terms)[0]


def _options_of(options, given: dict) -> EvaluationOptions:
    """The evaluation options: ``options``, or the keywords ``given``; both
    at once is an error unless the keywords are left at their defaults."""
    if options is None:
        return EvaluationOptions(**given)
    opts = EvaluationOptions.of(options)
    changed = [k for k, v in given.items() if v is not getattr(_D, k) and not _equal(v, getattr(_D, k))]
    if changed:
        raise BiasSuiteError(f"give the evaluation options either as options= or as keywords, not both "
                             f"({', '.join(changed)} given as keywords)")
    return opts


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # (arrays)
        return False


#: the keywords of evaluate() besides the options model's fields
_NOT_OPTIONS = ("group_order_override", "extra_rows", "beyond_terms")


def evaluate_with_replicates(scored, *, attribution: bool = True, options: EvaluationOptions | None = None,
                             **keywords):
    """:func:`evaluate` (same ``options`` and keywords), keeping the
    bootstrap's replicate values: ``(results, BootstrapResult or None)``;
    the second holds the replicates of every bootstrapped value and of its
    signed basis (:class:`bias_suite.stats.bootstrap.BootstrapResult`).
    ``attribution=False`` leaves out the ``source`` and ``consistency``
    columns and, unless ``beyond_terms`` says otherwise, the term breakdown
    and the reading beyond the listed terms (the verdicts are the same; a
    comparison of two models does without them)."""
    extra = {k: keywords.pop(k) for k in _NOT_OPTIONS if k in keywords}
    extra.setdefault("beyond_terms", attribution)
    for k in keywords:
        if k not in EvaluationOptions.names():
            raise EvaluationOptions.not_an_option(k, _NOT_OPTIONS)
    opts = EvaluationOptions.of(options, **keywords)
    return _evaluate(scored, opts, keep_replicates=True, attribution=attribution, **extra)


def _evaluate(scored, opts: EvaluationOptions, *, group_order_override=None, extra_rows=(), keep_replicates=False,
              attribution=True, beyond_terms=True):
    """evaluate(), with its options as one :class:`EvaluationOptions` (no
    defaults of its own: those are the options model's)."""
    metrics, attributes, groups, max_tuples, seed = (opts.metrics, opts.attributes, opts.groups, opts.max_tuples,
                                                     opts.seed)
    bootstrap, confidence, thresholds, significance, bernstein = (opts.bootstrap, opts.confidence, opts.thresholds,
                                                                  opts.significance, opts.bernstein)
    multiplicity, weighting, resample_terms = opts.multiplicity, opts.weighting, opts.resample_terms
    data = as_scored(scored)
    if groups:  # a selection of groups: the other groups' rows are left out
        import numpy as np

        from .suites.selection import group_mask

        data = data.take(np.flatnonzero(group_mask(data.frame, groups, where="the scored examples")))
        group_order_override = {**{a: list(g) for a, g in groups.items()}, **dict(group_order_override or {})}
    fam = family_of(data)
    specs = resolve_metrics(metrics)
    orders = {a: group_order(data.frame, a, group_order_override) for a in select_attributes(data, attributes)}
    res = metric_values(data, metrics=metrics, attributes=attributes, max_tuples=max_tuples, seed=seed,
                        group_order_override=group_order_override, weighting=weighting)
    basis = bs = None
    if bootstrap:
        from .stats.bootstrap import bootstrap as _bootstrap

        bs = _bootstrap(data, res, metrics=specs, B=int(bootstrap), confidence=confidence, seed=seed,
                        max_tuples=max_tuples, group_order_override=group_order_override, weighting=weighting,
                        keep_replicates=keep_replicates, resample_terms=resample_terms)
        metric_rows = res
        res, basis = bs.results, bs.basis
    extra = list(extra_rows)
    significance = metrics is None if significance is None else significance
    bernstein = metrics is None if bernstein is None else bernstein
    if significance:
        from .stats.significance import significance_tests

        extra.append(significance_tests(data, attributes=attributes, adjust="holm",
                                        group_order_override=group_order_override))
    if bernstein and "bernstein" in fam.extra_parts:
        from .stats.bernstein import bernstein_rows

        extra.append(bernstein_rows(data, confidence=confidence, attributes=attributes))
    extra = [e for e in extra if len(e)]
    if extra:  # (pd.concat warns on all-null interval columns)
        attrs = dict(res.attrs)
        res = results_frame(res.to_dict("records") + [r for e in extra for r in e.to_dict("records")])
        res.attrs.update(attrs)
    if bootstrap or extra:
        from .stats.verdicts import add_verdicts

        res = add_verdicts(res, basis=basis, confidence=confidence, metrics=specs, thresholds=thresholds,
                           group_orders=orders, multiplicity=multiplicity)
        if attribution:
            from .stats.attribution import attribute_sources, template_consistency

            res = attribute_sources(res, data, max_tuples=max_tuples, seed=seed,
                                    group_order_override=group_order_override, weighting=weighting)
            res = template_consistency(res, data, basis=basis, group_order_override=group_order_override)
        if bootstrap and beyond_terms:
            res = _scope(res, data, metric_rows, specs=specs, bootstrap=int(bootstrap), confidence=confidence,
                         seed=seed, max_tuples=max_tuples, group_order_override=group_order_override,
                         weighting=weighting, thresholds=thresholds, resample_terms=resample_terms)
    return without_sentinels(single_group_nulls(res, data.frame, specs, group_order_override)), bs


def _scope(res, data, metric_rows, *, specs, bootstrap, confidence, seed, max_tuples, group_order_override, weighting,
           thresholds, resample_terms):
    """The term breakdown of every claim and the judgement beyond the listed
    terms (:mod:`bias_suite.stats.scope`): a second, two-way bootstrap of the
    metrics with a claim in an attribute whose terms the model tells apart,
    judged like the first."""
    from .stats.bootstrap import bootstrap as _bootstrap
    from .stats.bootstrap.terms import resample_terms_option, selected_blocks
    from .stats.scope import CLAIMS, beyond_listed_terms, term_breakdown, term_sizes
    from .stats.verdicts import add_verdicts

    res = term_breakdown(res, data, metrics=specs, max_tuples=max_tuples, seed=seed,
                         group_order_override=group_order_override, weighting=weighting)
    if resample_terms_option(resample_terms) is not False:  # the verdicts already speak beyond the listed terms
        return beyond_listed_terms(res, res, confidence=confidence)
    if not family_of(data).fast_bootstrap:
        return beyond_listed_terms(res, None)  # (a family without the closed form: not read, for its cost)
    chosen = {a: b for a, b in selected_blocks(data, "auto").items() if b}
    # the rows of the metrics and classes with a claim (each row's replicates are its own: the others would
    # give the same intervals to the claims, at their cost)
    on = ["attribute", "metric", "class"]
    claimed = res.loc[res["verdict"].isin(CLAIMS) & res["attribute"].isin(list(chosen)), on]
    wanted = pd.MultiIndex.from_frame(claimed.drop_duplicates())
    rows = metric_rows[pd.MultiIndex.from_frame(metric_rows[on]).isin(wanted)]
    two_way = rows.iloc[0:0]
    if len(rows):
        bs = _bootstrap(data, rows, metrics=specs, B=bootstrap, confidence=confidence, seed=seed,
                        max_tuples=max_tuples, group_order_override=group_order_override, weighting=weighting,
                        resample_terms=chosen)
        two_way = add_verdicts(bs.results, basis=bs.basis, confidence=confidence, metrics=specs,
                               thresholds=thresholds, multiplicity="bh")  # (its p; the claims' own control applies)
    return beyond_listed_terms(res, two_way, confidence=confidence, sizes=term_sizes(data, chosen))

