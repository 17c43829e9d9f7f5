"""The Ray engine: chunks of a prediction plan on a pool of predictor actors.

``engine="ray"`` (CLI ``--engine ray``) runs the chunks that
:func:`bias_suite.predict.runner.predict` could not find in the cache on a
`Ray Data <https://docs.ray.io/en/latest/data/data.html>`_ actor pool: each
actor loads the model once and then predicts whole chunks, one call per
chunk. Only inference scales out; de-duplication, the cache, metrics,
statistics and reports stay on the driver (this process), so a run gives the
same numbers with either engine.

One machine with several GPUs
    ``bias-suite run ... --engine ray`` starts a local Ray instance, puts one
    actor on each GPU (``num_gpus=1`` each; the model is loaded on
    ``"cuda"``, which Ray maps to the actor's own GPU) and stops Ray again at
    the end. Without GPUs it runs one actor per CPU slot
    (``num_cpus_per_worker`` CPUs and torch threads each).

A cluster
    On the head node ``ray start --head``, on every other node
    ``ray start --address=<head ip>:6379``; then run on the head node with
    ``--engine ray --ray-address auto`` (or from elsewhere with
    ``--ray-address ray://<head ip>:10001``). Every node needs the same
    ``bias_suite`` (and model dependencies) installed, and models given as a
    local folder must exist at the same path on every node (or be hub ids).
    The pool then spans the cluster: one actor per GPU of the cluster.

How it maps onto Ray Data: the runner's chunks become a dataset with one
**row per chunk** (chunk index, size and the inputs as one JSON string),
each row in its own block. ``map_batches(batch_size=1)`` therefore hands
every actor call exactly one row, i.e. exactly one of the runner's chunks:
never a part of one (a row cannot be split), never two merged (and the actor
predicts each row it gets on its own). This is what makes the engine's
batches, and so its numbers, identical to the local engine's. Each call
returns one row with the chunk's :class:`~bias_suite.predict.outputs.Outputs`
as raw little-endian bytes (probabilities float64, offsets int64, tag ids
int32), so the driver gets the worker's numbers bit for bit; the driver
streams the rows back as they finish and the runner commits each chunk to
the cache at once (an interrupted run resumes where it stopped).

Predictors travel as a *spec* when they have ``spec()`` (the actor loads the
weights itself, on its own device) and as the pickled object otherwise (see
:func:`~bias_suite.predict.specs.predictor_spec`).
"""
from __future__ import annotations

import contextlib
import json
import logging
import sys
from typing import Any, Iterator

import numpy as np

from bias_suite.exceptions import BiasSuiteError, ModelError, option
from bias_suite.predict.outputs import Outputs

__all__ = ["RayEngine"]

log = logging.getLogger(__name__)

_INSTALL_HINT = 'the Ray engine needs Ray Data: pip install "ray[data]"'


def _import_ray():
    try:
        import ray
        import ray.data  # noqa: F401  (ray without the [data] extra lacks pandas/pyarrow)
    except ImportError as e:
        raise ModelError(f"{_INSTALL_HINT} ({e})") from None
    return ray


# --------------------------------------------------------------------- wire format
def _encode_items(kind: str, items) -> str:
    """The inputs of one chunk as one ASCII JSON string (texts, or token lists).
    ``ensure_ascii`` keeps lone surrogates (valid Python, invalid UTF-8) intact
    through Arrow, which only takes valid UTF-8 strings."""
    if kind == "sequence_labelling":
        items = [list(t) for t in items]
    return json.dumps(list(items), ensure_ascii=True)


#: Columns of an output row (one per chunk); every row has all of them with the
#: same types, so blocks never disagree on their schema.
_OUT_COLUMNS = ("chunk", "n", "width", "has_tags", "values", "offsets", "tags", "error", "trace")


def _encode_outputs(index: int, out: Outputs) -> dict:
    """One output row: the chunk index and its :class:`Outputs` as raw bytes."""
    return {
        "chunk": int(index),
        "n": len(out),
        "width": int(out.values.shape[1]),
        "has_tags": int(out.tags is not None),
        "values": out.values.astype("<f8", copy=False).tobytes(),
        "offsets": out.offsets.astype("<i8", copy=False).tobytes(),
        "tags": b"" if out.tags is None else out.tags.astype("<i4", copy=False).tobytes(),
        "error": "",
        "trace": "",
    }


