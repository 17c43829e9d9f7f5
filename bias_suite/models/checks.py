"""Validation of a predictor's inputs and outputs: texts in, class names,
probability matrices out.

Shared by :mod:`bias_suite.models.base` (which re-exports these names) and
the model wrappers (:mod:`bias_suite.models.hf`), so that neither needs the
other. No heavy library (torch, transformers) is imported here.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from bias_suite.exceptions import ModelError

__all__ = ["ROW_SUM_ATOL", "RENORMALISE_ATOL", "check_texts", "check_class_names", "validate_probs",
           "renormalise_rows"]

#: Absolute tolerance on ``sum(row) == 1``.
ROW_SUM_ATOL = 1e-3
#: Rows off by more than ROW_SUM_ATOL but at most this (probabilities rounded
#: to 2 or 3 decimals, say) are renormalised by the prediction runner, with one
#: warning saying how many (:func:`renormalise_rows`); beyond it they are an error.
RENORMALISE_ATOL = 1e-2
_EPS = 1e-12  # floating-point slack on the tolerances (0.01 + 0.98 sums to 0.9900000000000001 - 1e-16)


def check_texts(texts: Any) -> list[str]:
    """Validate a batch of input texts and return it as a list.

    Parameters
    ----------
    texts : sequence of str
        The texts; a bare string is rejected (it is almost always a mistake).

    Returns
    -------
    list of str

    Raises
    ------
    ModelError
        If ``texts`` is a string, not iterable, or holds a non-string.
    """
    if isinstance(texts, (str, bytes)):
        raise ModelError(
            "texts must be a sequence of strings, got a single string; "
            "wrap it in a list: predict_proba([text])"
        )
    try:
        out = list(texts)
    except TypeError:
        raise ModelError(
            f"texts must be a sequence of strings, got {type(texts).__name__}"
        ) from None
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise ModelError(
                f"texts[{i}] must be a string, got {type(t).__name__}: {t!r}"
            )
    return out


def check_class_names(class_names: Any) -> list[str]:
    """Validate class names: a non-empty sequence of distinct strings.

    Raises
    ------
    ModelError
        If the names are missing, empty, not strings or repeated.
    """
    if class_names is None or isinstance(class_names, (str, bytes)):
        raise ModelError(
            f"class_names must be a list of strings, got {class_names!r}"
        )
    names = list(class_names)
    if not names:
        raise ModelError("class_names is empty; at least one class is needed")
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        # Allow numpy/sklearn labels such as np.int64(0) by naming them as str.
        names = [str(n) for n in names]
    if len(set(names)) != len(names):
        raise ModelError(f"class_names has repeated names: {names}")
    return names


def validate_probs(probs: Any, n: int, class_names: Sequence[str],
                   *, source: str = "model", atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """Check that ``probs`` is an ``(n, C)`` probability matrix.

    Parameters
    ----------
    probs : array-like
        The candidate matrix.
    n : int
        Expected number of rows (number of texts).
    class_names : sequence of str
        Expected columns.
    source : str
        Name used in error messages.
    atol : float
        Tolerance on the row sums: ``ROW_SUM_ATOL``, or ``RENORMALISE_ATOL``
        where the caller renormalises the rows (:func:`renormalise_rows`).

    Returns
    -------
    numpy.ndarray
        ``float64`` copy of ``probs``.

    Raises
    ------
    ModelError
        On a wrong shape, non-finite or negative values, or rows that do not
        sum to 1 (within ``atol``). The advice to apply a softmax is given
        only when some value lies outside [0, 1] (scores or logits).
    """
    c = len(class_names)
    try:
        arr = np.asarray(probs, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ModelError(
            f"{source} returned something that is not a numeric array "
            f"({type(probs).__name__}): {e}"
        ) from None
    if arr.ndim == 1 and n == 0 and arr.size == 0:
        arr = arr.reshape(0, c)
    if arr.ndim != 2 or arr.shape != (n, c):
        raise ModelError(
            f"{source} returned probabilities of shape {arr.shape}; expected "
            f"({n}, {c}): one row per text ({n} texts) and one column per "
            f"class {list(class_names)}"
        )
    if not np.all(np.isfinite(arr)):
        rows = np.where(~np.isfinite(arr).all(axis=1))[0][:5].tolist()
        raise ModelError(f"{source} returned non-finite probabilities in rows {rows}")
    if (arr < -ROW_SUM_ATOL).any():
        rows = np.where((arr < -ROW_SUM_ATOL).any(axis=1))[0][:5].tolist()
        raise ModelError(f"{source} returned negative probabilities in rows {rows}; return probabilities "
                         "(apply a softmax to logits), not scores")
    if n:
        sums = arr.sum(axis=1)
        off = np.abs(sums - 1.0) > atol + _EPS  # a sum of 0.99 is 0.99 and change in floating point
        if off.any():
            i = int(np.argmax(off))
            msg = (f"{source} returned rows that do not sum to 1 "
                   f"({int(off.sum())} of {n}; e.g. row {i} sums to {sums[i]:.6g}; rows within "
                   f"{RENORMALISE_ATOL:g} of 1 are renormalised)")
            if (arr > 1 + ROW_SUM_ATOL).any():  # scores or logits, not probabilities
                msg += ". Return probabilities (apply a softmax to logits), not scores"
            raise ModelError(msg)
    return arr


def renormalise_rows(arr: np.ndarray) -> tuple[np.ndarray, int]:
    """``(rows divided by their sums, how many rows that changed)``: the rows
    whose sum is off by more than ``ROW_SUM_ATOL`` (the others are returned
    as they are, bit for bit). Rows are expected to have passed
    :func:`validate_probs` with ``atol=RENORMALISE_ATOL``."""
    arr = np.asarray(arr, dtype=np.float64)
    if not arr.size:
        return arr, 0
    sums = arr.sum(axis=1)
    off = np.abs(sums - 1.0) > ROW_SUM_ATOL
    n = int(off.sum())
    if not n:
        return arr, 0
    out = arr.copy()
    out[off] /= sums[off, None]
    return out, n
