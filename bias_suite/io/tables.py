"""Example tables on disk: JSON Lines and Parquet, read without validation
and written atomically (the tidy files of every task family).

Reading keeps JSON values as JSON made them (object columns, no type
inference) and records each row's line number in ``__line__`` so that the
checks above can name the line of a problem; writing goes through
:func:`bias_suite.io.atomic_path` (whole file or nothing, the umask's mode).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import ScoredFormatError
from . import atomic_path, atomic_write_text

__all__ = ["read_table", "table_kind", "write_jsonl", "write_parquet", "write_scored"]



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


def table_kind(path: Path) -> str:
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
    return _read_jsonl(path) if table_kind(path) == "jsonl" else _read_parquet(path)



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

    cols = [c for c in df.columns if c != "__line__"]
    lines = []
    for rec in df[cols].itertuples(index=False, name=None):
        lines.append(json.dumps({c: _jsonable(v) for c, v in zip(cols, rec)}, ensure_ascii=False))
    return atomic_write_text(path, "\n".join(lines) + ("\n" if lines else ""))


def write_parquet(df: pd.DataFrame, path) -> Path:
    """Write a DataFrame as Parquet atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq


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
