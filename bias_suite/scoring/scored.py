"""Scored examples: the table that joins generated examples with a model's
outputs (``docs/formats.md``), read, validated and written in one place.

Validation happens once, in :func:`check_scored`; every later stage handles
one shape only: a :class:`ScoredData` with the probabilities as an
``n x C`` float array and the labels/predictions as class indices.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..exceptions import ScoredFormatError
from .columnar import read_columns

REQUIRED_COLUMNS = ("id", "template", "attribute", "group", "term", "probs")
SEQ_REQUIRED_COLUMNS = ("id", "template", "attribute", "group", "term", "tokens", "tags", "pred_tags")
PROB_TOLERANCE = 1e-3


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

    def to_frame(self) -> pd.DataFrame:
        """Back to the interchange layout (``probs`` as dicts)."""
        out = self.frame.copy()
        out["probs"] = [dict(zip(self.classes, map(float, row))) for row in self.probs]
        return out


def _where(source, row):
    return dict(file=source, row=row)


def _row_number(df: pd.DataFrame, i: int) -> int:
    """1-based line (JSONL) or row (Parquet/DataFrame) number of position i."""
    if "__line__" in df.columns:
        return int(df["__line__"].iat[i])
    return i + 1


def _first_bad(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None


def _is_null(v) -> bool:
    """None, a float NaN or pandas' NA (the null of a DataFrame column)."""
    return v is None or (isinstance(v, float) and v != v) or v is pd.NA


