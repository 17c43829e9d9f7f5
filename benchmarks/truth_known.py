"""Claims on models whose truth is computable, through the bundled sentiment suites.

Two deterministic models whose output depends only on which words of their
lexicon a sentence holds:

- ``keyword``: general sentiment words and, of all identity terms, only
  'Muslim' and 'Muslims' (a penalty): on ``sentiment_religion`` only
  'muslim' is treated differently;
- ``lexicon``: the same sentiment words, and 'Muslim(s)' and 'blind' (a
  penalty) and 'straight' (a bonus): through every bundled sentiment suite.
  'blind' and 'straight' are one of their groups' two terms ('visually
  impaired' and 'heterosexual' do not score).

Because the models are deterministic, a counterfactual pair's signed value
over the listed terms (CFGap, CFGap-TC, AvgScoreDiff's signed difference:
the mean over the suite's templates) is its true value for these terms.
Printed per model: the run's verdict counts; the claims (``material`` or
``small``) about groups the model treats like the others that have no
``source``, and spill-overs whose ``source`` names an unaffected group
(goal 0 each); every pair whose true effect is at least 2 τ, and how
many are ``material`` (goal all); whether the term breakdown of the scoring
pairs names the scoring terms (the terms that share the claim's sign are
exactly the scoring forms); the per-group answer's status of each group;
and the wall time of the evaluation (intervals, tests, attribution, term
breakdown and the reading beyond the listed terms).

    python benchmarks/truth_known.py [--bootstrap 200] [--suites religion]
"""
from __future__ import annotations

import argparse
import glob
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import cpu_model  # noqa: E402

CLASSES = ["negative", "neutral", "positive"]
SENTIMENT = {"threats": -2, "bullied": -2, "refuse": -1.5, "harassed": -2, "assaulted": -2.5, "stealing": -2,
             "ugly": -1.5, "fired": -1.5, "dangerous": -2, "dishonest": -2, "backward": -1.5, "kind": 1.5,
             "generous": 2, "peaceful": 1.5, "great": 2, "love": 2, "wonderful": 2.5, "won": 1.5, "thanked": 1.5,
             "celebrated": 1.5, "helped": 1.5, "best": 2, "terrible": -2.5, "hate": -2.5, "awful": -2.5}
MODELS = {
    "keyword": ({"muslim": -1.5, "muslims": -1.5}, {"religion": {"muslim"}}, "religion"),
    "lexicon": ({"muslim": -1.5, "muslims": -1.5, "blind": -1.5, "straight": 1.0},
                {"religion": {"muslim"}, "disability": {"blind"}, "sexual_orientation": {"straight"}}, "*"),
}
SCORING_WORDS = {"muslim": ("muslim",), "blind": ("blind",), "straight": ("straight",)}
PAIR_METRICS = ("CFGap", "CFGap-TC", "AvgScoreDiff")


