"""Engines run the chunks of a prediction plan (see :mod:`bias_suite.predict.runner`).

An engine has a ``name`` and ``run(task, work)``, where ``work`` is a list of
chunks (lists of inputs); it yields ``(chunk_index, positions, Outputs)`` as
results arrive, in any order: ``positions`` (indices into the chunk) for a
part of a chunk, or None for the whole chunk. The runner commits every part
to the cache as it arrives, so every engine resumes the same way after an
interruption.

- :class:`LocalEngine` (``"local"``): the chunks in order, in this process,
  committed batch by batch when the predictor streams its batches
  (``HFClassifier.iter_predict_proba``).
- :class:`~bias_suite.predict.ray_engine.RayEngine` (``"ray"``): the chunks
  spread over a pool of predictor actors with Ray Data (one per GPU or CPU
  slot), on a local Ray instance or an existing cluster.

Predictors travel to remote workers as a *spec* when they have ``spec()``
(model folder/id and options; the worker loads the weights itself) and as
the pickled object otherwise (small Python predictors).
"""
from __future__ import annotations

import importlib
from typing import Iterator

from bias_suite.exceptions import BiasSuiteError, ModelError
from bias_suite.predict.outputs import Outputs

__all__ = ["LocalEngine", "get_engine", "predictor_spec", "build_predictor", "ENGINES"]

ENGINES = ("local", "ray")


class LocalEngine:
    """Run every chunk in this process, in order."""

    name = "local"

    def run(self, task, work) -> Iterator[tuple[int, object, Outputs]]:
        for i, items in enumerate(work):
            for positions, out in task.compute_iter(items):
                yield i, positions, out

    def __repr__(self) -> str:
        return "LocalEngine()"


def get_engine(engine="local", **options):
    """An engine object from a name (``"local"``, ``"ray"``) or an engine."""
    if hasattr(engine, "run") and hasattr(engine, "name"):
        return engine
    name = str(engine).strip().lower()
    if name == "local":
        if options:
            raise BiasSuiteError(f"the local engine takes no options, got {sorted(options)}")
        return LocalEngine()
    if name == "ray":
        from bias_suite.predict.ray_engine import RayEngine

        return RayEngine(**options)
    raise BiasSuiteError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")


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
