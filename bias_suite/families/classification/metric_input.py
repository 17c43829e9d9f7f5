"""What the metric engine and the significance tests take from
classification data: one item per example (its class probabilities), the
per-example counts of each class one-vs-rest, and template x group tables of
mean probabilities."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ...suites.views import block_tables


def classification_counts(y: np.ndarray, yhat: np.ndarray):
    """Per-example counts for class c (one-vs-rest): tp, fp, fn, tn on
    labelled rows, pp (predicted c, any row), n, lab, correct."""
    lab = y >= 0
    correct = (lab & (yhat == y)).astype(np.int64)
    ones = np.ones(len(y), dtype=np.int64)
    lab_i = lab.astype(np.int64)

    def counts(c):
        pos = y == c
        neg = lab & ~pos
        ph = yhat == c
        return {
            "tp": (ph & pos).astype(np.int64),
            "fp": (ph & neg).astype(np.int64),
            "fn": (~ph & pos).astype(np.int64),
            "tn": (~ph & neg).astype(np.int64),
            "pp": ph.astype(np.int64),
            "n": ones,
            "lab": lab_i,
            "correct": correct,
        }

    return counts


def metric_input(data, attribute: str, cf, groups: list, probabilities: bool = True) -> dict:
    """Arrays of one attribute (attribute-local positions); every example is
    one probability item, so ``probabilities`` changes nothing."""
    fr = data.frame
    rows = np.flatnonzero(fr["attribute"].to_numpy(dtype=object) == attribute)
    local = np.full(len(fr), -1, dtype=np.int64)
    local[rows] = np.arange(len(rows))
    code = {g: i for i, g in enumerate(groups)}
    g = fr["group"].to_numpy(dtype=object)[rows]
    g = np.fromiter((code[x] for x in g), dtype=np.int64, count=len(g)) if len(g) else np.zeros(0, np.int64)
    y = data.y[rows]
    yhat = data.yhat[rows]
    row_template = np.full(len(rows), -1, dtype=np.int64)
    for j, t in enumerate(cf.templates):
        for members in cf.members[t]:
            row_template[local[members]] = j
    return dict(
        attribute=attribute, groups=list(groups), classes=tuple(data.classes), g=g, y=y, yhat=yhat,
        counts=classification_counts(y, yhat), item_row=np.arange(len(rows)), item_P=data.probs[rows], item_y=y,
        tuples=local[cf.tuples] if len(cf.tuples) else np.zeros((0, len(groups)), dtype=np.int64),
        tuple_template=cf.tuple_template, templates=list(cf.templates), row_template=row_template,
    )


def block_scores(data, attribute: str, groups: Sequence[str] | None = None, complete_only: bool = True) -> dict:
    """Block scores of the significance tests: per class, the mean f(x, c)
    over a group's terms in each template (``groups``: column order, default
    first appearance)."""
    m = (data.frame["attribute"] == attribute).to_numpy()
    sub = data.frame[m]
    if groups is None:
        groups = list(pd.unique(sub["group"]))
    return block_tables(sub, list(data.classes), data.probs[m], groups, complete_only)
