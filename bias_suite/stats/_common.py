"""Shared helpers of bias_suite.stats: reading a scored-examples frame
(FORMATS.md) and building tidy result rows.

Private module: the public entry points are in ``significance`` and
``bernstein``.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from bias_suite.exceptions import MetricError, ScoredFormatError

#: Columns of the tidy results table (FORMATS.md), in this order.
RESULT_COLUMNS = [
    "metric", "family", "view", "attribute", "class", "group",
    "value", "ci_low", "ci_high", "n", "note",
]

REQUIRED_COLUMNS = ("template", "attribute", "group", "probs")


def empty_results() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in RESULT_COLUMNS})


def as_float_or_none(x) -> float | None:
    """A finite number as a Python float, anything else (None, NaN, inf) as None."""
    if x is None:
        return None
    x = float(x)
    return x if np.isfinite(x) else None


def make_row(metric, family, view, attribute, cls, group, value,
             ci_low=None, ci_high=None, n=None, note=None) -> dict:
    value = as_float_or_none(value)
    if value is None and note is None:
        note = "undefined"
    return {
        "metric": metric, "family": family, "view": view,
        "attribute": attribute, "class": cls, "group": group,
        "value": value,
        "ci_low": as_float_or_none(ci_low), "ci_high": as_float_or_none(ci_high),
        "n": None if n is None or pd.isna(n) else int(n),
        "note": note,
    }


def rows_to_frame(rows: Sequence[dict]) -> pd.DataFrame:
    if not rows:
        return empty_results()
    df = pd.DataFrame(list(rows), columns=RESULT_COLUMNS)
    # keep None (not NaN) for missing values; n as nullable integer
    df = df.astype(object).where(pd.notna(df), None)
    df["n"] = pd.array(df["n"].tolist(), dtype="Int64")
    return df


def check_scored(scored: pd.DataFrame, needed: Iterable[str] = REQUIRED_COLUMNS) -> None:
    if not isinstance(scored, pd.DataFrame):
        raise MetricError(
            f"scored examples must be a pandas DataFrame, got {type(scored).__name__}")
    missing = [c for c in needed if c not in scored.columns]
    if missing:
        raise ScoredFormatError(
            f"missing column(s) {missing}; columns present: {list(scored.columns)}",
            field=missing[0])


def class_order(scored: pd.DataFrame) -> list[str]:
    """Class names = the keys of ``probs`` in the first row."""
    first = scored["probs"].iloc[0]
    if not isinstance(first, dict) or not first:
        raise ScoredFormatError(
            f"'probs' must be a non-empty object class -> probability, got {first!r}",
            row=1, field="probs")
    return [str(k) for k in first.keys()]


def prob_matrix(scored: pd.DataFrame, classes: Sequence[str]) -> np.ndarray:
    """(n_rows, n_classes) float array of f(x, c), columns in ``classes`` order."""
    want = set(classes)
    out = np.empty((len(scored), len(classes)), dtype=float)
    for i, p in enumerate(scored["probs"].tolist()):
        if not isinstance(p, dict) or set(map(str, p.keys())) != want:
            got = sorted(map(str, p.keys())) if isinstance(p, dict) else repr(p)
            raise ScoredFormatError(
                f"'probs' must have the classes {list(classes)} on every row, got {got}",
                row=i + 1, field="probs")
        q = {str(k): v for k, v in p.items()}
        out[i] = [q[c] for c in classes]
    return out


def predictions(scored: pd.DataFrame, classes: Sequence[str],
                probs: np.ndarray | None = None) -> np.ndarray:
    """Predicted class per row (object array of class names): a given ``pred``
    overrides the argmax of ``probs``; argmax ties go to the first class."""
    if probs is None:
        probs = prob_matrix(scored, classes)
    cls = np.asarray(list(classes), dtype=object)
    pred = cls[np.argmax(probs, axis=1)] if len(probs) else np.empty(0, dtype=object)
    if "pred" in scored.columns:
        given = scored["pred"].to_numpy(dtype=object)
        has = pd.notna(given)
        pred = np.where(has, given, pred)
        bad = has & ~np.isin(pred.astype(str), list(classes))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ScoredFormatError(
                f"'pred' must be one of the classes {list(classes)}, got {given[i]!r}",
                row=i + 1, field="pred")
        pred = pred.astype(str).astype(object)
    return pred


def select_attributes(scored: pd.DataFrame, attributes) -> list:
    present = list(pd.unique(scored["attribute"]))
    if attributes is None:
        return present
    if isinstance(attributes, str):
        attributes = [attributes]
    unknown = [a for a in attributes if a not in present]
    if unknown:
        raise MetricError(f"unknown attribute(s) {unknown}; present: {present}")
    return list(attributes)


def group_order(groups: pd.Series | np.ndarray) -> list:
    """Groups in order of first appearance."""
    return list(pd.unique(pd.Series(groups)))
