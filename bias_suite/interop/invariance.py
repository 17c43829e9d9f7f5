"""Invariance (INV) tests from bias_suite examples: inputs, expectations
(CheckList ``Expect`` objects) and the INV tests themselves. The INV
semantics are described in :mod:`bias_suite.interop.checklist`.
"""
from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from munch import Munch

with warnings.catch_warnings():  # checklist's dependencies warn about pkg_resources / IPython
    warnings.simplefilter("ignore")
    from checklist.expect import Expect
    from checklist.test_types import INV

from ..exceptions import BiasSuiteError

INV_METRIC = "INV-FailRate"  # CheckList's rule (Expect.inv) and the tags rule of sequence labelling
PROB_METRIC = "INV-ProbShift-FailRate"  # bias_suite's probability-shift rule (criterion="prob")
FAMILY = "invariance"
VIEW = "counterfactual"
CAPABILITY = "Fairness"
MODES = ("per_group", "all_terms")
CRITERIA = ("prob", "checklist", "tags")
_META_KEYS = ("id", "template", "attribute", "group", "term", "label", "suite", "source_template")


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


def to_builtin(v):
    """JSON-friendly Python value (numpy scalars/arrays, NaN -> None)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, np.ndarray):
        return [to_builtin(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [to_builtin(x) for x in v]
    if isinstance(v, dict):
        return {str(k): to_builtin(x) for k, x in v.items()}
    if v is pd.NA:
        return None
    return v


def run_indices(test) -> list:
    """The indices of the test cases a CheckList test ran (all, or its sample)."""
    return list(range(len(test.data))) if test.run_idxs is None else [int(i) for i in test.run_idxs]


def present_order(order: Mapping | None, table: pd.DataFrame) -> dict:
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
            raise BiasSuiteError(f"examples need a {col!r} column (docs/formats.md); columns present: {list(df.columns)}")
    if "tokens" in df.columns and "probs" not in df.columns:
        return _Source(df.reset_index(drop=True), "sequence_labelling")
    if "probs" in df.columns:
        from ..families import check_scored

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
    from ..families import expand_suites  # each suite by its family (NER: tokens, tags, term_span)

    table = expand_suites(suites)
    order = {a: list(t.groups) for s in suites for a, t in s.identity.items()}
    classes = list(suites[0].classes) if all(list(s.classes) == list(suites[0].classes) for s in suites) else None
    src = _from_frame(table) if task != "classification" else _Source(table, "classification")
    src.classes = classes or None
    src.group_order = present_order(order, table)
    return src


def failure_source(x, attributes=None) -> _Source:
    """Normalise any accepted input into a :class:`_Source`."""
    from ..families import ScoredData, read_table
    from ..families import load_suite
    from ..suites.loader import Suite, find_suite

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


def group_orders_of(src: _Source, override) -> dict:
    order = dict(src.group_order or {})
    order.update(present_order(override, src.table) if override else {})
    return order


# =========================================================================
# expectations (CheckList Expect objects)


# =========================================================================
def is_prob(c) -> bool:
    return isinstance(c, np.ndarray) and c.ndim == 1 and c.size > 0


def _same_pred(p0, p1) -> bool:
    try:
        return bool(p0 == p1)
    except ValueError:
        return bool(np.all(p0 == p1))


def max_change(p0, p1, c0, c1) -> float:
    """max_c |c1[c] - c0[c]|; without probabilities a changed prediction counts 1."""
    if is_prob(c0) and is_prob(c1) and c0.shape == c1.shape:
        return float(np.max(np.abs(np.asarray(c1, float) - np.asarray(c0, float))))
    return 0.0 if _same_pred(p0, p1) else 1.0


def checklist_change(p0, p1, c0, c1) -> float:
    """The change CheckList's ``Expect.inv`` thresholds (0 when the prediction is unchanged)."""
    if _same_pred(p0, p1):
        return 0.0
    if is_prob(c0) and is_prob(c1):
        return float(abs(c1[p0] - c0[p0]))
    return float(c0 + c1)


