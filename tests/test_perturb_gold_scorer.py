"""The scorer of the perturbation gold set (tests/perturb_gold.py) on small
hand-made rows, and the gold files themselves (well formed, halves disjoint,
every hard-case type in each half)."""
from __future__ import annotations

import copy
import json
import math
from collections import Counter

import pytest

from perturb_gold import (GOLD_DIR, TYPES, check_variant, expected_variant, load_gold, score, score_row,
                          validate_row, variants_from_examples, wilson_interval)


def _row(text, gender=None, names=None, types=("plain_pronoun",), rid="tweets:1"):
    return {"id": rid, "source": "tweets", "source_id": rid.split(":")[1], "line": 1, "text": text,
            "types": list(types),
            "expected": {"gender": gender or {"outcome": "no mention"}, "names": names or {"outcome": "no mention"}}}


MR = _row("Mr. Jones said he would call his mother.",
          gender={"outcome": "changed", "group": "male",
                  "changes": [{"from": "Mr.", "to": "Ms."}, {"from": "he", "to": "she"}, {"from": "his", "to": "her"}],
                  "keep": [{"word": "mother"}]},
          types=("honorific",))
# "his mother": the mother stays a mother, a second person of the other gender;
# the gold above is written for the test only (the set itself skips such rows).

JOHN = _row("John said he would call.",
            gender={"outcome": "skipped", "reason": "first name"},
            names={"outcome": "changed", "name_group": "male",
                   "changes": [{"from": "John", "to": "<name>"}, {"from": "he", "to": "she"}]},
            types=("plain_first_name",), rid="tweets:2")


# ------------------------------------------------------------- one variant
def test_right_swap():
    assert check_variant(MR, "gender", "Ms. Jones said she would call her mother.") == []


def test_an_extra_change_is_wrong():
    problems = check_variant(MR, "gender", "Ms. Jones said she would phone her mother.")
    assert problems and "not a mention" in problems[0]


def test_a_kept_word_that_changes_is_wrong():
    assert check_variant(MR, "gender", "Ms. Jones said she would call her father.")


def test_a_missing_change_is_wrong():
    problems = check_variant(MR, "gender", "Ms. Jones said he would call her mother.")
    assert problems and "left unchanged" in problems[0]


def test_a_wrong_replacement_is_wrong():
    assert check_variant(MR, "gender", "Ms. Jones said she would call hers mother.")
    assert check_variant(MR, "gender", "Mrs. Jones said she would call her mother.")
    assert check_variant(MR, "gender", "Ms. Jones said they would call her mother.")


def test_punctuation_and_capitals_are_kept():
    row = _row("''He said so,'' he wrote.",
               gender={"outcome": "changed", "group": "male", "changes": [{"from": "he", "to": "she"}]})
    assert check_variant(row, "gender", "''She said so,'' she wrote.") == []
    assert check_variant(row, "gender", "''she said so,'' she wrote.")
    assert check_variant(row, "gender", "She said so, she wrote.")


def test_name_placeholder_takes_any_listed_name_with_its_pronouns():
    assert check_variant(JOHN, "names", "Emma said she would call.") == []
    assert check_variant(JOHN, "names", "Liam said he would call.") == []          # same group: pronoun stays
    assert check_variant(JOHN, "names", "Emma said he would call.")                 # pronoun not followed
    assert check_variant(JOHN, "names", "Liam said she would call.")                # pronoun of the wrong group
    assert check_variant(JOHN, "names", "Zorblat said she would call.")             # not a first name
    assert check_variant(JOHN, "names", "Emma said she would call.", group="male")  # not the variant's group
    assert check_variant(JOHN, "names", "Liam said he would call.", group="female")


def test_names_keep_surnames_and_map_one_name_one_way():
    row = _row("Woody Allen met Woody's friend Tom.",
               names={"outcome": "changed", "name_group": "male",
                      "changes": [{"from": "Woody", "to": "<name>"}, {"from": "Tom", "to": "<name>"}],
                      "keep": [{"word": "Allen"}]})
    assert check_variant(row, "names", "Emma Allen met Emma's friend Olivia.") == []
    assert check_variant(row, "names", "Emma Allen met Olivia's friend Mia.")       # one name, two new names
    assert check_variant(row, "names", "Emma Allen met Emma's friend Emma.")        # two people merged
    assert check_variant(row, "names", "Emma Olivia met Emma's friend Mia.")        # the surname changed
    assert check_variant(row, "names", "Emma Allen met Emma's friend Liam.")        # two groups


