"""The bootstrap's closed form on sequence-labelling (NER) data: per-sentence
span counts, token probability items and aligned counterfactual positions
weighted by template (and term) weights must give the replicates of
evaluating every resample again, and the term breakdown by term weights
the values of evaluating the kept rows again."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_suite.families import as_scored
from bias_suite.families.sequence.scored import check_sequence_scored
from bias_suite.metrics import compute as evaluate
from bias_suite.stats.bootstrap import bootstrap, resampling_bootstrap
from test_scope import kept_terms_both_ways
from test_two_way import _as_dict, _same

TYPES = ("PER", "LOC")
TAGS = ["O"] + [f"{p}-{t}" for t in TYPES for p in "BILU"]
GROUPS = {"a": ["Ann", "Bea Lee"], "b": ["Cal", "Dan"], "c": ["Eve", "Fay"]}
#: identity term first or later; a context place in some templates
FRAMES = [["{X}", "met", "us", "."], ["We", "saw", "{X}", "in", "Rome", "."], ["{X}", "left", "Paris", "today", "."],
          ["Then", "{X}", "spoke", "."]]


def _probs(gold: str, p_right: float, rng) -> dict:
    """A token's tag distribution: ``p_right`` on the gold tag, the rest spread."""
    rest = rng.dirichlet(np.ones(len(TAGS) - 1)) * (1 - p_right)
    out = dict(zip([t for t in TAGS if t != gold], rest.tolist()))
    out[gold] = p_right
    return out


def ner_table(n_templates=8, seed=0, miss=None):
    """Attribute "names", groups a, b, c of two terms each (one of two
    tokens); every template holds every term once. ``miss``: {term: how much
    less probability the identity term's gold tag gets}."""
    rng = np.random.default_rng(seed)
    miss = miss or {}
    rows = []
    for j in range(n_templates):
        frame = FRAMES[j % len(FRAMES)]
        for g, terms in GROUPS.items():
            for term in terms:
                toks, tags, probs, span = [], [], [], None
                for w in frame:
                    if w == "{X}":
                        parts = term.split()
                        span = [len(toks), len(toks) + len(parts)]
                        gold = ["U-PER"] if len(parts) == 1 else ["B-PER", "L-PER"]
                        base = 0.75 - miss.get(term, 0.0)
                        for p, t in zip(parts, gold):
                            toks.append(p)
                            tags.append(t)
                            probs.append(_probs(t, float(np.clip(base + rng.normal(0, 0.15), 0.05, 0.99)), rng))
                    else:
                        t = "U-LOC" if w in ("Rome", "Paris") else "O"
                        toks.append(w)
                        tags.append(t)
                        probs.append(_probs(t, float(np.clip(0.8 + rng.normal(0, 0.1), 0.3, 0.99)), rng))
                pred = [max(p, key=p.get) for p in probs]
                rows.append(dict(id=f"r{len(rows)}", template=f"t{j}", attribute="names", group=g, term=term,
                                 tokens=toks, tags=tags, pred_tags=pred, term_span=span, tag_probs=probs))
    return check_sequence_scored(pd.DataFrame(rows))


def test_the_sequence_family_takes_the_closed_form():
    data = ner_table()
    res = evaluate(data, metrics=["FNED", "CFGap"])
    bs = bootstrap(data, res, metrics=["FNED", "CFGap"], B=20, seed=1)
    assert bs.results["ci_low"].notna().any()


@pytest.mark.parametrize("weighting", ["pooled", "balanced"])
@pytest.mark.parametrize("terms", [False, True])
def test_closed_form_equals_evaluating_every_resample_again(weighting, terms):
    """Every tuple kept (no sampling): the closed form gives the replicates
    of evaluating every resample again for every metric the family reports,
    span rates, identity-span rates, probability sets and counterfactual
    positions, AEG aside (that path counts the pairs between copies of a
    template, which the closed form leaves out)."""
    data = ner_table(seed=3, miss={"Cal": 0.3, "Bea Lee": 0.2})
    res = evaluate(data, max_tuples=None, weighting=weighting)
    slow = resampling_bootstrap(data, res, B=6, seed=2, max_tuples=None, keep_replicates=True, n_jobs=1,
                                weighting=weighting, resample_terms=terms)
    fast = bootstrap(data, res, B=6, seed=2, max_tuples=None, keep_replicates=True, weighting=weighting,
                     resample_terms=terms, tuples="observed")
    s, f = _as_dict(slow.keys, slow.replicates), _as_dict(fast.keys, fast.replicates)
    common = {k for k in set(s) & set(f) if "AEG" not in k[1]}
    names = {k[1] for k in common if np.isfinite(f[k]).any()}
    assert {"FNED", "TPR-Gap", "CFGap", "CFGap-TC", "AvgIF", "IdentitySpan-FNED", "IdentitySpan-CFGap",
            "SubgroupAUC", "AvgGF", "PertSS"} <= names
    assert not [k for k in common if not _same(s[k], f[k])]
    # what only the resampling path lists is undefined in every resample there
    assert all(np.isnan(s[k]).all() for k in set(s) - set(f))
    assert fast.basis["terms_resampled"].any() == terms


def test_term_breakdown_by_term_weights_equals_the_kept_rows(monkeypatch):
    data = as_scored(ner_table(seed=5, miss={"Cal": 0.3}))
    metrics = ["FNED", "TPR-Gap", "CFGap", "IdentitySpan-FNED", "IdentitySpan-CFGap", "PosAEG", "PertSS"]
    kept = kept_terms_both_ways(monkeypatch, data, metrics, "balanced", attribute="names")
    assert len(kept) == 6  # every kept term by term weights
