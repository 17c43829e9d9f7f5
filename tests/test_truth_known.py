"""Findings on models whose truth is known, through every bundled sentiment suite.

A lexicon model's output depends only on which words of its lexicon a
sentence holds. It scores general sentiment words and, of all identity
terms, only 'Muslim(s)', 'blind' and 'straight': age, gender, nationality,
race/ethnicity, first names and the other groups cannot matter to it.
"""
import glob

import numpy as np
import pytest
from _tiny_models import lexicon_model

# Runs every bundled sentiment suite: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


SENTIMENT = {"threats": -2, "bullied": -2, "refuse": -1.5, "harassed": -2, "assaulted": -2.5, "stealing": -2,
             "ugly": -1.5, "fired": -1.5, "dangerous": -2, "dishonest": -2, "backward": -1.5, "kind": 1.5,
             "generous": 2, "peaceful": 1.5, "great": 2, "love": 2, "wonderful": 2.5, "won": 1.5, "thanked": 1.5,
             "celebrated": 1.5, "helped": 1.5, "best": 2, "terrible": -2.5, "hate": -2.5, "awful": -2.5}
IDENTITY = {"muslim": -1.5, "muslims": -1.5, "blind": -1.5, "straight": 1.0}
AFFECTED = {"religion": "muslim", "disability": "blind", "sexual_orientation": "straight"}
CLASSES = ["negative", "neutral", "positive"]




def _run(fn, names="*", **kw):
    from bias_suite.models.base import CallablePredictor
    from bias_suite.pipeline import run

    suites = sorted(glob.glob(f"templates/sentiment_{names}.yaml"))
    assert len(suites) >= (9 if names == "*" else 1)
    return run(suites, CallablePredictor(fn, CLASSES), None, progress=False, cache=False, **kw).results


@pytest.fixture(scope="module")
def lexicon_results():
    return _run(lexicon_model({**SENTIMENT, **IDENTITY}))


def _involves(group, name):
    return isinstance(group, str) and name in group.split("|")


def test_no_claim_on_attributes_the_model_ignores(lexicon_results):
    r = lexicon_results
    claims = r[r["verdict"].isin(["material", "small"])]
    ignored = set(r["attribute"].dropna()) - set(AFFECTED)
    assert {"age", "gender", "nationality", "race_ethnicity"} <= ignored
    assert claims[claims["attribute"].isin(ignored)].empty, claims[claims["attribute"].isin(ignored)][
        ["metric", "attribute", "group", "verdict", "reason"]]


def test_claims_about_unaffected_groups_name_their_source(lexicon_results):
    r = lexicon_results
    claims = r[r["verdict"].isin(["material", "small"]) & r["group"].notna()]
    for attr, name in AFFECTED.items():
        c = claims[(claims["attribute"] == attr) & ~claims["group"].map(lambda g: _involves(g, name))]
        assert (c["source"] == name).all(), c[["metric", "class", "group", "verdict", "source", "reason"]]


def test_no_unaffected_group_is_named_as_a_cause(lexicon_results):
    r = lexicon_results
    named = r.dropna(subset=["source"])
    for attr, sources in zip(named["attribute"], named["source"]):
        assert set(sources.split(", ")) == {AFFECTED[attr]}, (attr, sources)
    # the spill-overs of 'muslim' (across every group-vs-background metric) are there and say so
    assert (named["attribute"] == "religion").sum() >= 20


def _scoring_pairs(r, attr, name):
    return r[(r["attribute"] == attr) & (r["metric"].isin(["CFGap", "AvgScoreDiff"]))
             & r["group"].map(lambda g: _involves(g, name)) & (r["class"] == "positive")]


def _material_in_the_right_direction(pairs, name):
    assert len(pairs) and (pairs["verdict"] == "material").all(), pairs[["metric", "group", "verdict", "reason"]]
    # the probability of 'positive' moves down for a negative word and up for a positive one
    lower = IDENTITY[name] < 0
    for g, reason in zip(pairs["group"], pairs["reason"]):
        first = g.split("|")[0] == name
        says_higher = "higher for" in reason
        assert says_higher == (first != lower), (g, reason)


def test_the_scoring_groups_are_found_in_the_right_direction(lexicon_results):
    # every term of 'muslim' scores ('Muslim' in singular slots, 'Muslims' in plural ones): a claim about the
    # group, with its terms resampled (the default)
    _material_in_the_right_direction(_scoring_pairs(lexicon_results, "religion", "muslim"), "muslim")