def test_articles_follow_the_new_word():
    row = _row("It is a Nicholas Sparks story.",
               names={"outcome": "changed", "name_group": "male", "changes": [{"from": "Nicholas", "to": "<name>"}]})
    assert check_variant(row, "names", "It is an Emma Sparks story.") == []
    assert check_variant(row, "names", "It is a Mia Sparks story.") == []
    assert check_variant(row, "names", "It is a Emma Sparks story.")


def test_occurrences_object_and_possessive_her():
    row = _row("Her sense will serve her well.",
               gender={"outcome": "changed", "group": "female",
                       "changes": [{"from": "Her", "to": "His", "occurrence": 1},
                                   {"from": "her", "to": "him", "occurrence": 2}]})
    assert check_variant(row, "gender", "His sense will serve him well.") == []
    assert check_variant(row, "gender", "His sense will serve his well.")
    assert check_variant(row, "gender", "Him sense will serve him well.")


def test_plural_possessives_stay_grammatical():
    row = _row("The men's room and the girls' team.",
               gender={"outcome": "changed", "group": "male",
                       "changes": [{"from": "men's", "to": "women's"}]},
               types=("plural_possessive",))
    assert check_variant(row, "gender", "The women's room and the girls' team.") == []
    assert check_variant(row, "gender", "The women's's room and the girls' team.")
    assert check_variant(row, "gender", "The womens room and the girls' team.")


def test_possessive_of_a_name():
    row = _row("I read James' book.",
               names={"outcome": "changed", "name_group": "male", "changes": [{"from": "James", "to": "<name>"}]})
    assert check_variant(row, "names", "I read Isabella's book.") == []
    assert check_variant(row, "names", "I read Isabella' book.")
    assert check_variant(row, "names", "I read Isabella book.")


def test_alternatives_optional_changes_and_a_group_without_pronouns():
    row = _row("The guy was no actor, but a good man.",
               gender={"outcome": "changed", "group": "male",
                       "changes": [{"from": "guy", "to": ["girl", "gal", "woman"]},
                                   {"from": "actor", "to": "actress", "optional": True},
                                   {"from": "man", "to": "woman"}]},
               types=("kinship_role_noun",))
    assert check_variant(row, "gender", "The gal was no actor, but a good woman.") == []
    assert check_variant(row, "gender", "The woman was no actress, but a good woman.") == []
    assert check_variant(row, "gender", "The lady was no actor, but a good woman.")
    nb = "The non-binary person was no actor, but a good non-binary person."
    assert check_variant(row, "gender", nb, group="non_binary") == []
    assert check_variant(row, "gender", nb, group="female")
    # a pronoun sentence has no variant in a group without pronouns
    assert check_variant(MR, "gender", "Mx. Jones said he would call his mother.", group="non_binary")


def test_term_choices_only_when_asked():
    row = _row("A woman called.", gender={"outcome": "changed", "group": "female",
                                          "changes": [{"from": "woman", "to": "man"}]})
    assert check_variant(row, "gender", "A boy called.")
    assert check_variant(row, "gender", "A boy called.", term_choices=True) == []
    assert check_variant(row, "gender", "A girl called.", group="female")
    assert check_variant(row, "gender", "A girl called.", group="female", term_choices=True) == []


# --------------------------------------------------------------- one row
def test_score_row_right_wrong_and_gold_disagreement():
    s = score_row(MR, "gender", "changed", None, [{"group": "male", "text": MR["text"]},
                                                   {"group": "female", "text": "Ms. Jones said she would call her mother."}])
    assert s.swapped and s.right and not s.problems
    s = score_row(MR, "gender", "changed", None, ["Ms. Jones said she would call her mother.",
                                                  "Ms. Jones said she would call his mother."])
    assert s.swapped and s.right is False            # one wrong variant makes the sentence wrong
    s = score_row(JOHN, "gender", "changed", None, ["John said she would call."])
    assert s.right is False and "first name" in s.problems[0]
    s = score_row(MR, "gender", "changed", None, [MR["text"]])
    assert s.right is False                          # nothing was swapped after all
    assert score_row(MR, "gender", "skipped", "several people").right is None


def test_every_skip_needs_a_reason():
    assert score_row(MR, "gender", "skipped", "").skip_has_reason is False
    assert score_row(MR, "gender", "skipped", "several people").skip_has_reason
    assert score_row(MR, "gender", "no mention").skip_has_reason
    with pytest.raises(ValueError):
        score_row(MR, "gender", "swapped")


# ------------------------------------------------------------- aggregates
def test_wilson_interval_against_the_defining_equation():
    for k, n in [(95, 100), (10, 10), (0, 7), (47, 50), (120, 121)]:
        lo, hi = wilson_interval(k, n)
        z, p = 1.959963984540054, k / n
        for bound in (lo, hi):   # the bounds solve |p - q| = z * sqrt(q (1 - q) / n)
            if 0 < bound < 1:
                assert abs(abs(p - bound) - z * math.sqrt(bound * (1 - bound) / n)) < 1e-9
        assert lo <= p <= hi
    assert wilson_interval(95, 100)[0] == pytest.approx(0.8882, abs=1e-4)
    assert wilson_interval(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)


