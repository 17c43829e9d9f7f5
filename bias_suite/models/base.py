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

from bias_suite.exceptions import ModelError, option
from bias_suite.models.checks import (RENORMALISE_ATOL, ROW_SUM_ATOL, check_class_names, check_texts,
                                      validate_probs)

__all__ = [
    "Predictor",
    "CallablePredictor",
    "as_predictor",
    "model_name",
    "check_texts",
    "check_class_names",
    "validate_probs",
    "ROW_SUM_ATOL",
]


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
    name : str, optional
        The model's name in summaries and ``run.json`` (default: the
        fingerprint's ``name`` or ``id``, else the function's name).

    Examples
    --------
    >>> p = CallablePredictor(lambda xs: [[0.5, 0.5]] * len(xs), ["neg", "pos"])
    >>> p.predict_proba(["a", "b"]).shape
    (2, 2)
    """

    def __init__(self, fn: Callable[[list[str]], Any], class_names: Sequence[str], *,
                 fingerprint: str | dict | None = None, name: str | None = None):
        if not callable(fn):
            raise ModelError(f"fn must be callable, got {type(fn).__name__}")
        if fingerprint is not None and not isinstance(fingerprint, (str, dict)):
            raise ModelError(f"fingerprint must be a string or a dict, got {type(fingerprint).__name__}")
        if name is not None and not (isinstance(name, str) and name.strip()):
            raise ModelError(f"name must be a non-empty string, got {name!r}")
        self.fn = fn
        self.class_names = check_class_names(class_names)
        self._fingerprint = fingerprint
        self.name = name or _fingerprint_name(fingerprint) or _function_name(fn)

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
        # rows within RENORMALISE_ATOL of 1 pass as the function gave them; a run renormalises them
        # (bias_suite.predict.predict, one warning for the run)
        return validate_probs(out, len(texts), self.class_names,
                              source=f"predict function {name!r}", atol=RENORMALISE_ATOL)

    __call__ = predict_proba

    def __repr__(self) -> str:
        name = getattr(self.fn, "__qualname__", None) or type(self.fn).__name__
        return f"CallablePredictor({name}, class_names={self.class_names})"


def _function_name(fn) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _fingerprint_name(fp) -> str | None:
    if isinstance(fp, str) and fp:
        return fp
    if isinstance(fp, dict):
        for key in ("name", "id", "model"):
            if isinstance(fp.get(key), str) and fp[key]:
                return fp[key]
    return None


def model_name(model: Any) -> str:
    """A model's name for summaries and ``run.json``: its ``name``, else
    the ``name``, ``id`` or ``model`` of its fingerprint, else its
    ``model_id`` (a hub id or folder), else the name of its function or class."""
    name = getattr(model, "name", None)
    if isinstance(name, str) and name:
        return name
    fp = getattr(model, "fingerprint", None)
    try:
        found = _fingerprint_name(fp() if callable(fp) else fp)
    except Exception:  # a user's fingerprint method that fails names nothing
        found = None
    model_id = getattr(model, "model_id", None)
    if not found and isinstance(model_id, str) and model_id:
        found = model_id
    return found or _function_name(model)


def as_predictor(obj: Any, class_names: Sequence[str] | None = None) -> Predictor:
    """Turn ``obj`` into a :class:`Predictor`.

    Parameters
    ----------
    obj : Predictor, str, os.PathLike, object with ``predict_proba``, or callable
        - an object with ``class_names`` and ``predict_proba``: returned as is
          (if ``class_names`` is given it must match);
        - a string or path: a Hugging Face model id, local folder or
          default-model name, loaded with
          :class:`bias_suite.models.hf.HFClassifier` (through
          :func:`bias_suite.models.resolve.classifier_from_name`);
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
        from bias_suite.models.resolve import classifier_from_name

        pred = classifier_from_name(obj)
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
                + option("class_names=[...]", "--classes NAME,NAME,...") + " in the column order of its predict_proba"
            )
        return CallablePredictor(obj.predict_proba, names, name=model_name(obj))
    if callable(obj):
        names = class_names if class_names is not None else getattr(obj, "class_names", None)
        if names is None:
            raise ModelError(
                "a predict function needs " + option("class_names=[...]", "--classes NAME,NAME,...")
                + " (the column order of the probabilities it returns)"
            )
        return CallablePredictor(obj, names)
    raise ModelError(
        f"cannot use {type(obj).__name__} as a model: expected a model id or "
        "folder, an object with predict_proba, or a callable"
    )


def _check_same_names(have: Sequence[str], want: Sequence[str] | None, obj: Any) -> None:
    if want is not None and list(have) != check_class_names(want):
        raise ModelError(
            f"model {obj!r} has classes {list(have)}, but "
            + option(f"class_names={list(want)}", f"--classes {','.join(map(str, want))}") + " was given"
        )
