"""CheckList interop: INV tests from bias_suite suites, two-way conversion,
and bias_suite tests inside a CheckList ``TestSuite`` (docs/checklist.md).

Everything here builds and runs *real* ``checklist`` objects
(``checklist.test_types.INV``, ``checklist.test_suite.TestSuite``,
``checklist.expect.Expect``); bias_suite adds the glue.

Invariance semantics (one INV per attribute)
-------------------------------------------
* One :class:`~checklist.test_types.INV` per attribute (name ``"INV <attribute>"``,
  capability ``"Fairness"``), spanning every suite and template family of the
  input. One test case per counterfactual template (the ``template`` column:
  suite/template id plus the lexicon fill), taken from
  :func:`bias_suite.suites.views.counterfactual_view`, so only templates that
  contain every group of the attribute are used (as for the counterfactual
  metrics).
* The case's sentences are its variants in group order: ``mode="per_group"``
  one variant per group (the view's seeded sampler draws one tuple per
  template: same seed, same variants), ``mode="all_terms"`` every term of
  every group (group order, then term order).
* Expectation, as in CheckList's INV, compares every sentence with the *first*
  sentence of its case (``Expect.pairwise``, ``agg_fn="all_except_first"``):
  - ``criterion="prob"`` (default): a sentence fails when any class
    probability differs from the first sentence's by more than ``threshold``
    (``max_c |p(x, c) - p(x_first, c)| > threshold``);
  - ``criterion="checklist"``: CheckList's own ``Expect.inv(threshold)``: fails
    only when the predicted class changes *and* the probability of the first
    sentence's predicted class moves by more than ``threshold``;
  - sequence labelling (``criterion="tags"``): fails when any predicted tag
    outside the identity-term span differs from the first sentence's.
  A case fails when any of its sentences fails.
* Tidy rows (family ``invariance``, view ``counterfactual``, metric
  ``INV-FailRate``, class ``all``): per attribute (group null) the fraction of
  failing cases (= CheckList's fail rate, ``n`` = test cases); per group pair
  ``"a|b"`` the fraction of test cases that fail *and* in which a sentence of
  group ``a`` and one of group ``b`` differ by the same criterion (symmetric
  form), so a pair's value never exceeds the attribute's (``n`` = test cases
  holding both groups).
"""
from __future__ import annotations

import itertools
import json
import math
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

with warnings.catch_warnings():  # checklist's dependencies warn about pkg_resources / IPython
    warnings.simplefilter("ignore")
    from checklist.abstract_test import AbstractTest, load_test
    from checklist.expect import Expect
    from checklist.test_suite import TestSuite
    from checklist.test_types import DIR, INV, MFT

from ..exceptions import BiasSuiteError, ModelError
from ..metrics.engine import results_frame

__all__ = [
    "INV_METRIC", "PROB_METRIC", "inv_metric_name", "FAMILY", "VIEW", "CAPABILITY", "DillWarning",
    "prob_invariance", "tag_invariance", "checklist_predict_fn", "tagger_predict_fn", "ScoredLookup",
    "invariance_tests", "to_testsuite", "run_testsuite", "invariance_rows", "failures",
    "MetricTest", "SignificanceTest", "BiasTestSuite", "add_test",
    "examples_from_testsuite", "scored_from_testsuite", "CheckListRun", "run_checklist",
    "export_checklist", "import_checklist", "write_predictions",
    "from_editor", "suite_from_templates",
    "testsuite_to_dict", "testsuite_from_dict", "save_testsuite", "load_testsuite",
]

INV_METRIC = "INV-FailRate"  # CheckList's rule (Expect.inv) and the tags rule of sequence labelling
PROB_METRIC = "INV-ProbShift-FailRate"  # bias_suite's probability-shift rule (criterion="prob")
FAMILY = "invariance"
VIEW = "counterfactual"
CAPABILITY = "Fairness"
MODES = ("per_group", "all_terms")
CRITERIA = ("prob", "checklist", "tags")
_META_KEYS = ("id", "template", "attribute", "group", "term", "label", "suite", "source_template")


class DillWarning(UserWarning):
    """Loading or saving a CheckList TestSuite with dill (pickle): loading
    executes arbitrary code from the file."""


# =========================================================================
# inputs: suites, examples, scored examples -> one table
# =========================================================================
@dataclass
class _Source:
    table: pd.DataFrame
    task: str = "classification"
    classes: list | None = None
    group_order: dict | None = None
    probs: np.ndarray | None = None  # classification scored examples: (n, C)


def _py(v):
    """JSON-friendly Python value (numpy scalars/arrays, NaN -> None)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, np.ndarray):
        return [_py(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_py(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _py(x) for k, x in v.items()}
    if v is pd.NA:
        return None
    return v


def _present_order(order: Mapping | None, table: pd.DataFrame) -> dict:
    """Group orders restricted to the groups present in ``table``."""
    out = {}
    for a, groups in (order or {}).items():
        present = set(table.loc[table["attribute"] == a, "group"])
        if present:
            kept = [g for g in groups if g in present]
            if sorted(kept) == sorted(present):
                out[a] = kept
    return out


def _from_frame(df: pd.DataFrame) -> _Source:
    df = df.drop(columns=[c for c in ("__line__",) if c in df.columns])
    for col in ("template", "attribute", "group"):
        if col not in df.columns:
            raise BiasSuiteError(f"examples need a {col!r} column (FORMATS.md); columns present: {list(df.columns)}")
    if "tokens" in df.columns and "probs" not in df.columns:
        return _Source(df.reset_index(drop=True), "sequence_labelling")
    if "probs" in df.columns:
        from ..scoring.scored import check_scored

        data = check_scored(df.reset_index(drop=True))
        frame = data.frame.copy()
        for c in ("suite", "source_template"):
            if c in df.columns and c not in frame.columns:
                frame[c] = df[c].to_numpy()
        if "text" not in frame.columns:
            raise BiasSuiteError("scored examples need a 'text' column to build CheckList tests")
        return _Source(frame, "classification", list(data.classes), None, data.probs)
    if "text" not in df.columns:
        raise BiasSuiteError(f"examples need a 'text' (or 'tokens') column; columns present: {list(df.columns)}")
    return _Source(df.reset_index(drop=True), "classification")


def _from_suites(suites: list) -> _Source:
    tasks = {s.task for s in suites}
    if len(tasks) != 1:
        raise BiasSuiteError(f"cannot mix tasks {sorted(tasks)} in one CheckList suite")
    task = tasks.pop()
    from ..suites.expansion import expand_suites  # sequence-labelling suites: tokens, tags, term_span

    table = expand_suites(suites)
    order = {a: list(t.groups) for s in suites for a, t in s.identity.items()}
    classes = list(suites[0].classes) if all(list(s.classes) == list(suites[0].classes) for s in suites) else None
    src = _from_frame(table) if task != "classification" else _Source(table, "classification")
    src.classes = classes or None
    src.group_order = _present_order(order, table)
    return src


def _source(x, attributes=None) -> _Source:
    """Normalise any accepted input into a :class:`_Source`."""
    from ..scoring.scored import ScoredData, read_table
    from ..suites.loader import Suite, find_suite, load_suite

    if isinstance(x, _Source):
        src = x
    elif isinstance(x, ScoredData):
        src = _Source(x.frame.copy(), "classification", list(x.classes), None, x.probs)
        if "text" not in src.table.columns:
            raise BiasSuiteError("scored examples need a 'text' column to build CheckList tests")
    elif isinstance(x, pd.DataFrame):
        src = _from_frame(x)
    elif isinstance(x, list) and x and isinstance(x[0], dict):
        src = _from_frame(pd.DataFrame(x))
    elif isinstance(x, (Suite, str, Path)) or (isinstance(x, (list, tuple)) and x and all(isinstance(s, (Suite, str, Path)) for s in x)):
        items = [x] if isinstance(x, (Suite, str, Path)) else list(x)
        if len(items) == 1 and isinstance(items[0], (str, Path)) and Path(items[0]).suffix.lower() in (".jsonl", ".parquet", ".json", ".pq"):
            src = _from_frame(read_table(items[0]))
        else:
            src = _from_suites([s if isinstance(s, Suite) else load_suite(find_suite(s)) for s in items])
    elif hasattr(x, "to_frame"):
        src = _from_frame(x.to_frame())
    else:
        raise BiasSuiteError(
            f"cannot build CheckList tests from {type(x).__name__}: expected a Suite, suite paths/names, "
            "an examples or scored-examples table, or ScoredData"
        )
    if attributes is not None:
        wanted = [attributes] if isinstance(attributes, str) else list(attributes)
        keep = src.table["attribute"].isin(wanted).to_numpy()
        src = _Source(
            src.table[keep].reset_index(drop=True), src.task, src.classes, src.group_order,
            None if src.probs is None else src.probs[keep],
        )
    if src.table.empty:
        raise BiasSuiteError("no examples to build CheckList tests from")
    return src


def _orders(src: _Source, override) -> dict:
    order = dict(src.group_order or {})
    order.update(_present_order(override, src.table) if override else {})
    return order


# =========================================================================
# expectations (CheckList Expect objects)
# =========================================================================
def _is_prob(c) -> bool:
    return isinstance(c, np.ndarray) and c.ndim == 1 and c.size > 0


def _same_pred(p0, p1) -> bool:
    try:
        return bool(p0 == p1)
    except ValueError:
        return bool(np.all(p0 == p1))


def _max_change(p0, p1, c0, c1) -> float:
    """max_c |c1[c] - c0[c]|; without probabilities a changed prediction counts 1."""
    if _is_prob(c0) and _is_prob(c1) and c0.shape == c1.shape:
        return float(np.max(np.abs(np.asarray(c1, float) - np.asarray(c0, float))))
    return 0.0 if _same_pred(p0, p1) else 1.0


def _checklist_change(p0, p1, c0, c1) -> float:
    """The change CheckList's ``Expect.inv`` thresholds (0 when the prediction is unchanged)."""
    if _same_pred(p0, p1):
        return 0.0
    if _is_prob(c0) and _is_prob(c1):
        return float(abs(c1[p0] - c0[p0]))
    return float(c0 + c1)


