"""A seeded sample of terms per group (bias_suite.suites.selection.sample_terms)."""
from __future__ import annotations

import pytest

from bias_suite.exceptions import BiasSuiteError
from bias_suite.suites import load_suite
from bias_suite.suites.expansion import expand_suite
from bias_suite.suites.selection import sample_terms


def test_names_sampled_to_eight_per_group():
    full = load_suite("templates/sentiment_names.yaml")
    (s,) = sample_terms([full], 8, seed=3)
    for g in ("female", "male"):
        kept, listed = s.identity["names"].terms[g]["person"], full.identity["names"].terms[g]["person"]
        assert len(kept) == 8 and len(set(kept)) == 8 and set(kept) <= set(listed)
        assert kept == [t for t in listed if t in kept]  # file order
    # every template renders every kept name and no other: 25 names per group became 8
    n_full, n_kept = len(expand_suite(full)), len(expand_suite(s))
    assert n_kept * 25 == n_full * 8
    assert set(expand_suite(s)["term"]) == {t for g in ("female", "male") for t in s.identity["names"].terms[g]["person"]}
    # the suite given is unchanged; the same seed gives the same sample, another seed another one
    assert len(full.identity["names"].terms["female"]["person"]) == 25
    assert sample_terms([full], 8, seed=3)[0].identity == s.identity
    assert sample_terms([full], 8, seed=4)[0].identity != s.identity


def test_parallel_forms_stay_together_and_small_groups_keep_all():
    full = load_suite("templates/sentiment_nationality.yaml")
    (s,) = sample_terms([full], 3, seed=0)
    t, f = s.identity["nationality"], full.identity["nationality"]
    for g in t.groups:
        pos = [f.terms[g]["country"].index(c) for c in t.terms[g]["country"]]
        assert len(pos) == 3
        for kind in ("identity_adj", "identity_np", "identity_plural"):
            assert t.terms[g][kind] == [f.terms[g][kind][i] for i in pos]
    rel = load_suite("templates/sentiment_religion.yaml")
    (r,) = sample_terms([rel], 3)
    assert r.identity == rel.identity  # no group lists more than 3 terms of a kind
    assert sample_terms([rel], None)[0] is rel


@pytest.mark.parametrize("bad", [0, -2, 2.5, True, "4"])
def test_bad_sample_size_names_the_option(bad):
    with pytest.raises(BiasSuiteError, match="sample-terms|sample_terms"):
        sample_terms([load_suite("templates/sentiment_religion.yaml")], bad)


def test_run_samples_terms_and_records_it(tmp_path):
    """``run --sample-terms 2``: each group of the mini suite keeps 2 of its names, in every template; the
    run records the option; an examples table refuses it with one line."""
    import json

    from typer.testing import CliRunner

    from _report_data import mini_names_suite
    from _tiny_models import make_tiny_classifier
    from bias_suite.cli import app

    model = make_tiny_classifier(tmp_path / "tiny")
    suite = mini_names_suite(tmp_path / "s")
    full = load_suite(suite)
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["run", str(suite), "--model", str(model), "--out", str(out), "-q", "--no-cache",
                                 "--bootstrap", "0", "--sample-terms", "2", "--seed", "1"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    import pandas as pd

    ex = pd.read_json(out / "examples.jsonl", lines=True)
    (kept,) = sample_terms([full], 2, seed=1)
    for g, terms in kept.identity["names"].terms.items():
        assert sorted(set(ex.loc[ex["group"] == g, "term"])) == sorted(terms["person"]) and len(terms["person"]) == 2
    assert ex.groupby("template")["term"].nunique().eq(4).all()
    assert json.loads((out / "run.json").read_text())["sample_terms"] == 2
