"""Shared helpers of bias_suite.stats: reading a scored-examples frame
(docs/formats.md) and building tidy result rows.

Private module: the public entry points are in ``significance`` and
``bernstein``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..exceptions import MetricError, did_you_mean

from ..io.results import RESULT_COLUMNS

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


def scored_data(scored):
    """Validated, columnar scored examples: the package's one validation
    (:func:`bias_suite.families.as_scored`)."""
    from ..families import as_scored

    return as_scored(scored)


def select_attributes(scored: pd.DataFrame, attributes) -> list:
    present = list(pd.unique(scored["attribute"]))
    if attributes is None:
        return present
    if isinstance(attributes, str):
        attributes = [attributes]
    unknown = [a for a in attributes if a not in present]
    if unknown:
        raise MetricError(f"unknown attribute(s) {unknown} (present: {present}){did_you_mean(unknown[0], present)}")
    return list(attributes)


def group_order(groups: pd.Series | np.ndarray) -> list:
    """Groups in order of first appearance."""
    return list(pd.unique(pd.Series(groups)))


_BLAS = []  # the threadpool controller, made once: finding the loaded libraries is not free


def single_threaded_blas():
    """The bootstrap's matrix products are skinny (a chunk of resamples times
    thousands of items); a multi-threaded BLAS gains nothing on them and can
    be orders of magnitude slower on a busy machine, so use one thread."""
    if not _BLAS:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # threadpoolctl before 3.0 (scikit-learn 1.3 accepts 2.x), or none at all
            _BLAS.append(None)
        else:
            _BLAS.append(ThreadpoolController())
    if _BLAS[0] is not None:
        return _BLAS[0].limit(limits=1, user_api="blas")
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover (threadpoolctl comes with scikit-learn)
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