def prob_invariance(threshold: float = 0.1):
    """CheckList expectation (``Expect.pairwise``): every sentence's class
    probabilities within ``threshold`` of the case's first sentence; a failure
    scores ``-max_c |Δp|``."""
    threshold = float(threshold)

    def expect(orig_pred, pred, orig_conf, conf, labels=None, meta=None):
        d = _max_change(orig_pred, pred, orig_conf, conf)
        return True if d <= threshold else -d

    return Expect.pairwise(expect)


def _split_tags(pred) -> list:
    if isinstance(pred, str):
        return pred.split(" ") if pred else []
    return [str(t) for t in pred]


def _outside_span(pred, meta) -> tuple:
    tags = _split_tags(pred)
    s, e = (meta or {}).get("term_span") or (0, 0)
    return tags[: int(s)], tags[int(e):]


def _tag_diff(a: tuple, b: tuple) -> int:
    n = 0
    for x, y in zip(a, b):
        n += sum(1 for u, v in zip(x, y) if u != v) + abs(len(x) - len(y))
    return n


def tag_invariance():
    """CheckList expectation (``Expect.testcase``) for sequence labelling:
    predicted tags outside the identity-term span (``meta["term_span"]``)
    equal to the first sentence's; a failure scores ``-(tags changed)``."""

    def expect(xs, preds, confs, labels=None, meta=None):
        base = _outside_span(preds[0], meta[0])
        out = []
        for p, m in zip(preds, meta):
            d = _tag_diff(base, _outside_span(p, m))
            out.append(1 if d == 0 else -d)
        return np.array(out)

    return Expect.testcase(expect)


def _expectation(criterion: str, threshold: float):
    if criterion == "prob":
        return prob_invariance(threshold)
    if criterion == "checklist":
        return Expect.inv(threshold)
    if criterion == "tags":
        return tag_invariance()
    raise BiasSuiteError(f"criterion must be one of {list(CRITERIA)}, got {criterion!r}")


def _pair_differs(criterion, threshold, x, y) -> bool:
    """x, y: (pred, conf, meta) of two sentences of one case (symmetric test)."""
    if criterion == "tags":
        return _tag_diff(_outside_span(x[0], x[2]), _outside_span(y[0], y[2])) > 0
    if criterion == "checklist":
        return max(_checklist_change(x[0], y[0], x[1], y[1]), _checklist_change(y[0], x[0], y[1], x[1])) > threshold
    return _max_change(x[0], y[0], x[1], y[1]) > threshold


# =========================================================================
# predictors -> CheckList predict functions
# =========================================================================
def checklist_predict_fn(model, class_names: Sequence[str] | None = None, *, cache: bool = True):
    """A CheckList predict function ``texts -> (preds, confs)`` from any
    bias_suite model (a :class:`~bias_suite.models.base.Predictor` such as
    ``HFClassifier``/``CallablePredictor``, a name ``bias-suite run --model``
    takes: ``"default-sentiment"``, a model folder or hub id, a plain or
    CheckList-style function with ``class_names``).

    ``preds`` are class indices (argmax), ``confs`` an ``(n, C)`` array of
    probabilities, as ``checklist.pred_wrapper.PredictorWrapper.wrap_softmax``
    gives. The function carries ``class_names``, ``conf = "softmax"`` and
    ``predictor``; with ``cache=True`` each distinct text is predicted once
    (the tests of one TestSuite share sentences).
    """
    from ..models.base import as_predictor

    if isinstance(model, (str, Path)):  # the names `bias-suite run --model` takes: one resolver for both
        from ..run import load_predictor

        model, _ = load_predictor(model, progress=False)
    if class_names is None and getattr(model, "class_names", None) is not None:
        class_names = list(model.class_names)
    pred = as_predictor(model, class_names)
    names = list(pred.class_names)
    store: dict = {}

    def predict_and_confidence(texts):
        texts = [str(t) for t in texts]
        missing = [t for t in dict.fromkeys(texts) if t not in store]
        if missing:
            P = np.asarray(pred.predict_proba(missing), dtype=np.float64)
            if P.shape != (len(missing), len(names)):
                raise ModelError(f"model returned probabilities of shape {P.shape}, expected {(len(missing), len(names))}")
            store.update(zip(missing, P))
        confs = np.stack([store[t] for t in texts]) if texts else np.zeros((0, len(names)))
        if not cache:
            store.clear()
        return confs.argmax(axis=1), confs

    predict_and_confidence.class_names = names
    predict_and_confidence.conf = "softmax"
    predict_and_confidence.predictor = pred
    return predict_and_confidence


def _seq_conf(tag_probs) -> float:
    """Confidence of one tagged sentence: the smallest per-token max probability."""
    if tag_probs is None:
        return 1.0
    best = []
    for tp in tag_probs:
        if isinstance(tp, Mapping):
            best.append(max(tp.values()) if tp else 1.0)
        else:
            arr = np.asarray(tp, dtype=float)
            best.append(float(arr.max()) if arr.size else 1.0)
    return float(min(best)) if best else 1.0


