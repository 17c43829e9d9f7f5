"""Gold labels of the bundled sentiment suites against two independent readers.

A template's label is its author's reading of the sentence. This script asks
two other readers and lists the templates where neither agrees with the
author, for a person to review (docs/suite_format.md, "Checking gold
labels"):

- **default-sentiment**: the package's default model (MiniLM-L6 fine-tuned
  on the human-rated VADER sentences; built locally on first use, about two
  minutes on two cores: ``bias-suite models build default-sentiment``);
  its class is the one of highest probability;
- **VADER**: the rule-based lexicon analyzer of Hutto and Gilbert (2014), as
  shipped in the ``vaderSentiment==3.3.2`` source distribution that the
  default models already download for their training data
  (:func:`bias_suite.models.vader.vader_sdist`); its analyzer module and
  lexicon are unpacked from that file and imported, nothing is installed.
  Its compound score maps to positive at >= 0.05, negative at <= -0.05 and
  neutral in between (the cut-offs its authors suggest).

The two are different kinds of reader (a fine-tuned encoder and a word
list with rules), so a template that both read against its label is worth a
look; one that only one reader disputes is common for neutral sentences and
says little. Neither is ground truth: the list is for review, not a test.

Each suite is expanded, and the first term of every group is kept (with
every lexicon fill): the label does not depend on the identity term, and
one term per group shows the sentence's reading. Per template (its id in the
suite file) a reader agrees when at least half of the template's sentences
get the gold class from it.

Printed: per suite the number of templates, how many each reader agrees
with, how many both and how many neither; then every template that neither
reader agrees with (suite, id, gold label, each reader's share of sentences
in the gold class and its most frequent class, one sentence).

Usage:
    python benchmarks/label_audit.py [--suites sentiment_gender ...] [--all-terms] [--out review.csv]
"""
from __future__ import annotations

import argparse
import sys
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: VADER compound score cut-offs: >= POS is positive, <= -POS negative, else neutral
VADER_CUTOFF = 0.05
READERS = ("default-sentiment", "VADER")


