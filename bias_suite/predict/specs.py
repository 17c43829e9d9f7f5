"""How a predictor travels to another process (a remote engine's worker).

Predictors travel as a *spec* when they have ``spec()`` (model folder/id and
options; the worker loads the weights itself) and as the pickled object
otherwise (small Python predictors). Used by the engines
(:mod:`bias_suite.predict.engines`, :mod:`bias_suite.predict.ray_engine`).
"""
from __future__ import annotations

import importlib

from bias_suite.exceptions import ModelError

__all__ = ["predictor_spec", "build_predictor"]


def predictor_spec(predictor) -> dict:
    """How to rebuild ``predictor`` in another process.

    Returns ``{"factory": "module:Class", "kwargs": {...}}`` when the
    predictor has ``spec()`` (it then loads its own weights on the worker),
    else ``{"object": predictor}`` (pickled with the task).
    """
    fn = getattr(predictor, "spec", None)
    if callable(fn):
        spec = dict(fn())
        if "object" in spec:
            return spec
        if "factory" not in spec:
            raise ModelError(f"{type(predictor).__name__}.spec() must name a 'factory' ('module:Class')")
        spec.setdefault("kwargs", {})
        return spec
    return {"object": predictor}


def build_predictor(spec: dict, *, device: str | None = None):
    """Rebuild a predictor from :func:`predictor_spec` output (on a worker).

    ``device`` overrides the spec's device (``"cuda"`` on a GPU worker).
    """
    if "object" in spec:
        return spec["object"]
    mod, _, attr = spec["factory"].partition(":")
    try:
        factory = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise ModelError(f"cannot rebuild predictor {spec['factory']!r}: {e}") from None
    kwargs = dict(spec.get("kwargs", {}))
    if device is not None:
        kwargs["device"] = device
    kwargs.setdefault("progress", False)
    return factory(*spec.get("args", ()), **kwargs)