def tagger_predict_fn(tagger):
    """A CheckList predict function for a token tagger with the documented
    interface ``tagger.predict(tokens_list) -> (pred_tags, tag_probs)`` (or a
    callable with that signature). CheckList data are the space-joined
    tokens; ``preds`` are the space-joined predicted tags (strings, so that
    sentences of different lengths stay one CheckList array) and ``confs``
    the smallest per-token max tag probability (1.0 without probabilities).
    """
    fn = tagger.predict if hasattr(tagger, "predict") else tagger
    if not callable(fn):
        raise ModelError(f"a tagger needs predict(tokens_list), got {type(tagger).__name__}")

    def predict_and_confidence(texts):
        toks = [str(t).split(" ") for t in texts]
        out = fn(toks)
        if isinstance(out, tuple) and len(out) == 2:
            tags, probs = out
        else:
            tags, probs = out, None
        tags = list(tags)
        if len(tags) != len(toks):
            raise ModelError(f"tagger returned {len(tags)} tag sequences for {len(toks)} sentences")
        preds = []
        for i, (t, tk) in enumerate(zip(tags, toks)):
            t = [str(x) for x in t]
            if len(t) != len(tk):
                raise ModelError(f"tagger returned {len(t)} tags for the {len(tk)} tokens of sentence {i}: {tk}")
            preds.append(" ".join(t))
        confs = [_seq_conf(p) for p in probs] if probs is not None else [1.0] * len(preds)
        return preds, confs

    predict_and_confidence.task = "sequence_labelling"
    predict_and_confidence.tagger = tagger
    return predict_and_confidence


class ScoredLookup:
    """A :class:`~bias_suite.models.base.Predictor` that replays already-scored
    probabilities by text (the fast path of ``bias-suite run``: INV tests go
    through real CheckList objects without predicting again)."""

    def __init__(self, texts: Sequence[str], probs, class_names: Sequence[str]):
        self.class_names = [str(c) for c in class_names]
        P = np.asarray(probs, dtype=np.float64)
        self._index: dict = {}
        for t, row in zip(texts, P):
            self._index.setdefault(str(t), row)

    @classmethod
    def from_scored(cls, scored) -> "ScoredLookup":
        src = _source(scored)
        if src.probs is None:
            raise BiasSuiteError("the fast path needs scored examples (with probs)")
        return cls(src.table["text"].tolist(), src.probs, src.classes)

    def predict_proba(self, texts):
        try:
            return np.stack([self._index[str(t)] for t in texts]) if len(texts) else np.zeros((0, len(self.class_names)))
        except KeyError as e:
            raise ModelError(f"text not among the scored examples: {e.args[0]!r}") from None


class _SequenceLookup:
    """Replays scored sequence-labelling predictions (``pred_tags``) by tokens."""

    def __init__(self, table: pd.DataFrame):
        self._index = {}
        probs = table["tag_probs"] if "tag_probs" in table.columns else [None] * len(table)
        for toks, tags, tp in zip(table["tokens"], table["pred_tags"], probs):
            self._index.setdefault(" ".join(map(str, toks)), (list(tags), tp))

    def predict(self, tokens_list):
        try:
            got = [self._index[" ".join(map(str, t))] for t in tokens_list]
        except KeyError as e:
            raise ModelError(f"sentence not among the scored examples: {e.args[0]!r}") from None
        tp = [g[1] for g in got]
        return [g[0] for g in got], (None if any(x is None for x in tp) else tp)


# =========================================================================
# building INV tests
# =========================================================================
def _meta(row: Mapping, task: str) -> dict:
    m = {k: _py(row[k]) for k in _META_KEYS if k in row}
    if task == "sequence_labelling":
        m["term_span"] = _py(row["term_span"])
        if "tags" in row and row["tags"] is not None:
            m["tags"] = _py(row["tags"])
    return m


def _sequence_prepare(table: pd.DataFrame) -> pd.DataFrame:
    """text = space-joined tokens; term_span computed from the term when missing."""
    table = table.copy()
    texts, spans = [], []
    has_span = "term_span" in table.columns
    for i, r in enumerate(table.itertuples(index=False)):
        toks = [str(t) for t in r.tokens]
        bad = [t for t in toks if not t or re.search(r"\s", t)]
        if bad:
            raise BiasSuiteError(f"row {i + 1}: tokens must be non-empty and hold no whitespace, got {bad[0]!r}")
        texts.append(" ".join(toks))
        span = getattr(r, "term_span") if has_span else None
        if span is None or (isinstance(span, float) and math.isnan(span)):
            term = str(r.term).split()
            span = next(((k, k + len(term)) for k in range(len(toks) - len(term) + 1) if toks[k:k + len(term)] == term), None)
            if span is None:
                raise BiasSuiteError(f"row {i + 1}: no term_span and the term {r.term!r} is not among the tokens")
        spans.append([int(span[0]), int(span[1])])
    table["text"] = texts
    table["term_span"] = spans
    return table


def _check_args(threshold, mode):
    if mode not in MODES:
        raise BiasSuiteError(f"mode must be one of {list(MODES)}, got {mode!r}")
    if not (isinstance(threshold, (int, float)) and threshold >= 0 and math.isfinite(threshold)):
        raise BiasSuiteError(f"threshold must be a finite number >= 0, got {threshold!r}")


def _describe(attribute, groups, threshold, criterion, mode) -> str:
    what = {
        "prob": f"no class probability moves by more than {threshold}",
        "checklist": f"the prediction does not change unless its probability moves by at most {threshold} (CheckList Expect.inv)",
        "tags": "the predicted tags outside the identity term do not change",
    }[criterion]
    variants = "one variant per group" if mode == "per_group" else "every term of every group"
    return (
        f"Changing only the {attribute} identity term ({', '.join(groups)}) keeps the prediction: {what}, "
        f"compared with the first variant. One test case per counterfactual template, {variants}."
    )


def _make_inv(attribute, groups, data, meta, *, threshold, criterion, mode, seed, task, class_names, name=None,
              capability=CAPABILITY, description=None, dropped=0) -> INV:
    inv = INV(
        data, expect=_expectation(criterion, threshold), threshold=threshold, meta=meta,
        name=name or f"INV {attribute}", capability=capability,
        description=description or _describe(attribute, groups, threshold, criterion, mode),
    )
    inv.bias_suite = {
        "kind": "invariance", "attribute": attribute, "groups": list(groups), "threshold": float(threshold),
        "criterion": criterion, "mode": mode, "seed": int(seed), "task": task,
        "class_names": list(class_names) if class_names else None, "dropped_templates": int(dropped),
    }
    return inv


def _build(src: _Source, *, threshold, mode, seed, criterion, group_order_override, class_names, capability):
    """INV tests (one per attribute with complete templates) and the
    attributes without any test case."""
    from ..suites.views import counterfactual_view

    _check_args(threshold, mode)
    table = src.table
    if src.task == "sequence_labelling":
        table = _sequence_prepare(table)
        criterion = "tags" if criterion in (None, "prob") else criterion
        if criterion != "tags":
            raise BiasSuiteError(f"sequence labelling supports criterion 'tags' only, got {criterion!r}")
    else:
        criterion = criterion or "checklist"
        if criterion == "tags":
            raise BiasSuiteError("criterion 'tags' is for sequence labelling")
    if criterion not in CRITERIA:
        raise BiasSuiteError(f"criterion must be one of {list(CRITERIA)}, got {criterion!r}")
    cfs = counterfactual_view(table, max_tuples=1, seed=seed, group_order_override=_orders(src, group_order_override) or None)
    records = table.to_dict("records")
    texts = table["text"].astype(str).tolist()
    tests, empty = [], []
    names = class_names or src.classes
    for a, cv in cfs.items():
        if not cv.templates:
            empty.append((a, cv.groups))
            continue
        if mode == "per_group":
            cases = [list(map(int, row)) for row in cv.tuples]
        else:
            cases = [[int(i) for lst in cv.members[t] for i in lst] for t in cv.templates]
        data = [[texts[i] for i in case] for case in cases]
        meta = [[_meta(records[i], src.task) for i in case] for case in cases]
        tests.append(_make_inv(a, cv.groups, data, meta, threshold=threshold, criterion=criterion, mode=mode, seed=seed,
                               task=src.task, class_names=names if src.task == "classification" else None,
                               capability=capability, dropped=len(cv.incomplete)))
    return tests, empty


