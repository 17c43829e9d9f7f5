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


def test_a_term_that_scores_is_not_a_group_that_scores(lexicon_results):
    # 'blind' scores and 'visually impaired' does not; 'straight' scores and 'heterosexual' does not. With the
    # terms resampled the groups' intervals hold the terms that do not score: no claim about the group
    for attr, name in (("disability", "blind"), ("sexual_orientation", "straight")):
        pairs = _scoring_pairs(lexicon_results, attr, name)
        assert len(pairs) and not pairs["verdict"].isin(["material", "small"]).any(), pairs[["group", "verdict"]]
        assert (pairs["ci_low"] < pairs["value"] / 2).all()
    # with the templates alone resampled, the claim is about these terms, and it holds
    r = _run(lexicon_model({**SENTIMENT, **IDENTITY}), "[ds][ie]*", resample_terms=False)
    for attr, name in (("disability", "blind"), ("sexual_orientation", "straight")):
        _material_in_the_right_direction(_scoring_pairs(r, attr, name), name)


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
