"""The resampling bootstrap's loop: every resample of an attribute evaluated
again, in this process or in several.

Resamples are independent: resample b of an attribute is the data with
template j repeated ``W[b, j]`` times (and, where terms are resampled, each
example of term t repeated ``T[b, t]`` times inside each copy), evaluated
with the same tuple seed. So
the B resamples can be cut into contiguous chunks and evaluated by worker
processes; the values, and the order in which result keys first appear, are
those of the loop in one process. Workers are forked (Linux), so they share
the data with this process instead of receiving a copy; each uses one BLAS
thread.

How many processes: ``n_jobs`` where given, else ``$BIAS_SUITE_JOBS``, else
one per available core (at most :data:`MAX_AUTO_JOBS`) when the work is
worth a fork (:data:`MIN_PARALLEL_WORK` resampled rows or more).
"""
from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ...metrics.engine import metric_row_dicts
from .._common import single_threaded_blas
from .kernels import kernel_threads

log = logging.getLogger(__name__)

#: Resampled rows (B x the attribute's rows, summed over attributes) below
#: which the loop stays in this process (a fork and its start cost more).
MIN_PARALLEL_WORK = 50_000
#: The closed form's work (B x rows x metrics, summed over its units of work) below which it stays
#: in this process: its units then take well under a second in all.
MIN_FORKED_WORK = 20_000_000
#: Most processes chosen automatically.
MAX_AUTO_JOBS = 4
#: Chunks per process: more chunks, a finer progress bar and better balance.
CHUNKS_PER_JOB = 4


@dataclass
class AttributeResamples:
    """What the loop needs for one attribute: its rows of ``data``, their
    template codes and names, the (B, J) template weights and, where terms
    are resampled, the rows' term codes and the (B, n_terms) term weights."""

    attribute: str
    rows: np.ndarray
    codes: np.ndarray
    base_templates: np.ndarray
    weights: np.ndarray
    term_codes: np.ndarray | None = None
    term_weights: np.ndarray | None = None


def requested_jobs(n_jobs: int | None) -> int | None:
    """``n_jobs`` where given, else ``$BIAS_SUITE_JOBS`` where set, else None."""
    if n_jobs is None:
        env = os.environ.get("BIAS_SUITE_JOBS", "").strip()
        if env:
            try:
                n_jobs = int(env)
            except ValueError:
                log.warning("BIAS_SUITE_JOBS=%r is not an integer; the bootstrap runs in one process", env)
                n_jobs = 1
    return None if n_jobs is None else max(1, int(n_jobs))


