"""The closed-form bootstrap on several cores: the compiled loops in
threads (resamples cut into blocks) and the attributes in forked processes
give exactly the values of one thread in one process; a forked child whose
parent ran threaded loops runs its own; no fork, one process."""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from bias_suite.stats.bootstrap import bootstrap, kernels, resamples
from test_bootstrap import small_table
from test_kernels import _blocks, _kt, items


def _static_u2(x, n):
    seg = np.zeros(n, bool)
    if n:
        seg[0] = True
    low = (np.arange(n) % 2 == 0)
    high = ~low | (np.arange(n) % 3 == 0)
    cell = np.arange(n, dtype=np.int64) % 2
    return low, high, _blocks(x, np.zeros(n)), seg, cell, 2


@settings(max_examples=60, deadline=None)
@given(items(max_n=30))
def test_every_kernel_in_threads_equals_one_thread(it):
    old = kernels.MIN_THREADED_WORK
    kernels.MIN_THREADED_WORK = 0  # split even the smallest inputs
    try:
        W, T, x, g, tpl, term, k = it["W"], it["T"], it["x"], it["g"], it["tpl"], it["term"], it["k"]
        W = np.repeat(W, 3, axis=0)  # more resamples than threads, cut unevenly
        T = np.repeat(T, 3, axis=0)
        mult = it["mult"].astype(np.int64)
        n = x.size
        dx = np.r_[np.diff(x), 0.0] if n else np.zeros(0)
        pa = np.array([a for a in range(k) for b in range(a + 1, k)], np.int64)
        pb = np.array([b for a in range(k) for b in range(a + 1, k)], np.int64)
        ends = np.r_[pa, pb]
        pair_of = (np.argsort(ends, kind="stable") % max(pa.size, 1)).astype(np.int64)
        pair_start = np.r_[0, np.cumsum(np.bincount(ends, minlength=k))].astype(np.int64)
        Tw = T if T.shape[1] else np.ones((W.shape[0], 1), np.int32)
        termw = term if T.shape[1] else np.zeros(n, np.int64)
        order = np.lexsort((x, tpl))
        new_template = np.r_[True, tpl[order][1:] != tpl[order][:-1]] if n else np.zeros(0, bool)
        exact = _kt(W, T, np.int64)
        floats = _kt(W, T)
        calls = [
            (kernels.u2_cells, (*exact, tpl, term, mult, *_static_u2(x, n))),
            (kernels.w1_groups, (*floats, tpl, term, mult, g, dx, k, True)),
            (kernels.w1_pairs, (*floats, tpl, term, mult, g, x, k, pa, pb, pair_start, pair_of)),
            (kernels.within_template_pairs, (*_kt(W, Tw), tpl[order], termw[order], mult[order].astype(float),
                                             g[order], _blocks(x[order], tpl[order]), new_template, k)),
            (kernels.tuple_weights, (*_kt(W, Tw), tpl, np.c_[termw, termw])),
        ]
        if n:  # per template and group: the items' terms with their score sums and counts
            J = int(tpl.max()) + 1
            key = (tpl * k + g) * (termw.max() + 1) + termw
            uniq, inv = np.unique(key, return_inverse=True)
            cells = (np.searchsorted(uniq // (termw.max() + 1), np.arange(J * k + 1)).astype(np.int64),
                     (uniq % (termw.max() + 1)).astype(np.int64), np.bincount(inv, weights=x),
                     np.bincount(inv).astype(float))
            calls.append((kernels.template_mean_gaps, (*_kt(W, Tw), np.arange(J, dtype=np.int64), *cells, pa, pb,
                                                       True, 1e-9)))
        for kernel, args in calls:
            one = kernel(*args)
            for threads in (2, 3):
                with kernels.kernel_threads(threads):
                    got = kernels.by_resamples(kernel, *args, items=n)
                for a, b in zip(one if isinstance(one, tuple) else (one,), got if isinstance(got, tuple) else (got,)):
                    assert a.shape == b.shape and a.shape[-1] == W.shape[0]
                    np.testing.assert_array_equal(a, b)  # the same operations per resample: the same bits
    finally:
        kernels.MIN_THREADED_WORK = old


def test_forked_map_runs_in_other_processes_and_keeps_the_order():
    got = resamples.forked_map(lambda v: (v * v, os.getpid()), list(range(7)), 2, cost=[1, 9, 2, 8, 3, 7, 4])
    assert [v for v, _ in got] == [v * v for v in range(7)]
    assert os.getpid() not in {p for _, p in got}
    here = resamples.forked_map(lambda v: os.getpid(), [1, 2], 1)
    assert here == [os.getpid()] * 2


def test_forked_map_without_a_fork_runs_here(monkeypatch):
    import concurrent.futures

    class NoFork:
        def __init__(self, *a, **kw):
            raise OSError("no fork here")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", NoFork)
    assert resamples.forked_map(lambda v: (v, os.getpid()), [1, 2, 3], 2) == [(v, os.getpid()) for v in (1, 2, 3)]


def test_a_forked_child_runs_its_own_kernel_threads(monkeypatch):
    """The parent's thread pool does not survive a fork: the child makes its
    own instead of waiting forever on threads it does not have."""
    monkeypatch.setattr(kernels, "MIN_THREADED_WORK", 0)
    W, T = kernels.draws_for_kernels(np.arange(12).reshape(6, 2), np.ones((6, 1)), np.float64)
    tpl = np.array([0, 1, 1], np.int64)
    members = np.zeros((3, 1), np.int64)
    want = kernels.tuple_weights(W, T, tpl, members)
    with kernels.kernel_threads(2):
        kernels.by_resamples(kernels.tuple_weights, W, T, tpl, members, items=3)  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: exit 0 when it starts without the parent's pool and its threaded loop works
        try:
            if kernels._POOL is not None:
                os._exit(3)
            with kernels.kernel_threads(2):
                got = kernels.by_resamples(kernels.tuple_weights, W, T, tpl, members, items=3)
            os._exit(0 if np.array_equal(got, want) else 1)
        except BaseException:
            os._exit(2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child's threaded loop did not finish within 60 s")


@pytest.mark.parametrize("resample_terms", [False, True], ids=["templates", "templates-and-terms"])
def test_bootstrap_in_processes_equals_one_process(resample_terms):
    data = small_table(n_templates=12, terms=3, seed=4, round_to=1)
    one = bootstrap(data, B=30, seed=2, keep_replicates=True, n_jobs=1, resample_terms=resample_terms)
    two = bootstrap(data, B=30, seed=2, keep_replicates=True, n_jobs=2, resample_terms=resample_terms)
    assert len(one.keys) > 50
    pd.testing.assert_frame_equal(one.keys, two.keys)
    np.testing.assert_array_equal(one.replicates, two.replicates)
    np.testing.assert_array_equal(one.basis_replicates, two.basis_replicates)
    pd.testing.assert_frame_equal(one.results, two.results)
    pd.testing.assert_frame_equal(one.basis, two.basis)


def test_a_killed_worker_leaves_the_values_of_one_process(monkeypatch, caplog):
    """A forked worker killed by a signal (the out-of-memory killer, say)
    does not leave the bootstrap waiting: the units run in this process."""
    import logging

    import bias_suite.stats.bootstrap as bsm

    data = small_table(n_templates=8, seed=6)
    one = bootstrap(data, B=20, seed=1, keep_replicates=True, n_jobs=1)
    parent, real = os.getpid(), bsm._kind_replicates

    def run_or_die(*a, **kw):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*a, **kw)

    monkeypatch.setattr(bsm, "_kind_replicates", run_or_die)
    with caplog.at_level(logging.WARNING, logger="bias_suite.stats.bootstrap.resamples"):
        two = bootstrap(data, B=20, seed=1, keep_replicates=True, n_jobs=2)
    assert "worker process stopped" in caplog.text
    np.testing.assert_array_equal(one.replicates, two.replicates)
    pd.testing.assert_frame_equal(one.results, two.results)


def test_kernel_thread_count(monkeypatch):
    monkeypatch.delenv("BIAS_SUITE_JOBS", raising=False)
    monkeypatch.setattr(resamples.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert resamples.kernel_thread_count(None) == resamples.MAX_AUTO_JOBS
    monkeypatch.setattr(resamples.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert resamples.kernel_thread_count(None) == 1
    assert resamples.kernel_thread_count(3) == 3 and resamples.kernel_thread_count(0) == 1
    monkeypatch.setenv("BIAS_SUITE_JOBS", "2")
    assert resamples.kernel_thread_count(None) == 2


def test_a_second_bootstrap_of_the_data_reuses_its_evidence_counts(monkeypatch):
    """The event-template counts and paired bounds depend on the observed
    data alone: a second bootstrap of the same data (the reading beyond the
    listed terms) takes them from the first, with the same result as counting
    again, in one process or in several."""
    import bias_suite.stats.bootstrap as bsm

    data = small_table(n_templates=10, seed=8, round_to=1)
    first = bootstrap(data, B=20, seed=1, resample_terms=True, n_jobs=1)
    counted = []
    real = bsm._evidence_of
    monkeypatch.setattr(bsm, "_evidence_of", lambda *a: counted.append(a) or real(*a))
    for jobs in (1, 2):
        again = bootstrap(data, B=20, seed=1, resample_terms=True, n_jobs=jobs)
        pd.testing.assert_frame_equal(first.results, again.results)
        pd.testing.assert_frame_equal(first.basis, again.basis)
    assert counted == []
    fresh = bootstrap(small_table(n_templates=10, seed=8, round_to=1), B=20, seed=1, resample_terms=True, n_jobs=1)
    assert counted  # new data: counted anew
    pd.testing.assert_frame_equal(first.results, fresh.results)
    pd.testing.assert_frame_equal(first.basis, fresh.basis)
    assert first.basis["paired"].notna().any() and first.basis["event_templates"].notna().any()
