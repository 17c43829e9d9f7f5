"""Perturbation precision and recall on the hand-checked gold set
(``tests/data/perturb_gold``, scored by ``tests/perturb_gold.py``).

Each gold row is a real sentence of the VADER corpus with, per attribute
(``gender``, ``names``), what a careful person would do: swap it (the words
that change and what they may become), skip it, or find nothing. The
sentences go through ``bs.perturb`` on two paths:

- ``rule``: no spaCy at all (``tagger=False``): the rule for "her", the
  capital-and-word rules for titles and surnames, listed names only;
- ``tagger``: spaCy's ``en_core_web_sm`` (``tagger=True``): its tagger for
  "her", its recogniser for titles and surnames, and for the names
  attribute the first names the file does not list (``unlisted_names``).

The unit is one swapped sentence (a template), right when every variant
written from it is right. Printed per half (``dev``, ``heldout``), path and
attribute: the sentences swapped, right, precision with its Wilson 95%
interval, recall (swapped among the sentences the gold swaps), whether
every skip has a reason; then both attributes together. ``--wrong`` lists
the wrong swaps with the scorer's reasons.

    python benchmarks/perturb_gold.py [--half dev|heldout|both] [--path rule|tagger|both] [--wrong]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pandas as pd  # noqa: E402

from perturb_gold import load_gold, score, variants_from_examples, wilson_interval  # noqa: E402

ATTRIBUTES = ("gender", "names")
TERM_CHOICES = False   # the gold's default: "woman" -> "boy" is wrong
PATHS = {"rule": dict(tagger=False, unlisted_names=True), "tagger": dict(tagger=True, unlisted_names=True)}


def outputs_of(rows, path: str) -> dict:
    """``{attribute: {gold id: {"outcome", "reason", "variants"}}}`` of one path."""
    import bias_suite as bs

    table = pd.DataFrame({"id": [r["id"] for r in rows], "text": [r["text"] for r in rows]})
    frame, log = bs.perturb(table, list(ATTRIBUTES), log=True, **PATHS[path])
    out = {}
    for attr in ATTRIBUTES:
        variants = variants_from_examples(frame, attr)
        part = log[log["attribute"] == attr]
        out[attr] = {i: {"outcome": o, "reason": r or None, "variants": variants.get(i, [])}
                     for i, o, r in zip(part["id"], part["outcome"], part["reason"])}
    return out


def measure(half: str, path: str) -> dict:
    """``{attribute: the scorer's summary}`` plus ``"both"``: the two attributes' swaps pooled."""
    rows = load_gold(half)
    outs = outputs_of(rows, path)
    res = {attr: score(rows, outs[attr], attr, term_choices=TERM_CHOICES) for attr in ATTRIBUTES}
    k = sum(res[a]["right"] for a in ATTRIBUTES)
    n = sum(res[a]["swapped"] for a in ATTRIBUTES)
    gold = sum(res[a]["gold_changed"] for a in ATTRIBUTES)
    swapped_gold = sum(round(res[a]["recall"] * res[a]["gold_changed"]) for a in ATTRIBUTES if res[a]["recall"] is not None)
    res["both"] = {"rows": len(rows), "swapped": n, "right": k, "precision": k / n if n else None,
                   "precision_wilson": wilson_interval(k, n) if n else None, "gold_changed": gold,
                   "recall": swapped_gold / gold if gold else None,
                   "every_skip_has_reason": all(res[a]["every_skip_has_reason"] for a in ATTRIBUTES)}
    return res


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def table_rows(half: str, path: str, res: dict) -> list[str]:
    out = []
    for attr in ATTRIBUTES + ("both",):
        r = res[attr]
        lo = r["precision_wilson"][0] if r["precision_wilson"] else None
        out.append(f"| {half} | {path} | {attr} | {r['swapped']} | {r['right']} | {_pct(r['precision'])} | {_pct(lo)} "
                   f"| {_pct(r['recall'])} of {r['gold_changed']} | {'yes' if r['every_skip_has_reason'] else 'no'} |")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=("dev", "heldout", "both"), default="dev")
    ap.add_argument("--path", choices=("rule", "tagger", "both"), default="both")
    ap.add_argument("--wrong", action="store_true", help="list the wrong swaps")
    args = ap.parse_args(argv)
    halves = ("dev", "heldout") if args.half == "both" else (args.half,)
    paths = ("rule", "tagger") if args.path == "both" else (args.path,)
    print("| half | path | attribute | swapped | right | precision | Wilson lower (95%) | swapped of the gold's "
          "swaps | every skip has a reason |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    wrong = []
    for half in halves:
        for path in paths:
            res = measure(half, path)
            print("\n".join(table_rows(half, path, res)))
            wrong += [(half, path, a, i, p) for a in ATTRIBUTES for i, p in res[a]["wrong_rows"]]
    if args.wrong:
        for half, path, attr, i, problems in wrong:
            print(f"\n{half} {path} {attr} {i}:\n  " + "\n  ".join(problems[:3]))


if __name__ == "__main__":
    main()