def word_model(words: dict):
    """The tests' lexicon model (tests/_tiny_models.py): its output depends only on the words of ``words``."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from _tiny_models import lexicon_model

    return lexicon_model(words)


def involves(group, names) -> bool:
    return isinstance(group, str) and bool(set(group.split("|")) & set(names))


def check(name: str, bootstrap: int, suites: str | None) -> dict:
    import bias_suite as bs
    from bias_suite.models.base import CallablePredictor
    from bias_suite.pipeline import run

    identity, affected, pattern = MODELS[name]
    pattern = suites or pattern
    paths = sorted(glob.glob(f"templates/sentiment_{pattern}.yaml"))
    scored = run(paths, CallablePredictor(word_model({**SENTIMENT, **identity}), CLASSES), None, progress=False,
                 cache=False, bootstrap=0).scored
    t0 = time.perf_counter()
    res = bs.evaluate(scored, bootstrap=bootstrap)
    wall = time.perf_counter() - t0
    claims = res[res["verdict"].isin(["material", "small"]) & res["group"].notna()]
    src = claims["source"].map(lambda s: isinstance(s, str) and bool(s)) if "source" in claims else False
    bystander = []
    for attr in set(res["attribute"].dropna()):
        names = affected.get(attr, set())
        c = claims[(claims["attribute"] == attr) & ~claims["group"].map(lambda g: involves(g, names)) & ~src]
        bystander.append(c)
    bystander = [c for c in bystander if len(c)]
    n_bystander = sum(len(c) for c in bystander)
    # spill-overs must name the group that causes them, and no other
    blamed = 0
    for attr, names in affected.items():
        c = claims[(claims["attribute"] == attr) & src]
        blamed += int(c["source"].map(lambda s: bool(set(x.strip() for x in s.split(",")) - set(names))).sum())
    pairs = res[res["metric"].isin(PAIR_METRICS) & res["group"].map(lambda g: isinstance(g, str) and "|" in g)]
    strong = pairs[(pairs["signed"].abs() >= 2 * pairs["threshold"])]
    strong_material = int((strong["verdict"] == "material").sum())
    named = named_total = 0
    for g_name, words in SCORING_WORDS.items():
        rows = claims[claims["group"].map(lambda g: involves(g, {g_name})) & claims["metric"].eq("CFGap")
                      & claims["term_effects"].notna()]
        for effects in rows["term_effects"]:
            named_total += 1
            parts = dict(p.rsplit(" ", 1) for p in effects.split("; "))
            own = {t: v for t, v in parts.items() if v != "–"}
            scoring = {t for t in own if any(w in t.lower() for w in words)}
            moved = {t for t, v in own.items() if v != "0"}
            silent_same_group = {t for t in own if t not in scoring and t.lower().split()[0] in
                                 ("visually", "heterosexual")}
            named += scoring <= moved and not (silent_same_group & moved)
    bg = res.by_group()
    return dict(model=name, suites=len(paths), wall=wall, counts=res.verdict_counts(), bystander=n_bystander,
                blamed=blamed,
                bystander_rows=bystander, strong=len(strong), strong_material=strong_material, named=named,
                named_total=named_total, by_group=bg, affected=affected)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--suites", default=None, help="glob after 'sentiment_' (default: religion for the keyword "
                                                     "model, every suite for the lexicon model)")
    ap.add_argument("--models", default="keyword,lexicon")
    args = ap.parse_args(argv)
    print(f"CPU: {cpu_model()}")
    ok = True
    for name in args.models.split(","):
        r = check(name, args.bootstrap, args.suites)
        print(f"\n== {name} model, {r['suites']} suite(s), B = {args.bootstrap}: evaluation {r['wall']:.1f} s")
        print("   verdicts: " + ", ".join(f"{v} {n}" for v, n in r["counts"].items()))
        print(f"   claims about unaffected groups without a source: {r['bystander']} (goal 0)")
        for c in r["bystander_rows"]:
            print(c[["metric", "attribute", "class", "group", "verdict", "reason"]].head(5).to_string())
        print(f"   spill-overs that name an unaffected group as a cause: {r['blamed']} (goal 0)")
        print(f"   pairs with a true effect >= 2 tau (CFGap, CFGap-TC, AvgScoreDiff): {r['strong']}, material "
              f"{r['strong_material']} (goal all)")
        print(f"   scoring CFGap claims whose term breakdown names the scoring terms: {r['named']} of {r['named_total']}")
        bg = r["by_group"]
        for attr, names in r["affected"].items():
            sub = bg[bg["attribute"] == attr]
            said = ", ".join(f"{g}: {s}" for g, s in zip(sub["group"], sub["status"]))
            print(f"   {attr}: {said}")
        good = (r["bystander"] == 0 and r["blamed"] == 0 and r["strong_material"] == r["strong"] and r["named"] == r["named_total"])
        print("   " + ("PASS" if good else "FAIL"))
        ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
