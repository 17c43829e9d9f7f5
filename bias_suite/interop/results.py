"""INV results as tidy rows and failure tables, CheckList TestSuites back to
bias_suite examples, and one call that runs a CheckList predict function
through bias_suite.
"""
from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

with warnings.catch_warnings():  # checklist's dependencies warn about pkg_resources / IPython
    warnings.simplefilter("ignore")
    from checklist.test_suite import TestSuite
    from checklist.test_types import INV

from ..exceptions import BiasSuiteError
from ..metrics.engine import results_frame
from .invariance import run_indices, build_inv_test, checklist_change, is_prob, max_change, group_orders_of, outside_span, pair_differs, failure_source, split_tags, tag_diff, CAPABILITY, FAMILY, INV_METRIC, PROB_METRIC, VIEW
from .predict_fns import SequenceLookup, checklist_predict_fn, ScoredLookup
from .bias_tests import BiasSuiteTest, tests_of, run_testsuite, to_testsuite

# =========================================================================
# results: tidy rows and failures


# =========================================================================
def inv_tests(tests) -> list:
    return [t for t in tests if isinstance(t, INV) and getattr(t, "bias_suite", {}).get("kind") == "invariance"]


def _metas(test) -> list:
    """Per case, per sentence: the meta bias_suite reads (group, term...)."""
    return test.bias_suite.get("case_meta") or test.meta


def _adopt_foreign(tests) -> None:
    """INV tests not built by bias_suite (Perturb, custom functions): find
    each sentence's group (from_tests.adopt_inv) so their rows are computed."""
    from .from_tests import adopt_inv

    for t in tests:
        if isinstance(t, INV) and getattr(t, "bias_suite", None) is None:
            adopt_inv(t)


def _resolve(source, model, *, threshold, mode, seed, criterion, attributes, group_order_override, class_names):
    """Run INV tests (already-run tests are used as they are) -> (tests, empty attributes)."""
    tests = tests_of(source)
    if tests:
        _adopt_foreign(tests)
        invs = inv_tests(tests)
        if not invs:
            raise BiasSuiteError("no INV test among these CheckList tests (DIR/MFT tests have no invariance rows; "
                                 "use from_checklist(...) to compute bias metrics on them)")
        if model is not None:
            run_testsuite(invs, model, class_names=class_names)
        for t in invs:
            if not t._results_exist():
                raise BiasSuiteError(f"test {t.name!r} has no results: run the TestSuite first (or pass a model)")
        return invs, []
    src = failure_source(source, attributes)
    invs, empty = build_inv_test(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                         group_order_override=group_order_override, class_names=class_names, capability=CAPABILITY)
    if not invs:
        return invs, empty
    if model is None:
        if src.task == "sequence_labelling":
            if "pred_tags" not in src.table.columns:
                raise BiasSuiteError("pass a tagger, or scored sequence examples with pred_tags (fast path)")
            model = SequenceLookup(src.table)
        else:
            if src.probs is None:
                raise BiasSuiteError("pass a model, or scored examples with probs (fast path)")
            model = ScoredLookup(src.table["text"].tolist(), src.probs, src.classes)
    suite = TestSuite()  # a plain CheckList TestSuite: the INV objects run as CheckList runs them
    for t in invs:
        suite.add(t)
    run_testsuite(suite, model, class_names=class_names)  # the model's own class names, else the suite's
    return invs, empty


def _pair_fails(crit, thr, members, g1, g2) -> bool:
    """Whether a sentence of group ``g1`` and one of ``g2`` among a case's
    ``members`` differ by the criterion."""
    xs = [m for m in members if m[2].get("group") == g1]
    ys = [m for m in members if m[2].get("group") == g2]
    return any(pair_differs(crit, thr, x, y) for x in xs for y in ys)


def _case_members(test, d) -> list:
    preds, confs = test.results.preds[d], test.results.confs[d]
    return [(preds[k], confs[k], _metas(test)[d][k]) for k in range(len(test.data[d]))]


