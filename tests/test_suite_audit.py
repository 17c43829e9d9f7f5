"""An audit of the bundled suites: every template validates, the classes of a
classification suite are balanced, no template repeats another, and the
suites are large enough to decide; plus the pure logic of
benchmarks/label_audit.py (gold labels against two readers)."""
from __future__ import annotations

import re
import string
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from bias_suite.families import load_suite, validate_suite
from bias_suite.suites import bundled_suites
from bias_suite.suites.loader import parse_slots, slot_base

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import label_audit  # noqa: E402

#: a bundled sentiment suite's templates, in all and per class
SENTIMENT_MIN_TEMPLATES = 180
SENTIMENT_MIN_PER_CLASS = 55
#: a bundled NER suite's templates
NER_MIN_TEMPLATES = 120
#: the most the template counts of two classes of one suite may differ by
BALANCE_TOLERANCE = 2

SUITES = bundled_suites()


def _id(path):
    return path.stem


@pytest.fixture(scope="module")
def loaded():
    return {p.stem: load_suite(p) for p in SUITES}


def test_the_bundle_has_both_kinds(loaded):
    assert sum(n.startswith("sentiment_") for n in loaded) == 9
    assert {"ner_names", "ner_nationality"} <= set(loaded)


# ---------------------------------------------------------------- (a) every template validates
@pytest.mark.parametrize("path", SUITES, ids=_id)
def test_every_template_validates(path):
    """Every template renders with every identity term and lexicon value
    (the checks of `bias-suite validate`, which stop at the first problem)."""
    suite = load_suite(path)
    assert validate_suite(suite) > 0


# ---------------------------------------------------------------- (b) balanced classes
def test_classes_are_balanced(loaded):
    """Every class of a classification suite has templates, and the
    classes' template counts differ by at most BALANCE_TOLERANCE (the rate
    metrics of the smallest class decide how small a suite is)."""
    bad = []
    for name, s in loaded.items():
        if not s.classes:
            continue
        counts = Counter(t.label for t in s.templates)
        per = [counts.get(c, 0) for c in s.classes]
        if min(per) == 0 or max(per) - min(per) > BALANCE_TOLERANCE:
            bad.append(f"{name}: {dict(zip(s.classes, per))}")
    assert not bad, "unbalanced classes: " + "; ".join(bad)


# ---------------------------------------------------------------- (c) no repeats
_PUNCT = re.compile("[" + re.escape("".join(c for c in string.punctuation if c not in "{}_")) + r"\s]+")


def template_key(text: str) -> str:
    """A template's text reduced to what makes it a different sentence:
    slots by their base name (``{Identity_np}``, ``{a:identity_np}`` and a
    written article before the slot are all ``{identity_np}``; numbered
    lexicon slots such as ``{profession1}`` are ``{profession}``), lower case,
    without punctuation and whitespace."""
    out, pos = [], 0
    for m in re.finditer(r"\{[^{}]*\}", text):
        (_, name, _, _), = parse_slots(m.group(0))
        out.append(re.sub(r"\b(an?)\s*$", "", text[pos:m.start()], flags=re.I))
        out.append("{" + re.sub(r"\d+$", "", slot_base(name)) + "}")
        pos = m.end()
    out.append(text[pos:])
    return _PUNCT.sub("", "".join(out).lower())


def test_template_key_by_hand():
    k = template_key("I met {a:identity_np} today.")
    assert k == "imet{identity_np}today"
    assert template_key("I met a {Identity_np} today!") == k
    assert template_key("  i MET an {identity_np}, today ") == k
    assert template_key("I met {identity_np} yesterday.") != k
    assert template_key("{Person} works at {company1}.") == template_key("{person} works at {company}")
    assert template_key("The {identity_adj} nurse") != template_key("The {identity_np} nurse")
    assert template_key("Anna met {person}.") == "annamet{person}"  # a word ending in "an" is kept


def test_no_template_repeats_another(loaded):
    """Within a suite, no two templates are the same sentence once case,
    punctuation, spacing, articles and slot spellings are set aside."""
    repeats = []
    for name, s in loaded.items():
        seen: dict = {}
        for t in s.templates:
            key = template_key(t.text)
            if key in seen:
                repeats.append(f"{name}: {seen[key]} and {t.id} ({t.text!r})")
            else:
                seen[key] = t.id
    assert not repeats, "templates that repeat another: " + "; ".join(repeats)


