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

__all__ = ["ROW_SUM_ATOL", "check_texts", "check_class_names", "validate_probs"]

#: Absolute tolerance on ``sum(row) == 1``.
ROW_SUM_ATOL = 1e-3


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
                   *, source: str = "model") -> np.ndarray:
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

    Returns
    -------
    numpy.ndarray
        ``float64`` copy of ``probs``.

    Raises
    ------
    ModelError
        On a wrong shape, non-finite or negative values, or rows that do not
        sum to 1 (within ``ROW_SUM_ATOL``).
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
        raise ModelError(f"{source} returned negative probabilities in rows {rows}")
    if n:
        sums = arr.sum(axis=1)
        off = np.abs(sums - 1.0) > ROW_SUM_ATOL
        if off.any():
            i = int(np.argmax(off))
            raise ModelError(
                f"{source} returned rows that do not sum to 1 "
                f"({int(off.sum())} of {n}; e.g. row {i} sums to {sums[i]:.6g}). "
                "Return probabilities (apply softmax to logits), not scores"
            )
    return arr
