"""Two-way cluster bootstrap: templates and identity terms resampled
(bias_suite.stats.bootstrap with bias_suite.stats.terms).

The closed form must give the generic path's replicate values (resample
templates and terms, then the engine's own code) for every named metric,
on full and ragged designs; groups with one term must give exactly the
template-only replicates; and on data with a real term-level effect,
template-only intervals under-cover while two-way intervals cover.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_suite.families import scored_from_arrays
from bias_suite.metrics import evaluate
from bias_suite.metrics.catalog import NAMED_METRICS
from bias_suite.stats import bootstrap as bsm
from bias_suite.stats.bootstrap import bootstrap, bootstrap_replicates
from bias_suite.stats.terms import attribute_terms, draw_term_weights, term_weights
from bias_suite.exceptions import MetricError
from bias_suite.suites.views import counterfactual_view

CLASSES = ("neg", "neu", "pos")


def ragged_table(n_templates=12, seed=0, keep=0.75, dup=0.15, unlabelled=0.1):
    """Attribute "attr": groups a (3 terms), b (2 terms), c (1 term); each
    template holds a random subset of the terms (some templates lack a
    group), some (template, term) cells hold two examples; attribute
    "one": two groups of one term each."""
    rng = np.random.default_rng(seed)
    rows, P = [], []
    terms = {"a": ["a0", "a1", "a2"], "b": ["b0", "b1"], "c": ["c0"]}
    for attr, tg in (("attr", terms), ("one", {"x": ["x0"], "y": ["y0"]})):
        for j in range(n_templates):
            gold = CLASSES[rng.integers(3)]
            for gi, (g, ts) in enumerate(tg.items()):
                for t in ts:
                    if attr == "attr" and rng.random() > keep:
                        continue
                    for _ in range(1 + int(rng.random() < dup)):
                        lab = None if rng.random() < unlabelled else (gold if rng.random() < 0.75 else CLASSES[rng.integers(3)])
                        rows.append(dict(id=f"r{len(rows)}", template=f"{attr}{j}", attribute=attr, group=g, term=t,
                                         text="x", label=lab))
                        logit = rng.normal(size=3) + 0.8 * (np.array(CLASSES) == gold) + 0.3 * gi
                        p = np.exp(logit)
                        P.append(p / p.sum())
    return scored_from_arrays(pd.DataFrame(rows), np.array(P), list(CLASSES))


def _as_dict(keys, values):
    return {tuple(k): v for k, v in zip(keys.itertuples(index=False), values)}


def _same(a, b):
    na, nb = np.isnan(a), np.isnan(b)
    return np.array_equal(na, nb) and np.allclose(a[~na], b[~nb], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_fast_path_equals_generic_path_on_a_ragged_design(seed):
    data = ragged_table(seed=seed)
    kf, vf = bootstrap_replicates(data, B=20, seed=seed, max_tuples=4, method="fast")
    kg, vg = bootstrap_replicates(data, B=20, seed=seed, max_tuples=4, method="generic")
    fast, generic = _as_dict(kf, vf), _as_dict(kg, vg)
    assert set(fast) <= set(generic)
    assert all(np.isnan(generic[k]).all() for k in set(generic) - set(fast))
    assert {k[1] for k in fast if k[0] == "attr"} == {m.name for m in NAMED_METRICS if not m.two_groups}
    bad = [k for k in fast if not _same(fast[k], generic[k])]
    assert not bad, bad[:5]