def _error_row(index: int, n: int, error: str, trace: str) -> dict:
    """An output row saying that chunk ``index`` failed on the worker."""
    return {"chunk": int(index), "n": int(n), "width": 0, "has_tags": 0, "values": b"", "offsets": b"",
            "tags": b"", "error": error or "unknown error", "trace": trace}


def _decode_outputs(row) -> Outputs:
    width = int(row["width"])
    values = np.frombuffer(row["values"], dtype="<f8").astype(np.float64).reshape(-1, width)
    offsets = np.frombuffer(row["offsets"], dtype="<i8").astype(np.int64)
    tags = np.frombuffer(row["tags"], dtype="<i4").astype(np.int32) if int(row["has_tags"]) else None
    out = Outputs(values, offsets, tags)
    if len(out) != int(row["n"]):
        raise ModelError(f"Ray engine: chunk {int(row['chunk'])} came back with {len(out)} predictions "
                         f"instead of {int(row['n'])}")
    return out


def _describe(e: BaseException) -> str:
    import socket

    msg = str(e).strip()
    return f"{type(e).__name__}: {msg} (on {socket.gethostname()})" if msg else \
        f"{type(e).__name__} (on {socket.gethostname()})"


# ------------------------------------------------------------------------- actor
class _ChunkWorker:
    """A Ray Data actor: rebuilds the predictor once, then predicts one chunk
    per call (used by :class:`RayEngine`; runs in the worker process).

    Errors (loading the model, or predicting a chunk) come back as an output
    row with ``error`` set instead of an exception, so the driver raises one
    short :class:`ModelError` with the worker's message and Ray does not log
    the traceback (nor retry a deterministic failure)."""

    def __init__(self, spec: dict, kind: str, use_gpu: bool, num_threads: int):
        import traceback

        self.task = None
        self.error = None
        try:
            from bias_suite.predict.specs import build_predictor
            from bias_suite.predict.outputs import make_task

            predictor = build_predictor(spec, device="cuda" if use_gpu else "cpu")
            torch = sys.modules.get("torch")  # loaded by torch predictors; plain Python ones skip it
            if torch is not None and not use_gpu:
                # the CPUs Ray reserved for this actor; the thread count also decides
                # the summation order of torch's CPU kernels (see RayEngine's notes)
                torch.set_num_threads(max(1, int(num_threads)))
            if hasattr(predictor, "progress"):
                with contextlib.suppress(Exception):
                    predictor.progress = False
            self.task = make_task(predictor, kind)
        except Exception as e:
            self.error = (f"could not build the predictor: {_describe(e)}", traceback.format_exc())

    def __call__(self, batch) -> dict:
        import traceback

        rows = []
        for index, n, payload in zip(batch["chunk"].tolist(), batch["n"].tolist(), batch["items"].tolist()):
            if self.error is not None:
                rows.append(_error_row(index, n, *self.error))
                continue
            try:
                items = json.loads(payload)
                if len(items) != n:  # cannot happen with one row per chunk; a guard, not a code path
                    raise ModelError(f"chunk {index} arrived with {len(items)} of its {n} inputs")
                out = self.task.compute(items)
                if len(out) != n:
                    raise ModelError(f"chunk {index} of {n} inputs gave {len(out)} predictions")
                rows.append(_encode_outputs(index, out))
            except Exception as e:
                rows.append(_error_row(index, n, _describe(e), traceback.format_exc()))
        return {k: np.array([r[k] for r in rows],
                            dtype=np.int64 if k in ("chunk", "n", "width", "has_tags") else object)
                for k in _OUT_COLUMNS}


