"""The trail of a perturbation (``log=True``, ``--log``) and what a user
says back to it: ``--keep``, ``--pairs``, ``--review`` (issue 51). Expected
rows are written out by hand."""
from __future__ import annotations

import json
import os
import stat

import pandas as pd
import pytest
from typer.testing import CliRunner

import bias_suite as bs
from bias_suite.cli import app

runner = CliRunner()

SENTENCES = pd.DataFrame({
    "id": ["a", "b", "c", "d", "e"],
    "text": ["She said the soup was cold.", "Mr. Andrew said he loved it.", "I handed her keys to the guard.",
             "Nothing happened.", "My mother liked it."],
    "label": ["negative", "positive", "neutral", "neutral", "positive"],
})


def test_the_log_has_a_row_per_sentence_and_attribute():
    frame, log = bs.perturb(SENTENCES, ["gender", "names"], tagger=False, log=True)
    assert list(log.columns) == ["id", "attribute", "outcome", "reason", "text", "variant", "review"]
    got = list(zip(log["id"], log["attribute"], log["outcome"], log["reason"], log["variant"]))
    assert got == [
        ("a", "gender", "changed", "", "He said the soup was cold."),
        ("b", "gender", "changed", "", "Ms. Andrew said she loved it."),
        ("c", "gender", "skipped", "her: object or possessive", ""),
        ("d", "gender", "no mention", "", ""),
        ("e", "gender", "changed", "", "My father liked it."),
        ("a", "names", "no mention", "", ""),
        ("b", "names", "skipped", "surname", ""),
        ("c", "names", "no mention", "", ""),
        ("d", "names", "no mention", "", ""),
        ("e", "names", "no mention", "", ""),
    ]
    assert set(frame["template"]) == {"a/gender", "b/gender", "e/gender"}
    # without log=True the return type is the examples frame, as before
    assert isinstance(bs.perturb(SENTENCES, ["gender"], tagger=False), pd.DataFrame)


@pytest.mark.parametrize("name", ["trail.csv", "trail.jsonl"])
def test_the_command_writes_the_log_and_prints_skips_by_reason(tmp_path, name):
    data = tmp_path / "s.csv"
    SENTENCES.to_csv(data, index=False)
    old = os.umask(0o027)
    try:
        res = runner.invoke(app, ["perturb", str(data), "-a", "gender", "--no-tagger", "--out", str(tmp_path / "p.jsonl"),
                                  "--log", str(tmp_path / name)])
    finally:
        os.umask(old)
    assert res.exit_code == 0, res.output
    assert "I handed her keys to the guard.  skipped: her: object or possessive" in res.output
    assert "She said the soup was cold.  ->  He said the soup was cold." in res.output
    path = tmp_path / name
    assert stat.S_IMODE(path.stat().st_mode) == 0o640   # 0666 less the umask 027
    if name.endswith(".csv"):
        log = pd.read_csv(path, keep_default_na=False)
    else:
        log = pd.DataFrame([json.loads(line) for line in path.read_text().splitlines()])
    assert list(log["outcome"]) == ["changed", "changed", "skipped", "no mention", "changed"]
    assert not list(tmp_path.glob(".*.tmp")), "no temporary file is left behind"


def test_keep_never_swaps_the_words():
    frame, log = bs.perturb(SENTENCES, ["gender"], tagger=False, keep=["mother"], log=True)
    assert list(log.loc[log["id"] == "e", "outcome"]) == ["no mention"]
    frame = bs.perturb(pd.DataFrame({"text": ["My mother said she was tired."]}), ["gender"], tagger=False,
                       keep="mother")
    assert list(frame["text"]) == ["My mother said she was tired.", "My mother said he was tired."]


