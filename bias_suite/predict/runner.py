"""Predict many inputs once: de-duplicate, reuse the cache, compute the
rest in resumable chunks on an engine, and put everything back in order.

>>> from bias_suite.predict import predict
>>> probs, stats = predict(classifier, texts)                # doctest: +SKIP
>>> (tags, tag_probs), stats = predict(tagger, tokens_list)  # doctest: +SKIP

The plan, identical for every engine:

1. key every input (BLAKE2b of the text, or of the token list);
2. keep one of each distinct key (identical inputs across all suites of a
   run are predicted once);
3. look the keys up in the model's store of the prediction cache (when the
   predictor has a ``fingerprint()``);
4. sort the missing inputs by length (longest first) and cut them into
   chunks of ``chunk_size``; each chunk is one call of the predictor, so
   the batches inside a chunk are the same whichever engine runs it;
5. run the chunks on the engine; every finished batch (predictors that
   stream their batches, such as ``HFClassifier``) or chunk (others, and
   the Ray engine) is committed to the cache at once, so an interrupted run
   loses only what was in flight;
6. scatter cached and new predictions back to the inputs' order.
"""
from __future__ import annotations

import contextlib
import logging
import time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

from bias_suite.exceptions import BiasSuiteError, ModelError, ProbabilityWarning
from bias_suite.models.base import model_name
from bias_suite.predict.outputs import Outputs, make_task

__all__ = ["predict", "PredictionStats", "resolve_cache", "fingerprint_of"]

log = logging.getLogger(__name__)

#: Predictor batches per chunk when ``chunk_size`` is not given.
BATCHES_PER_CHUNK = 8


@dataclass
class PredictionStats:
    """What a :func:`predict` call did (also written to ``run.json``)."""

    inputs: int = 0
    distinct: int = 0
    cached: int = 0
    computed: int = 0
    chunks: int = 0
    engine: str = "local"
    cache: str | None = None        # store file, or None when the cache was not used
    cache_note: str | None = None   # why not, when it was not
    seconds: float = 0.0
    predict_seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        parts = [f"{self.inputs} inputs", f"{self.distinct} distinct", f"{self.cached} from cache",
                 f"{self.computed} predicted" + (f" on {self.engine}" if self.computed else "")]
        if self.computed and self.predict_seconds > 0:
            parts.append(f"{self.computed / self.predict_seconds:.0f}/s")
        return ", ".join(parts) + (f" ({self.cache_note})" if self.cache_note else "")


def fingerprint_of(predictor) -> dict | None:
    """The predictor's ``fingerprint()`` (None when it has none)."""
    fn = getattr(predictor, "fingerprint", None)
    if not callable(fn):
        return None
    fp = fn()
    if fp is None:
        return None
    if not isinstance(fp, dict):
        fp = {"fingerprint": str(fp)}
    return fp


def resolve_cache(cache):
    """``True``/None -> the default :class:`PredictionCache`; ``False`` -> None;
    a path -> a cache there; a :class:`PredictionCache` as is."""
    from bias_suite.predict.cache import PredictionCache

    if cache is None or cache is True:
        return PredictionCache()
    if cache is False:
        return None
    if isinstance(cache, PredictionCache):
        return cache
    return PredictionCache(cache)


@contextlib.contextmanager
def _quiet(predictor):
    """Silence the predictor's own progress bar while the runner shows one."""
    had = hasattr(predictor, "progress")
    old = getattr(predictor, "progress", None)
    if had:
        with contextlib.suppress(Exception):
            predictor.progress = False
    try:
        yield
    finally:
        if had:
            with contextlib.suppress(Exception):
                predictor.progress = old


