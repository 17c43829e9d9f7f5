"""Counterfactuals from real text (bias_suite.suites.perturbation,
``bs.perturb``, ``bias-suite perturb``): every expected variant below is
written out by hand."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import bias_suite as bs
from bias_suite.suites.perturbation import perturb_with_report
from bias_suite.suites.perturbation.pronouns import load_tagger, rule_role

runner = CliRunner()

# (attribute, source sentence, {group: the group's first variant}), one row per sentence.
# The first variant of the sentence's own group is the sentence; another group's first
# variant puts term i of a kind in place of term i of the same kind (names.yaml: Emma and
# Liam are both first, James is fourth like Isabella).
CASES = [
    # pronouns in every case; "her" as object and possessive, "hers", reflexives
    ("gender", "She is a great doctor.", {"male": "He is a great doctor."}),
    ("gender", "He said that he loved it.", {"female": "She said that she loved it."}),
    ("gender", "I told her the truth.", {"male": "I told him the truth."}),
    ("gender", "I like her new car.", {"male": "I like his new car."}),
    ("gender", "We gave him a present.", {"female": "We gave her a present."}),
    ("gender", "The red coat is hers, not mine.", {"male": "The red coat is his, not mine."}),
    ("gender", "The book is his.", {"female": "The book is hers."}),
    ("gender", "His book is better than mine.", {"female": "Her book is better than mine."}),
    ("gender", "His is better than mine.", {"female": "Hers is better than mine."}),
    ("gender", "She hurt herself.", {"male": "He hurt himself."}),
    ("gender", "He blamed himself for it.", {"female": "She blamed herself for it."}),
    ("gender", "I saw her yesterday.", {"male": "I saw him yesterday."}),
    ("gender", "Ask her about it.", {"male": "Ask him about it."}),
    ("gender", "Her dog loves her.", {"male": "His dog loves him."}),
    ("gender", "I love her dearly.", {"male": "I love him dearly."}),
    ("gender", "It made her cry.", {"male": "It made him cry."}),
    ("gender", "Let her go.", {"male": "Let him go."}),
    ("gender", "Her family lives nearby.", {"male": "His family lives nearby."}),
    ("gender", "She said she would ride her bike to her sister herself.",
     {"male": "He said he would ride his bike to his brother himself."}),   # kinship nouns swap along
    ("gender", "SHE WAS RIGHT.", {"male": "HE WAS RIGHT."}),
    ("gender", '"She is here," I said.', {"male": '"He is here," I said.'}),
    ("gender", "The man and his son left.", {"female": "The woman and her daughter left."}),
    # identity nouns, singular and plural, with articles and possessives
    ("gender", "A woman smiled.", {"male": "A man smiled.", "non_binary": "A non-binary person smiled."}),
    ("gender", "An elderly woman smiled.", {"male": "An elderly man smiled."}),
    ("gender", "The women were happy.", {"male": "The men were happy.", "non_binary": "The non-binary people were happy."}),
    ("gender", "Girls love this game.", {"male": "Boys love this game.", "non_binary": "Genderqueer people love this game."}),
    ("gender", "The girl's bike is red.", {"male": "The boy's bike is red.", "non_binary": "The genderqueer person's bike is red."}),
    ("gender", "The girls' room is clean.", {"male": "The boys' room is clean."}),
    ("gender", "A female engineer designed it.", {"male": "A male engineer designed it.",
                                                  "non_binary": "A non-binary engineer designed it."}),
    # first names: at a sentence start, with a possessive, with their pronouns
    ("names", "Emma is my best friend.", {"male": "Liam is my best friend."}),
    ("names", "Emma's car is red.", {"male": "Liam's car is red."}),
    ("names", "James' car is blue.", {"female": "Isabella's car is blue."}),
    ("names", "Isabella's dog barked.", {"male": "James's dog barked."}),
    ("names", "Liam said he would call his friend.", {"female": "Emma said she would call her friend."}),
    ("names", "I met Olivia and thanked her.", {"male": "I met Noah and thanked him."}),
    ("names", "Emma met Olivia at her house.", {"male": "Liam met Noah at his house."}),
    # the other attributes: noun phrases, plurals, adjectives before person nouns, predicates
    ("religion", "She is a Muslim.", {"atheist": "She is an atheist.", "jewish": "She is a Jew."}),
    ("religion", "An atheist wrote this.", {"muslim": "A Muslim wrote this."}),
    ("religion", "Muslims pray daily.", {"atheist": "Atheists pray daily."}),
    ("religion", "My neighbor is Jewish.", {"muslim": "My neighbor is Muslim.", "atheist": "My neighbor is atheist."}),
    ("religion", "He's Jewish and proud of it.", {"muslim": "He's Muslim and proud of it."}),
    ("age", "An elderly person called.", {"young": "A younger person called.", "middle_aged": "A middle-aged person called."}),
    ("nationality", "I moved to Japan last year.", {"upper_middle_income": "I moved to Brazil last year.",
                                                    "low_income": "I moved to Afghanistan last year."}),
    ("nationality", "A Japanese engineer visited.", {"upper_middle_income": "A Brazilian engineer visited.",
                                                     "low_income": "An Afghan engineer visited."}),
    ("race_ethnicity", "White people live here.", {"black": "Black people live here.", "asian": "Asian people live here."}),
    ("sexual_orientation", "The gay man smiled.", {"straight": "The straight person smiled.", "lesbian": "The lesbian smiled."}),
    ("disability", "A deaf person signed.", {"blind": "A blind person signed.", "autism": "An autistic person signed."}),
]

# (attribute, sentence): no mention of the attribute, so no template
NO_MENTION = [
    ("gender", "Nothing to see here."), ("gender", "The weather was lovely."), ("gender", "The manager approved it."),
    ("gender", "They shared their food."), ("names", "She called her mother."), ("religion", "I love Jewish food."),
    ("age", "The senior engineer left."), ("nationality", "The Japanese food was great."),
]

# (attribute, sentence, why it is skipped)
SKIPPED = [
    ("gender", "She thanked him.", "several groups"),
    ("gender", "Emma said she was tired.", "first name"),
    ("names", "Emma met Liam.", "several groups"),
    ("names", "Emma said he was late.", "pronouns of another group"),
    ("names", "Emma is a woman of her word.", "gender noun"),
    ("nationality", "Japan and China signed a deal.", "several groups"),
]

# where the tagger and the rule read "her" differently: (sentence, rule's variant, tagger's variant)
TAGGER_DIFFERS = [
    ("I called her Monday.", "I called his Monday.", "I called him Monday."),
    ("Please help her carry the bags.", "Please help his carry the bags.", "Please help him carry the bags."),
    ("I find her annoying.", "I find his annoying.", "I find him annoying."),
]


def _first_variants(frame: pd.DataFrame) -> dict:
    """{(template, group): text of the group's first row}"""
    firsts = frame.drop_duplicates(["template", "group"])
    return {(t, g): x for t, g, x in zip(firsts["template"], firsts["group"], firsts["text"])}


def _perturbed(attribute, sentences, tagger=False, **kw):
    table = pd.DataFrame({"text": sentences, "label": ["positive"] * len(sentences)})
    return perturb_with_report(table, [attribute], tagger=tagger, **kw)


def test_at_least_forty_sentences_are_written_out_by_hand():
    assert len(CASES) + len(NO_MENTION) + len(SKIPPED) + len(TAGGER_DIFFERS) >= 40
    assert len({s for _, s, _ in CASES}) == len(CASES)


@pytest.mark.parametrize("attribute", sorted({a for a, _, _ in CASES}))
def test_each_sentence_perturbs_as_written_by_hand(attribute):
    cases = [(s, want) for a, s, want in CASES if a == attribute]
    frame, report = _perturbed(attribute, [s for s, _ in cases])
    first = _first_variants(frame)
    for i, (src, want) in enumerate(cases, start=1):
        tpl = f"{i}/{attribute}"
        rows = frame[frame["template"] == tpl]
        assert len(rows), src
        own = rows["group"].iat[0]
        assert rows["text"].iat[0] == src, "the sentence's own group comes first, its text unchanged"
        assert own not in want
        for group, text in want.items():
            assert first[(tpl, group)] == text, (src, group)
    rep = report.attributes[0]
    assert rep.templates == len(cases) and rep.mentioned == len(cases) and not rep.skipped
    assert (frame["label"] == "positive").all()


@pytest.mark.parametrize("attribute,sentence", NO_MENTION)
def test_sentences_without_a_mention_give_nothing(attribute, sentence):
    frame, report = _perturbed(attribute, [sentence], insert=False)
    assert frame.empty and report.attributes[0].mentioned == 0


@pytest.mark.parametrize("attribute,sentence,why", SKIPPED)
def test_unsafe_sentences_are_skipped_and_counted(attribute, sentence, why):
    frame, report = _perturbed(attribute, [sentence])
    assert frame.empty
    assert dict(report.attributes[0].skipped) == {why: 1}
    assert report.attributes[0].mentioned == 1


def test_the_rule_reads_her_and_his():
    def role(p, text):
        return rule_role(p, text, text.index(p) + len(p))

    assert [role("her", t) for t in ("I told her the truth.", "I like her car.", "Ask her.", "I love her dearly.",
                                     "Her family left.".lower(), "they made her cry", "they made her bed")] == \
        ["object", "det", "object", "object", "det", "object", "det"]
    assert [role("his", t) for t in ("The book is his.", "his is better", "his own car", "his car")] == \
        ["indep", "indep", "det", "det"]


def test_the_rule_where_the_tagger_reads_otherwise():
    frame, rep = _perturbed("gender", [s for s, _, _ in TAGGER_DIFFERS], tagger=False)
    first = _first_variants(frame)
    assert [first[(f"{i}/gender", "male")] for i in (1, 2, 3)] == [r for _, r, _ in TAGGER_DIFFERS]
    assert rep.tagger == "rule"


@pytest.fixture(scope="module")
def tagger_available():
    if load_tagger() is None:
        pytest.skip("spaCy's en_core_web_sm is not installed")


def test_the_tagger_where_it_reads_otherwise(tagger_available):
    frame, rep = _perturbed("gender", [s for s, _, _ in TAGGER_DIFFERS], tagger=True)
    first = _first_variants(frame)
    assert [first[(f"{i}/gender", "male")] for i in (1, 2, 3)] == [t for _, _, t in TAGGER_DIFFERS]
    assert rep.tagger.startswith("spaCy en_core_web_sm")


def test_the_tagger_agrees_with_the_table_elsewhere(tagger_available):
    cases = [(s, want) for a, s, want in CASES if a == "gender"]
    frame, _ = _perturbed("gender", [s for s, _ in cases], tagger=True)
    first = _first_variants(frame)
    for i, (src, want) in enumerate(cases, start=1):
        for group, text in want.items():
            assert first[(f"{i}/gender", group)] == text, src


# ---------------------------------------------------------------- whole templates
def test_a_template_holds_every_term_of_every_group():
    frame, report = _perturbed("gender", ["A woman smiled.", "She is kind.", "A girl smiled."])
    a = frame[frame["template"] == "1/gender"]
    # gender's nouns swap with the noun of the same place only: a woman is no boy (that would change the age too)
    assert list(zip(a["id"], a["group"], a["term"], a["text"])) == [
        ("1/gender/female/0", "female", "woman", "A woman smiled."),
        ("1/gender/male/0", "male", "man", "A man smiled."),
        ("1/gender/non_binary/0", "non_binary", "non-binary person", "A non-binary person smiled."),
    ]
    b = frame[frame["template"] == "2/gender"]
    assert list(zip(b["group"], b["term"], b["text"])) == [("female", "she", "She is kind."), ("male", "he", "He is kind.")]
    c = frame[frame["template"] == "3/gender"]
    assert list(c["text"]) == ["A girl smiled.", "A boy smiled.", "A genderqueer person smiled."]
    rep = report.attributes[0]
    assert dict(rep.left_out) == {"non_binary (no pronouns)": 1}
    assert (rep.templates, rep.examples) == (3, 8)
    assert list(frame.columns) == ["id", "template", "attribute", "group", "term", "text", "label"]


def test_names_every_name_once_and_the_sentence_first():
    frame, _ = _perturbed("names", ["Emma met Olivia."])
    assert len(frame) == 50 and frame["text"].is_unique
    assert frame["text"].iat[0] == "Emma met Olivia."
    assert frame["text"].iat[1] == "Olivia met Sophia."       # term choice 1: every name one further
    assert frame["text"].iat[25] == "Liam met Noah."
    assert frame["text"].iat[49] == "Jonathan met Liam."      # the last choice wraps around
    assert frame["term"].iat[49] == "Jonathan"


def test_terms_per_group_is_a_seeded_sample_that_keeps_the_sentence():
    kw = dict(terms_per_group=3, seed=7)
    a, _ = _perturbed("names", ["Emma is here.", "Liam is here."], **kw)
    b, _ = _perturbed("names", ["Emma is here.", "Liam is here."], **kw)
    pd.testing.assert_frame_equal(a, b)
    assert a.groupby(["template", "group"]).size().tolist() == [3, 3, 3, 3]
    assert a["text"].iat[0] == "Emma is here." and a[a["template"] == "2/names"]["text"].iat[0] == "Liam is here."
    others = {s: set(_perturbed("names", ["Emma is here."], terms_per_group=3, seed=s)[0]["text"]) for s in range(4)}
    assert len({frozenset(v) for v in others.values()}) > 1, "the seed changes the sample"
    assert all("Emma is here." in v for v in others.values())


def test_insert_puts_an_adjective_before_a_person_noun():
    frame, report = _perturbed("religion", ["A friend called.", "My neighbours are kind.", "It rained."], insert=True)
    one = frame[frame["template"] == "1/religion"]
    assert list(one["text"][:4]) == ["A Christian friend called.", "A Catholic friend called.",
                                     "A Protestant friend called.", "A Muslim friend called."]
    assert one["text"].iat[-1] == "An atheist friend called."
    two = frame[frame["template"] == "2/religion"]
    assert two["text"].iat[0] == "My Christian neighbours are kind." and len(two) == 9  # 3 + 6 adjectives
    rep = report.attributes[0]
    assert (rep.inserted, rep.mentioned, rep.templates) == (2, 0, 2)
    g, rep = _perturbed("gender", ["A friend called.", "Emma's friend called.", "My brother is kind."], insert=True)
    assert list(g["text"]) == ["A female friend called.", "A male friend called.", "A non-binary friend called.",
                               "A genderqueer friend called.",   # a gender adjective before a gender-neutral noun only
                               "My brother is kind.", "My sister is kind."]   # "brother" is a mention of gender
    assert rep.attributes[0].inserted == 1 and rep.attributes[0].mentioned == 1
    r, _ = _perturbed("religion", ["My brother is kind."], insert=True, terms_per_group=1)
    assert r[r["group"] == "muslim"]["text"].tolist() == ["My Muslim brother is kind."]


# ---------------------------------------------------------------- NER
CONLL_BILOU = """Emma B-PER
Watson L-PER
moved O
to O
Japan U-LOC
. O

Emma U-PER
said O
she O
loves O
her O
dog O
. O

Charlotte U-LOC
is O
nice O

I O
left O
Bosnia B-LOC
and I-LOC
Herzegovina L-LOC
with O
James U-PER
. O
"""


def _ner(tmp_path, text, attributes, name="t.conll"):
    p = tmp_path / name
    p.write_text(text)
    return perturb_with_report(p, attributes, tagger=False)


def test_conll_names_keep_their_tags_and_swap_pronouns(tmp_path):
    frame, report = _ner(tmp_path, CONLL_BILOU, ["names"])
    row = frame[frame["id"] == "0/names/male/0"].iloc[0]
    assert row["tokens"] == ["Liam", "Watson", "moved", "to", "Japan", "."]
    assert row["tags"] == ["B-PER", "L-PER", "O", "O", "U-LOC", "O"] and row["term_span"] == [0, 1]
    row = frame[frame["id"] == "1/names/male/0"].iloc[0]
    assert row["tokens"] == ["Liam", "said", "he", "loves", "his", "dog", "."] and row["term_span"] == [0, 1]
    assert dict(report.attributes[0].skipped) == {"entity tags": 1}   # Charlotte is a place here
    assert frame[frame["id"] == "3/names/female/0"].iloc[0]["tokens"][6] == "Isabella"


def test_conll_countries_get_tags_for_their_token_count(tmp_path):
    frame, _ = _ner(tmp_path, CONLL_BILOU, ["nationality"])
    by_term = {(t, r["template"]): r for t, (_, r) in zip(frame["term"], frame.iterrows())}
    r = by_term[("South Korea", "0/nationality")]
    assert r["tokens"] == ["Emma", "Watson", "moved", "to", "South", "Korea", "."]
    assert r["tags"] == ["B-PER", "L-PER", "O", "O", "B-LOC", "L-LOC", "O"] and r["term_span"] == [4, 6]
    r = by_term[("Brazil", "3/nationality")]   # three tokens become one; James moves two to the left
    assert r["tokens"] == ["I", "left", "Brazil", "with", "James", "."]
    assert r["tags"] == ["O", "O", "U-LOC", "O", "U-PER", "O"] and r["term_span"] == [2, 3]


def test_conll_bio_stays_bio(tmp_path):
    bio = "\n".join(line.replace("U-", "B-").replace("L-", "I-") for line in CONLL_BILOU.splitlines()) + "\n"
    frame, _ = _ner(tmp_path, bio, ["nationality"])
    r = frame[(frame["template"] == "0/nationality") & (frame["term"] == "Saudi Arabia")].iloc[0]
    assert r["tags"] == ["B-PER", "I-PER", "O", "O", "B-LOC", "I-LOC", "O"]
    r = frame[(frame["template"] == "3/nationality") & (frame["term"] == "Japan")].iloc[0]
    assert r["tags"] == ["O", "O", "B-LOC", "O", "B-PER", "O"]


def test_conll_refuses_other_attributes(tmp_path):
    with pytest.raises(bs.BiasSuiteError, match="names and nationality only"):
        _ner(tmp_path, CONLL_BILOU, ["gender"])


# ---------------------------------------------------------------- input errors
def test_bad_input_is_one_clear_error(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("sentence,label\nShe left.,negative\n")
    with pytest.raises(bs.BiasSuiteError, match=r"s\.csv.*no column 'text'"):
        bs.perturb(p, ["gender"])
    p.write_text("id,text\n1,She left.\n2,He left.\n1,She stayed.\n")
    with pytest.raises(bs.BiasSuiteError, match=r"s\.csv:4: field 'id': duplicate id '1'"):
        bs.perturb(p, ["gender"])
    with pytest.raises(bs.BiasSuiteError, match="did you mean 'gender'"):
        bs.perturb(p, ["gendr"])
    with pytest.raises(bs.BiasSuiteError, match="given twice"):
        bs.perturb(p, ["gender", "gender"])


def test_own_identity_terms_file(tmp_path):
    f = tmp_path / "pets.yaml"
    f.write_text("attribute: pets\nsources: [test]\ngroups:\n  cats:\n    identity_np: [cat owner]\n"
                 "    identity_plural: [cat owners]\n  dogs:\n    identity_np: [dog owner]\n    identity_plural: [dog owners]\n")
    ex = bs.perturb(pd.DataFrame({"text": ["Every cat owner knows it.", "Dog owners walk."]}), identity_terms=[f])
    assert list(ex["text"]) == ["Every cat owner knows it.", "Every dog owner knows it.", "Dog owners walk.",
                                "Cat owners walk."]
    assert set(ex["attribute"]) == {"pets"}


# ---------------------------------------------------------------- the command line
def _sentences_csv(path: Path) -> Path:
    """A CSV with the default columns (id, text, label) built from the table above."""
    rows = [(f"s{i}", s, ["negative", "neutral", "positive"][i % 3]) for i, (a, s, _) in enumerate(CASES)
            if a in ("gender", "names")]
    rows += [(f"n{i}", s, "neutral") for i, (_, s) in enumerate(NO_MENTION)]
    pd.DataFrame(rows, columns=["id", "text", "label"]).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from _tiny_models import make_tiny_classifier

    return make_tiny_classifier(tmp_path_factory.mktemp("tiny") / "model")


@pytest.mark.slow  # builds a tiny model and runs it
def test_perturb_then_run_with_no_column_options(tmp_path, tiny):
    from bias_suite.cli import app

    data = _sentences_csv(tmp_path / "sentences.csv")
    out = tmp_path / "p.jsonl"
    res = runner.invoke(app, ["perturb", str(data), "--attribute", "gender", "--attribute", "names", "--no-tagger",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    ex = pd.read_json(out, lines=True, dtype=False)
    assert list(ex.columns) == ["id", "template", "attribute", "group", "term", "text", "label"]
    n_gender = sum(a == "gender" for a, _, _ in CASES) + 1   # and "She called her mother." (no name in it)
    n_names = sum(a == "names" for a, _, _ in CASES)         # their pronouns come with a first name: gender skips them
    assert ex.groupby("attribute")["template"].nunique().to_dict() == {"gender": n_gender, "names": n_names}
    first = ex[ex["template"] == "s0/gender"]
    assert list(first["text"]) == ["She is a great doctor.", "He is a great doctor."]
    assert set(first["label"]) == {"negative"}
    assert f"wrote {len(ex)} examples ({n_gender + n_names} templates)" in res.output
    assert "She is a great doctor.  ->  He is a great doctor." in res.output
    assert "gender: left out non_binary (no pronouns)" in res.output

    run_dir = tmp_path / "run"
    res = runner.invoke(app, ["run", str(out), "--model", str(tiny), "--out", str(run_dir), "--bootstrap", "20", "-q"])
    assert res.exit_code == 0, res.output
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["examples"] == len(ex) and meta["examples_table"]["templates"] is True
    results = pd.read_json(run_dir / "results.jsonl", lines=True)
    assert {"gender", "names"} <= set(results["attribute"])
    assert (results["view"] == "counterfactual").any()

    # run DATA --perturb: the same examples without the file in between
    res = runner.invoke(app, ["run", str(data), "--perturb", "gender", "--perturb", "names", "--model", str(tiny),
                              "--out", str(tmp_path / "run2"), "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    assert "\"her\" read by" in res.output
    back = pd.read_json(tmp_path / "run2" / "examples.jsonl", lines=True, dtype=False)
    assert len(back) == len(ex) and set(back["template"]) == set(ex["template"])


def test_dry_run_writes_nothing_and_errors_are_one_line(tmp_path):
    from bias_suite.cli import app

    data = _sentences_csv(tmp_path / "sentences.csv")
    res = runner.invoke(app, ["perturb", str(data), "-a", "religion", "--insert", "--dry-run", "--no-tagger"])
    assert res.exit_code == 0, res.output
    assert "dry run:" in res.output and "nothing written" in res.output and not list(tmp_path.glob("*.jsonl"))
    res = runner.invoke(app, ["perturb", str(data), "-a", "gender"])
    assert res.exit_code == 2 and "give --out FILE (or --dry-run)" in res.output
    res = runner.invoke(app, ["perturb", str(data), "-a", "gender", "--text-column", "sentence", "--out",
                              str(tmp_path / "x.jsonl")])
    assert res.exit_code == 2 and "field 'sentence'" in res.output and "no column 'sentence'" in res.output
    res = runner.invoke(app, ["run", str(data), "--perturb", "gender", "--side", "x.csv"])
    assert res.exit_code == 2 and "do not go with --perturb" in res.output


def test_perturbed_conll_runs_with_a_tagger(tmp_path):
    from _tiny_ner import make_tiny_token_classifier

    from bias_suite.cli import app

    data = tmp_path / "t.conll"
    data.write_text(CONLL_BILOU)
    out = tmp_path / "t.jsonl"
    res = runner.invoke(app, ["perturb", str(data), "-a", "names", "-a", "nationality", "--terms-per-group", "2",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    model = make_tiny_token_classifier(tmp_path / "ner", tags=("O", "B-PER", "I-PER", "B-LOC", "I-LOC"))
    res = runner.invoke(app, ["run", str(out), "--model", str(model), "--out", str(tmp_path / "run"), "--bootstrap", "0",
                              "-q"])
    assert res.exit_code == 0, res.output
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["task"] == "sequence_labelling" and meta["examples"] == sum(1 for _ in out.open())


def test_every_table_format_gives_the_same_examples(tmp_path):
    src = pd.DataFrame({"id": ["a", "b", "c"], "text": ["She left early.", "Emma's dog barked.", "No one came."],
                        "label": ["negative", "neutral", "positive"]})
    src.to_csv(tmp_path / "s.csv", index=False)
    src.to_csv(tmp_path / "s.tsv", index=False, sep="\t")
    src.to_json(tmp_path / "s.jsonl", orient="records", lines=True)
    src.to_parquet(tmp_path / "s.parquet")
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_pandas(src, preserve_index=False).save_to_disk(str(tmp_path / "s_ds"))
    frames = [bs.perturb(tmp_path / name, ["gender", "names"], terms_per_group=2, tagger=False)
              for name in ("s.csv", "s.tsv", "s.jsonl", "s.parquet", "s_ds")]
    for f in frames[1:]:
        pd.testing.assert_frame_equal(f, frames[0])
    assert list(frames[0].drop_duplicates("template")["template"]) == ["a/gender", "b/names"]
    # and back out: CSV and Parquet outputs read back as the same examples
    from bias_suite.suites.perturbation import write_examples

    for name in ("p.csv", "p.parquet"):
        write_examples(frames[0], tmp_path / name)
        back = bs.read_examples(tmp_path / name).frame
        assert list(back["text"]) == list(frames[0]["text"]) and list(back["template"]) == list(frames[0]["template"])