# ------------------------------------------------------------------------ engine
class RayEngine:
    """Run the chunks of a prediction plan on a Ray Data actor pool.

    Inference scales (one actor per GPU, or per ``num_cpus_per_worker`` CPUs,
    across one machine or a cluster); everything else stays local: the runner
    de-duplicates, reads and writes the cache and reassembles the results on
    the driver, and metrics are computed there from the returned numbers.

    Parameters
    ----------
    address : str, optional
        An existing Ray cluster (``"auto"`` on a cluster node, or
        ``"ray://<head>:10001"``). Default: the Ray instance this process is
        already connected to, else a new local one.
    num_workers : int, optional
        Actors in the pool. Default: one per GPU of the cluster when it has
        GPUs, else ``CPUs // num_cpus_per_worker``; never more than there are
        chunks.
    num_gpus_per_worker : float, optional
        GPUs per actor. Default: 1 when the cluster has GPUs, else 0 (CPU).
        Fractions (``0.5``) put several actors on one GPU.
    num_cpus_per_worker : int
        CPUs reserved per actor; CPU actors also run torch with this many
        threads.
    init_kwargs : dict, optional
        Extra ``ray.init`` arguments when the engine connects or starts Ray
        (e.g. ``{"num_cpus": 8}`` or ``{"runtime_env": {...}}``).
    progress : bool
        Show Ray Data's progress bars (off by default; the runner has its own).

    Notes
    -----
    When the engine starts (or connects to) Ray itself it also shuts that
    connection down at the end of :meth:`run`, on errors and interrupts too;
    a Ray instance that was already running is left alone. An exception in a
    predictor on a worker stops the run and is raised here as a
    :class:`~bias_suite.exceptions.ModelError` carrying the worker's message;
    chunks finished before it are already in the cache.

    Numbers: every actor call predicts exactly one of the runner's chunks
    and the probabilities come back as float64 bytes, so a chunk gets the
    same numbers as the local engine *on the same kind of device with the
    same number of torch threads*. On CPU, torch's kernels split their sums
    by thread count: an actor runs ``num_cpus_per_worker`` threads, the
    local engine whatever this process uses (``torch.get_num_threads()``),
    and with different counts float32 models differ in the last bits
    (~1e-9 in a probability). Set both to the same count for bit-identical
    results.

    Examples
    --------
    >>> from bias_suite.predict import predict                        # doctest: +SKIP
    >>> probs, stats = predict(clf, texts, engine=RayEngine(num_workers=4))  # doctest: +SKIP
    """

    name = "ray"

    def __init__(self, address: str | None = None, num_workers: int | None = None,
                 num_gpus_per_worker: float | None = None, num_cpus_per_worker: int = 1,
                 init_kwargs: dict | None = None, progress: bool = False):
        if num_workers is not None and (not isinstance(num_workers, (int, np.integer)) or num_workers < 1):
            raise BiasSuiteError(f"num_workers must be a positive integer, got {num_workers!r}")
        if num_gpus_per_worker is not None and not (isinstance(num_gpus_per_worker, (int, float))
                                                    and num_gpus_per_worker >= 0):
            raise BiasSuiteError(f"num_gpus_per_worker must be a number >= 0, got {num_gpus_per_worker!r}")
        if not isinstance(num_cpus_per_worker, (int, np.integer)) or num_cpus_per_worker < 1:
            raise BiasSuiteError(f"num_cpus_per_worker must be a positive integer, got {num_cpus_per_worker!r}")
        self.address = address
        self.num_workers = None if num_workers is None else int(num_workers)
        self.num_gpus_per_worker = num_gpus_per_worker
        self.num_cpus_per_worker = int(num_cpus_per_worker)
        self.init_kwargs = dict(init_kwargs or {})
        self.progress = bool(progress)

    def __repr__(self) -> str:
        return (f"RayEngine(address={self.address!r}, num_workers={self.num_workers}, "
                f"num_gpus_per_worker={self.num_gpus_per_worker}, num_cpus_per_worker={self.num_cpus_per_worker})")

    # ------------------------------------------------------------- connection
    def _connect(self, ray) -> bool:
        """Connect to Ray; True when this call started the connection (then
        :meth:`run` shuts it down again)."""
        if ray.is_initialized():
            return False
        kw: dict[str, Any] = {"logging_level": logging.WARNING}
        if self.address:
            kw.update(self.init_kwargs)
            kw["address"] = self.address
            where = f"the Ray cluster at {self.address!r}"
        else:
            kw.update(include_dashboard=False)
            kw.update(self.init_kwargs)
            where = "a local Ray instance"
        try:
            ray.init(**kw)
        except Exception as e:
            raise ModelError(f"could not start or connect to {where}: {type(e).__name__}: {e}") from e
        return True

    def _pool(self, ray, n_chunks: int) -> tuple[int, float]:
        """``(actors, GPUs per actor)`` for this cluster and plan."""
        res = ray.cluster_resources()
        gpus = float(res.get("GPU", 0) or 0)
        cpus = float(res.get("CPU", 0) or 0)
        per_gpu = self.num_gpus_per_worker
        if per_gpu is None:
            per_gpu = 1.0 if gpus >= 1 else 0.0
        if per_gpu > 0 and gpus <= 0:
            raise ModelError(f"num_gpus_per_worker={per_gpu} but the Ray cluster has no GPUs")
        # an actor that fits on no node would wait for one forever
        largest = None
        with contextlib.suppress(Exception):  # node listing is best effort (e.g. Ray Client)
            nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
            if nodes:
                largest = (max(float(r.get("CPU", 0) or 0) for r in nodes),
                           max(float(r.get("GPU", 0) or 0) for r in nodes))
        if largest is not None and (self.num_cpus_per_worker > largest[0] or per_gpu > largest[1]):
            raise ModelError(f"a Ray actor needs {self.num_cpus_per_worker} CPU(s) and {per_gpu:g} GPU(s), "
                             f"but the largest node has {largest[0]:g} CPU(s) and {largest[1]:g} GPU(s)")
        fits = int(gpus // per_gpu + 1e-9) if per_gpu > 0 else int(cpus // self.num_cpus_per_worker)
        if self.num_workers is not None and self.num_workers > max(fits, 1):
            # Ray would start only the actors that fit and leave the rest pending (its
            # warnings, and a progress bar that stalls): say so instead
            need = (f"{per_gpu:g} GPU(s)" if per_gpu > 0 else f"{self.num_cpus_per_worker:g} CPU(s)")
            have = f"{gpus:g} GPU(s)" if per_gpu > 0 else f"{cpus:g} CPU(s)"
            ask = max(fits, 1)
            raise ModelError(f"{option('num_workers=', '--num-workers ')}{self.num_workers}: each worker needs {need} "
                             f"and the Ray cluster has {have}, room for {fits} worker(s); use "
                             f"{option(f'num_workers={ask}', f'--num-workers {ask}')} or fewer, "
                             "or leave it out to use what the cluster has")
        size = self.num_workers if self.num_workers is not None else fits
        return max(1, min(size, n_chunks)), float(per_gpu)

    # -------------------------------------------------------------------- run
    def run(self, task, work) -> Iterator[tuple[int, None, Outputs]]:
        """Predict every chunk of ``work`` on the actor pool.

        Parameters
        ----------
        task : :class:`~bias_suite.predict.outputs.ClassifierTask` or
            :class:`~bias_suite.predict.outputs.TaggerTask`.
        work : list of chunks (lists of texts, or of token lists).

        Yields
        ------
        ``(chunk_index, None, Outputs)`` as the chunks finish (any order),
        each chunk exactly once and whole (``None``: all positions).
        """
        work = list(work)
        if not work:
            return
        ray = _import_ray()
        from bias_suite.predict.specs import predictor_spec

        spec = predictor_spec(task.predictor)
        if "object" in spec:
            # Ray serializes the object with the actor's arguments; check here that it can,
            # so that an unpicklable predictor is one clear error instead of a failed pool
            from ray import cloudpickle

            try:
                cloudpickle.dumps(spec["object"])
            except Exception as e:
                raise ModelError(f"the Ray engine cannot send {type(task.predictor).__name__} to its workers: "
                                 f"it has no spec() and cannot be pickled ({type(e).__name__}: {e})") from e
        started = self._connect(ray)
        try:
            yield from self._run(ray, task, work, spec)
        finally:
            if started:
                with contextlib.suppress(Exception):
                    ray.shutdown()

    def _run(self, ray, task, work, spec) -> Iterator[tuple[int, None, Outputs]]:
        size, per_gpu = self._pool(ray, len(work))
        use_gpu = per_gpu > 0
        with _data_context(ray, progress=self.progress):
            # One row and one block per chunk (see the module doc). from_items builds
            # the blocks here; from_pandas would run a remote metadata task per
            # frame, which waits for free CPUs while a previous pool shuts down.
            rows = [{"chunk": i, "n": len(items), "items": _encode_items(task.kind, items)}
                    for i, items in enumerate(work)]
            ds = ray.data.from_items(rows, override_num_blocks=len(rows))
            ds = ds.map_batches(
                _ChunkWorker,
                batch_size=1,
                batch_format="pandas",
                compute=ray.data.ActorPoolStrategy(size=size),
                # GPU actors reserve CPUs only when asked for more than one: Ray Data
                # calls mixing num_cpus and num_gpus "experimental" and warns
                num_cpus=None if use_gpu and self.num_cpus_per_worker == 1 else self.num_cpus_per_worker,
                num_gpus=per_gpu if use_gpu else None,
                fn_constructor_kwargs={"spec": spec, "kind": task.kind, "use_gpu": use_gpu,
                                       "num_threads": self.num_cpus_per_worker},
            )
            seen = np.zeros(len(work), dtype=bool)
            batches = iter(ds.iter_batches(batch_format="pandas", batch_size=None))
            try:
                while True:
                    try:
                        batch = next(batches)
                    except StopIteration:
                        break
                    except Exception as e:  # not KeyboardInterrupt: that stays what it is
                        raise _worker_error(e) from e
                    for row in batch.to_dict("records"):
                        index = int(row["chunk"])
                        if row["error"]:
                            log.debug("Ray worker traceback for chunk %d:\n%s", index, row["trace"])
                            err = ModelError(f"prediction failed on a Ray worker (chunk {index} of "
                                             f"{len(work)}): {row['error']}")
                            err.worker_traceback = row["trace"]
                            raise err
                        if not 0 <= index < len(work) or seen[index]:
                            raise ModelError(f"Ray engine: chunk {index} came back "
                                             f"{'twice' if 0 <= index < len(work) else 'but was never sent'}")
                        seen[index] = True
                        out = _decode_outputs(row)
                        yield index, None, out  # a whole chunk
            finally:
                close = getattr(batches, "close", None)
                if close is not None:
                    with contextlib.suppress(Exception):
                        close()
            if not seen.all():
                raise ModelError(f"Ray engine: {int((~seen).sum())} of {len(work)} chunk(s) never came back")


@contextlib.contextmanager
def _data_context(ray, *, progress: bool):
    """Quiet Ray Data settings for the duration of a run (restored after)."""
    ctx = ray.data.DataContext.get_current()
    settings = {
        "enable_progress_bars": progress,
        "enable_operator_progress_bars": progress,
        "print_on_execution_start": progress,
        "enable_auto_log_stats": False,
        "raise_original_map_exception": False,
        "max_errored_blocks": 0,
    }
    old = {k: getattr(ctx, k) for k in settings if hasattr(ctx, k)}
    for k, v in settings.items():
        if k in old:
            setattr(ctx, k, v)
    data_log = logging.getLogger("ray.data")
    old_level = data_log.level
    if not progress:
        # "Dataset ... execution finished" and such are INFO; warnings still show
        data_log.setLevel(logging.WARNING)
        with contextlib.suppress(Exception):  # Ray Data warns once that its bars are off: we know
            from ray.util.debug import log_once

            log_once("ray_data_progress_manager_disabled")
    try:
        yield ctx
    finally:
        for k, v in old.items():
            setattr(ctx, k, v)
        data_log.setLevel(old_level)


def _worker_error(e: BaseException) -> ModelError:
    """A short :class:`ModelError` for an exception Ray raised on the driver
    (a worker that died, an argument that could not be unpickled there, ...):
    the last line of Ray's message, which names the worker's exception."""
    text = str(e).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    noise = ("Failed to apply UDF", "To change retry attempts", "UDF failed to process")
    useful = [ln for ln in lines if not ln.startswith(noise)]
    msg = useful[-1] if useful else (lines[-1] if lines else "")
    return ModelError(f"prediction failed on a Ray worker: {type(e).__name__}: {msg}")
