"""The predictor interface: texts in, class probabilities out.

Everything downstream (task families, metrics) only needs an object with a
``class_names`` list and a ``predict_proba(texts)`` method returning an
``n x len(class_names)`` array whose rows sum to one. :class:`CallablePredictor`
adapts plain Python functions, including CheckList-style predict functions
that return ``(preds, confs)``; :func:`as_predictor` picks the right adapter.

No heavy library (torch, transformers) is imported here.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from bias_suite.exceptions import ModelError

__all__ = [
    "Predictor",
    "CallablePredictor",
    "as_predictor",
    "check_texts",
    "check_class_names",
    "validate_probs",
]

#: Absolute tolerance on ``sum(row) == 1``.
ROW_SUM_ATOL = 1e-3


@runtime_checkable
class Predictor(Protocol):
    """Anything that maps texts to class probabilities.

    Attributes
    ----------
    class_names : list of str
        Names of the classes, in column order of :meth:`predict_proba`.
    """

    class_names: list[str]

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Return an ``(n, len(class_names))`` float array; rows sum to 1."""
        ...


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


def _unpack_output(out: Any) -> Any:
    """Return the probability part of a predict function's output.

    A 2-tuple whose second element is 2-D is CheckList's ``(preds, confs)``
    convention; anything else is taken as the probability matrix itself.
    """
    if isinstance(out, tuple) and len(out) == 2:
        second = out[1]
        try:
            ndim = np.ndim(second)
        except Exception:  # pragma: no cover - exotic objects
            ndim = -1
        if ndim == 2:
            return second
    return out


class CallablePredictor:
    """Wrap a Python callable as a :class:`Predictor`.

    Parameters
    ----------
    fn : callable
        ``fn(list_of_texts)`` returning either an ``(n, C)`` array of
        probabilities, or CheckList's ``(preds, confs)`` tuple whose
        ``confs`` is ``(n, C)``.
    class_names : sequence of str
        Column names of the probabilities.
    fingerprint : str or dict, optional
        A name that changes whenever the function's predictions would (e.g.
        ``"my-model-v3"``). With it, runs cache the predictions (see
        :mod:`bias_suite.predict.cache`); without it, nothing is cached, since
        nothing tells two versions of a function apart.

    Examples
    --------
    >>> p = CallablePredictor(lambda xs: [[0.5, 0.5]] * len(xs), ["neg", "pos"])
    >>> p.predict_proba(["a", "b"]).shape
    (2, 2)
    """

    def __init__(self, fn: Callable[[list[str]], Any], class_names: Sequence[str], *,
                 fingerprint: str | dict | None = None):
        if not callable(fn):
            raise ModelError(f"fn must be callable, got {type(fn).__name__}")
        if fingerprint is not None and not isinstance(fingerprint, (str, dict)):
            raise ModelError(f"fingerprint must be a string or a dict, got {type(fingerprint).__name__}")
        self.fn = fn
        self.class_names = check_class_names(class_names)
        self._fingerprint = fingerprint

    def fingerprint(self) -> dict | None:
        """The user's ``fingerprint`` with the class names; None without one."""
        if self._fingerprint is None:
            return None
        fp = dict(self._fingerprint) if isinstance(self._fingerprint, dict) else {"id": self._fingerprint}
        return {"kind": "callable", **fp, "class_names": list(self.class_names)}

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Call the wrapped function and validate its output.

        Parameters
        ----------
        texts : sequence of str

        Returns
        -------
        numpy.ndarray
            ``float64`` array of shape ``(len(texts), len(class_names))``.
        """
        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, len(self.class_names)), dtype=np.float64)
        out = _unpack_output(self.fn(texts))
        name = getattr(self.fn, "__qualname__", None) or type(self.fn).__name__
        return validate_probs(out, len(texts), self.class_names,
                              source=f"predict function {name!r}")

    __call__ = predict_proba

    def __repr__(self) -> str:
        name = getattr(self.fn, "__qualname__", None) or type(self.fn).__name__
        return f"CallablePredictor({name}, class_names={self.class_names})"


def as_predictor(obj: Any, class_names: Sequence[str] | None = None) -> Predictor:
    """Turn ``obj`` into a :class:`Predictor`.

    Parameters
    ----------
    obj : Predictor, str, os.PathLike, object with ``predict_proba``, or callable
        - an object with ``class_names`` and ``predict_proba``: returned as is
          (if ``class_names`` is given it must match);
        - a string or path: a Hugging Face model id or local folder, loaded
          with :class:`bias_suite.models.hf.HFClassifier`;
        - an object with ``predict_proba`` but no ``class_names`` (e.g. a
          scikit-learn text pipeline): its ``predict_proba`` is wrapped, class
          names taken from ``class_names`` or its ``classes_``;
        - any other callable: wrapped in :class:`CallablePredictor`.
    class_names : sequence of str, optional
        Required for bare callables unless they carry a ``class_names``
        attribute.

    Returns
    -------
    Predictor

    Raises
    ------
    ModelError
        If the class names cannot be determined or do not match.
    """
    if isinstance(obj, (str, os.PathLike)):
        from bias_suite.models.hf import HFClassifier

        pred = HFClassifier(obj)
        _check_same_names(pred.class_names, class_names, obj)
        return pred
    if hasattr(obj, "predict_proba") and hasattr(obj, "class_names"):
        _check_same_names(list(obj.class_names), class_names, obj)
        return obj
    if hasattr(obj, "predict_proba") and callable(obj.predict_proba):
        names = class_names
        if names is None and hasattr(obj, "classes_"):
            names = list(obj.classes_)
        if names is None:
            raise ModelError(
                f"cannot tell the class names of {type(obj).__name__}: pass "
                "class_names=[...] in the column order of its predict_proba"
            )
        return CallablePredictor(obj.predict_proba, names)
    if callable(obj):
        names = class_names if class_names is not None else getattr(obj, "class_names", None)
        if names is None:
            raise ModelError(
                "a predict function needs class_names=[...] (the column order of "
                "the probabilities it returns)"
            )
        return CallablePredictor(obj, names)
    raise ModelError(
        f"cannot use {type(obj).__name__} as a model: expected a model id or "
        "folder, an object with predict_proba, or a callable"
    )


def _check_same_names(have: Sequence[str], want: Sequence[str] | None, obj: Any) -> None:
    if want is not None and list(have) != check_class_names(want):
        raise ModelError(
            f"model {obj!r} has classes {list(have)}, but class_names="
            f"{list(want)} was given"
        )