def _rows_for(test) -> list:
    info = test.bias_suite
    a, groups, thr, crit = info["attribute"], info["groups"], info["threshold"], info["criterion"]
    idxs = run_indices(test)
    passed = test.results.passed
    status = {d: passed[pos] for pos, d in enumerate(idxs)}
    live = [d for d in idxs if status[d] is not None]
    fails = [d for d in live if not bool(status[d])]
    n = len(live)
    rows = [_row(a, None, len(fails) / n if n else None, n, None if n else "no test cases", crit)]
    members = {d: _case_members(test, d) for d in fails}
    case_groups = {d: {m.get("group") for m in _metas(test)[d]} for d in live}
    for g1, g2 in itertools.combinations(groups, 2):
        n_ab = sum(1 for d in live if g1 in case_groups[d] and g2 in case_groups[d])
        hit = sum(1 for d in fails if g1 in case_groups[d] and g2 in case_groups[d]
                  and _pair_fails(crit, thr, members[d], g1, g2))
        rows.append(_row(a, f"{g1}|{g2}", hit / n_ab if n_ab else None, n_ab, None if n_ab else "no test cases with both groups", crit))
    return rows


def inv_metric_name(criterion: str | None) -> str:
    """The metric name of INV rows computed by ``criterion``: only CheckList's
    own rule (and the tags rule) is called ``INV-FailRate``."""
    return PROB_METRIC if criterion == "prob" else INV_METRIC


def _row(attribute, group, value, n, note=None, criterion=None) -> dict:
    return {"metric": inv_metric_name(criterion), "family": FAMILY, "view": VIEW, "attribute": attribute, "class": "all",
            "group": group, "value": value, "ci_low": None, "ci_high": None, "n": n, "note": note}


def invariance_rows(source, model=None, *, threshold: float = 0.1, mode: str = "all_terms", seed: int = 0,
                    criterion: str | None = None, attributes=None, group_order_override=None,
                    class_names: Sequence[str] | None = None) -> pd.DataFrame:
    """INV fail rates as tidy result rows (module docstring).

    ``source``: a TestSuite or INV tests already run (their own settings are
    used), or anything :func:`invariance_tests` accepts. With ``model=None``
    the input must be scored examples: the fast path replays their
    probabilities through real INV objects and ``TestSuite.run``.
    """
    return invariance_and_failures(source, model, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                                   attributes=attributes, group_order_override=group_order_override,
                                   class_names=class_names)[0]


