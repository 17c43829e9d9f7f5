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

__all__ = ["is_null", "format_number"]


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