def test_score_precision_recall_and_types():
    other = copy.deepcopy(MR)
    other["id"], other["source_id"] = "tweets:3", "3"
    nomention = _row("The doors close.", types=("no_mention",), rid="tweets:4")
    rows = [MR, other, JOHN, nomention]
    outputs = {
        MR["id"]: {"outcome": "changed", "variants": ["Ms. Jones said she would call her mother."]},
        other["id"]: {"outcome": "skipped", "reason": ""},
        JOHN["id"]: {"outcome": "changed", "variants": ["John said she would call."]},
    }
    s = score(rows, outputs, "gender")
    assert (s["swapped"], s["right"], s["wrong"], s["gold_changed"]) == (2, 1, 1, 2)
    assert s["precision"] == 0.5 and s["recall"] == 0.5 and s["right_recall"] == 0.5
    assert s["every_skip_has_reason"] is False and s["skipped_without_reason"] == 1
    assert s["by_type"]["honorific"]["swap_share"] == 0.5
    assert s["by_type"]["no_mention"]["swapped"] == 0
    assert [i for i, _ in s["wrong_rows"]] == [JOHN["id"]]


def test_recall_over_the_listed_names():
    michael = _row("Michael smiled.", names={"outcome": "changed", "name_group": "male",
                                             "changes": [{"from": "Michael", "to": "<name>"}]}, rid="tweets:5")
    outputs = {michael["id"]: {"outcome": "changed", "variants": ["Emma smiled."]}}
    s = score([JOHN, michael], outputs, "names")
    assert s["recall"] == 0.5 and s["recall_listed"] == 1.0 and s["precision"] == 1.0


def test_variants_from_an_examples_table():
    records = [{"id": "tweets:2/names/male/0", "template": "tweets:2/names", "group": "male", "text": JOHN["text"]},
               {"id": "tweets:2/names/female/0", "template": "tweets:2/names", "group": "female",
                "text": "Emma said she would call."},
               {"id": "tweets:2/gender/female/0", "template": "tweets:2/gender", "group": "female", "text": "x"}]
    got = variants_from_examples(records, "names")
    assert list(got) == ["tweets:2"] and len(got["tweets:2"]) == 2
    s = score_row(JOHN, "names", "changed", None, got["tweets:2"])
    assert s.right


# ---------------------------------------------------------------- the data
def _halves():
    out = {"dev": load_gold("dev")}
    if (GOLD_DIR / "heldout.jsonl").is_file():
        out["heldout"] = load_gold("heldout")
    return out


@pytest.mark.parametrize("half", ["dev", "heldout"])
def test_gold_rows_are_well_formed(half):
    halves = _halves()
    if half not in halves:
        pytest.skip("heldout.jsonl not written yet")
    rows = halves[half]
    for row in rows:
        assert validate_row(row) == [], row["id"]
    assert len({r["id"] for r in rows}) == len(rows)
    assert {t for r in rows for t in r["types"]} == set(TYPES)   # every hard-case type in each half
    for row in rows:
        for attr in ("gender", "names"):
            if row["expected"][attr]["outcome"] == "changed":   # the gold's own swap passes the scorer
                assert check_variant(row, attr, expected_variant(row, attr)) == [], (row["id"], attr)


def test_halves_are_disjoint_and_balanced():
    halves = _halves()
    if "heldout" not in halves:
        pytest.skip("heldout.jsonl not written yet")
    dev, held = halves["dev"], halves["heldout"]
    assert not ({r["id"] for r in dev} & {r["id"] for r in held})
    assert not ({r["text"] for r in dev} & {r["text"] for r in held})
    assert len(dev) + len(held) >= 420 and abs(len(dev) - len(held)) <= 1
    cd, ch = Counter(t for r in dev for t in r["types"]), Counter(t for r in held for t in r["types"])
    for t in TYPES:
        assert abs(cd[t] - ch[t]) <= max(3, (cd[t] + ch[t]) // 8), t


def test_the_readme_counts_match_the_files():
    readme = (GOLD_DIR / "README.md").read_text(encoding="utf-8")
    halves = _halves()
    for name, rows in halves.items():
        counts = Counter(t for r in rows for t in r["types"])
        for t in TYPES:
            line = next((ln for ln in readme.splitlines() if ln.startswith(f"| `{t}` |")), None)
            assert line is not None, t
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert int(cells[2 if name == "dev" else 3]) == counts[t], (name, t)
