"""Suite loading, validation errors, expansion grammar, views."""
from pathlib import Path
import textwrap

import numpy as np
import pandas as pd
import pytest

from bias_suite.exceptions import SuiteError
from bias_suite.families import expand_suite, expand_suites, load_suite
from bias_suite.suites import article, bundled_suites, counterfactual_view, group_view, load_identity_terms, render
from bias_suite.paths import data_dir

IDENT = """\
attribute: gender
sources: [test source]
groups:
  female:
    identity_np: [woman, European woman]
    identity_adj: [female]
  male:
    identity_np: [man]
    identity_adj: [male]
"""


def write(tmp_path, name, text):
    p = Path(tmp_path) / name
    p.write_text(textwrap.dedent(text))
    return p


def suite_text(templates, extra=""):
    return "suite: tiny\nclasses: [negative, positive]\nidentity_terms: [g.yaml]\n" + extra + "templates:\n" + templates


@pytest.fixture
def tiny(tmp_path):
    write(tmp_path, "g.yaml", IDENT)
    return tmp_path


# ------------------------------------------------------------------ grammar
@pytest.mark.parametrize(
    "phrase,art",
    [("doctor", "a"), ("engineer", "an"), ("LGBT person", "an"), ("European", "a"), ("university student", "a"),
     ("hour", "an"), ("honest man", "an"), ("8-year-old", "an"), ("18-year-old", "an"), ("1-year-old", "a"),
     ("NGO worker", "an"), ("US citizen", "a"), ("Uzbek", "an"), ("Ugandan", "a"), ("one-armed man", "a"),
     ("older person", "an"), ("Muslim", "a"), ("unemployed person", "an")],
)
def test_article_by_sound(phrase, art):
    assert article(phrase) == art


def test_render_articles_capitals_spaces():
    assert render("{a:x} is  here .", {"x": "engineer"}) == "An engineer is here."
    assert render("I met {a:x}. {X} left", {"x": "older person"}) == "I met an older person. Older person left"
    assert render("we saw {x}! then {a:y}", {"x": "them", "y": "hour"}) == "We saw them! Then an hour"


# ------------------------------------------------------------------ expansion
def test_expansion_table_and_grammar(tiny):
    p = write(tiny, "s.yaml", suite_text(
        "  - {id: t1, text: '{a:identity_np} is {a:job}.', label: positive}\n"
        "  - {id: t2, text: 'The {identity_adj} nurse was rude.', label: negative}\n",
        "lexicons:\n  job: [engineer, doctor]\n"))
    ex = expand_suite(p)
    assert list(ex.columns[:7]) == ["id", "template", "attribute", "group", "term", "text", "label"]
    # t1: 2 fills x 3 terms, t2: 1 fill x 2 adjectives
    assert len(ex) == 8
    t1 = ex[ex["source_template"] == "t1"]
    assert set(t1["template"]) == {"tiny/t1#0", "tiny/t1#1"}
    assert "A European woman is an engineer." in set(t1["text"])
    assert "A man is a doctor." in set(t1["text"])
    assert ex["id"].is_unique
    assert not ex["text"].str.contains("  ").any()
    # deterministic ids and order
    pd.testing.assert_frame_equal(ex, expand_suite(p))
    # counterfactual unit: variants of one template differ only in the term
    for _, g in t1.groupby("template"):
        assert g["text"].str.replace(r"^A (European woman|woman|man) ", "", regex=True).nunique() == 1


def test_views_group_and_counterfactual(tiny):
    p = write(tiny, "s.yaml", suite_text("  - {id: t1, text: 'I saw {a:identity_np}.', label: positive}\n"))
    ex = expand_suite(p)
    gv = group_view(ex)["gender"]
    assert gv.sizes() == {"female": 2, "male": 1}
    cf = counterfactual_view(ex)["gender"]
    assert cf.tuples.shape == (2, 2)
    texts = cf.to_frame(ex, "text")
    assert set(texts["male"]) == {"I saw a man."}
    # sampling above max_tuples is seeded and distinct
    a = counterfactual_view(ex, max_tuples=1, seed=3)["gender"]
    b = counterfactual_view(ex, max_tuples=1, seed=3)["gender"]
    assert a.sampled == ["tiny/t1"] and np.array_equal(a.tuples, b.tuples) and a.tuples.shape == (1, 2)


