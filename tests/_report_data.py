"""Results folders for the report, plot and gating tests.

``make_results(folder)`` runs bundled suites with the tiny test classifier
(real model, real metrics); ``enrich(folder)`` adds Bernstein rows, verdicts on
some of them (``verdict``, ``threshold``, ``baseline``, ``effect``,
``reason``), an ``invariance`` family row and
a ``failures.jsonl`` file (with HTML-looking text, to check escaping).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

MINI_NAMES_TERMS = """\
attribute: names
description: A few first names (test data)
sources: [test]
groups:
  female:
    person: [Emma, Olivia, Mia]
  male:
    person: [Liam, Noah, James]
"""

MINI_NAMES_SUITE = """\
suite: mini_names
task: classification
classes: [negative, neutral, positive]
identity_terms: [mini_names_terms.yaml]
templates:
  - {id: n1, text: "{Person} missed the last bus and walked home in the rain.", label: negative}
  - {id: n2, text: "{Person} was rude to the waiter all evening.", label: negative}
  - {id: n3, text: "{Person} hated the movie and left early.", label: negative}
  - {id: n4, text: "{Person} lost the keys again.", label: negative}
  - {id: u1, text: "{Person} took the train on Monday.", label: neutral}
  - {id: u2, text: "{Person} is a teacher.", label: neutral}
  - {id: u3, text: "{Person} bought a book.", label: neutral}
  - {id: u4, text: "{Person} lives near the park.", label: neutral}
  - {id: p1, text: "{Person} loved the concert.", label: positive}
  - {id: p2, text: "{Person} is a kind and wonderful friend.", label: positive}
  - {id: p3, text: "{Person} did a great job at work.", label: positive}
  - {id: p4, text: "{Person} really liked the food.", label: positive}
"""


def mini_names_suite(folder, thresholds: str = "") -> Path:
    """A small two-group suite (attribute ``names``) written to ``folder``;
    ``thresholds`` is appended verbatim (a YAML ``thresholds:`` block)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mini_names_terms.yaml").write_text(MINI_NAMES_TERMS, encoding="utf-8")
    path = folder / "mini_names.yaml"
    path.write_text(MINI_NAMES_SUITE + thresholds, encoding="utf-8")
    return path


def make_results(folder, suites=None, *, model_dir=None) -> Path:
    """Run ``sentiment_gender`` (3 groups) and a small two-group names suite
    with the tiny classifier; the model folder is ``<folder>_model``."""
    from _tiny_models import make_tiny_classifier

    from bias_suite.pipeline import run

    folder = Path(folder)
    if suites is None:
        suites = ["sentiment_gender", str(mini_names_suite(folder.parent / f"{folder.name}_suites"))]
    model_dir = model_dir or make_tiny_classifier(folder.parent / f"{folder.name}_model")
    run(list(suites), str(model_dir), folder, progress=False)
    return folder


def _clean(v):
    if v is None:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "item"):
        return v.item()
    if str(v) == "<NA>":
        return None
    return v


def enrich(folder) -> Path:
    import pandas as pd

    from bias_suite.report.html import read_results_table
    from bias_suite.families import read_scored
    from bias_suite.stats import bernstein_rows

    folder = Path(folder)
    res = read_results_table(folder)
    scored = read_scored(folder / "scored.jsonl")
    res = pd.concat([res, bernstein_rows(scored.to_frame())], ignore_index=True)

    def judge(r):  # (verdict, threshold, reason) for a few rows, in the verdict vocabulary
        m = str(r["metric"])
        if m.startswith("Bernstein-") and not m.endswith("SampleSize"):
            return ("material", 0.05, f"higher for {r['group']}") if (r["ci_low"] or 0) > 0 else \
                ("inconclusive", 0.05, "interval too wide (need ~12000 examples)")
        if m == "CFGap" and r["group"] is not None:
            return ("material", 0.05, f"higher for {r['group'].split('|')[0]}") if r["value"] > 0.15 else \
                ("negligible", 0.05, "interval within the threshold")
        return None

    for col in ("verdict", "threshold", "baseline", "effect", "reason"):
        if col not in res.columns:
            res[col] = None
    res = res.astype({c: object for c in ("verdict", "threshold", "baseline", "effect", "reason")})
    for i, r in zip(res.index, res.to_dict("records")):
        j = judge(r)
        if j is not None:
            v, tau, why = j
            res.loc[i, ["verdict", "threshold", "baseline", "effect", "reason"]] = \
                [v, tau, 0.0, None if r["value"] is None else abs(float(r["value"])) / tau, why]
    inv = [
        {"metric": "INV-FailureRate", "family": "invariance", "view": "counterfactual", "attribute": a, "class": "all",
         "group": None, "value": 0.25, "ci_low": None, "ci_high": None, "n": 8, "note": None, "verdict": "material",
         "threshold": 0.1, "baseline": 0.0, "effect": 2.5, "reason": "a quarter of the INV cases fail"}
        for a in pd.unique(res["attribute"])
    ]
    res = pd.concat([res, pd.DataFrame(inv)], ignore_index=True)
    with open(folder / "results.jsonl", "w", encoding="utf-8") as fh:
        for r in res.to_dict("records"):
            fh.write(json.dumps({k: _clean(v) for k, v in r.items()}) + "\n")
    fr = scored.to_frame()
    with open(folder / "failures.jsonl", "w", encoding="utf-8") as fh:
        for k, (t, g) in enumerate(fr.groupby("template", sort=False)):
            if k >= 4:
                break
            g = g.head(2)
            sents = list(g["text"])
            if k == 0:
                sents[0] = sents[0] + " <script>alert(1)</script>"
            fh.write(json.dumps({"template": t, "attribute": g["attribute"].iloc[0], "sentences": sents,
                                 "probabilities": list(g["probs"]), "max_diff": 0.3}) + "\n")
    # the folder is now this helper's output: list its files in run.json, as a run does
    from bias_suite.io.results import commit_run_folder

    meta = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    meta.pop("files", None)
    commit_run_folder(folder, [p for p in folder.iterdir() if p.is_file() and p.name != "run.json"], meta)
    return folder
