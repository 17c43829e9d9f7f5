"""Checks shared by the task families' scored-data validators: each problem
is one :class:`~bias_suite.exceptions.ScoredFormatError` naming the file,
the row (the JSONL line where known) and the field, with values cut short."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..exceptions import ScoredFormatError
from ..io.values import is_null

PROB_TOLERANCE = 1e-3  # probabilities of one prediction sum to 1 within this


def where_text(source, row):
    return dict(file=source, row=row)


def row_number(df: pd.DataFrame, i: int) -> int:
    """1-based line (JSONL) or row (Parquet/DataFrame) number of position i."""
    if "__line__" in df.columns:
        return int(df["__line__"].iat[i])
    return i + 1


def first_bad(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None




def is_number(v) -> bool:
    """A JSON number: int or float (numpy's too), never a bool or a string."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def show_value(v, limit: int = 60) -> str:
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
        ok = np.fromiter(((isinstance(v, str) and (v != "" or not nonempty)) or (nullable and is_null(v))
                          for v in vals), dtype=bool, count=len(vals))
        i = first_bad(~ok)
        if i is not None:
            v = vals[i]
            what = "a string or null" if nullable else ("a non-empty string" if nonempty else "a string")
            got = "missing or null" if is_null(v) else f"got {type(v).__name__} {show_value(v)}"
            raise ScoredFormatError(f"expected {what}, {got}", **where_text(source, row_number(df, i)), field=col)


