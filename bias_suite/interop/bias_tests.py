"""bias_suite metrics and significance tests as CheckList tests, INV
TestSuites built from bias_suite suites, and running a TestSuite with any
bias_suite model (suite export).
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pandas as pd

with warnings.catch_warnings():  # checklist's dependencies warn about pkg_resources / IPython
    warnings.simplefilter("ignore")
    from checklist.abstract_test import AbstractTest
    from checklist.test_suite import TestSuite

from ..exceptions import BiasSuiteError
from .invariance import build_inv_test, case_meta, group_orders_of, present_order, failure_source, CAPABILITY, run_indices
from .predict_fns import checklist_predict_fn, tagger_predict_fn

# =========================================================================
# bias_suite tests with CheckList's test interface


# =========================================================================
class BiasSuiteTest(AbstractTest):
    """Base of :class:`MetricTest` and :class:`SignificanceTest`: a CheckList
    ``AbstractTest`` whose test cases are attributes (each case's sentences:
    every example of the attribute), whose verdict comes from a bias_suite
    computation on the predicted probabilities instead of an expectation
    function. ``run``, ``run_from_preds_confs``, ``run_from_file``,
    ``to_raw_file``, ``get_stats``, ``fail_idxs``, ``summary`` and
    ``form_test_info`` work as for CheckList tests."""

    test_type = "BIAS"

    def __init__(self, examples_or_suite, *, attributes=None, class_names=None, name=None, capability=CAPABILITY,
                 description=None, group_order_override=None):
        src = failure_source(examples_or_suite, attributes)
        if src.task != "classification":
            raise BiasSuiteError(f"{type(self).__name__} supports classification examples only")
        table = src.table
        attrs = list(pd.unique(table["attribute"]))
        recs = table.to_dict("records")
        att = table["attribute"].to_numpy(dtype=object)
        data, meta = [], []
        for a in attrs:
            idx = np.flatnonzero(att == a)
            data.append([str(recs[i]["text"]) for i in idx])
            meta.append([case_meta(recs[i], "classification") for i in idx])
        super().__init__(data, None, labels=None, meta=meta, agg_fn="all", templates=None, print_first=False,
                         name=name, capability=capability, description=description)
        self.attributes = attrs
        self.class_names = list(class_names) if class_names else src.classes
        self.group_order = group_orders_of(src, group_order_override)

    # ---- running
    def run(self, predict_and_confidence_fn, overwrite=False, verbose=True, n=None, seed=None):
        names = getattr(predict_and_confidence_fn, "class_names", None)
        if names is not None:
            self.class_names = list(names)
        return super().run(predict_and_confidence_fn, overwrite=overwrite, verbose=verbose, n=n, seed=seed)

    def scored(self):
        """The predicted examples of the run cases as :class:`ScoredData`."""
        from ..families import scored_from_arrays

        self._check_results()
        if not self.class_names:
            raise BiasSuiteError(f"{self.name}: class names unknown; pass class_names=[...] when creating the test")
        rows, probs = [], []
        for d in run_indices(self):
            confs = np.asarray(self.results.confs[d], dtype=float)
            if confs.ndim != 2 or confs.shape[1] != len(self.class_names):
                raise BiasSuiteError(
                    f"{self.name}: needs class probabilities (softmax confidences) with {len(self.class_names)} "
                    f"columns {self.class_names}, got confidences of shape {confs.shape}"
                )
            for text, m in zip(self.data[d], self.meta[d]):
                rows.append({**m, "text": text})
            probs.append(confs)
        frame = pd.DataFrame(rows)
        return scored_from_arrays(frame, np.concatenate(probs) if probs else np.zeros((0, len(self.class_names))), self.class_names)

    def _compute(self, scored) -> pd.DataFrame:  # pragma: no cover - abstract
        raise NotImplementedError

    def _verdict(self, rows: pd.DataFrame):  # -> (passed or None, margin or None, values)
        raise NotImplementedError

    def update_expect(self):
        self._check_results()
        idxs = run_indices(self)
        rows = self._compute(self.scored())
        passed, margins, values = [], [], []
        for d in idxs:
            p, m, v = self._verdict(rows[rows["attribute"] == self.attributes[d]])
            passed.append(p)
            margins.append(m)
            values.append(v)
        self.results.rows = rows
        self.results.values = values
        self.results.expect_results = [np.array([np.nan if m is None else m]) for m in margins]
        self.results.passed = np.array(passed, dtype=object)

    def rows(self) -> pd.DataFrame:
        """The tidy result rows computed in the last run."""
        self._check_results()
        return self.results.rows

    # ---- reporting
    def _fmt_values(self, values) -> str:
        return ", ".join(f"{k}={v:.3f}" for k, v in values) if values else "undefined"

    def summary(self, n=3, print_fn=None, format_example_fn=None, n_per_testcase=3, **kwargs):
        """CheckList-style stats, then one line per attribute (test case)."""
        self.print_stats()
        if not n:
            return
        print()
        for pos, d in enumerate(run_indices(self)):
            p = self.results.passed[pos]
            verdict = "filtered" if p is None else ("PASS" if bool(p) else "FAIL")
            print(f"{verdict:8s} {self.attributes[d]}: {self._fmt_values(self.results.values[pos])}  ({self.criterion_text()})")

    def criterion_text(self) -> str:  # pragma: no cover - overridden
        return ""

    def form_testcases(self, n_per_testcase=3):
        self._check_results()
        out = []
        for pos, d in enumerate(run_indices(self)):
            p = self.results.passed[pos]
            if p is None:
                continue
            text = f"{self.attributes[d]}: {self._fmt_values(self.results.values[pos])}"
            out.append({"examples": [{"new": {"text": text, "pred": "", "conf": None}, "old": None, "label": None,
                                      "succeed": int(bool(p))}], "succeed": int(bool(p)), "tags": []})
        return out


class MetricTest(BiasSuiteTest):
    """A bias_suite metric as a CheckList test: one test case per attribute,
    passing when the metric's accumulated value(s) (every class; the
    per-group values when the metric has no accumulated value) are within
    ``threshold``.

    Parameters
    ----------
    metric : a registered metric name (``"CFGap"``, ``"FNED"``...) or a MetricSpec.
    examples_or_suite : as for :func:`invariance_tests`.
    threshold : the bound.
    bound : ``"abs"`` (|value| <= threshold, default), ``"upper"`` (value <=
        threshold), ``"lower"`` (value >= threshold, e.g. AUCs) or a callable
        ``value -> bool``.
    class_names : column order of the predict function's confidences
        (default: the suite's classes, or the ``class_names`` of a bias_suite
        predict function passed to ``run``).

    Example
    -------
    >>> t = MetricTest("CFGap", "sentiment_gender", threshold=0.05)  # doctest: +SKIP
    >>> t.run(checklist_predict_fn(model)); t.summary()  # doctest: +SKIP
    """

    test_type = "METRIC"

    def __init__(self, metric, examples_or_suite, *, threshold: float = 0.1, bound="abs", attributes=None,
                 class_names=None, max_tuples: int | None = 100, seed: int = 0, name=None, capability=CAPABILITY,
                 description=None, group_order_override=None):
        from ..metrics.catalog import get_metric

        self.metric = get_metric(metric)
        if not (callable(bound) or bound in ("abs", "upper", "lower")):
            raise BiasSuiteError(f"bound must be 'abs', 'upper', 'lower' or a callable, got {bound!r}")
        self.threshold = float(threshold)
        self.bound = bound
        self.max_tuples = max_tuples
        self.seed = int(seed)
        super().__init__(
            examples_or_suite, attributes=attributes, class_names=class_names,
            name=name or f"{self.metric.name} ({self.criterion_text()})", capability=capability,
            description=description or f"bias_suite metric {self.metric.name}: {self.metric.description}",
            group_order_override=group_order_override,
        )

    def criterion_text(self) -> str:
        if callable(self.bound):
            return f"custom bound {getattr(self.bound, '__name__', 'fn')}"
        return {"abs": f"|value| <= {self.threshold}", "upper": f"value <= {self.threshold}", "lower": f"value >= {self.threshold}"}[self.bound]

    def _compute(self, scored):
        from ..metrics.engine import evaluate

        return evaluate(scored, metrics=[self.metric], max_tuples=self.max_tuples, seed=self.seed,
                        group_order_override=present_order(self.group_order, scored.frame) or None)

    def _verdict(self, rows):
        ok = rows[rows["value"].notna()]
        acc = ok[ok["group"].isna()]
        use = acc if len(acc) else ok
        if use.empty:
            return None, None, []
        labels = [(f"{c}" if g is None else f"{g}/{c}") for c, g in zip(use["class"], use["group"])]
        vals = [float(v) for v in use["value"]]
        if callable(self.bound):
            good = all(bool(self.bound(v)) for v in vals)
            margin = 1.0 if good else -1.0
        elif self.bound == "abs":
            margin = self.threshold - max(abs(v) for v in vals)
        elif self.bound == "upper":
            margin = self.threshold - max(vals)
        else:
            margin = min(vals) - self.threshold
        passed = margin >= 0 if not callable(self.bound) else good
        return bool(passed), float(margin), list(zip(labels, vals))


class SignificanceTest(BiasSuiteTest):
    """bias_suite's significance test (Wilcoxon for two groups, Friedman for
    more, across counterfactual templates, per class) as a CheckList test: one
    test case per attribute, failing when any class shows a significant
    difference between groups (adjusted p < ``alpha``)."""

    test_type = "SIG"

    def __init__(self, examples_or_suite, *, alpha: float = 0.05, adjust: str | None = "holm", attributes=None,
                 class_names=None, name=None, capability=CAPABILITY, description=None, group_order_override=None):
        self.alpha = float(alpha)
        self.adjust = adjust
        super().__init__(
            examples_or_suite, attributes=attributes, class_names=class_names,
            name=name or f"Significance ({self.criterion_text()})", capability=capability,
            description=description or "No significant difference between groups across counterfactual templates "
                                       "(Wilcoxon / Friedman on per-template mean probabilities).",
            group_order_override=group_order_override,
        )

    def criterion_text(self) -> str:
        return f"p{'-' + self.adjust if self.adjust else ''} >= {self.alpha}"

    def _compute(self, scored):
        from ..stats.significance import significance_tests

        return significance_tests(scored.to_frame(), adjust=self.adjust)

    def _verdict(self, rows):
        suffix = f"-p-{self.adjust}" if self.adjust else "-p"
        ps = rows[rows["metric"].str.endswith(suffix) & rows["value"].notna()]
        if self.adjust is None:
            ps = ps[ps["metric"].isin(["Wilcoxon-p", "Friedman-p"])]
        if ps.empty:
            return None, None, []
        vals = [float(v) for v in ps["value"]]
        margin = min(vals) - self.alpha
        return bool(margin >= 0), float(margin), [(f"{m}[{c}]", v) for m, c, v in zip(ps["metric"], ps["class"], vals)]


def add_test(suite: TestSuite, test, name=None, capability=None, description=None, format_example_fn=None,
             print_fn=None, overwrite=False):
    """Add any test to a real CheckList ``TestSuite``: CheckList tests go
    through ``suite.add``; bias_suite tests (:class:`MetricTest`,
    :class:`SignificanceTest`) are registered the same way ``TestSuite.add``
    does (``suite.tests``/``suite.info``, with type ``METRIC``/``SIG``),
    because ``TestSuite.add`` accepts exactly MFT, INV and DIR."""
    if not isinstance(test, BiasSuiteTest):
        return _CHECKLIST_ADD(suite, test, name=name, capability=capability, description=description,
                             format_example_fn=format_example_fn, print_fn=print_fn, overwrite=overwrite)
    name = name or test.name
    capability = capability or test.capability
    description = description or test.description
    if name is None or capability is None:
        raise BiasSuiteError("a test needs a name and a capability")
    if name in suite.tests and not overwrite:
        raise BiasSuiteError(f"there is already a test named {name!r} in the suite (pass overwrite=True)")
    if name in suite.info:
        del suite.info[name]
    suite.tests[name] = test
    suite.info[name]["capability"] = capability
    suite.info[name]["type"] = test.test_type
    if description:
        suite.info[name]["description"] = description
    if format_example_fn:
        suite.info[name]["format_example_fn"] = format_example_fn
    if print_fn:
        suite.info[name]["print_fn"] = print_fn


_CHECKLIST_ADD = getattr(TestSuite.add, "checklist_add", TestSuite.add)


def _suite_add(self, test, name=None, capability=None, description=None, format_example_fn=None, print_fn=None,
               overwrite=False):
    return add_test(self, test, name=name, capability=capability, description=description,
                    format_example_fn=format_example_fn, print_fn=print_fn, overwrite=overwrite)


# CheckList's TestSuite.add accepts exactly MFT, INV and DIR (a lookup on the exact type). Once this module is
# imported it also takes bias_suite tests (MetricTest, SignificanceTest); every other test goes to CheckList's
# own add unchanged.
_suite_add.checklist_add = _CHECKLIST_ADD
_suite_add.__doc__ = _CHECKLIST_ADD.__doc__
TestSuite.add = _suite_add


class BiasTestSuite(TestSuite):
    """A CheckList ``TestSuite`` whose ``add`` also takes bias_suite tests
    (everything else is CheckList's own)."""

    add = _suite_add


def to_testsuite(examples_or_suite, *, threshold: float = 0.1, mode: str = "all_terms", seed: int = 0,
                 criterion: str | None = None, attributes=None, group_order_override=None,
                 class_names: Sequence[str] | None = None, metrics=None, metric_threshold: float = 0.1,
                 significance: bool = False, alpha: float = 0.05, max_tuples: int | None = 100,
                 capability: str = CAPABILITY) -> BiasTestSuite:
    """A CheckList TestSuite (:class:`BiasTestSuite`, a ``TestSuite``
    subclass) holding the INV tests of :func:`invariance_tests`, plus a
    :class:`MetricTest` per name in ``metrics`` and a :class:`SignificanceTest`
    when ``significance=True``. Run it with :func:`run_testsuite` (any
    bias_suite model) or ``suite.run(predict_fn)`` (a CheckList predict function)."""
    src = failure_source(examples_or_suite, attributes)
    tests, _ = build_inv_test(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                      group_order_override=group_order_override, class_names=class_names, capability=capability)
    # INV tests only: a plain CheckList TestSuite, so that TestSuite.save / from_file work without bias_suite
    suite = BiasTestSuite() if (metrics or significance) else TestSuite()
    for t in tests:
        suite.add(t)
    if metrics:
        names = [m.strip() for m in metrics.split(",")] if isinstance(metrics, str) else list(metrics)
        for m in names:
            suite.add(MetricTest(m, src, threshold=metric_threshold, class_names=class_names, max_tuples=max_tuples,
                                 seed=seed, capability=capability, group_order_override=group_order_override))
    if significance:
        suite.add(SignificanceTest(src, alpha=alpha, class_names=class_names, capability=capability,
                                   group_order_override=group_order_override))
    return suite


def tests_of(x) -> list:
    if isinstance(x, TestSuite):
        return list(x.tests.values())
    if isinstance(x, AbstractTest):
        return [x]
    if isinstance(x, (list, tuple)) and x and all(isinstance(t, AbstractTest) for t in x):
        return list(x)
    return []


def _is_task(tests, task) -> bool:
    return any(getattr(t, "bias_suite", {}).get("task") == task for t in tests)


def run_testsuite(suite, model, *, class_names=None, verbose: bool = False, overwrite: bool = True):
    """Run a TestSuite (or a list of tests) with any bias_suite model:
    classifiers through :func:`checklist_predict_fn` (one prediction per
    distinct text), taggers (``predict(tokens_list)``) through
    :func:`tagger_predict_fn`. Returns the predict function used."""
    tests = tests_of(suite)
    if not tests:
        raise BiasSuiteError("nothing to run: expected a TestSuite or CheckList tests")
    if _is_task(tests, "sequence_labelling"):
        fn = tagger_predict_fn(model)
    else:
        if class_names is None and getattr(model, "class_names", None) is None:
            class_names = next((t.bias_suite.get("class_names") for t in tests if getattr(t, "bias_suite", {}).get("class_names")), None)
            class_names = class_names or next((t.class_names for t in tests if isinstance(t, BiasSuiteTest) and t.class_names), None)
        fn = checklist_predict_fn(model, class_names)
        for t in tests:
            if getattr(t, "bias_suite", None) is not None:
                t.bias_suite["class_names"] = list(fn.class_names)
    if isinstance(suite, TestSuite):
        suite.run(fn, verbose=verbose, overwrite=overwrite)
    else:
        for t in tests:
            t.run(fn, verbose=verbose, overwrite=overwrite)
    return fn