def test_template_restricted_to_attributes_and_checklist_lexicon(tiny):
    p = write(tiny, "s.yaml", suite_text(
        "  - {id: t1, text: '{first_name} met {a:identity_np}.', label: positive, attributes: [gender]}\n"))
    ex = expand_suite(p)
    # CheckList's built-in first_name lexicon fills the slot (product)
    assert ex["template"].nunique() > 10
    assert ex["text"].str.match(r"^[A-Z][a-z]+ met an? ").all()


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "templates,extra,line,field,msg",
    [
        ("  - {id: t1, text: 'I saw {a:identity_np} {nope}.', label: positive}\n", "", 5, "templates[0].text", "unknown slot {nope}"),
        ("  - {id: t1, text: 'I saw {identity_np}.', label: happy}\n", "", 5, "templates[0].label", "not among the classes"),
        ("  - {id: t1, text: 'I saw {identity_np}.', label: positive}\n  - {id: t1, text: 'Hi {identity_np}.', label: negative}\n",
         "", 6, "templates[1].id", "duplicate template id"),
        ("  - {id: t1, text: 'I saw nobody.', label: positive}\n", "", 5, "templates[0].text", "exactly one identity slot"),
        ("  - {id: t1, text: 'I saw {identity_np} and {identity_adj}.', label: positive}\n", "", 5, "templates[0].text", "several identity"),
        ("  - {id: t1, text: 'I saw {identity_np}.', label: positive, colour: red}\n", "", 5, "templates[0].colour", "unknown field"),
        ("  - {id: t1, text: 'I saw {identity_np.', label: positive}\n", "", 5, "templates[0].text", "expected '}'"),
        ("  - {id: t1, text: 'I saw {person}.', label: positive}\n", "", 5, "templates[0].text", "none of the suite"),
    ],
)
def test_suite_errors_name_file_line_field(tiny, templates, extra, line, field, msg):
    p = write(tiny, "s.yaml", suite_text(templates, extra))
    with pytest.raises(SuiteError) as e:
        load_suite(p)
    err = e.value
    assert err.file == str(p) and err.line == line and err.field == field, str(err)
    assert msg in str(err)
    assert str(err).startswith(f"{p}:{line}: field '{field}'")


def test_identity_errors(tmp_path):
    bad_empty = IDENT.replace("identity_adj: [male]", "identity_adj: []")
    with pytest.raises(SuiteError, match="empty group") as e:
        load_identity_terms(write(tmp_path, "a.yaml", bad_empty))
    assert e.value.line == 9
    with pytest.raises(SuiteError, match="stray whitespace"):
        load_identity_terms(write(tmp_path, "b.yaml", IDENT.replace("[man]", "['man ']")))
    with pytest.raises(SuiteError, match="in groups 'female' and 'male'"):
        load_identity_terms(write(tmp_path, "c.yaml", IDENT.replace("[man]", "[woman]")))
    with pytest.raises(SuiteError, match="slot kinds"):
        load_identity_terms(write(tmp_path, "d.yaml", IDENT.replace("    identity_adj: [male]\n", "")))
    with pytest.raises(SuiteError, match="sources"):
        load_identity_terms(write(tmp_path, "e.yaml", IDENT.replace("sources: [test source]\n", "")))
    with pytest.raises(SuiteError, match="duplicate key"):
        load_identity_terms(write(tmp_path, "f.yaml", IDENT + "attribute: again\n"))


def test_yaml_is_loaded_safely(tmp_path):
    p = write(tmp_path, "x.yaml", "attribute: !!python/object/apply:os.system ['echo hi']\nsources: [a]\ngroups: {}\n")
    with pytest.raises(SuiteError, match="invalid YAML"):
        load_identity_terms(p)


# ------------------------------------------------------------------ bundled data
def test_bundled_suites_validate_and_are_balanced():
    paths = bundled_suites()
    names = {p.stem for p in paths}
    attrs = ["gender", "sexual_orientation", "religion", "nationality", "race_ethnicity", "age", "disability"]
    assert {f"sentiment_{a}" for a in attrs} | {"sentiment_generic", "sentiment_names"} <= names
    generic = load_suite(data_dir("templates") / "sentiment_generic.yaml")
    assert set(generic.identity) == set(attrs)
    labels = pd.Series([t.label for t in generic.templates])
    assert len(generic.templates) >= 30 and labels.value_counts().nunique() == 1
    for a in attrs:
        s = load_suite(data_dir("templates") / f"sentiment_{a}.yaml")
        assert len(s.templates) >= 30
        assert pd.Series([t.label for t in s.templates]).value_counts().min() >= 10
    names_suite = load_suite(data_dir("templates") / "sentiment_names.yaml")
    assert len(names_suite.templates) >= 60
    for p in sorted(data_dir("identity_terms").glob("*.yaml")):
        t = load_identity_terms(p)
        assert t.sources and len(t.groups) >= 2


def test_bundled_expansion_covers_every_attribute():
    ex = expand_suites([p for p in bundled_suites() if p.stem.startswith("sentiment_")])
    assert set(ex["attribute"]) == {"gender", "sexual_orientation", "religion", "nationality", "race_ethnicity",
                                    "age", "disability", "names"}
    assert ex["id"].is_unique
    assert not ex["text"].str.contains(r"\s{2,}|\{|\}").any()
    assert not ex["text"].str.contains(r"\ba [aeio]\w", regex=True).any()  # no "a engineer"
    assert ex["text"].str.match(r"^[\"'A-Z0-9]").all()