def prob_invariance(threshold: float = 0.1):
    """CheckList expectation (``Expect.pairwise``): every sentence's class
    probabilities within ``threshold`` of the case's first sentence; a failure
    scores ``-max_c |Δp|``."""
    threshold = float(threshold)

    def expect(orig_pred, pred, orig_conf, conf, labels=None, meta=None):
        d = max_change(orig_pred, pred, orig_conf, conf)
        return True if d <= threshold else -d

    return Expect.pairwise(expect)


def split_tags(pred) -> list:
    if isinstance(pred, str):
        return pred.split(" ") if pred else []
    return [str(t) for t in pred]


def outside_span(pred, meta) -> tuple:
    tags = split_tags(pred)
    s, e = (meta or {}).get("term_span") or (0, 0)
    return tags[: int(s)], tags[int(e):]


def tag_diff(a: tuple, b: tuple) -> int:
    n = 0
    for x, y in zip(a, b):
        n += sum(1 for u, v in zip(x, y) if u != v) + abs(len(x) - len(y))
    return n


def tag_invariance():
    """CheckList expectation (``Expect.testcase``) for sequence labelling:
    predicted tags outside the identity-term span (``meta["term_span"]``)
    equal to the first sentence's; a failure scores ``-(tags changed)``."""

    def expect(xs, preds, confs, labels=None, meta=None):
        base = outside_span(preds[0], meta[0])
        out = []
        for p, m in zip(preds, meta):
            d = tag_diff(base, outside_span(p, m))
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


def pair_differs(criterion, threshold, x, y) -> bool:
    """x, y: (pred, conf, meta) of two sentences of one case (symmetric test)."""
    if criterion == "tags":
        return tag_diff(outside_span(x[0], x[2]), outside_span(y[0], y[2])) > 0
    if criterion == "checklist":
        return max(checklist_change(x[0], y[0], x[1], y[1]), checklist_change(y[0], x[0], y[1], x[1])) > threshold
    return max_change(x[0], y[0], x[1], y[1]) > threshold


# =========================================================================
# building INV tests


# =========================================================================
def case_meta(row: Mapping, task: str) -> dict:
    m = {k: to_builtin(row[k]) for k in _META_KEYS if k in row}
    if task == "sequence_labelling":
        m["term_span"] = to_builtin(row["term_span"])
        if "tags" in row and row["tags"] is not None:
            m["tags"] = to_builtin(row["tags"])
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


def make_inv(attribute, groups, data, meta, *, threshold, criterion, mode, seed, task, class_names, name=None,
              capability=CAPABILITY, description=None, dropped=0) -> INV:
    inv = INV(
        data, expect=_expectation(criterion, threshold), threshold=threshold, meta=meta,
        name=name or f"INV {attribute}", capability=capability,
        description=description or _describe(attribute, groups, threshold, criterion, mode),
    )
    inv.bias_suite = Munch(  # a Munch, as CheckList keeps a test's results: inv.bias_suite.attribute reads too
        kind="invariance", attribute=attribute, groups=list(groups), threshold=float(threshold),
        criterion=criterion, mode=mode, seed=int(seed), task=task,
        class_names=list(class_names) if class_names else None, dropped_templates=int(dropped),
    )
    return inv


def build_inv_test(src: _Source, *, threshold, mode, seed, criterion, group_order_override, class_names, capability):
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
    cfs = counterfactual_view(table, max_tuples=1, seed=seed, group_order_override=group_orders_of(src, group_order_override) or None)
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
        meta = [[case_meta(records[i], src.task) for i in case] for case in cases]
        tests.append(make_inv(a, cv.groups, data, meta, threshold=threshold, criterion=criterion, mode=mode, seed=seed,
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
    src = failure_source(examples_or_suite, attributes)
    tests, _ = build_inv_test(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                      group_order_override=group_order_override, class_names=class_names, capability=capability)
    return tests