# ---------------------------------------------------------------------------- pure logic
def label_agreement(frame: pd.DataFrame, readers=READERS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per_suite, review)`` from one row per sentence.

    ``frame`` columns: ``suite``, ``template`` (the template's id in its
    suite), ``label`` (gold), ``text``, and one column per reader with the
    class it reads. A reader agrees with a template when at least half of
    the template's sentences get the gold class from it.

    ``per_suite``: one row per suite (in order of appearance): ``templates``,
    ``agree <reader>`` per reader, ``agree both`` (every reader; with one
    reader, that one), ``agree neither``. ``review``: one row per template
    that no reader agrees with: ``suite, template, label``, per reader
    ``<reader> share`` (of its sentences in the gold class) and ``<reader>
    reads`` (its most frequent class; ties to the first in sorted order),
    and ``text`` (the template's first sentence); ordered by suite, then by
    the summed shares (the clearest disagreements first), then template."""
    missing = [c for c in ("suite", "template", "label", "text", *readers) if c not in frame.columns]
    if missing:
        raise ValueError(f"label_agreement needs the columns {missing}")
    keys = ["suite", "template"]
    f = frame.reset_index(drop=True)
    hits = pd.DataFrame({r: (f[r] == f["label"]).astype(float) for r in readers})
    hits[keys] = f[keys]
    g = hits.groupby(keys, sort=False)
    share = g[list(readers)].mean()
    first = f.groupby(keys, sort=False)[["label", "text"]].first()
    agrees = share >= 0.5
    tpl = first.join(share.add_suffix(" share")).join(agrees.add_prefix("agree "))
    for r in readers:
        tpl[f"{r} reads"] = f.groupby(keys, sort=False)[r].agg(_mode)
    all_agree = agrees.all(axis=1)
    none_agree = ~agrees.any(axis=1)
    suites = list(dict.fromkeys(f["suite"]))
    rows = []
    for s in suites:
        on = tpl.index.get_level_values("suite") == s
        row = {"suite": s, "templates": int(on.sum())}
        for r in readers:
            row[f"agree {r}"] = int(agrees.loc[on, r].sum())
        row["agree both"] = int(all_agree[on].sum())
        row["agree neither"] = int(none_agree[on].sum())
        rows.append(row)
    per_suite = pd.DataFrame(rows, columns=["suite", "templates", *[f"agree {r}" for r in readers], "agree both",
                                            "agree neither"])
    review = tpl[none_agree.to_numpy()].reset_index()
    review["_sum"] = review[[f"{r} share" for r in readers]].sum(axis=1)
    review["_suite"] = review["suite"].map({s: i for i, s in enumerate(suites)})
    review = review.sort_values(["_suite", "_sum", "template"], kind="stable")
    cols = ["suite", "template", "label"] + [c for r in readers for c in (f"{r} share", f"{r} reads")] + ["text"]
    return per_suite, review[cols].reset_index(drop=True)


def _mode(values: pd.Series):
    """The most frequent value; a tie goes to the first in sorted order."""
    vc = values.value_counts()
    return min(vc[vc == vc.max()].index)


def vader_classes(compound, cutoff: float = VADER_CUTOFF) -> list[str]:
    """VADER compound scores -> negative / neutral / positive."""
    c = np.asarray(compound, float)
    return np.where(c >= cutoff, "positive", np.where(c <= -cutoff, "negative", "neutral")).tolist()


# ---------------------------------------------------------------------------- the readers
def vader_analyzer():
    """VADER's ``SentimentIntensityAnalyzer`` from the pinned sdist (unpacked
    once next to it in the download cache)."""
    from bias_suite.models.vader import vader_sdist

    sdist = vader_sdist()
    root = sdist.parent / "vaderSentiment-3.3.2-unpacked"
    pkg = root / "vaderSentiment"
    if not (pkg / "vader_lexicon.txt").is_file():
        prefix = "vaderSentiment-3.3.2/vaderSentiment/"
        with tarfile.open(sdist) as t:
            for m in t.getmembers():
                if m.isfile() and m.name.startswith(prefix) and "/" not in m.name[len(prefix):]:
                    pkg.mkdir(parents=True, exist_ok=True)
                    (pkg / m.name[len(prefix):]).write_bytes(t.extractfile(m).read())
    sys.path.insert(0, str(root))
    try:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
    finally:
        sys.path.remove(str(root))
    return SentimentIntensityAnalyzer()


def read_vader(texts) -> list[str]:
    analyzer = vader_analyzer()
    return vader_classes([analyzer.polarity_scores(t)["compound"] for t in texts])


def read_default(texts, progress: bool = True) -> list[str]:
    from bias_suite.pipeline import load_predictor
    from bias_suite.predict import predict

    model, _ = load_predictor("default-sentiment", device="cpu", progress=progress)
    probs, _ = predict(model, list(texts), cache=True, progress=progress)
    names = list(model.class_names)
    return [names[i] for i in np.asarray(probs).argmax(axis=1)]


# ---------------------------------------------------------------------------- the run
def sentences(suites=None, all_terms: bool = False) -> pd.DataFrame:
    """The expanded sentences of the suites (default: every bundled
    classification suite), the first term of each group unless
    ``all_terms``; columns ``suite, template, label, text``."""
    from bias_suite.families import expand_suites, load_suite
    from bias_suite.suites import bundled_suites, find_suite

    paths = [find_suite(s) for s in suites] if suites else bundled_suites()
    loaded = [load_suite(p) for p in paths]
    loaded = [s for s in loaded if s.classes]  # classification suites (taggers' suites have no classes)
    ex = expand_suites(loaded)
    if not all_terms:
        ex = ex.groupby(["template", "attribute", "group"], sort=False).head(1)
    out = pd.DataFrame({"suite": ex["suite"], "template": ex["source_template"].str.split("/").str[-1],
                        "label": ex["label"], "text": ex["text"]})
    return out.reset_index(drop=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suites", nargs="*", help="suite names or files (default: every bundled classification suite)")
    ap.add_argument("--all-terms", action="store_true", help="every identity term, not the first of each group")
    ap.add_argument("--out", type=Path, help="also write the review list here (CSV)")
    args = ap.parse_args(argv)

    import time

    from _machine import cpu_model

    t0 = time.perf_counter()
    frame = sentences(args.suites, args.all_terms)
    texts = frame["text"].drop_duplicates().tolist()
    print(f"{len(frame):,} sentences ({len(texts):,} distinct) of {frame['suite'].nunique()} suites; "
          f"CPU: {cpu_model()}", flush=True)
    t1 = time.perf_counter()
    default = dict(zip(texts, read_default(texts)))
    t2 = time.perf_counter()
    vader = dict(zip(texts, read_vader(texts)))
    t3 = time.perf_counter()
    frame["default-sentiment"] = frame["text"].map(default)
    frame["VADER"] = frame["text"].map(vader)
    per_suite, review = label_agreement(frame)
    total = per_suite.drop(columns="suite").sum()
    per_suite = pd.concat([per_suite, pd.DataFrame([{"suite": "all", **total.to_dict()}])], ignore_index=True)
    print(f"\ndefault-sentiment {t2 - t1:.1f} s, VADER {t3 - t2:.1f} s, expansion {t1 - t0:.1f} s\n")
    print("templates a reader agrees with (at least half of its sentences read as the gold label):")
    print(per_suite.to_string(index=False))
    print(f"\n{len(review)} templates that neither reader agrees with (for review):")
    with pd.option_context("display.max_colwidth", 90, "display.width", 200):
        print(review.to_string(index=False, float_format=lambda x: f"{x:.2f}") if len(review) else "(none)")
    if args.out is not None:
        review.to_csv(args.out, index=False)
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