def invariance_tests(examples_or_suite, *, threshold: float = 0.1, mode: str = "all_terms", seed: int = 0,
                     criterion: str | None = None, attributes=None, group_order_override=None,
                     class_names: Sequence[str] | None = None, capability: str = CAPABILITY) -> list:
    """One real ``checklist.test_types.INV`` per attribute (module docstring).

    Parameters
    ----------
    examples_or_suite : Suite, suite path/name or list of them, examples or
        scored-examples table (DataFrame/JSONL/Parquet path), ScoredData, or
        sequence-labelling examples (``tokens``, ``term_span``).
    threshold : probability tolerance (classification).
    mode : ``"per_group"`` (one seeded variant per group) or ``"all_terms"``.
    seed : seed of the per-group choice (``counterfactual_view``'s sampler).
    criterion : ``"prob"`` (default), ``"checklist"`` (``Expect.inv``) or
        ``"tags"`` (sequence labelling, the default there).
    class_names : recorded on the tests for reports (default: the suite's classes).

    Each sentence's ``meta`` holds ``id, template, attribute, group, term,
    label`` (and ``suite, source_template`` for suites; ``term_span`` for
    sequence labelling); ``test.bias_suite`` holds the settings.
    """
    src = _source(examples_or_suite, attributes)
    tests, _ = _build(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                      group_order_override=group_order_override, class_names=class_names, capability=capability)
    return tests


# =========================================================================
# bias_suite tests with CheckList's test interface
# =========================================================================
class _BiasSuiteTest(AbstractTest):
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
        src = _source(examples_or_suite, attributes)
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
            meta.append([_meta(recs[i], "classification") for i in idx])
        super().__init__(data, None, labels=None, meta=meta, agg_fn="all", templates=None, print_first=False,
                         name=name, capability=capability, description=description)
        self.attributes = attrs
        self.class_names = list(class_names) if class_names else src.classes
        self.group_order = _orders(src, group_order_override)

    # ---- running
    def run(self, predict_and_confidence_fn, overwrite=False, verbose=True, n=None, seed=None):
        names = getattr(predict_and_confidence_fn, "class_names", None)
        if names is not None:
            self.class_names = list(names)
        return super().run(predict_and_confidence_fn, overwrite=overwrite, verbose=verbose, n=n, seed=seed)

    def _run_indices(self) -> list:
        return list(range(len(self.data))) if self.run_idxs is None else [int(i) for i in self.run_idxs]

    def scored(self):
        """The predicted examples of the run cases as :class:`ScoredData`."""
        from ..scoring.scored import scored_from_arrays

        self._check_results()
        if not self.class_names:
            raise BiasSuiteError(f"{self.name}: class names unknown; pass class_names=[...] when creating the test")
        rows, probs = [], []
        for d in self._run_indices():
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
        idxs = self._run_indices()
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
        for pos, d in enumerate(self._run_indices()):
            p = self.results.passed[pos]
            verdict = "filtered" if p is None else ("PASS" if bool(p) else "FAIL")
            print(f"{verdict:8s} {self.attributes[d]}: {self._fmt_values(self.results.values[pos])}  ({self.criterion_text()})")

    def criterion_text(self) -> str:  # pragma: no cover - overridden
        return ""

    def form_testcases(self, n_per_testcase=3):
        self._check_results()
        out = []
        for pos, d in enumerate(self._run_indices()):
            p = self.results.passed[pos]
            if p is None:
                continue
            text = f"{self.attributes[d]}: {self._fmt_values(self.results.values[pos])}"
            out.append({"examples": [{"new": {"text": text, "pred": "", "conf": None}, "old": None, "label": None,
                                      "succeed": int(bool(p))}], "succeed": int(bool(p)), "tags": []})
        return out


class MetricTest(_BiasSuiteTest):
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
                        group_order_override=_present_order(self.group_order, scored.frame) or None)

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


class SignificanceTest(_BiasSuiteTest):
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


_TYPE_NAMES = {MFT: "MFT", INV: "INV", DIR: "DIR"}


