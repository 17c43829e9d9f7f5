"""Unlisted first names (``unlisted_names=True``, ``--unlisted-names``):
a person found by spaCy's recogniser swapped for every listed name."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import bias_suite as bs
from bias_suite.exceptions import SuiteError
from bias_suite.suites.perturbation import perturb_with_report
from bias_suite.suites.perturbation.unlisted import load_person_finder

SENTENCES = [
    "Tom Seaver said he loved his team.",          # 1: surname kept, pronouns set to each group
    "Lena Hart's success means she must fail.",    # 2: possessive
    "Mr. Hawn was late.",                          # 3: skipped, title
    "Tom met Anna at the game.",                   # 4: skipped, several people
    "Deborah Kerr told him the truth about her.",  # 5: skipped, pronouns of both groups
    "Emma said she left early.",                   # 6: a listed name, as before
    "A fine film with no one in it.",              # 7: nobody
]


@pytest.fixture(scope="module")
def ner():
    try:
        load_person_finder()
    except SuiteError:
        pytest.skip("spaCy's en_core_web_sm is not installed")


@pytest.fixture(scope="module")
def perturbed(ner):
    return perturb_with_report(pd.DataFrame({"text": SENTENCES}), ["names"], unlisted_names=True, tagger=True)


def _variant(frame, template, term):
    rows = frame[(frame["template"] == template) & (frame["term"] == term)]
    assert len(rows) == 1, (template, term)
    return rows["group"].iloc[0], rows["text"].iloc[0]


def test_unlisted_name_gets_every_listed_name_and_its_pronouns(perturbed):
    frame, _ = perturbed
    assert _variant(frame, "1/names", "Emma") == ("female", "Emma Seaver said she loved her team.")
    assert _variant(frame, "1/names", "Rebecca") == ("female", "Rebecca Seaver said she loved her team.")
    assert _variant(frame, "1/names", "Liam") == ("male", "Liam Seaver said he loved his team.")
    assert _variant(frame, "2/names", "Olivia") == ("female", "Olivia Hart's success means she must fail.")
    assert _variant(frame, "2/names", "James") == ("male", "James Hart's success means he must fail.")
    for tpl in ("1/names", "2/names"):
        part = frame[frame["template"] == tpl]
        assert part.groupby("group").size().to_dict() == {"female": 25, "male": 25}
        assert part["group"].iloc[0] == "female"  # no own group: the file's order
        assert SENTENCES[int(tpl[0]) - 1] not in set(part["text"])  # the source is no variant


def test_unsafe_sentences_are_skipped_and_counted(perturbed):
    frame, rep = perturbed
    assert sorted(frame["template"].unique()) == ["1/names", "2/names", "6/names"]
    names = rep.attributes[0]
    # Tom and Anna are common first names of two genders; Deborah's sentence has pronouns of both
    assert dict(names.skipped) == {"title": 1, "several groups": 1, "pronouns of another group": 1}
    assert names.templates == 3 and names.unlisted == 2
    assert names.as_dict()["unlisted_templates"] == 2
    assert "unlisted names" in rep.tagger


def test_listed_names_are_unchanged_by_the_option(perturbed):
    frame, _ = perturbed
    plain = bs.perturb(pd.DataFrame({"text": SENTENCES}), ["names"], tagger=False)
    assert list(plain["template"].unique()) == ["6/names"]
    six = frame[frame["template"] == "6/names"]
    assert six["text"].iloc[0] == "Emma said she left early."  # its own text first, as without the option
    assert list(six["text"]) == list(plain["text"])


def test_option_is_off_by_default_and_not_for_conll(ner, tmp_path):
    frame = bs.perturb(pd.DataFrame({"text": SENTENCES[:2]}), ["names"], tagger=False)
    assert frame.empty
    conll = tmp_path / "a.conll"
    conll.write_text("Tom B-PER\nran O\n\n")
    with pytest.raises(SuiteError, match="not in tagged"):
        bs.perturb(conll, ["names"], unlisted_names=True)


def test_cli_unlisted_names(ner, tmp_path):
    from bias_suite.cli import app

    src = tmp_path / "s.csv"
    pd.DataFrame({"text": SENTENCES}).to_csv(src, index=False)
    out = tmp_path / "o.jsonl"
    res = CliRunner().invoke(app, ["perturb", str(src), "-a", "names", "--unlisted-names", "--no-tagger",
                                   "--terms-per-group", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    per = pd.DataFrame(rows).groupby("template").size().to_dict()
    assert per == {"1/names": 4, "2/names": 4, "6/names": 4}