def test_a_term_that_scores_is_named_and_not_carried_beyond_the_listed_terms(lexicon_results):
    # 'blind' scores and 'visually impaired' does not; 'straight' scores and 'heterosexual' does not. A verdict
    # speaks of the listed terms (templates resampled alone), where the effect holds in every template: the
    # claim stands, its term breakdown names the term that scores and the one that does not, and the
    # two-way reading (terms resampled too) does not carry it beyond the listed terms
    for attr, name, term, silent in (("disability", "blind", "blind", "visually impaired"),
                                     ("sexual_orientation", "straight", "straight", "heterosexual")):
        pairs = _scoring_pairs(lexicon_results, attr, name)
        _material_in_the_right_direction(pairs, name)
        cf = pairs[pairs["metric"] == "CFGap"]
        assert len(cf)
        for effects, agree in zip(cf["term_effects"], cf["terms_agree"]):
            parts = dict(p.rsplit(" ", 1) for p in effects.split("; "))
            assert parts[silent] == "0" and abs(float(parts[term].replace("−", "-"))) > 0.1, effects
            # every form of the silent term is 0, every form of the scoring one moves (– where a form's slot
            # has no example of the class); the scoring forms are the ones that share the claim's sign
            scoring = [v for t, v in parts.items() if t.startswith(term) and v != "–"]
            assert all(v == "0" for t, v in parts.items() if t.startswith(silent)), effects
            assert scoring and all(v != "0" for v in scoring), effects
            assert f"{name}: {len(scoring)} of {len(scoring) + sum(1 for t, v in parts.items() if t.startswith(silent) and v != '–')}" in agree, (agree, effects)
        assert (pairs["beyond"] == "not shown").all(), pairs[["group", "beyond", "beyond_low", "beyond_high"]]
    # with the terms resampled for the verdict itself (--resample-terms auto), no claim about the group
    r = _run(lexicon_model({**SENTIMENT, **IDENTITY}), "[ds][ie]*", resample_terms="auto")
    for attr, name in (("disability", "blind"), ("sexual_orientation", "straight")):
        pairs = _scoring_pairs(r, attr, name)
        assert len(pairs) and not pairs["verdict"].isin(["material", "small"]).any(), pairs[["group", "verdict"]]


def test_the_answer_per_group(lexicon_results):
    from bias_suite.report.groups import by_group

    bg = by_group(lexicon_results)
    status = {(a, g): s for a, g, s in zip(bg["attribute"], bg["group"], bg["status"])}
    # the scoring groups: 'muslim' and 'blind' score negatively (worse off), 'straight' positively (better off)
    assert status[("religion", "muslim")] == "worse off" and status[("disability", "blind")] == "worse off"
    assert status[("sexual_orientation", "straight")] == "better off"
    # every other group: no claim of its own, whatever its pairs with the scoring group say
    others = bg[~bg["group"].isin(["muslim", "blind", "straight"])]
    assert others["status"].isin(["no difference shown", "cleared", "undecided"]).all(), others
    assert (others[["material", "small"]].sum(axis=1) == 0).all(), others
    # worst off first within an attribute, and the effect points the way of the status
    rel = bg[bg["attribute"] == "religion"]
    assert rel["group"].iloc[0] == "muslim" and rel["effect"].iloc[0] > 1
    so = bg[bg["attribute"] == "sexual_orientation"].set_index("group")
    assert so.loc["straight", "effect"] < -1


def test_a_constant_model_gets_no_claim():
    r = _run(lambda texts: np.tile([0.2, 0.3, 0.5], (len(texts), 1)))
    claims = r[r["verdict"].isin(["material", "small"])]
    assert claims.empty, claims[["metric", "attribute", "group", "verdict", "reason"]]


def test_a_deterministic_effect_holds_in_every_template(lexicon_results):
    r = lexicon_results
    pairs = r[(r["metric"] == "AvgScoreDiff") & (r["verdict"] == "material") & (r["class"] == "positive")
              & r["group"].map(lambda g: _involves(g, "muslim"))]
    # the lexicon moves every Muslim sentence the same way: the effect has its sign in every template
    # where the pair differs at all
    assert len(pairs) and (pairs["consistency"] == 1.0).all(), pairs[["group", "consistency"]]


def test_the_headline_names_the_scoring_groups_and_no_spill_over(lexicon_results):
    import io

    from rich.console import Console

    from bias_suite.report.headline import HeadlineInput, print_headline

    r = lexicon_results
    buf = io.StringIO()
    print_headline(HeadlineInput(r), console=Console(file=buf, width=200, color_system=None), max_lines=60)
    text = buf.getvalue()
    assert "muslim" in text or "blind" in text or "straight" in text, text
    # unaffected groups appear only beside an affected one or as a spill-over ("via ...")
    for line in text.splitlines():
        for g in ("deaf", "autism", "christian", "hindu", "gay", "lesbian"):
            if f"'{g}'" in line or f" {g} " in line:
                assert any(x in line for x in ("muslim", "blind", "straight", "via")), line