def available_cores() -> int:
    """Cores this process may run on, at most :data:`MAX_AUTO_JOBS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_AUTO_JOBS))


def kernel_thread_count(n_jobs: int | None) -> int:
    """Threads of the closed form's compiled loops: ``n_jobs``, else
    ``$BIAS_SUITE_JOBS``, else one per available core (at most
    :data:`MAX_AUTO_JOBS`)."""
    asked = requested_jobs(n_jobs)
    return available_cores() if asked is None else asked


def resample_jobs(n_jobs: int | None, work: int, B: int, min_work: int = MIN_PARALLEL_WORK) -> int:
    """Processes for ``work`` resampled rows in ``B`` resamples (see the
    module doc), or ``work`` of another kind worth a fork from ``min_work``
    on; at most ``B``."""
    n_jobs = requested_jobs(n_jobs)
    if n_jobs is None:
        if work < min_work:
            return 1
        n_jobs = available_cores()
    n_jobs = max(1, min(int(n_jobs), B))
    if n_jobs > 1 and not can_fork():
        return 1
    return n_jobs


def can_fork() -> bool:
    import multiprocessing as mp

    if not sys.platform.startswith("linux") or "fork" not in mp.get_all_start_methods():
        return False
    if mp.current_process().daemon:             # daemonic processes may not have children
        return False
    ray = sys.modules.get("ray")
    # a connected Ray driver runs gRPC threads, which do not survive a fork
    return not (ray is not None and getattr(ray, "is_initialized", lambda: False)())


def evaluate_resamples(data, parts: Sequence[AttributeResamples], specs, *, max_tuples, seed,
                       group_order_override, n_jobs: int | None = None, weighting: str = "balanced") -> list[dict]:
    """Per attribute of ``parts``: {(attribute, metric, class, group or
    None): (B,) values} over its resamples (NaN where undefined), in
    :func:`resample_jobs` processes."""
    from concurrent.futures.process import BrokenProcessPool

    from tqdm.auto import tqdm

    task = _Task(data, list(parts), specs, max_tuples, seed, group_order_override, weighting)
    B = max((p.weights.shape[0] for p in task.parts), default=0)
    jobs = resample_jobs(n_jobs, sum(p.weights.shape[0] * len(p.rows) for p in task.parts), max(B, 1))
    if jobs > 1:
        try:
            return _in_processes(task, jobs)
        except (OSError, AssertionError) as e:   # no fork here (limits, a daemonic process): one process
            log.info("the bootstrap runs in one process (%s: %s)", type(e).__name__, e)
        except BrokenProcessPool as e:           # a worker was killed (e.g. out of memory): one process
            log.warning("a bootstrap worker process stopped (%s); evaluating the resamples in this process", e)
    out = []
    for i, part in enumerate(task.parts):
        # every resample is evaluated again (seconds per attribute at B = 200): show it on a terminal
        with tqdm(total=part.weights.shape[0], desc=f"intervals for {part.attribute} (every resample evaluated)",
                  unit="resample", disable=None, leave=False) as bar:
            out.append(task.run(i, 0, part.weights.shape[0], done=bar.update))
    return out


@dataclass
class _Task:
    data: Any
    parts: list
    specs: list
    max_tuples: Any
    seed: Any
    group_order_override: Any
    weighting: str = "balanced"

    def run(self, i: int, start: int, stop: int, done=None) -> dict:
        """Values of attribute ``i`` in resamples ``start:stop``: {key: (stop
        - start,) array}, keys in order of first appearance; ``done(1)``
        after each resample."""
        part = self.parts[i]
        out: dict = {}
        rows, codes, base = part.rows, part.codes, part.base_templates
        for b in range(start, stop):
            reps = part.weights[b][codes]
            if part.term_weights is not None:  # a row of term t: T[b, t] times in each copy of its template
                tr = part.term_weights[b][part.term_codes]
                reps = reps * tr
            pick = np.repeat(np.arange(len(rows)), reps)
            copy = np.arange(len(pick)) - np.repeat(np.cumsum(reps) - reps, reps)
            if part.term_weights is not None:
                copy = copy // tr[pick]
            labels = np.char.add(np.char.add(base[pick], "#"), copy.astype(str))
            sub = self.data.take(rows[pick], templates=labels)
            for r in metric_row_dicts(sub, metrics=self.specs, attributes=[part.attribute],
                                      max_tuples=self.max_tuples, seed=self.seed,
                                      group_order_override=self.group_order_override,
                                      weighting=self.weighting):
                g, v = r["group"], r["value"]
                key = (part.attribute, r["metric"], r["class"], g if isinstance(g, str) else None)
                if key not in out:
                    out[key] = np.full(stop - start, np.nan)
                if v is not None and not pd.isna(v):
                    out[key][b - start] = float(v)
            if done is not None:
                done(1)
        return out


def _merge(vals: dict, got: dict, start: int, stop: int, B: int) -> None:
    for key, v in got.items():
        if key not in vals:
            vals[key] = np.full(B, np.nan)
        vals[key][start:stop] = v


#: The tasks of the running parallel loops by token, inherited by the forked workers.
_TASKS: dict[int, _Task] = {}


def _chunk(args) -> tuple:
    token, i, start, stop = args
    with single_threaded_blas():
        return i, start, stop, _TASKS[token].run(i, start, stop)


def _in_processes(task: _Task, jobs: int) -> list[dict]:
    """The loop in ``jobs`` forked processes; a worker that dies (a signal,
    the out-of-memory killer) raises ``BrokenProcessPool`` instead of
    leaving the loop waiting."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from tqdm.auto import tqdm

    token = id(task)
    chunks = []
    for i, part in enumerate(task.parts):
        B = part.weights.shape[0]
        edges = np.linspace(0, B, min(B, jobs * CHUNKS_PER_JOB) + 1).round().astype(int)
        chunks.extend((token, i, int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a)
    total = sum(p.weights.shape[0] for p in task.parts)
    out = [{} for _ in task.parts]
    bar = tqdm(total=total, desc=f"intervals (every resample evaluated, {jobs} processes)", unit="resample",
               disable=None, leave=False)
    _TASKS[token] = task
    try:
        with ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as pool:
            # in chunk order, so keys first appear in the order of the one-process loop
            for i, start, stop, got in pool.map(_chunk, chunks):
                _merge(out[i], got, start, stop, task.parts[i].weights.shape[0])
                bar.update(stop - start)
    finally:
        _TASKS.pop(token, None)
        bar.close()
    return out


#: The calls of the running :func:`forked_map` loops by token, inherited by the forked workers.
_CALLS: dict[int, tuple] = {}


def _forked_call(args) -> tuple:
    token, i = args
    fn, items = _CALLS[token]
    with single_threaded_blas(), kernel_threads(1):  # the processes share the cores
        return i, fn(items[i])


def forked_map(fn, items: Sequence, jobs: int, cost: Sequence[float] | None = None) -> list:
    """``[fn(x) for x in items]``, in ``jobs`` forked processes where
    ``jobs > 1`` (the largest ``cost`` first, so that the processes end
    together; ``fn`` and ``items`` reach them by the fork, the results come
    back pickled) and in this process otherwise or where no process can be
    forked. Each call is independent of the others, so the results are those
    of the plain loop."""
    from concurrent.futures.process import BrokenProcessPool

    items = list(items)
    if jobs > 1 and len(items) > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        order = sorted(range(len(items)), key=lambda i: -cost[i]) if cost is not None else range(len(items))
        token = id(items)
        _CALLS[token] = (fn, items)
        out: list = [None] * len(items)
        try:
            with ProcessPoolExecutor(min(jobs, len(items)), mp_context=mp.get_context("fork")) as pool:
                for i, value in pool.map(_forked_call, [(token, i) for i in order]):
                    out[i] = value
            return out
        except (OSError, AssertionError) as e:  # no fork here (limits, a daemonic process): this process
            log.info("the bootstrap runs in one process (%s: %s)", type(e).__name__, e)
        except BrokenProcessPool as e:          # a worker was killed (e.g. out of memory): this process
            log.warning("a bootstrap worker process stopped (%s); computing in this process", e)
        finally:
            _CALLS.pop(token, None)
    return [fn(x) for x in items]
