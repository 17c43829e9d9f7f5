"""Scored examples: the table that joins generated examples with a model's
outputs (``docs/formats.md``), read, validated and written in one place.

Validation happens once, in :func:`check_scored`; every later stage handles
one shape only: a :class:`ScoredData` with the probabilities as an
``n x C`` float array and the labels/predictions as class indices.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ...exceptions import ScoredFormatError, did_you_mean
from ...io.values import is_null
from ..checks import PROB_TOLERANCE, check_string_columns, first_bad, is_number, row_number, show_value, where_text
from .columnar import read_columns

REQUIRED_COLUMNS = ("id", "template", "attribute", "group", "term", "probs")


@dataclass(frozen=True)
class ScoredData:
    """Validated classification scores, columnar.

    Attributes
    ----------
    frame : DataFrame
        One row per example with ``id, template, attribute, group, term``,
        ``label`` (str or None) and ``pred`` (str), in input order.
    probs : ndarray of shape (n, C)
        ``probs[i, c]`` is f(x_i, c).
    classes : tuple of str
        Class names, in the order of the first row's ``probs`` keys.
    y : ndarray of int, shape (n,)
        Gold class index, -1 where the label is null.
    yhat : ndarray of int, shape (n,)
        Predicted class index (given ``pred``, else argmax, ties to the
        first class).
    """

    frame: pd.DataFrame
    probs: np.ndarray
    classes: tuple
    y: np.ndarray
    yhat: np.ndarray
    source: str | None = None
    task: str = field(default="classification")

    def __len__(self) -> int:
        return len(self.frame)

    def attributes(self) -> list[str]:
        """Attributes in order of first appearance."""
        return list(pd.unique(self.frame["attribute"]))

    def take(self, rows, *, templates=None) -> "ScoredData":
        """The examples ``rows`` (an int array; repeats allowed), in that
        order, optionally with new ``template`` labels."""
        import dataclasses

        rows = np.asarray(rows, dtype=np.int64)
        frame = self.frame.iloc[rows].reset_index(drop=True)
        if templates is not None:
            frame["template"] = np.asarray(templates, dtype=object)
        return dataclasses.replace(self, frame=frame, probs=self.probs[rows], y=self.y[rows], yhat=self.yhat[rows])

    def to_frame(self) -> pd.DataFrame:
        """Back to the interchange layout (``probs`` as dicts)."""
        out = self.frame.copy()
        out["probs"] = [dict(zip(self.classes, map(float, row))) for row in self.probs]
        return out


def check_scored(df: pd.DataFrame, *, source: str | None = None) -> ScoredData:
    """Validate a classification scored-examples table and make it columnar.

    Checks, each failing with one :class:`ScoredFormatError` naming the
    file, the row and the field: required columns present; ``id`` unique and
    non-empty; ``template``, ``attribute``, ``group`` non-empty strings;
    ``probs`` an object with the same class names on every row, finite
    values in [0, 1] summing to 1 within 1e-3; ``label`` null or one of the
    classes; ``pred`` (optional) one of the classes.
    """
    if not isinstance(df, pd.DataFrame):
        raise ScoredFormatError(f"expected a pandas DataFrame, got {type(df).__name__}", file=source)
    if len(df) == 0:
        raise ScoredFormatError("no rows", file=source)
    for col in REQUIRED_COLUMNS:
        if col not in df.columns:
            hint = " (sequence-labelling files have 'tokens'/'tags' instead)" if col == "probs" else ""
            raise ScoredFormatError(f"missing column{hint}", file=source, row=row_number(df, 0), field=col)

    check_string_columns(df, ("id", "template", "attribute", "group", "term"), source)
    check_string_columns(df, ("text",), source, nullable=True, nonempty=False)
    dup = df["id"].duplicated().to_numpy()
    i = first_bad(dup)
    if i is not None:
        raise ScoredFormatError(f"duplicate id {show_value(df['id'].iat[i])}", **where_text(source, row_number(df, i)), field="id")

    probs_col = df["probs"]
    first = probs_col.iat[0]
    if not isinstance(first, dict) or not first:
        raise ScoredFormatError(
            f"expected an object class -> probability, got {show_value(first)}", **where_text(source, row_number(df, 0)), field="probs"
        )
    bad_key = next((k for k in first if not isinstance(k, str) or k == ""), None)
    if bad_key is not None:
        raise ScoredFormatError(f"class names must be non-empty strings, got {show_value(bad_key)}",
                                **where_text(source, row_number(df, 0)), field="probs")
    classes = tuple(first.keys())
    kset = set(classes)
    # Same class set on every row (checked on the key tuples, cheap).
    keys = probs_col.map(lambda d: tuple(d.keys()) if isinstance(d, dict) else None)
    same = keys.map(lambda k: k is not None and (k == classes or set(k) == kset)).to_numpy()
    i = first_bad(~same)
    if i is not None:
        got = probs_col.iat[i]
        got_keys = list(got.keys()) if isinstance(got, dict) else got
        raise ScoredFormatError(
            f"mixed class sets: expected classes {show_value(list(classes), 120)} (from the first row), got {show_value(got_keys, 120)}",
            **where_text(source, row_number(df, i)),
            field="probs",
        )
    values = [[d[c] for c in classes] for d in probs_col]
    for i, row in enumerate(values):
        for c, v in zip(classes, row):
            if not is_number(v):
                raise ScoredFormatError(f"probability of class {show_value(c)} is not a number: {type(v).__name__} {show_value(v)}",
                                        **where_text(source, row_number(df, i)), field="probs")
    try:
        P = np.array(values, dtype=np.float64)
    except OverflowError:  # an integer too large for a float
        i = next(i for i, row in enumerate(values) if any(abs(v) > 1e308 for v in row))
        raise ScoredFormatError(f"probabilities must be finite numbers in [0, 1], got {show_value(probs_col.iat[i])}",
                                **where_text(source, row_number(df, i)), field="probs") from None
    return _finish(df, P, classes, source)


def _finish(df: pd.DataFrame, P: np.ndarray, classes: tuple, source, coded=None) -> ScoredData:
    """Check ``P`` and code the labels/predictions; ``coded`` (labels as an
    object array, their class indices, the given predictions' indices or -1)
    comes from the columnar reader, which has checked them already."""
    bad = ~np.isfinite(P).all(axis=1) | (P < -1e-9).any(axis=1) | (P > 1 + 1e-9).any(axis=1)
    i = first_bad(bad)
    if i is not None:
        raise ScoredFormatError(
            f"probabilities must be finite numbers in [0, 1], got {dict(zip(classes, P[i].tolist()))}",
            **where_text(source, row_number(df, i)),
            field="probs",
        )
    sums = P.sum(axis=1)
    i = first_bad(np.abs(sums - 1.0) > PROB_TOLERANCE)
    if i is not None:
        raise ScoredFormatError(
            f"probabilities sum to {sums[i]:.6g}, not 1 (tolerance {PROB_TOLERANCE})",
            **where_text(source, row_number(df, i)),
            field="probs",
        )
    if coded is not None:
        labels, y = pd.Series(coded[0], index=df.index, dtype=object), coded[1]
    else:
        labels, y = _class_column(df, "label", classes, source)
    yhat = P.argmax(axis=1).astype(np.int64)  # argmax keeps the first of tied maxima
    if coded is not None or "pred" in df.columns:
        given = coded[2] if coded is not None else _class_column(df, "pred", classes, source)[1]
        yhat = np.where(given >= 0, given, yhat)
    keep = [c for c in ("id", "template", "attribute", "group", "term", "text") if c in df.columns]
    frame = df[keep].reset_index(drop=True).copy()
    if coded is None and "text" in frame.columns:  # one null: None (a row without text gave NaN)
        frame["text"] = [None if is_null(v) else v for v in frame["text"].to_numpy(dtype=object)]
    frame["label"] = labels.reset_index(drop=True)
    frame["pred"] = np.asarray(classes, dtype=object)[yhat]
    return ScoredData(frame=frame, probs=P, classes=classes, y=y, yhat=yhat, source=source)


def _class_column(df: pd.DataFrame, col: str, classes: tuple, source):
    """``(values, class indices)`` of a ``label``/``pred`` column: a class
    name or null (index -1; all -1 when the column is absent); anything else
    is one error naming the row."""
    n = len(df)
    if col not in df.columns:
        return pd.Series([None] * n, index=df.index, dtype=object), np.full(n, -1, dtype=np.int64)
    index = {c: k for k, c in enumerate(classes)}
    vals = pd.Series([None if is_null(v) else v for v in df[col].to_numpy(dtype=object)], index=df.index, dtype=object)
    idx = vals.map(lambda v: -1 if v is None else (index.get(v, -2) if isinstance(v, str) else -3)).to_numpy(dtype=np.int64)
    i = first_bad(idx == -3)
    if i is not None:
        raise ScoredFormatError(f"expected a class name (a string) or null, got {type(vals.iat[i]).__name__} "
                                f"{show_value(vals.iat[i])}", **where_text(source, row_number(df, i)), field=col)
    i = first_bad(idx == -2)
    if i is not None:
        raise ScoredFormatError(f"unknown class {show_value(vals.iat[i])}; classes are {show_value(list(classes), 120)}"
                                f"{did_you_mean(vals.iat[i], classes)}",
                                **where_text(source, row_number(df, i)), field=col)
    return vals, idx


def scored_from_arrays(
    frame: pd.DataFrame, probs: np.ndarray, classes: Sequence[str], *, source: str | None = None
) -> ScoredData:
    """Build :class:`ScoredData` from an examples table and an ``n x C``
    probability array (the model-runner path; no dict round trip)."""
    df = frame.reset_index(drop=True)
    for col in REQUIRED_COLUMNS[:-1]:
        if col not in df.columns:
            raise ScoredFormatError("missing column", file=source, field=col)
    P = np.asarray(probs, dtype=np.float64)
    if P.shape != (len(df), len(classes)):
        raise ScoredFormatError(f"probabilities have shape {P.shape}, expected {(len(df), len(classes))}", file=source)
    return _finish(df, P, tuple(classes), source)


def read_fast(path: Path, kind: str) -> ScoredData | None:
    """A classification file read as typed columns and checked whole
    (:mod:`.columnar`); None when it does not pass there (it is then read
    row by row, which names the file, row and field of its first problem)."""
    fast = read_columns(path, kind)
    if fast is None:
        return None
    columns, P, classes, y, given = fast
    labels = columns.pop("label")
    return _finish(pd.DataFrame(columns), P, classes, str(path), coded=(labels, y, given))