def invariance_and_failures(source, model=None, *, threshold: float = 0.1, mode: str = "all_terms", seed: int = 0,
                            criterion: str | None = None, attributes=None, group_order_override=None,
                            class_names: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`invariance_rows` and :func:`failures` of one run of the INV
    tests (what ``bias-suite run`` writes as results rows and ``failures.jsonl``)."""
    tests, empty = _resolve(source, model, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                            attributes=attributes, group_order_override=group_order_override, class_names=class_names)
    rows = []
    for t in tests:
        rows.extend(_rows_for(t))
    for a, _groups in empty:
        rows.append(_row(a, None, None, 0, "no counterfactual template contains every group", criterion))
    return results_frame(rows), _failures_of(tests, class_names)


FAILURE_COLUMNS = ["test", "attribute", "template", "groups", "terms", "sentences", "probs", "preds", "change", "pairs"]


def failures(source, model=None, *, threshold: float = 0.1, mode: str = "all_terms", seed: int = 0,
             criterion: str | None = None, attributes=None, group_order_override=None,
             class_names: Sequence[str] | None = None) -> pd.DataFrame:
    """The failing INV test cases, one row each: test, attribute, template,
    groups/terms/sentences (case order, the first is the reference), probs
    (per sentence, class -> probability; None for taggers), preds (class
    names, or tag strings), change (largest deviation from the first
    sentence: max |Δp|, or tags changed) and pairs (the group pairs that
    differ beyond the threshold). Same inputs as :func:`invariance_rows`."""
    tests, _ = _resolve(source, model, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                        attributes=attributes, group_order_override=group_order_override, class_names=class_names)
    return _failures_of(tests, class_names)


def _failures_of(tests, class_names=None) -> pd.DataFrame:
    out = []
    for t in tests:
        info = t.bias_suite
        names = class_names or info.get("class_names")
        crit, thr = info["criterion"], info["threshold"]
        for pos, d in enumerate(run_indices(t)):
            p = t.results.passed[pos]
            if p is None or bool(p):
                continue
            mem = _case_members(t, d)
            first = mem[0]
            if crit == "tags":
                change = max(tag_diff(outside_span(first[0], first[2]), outside_span(m[0], m[2])) for m in mem)
                probs, preds = None, [str(m[0]) for m in mem]
            else:
                fn = checklist_change if crit == "checklist" else max_change
                change = max(fn(first[0], m[0], first[1], m[1]) for m in mem)
                cols = names or [str(k) for k in range(len(first[1]))] if is_prob(first[1]) else None
                probs = [dict(zip(cols, map(float, m[1]))) for m in mem] if cols else None
                preds = [(names[int(m[0])] if names and not isinstance(m[0], str) else str(m[0])) for m in mem]
            pairs = [f"{g1}|{g2}" for g1, g2 in itertools.combinations(info["groups"], 2)
                     if _pair_fails(crit, thr, mem, g1, g2)]
            out.append({
                "test": t.name, "attribute": info["attribute"], "template": (_metas(t)[d][0] or {}).get("template", f"{t.name}#{d}"),
                "groups": [m[2].get("group") for m in mem], "terms": [m[2].get("term") for m in mem],
                "sentences": list(t.data[d]), "probs": probs, "preds": preds, "change": float(change), "pairs": pairs,
            })
    return pd.DataFrame(out, columns=FAILURE_COLUMNS)


# =========================================================================
# CheckList -> bias_suite: examples and scored examples from a TestSuite


# =========================================================================
def _meta_tests(x) -> list:
    tests = tests_of(x)
    out = [t for t in tests if isinstance(t, BiasSuiteTest) or getattr(t, "bias_suite", None) is not None]
    if not out:
        raise BiasSuiteError("no bias_suite-built tests (INV from invariance_tests, MetricTest, SignificanceTest) found")
    return out


def examples_from_testsuite(suite) -> pd.DataFrame:
    """The examples (docs/formats.md columns) held by the bias_suite-built tests of
    a TestSuite, one row per example id (first occurrence)."""
    rows, seen = [], set()
    for t in _meta_tests(suite):
        for case, metas in zip(t.data, t.meta):
            for text, m in zip(case, metas):
                if m.get("id") in seen:
                    continue
                seen.add(m.get("id"))
                r = {**m, "text": text}
                if "term_span" in m:
                    r["tokens"] = text.split(" ")
                rows.append(r)
    return pd.DataFrame(rows)


def scored_from_testsuite(suite, class_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Scored examples (docs/formats.md) from a run TestSuite: the bias_suite-built
    tests' sentences, meta and predictions; one row per example id.
    Classification rows get ``probs`` (class -> probability) and ``pred``;
    sequence-labelling rows ``tokens``, ``tags`` (gold, when known),
    ``pred_tags`` and ``term_span``."""
    rows, seen = [], set()
    for t in _meta_tests(suite):
        t._check_results()
        names = class_names or (t.class_names if isinstance(t, BiasSuiteTest) else t.bias_suite.get("class_names"))
        seq = getattr(t, "bias_suite", {}).get("task") == "sequence_labelling"
        for d in run_indices(t):
            for k, (text, m) in enumerate(zip(t.data[d], t.meta[d])):
                if m.get("id") in seen:
                    continue
                seen.add(m.get("id"))
                pred, conf = t.results.preds[d][k], t.results.confs[d][k]
                r = {kk: v for kk, v in m.items() if kk not in ("tags", "term_span")}
                if seq:
                    r.update(tokens=text.split(" "), tags=m.get("tags"), pred_tags=split_tags(pred), term_span=m.get("term_span"))
                else:
                    if not names:
                        raise BiasSuiteError("class names unknown: pass class_names=[...]")
                    if not is_prob(conf) or len(conf) != len(names):
                        raise BiasSuiteError(f"test {t.name!r}: needs softmax confidences with {len(names)} classes, got {conf!r}")
                    r["text"] = text
                    r["probs"] = dict(zip(names, map(float, conf)))
                    r["pred"] = names[int(np.argmax(conf))]
                rows.append(r)
    return pd.DataFrame(rows)


# =========================================================================
# one call: a CheckList predict function through bias_suite


# =========================================================================
@dataclass
class CheckListRun:
    """What :func:`run_checklist` / :func:`import_checklist` produce."""

    suite: TestSuite
    scored: Any  # ScoredData (classification) or the scored table
    results: pd.DataFrame  # metrics + significance + INV rows (tidy)
    failures: pd.DataFrame
    predict_fn: Callable | None = None
    examples: pd.DataFrame | None = field(default=None, repr=False)

    def side_by_side(self) -> pd.DataFrame:
        """Accumulated values per attribute: INV fail rate next to the metrics
        (class-free metrics under class "all"; per-class metrics as
        ``METRIC[class]``)."""
        r = self.results[self.results["group"].isna() & self.results["value"].notna()]
        r = r[~r["family"].eq("significance") | r["metric"].str.contains("-p")]
        key = np.where(r["class"] == "all", r["metric"], r["metric"] + "[" + r["class"].astype(str) + "]")
        return pd.DataFrame({"attribute": r["attribute"], "metric": key, "value": r["value"]}).pivot_table(
            index="attribute", columns="metric", values="value", aggfunc="first", sort=False)


def metrics_and_inv(scored, suite, *, metrics, significance, max_tuples, seed, group_order):
    from ..metrics.engine import evaluate

    parts = [evaluate(scored, metrics=metrics, max_tuples=max_tuples, seed=seed, group_order_override=group_order or None)]
    if significance and metrics is None:
        from ..stats.significance import significance_tests

        parts.append(significance_tests(scored.to_frame(), adjust="holm"))
    parts.append(invariance_rows(suite))
    return results_frame(pd.concat([p for p in parts if len(p)], ignore_index=True).to_dict("records"))


def run_checklist(examples_or_suite, predict_fn, *, class_names: Sequence[str] | None = None, threshold: float = 0.1,
                  mode: str = "all_terms", seed: int = 0, criterion: str | None = None, metrics=None,
                  significance: bool = True, max_tuples: int | None = 100, attributes=None,
                  tests: Iterable = (), verbose: bool = False) -> CheckListRun:
    """Run a CheckList user's predict function (``texts -> (preds, confs)`` or
    probabilities; any bias_suite model works too) through bias_suite: the
    INV TestSuite (plus any extra ``tests``, e.g. MFTs) is run with CheckList,
    every example is scored (one prediction per distinct text), and the
    metrics, significance tests and INV fail rates come back side by side."""
    from ..families import scored_from_arrays

    src = failure_source(examples_or_suite, attributes)
    if src.task != "classification":
        raise BiasSuiteError("run_checklist is for classification; for taggers use invariance_rows(examples, tagger)")
    names = class_names or (getattr(predict_fn, "class_names", None)) or src.classes
    fn = checklist_predict_fn(predict_fn, names)
    suite = to_testsuite(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion, class_names=fn.class_names)
    for t in tests:
        suite.add(t)
    for t in inv_tests(suite.tests.values()):
        t.bias_suite["class_names"] = list(fn.class_names)
    suite.run(fn, verbose=verbose, overwrite=True)
    _, P = fn(src.table["text"].astype(str).tolist())
    frame = src.table.copy()
    if frame.get("label") is None:
        frame["label"] = None
    scored = scored_from_arrays(frame, P, fn.class_names)
    results = metrics_and_inv(scored, suite, metrics=metrics, significance=significance, max_tuples=max_tuples,
                               seed=seed, group_order=group_orders_of(src, None))
    return CheckListRun(suite, scored, results, failures(suite), fn, src.table)