def _is_number(v) -> bool:
    """A JSON number: int or float (numpy's too), never a bool or a string."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _show(v, limit: int = 60) -> str:
    """``repr`` of a value cut to ``limit`` characters (a 400-digit number or a
    huge list stays readable in an error line)."""
    try:
        text = repr(v)
    except Exception:  # pragma: no cover - repr of exotic objects
        text = f"<{type(v).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_string_columns(df: pd.DataFrame, columns, source, *, nullable: bool = False, nonempty: bool = True) -> None:
    """Every value of ``columns`` (those present) is a string (non-empty
    unless ``nonempty=False``; null allowed when ``nullable``); else one
    :class:`ScoredFormatError` naming the first bad row."""
    for col in columns:
        if col not in df.columns:
            continue
        vals = df[col].to_numpy(dtype=object)
        ok = np.fromiter(((isinstance(v, str) and (v != "" or not nonempty)) or (nullable and _is_null(v))
                          for v in vals), dtype=bool, count=len(vals))
        i = _first_bad(~ok)
        if i is not None:
            v = vals[i]
            what = "a string or null" if nullable else ("a non-empty string" if nonempty else "a string")
            got = "missing or null" if _is_null(v) else f"got {type(v).__name__} {_show(v)}"
            raise ScoredFormatError(f"expected {what}, {got}", **_where(source, _row_number(df, i)), field=col)


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
            raise ScoredFormatError(f"missing column{hint}", file=source, row=_row_number(df, 0), field=col)

    check_string_columns(df, ("id", "template", "attribute", "group", "term"), source)
    check_string_columns(df, ("text",), source, nullable=True, nonempty=False)
    dup = df["id"].duplicated().to_numpy()
    i = _first_bad(dup)
    if i is not None:
        raise ScoredFormatError(f"duplicate id {_show(df['id'].iat[i])}", **_where(source, _row_number(df, i)), field="id")

    probs_col = df["probs"]
    first = probs_col.iat[0]
    if not isinstance(first, dict) or not first:
        raise ScoredFormatError(
            f"expected an object class -> probability, got {_show(first)}", **_where(source, _row_number(df, 0)), field="probs"
        )
    bad_key = next((k for k in first if not isinstance(k, str) or k == ""), None)
    if bad_key is not None:
        raise ScoredFormatError(f"class names must be non-empty strings, got {_show(bad_key)}",
                                **_where(source, _row_number(df, 0)), field="probs")
    classes = tuple(first.keys())
    kset = set(classes)
    # Same class set on every row (checked on the key tuples, cheap).
    keys = probs_col.map(lambda d: tuple(d.keys()) if isinstance(d, dict) else None)
    same = keys.map(lambda k: k is not None and (k == classes or set(k) == kset)).to_numpy()
    i = _first_bad(~same)
    if i is not None:
        got = probs_col.iat[i]
        got_keys = list(got.keys()) if isinstance(got, dict) else got
        raise ScoredFormatError(
            f"mixed class sets: expected classes {_show(list(classes), 120)} (from the first row), got {_show(got_keys, 120)}",
            **_where(source, _row_number(df, i)),
            field="probs",
        )
    values = [[d[c] for c in classes] for d in probs_col]
    for i, row in enumerate(values):
        for c, v in zip(classes, row):
            if not _is_number(v):
                raise ScoredFormatError(f"probability of class {_show(c)} is not a number: {type(v).__name__} {_show(v)}",
                                        **_where(source, _row_number(df, i)), field="probs")
    try:
        P = np.array(values, dtype=np.float64)
    except OverflowError:  # an integer too large for a float
        i = next(i for i, row in enumerate(values) if any(abs(v) > 1e308 for v in row))
        raise ScoredFormatError(f"probabilities must be finite numbers in [0, 1], got {_show(probs_col.iat[i])}",
                                **_where(source, _row_number(df, i)), field="probs") from None
    return _finish(df, P, classes, source)


def _finish(df: pd.DataFrame, P: np.ndarray, classes: tuple, source, coded=None) -> ScoredData:
    """Check ``P`` and code the labels/predictions; ``coded`` (labels as an
    object array, their class indices, the given predictions' indices or -1)
    comes from the columnar reader, which has checked them already."""
    bad = ~np.isfinite(P).all(axis=1) | (P < -1e-9).any(axis=1) | (P > 1 + 1e-9).any(axis=1)
    i = _first_bad(bad)
    if i is not None:
        raise ScoredFormatError(
            f"probabilities must be finite numbers in [0, 1], got {dict(zip(classes, P[i].tolist()))}",
            **_where(source, _row_number(df, i)),
            field="probs",
        )
    sums = P.sum(axis=1)
    i = _first_bad(np.abs(sums - 1.0) > PROB_TOLERANCE)
    if i is not None:
        raise ScoredFormatError(
            f"probabilities sum to {sums[i]:.6g}, not 1 (tolerance {PROB_TOLERANCE})",
            **_where(source, _row_number(df, i)),
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
        frame["text"] = [None if _is_null(v) else v for v in frame["text"].to_numpy(dtype=object)]
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
    vals = pd.Series([None if _is_null(v) else v for v in df[col].to_numpy(dtype=object)], index=df.index, dtype=object)
    idx = vals.map(lambda v: -1 if v is None else (index.get(v, -2) if isinstance(v, str) else -3)).to_numpy(dtype=np.int64)
    i = _first_bad(idx == -3)
    if i is not None:
        raise ScoredFormatError(f"expected a class name (a string) or null, got {type(vals.iat[i]).__name__} "
                                f"{_show(vals.iat[i])}", **_where(source, _row_number(df, i)), field=col)
    i = _first_bad(idx == -2)
    if i is not None:
        raise ScoredFormatError(f"unknown class {_show(vals.iat[i])}; classes are {_show(list(classes), 120)}",
                                **_where(source, _row_number(df, i)), field=col)
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


def as_scored(data, *, source: str | None = None) -> ScoredData:
    """Accept a :class:`ScoredData`, a DataFrame, a list of dicts, or a path."""
    if isinstance(data, ScoredData) or getattr(data, "task", None) == "sequence_labelling":
        return data
    if isinstance(data, (str, Path)):
        return read_scored(data)
    if isinstance(data, list):
        bad = next((i for i, r in enumerate(data) if not isinstance(r, dict)), None)
        if bad is not None:
            raise ScoredFormatError(f"expected one object (dict) per example, got {type(data[bad]).__name__}",
                                    file=source, row=bad + 1)
        data = pd.DataFrame(data, dtype=object) if data else pd.DataFrame()
    if isinstance(data, pd.DataFrame) and is_sequence_table(data):
        from .sequence import check_sequence_scored

        return check_sequence_scored(data, source=source)
    return check_scored(data, source=source)


# ----------------------------------------------------------------- reading
def _no_constant(name):
    # NaN, Infinity and -Infinity are not JSON; Python's parser takes them unless told
    raise ValueError(f"{name} is not a JSON value; use null")


def _read_jsonl(path: Path) -> pd.DataFrame:
    records, lines = [], []
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                s = raw.decode("utf-8").strip()
            except UnicodeDecodeError as e:
                raise ScoredFormatError(f"not UTF-8 text (byte {e.start + 1} of the line is {raw[e.start:e.start + 1]!r}); "
                                        "JSON Lines files are UTF-8", file=path, row=lineno) from None
            if not s:
                continue
            try:
                obj = json.loads(s, parse_constant=_no_constant)
            except json.JSONDecodeError as e:
                raise ScoredFormatError(f"invalid JSON ({e.msg} at column {e.colno})", file=path, row=lineno) from None
            except RecursionError:
                raise ScoredFormatError("invalid JSON: nested too deeply", file=path, row=lineno) from None
            except ValueError as e:  # e.g. an integer with more digits than Python converts
                raise ScoredFormatError(f"invalid JSON ({e})", file=path, row=lineno) from None
            if not isinstance(obj, dict):
                raise ScoredFormatError(f"expected a JSON object, got {type(obj).__name__}", file=path, row=lineno)
            records.append(obj)
            lines.append(lineno)
    # object columns: values stay what JSON made them (no int64/float inference, which
    # would overflow on huge integers or turn a string column with nulls into floats)
    df = pd.DataFrame(records, dtype=object) if records else pd.DataFrame()
    df["__line__"] = lines
    return df


def _read_parquet(path: Path) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for broken files
        raise ScoredFormatError(f"cannot read Parquet: {e}", file=path) from None
    try:
        df = table.to_pandas()
    except Exception as e:
        raise ScoredFormatError(f"cannot read Parquet columns: {e}", file=path) from None
    if "probs" in df.columns:
        # Parquet stores probs as a struct (dict) or as a map (a list of (key, value) pairs);
        # anything else is left as it is for the checks to name
        df["probs"] = df["probs"].map(_pairs_to_dict)
    if "tag_probs" in df.columns:
        df["tag_probs"] = df["tag_probs"].map(
            lambda seq: seq if not isinstance(seq, (list, np.ndarray)) else [_pairs_to_dict(t) for t in seq]
        )
    return df


def _pairs_to_dict(v):
    if isinstance(v, (list, np.ndarray)) and all(isinstance(p, tuple) and len(p) == 2 for p in v):
        return dict(v)
    return v


def _kind(path: Path) -> str:
    if not path.exists():
        raise ScoredFormatError("no such file", file=path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise ScoredFormatError(f"unknown extension {suffix!r}: expected .jsonl or .parquet", file=path)


def read_table(path) -> pd.DataFrame:
    """Read a JSONL or Parquet file of examples into a DataFrame (no validation)."""
    path = Path(path)
    return _read_jsonl(path) if _kind(path) == "jsonl" else _read_parquet(path)


def is_sequence_table(df: pd.DataFrame) -> bool:
    return "tokens" in df.columns and "probs" not in df.columns


def read_scored(path):
    """Read and validate a scored-examples file (JSONL or Parquet).

    Returns :class:`ScoredData` for classification files and a
    sequence-labelling scored object for files with ``tokens``/``tags``.
    Classification files are first read as typed columns and checked whole
    (:mod:`.columnar`); a file that does not pass there is read again row by
    row, which names the file, row and field of its first problem.
    """
    path = Path(path)
    fast = read_columns(path, _kind(path))  # typed columns, checked whole; None: read row by row
    if fast is not None:
        columns, P, classes, y, given = fast
        labels = columns.pop("label")
        return _finish(pd.DataFrame(columns), P, classes, str(path), coded=(labels, y, given))
    df = read_table(path)
    if is_sequence_table(df):
        from .sequence import check_sequence_scored

        return check_sequence_scored(df, source=str(path))
    return check_scored(df, source=str(path))


# ----------------------------------------------------------------- writing
def _jsonable(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, (np.floating,)):
        f = float(v)
        return None if math.isnan(f) else f
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, np.ndarray):
        return [_jsonable(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if v is pd.NA or v is pd.NaT:
        return None
    return v


def write_jsonl(df: pd.DataFrame, path) -> Path:
    """Write a DataFrame as JSON Lines atomically (temp file + rename)."""
    from ..io import atomic_write_text

    cols = [c for c in df.columns if c != "__line__"]
    lines = []
    for rec in df[cols].itertuples(index=False, name=None):
        lines.append(json.dumps({c: _jsonable(v) for c, v in zip(cols, rec)}, ensure_ascii=False))
    return atomic_write_text(path, "\n".join(lines) + ("\n" if lines else ""))


def write_parquet(df: pd.DataFrame, path) -> Path:
    """Write a DataFrame as Parquet atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..io import atomic_path

    cols = [c for c in df.columns if c != "__line__"]
    table = pa.Table.from_pandas(df[cols], preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


def write_scored(data, out_dir, *, stem: str = "scored") -> dict:
    """Write scored examples as ``<stem>.jsonl`` and ``<stem>.parquet``."""
    frame = data.to_frame() if hasattr(data, "to_frame") else data
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return {
        "jsonl": write_jsonl(frame, out_dir / f"{stem}.jsonl"),
        "parquet": write_parquet(frame, out_dir / f"{stem}.parquet"),
    }