def test_own_pairs_swap_like_person_nouns(tmp_path):
    p = tmp_path / "pairs.csv"
    p.write_text("female,male\nballerina,danseur\n")
    frame = bs.perturb(pd.DataFrame({"text": ["The ballerina was wonderful.", "The danseurs bowed."]}), ["gender"],
                       tagger=False, pairs=p)
    # the singular only: "danseurs" is no word of the file
    assert list(frame["text"]) == ["The ballerina was wonderful.", "The danseur was wonderful."]
    p.write_text("female,male\nballerinas,danseurs\n")
    frame = bs.perturb(pd.DataFrame({"text": ["The danseurs' bows were deep."]}), ["gender"], tagger=False, pairs=p)
    assert list(frame["text"]) == ["The danseurs' bows were deep.", "The ballerinas' bows were deep."]


@pytest.mark.parametrize("content,where", [
    ("femme,male\nballerina,danseur\n", r"pairs\.csv:2: field 'femme': no group 'femme' in attribute 'gender'"),
    ("female,male\nballerina,danseur\nprima,\n", r"pairs\.csv:3: field 'female': a pair needs words of two groups"),
    ("female,male\nballerina,dan seur\n", r"pairs\.csv:2: field 'male': a pair's word must be one word"),
    ("attribute,female,male\ngendr,ballerina,danseur\n", r"pairs\.csv:2: field 'attribute': attribute 'gendr'"),
])
def test_bad_pairs_are_one_error_naming_file_line_and_field(tmp_path, content, where):
    p = tmp_path / "pairs.csv"
    p.write_text(content)
    with pytest.raises(bs.BiasSuiteError, match=where):
        bs.perturb(SENTENCES, ["gender"], tagger=False, pairs=p)


def test_a_reviewed_log_drops_and_approves_sentences(tmp_path):
    _, log = bs.perturb(SENTENCES, ["gender"], tagger=False, log=True)
    log.loc[log["id"] == "a", "review"] = "drop"
    log.loc[log["id"] == "c", "review"] = "approve"
    path = tmp_path / "reviewed.csv"
    log.to_csv(path, index=False)
    frame, log2 = bs.perturb(SENTENCES, ["gender"], tagger=False, review=path, log=True)
    assert set(frame["template"]) == {"b/gender", "c/gender", "e/gender"}
    assert frame.loc[frame["template"] == "c/gender", "text"].tolist() == [
        "I handed her keys to the guard.", "I handed his keys to the guard."]   # approved: the rule reads "her keys"
    assert list(log2.loc[log2["id"] == "a", "reason"]) == ["dropped in review"]
    assert frame.attrs["perturbation"]["attributes"][0]["skipped"] == {"dropped in review": 1}


@pytest.mark.parametrize("edit,where", [
    (("a", "review", "maybe"), r"reviewed\.csv:2: field 'review': unknown review 'maybe'"),
    (("d", "review", "approve"), None),      # no mention: nothing to approve, nothing happens
])
def test_bad_reviews_are_one_error_naming_file_line_and_field(tmp_path, edit, where):
    _, log = bs.perturb(SENTENCES, ["gender"], tagger=False, log=True)
    ident, col, value = edit
    log.loc[log["id"] == ident, col] = value
    path = tmp_path / "reviewed.csv"
    log.to_csv(path, index=False)
    if where is None:
        bs.perturb(SENTENCES, ["gender"], tagger=False, review=path)
        return
    with pytest.raises(bs.BiasSuiteError, match=where):
        bs.perturb(SENTENCES, ["gender"], tagger=False, review=path)


def test_approving_what_cannot_be_swapped_is_an_error(tmp_path):
    table = pd.DataFrame({"id": ["x"], "text": ["She thanked him."]})
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"id": "x", "attribute": "gender", "review": "approve"}) + "\n")
    with pytest.raises(bs.BiasSuiteError, match="'x' \\(gender\\) cannot be approved: it is skipped for 'several groups'"):
        bs.perturb(table, ["gender"], tagger=False, review=path)
    path.write_text(json.dumps({"id": "x", "attribute": "gender"}) + "\n")
    with pytest.raises(bs.BiasSuiteError, match=r"r\.jsonl:1: field 'review': no column 'review'"):
        bs.perturb(table, ["gender"], tagger=False, review=path)
