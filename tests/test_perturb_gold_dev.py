"""Perturbation against the dev half of the hand-checked gold set
(tests/data/perturb_gold/dev.jsonl, scored by tests/perturb_gold.py): floors
that the rules must keep. The held-out half is measured once, by
benchmarks/perturb_gold.py, and reported in docs/perturb.md ("Measured").

The floors sit a little under what the rules scored on dev when they were
last changed (docs/perturb.md), so that a change that makes them worse
fails here; they are not the issue's targets (99% right), which the rules
do not reach."""
from __future__ import annotations

import pandas as pd
import pytest

import bias_suite as bs
from bias_suite.suites.perturbation.pronouns import load_tagger
from perturb_gold import GOLD_DIR, load_gold, score, variants_from_examples

pytestmark = pytest.mark.skipif(not (GOLD_DIR / "dev.jsonl").is_file(), reason="no gold set")

# (path, attribute) -> (precision at least, share of the gold's swaps swapped at least)
FLOORS = {
    ("rule", "gender"): (0.87, 0.74),
    ("rule", "names"): (0.80, 0.30),
    ("tagger", "gender"): (0.86, 0.72),
    ("tagger", "names"): (0.80, 0.28),
}
PATHS = {"rule": dict(tagger=False, unlisted_names=True), "tagger": dict(tagger=True, unlisted_names=True)}


def _scores(path):
    rows = load_gold("dev")
    table = pd.DataFrame({"id": [r["id"] for r in rows], "text": [r["text"] for r in rows]})
    frame, log = bs.perturb(table, ["gender", "names"], log=True, **PATHS[path])
    out = {}
    for attr in ("gender", "names"):
        variants = variants_from_examples(frame, attr)
        part = log[log["attribute"] == attr]
        outputs = {i: {"outcome": o, "reason": r or None, "variants": variants.get(i, [])}
                   for i, o, r in zip(part["id"], part["outcome"], part["reason"])}
        out[attr] = score(rows, outputs, attr)
    return out


@pytest.fixture(scope="module")
def rule_scores():
    return _scores("rule")


@pytest.fixture(scope="module")
def tagger_scores():
    if load_tagger() is None:
        pytest.skip("spaCy's en_core_web_sm is not installed")
    return _scores("tagger")


@pytest.mark.parametrize("attribute", ["gender", "names"])
def test_rule_path_keeps_its_floor_on_dev(rule_scores, attribute):
    s = rule_scores[attribute]
    precision, recall = FLOORS[("rule", attribute)]
    assert s["precision"] >= precision, s["wrong_rows"][:5]
    assert s["recall"] >= recall
    assert s["every_skip_has_reason"]


@pytest.mark.parametrize("attribute", ["gender", "names"])
def test_tagger_path_keeps_its_floor_on_dev(tagger_scores, attribute):
    s = tagger_scores[attribute]
    precision, recall = FLOORS[("tagger", attribute)]
    assert s["precision"] >= precision, s["wrong_rows"][:5]
    assert s["recall"] >= recall
    assert s["every_skip_has_reason"]


def test_each_swappable_type_is_swapped_in_some_of_its_sentences(rule_scores):
    # the issue: skipping everything does not pass; per type, the share of the gold's swaps the rule path swaps
    by_type = rule_scores["gender"]["by_type"]
    for t in ("honorific", "plural_possessive", "ess_noun", "kinship_role_noun", "plain_pronoun"):
        d = by_type[t]
        assert d["gold_changed"] and d["swap_share"] >= 0.5, (t, d)