# ---------------------------------------------------------------- (d) sizes
def test_bundled_suite_sizes(loaded):
    """Sentiment suites: at least SENTIMENT_MIN_TEMPLATES templates and
    SENTIMENT_MIN_PER_CLASS per class; NER suites: NER_MIN_TEMPLATES."""
    small = []
    for name, s in loaded.items():
        n = len(s.templates)
        if name.startswith("sentiment_"):
            per = Counter(t.label for t in s.templates)
            fewest = min(per.get(c, 0) for c in s.classes)
            if n < SENTIMENT_MIN_TEMPLATES or fewest < SENTIMENT_MIN_PER_CLASS:
                small.append(f"{name}: {n} templates, {dict(per)}")
        elif name.startswith("ner_") and n < NER_MIN_TEMPLATES:
            small.append(f"{name}: {n} templates")
    assert not small, (f"suites below {SENTIMENT_MIN_TEMPLATES} templates / {SENTIMENT_MIN_PER_CLASS} per class "
                       f"(sentiment) or {NER_MIN_TEMPLATES} (NER): " + "; ".join(small))


# ---------------------------------------------------------------- the label audit's logic
def _frame(rows):
    return pd.DataFrame(rows, columns=["suite", "template", "label", "text", "default-sentiment", "VADER"])


HAND = [
    # s/a: both readers agree on both sentences
    ("s", "a", "positive", "a1", "positive", "positive"),
    ("s", "a", "positive", "a2", "positive", "positive"),
    # s/b: the model on 1 of 2 (half: it agrees), VADER on none
    ("s", "b", "negative", "b1", "negative", "neutral"),
    ("s", "b", "negative", "b2", "neutral", "neutral"),
    # s/c: neither (the model 1 of 3, VADER 0 of 3)
    ("s", "c", "neutral", "c1", "neutral", "positive"),
    ("s", "c", "neutral", "c2", "positive", "positive"),
    ("s", "c", "neutral", "c3", "negative", "negative"),
    # s/f: neither, and no sentence right at all: listed before s/c
    ("s", "f", "positive", "f1", "negative", "neutral"),
    # t/d: neither
    ("t", "d", "negative", "d1", "positive", "neutral"),
    # t/e: only VADER
    ("t", "e", "neutral", "e1", "positive", "neutral"),
]


def test_label_agreement_by_hand():
    per_suite, review = label_audit.label_agreement(_frame(HAND))
    assert per_suite.to_dict("records") == [
        {"suite": "s", "templates": 4, "agree default-sentiment": 2, "agree VADER": 1, "agree both": 1,
         "agree neither": 2},
        {"suite": "t", "templates": 2, "agree default-sentiment": 0, "agree VADER": 1, "agree both": 0,
         "agree neither": 1},
    ]
    # only the templates no reader agrees with; within a suite the clearest disagreement first
    assert review[["suite", "template", "label", "text"]].values.tolist() == [
        ["s", "f", "positive", "f1"], ["s", "c", "neutral", "c1"], ["t", "d", "negative", "d1"]]
    c = review.set_index("template").loc["c"]
    assert c["default-sentiment share"] == pytest.approx(1 / 3) and c["VADER share"] == 0
    # the model reads c as neutral, positive and negative once each: a tie, to the first in sorted order
    assert c["default-sentiment reads"] == "negative" and c["VADER reads"] == "positive"


def test_label_agreement_with_one_reader_and_bad_input():
    frame = _frame(HAND).drop(columns="VADER")
    per_suite, review = label_audit.label_agreement(frame, readers=("default-sentiment",))
    assert per_suite["agree neither"].tolist() == [2, 2]  # s: c and f; t: d and e
    assert per_suite["agree both"].tolist() == per_suite["agree default-sentiment"].tolist() == [2, 0]
    assert review["template"].tolist() == ["f", "c", "d", "e"]
    with pytest.raises(ValueError, match="VADER"):
        label_audit.label_agreement(frame)


def test_vader_cut_offs():
    assert label_audit.vader_classes([0.05, 0.0499, -0.05, -0.0499, 0.0, 0.9, -0.9]) == [
        "positive", "neutral", "negative", "neutral", "neutral", "positive", "negative"]