def add_test(suite: TestSuite, test, name=None, capability=None, description=None, format_example_fn=None,
             print_fn=None, overwrite=False):
    """Add any test to a real CheckList ``TestSuite``: CheckList tests go
    through ``suite.add``; bias_suite tests (:class:`MetricTest`,
    :class:`SignificanceTest`) are registered the same way ``TestSuite.add``
    does (``suite.tests``/``suite.info``, with type ``METRIC``/``SIG``),
    because ``TestSuite.add`` accepts exactly MFT, INV and DIR."""
    if not isinstance(test, _BiasSuiteTest):
        return TestSuite.add(suite, test, name=name, capability=capability, description=description,
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


class BiasTestSuite(TestSuite):
    """A CheckList ``TestSuite`` whose ``add`` also takes bias_suite tests
    (everything else is CheckList's own)."""

    def add(self, test, name=None, capability=None, description=None, format_example_fn=None, print_fn=None,
            overwrite=False):
        return add_test(self, test, name=name, capability=capability, description=description,
                        format_example_fn=format_example_fn, print_fn=print_fn, overwrite=overwrite)


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
    src = _source(examples_or_suite, attributes)
    tests, _ = _build(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                      group_order_override=group_order_override, class_names=class_names, capability=capability)
    suite = BiasTestSuite()
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


def _tests_of(x) -> list:
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
    tests = _tests_of(suite)
    if not tests:
        raise BiasSuiteError("nothing to run: expected a TestSuite or CheckList tests")
    if _is_task(tests, "sequence_labelling"):
        fn = tagger_predict_fn(model)
    else:
        if class_names is None and getattr(model, "class_names", None) is None:
            class_names = next((t.bias_suite.get("class_names") for t in tests if getattr(t, "bias_suite", {}).get("class_names")), None)
            class_names = class_names or next((t.class_names for t in tests if isinstance(t, _BiasSuiteTest) and t.class_names), None)
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


# =========================================================================
# results: tidy rows and failures
# =========================================================================
def _inv_tests(tests) -> list:
    return [t for t in tests if isinstance(t, INV) and getattr(t, "bias_suite", {}).get("kind") == "invariance"]


def _resolve(source, model, *, threshold, mode, seed, criterion, attributes, group_order_override, class_names):
    """Run INV tests (already-run tests are used as they are) -> (tests, empty attributes)."""
    tests = _tests_of(source)
    if tests:
        invs = _inv_tests(tests)
        if model is not None:
            run_testsuite(invs, model, class_names=class_names)
        for t in invs:
            if not t._results_exist():
                raise BiasSuiteError(f"test {t.name!r} has no results: run the TestSuite first (or pass a model)")
        return invs, []
    src = _source(source, attributes)
    invs, empty = _build(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                         group_order_override=group_order_override, class_names=class_names, capability=CAPABILITY)
    if not invs:
        return invs, empty
    if model is None:
        if src.task == "sequence_labelling":
            if "pred_tags" not in src.table.columns:
                raise BiasSuiteError("pass a tagger, or scored sequence examples with pred_tags (fast path)")
            model = _SequenceLookup(src.table)
        else:
            if src.probs is None:
                raise BiasSuiteError("pass a model, or scored examples with probs (fast path)")
            model = ScoredLookup(src.table["text"].tolist(), src.probs, src.classes)
    suite = TestSuite()  # a plain CheckList TestSuite: the INV objects run as CheckList runs them
    for t in invs:
        suite.add(t)
    run_testsuite(suite, model, class_names=class_names)  # the model's own class names, else the suite's
    return invs, empty


def _case_members(test, d) -> list:
    preds, confs = test.results.preds[d], test.results.confs[d]
    return [(preds[k], confs[k], test.meta[d][k]) for k in range(len(test.data[d]))]


def _rows_for(test) -> list:
    info = test.bias_suite
    a, groups, thr, crit = info["attribute"], info["groups"], info["threshold"], info["criterion"]
    idxs = list(range(len(test.data))) if test.run_idxs is None else [int(i) for i in test.run_idxs]
    passed = test.results.passed
    status = {d: passed[pos] for pos, d in enumerate(idxs)}
    live = [d for d in idxs if status[d] is not None]
    fails = [d for d in live if not bool(status[d])]
    n = len(live)
    rows = [_row(a, None, len(fails) / n if n else None, n, None if n else "no test cases", crit)]
    members = {d: _case_members(test, d) for d in fails}
    case_groups = {d: {m.get("group") for m in test.meta[d]} for d in live}
    for g1, g2 in itertools.combinations(groups, 2):
        n_ab = sum(1 for d in live if g1 in case_groups[d] and g2 in case_groups[d])
        hit = 0
        for d in fails:
            if g1 not in case_groups[d] or g2 not in case_groups[d]:
                continue
            xs = [m for m in members[d] if m[2].get("group") == g1]
            ys = [m for m in members[d] if m[2].get("group") == g2]
            if any(_pair_differs(crit, thr, x, y) for x in xs for y in ys):
                hit += 1
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
    tests, empty = _resolve(source, model, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                            attributes=attributes, group_order_override=group_order_override, class_names=class_names)
    rows = []
    for t in tests:
        rows.extend(_rows_for(t))
    for a, _groups in empty:
        rows.append(_row(a, None, None, 0, "no counterfactual template contains every group", criterion))
    return results_frame(rows)


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
    out = []
    for t in tests:
        info = t.bias_suite
        names = class_names or info.get("class_names")
        crit, thr = info["criterion"], info["threshold"]
        idxs = list(range(len(t.data))) if t.run_idxs is None else [int(i) for i in t.run_idxs]
        for pos, d in enumerate(idxs):
            p = t.results.passed[pos]
            if p is None or bool(p):
                continue
            mem = _case_members(t, d)
            first = mem[0]
            if crit == "tags":
                change = max(_tag_diff(_outside_span(first[0], first[2]), _outside_span(m[0], m[2])) for m in mem)
                probs, preds = None, [str(m[0]) for m in mem]
            else:
                fn = _checklist_change if crit == "checklist" else _max_change
                change = max(fn(first[0], m[0], first[1], m[1]) for m in mem)
                cols = names or [str(k) for k in range(len(first[1]))] if _is_prob(first[1]) else None
                probs = [dict(zip(cols, map(float, m[1]))) for m in mem] if cols else None
                preds = [(names[int(m[0])] if names and not isinstance(m[0], str) else str(m[0])) for m in mem]
            pairs = []
            for g1, g2 in itertools.combinations(info["groups"], 2):
                xs = [m for m in mem if m[2].get("group") == g1]
                ys = [m for m in mem if m[2].get("group") == g2]
                if any(_pair_differs(crit, thr, x, y) for x in xs for y in ys):
                    pairs.append(f"{g1}|{g2}")
            out.append({
                "test": t.name, "attribute": info["attribute"], "template": t.meta[d][0].get("template"),
                "groups": [m[2].get("group") for m in mem], "terms": [m[2].get("term") for m in mem],
                "sentences": list(t.data[d]), "probs": probs, "preds": preds, "change": float(change), "pairs": pairs,
            })
    return pd.DataFrame(out, columns=FAILURE_COLUMNS)


# =========================================================================
# CheckList -> bias_suite: examples and scored examples from a TestSuite
# =========================================================================
def _meta_tests(x) -> list:
    tests = _tests_of(x)
    out = [t for t in tests if isinstance(t, _BiasSuiteTest) or getattr(t, "bias_suite", None) is not None]
    if not out:
        raise BiasSuiteError("no bias_suite-built tests (INV from invariance_tests, MetricTest, SignificanceTest) found")
    return out


def examples_from_testsuite(suite) -> pd.DataFrame:
    """The examples (FORMATS.md columns) held by the bias_suite-built tests of
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
    """Scored examples (FORMATS.md) from a run TestSuite: the bias_suite-built
    tests' sentences, meta and predictions; one row per example id.
    Classification rows get ``probs`` (class -> probability) and ``pred``;
    sequence-labelling rows ``tokens``, ``tags`` (gold, when known),
    ``pred_tags`` and ``term_span``."""
    rows, seen = [], set()
    for t in _meta_tests(suite):
        t._check_results()
        names = class_names or (t.class_names if isinstance(t, _BiasSuiteTest) else t.bias_suite.get("class_names"))
        seq = getattr(t, "bias_suite", {}).get("task") == "sequence_labelling"
        idxs = list(range(len(t.data))) if t.run_idxs is None else [int(i) for i in t.run_idxs]
        for d in idxs:
            for k, (text, m) in enumerate(zip(t.data[d], t.meta[d])):
                if m.get("id") in seen:
                    continue
                seen.add(m.get("id"))
                pred, conf = t.results.preds[d][k], t.results.confs[d][k]
                r = {kk: v for kk, v in m.items() if kk not in ("tags", "term_span")}
                if seq:
                    r.update(tokens=text.split(" "), tags=m.get("tags"), pred_tags=_split_tags(pred), term_span=m.get("term_span"))
                else:
                    if not names:
                        raise BiasSuiteError("class names unknown: pass class_names=[...]")
                    if not _is_prob(conf) or len(conf) != len(names):
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


def _metrics_and_inv(scored, suite, *, metrics, significance, max_tuples, seed, group_order):
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
    from ..scoring.scored import scored_from_arrays

    src = _source(examples_or_suite, attributes)
    if src.task != "classification":
        raise BiasSuiteError("run_checklist is for classification; for taggers use invariance_rows(examples, tagger)")
    names = class_names or (getattr(predict_fn, "class_names", None)) or src.classes
    fn = checklist_predict_fn(predict_fn, names)
    suite = to_testsuite(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion, class_names=fn.class_names)
    for t in tests:
        suite.add(t)
    for t in _inv_tests(suite.tests.values()):
        t.bias_suite["class_names"] = list(fn.class_names)
    suite.run(fn, verbose=verbose, overwrite=True)
    _, P = fn(src.table["text"].astype(str).tolist())
    frame = src.table.copy()
    if frame.get("label") is None:
        frame["label"] = None
    scored = scored_from_arrays(frame, P, fn.class_names)
    results = _metrics_and_inv(scored, suite, metrics=metrics, significance=significance, max_tuples=max_tuples,
                               seed=seed, group_order=_orders(src, None))
    return CheckListRun(suite, scored, results, failures(suite), fn, src.table)


# =========================================================================
# raw-file export / import (predictions made elsewhere)
# =========================================================================
RAW_FILE = "tests.txt"
MANIFEST = "manifest.jsonl"
SPEC = "testsuite.json"


def export_checklist(examples_or_suite, out_dir, *, mode: str = "all_terms", threshold: float = 0.1, seed: int = 0,
                     criterion: str | None = None, attributes=None, class_names: Sequence[str] | None = None,
                     group_order_override=None) -> dict:
    """Export a suite as a CheckList TestSuite in CheckList's raw-file format.

    Writes to ``out_dir``: ``tests.txt`` (``TestSuite.to_raw_file``: one
    sentence per line, the file a model elsewhere predicts), ``manifest.jsonl``
    (one JSON object per line of tests.txt: test, case, the example's columns)
    and ``testsuite.json`` (the settings and classes). Nothing is pickled.
    ``mode="all_terms"`` (default) exports every example of the complete
    templates, so the metrics can be computed from the predictions too.
    Returns the paths.
    """
    from ..report.files import atomic_write_text
    from ..scoring.scored import write_jsonl

    src = _source(examples_or_suite, attributes)
    suite = to_testsuite(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                         group_order_override=group_order_override, class_names=class_names)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    raw = out / RAW_FILE
    suite.to_raw_file(str(raw))
    rows = []
    for name, t in suite.tests.items():
        for c, (case, metas) in enumerate(zip(t.data, t.meta)):
            for text, m in zip(case, metas):
                rows.append({"test": name, "case": c, **m, "text": text})
    manifest = write_jsonl(pd.DataFrame(rows), out / MANIFEST)
    tests = []
    for name, t in suite.tests.items():
        tests.append({"name": name, "capability": suite.info[name]["capability"], "description": t.description,
                      **{k: v for k, v in t.bias_suite.items()}})
    spec = {
        "format": "bias_suite-checklist-export/1", "raw_file": RAW_FILE, "manifest": MANIFEST,
        "lines": len(rows), "task": src.task, "class_names": list(class_names or src.classes or []) or None,
        "tests": tests,
        "predictions": "one line per line of tests.txt, CheckList's format: 'pred p_0 ... p_C-1' (pred_and_softmax, "
                       "pred an index or a class name) or 'p_0 ... p_C-1' (softmax), classes in class_names order",
    }
    spec_path = atomic_write_text(out / SPEC, json.dumps(spec, indent=2) + "\n")
    return {"raw_file": raw, "manifest": manifest, "spec": spec_path}


def _suite_from_manifest(manifest: pd.DataFrame, spec: dict) -> BiasTestSuite:
    suite = BiasTestSuite()
    by_test = {name: g for name, g in manifest.groupby("test", sort=False)}
    for info in spec["tests"]:
        g = by_test.get(info["name"])
        if g is None:
            raise BiasSuiteError(f"manifest has no rows for test {info['name']!r}")
        data, meta = [], []
        for _, case in g.groupby("case", sort=True):
            data.append(case["text"].astype(str).tolist())
            meta.append([
                {k: _py(v) for k, v in r.items() if k not in ("test", "case", "text") and not (k == "term_span" and v is None)}
                for r in case.to_dict("records")
            ])
        inv = _make_inv(info["attribute"], info["groups"], data, meta, threshold=info["threshold"],
                        criterion=info["criterion"], mode=info["mode"], seed=info["seed"], task=info["task"],
                        class_names=info.get("class_names") or spec.get("class_names"), name=info["name"],
                        capability=info["capability"], description=info.get("description"),
                        dropped=info.get("dropped_templates", 0))
        suite.add(inv)
    return suite


def _pred_format_fn(file_format: str, class_names: Sequence[str] | None):
    """CheckList's line formats, with class-name predictions mapped to indices."""
    index = {c: i for i, c in enumerate(class_names or [])}

    def pred_of(tok):
        if tok.isdigit():
            return int(tok)
        if tok in index:
            return index[tok]
        raise BiasSuiteError(f"prediction {tok!r} is neither a class index nor one of the classes {list(index)}")

    if file_format == "pred_and_softmax":
        def fmt(line):
            parts = line.split()
            return pred_of(parts[0]), np.array([float(x) for x in parts[1:]])
        return fmt
    if file_format == "pred_and_conf":
        def fmt(line):
            p, c = line.split()
            return pred_of(p), float(c)
        return fmt
    return None


def import_checklist(export_dir, predictions, *, class_names: Sequence[str] | None = None,
                     file_format: str = "pred_and_softmax", format_fn=None, ignore_header: bool = False,
                     metrics=None, significance: bool = True, max_tuples: int | None = 100,
                     seed: int = 0) -> CheckListRun:
    """Read predictions made elsewhere (CheckList's prediction-file formats,
    one line per line of the export's ``tests.txt``) back with
    ``TestSuite.run_from_file``, into bias_suite scored examples, metrics and
    INV rows. ``class_names``: column order of the probabilities (default: the
    export's classes)."""
    from ..scoring.scored import check_scored, read_table

    export_dir = Path(export_dir)
    spec_path = export_dir / SPEC
    if not spec_path.exists():
        raise BiasSuiteError(f"{export_dir}: not a CheckList export (no {SPEC}); create one with export_checklist")
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    manifest = read_table(export_dir / spec.get("manifest", MANIFEST)).drop(columns=["__line__"], errors="ignore")
    names = list(class_names) if class_names else spec.get("class_names")
    suite = _suite_from_manifest(manifest, spec)
    lines = suite.get_raw_examples(new_sample=True)  # sets test_ranges/result_indexes as to_raw_file did
    raw_path = export_dir / spec.get("raw_file", RAW_FILE)
    if raw_path.exists():
        on_disk = raw_path.read_text(encoding="utf-8").split("\n")
        if on_disk != lines:
            raise BiasSuiteError(f"{raw_path} does not match {MANIFEST}; re-export instead of editing the files")
    with open(predictions, "r", encoding="utf-8") as fh:
        n_pred = sum(1 for _ in fh) - (1 if ignore_header else 0)
    if n_pred != len(lines):
        raise BiasSuiteError(f"{predictions}: {n_pred} prediction lines for the {len(lines)} lines of {raw_path.name}")
    if format_fn is None:
        format_fn = _pred_format_fn(file_format, names)
    suite.run_from_file(str(predictions), file_format=None if format_fn else file_format, format_fn=format_fn,
                        ignore_header=ignore_header, overwrite=True)
    invs = _inv_tests(suite.tests.values())
    for t in invs:
        t.bias_suite["class_names"] = names
    table = scored_from_testsuite(suite, names)
    if spec.get("task", "classification") != "classification":
        rows = invariance_rows(suite)
        return CheckListRun(suite, table, rows, failures(suite), None, manifest)
    scored = check_scored(table)
    order = {}
    for info in spec["tests"]:
        order[info["attribute"]] = info["groups"]
    results = _metrics_and_inv(scored, suite, metrics=metrics, significance=significance, max_tuples=max_tuples,
                               seed=seed, group_order=_present_order(order, scored.frame))
    return CheckListRun(suite, scored, results, failures(suite), None, manifest)


def write_predictions(raw_file, model, out_path, *, class_names: Sequence[str] | None = None,
                      file_format: str = "pred_and_softmax", decimals: int = 10) -> Path:
    """Predict every line of a CheckList raw file and write CheckList's
    prediction format (``pred_and_softmax``: "pred p_0 ... p_C-1";
    ``softmax``: "p_0 ... p_C-1") — what "running predictions elsewhere"
    produces. ``model``: anything :func:`checklist_predict_fn` accepts."""
    from ..report.files import atomic_write_text

    if file_format not in ("pred_and_softmax", "softmax"):
        raise BiasSuiteError(f"file_format must be 'pred_and_softmax' or 'softmax', got {file_format!r}")
    texts = Path(raw_file).read_text(encoding="utf-8").split("\n")
    fn = checklist_predict_fn(model, class_names)
    preds, confs = fn(texts)
    lines = []
    for p, c in zip(preds, confs):
        probs = " ".join(f"{x:.{decimals}f}" for x in c)
        lines.append(f"{int(p)} {probs}" if file_format == "pred_and_softmax" else probs)
    return atomic_write_text(out_path, "\n".join(lines) + "\n")


# =========================================================================
# CheckList Editor outputs and templates -> bias_suite
# =========================================================================
def _group_of(groups: Mapping[str, Sequence[str]]) -> dict:
    out = {}
    for g, terms in groups.items():
        for t in terms:
            if t in out and out[t] != g:
                raise BiasSuiteError(f"term {t!r} is in groups {out[t]!r} and {g!r}")
            out[t] = g
    return out


def _label_of(label, class_names, ret, i, j):
    if callable(label):
        return label(i, j)
    if label is not None:
        return label
    labels = ret.get("labels") if isinstance(ret, Mapping) else getattr(ret, "labels", None)
    if labels is None:
        return None
    v = labels[i]
    if isinstance(v, (list, tuple)) and j is not None:
        v = v[j]
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        if class_names is None:
            raise BiasSuiteError("the Editor labels are integers: pass class_names=[...] to name them")
        return class_names[int(v)]
    return None if v is None else str(v)


def from_editor(ret, *, attribute_key: str, groups: Mapping[str, Sequence[str]], label=None,
                template_id: str = "editor", attribute: str | None = None,
                class_names: Sequence[str] | None = None, suite: str = "checklist") -> pd.DataFrame:
    """Examples (FORMATS.md columns) from ``Editor.template(..., meta=True)``.

    Parameters
    ----------
    ret : the Editor's output (``ret.data``, ``ret.meta``; ``ret.labels`` when
        given to the Editor). Several templates in one call (lists in
        ``ret.data``) become one template family each.
    attribute_key : the template key holding the identity term (``"{attr}"`` ->
        ``"attr"``); ``meta[attribute_key]`` is the term.
    groups : ``{group: [terms]}``; sentences whose term is in no group raise.
    label : a class name for every example, a callable ``(i, j) -> label``, or
        None to take ``ret.labels`` (integers mapped through ``class_names``).
    template_id : id of the template family; sentences that differ only in
        the identity term share one counterfactual ``template``
        (``"<suite>/<template_id>#<k>"``, k numbering the other fill-ins).
    attribute : attribute name (default ``attribute_key``).
    """
    data = ret["data"] if isinstance(ret, Mapping) else ret.data
    meta = (ret.get("meta") if isinstance(ret, Mapping) else getattr(ret, "meta", None))
    if meta is None:
        raise BiasSuiteError("the Editor output has no meta: call editor.template(..., meta=True)")
    if len(meta) != len(data):
        raise BiasSuiteError(f"ret.meta has {len(meta)} entries for {len(data)} data items")
    attribute = attribute or attribute_key
    group_of = _group_of(groups)
    lower = {t.lower(): g for t, g in group_of.items()}
    term_index = {g: {t: k for k, t in enumerate(ts)} for g, ts in groups.items()}
    fills: dict = {}
    rows = []
    nested = bool(data) and isinstance(data[0], (list, tuple))
    for i, (item, m) in enumerate(zip(data, meta)):
        if attribute_key not in m:
            raise BiasSuiteError(f"meta of item {i} has no key {attribute_key!r} (keys: {sorted(m)})")
        term = str(m[attribute_key])
        g = group_of.get(term, lower.get(term.lower()))
        if g is None:
            raise BiasSuiteError(f"item {i}: term {term!r} is in no group of {sorted(groups)}")
        t_idx = term_index[g].get(term)
        if t_idx is None:
            t_idx = next(k for k, t in enumerate(groups[g]) if t.lower() == term.lower())
        others = tuple(sorted((k, str(v)) for k, v in m.items() if k != attribute_key))
        k = fills.setdefault(others, len(fills))
        texts = list(item) if nested else [item]
        for j, text in enumerate(texts):
            fam = f"{template_id}/{j}" if nested else template_id
            rows.append({"fam": fam, "k": k, "attribute": attribute, "group": g, "term": term, "text": str(text),
                         "label": _label_of(label, class_names, ret, i, j if nested else None),
                         "suite": suite, "source_template": fam, "slot": attribute_key, "t_idx": t_idx})
    several = len(fills) > 1
    out = []
    for r in rows:
        unit = f"{suite}/{r['fam']}" + (f"#{r['k']}" if several else "")
        out.append({"id": f"{unit}/{r['attribute']}/{r['group']}/{r['t_idx']}", "template": unit, **{
            k: r[k] for k in ("attribute", "group", "term", "text", "label", "suite", "source_template", "slot")}})
    df = pd.DataFrame(out, columns=["id", "template", "attribute", "group", "term", "text", "label", "suite",
                                    "source_template", "slot"])
    dup = df["id"].duplicated()
    if dup.any():
        raise BiasSuiteError(f"duplicate example {df['id'][dup].iloc[0]!r}: the Editor output repeats a fill-in")
    return df


_KEY_RE = re.compile(r"\{(?:(?P<opt>[^:{}]+):)?(?P<key>[A-Za-z_][A-Za-z0-9_]*)\}")


def suite_from_templates(templates, *, attribute_key: str, groups: Mapping[str, Sequence[str]], classes: Sequence[str],
                         labels, lexicons: Mapping[str, Sequence[str]] | None = None, name: str = "checklist",
                         attribute: str | None = None, kind: str = "identity_adj", out_dir=None,
                         description: str = "Converted from CheckList templates",
                         sources: Sequence[str] = ("CheckList Editor fill-ins supplied by the user",),
                         template_ids: Sequence[str] | None = None):
    """A bias_suite suite (YAML files + loaded :class:`Suite`) from
    CheckList-style templates and lexicons.

    ``templates``: a template string, a list of them, or an Editor output made
    with ``save=True`` (its template strings and fill-ins are used). The
    identity key (``{attr}``/``{a:attr}``) becomes the slot ``{<kind>}``;
    other keys become the suite's lexicons (``lexicons``, else the Editor's
    fill-ins). ``labels``: one class name (or index into ``classes``) per
    template, or one for all. Writes ``<name>.yaml`` and
    ``identity_terms/<attribute>.yaml`` to ``out_dir`` (a new temporary
    folder when None) and returns the loaded Suite.
    """
    import yaml

    from ..suites.loader import load_suite

    lexicons = dict(lexicons or {})
    saved = templates.get("templates") if isinstance(templates, Mapping) and "data" in templates else None
    if saved is not None:
        params, items = saved[0]
        templates = params["templates"]
        for k, v in items.items():
            if k != attribute_key:
                lexicons.setdefault(re.sub(r"\d+$", "", k), list(v) if isinstance(v, (list, tuple)) else [v])
    elif isinstance(templates, Mapping):
        raise BiasSuiteError("an Editor output needs save=True to carry its templates; or pass the template strings")
    tpl_list = [templates] if isinstance(templates, str) else list(templates)
    if not tpl_list or not all(isinstance(t, str) for t in tpl_list):
        raise BiasSuiteError("templates must be strings")
    attribute = attribute or attribute_key
    lab = list(labels) if isinstance(labels, (list, tuple)) else [labels] * len(tpl_list)
    if len(lab) != len(tpl_list):
        raise BiasSuiteError(f"{len(lab)} labels for {len(tpl_list)} templates")
    lab = [classes[int(v)] if isinstance(v, (int, np.integer)) else str(v) for v in lab]
    converted, used = [], set()
    for t in tpl_list:
        def sub(m):
            key, opt = m.group("key"), m.group("opt")
            if key == attribute_key:
                return "{" + (f"{opt}:" if opt else "") + kind + "}"
            if key == "mask":
                raise BiasSuiteError("{mask} (masked-language-model fill-ins) cannot be converted")
            used.add(re.sub(r"\d+$", "", key))
            return m.group(0)
        converted.append(_KEY_RE.sub(sub, t))
    missing = sorted(k for k in used if k not in lexicons)
    if missing:
        raise BiasSuiteError(f"no fill-ins for {missing}: pass lexicons={{...}} (or an Editor output made with save=True)")
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="bias_suite_checklist_"))
    (out / "identity_terms").mkdir(parents=True, exist_ok=True)
    ident = {"attribute": attribute, "description": f"{attribute} (from CheckList)", "sources": list(sources),
             "groups": {g: {kind: list(ts)} for g, ts in groups.items()}}
    from ..report.files import atomic_write_text

    atomic_write_text(out / "identity_terms" / f"{attribute}.yaml", yaml.safe_dump(ident, sort_keys=False, allow_unicode=True))
    ids = list(template_ids) if template_ids else [f"t{i:03d}" for i in range(len(converted))]
    doc = {"suite": name, "task": "classification", "description": description, "classes": list(classes),
           "identity_terms": [f"identity_terms/{attribute}.yaml"],
           "lexicons": {k: [str(x) for x in lexicons[k]] for k in sorted(used)},
           "templates": [{"id": i, "text": t, "label": l} for i, t, l in zip(ids, converted, lab)]}
    path = out / f"{name}.yaml"
    atomic_write_text(path, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return load_suite(path)


# =========================================================================
# persistence: JSON by default, dill only on explicit opt-in
# =========================================================================
def _flat_results(t) -> dict | None:
    if not t._results_exist():
        return None
    idxs = list(range(len(t.data))) if t.run_idxs is None else [int(i) for i in t.run_idxs]
    preds, confs = [], []
    for d in idxs:
        for k in range(len(t.data[d])):
            preds.append(_py(t.results.preds[d][k]))
            confs.append(_py(t.results.confs[d][k]))
    return {"run_idxs": None if t.run_idxs is None else idxs, "preds": preds, "confs": confs}


def testsuite_to_dict(suite: TestSuite) -> dict:
    """A JSON-able description of a TestSuite made of bias_suite-built tests
    (INV from :func:`invariance_tests`, :class:`MetricTest`,
    :class:`SignificanceTest`), with their results when run. Other tests carry
    code (expectation functions) that JSON cannot hold: they raise."""
    tests = []
    for name, t in suite.tests.items():
        base = {"name": name, "capability": suite.info[name]["capability"], "description": t.description,
                "data": t.data, "meta": t.meta, "results": _flat_results(t)}
        if isinstance(t, INV) and getattr(t, "bias_suite", None):
            tests.append({"type": "INV", "bias_suite": t.bias_suite, **base})
        elif isinstance(t, MetricTest):
            if callable(t.bound):
                raise BiasSuiteError(f"test {name!r}: a callable bound cannot be saved as JSON")
            from ..metrics.catalog import REGISTRY

            if REGISTRY.get(t.metric.name) is not t.metric:
                raise BiasSuiteError(f"test {name!r}: metric {t.metric.name!r} is not registered; register it to save")
            tests.append({"type": "METRIC", "metric": t.metric.name, "threshold": t.threshold, "bound": t.bound,
                          "max_tuples": t.max_tuples, "seed": t.seed, "class_names": t.class_names,
                          "group_order": t.group_order, **base})
        elif isinstance(t, SignificanceTest):
            tests.append({"type": "SIG", "alpha": t.alpha, "adjust": t.adjust, "class_names": t.class_names,
                          "group_order": t.group_order, **base})
        else:
            raise BiasSuiteError(
                f"test {name!r} ({type(t).__name__}) is not a bias_suite-built test: its expectation is code, which "
                "JSON cannot hold; save with allow_dill=True (pickle: loading runs code from the file)"
            )
    return {"format": "bias_suite-checklist-testsuite/1", "tests": tests}


def _restore_results(t, res):
    if not res:
        return
    idxs = res["run_idxs"] if res["run_idxs"] is not None else list(range(len(t.data)))
    t.run_idxs = None if res["run_idxs"] is None else np.asarray(idxs)
    t.result_indexes = [i for i in idxs for _ in t.data[i]]
    confs = [np.asarray(c, dtype=float) if isinstance(c, list) else c for c in res["confs"]]
    t.run_from_preds_confs(res["preds"], confs, overwrite=True)


def testsuite_from_dict(d: Mapping) -> BiasTestSuite:
    """Rebuild a TestSuite saved by :func:`testsuite_to_dict` (real CheckList
    INV objects, bias_suite metric/significance tests, results restored)."""
    suite = BiasTestSuite()
    for spec in d.get("tests", []):
        kind = spec["type"]
        if kind == "INV":
            info = spec["bias_suite"]
            t = _make_inv(info["attribute"], info["groups"], spec["data"], spec["meta"], threshold=info["threshold"],
                          criterion=info["criterion"], mode=info["mode"], seed=info["seed"], task=info["task"],
                          class_names=info.get("class_names"), name=spec["name"], capability=spec["capability"],
                          description=spec.get("description"), dropped=info.get("dropped_templates", 0))
        else:
            ex = pd.DataFrame([{**m, "text": x} for case, metas in zip(spec["data"], spec["meta"]) for x, m in zip(case, metas)])
            if kind == "METRIC":
                t = MetricTest(spec["metric"], ex, threshold=spec["threshold"], bound=spec["bound"],
                               class_names=spec.get("class_names"), max_tuples=spec.get("max_tuples"),
                               seed=spec.get("seed", 0), name=spec["name"], capability=spec["capability"],
                               description=spec.get("description"), group_order_override=spec.get("group_order"))
            elif kind == "SIG":
                t = SignificanceTest(ex, alpha=spec["alpha"], adjust=spec.get("adjust"), class_names=spec.get("class_names"),
                                     name=spec["name"], capability=spec["capability"], description=spec.get("description"),
                                     group_order_override=spec.get("group_order"))
            else:
                raise BiasSuiteError(f"unknown test type {kind!r}")
        suite.add(t, name=spec["name"])
        _restore_results(t, spec.get("results"))
    return suite


def _is_json(path: Path) -> bool:
    try:
        head = path.read_bytes()[:1]
    except FileNotFoundError:
        raise BiasSuiteError(f"{path}: no such file") from None
    return head in (b"{", b"[")


def save_testsuite(suite: TestSuite, path, *, allow_dill: bool = False) -> Path:
    """Save a TestSuite. Default: JSON (:func:`testsuite_to_dict`), for suites
    of bias_suite-built tests. ``allow_dill=True`` uses CheckList's own
    ``TestSuite.save`` (dill, i.e. pickle) and warns: a dill file runs code
    when loaded, so only load files you made yourself."""
    from ..report.files import atomic_write_text

    path = Path(path)
    if allow_dill:
        warnings.warn(f"saving {path} with dill (CheckList's TestSuite.save): loading it executes code from the file",
                      DillWarning, stacklevel=2)
        suite.save(str(path))
        return path
    return atomic_write_text(path, json.dumps(testsuite_to_dict(suite), default=_py) + "\n")


def load_testsuite(path, *, allow_dill: bool = False) -> TestSuite:
    """Load a TestSuite saved by :func:`save_testsuite`. JSON files are read
    safely; dill files (CheckList's ``TestSuite.save``) only with
    ``allow_dill=True``, with a :class:`DillWarning`: unpickling executes
    code from the file."""
    path = Path(path)
    if _is_json(path):
        return testsuite_from_dict(json.loads(path.read_text(encoding="utf-8")))
    if not allow_dill:
        raise BiasSuiteError(
            f"{path} is not JSON: it looks like a dill/pickle TestSuite (CheckList's TestSuite.save). Loading it executes "
            "code from the file; pass allow_dill=True only for files you trust"
        )
    warnings.warn(f"loading {path} with dill: this executes code from the file", DillWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return load_test(str(path))
