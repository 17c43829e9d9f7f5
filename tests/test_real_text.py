"""The bundled real-text suite (sentiment_vader_people) and the default
sentiment model's split that holds its sentences out of training."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bias_suite.cli import app
from bias_suite.exceptions import ModelError, SuiteError
from bias_suite.models import vader as vd

# Reads the real-text suite (27k sentences) and tags it with spaCy: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


runner = CliRunner()
DOCS = Path(__file__).resolve().parent.parent / "docs"

# a made-up corpus: which sentences mention a person (gender or names) is known
PEOPLE = ["She loved the film.", "Emma hated every minute.", "My brother said it was fine.",  # "brother": no gender term
          "The men in the back laughed.", "He and Liam left early.", "A woman of her word.",
          "I told him the truth.", "Noah's dog was cute."]
PERSONLESS = ["The soup was cold.", "Great plot, weak ending.", "Nobody cares.", "The manager was rude.",
              "Charming and funny.", "Awful service.", "It is what it is.", "Herbs everywhere.",
              "The boat was manned by volunteers.", "Worst movie ever.", "I loved it.", "Meh."]


def test_person_mentions_is_the_engines_gender_or_names_mention():
    texts = PEOPLE + PERSONLESS + ["", "   "]
    got = vd.person_mentions(texts)
    expected = [True, True, False, True, True, True, True, True] + [False] * (len(PERSONLESS) + 2)
    assert got.tolist() == expected  # skipped mentions ("He and Liam": several groups) count too


def _corpus(n_rest=200):
    rng = np.random.default_rng(1)
    rest = [f"Sentence number {k} about the plot." for k in range(n_rest)]
    texts = PEOPLE + rest
    labels = np.concatenate([np.arange(len(PEOPLE)) % 3, rng.integers(0, 3, n_rest)])
    return texts, labels


def test_people_split_holds_out_exactly_the_person_mentioning_sentences():
    texts, labels = _corpus()
    mentions = vd.person_mentions(texts)
    train, held, people = vd.vader_split(texts, labels, seed=0, hold_out="people")
    assert set(people) == set(np.flatnonzero(mentions))
    assert not set(people) & set(train) and not set(people) & set(held) and not set(train) & set(held)
    assert len(train) + len(held) + len(people) == len(texts)
    # the rest is split stratified, 10% held out, the same each time
    rest = np.flatnonzero(~mentions)
    assert len(held) == int(np.ceil(0.1 * len(rest)))
    for c in range(3):
        share = np.mean(labels[held] == c) - np.mean(labels[rest] == c)
        assert abs(share) < 0.05
    again = vd.vader_split(texts, labels, seed=0, hold_out="people")
    assert all((a == b).all() for a, b in zip(again, (train, held, people)))


def test_stratified_split_is_the_recipe_before_and_trains_on_people():
    from sklearn.model_selection import train_test_split

    texts, labels = _corpus()
    train, held, people = vd.vader_split(texts, labels, seed=0, hold_out="stratified")
    a, b = train_test_split(np.arange(len(texts)), test_size=0.1, random_state=0, stratify=labels)
    assert (train == np.sort(a)).all() and (held == np.sort(b)).all() and len(people) == 0
    with pytest.raises(ModelError, match="hold_out"):
        vd.vader_split(texts, labels, hold_out="everything")


def test_build_refuses_an_unknown_hold_out(tmp_path):
    from bias_suite.models.default_sentiment import build_default_sentiment

    with pytest.raises(ModelError, match="hold_out"):
        build_default_sentiment(tmp_path / "m", hold_out="nobody")


@pytest.fixture(scope="module")
def suite(vader_sdist_path):
    from bias_suite.models.real_text import real_text_examples

    return real_text_examples("sentiment_vader_people", download_dir=vader_sdist_path.parent)


def test_suite_counts_and_card(suite):
    frame, report = suite
    got = {a.attribute: (a.templates, a.examples) for a in report.attributes}
    # names: 161 listed-name templates, and 131 of unlisted names where spaCy's recogniser is installed
    unlisted = "unlisted names" in report.tagger
    assert got["gender"][0] >= 500 and got["names"][0] == (292 if unlisted else 161) and got["religion"][0] >= 400
    names = next(a for a in report.attributes if a.attribute == "names")
    assert names.unlisted == (131 if unlisted else 0)
    per_attr = frame.groupby("attribute")["template"].nunique().to_dict()
    assert per_attr == {a: t for a, (t, _) in got.items()}
    assert frame.groupby("attribute").size().to_dict() == {a: n for a, (_, n) in got.items()}
    assert report.rows == 2_985
    # every source sentence is one the default recipe holds out: a person mention
    sources = frame["template"].str.rsplit("/", n=1).str[0].unique()
    assert all(re.fullmatch(r"(movieReviewSnippets|nytEditorialSnippets|tweets|amazonReviewSnippets)/\S+", s)
               for s in sources)
    # the card (docs/real_text.md) gives these numbers
    card = (DOCS / "real_text.md").read_text()
    assert f"{report.rows:,} sentences" in card
    for a, (t, n) in got.items():
        assert f"| `{a}` | {t:,} | {n:,} |" in card, a
    # the source sentence is the first variant of its own group; labels carried over
    first = frame[frame["attribute"] == "names"].groupby("template").head(1)
    assert first["label"].isin(["negative", "neutral", "positive"]).all()


def test_suite_without_unlisted_names(vader_sdist_path, suite):
    from bias_suite.models.real_text import real_text_examples

    frame, report = real_text_examples(download_dir=vader_sdist_path.parent, unlisted_names=False)
    got = {a.attribute: (a.templates, a.examples) for a in report.attributes}
    assert got["names"] == (161, 8_050) and report.tagger == "rule"
    # the listed-name templates are the same with and without the option
    full = suite[0]
    listed = set(frame.loc[frame["attribute"] == "names", "template"])
    assert listed <= set(full["template"])
    keep = full[full["template"].isin(listed)].reset_index(drop=True)
    pd.testing.assert_frame_equal(keep, frame[frame["attribute"] == "names"].reset_index(drop=True))
    others = full[full["attribute"] != "names"].reset_index(drop=True)
    pd.testing.assert_frame_equal(others, frame[frame["attribute"] != "names"].reset_index(drop=True))


def test_suite_sample_is_seeded_and_bounded(vader_sdist_path):
    from bias_suite.models.real_text import real_text_examples

    a, rep = real_text_examples(templates=20, seed=3, download_dir=vader_sdist_path.parent)
    b, _ = real_text_examples(templates=20, seed=3, download_dir=vader_sdist_path.parent)
    c, _ = real_text_examples(templates=20, seed=4, download_dir=vader_sdist_path.parent)
    assert a.equals(b) and not a.equals(c)
    assert a.groupby("attribute")["template"].nunique().to_dict() == {"gender": 20, "names": 20, "religion": 20}
    assert {x.attribute: x.templates for x in rep.attributes} == {"gender": 20, "names": 20, "religion": 20}
    g = a[a["attribute"] == "gender"]
    without = int((~g.groupby("template")["group"].agg(set).map(lambda s: "non_binary" in s)).sum())
    assert rep.attributes[0].left_out["non_binary (no pronouns)"] == without  # counted in the sample
    with pytest.raises(SuiteError, match="positive integer"):
        real_text_examples(templates=0, download_dir=vader_sdist_path.parent)
    with pytest.raises(SuiteError, match="no bundled real-text suite"):
        real_text_examples("sentiment_vader_nobody")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from _tiny_models import make_tiny_classifier

    return make_tiny_classifier(tmp_path_factory.mktemp("tiny") / "model")


def test_run_by_name_prints_the_report_and_how_many_values_are_decided(tmp_path, tiny, vader_sdist_path):
    out = tmp_path / "run"
    res = runner.invoke(app, ["run", "sentiment_vader_people", "--model", str(tiny), "--sample-templates", "12",
                              "--out", str(out), "--bootstrap", "20", "--no-cache", "--lines", "20"])
    assert res.exit_code == 0, res.output
    assert "sentiment_vader_people" in res.output and "2985 sentences" in res.output
    m = re.search(r"\(decided: (\d+) of (\d+) defined values\)", res.output)
    assert m and 0 <= int(m.group(1)) <= int(m.group(2))
    run = json.loads((out / "run.json").read_text())
    assert run["examples_table"]["path"] == "sentiment_vader_people"
    assert run["examples_table"]["format"] == "bundled real-text suite"
    results = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert {r["attribute"] for r in results} == {"gender", "names", "religion"}
    defined = [r for r in results if r.get("verdict") in ("material", "inconclusive", "small", "negligible")]
    assert int(m.group(2)) == len(defined)
    assert int(m.group(1)) == sum(r["verdict"] != "inconclusive" for r in defined)


def test_run_options_that_do_not_apply(tmp_path, tiny):
    res = runner.invoke(app, ["run", "sentiment_vader_people", "--model", str(tiny), "--perturb", "gender",
                              "--out", str(tmp_path / "x")])
    assert res.exit_code != 0 and "do not apply" in res.output
    res = runner.invoke(app, ["run", "sentiment_gender", "--model", str(tiny), "--sample-templates", "5",
                              "--out", str(tmp_path / "y")])
    assert res.exit_code != 0 and "--sample-templates" in res.output


def test_python_run_reads_the_suite_by_name(suite):
    """bs.run("sentiment_vader_people", ...) reads it as its examples table."""
    from bias_suite.pipeline import examples_table_of

    frame, report = suite
    table = examples_table_of("sentiment_vader_people", None)
    assert table.source == "sentiment_vader_people" and table.format == "bundled real-text suite"
    assert len(table.frame) == len(frame) and table.read_rows == report.rows
    assert set(table.frame["attribute"]) == {"gender", "names", "religion"}
