"""Two value helpers every layer uses: what counts as a missing value, and
how a number is written for a person.

- :func:`is_null`: ``None``, pandas' ``NA`` and a float NaN (numpy's too) are
  missing; everything else, including a string, is a value.
- :func:`format_number`: ``"fixed"`` writes three decimals (``0.125``),
  ``"sig"`` three significant digits, switching to scientific notation
  below 1e-3 (``0.000123`` becomes ``1.23e-04``); a missing or infinite
  value is written as ``missing`` (an en dash by default).
"""
from __future__ import annotations

import math

__all__ = ["is_null", "format_number", "UNBOUNDED", "UNBOUNDED_NOTE", "without_sentinels", "format_p"]


def is_null(v) -> bool:
    """None, pandas' NA or a float NaN (a missing value in a DataFrame column)."""
    if v is None:
        return True
    if isinstance(v, float):  # numpy.float64 is a float subclass
        return math.isnan(v)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return False
    return v is pd.NA or (type(v).__module__ == "numpy" and getattr(v, "dtype", None) is not None
                          and v.dtype.kind == "f" and bool(v != v))


def format_number(v, style: str = "fixed", missing: str = "–") -> str:
    """``v`` written for a person (see the module doc); ``missing`` for a
    null or non-finite value."""
    if is_null(v):
        return missing
    x = float(v)
    if not math.isfinite(x):
        return missing
    if style == "fixed":
        return f"{x:.3f}"
    if style == "sig":
        return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"
    raise ValueError(f"style must be 'fixed' or 'sig', got {style!r}")


#: an interval end at or beyond this is no bound at all (a ratio whose other side has no events can grow
#: without limit): results store it as null and say so in ``note`` (:data:`UNBOUNDED_NOTE`)
UNBOUNDED = 1e11
UNBOUNDED_NOTE = "unbounded above: the other side has too few events to bound the ratio"
#: the interval ends that a results table may hold
_ENDS = ("ci_low", "ci_high", "signed_low", "signed_high", "beyond_low", "beyond_high")


def without_sentinels(frame):
    """The results table with no stand-in numbers: every interval end that is infinite or at least
    :data:`UNBOUNDED` in size becomes null, and the row's ``note`` says :data:`UNBOUNDED_NOTE` (where the
    value itself is defined; a null value keeps its own note). Values and interval ends are otherwise
    unchanged."""
    import numpy as np
    import pandas as pd

    cols = [c for c in _ENDS if c in frame.columns]
    if not cols or len(frame) == 0:
        return frame
    hit = np.zeros(len(frame), dtype=bool)
    out = frame.copy()
    out.attrs.update(frame.attrs)
    for c in cols:
        x = pd.to_numeric(out[c], errors="coerce").to_numpy(dtype=float)
        bad = np.isinf(x) | (np.abs(np.nan_to_num(x, posinf=0.0, neginf=0.0)) >= UNBOUNDED)
        if bad.any():
            out[c] = out[c].mask(bad, np.nan)
            hit |= bad
    if hit.any() and "note" in out.columns:
        note = out["note"].astype(object)
        keep = note.map(lambda v: isinstance(v, str) and bool(v.strip()))
        out["note"] = note.where(~hit | keep, UNBOUNDED_NOTE)
    return out


def format_p(p, missing: str = "–") -> str:
    """A p-value as printed: three decimals, a power of ten below 0.001, and "< 1e-16" below what a
    double's arithmetic can tell from 0 (1 − p is 1 there)."""
    if is_null(p):
        return missing
    p = float(p)
    if p < 1e-16:
        return "< 1e-16"
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"