def predict(predictor, items, *, cache=True, engine="local", chunk_size: int | None = None,
            progress: bool = False, kind: str | None = None):
    """Predictions for ``items`` through the cache and an engine.

    Parameters
    ----------
    predictor : a classifier (``predict_proba``, ``class_names``) or a tagger
        (``predict``, ``tag_names``).
    items : texts (classifier) or token lists (tagger).
    cache : True (default folder), False (no cache), a folder or a
        :class:`~bias_suite.predict.cache.PredictionCache`. Predictors
        without ``fingerprint()`` are never cached (``stats.cache_note`` says so).
    engine : ``"local"``, ``"ray"`` or an engine object (see
        :mod:`bias_suite.predict.engines`).
    chunk_size : inputs per chunk (one predictor call, one cache commit);
        default ``8 x predictor.batch_size`` (512 for batch size 64).
    progress : show a progress bar over the inputs still to predict.
    kind : force ``"classification"`` or ``"sequence_labelling"``.

    Returns
    -------
    result : ``(n, C)`` probabilities (classifier) or ``(tags, probs)`` (tagger),
        in the order of ``items``.
    stats : :class:`PredictionStats`.

    Probability rows that miss summing to 1 by more than 1e-3 but at most
    1e-2 (probabilities rounded to a few decimals) are divided by their sums
    before they are stored or returned, with one :class:`ProbabilityWarning`
    saying how many (``stats.extra["renormalised"]``); rows further off are
    an error.
    """
    from bias_suite.predict.engines import get_engine

    t0 = time.perf_counter()
    task = make_task(predictor, kind)
    items = task.check(items)
    eng = get_engine(engine)
    stats = PredictionStats(inputs=len(items), engine=eng.name)
    if chunk_size is None:
        chunk_size = BATCHES_PER_CHUNK * int(getattr(predictor, "batch_size", 64) or 64)
    if not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise BiasSuiteError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    if not items:
        stats.seconds = time.perf_counter() - t0
        return task.finish(Outputs.empty(task.width, task.with_tags)), stats

    keys = task.keys(items)
    ukeys, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    stats.distinct = len(ukeys)

    store = None
    store_cache = resolve_cache(cache)
    if store_cache is None:
        stats.cache_note = "cache off"
    else:
        fp = fingerprint_of(predictor)
        if fp is None:
            stats.cache_note = f"cache not used: {model_name(predictor)} has no fingerprint()"
        else:
            store = store_cache.store(fp, task.kind, task.width, task.with_tags)
            stats.cache = str(store.path)
    try:
        if store is not None:
            hit, cached = store.lookup(ukeys)
        else:
            hit, cached = np.zeros(len(ukeys), dtype=bool), Outputs.empty(task.width, task.with_tags)
        stats.cached = int(hit.sum())
        miss = np.flatnonzero(~hit)
        # longest first, the same order for every engine; a stable sort keeps ties in key order
        sizes = task.sizes([items[i] for i in first[miss]])
        miss = miss[np.argsort(-sizes, kind="stable")]
        chunks = [miss[s:s + chunk_size] for s in range(0, len(miss), chunk_size)]
        stats.chunks = len(chunks)
        parts: list[list] = [[] for _ in chunks]   # per chunk: (positions, Outputs) as they arrive
        got = np.zeros(len(chunks), dtype=np.int64)
        renormalised = 0
        if chunks:
            t1 = time.perf_counter()
            with _quiet(predictor), _bar(progress, len(miss)) as bar:
                try:
                    work = [[items[i] for i in first[c]] for c in chunks]
                    for ci, positions, out in eng.run(task, work):
                        size = len(chunks[ci])
                        positions = np.arange(size) if positions is None else np.asarray(positions, dtype=np.int64)
                        if len(out) != len(positions) or got[ci] + len(out) > size:
                            raise ModelError(f"engine {eng.name} returned {len(out)} predictions for "
                                             f"{len(positions)} inputs of a chunk of {size}")
                        if out.values.shape[1] != task.width:
                            raise ModelError(f"engine {eng.name} returned {out.values.shape[1]} columns, "
                                             f"expected {task.width}")
                        out, fixed = task.renormalise(out)
                        renormalised += fixed
                        if store is not None:  # committed at once: an interruption keeps it
                            store.put(ukeys[chunks[ci][positions]], out)
                        parts[ci].append((positions, out))
                        got[ci] += len(out)
                        stats.computed += len(out)
                        bar.update(len(out))
                except KeyboardInterrupt:
                    if store is not None:
                        log.warning("interrupted: %d of %d predictions are in the cache (%s); run again to resume",
                                    stats.cached + stats.computed, stats.distinct, store.path)
                    raise
            stats.predict_seconds = time.perf_counter() - t1
            if renormalised:
                stats.extra["renormalised"] = renormalised
                warnings.warn(f"{renormalised} of {stats.computed} probability rows of "
                              f"{model_name(predictor)} did not sum to 1 "
                              "(off by at most 0.01, as rounded probabilities are) and were renormalised",
                              ProbabilityWarning, stacklevel=2)
            short = [i for i, c in enumerate(chunks) if got[i] != len(c)]
            if short:
                raise ModelError(f"engine {eng.name} returned incomplete predictions for {len(short)} chunk(s)")
        done = [_assemble(p, len(c)) for p, c in zip(parts, chunks)]
    finally:
        if store is not None:
            store.close()

    # Distinct keys in the order [hits..., chunk 0..., chunk 1..., ...] -> key order -> input order.
    parts = [cached] + done
    order = np.concatenate([np.flatnonzero(hit)] + chunks) if chunks else np.flatnonzero(hit)
    allout = Outputs.concat(parts)
    where = np.empty(len(ukeys), dtype=np.int64)
    where[order] = np.arange(len(order))
    result = task.finish(allout.take(where[inverse]))
    stats.seconds = time.perf_counter() - t0
    return result, stats


def _assemble(parts: list, size: int) -> Outputs:
    """One chunk's Outputs in chunk order from its parts ``(positions, Outputs)``."""
    if len(parts) == 1 and np.array_equal(parts[0][0], np.arange(size)):
        return parts[0][1]
    positions = np.concatenate([p for p, _ in parts])
    if not np.array_equal(np.sort(positions), np.arange(size)):
        raise ModelError("an engine returned a chunk whose parts do not cover it exactly once")
    return Outputs.concat([o for _, o in parts]).take(np.argsort(positions, kind="stable"))


@contextlib.contextmanager
def _bar(enabled: bool, total: int):
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc="Predicting", unit="input", disable=not enabled, leave=False)
    try:
        yield bar
    finally:
        bar.close()
