"""Perturbation speed: 100,000 sentences through ``bs.perturb``.

The sentences are the human-rated sentences of the ``vaderSentiment==3.3.2``
sdist (movie reviews, editorials, tweets, product reviews; 23,703 of them,
the training data of ``default-sentiment``) repeated to ``--rows`` rows with
unique ids, when the sdist is in the download cache
(``bias-suite models build default-sentiment`` puts it there); else
template-made sentences with a mention in about one in five.

Prints, each timed once after one untimed warm-up call on 2,000 rows:
  (a) reading the CSV (the project's chunked reader),
  (b) perturbing by gender and names with the rule for "her" (no tagger),
  (b2) (b) with --unlisted-names read by the common first names (no spaCy),
  (c) perturbing by all eight bundled attributes, no tagger,
  (d) writing the examples of (b) as JSON Lines, (d2) (b) with its log
      (``log=True``: one row per sentence and attribute) and writing the
      log as CSV,
  (e) with --tagger, (b) with spaCy's tagger for "her" (only the sentences
      that hold a "her" to be swapped are tagged), (f) the tagger alone on
      those sentences and (g) on 5,000 made-up ones: the tagger's rate.
Target: (b) under 60 s on a 2-core machine.

    python benchmarks/perturb_speed.py [--rows 100000] [--tagger]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from _machine import cpu_model  # noqa: E402

ALL = ["gender", "names", "nationality", "religion", "race_ethnicity", "sexual_orientation", "disability", "age"]


def sentences(rows: int) -> tuple[list, str]:
    from bias_suite.models.vader import load_vader_sentences
    from bias_suite.paths import cache_dir

    sdist = cache_dir() / "downloads" / "vaderSentiment-3.3.2.tar.gz"
    if sdist.is_file():
        base = [s.text for s in load_vader_sentences(sdist)]
        source = f"VADER sentences ({len(base):,} distinct)"
    else:
        import random

        rng = random.Random(0)
        subj = ["She", "He", "My friend", "The woman", "Emma", "The manager", "A Muslim doctor", "They", "The movie",
                "The plot", "James", "Our neighbours"]
        rest = ["loved her new car.", "said the food was great.", "thinks his job is boring.", "moved to Japan.",
                "was not impressed by the acting at all.", "told him the truth.", "is the best thing this year.",
                "waited an hour for the bus and then it rained."]
        base = [f"{rng.choice(subj)} {rng.choice(rest)}" for _ in range(5000)]
        source = "template-made sentences (VADER sdist not in the download cache)"
    return [base[i % len(base)] for i in range(rows)], source


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--tagger", action="store_true", help="also time (b) with spaCy's tagger")
    args = ap.parse_args(argv)

    import bias_suite as bs
    from bias_suite.io.tables import write_jsonl
    from bias_suite.suites.perturbation import read_sentences

    texts, source = sentences(args.rows)
    labels = ["positive" if i % 3 else "negative" for i in range(args.rows)]
    print(f"CPU: {cpu_model()}; {args.rows:,} rows of {source}")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "sentences.csv"
        pd.DataFrame({"id": [f"r{i}" for i in range(args.rows)], "text": texts, "label": labels}).to_csv(data, index=False)
        small = Path(tmp) / "small.csv"
        pd.read_csv(data, nrows=2000).to_csv(small, index=False)
        bs.perturb(small, ALL, tagger=False)  # warm-up: imports, regular expressions
        _, t_read = timed(lambda: read_sentences(data))
        print(f"(a) read the CSV: {t_read:.1f} s")
        ex, t_b = timed(lambda: bs.perturb(data, ["gender", "names"], tagger=False))
        rep = ex.attrs["perturbation"]["attributes"]
        mentioned = ", ".join(f"{a['attribute']} {a['mentioned']:,}" for a in rep)
        print(f"(b) gender + names, rule for 'her': {t_b:.1f} s = {args.rows / t_b:,.0f} sentences/s "
              f"(reading included); {len(ex):,} examples in {ex['template'].nunique():,} templates "
              f"(mentioned: {mentioned})")
        ex_u, t_b2 = timed(lambda: bs.perturb(data, ["gender", "names"], tagger=False, unlisted_names=True))
        print(f"(b2) (b) with unlisted first names, no spaCy: {t_b2:.1f} s = {args.rows / t_b2:,.0f} sentences/s; "
              f"{len(ex_u):,} examples in {ex_u['template'].nunique():,} templates")
        ex_all, t_c = timed(lambda: bs.perturb(data, ALL, tagger=False))
        print(f"(c) all eight attributes, rule: {t_c:.1f} s = {args.rows / t_c:,.0f} sentences/s; "
              f"{len(ex_all):,} examples in {ex_all['template'].nunique():,} templates")
        _, t_d = timed(lambda: write_jsonl(ex, Path(tmp) / "p.jsonl"))
        print(f"(d) write (b)'s examples as JSON Lines: {t_d:.1f} s")
        from bias_suite.suites.perturbation.trail import write_log

        (_, log), t_l = timed(lambda: bs.perturb(data, ["gender", "names"], tagger=False, log=True))
        _, t_w = timed(lambda: write_log(log, Path(tmp) / "log.csv"))
        print(f"(d2) (b) with its log of {len(log):,} rows: {t_l:.1f} s; writing the log as CSV: {t_w:.1f} s")
        if args.tagger:
            from bias_suite.suites.perturbation.pronouns import load_tagger

            if load_tagger() is None:
                print("(e) spaCy's en_core_web_sm is not installed: no tagger timing")
            else:
                ex_t, t_e = timed(lambda: bs.perturb(data, ["gender", "names"], tagger=True))
                diff = (ex_t["text"].to_numpy() != ex["text"].to_numpy()).sum() if len(ex_t) == len(ex) else "n/a"
                print(f"(e) gender + names, spaCy's tagger for 'her': {t_e:.1f} s = {args.rows / t_e:,.0f} sentences/s; "
                      f"{diff} examples read differently from (b)")
                import re

                her = re.compile(r"\bher\b", re.IGNORECASE)
                hers = sorted({t for t in texts if her.search(t)})
                items = [(t, [m.start() for m in her.finditer(t)]) for t in hers]
                _, t_f = timed(lambda: load_tagger().roles(items))
                print(f"(f) the tagger alone on the {len(hers):,} distinct sentences with 'her': {t_f:.1f} s = "
                      f"{len(hers) / t_f:,.0f} sentences/s")
                made = [f"On day {i} she told me that the waiter had ignored her for {i % 50} minutes, "
                        f"so she left her table early." for i in range(5000)]
                items = [(t, [m.start() for m in her.finditer(t)]) for t in made]
                _, t_g = timed(lambda: load_tagger().roles(items))
                print(f"(g) the tagger alone on 5,000 distinct made-up sentences of {len(made[0])} characters with "
                      f"'her': {t_g:.1f} s = {5000 / t_g:,.0f} sentences/s")


if __name__ == "__main__":
    main()
