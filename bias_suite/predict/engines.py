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

Predictors travel to remote workers as a *spec*
(:mod:`bias_suite.predict.specs`).
"""
from __future__ import annotations

from typing import Iterator

from bias_suite.exceptions import BiasSuiteError
from bias_suite.predict.outputs import Outputs
from bias_suite.predict.specs import build_predictor, predictor_spec

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
