"""NER core: BILOU/BIO conversion, span matching, suite expansion, scored
sequence validation, token-probability aggregation and metric values on a
hand-made table (all values computed by hand in the comments)."""
from __future__ import annotations


import json
import os
import re

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pandas as pd
import pytest

from bias_suite.exceptions import ScoredFormatError, SuiteError
from bias_suite.metrics import compute as evaluate
from bias_suite.families.sequence.metric_input import data_token_items, identity_position_scores, token_items
from bias_suite.suites.bilou import (allowed_transition, bio_to_bilou, expand_unit, match_spans, spans,
                                      spans_to_bilou, to_bilou)
from bias_suite.families import read_scored, write_jsonl
from bias_suite.families.sequence.scored import check_sequence_scored
from bias_suite.families import expand_suite, load_suite

APPROX = dict(abs=1e-12)


# ------------------------------------------------------------------ BILOU / BIO
@pytest.mark.parametrize("bio, bilou", [
    (["B-PER"], ["U-PER"]),
    (["B-PER", "I-PER"], ["B-PER", "L-PER"]),
    (["B-LOC", "I-LOC", "I-LOC", "O"], ["B-LOC", "I-LOC", "L-LOC", "O"]),
    (["I-LOC", "I-LOC"], ["B-LOC", "L-LOC"]),            # I- without B- starts an entity
    (["O", "I-PER", "O"], ["O", "U-PER", "O"]),
    (["B-PER", "I-LOC"], ["U-PER", "U-LOC"]),            # type change starts a new entity
    (["B-PER", "B-PER", "I-PER"], ["U-PER", "B-PER", "L-PER"]),
    (["O", "O"], ["O", "O"]),
])
def test_bio_to_bilou(bio, bilou):
    assert bio_to_bilou(bio) == bilou
    assert to_bilou(bio) == bilou


def test_bilou_sequences_are_kept_and_bad_tags_rejected():
    seq = ["B-LOC", "L-LOC", "U-PER"]
    assert to_bilou(seq) == seq
    # has an L-/U- tag, so it is BILOU even with a broken B-
    assert to_bilou(["B-LOC", "O", "U-PER"]) == ["B-LOC", "O", "U-PER"]
    for bad in (["X-PER"], ["B-"], ["b-PER"], [None], ["B PER"]):
        with pytest.raises(ValueError):
            to_bilou(bad)


def test_spans_only_from_well_formed_runs():
    assert spans(["U-LOC", "O", "B-PER", "I-PER", "L-PER"]) == [("LOC", 0, 1), ("PER", 2, 5)]
    assert spans(["B-LOC", "U-LOC"]) == [("LOC", 1, 2)]          # B- not closed: no span
    assert spans(["B-LOC", "I-LOC", "L-PER", "U-PER"]) == [("PER", 3, 4)]
    assert spans(["I-LOC", "L-LOC", "U-ORG"]) == [("ORG", 2, 3)]  # run without B-
    assert spans(["B-LOC", "I-LOC", "B-LOC", "L-LOC"]) == [("LOC", 2, 4)]
    assert spans(["B-PER", "I-PER", "O", "I-LOC"]) == [("PER", 0, 2), ("LOC", 3, 4)]  # BIO input
    assert spans([]) == []


def test_span_matching_hand_computed():
    gold = [("PER", 0, 2), ("LOC", 4, 5), ("LOC", 6, 8)]
    pred = [("PER", 0, 2), ("LOC", 4, 6), ("ORG", 6, 8)]
    tp, fp, fn = match_spans(gold, pred)
    assert tp == {("PER", 0, 2)}
    assert fp == {("LOC", 4, 6), ("ORG", 6, 8)}       # wrong end; wrong type
    assert fn == {("LOC", 4, 5), ("LOC", 6, 8)}


def test_expand_unit_and_constraints():
    assert expand_unit("U-LOC", 1) == ["U-LOC"]
    assert expand_unit("U-LOC", 2) == ["B-LOC", "L-LOC"]
    assert expand_unit("U-LOC", 4) == ["B-LOC", "I-LOC", "I-LOC", "L-LOC"]
    assert expand_unit("O", 2) == ["O", "O"]
    with pytest.raises(ValueError):
        expand_unit("B-LOC", 2)
    assert spans_to_bilou(5, [("PER", 0, 1), ("LOC", 2, 5)]) == ["U-PER", "O", "B-LOC", "I-LOC", "L-LOC"]
    assert allowed_transition(None, "B-X") and not allowed_transition(None, "I-X")
    assert allowed_transition("B-X", "L-X") and not allowed_transition("B-X", "L-Y")
    assert not allowed_transition("B-X", "U-X") and not allowed_transition("B-X", None)
    assert allowed_transition("L-X", None) and allowed_transition("U-X", "B-Y")


# ------------------------------------------------------------------ expansion
IDENT = """attribute: place
sources: ["test"]
groups:
  short:
    country: [Japan, Peru]
  long:
    country: [New Zealand, Bosnia and Herzegovina]
"""


def _suite(tmp_path, templates: str, extra: str = "") -> str:
    (tmp_path / "place.yaml").write_text(IDENT)
    p = tmp_path / "ner_test.yaml"
    p.write_text(f"""suite: ner_test
task: sequence_labelling
identity_terms: [place.yaml]
{extra}
templates:
{templates}
""")
    return str(p)


def _row(ex, tpl, term):
    return ex[(ex["source_template"] == tpl) & (ex["term"] == term)].iloc[0]


def test_expansion_edge_cases(tmp_path):
    p = _suite(tmp_path, """  - id: start
    text: "{Country} is far away."
  - id: end
    text: "Maria flew to {country}"
    tags: {Maria: PER}
  - id: mid
    text: "We met the United Nations staff in {country} last week."
    tags: {United Nations: ORG}
  - id: art
    text: "It was {a:country} thing."
""")
    ex = expand_suite(p)
    assert len(ex) == 4 * 4 and ex["label"].isna().all()
    # one-token fill at sentence start
    r = _row(ex, "start", "Japan")
    assert r.tokens == ["Japan", "is", "far", "away", "."] and r.tags == ["U-LOC", "O", "O", "O", "O"]
    assert r.term_span == [0, 1]
    # multi-token fill at sentence start (capitalised slot)
    r = _row(ex, "start", "Bosnia and Herzegovina")
    assert r.tokens[:3] == ["Bosnia", "and", "Herzegovina"]
    assert r.tags == ["B-LOC", "I-LOC", "L-LOC", "O", "O", "O", "O"] and r.term_span == [0, 3]
    # term at sentence end (no final punctuation), template entity tagged
    r = _row(ex, "end", "New Zealand")
    assert r.tokens == ["Maria", "flew", "to", "New", "Zealand"]
    assert r.tags == ["U-PER", "O", "O", "B-LOC", "L-LOC"] and r.term_span == [3, 5]
    r = _row(ex, "mid", "Peru")
    assert r.tags[3:5] == ["B-ORG", "L-ORG"] and r.tags[7] == "U-LOC" and r.term_span == [7, 8]
    # article belongs to no entity; the term span excludes it
    r = _row(ex, "art", "Japan")
    assert r.tokens[:4] == ["It", "was", "a", "Japan"] and r.tags[2:4] == ["O", "U-LOC"] and r.term_span == [3, 4]
    # every variant of a template has the same tokens outside the term
    for tpl, sub in ex.groupby("template"):
        outside = {tuple(t[: s[0]] + t[s[1]:]) for t, s in zip(sub["tokens"], sub["term_span"])}
        assert len(outside) == 1, tpl


def test_expansion_slot_tags_and_lowercase_sentence_start(tmp_path):
    p = _suite(tmp_path, """  - id: lex
    text: "{company} hired people in {country}."
""", extra="lexicons:\n  company: [acme corp, Initech]\nslot_tags:\n  company: U-ORG\n  country: U-MISC\n")
    ex = expand_suite(p)
    r = ex[(ex["term"] == "Japan") & ex["tokens"].map(lambda t: t[0] == "Acme")].iloc[0]
    assert r.text == "Acme corp hired people in Japan."          # sentence start capitalised
    assert r.tags == ["B-ORG", "L-ORG", "O", "O", "O", "U-MISC", "O"]
    assert ex["template"].nunique() == 2                            # one unit per lexicon fill


@pytest.mark.parametrize("templates, extra, msg", [
    ('  - id: a\n    text: "{country} and {country}."\n', "", "exactly once"),
    ('  - id: a\n    text: "Trip to {country}."\n    tags: {Paris: LOC}\n', "", "does not occur"),
    ('  - id: a\n    text: "Trip to {country}."\n    tags: [O, O]\n', "", "mapping"),
    ('  - id: a\n    text: "Trip to {country}n."\n', "", "whole tokens"),
    ('  - id: a\n    text: "Trip to {country}."\n', "slot_tags:\n  country: B-LOC\n", "U-TYPE"),
    ('  - id: a\n    text: "Trip to {country}."\n', "slot_tags:\n  city: U-LOC\n", "unknown slot"),
])
def test_expansion_errors_name_file_and_field(tmp_path, templates, extra, msg):
    p = _suite(tmp_path, templates, extra)
    with pytest.raises(SuiteError, match=msg) as e:
        expand_suite(p)
    assert "ner_test.yaml" in str(e.value)


def test_bundled_ner_suites():
    for name, attr, term_type in (("ner_nationality", "nationality", "LOC"), ("ner_names", "names", "PER")):
        s = load_suite(f"templates/{name}.yaml")
        assert s.task == "sequence_labelling" and len(s.templates) >= 20
        ex = expand_suite(s)
        assert set(ex["attribute"]) == {attr}
        assert all(t[sp[0]][2:] == term_type for t, sp in zip(ex["tags"], ex["term_span"]))
        # other entities of the templates are tagged too
        assert sum(any(x != "O" for i, x in enumerate(t) if not sp[0] <= i < sp[1]) for t, sp in zip(ex["tags"], ex["term_span"])) > 0
        # whole-sentence tokenization of the rendered text gives the same tokens
        from bias_suite.families.sequence.expansion import tokenize
        assert all([t for t, _ in tokenize(x)] == list(toks) for x, toks in zip(ex["text"], ex["tokens"]))


# ------------------------------------------------------------------ scored data
TAGS = ["O", "B-LOC", "L-LOC", "U-LOC", "U-PER"]


def _tp(rows):
    """Token probability dicts from lists of (tag: p) shorthand."""
    return [{t: float(d.get(t, 0.0)) for t in TAGS} for d in rows]


O = {"O": 1.0}
PER = {"U-PER": 0.8, "O": 0.2}


def hand_table():
    """Two templates x two groups; group 'long' has a two-token term.

    LOC spans: A/t1 TP, B/t1 FN (predicted B-LOC O: broken, no span),
    A/t2 TP, B/t2 TP (gold given as BIO).
    """
    return pd.DataFrame([
        dict(id="a1", template="t1", attribute="place", group="short", term="Japan",
             tokens=["Ann", "went", "to", "Japan", "."], tags=["U-PER", "O", "O", "U-LOC", "O"],
             pred_tags=["U-PER", "O", "O", "U-LOC", "O"], term_span=[3, 4],
             tag_probs=_tp([PER, O, O, {"U-LOC": 0.9, "O": 0.1}, O])),
        dict(id="b1", template="t1", attribute="place", group="long", term="New Zealand",
             tokens=["Ann", "went", "to", "New", "Zealand", "."], tags=["U-PER", "O", "O", "B-LOC", "L-LOC", "O"],
             pred_tags=["U-PER", "O", "O", "B-LOC", "O", "O"], term_span=[3, 5],
             tag_probs=_tp([PER, O, O, {"B-LOC": 0.6, "O": 0.4}, {"L-LOC": 0.8, "O": 0.2}, O])),
        dict(id="a2", template="t2", attribute="place", group="short", term="Japan",
             tokens=["Japan", "is", "big"], tags=["U-LOC", "O", "O"], pred_tags=["U-LOC", "O", "O"], term_span=[0, 1],
             tag_probs=_tp([{"U-LOC": 0.9, "O": 0.1}, O, O])),
        dict(id="b2", template="t2", attribute="place", group="long", term="New Zealand",
             tokens=["New", "Zealand", "is", "big"], tags=["B-LOC", "I-LOC", "O", "O"],
             pred_tags=["B-LOC", "L-LOC", "O", "O"], term_span=[0, 2],
             tag_probs=_tp([{"B-LOC": 0.5, "U-LOC": 0.1, "O": 0.4}, {"L-LOC": 0.4, "O": 0.6}, O, O])),
    ])


def test_check_sequence_scored_converts_and_counts():
    d = check_sequence_scored(hand_table())
    assert d.task == "sequence_labelling"
    assert d.types == ("LOC", "PER") and d.prob_classes == ("LOC", "PER", "O")
    assert d.tags[3] == ["B-LOC", "L-LOC", "O", "O"]      # BIO gold converted
    # span counts (tp, fp, fn, pp) for LOC per example
    assert d.span_counts[:, 0].tolist() == [[1, 0, 0, 1], [0, 0, 1, 0], [1, 0, 0, 1], [1, 0, 0, 1]]
    assert d.span_counts[:, 1, 0].tolist() == [1, 1, 0, 0]   # PER tp
    # BILOU-prefix sums: New -> LOC 0.5 + 0.1
    np.testing.assert_allclose(d.type_probs[3][0], [0.6, 0.0, 0.4])


def test_token_probability_aggregation_hand_computed():
    d = check_sequence_scored(hand_table())
    item_row, item_pos, P, y, ident = token_items(d.type_probs, d.tags, d.term_span, d.prob_classes)
    # 5 + 5 (6 tokens, the 2-token term merged) + 3 + 3 (4 tokens merged)
    assert np.bincount(item_row).tolist() == [5, 5, 3, 3]
    assert item_pos.tolist() == [0, 1, 2, 3, 4] * 2 + [0, 1, 2] * 2
    # merged "New Zealand" of b1: mean of LOC (0.6, 0.8) = 0.7, O (0.4, 0.2) = 0.3
    np.testing.assert_allclose(P[8], [0.7, 0.0, 0.3])
    # b2: New LOC 0.6, Zealand LOC 0.4 -> 0.5
    np.testing.assert_allclose(P[13], [0.5, 0.0, 0.5])
    # gold of a merged position = the term's first token (LOC = 0); O = 2; PER = 1
    assert y.tolist() == [1, 2, 2, 0, 2, 1, 2, 2, 0, 2, 0, 2, 2, 0, 2, 2]
    assert ident.tolist() == [3, 8, 10, 13]
    tabs = identity_position_scores(d, "place")
    assert tabs["LOC"].loc["t1"].tolist() == pytest.approx([0.9, 0.7])
    assert tabs["LOC"].loc["t2"].tolist() == pytest.approx([0.9, 0.5])


def test_token_items_are_kept_with_the_data_and_follow_take():
    """The bootstrap evaluates resamples ``data.take(rows)``; the token items
    computed once on the data go with them, and give what computing them
    from scratch gives, value for value."""
    d = check_sequence_scored(hand_table())
    rows = np.array([3, 0, 3, 1, 2])
    data_token_items(d, np.arange(4))  # computed and kept with d
    sub = d.take(rows, templates=["t2#0", "t1#0", "t2#1", "t1#0", "t2#2"])
    got = data_token_items(sub, np.arange(len(rows)))
    want = token_items([d.type_probs[i] for i in rows], [d.tags[i] for i in rows], d.term_span[rows],
                       d.prob_classes)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    # identity items: b2 (3 items, term at 0), a1 (5, at 3), b2, b1 (5 after the merge, at 3), a2 (3, at 0)
    assert got[4].tolist() == [0, 3 + 3, 8 + 0, 11 + 3, 16 + 0]
    cold = check_sequence_scored(hand_table()).take(rows, templates=["t2#0", "t1#0", "t2#1", "t1#0", "t2#2"])
    metrics = ["CFGap", "AvgGF", "PosAEG", "FNED"]
    pd.testing.assert_frame_equal(evaluate(sub, metrics=metrics, max_tuples=None),
                                  evaluate(cold, metrics=metrics, max_tuples=None))


def _val(res, metric, cls, group=None):
    sub = res[(res["metric"] == metric) & (res["class"] == cls)]
    sub = sub[sub["group"].isna()] if group is None else sub[sub["group"] == group]
    assert len(sub) == 1, (metric, cls, group, sub)
    return sub.iloc[0]


def test_ner_metric_values_hand_computed():
    res = evaluate(hand_table(), max_tuples=None)
    # LOC: short TP 2 FN 0 -> FNR 0; long TP 1 FN 1 -> FNR 0.5; all TP 3 FN 1 -> FNR 0.25
    assert _val(res, "FNED", "LOC", "short")["value"] == pytest.approx(0.25, **APPROX)
    assert _val(res, "FNED", "LOC", "long")["value"] == pytest.approx(0.25, **APPROX)
    assert _val(res, "FNED", "LOC")["value"] == pytest.approx(0.5, **APPROX)
    assert _val(res, "FNED*", "LOC")["value"] == pytest.approx(0.25, **APPROX)
    assert _val(res, "FNED", "PER")["value"] == pytest.approx(0.0, **APPROX)
    # TPR-Gap LOC: |1 - 0.5| over 1 pair
    assert _val(res, "TPR-Gap", "LOC")["value"] == pytest.approx(0.5, **APPROX)
    assert _val(res, "TPR-Gap", "LOC", "short|long")["value"] == pytest.approx(0.5, **APPROX)
    # ParityGap LOC: predicted spans per sentence 2/2 vs 1/2
    assert _val(res, "ParityGap", "LOC")["value"] == pytest.approx(0.5, **APPROX)
    # F1 LOC: short P=R=1 -> 1; long P=1, R=0.5 -> 2/3
    assert _val(res, "F1-Diff", "LOC")["value"] == pytest.approx(1 - 2 / 3, **APPROX)
    assert _val(res, "Recall-Diff", "LOC")["value"] == pytest.approx(0.5, **APPROX)
    # CFGap LOC: tuple t1 differs only at the term (|0.9 - 0.7| = 0.2) over 5 aligned
    # positions -> 0.04; tuple t2 |0.9 - 0.5| = 0.4 over 3 positions -> 0.4/3;
    # mean over the two tuples
    cf = _val(res, "CFGap", "LOC")
    assert cf["value"] == pytest.approx((0.04 + 0.4 / 3) / 2, **APPROX) and cf["n"] == 2
    # CFGap-TC LOC: only the term position has gold LOC -> (0.2 + 0.4) / 2
    assert _val(res, "CFGap-TC", "LOC")["value"] == pytest.approx(0.3, **APPROX)
    # CFGap O: t1 term |0.1 - 0.3| = 0.2 -> 0.04; t2 |0.1 - 0.5| = 0.4 -> 0.4/3
    assert _val(res, "CFGap", "O")["value"] == pytest.approx((0.04 + 0.4 / 3) / 2, **APPROX)
    # PertSS (gold-class probability): t1 term |0.9 - 0.7|, t2 term |0.9 - 0.5|, rest 0
    assert _val(res, "PertSS", "all")["value"] == pytest.approx((0.2 / 5 + 0.4 / 3) / 2, **APPROX)
    # AvgScoreDiff LOC per template: pooled token means
    t1 = abs((0.0 + 0 + 0 + 0.9 + 0) / 5 - (0 + 0 + 0 + 0.7 + 0) / 5)
    t2 = abs(0.9 / 3 - 0.5 / 3)
    assert _val(res, "AvgScoreDiff", "LOC")["value"] == pytest.approx((t1 + t2) / 2, **APPROX)
    # AvgGF-TC LOC: gold-LOC positions: short {0.9, 0.9}, long {0.7, 0.5}, all {0.9,0.9,0.7,0.5}
    from scipy.stats import wasserstein_distance as w1
    allv = [0.9, 0.9, 0.7, 0.5]
    exp = (w1(allv, [0.9, 0.9]) + w1(allv, [0.7, 0.5])) / 2
    assert _val(res, "AvgGF-TC", "LOC")["value"] == pytest.approx(exp, **APPROX)
    # n of probability metrics counts token positions (5 + 5 + 3 + 3)
    assert _val(res, "AvgGF", "LOC")["n"] == 16
    # not applicable to NER; no AccuracyDiff
    for m in ("FPED", "FPED*", "FPR-Ratio", "TNR-Gap"):
        sub = res[res["metric"] == m]
        assert sorted(sub["class"]) == ["LOC", "PER"] and sub["value"].isna().all()
        assert (sub["note"] == "not applicable to sequence labelling").all()
    assert not (res["metric"] == "AccuracyDiff").any()
    assert set(res.loc[res["metric"] == "AvgGF", "class"]) == {"LOC", "PER", "O"}
    assert set(res.loc[res["metric"] == "FNED", "class"]) == {"LOC", "PER"}
    assert list(res.columns) == ["metric", "family", "view", "attribute", "class", "group", "value", "ci_low",
                                 "ci_high", "n", "note"]


def test_read_scored_jsonl_and_parquet_round_trip(tmp_path):
    df = hand_table()
    write_jsonl(df, tmp_path / "s.jsonl")
    a = read_scored(tmp_path / "s.jsonl")
    assert a.task == "sequence_labelling"
    from bias_suite.families import write_parquet
    write_parquet(a.to_frame(), tmp_path / "s.parquet")
    b = read_scored(tmp_path / "s.parquet")
    assert b.tags == a.tags and b.pred_tags == a.pred_tags and b.types == a.types
    for x, z in zip(a.type_probs, b.type_probs):
        np.testing.assert_allclose(x, z)
    ra, rb = evaluate(a), evaluate(b)
    pd.testing.assert_frame_equal(ra, rb)


def test_without_tag_probs_probability_metrics_are_null():
    df = hand_table().drop(columns=["tag_probs"])
    res = evaluate(df)
    assert _val(res, "FNED", "LOC")["value"] == pytest.approx(0.5)
    cf = _val(res, "CFGap", "LOC")
    assert cf["value"] is None or np.isnan(cf["value"])
    assert "tag_probs" in cf["note"]


def test_unlabelled_rows_used_only_by_label_free_metrics():
    df = hand_table()
    df.loc[1, "tags"] = None
    res = evaluate(df, max_tuples=None)
    # long group: only b2 labelled (TP) -> FNR 0
    assert _val(res, "TPR-Gap", "LOC")["value"] == pytest.approx(0.0)
    # ParityGap still counts b1's predictions
    assert _val(res, "ParityGap", "LOC")["value"] == pytest.approx(0.5)


@pytest.mark.parametrize("mutate, field, msg", [
    (lambda d: d.at[0, "tags"].__setitem__(0, "X-PER"), "tags", "malformed tag"),
    (lambda d: d.at[1, "pred_tags"].pop(), "pred_tags", "5 tags for 6 tokens"),
    (lambda d: d.__setitem__("id", ["a", "a", "b", "c"]), "id", "duplicate id"),
    (lambda d: d.at[2, "tag_probs"][1].__setitem__("O", 0.5), "tag_probs", "sum to"),
    (lambda d: d.at[2, "tag_probs"][1].pop("U-PER"), "tag_probs", "mixed tag sets"),
    (lambda d: d.__setitem__("term_span", [[3, 4], [3, 9], [0, 1], [0, 2]]), "term_span", "start, end"),
    (lambda d: d.at[3, "tokens"].__setitem__(1, ""), "tokens", "non-empty string"),
    (lambda d: d.__setitem__("pred_tags", [None] * 4), "pred_tags", "null"),
])
def test_validation_errors_name_file_row_field(tmp_path, mutate, field, msg):
    df = hand_table()
    df = df.map(lambda v: json.loads(json.dumps(v)))  # deep copies of the lists
    mutate(df)
    write_jsonl(df, tmp_path / "bad.jsonl")
    with pytest.raises(ScoredFormatError, match=msg) as e:
        read_scored(tmp_path / "bad.jsonl")
    assert f"field '{field}'" in str(e.value) and "bad.jsonl:" in str(e.value)


def test_bracketed_display():
    from bias_suite.families.sequence.expansion import bracketed

    assert bracketed(["Ann", "went", "to", "New", "Zealand"], ["U-PER", "O", "O", "B-LOC", "L-LOC"]) == \
        "[Ann]PER went to [New Zealand]LOC"


# ------------------------------------------------------------------ measured at the identity term
ID_TAGS = ["O", "B-PER", "L-PER", "U-PER"]


def _idp(rows):
    return [{t: float(d.get(t, 0.0)) for t in ID_TAGS} for d in rows]


def context_table():
    """Two templates x groups f and m; every sentence also has a context
    name, which the identity-span metrics leave out.

    t1 "<X> met John Smith .": f (Emma) identity missed, m (Liam) found,
       John Smith found for both;
    t2 "Ann and <X> left .": both identity terms found, the context name
       Ann found for f, missed for m.
    All PER spans: f 3 of 4 found, m 3 of 4: no difference. Identity spans:
    f 1 of 2, m 2 of 2. Probability of PER at the identity term: f 0.3,
    0.7; m 0.9, 0.8.
    """
    O_ = {"O": 1.0}
    per = lambda p, tag="U-PER": {tag: p, "O": 1 - p}  # noqa: E731
    return pd.DataFrame([
        dict(id="f1", template="t1", attribute="names", group="f", term="Emma",
             tokens=["Emma", "met", "John", "Smith", "."], tags=["U-PER", "O", "B-PER", "L-PER", "O"],
             pred_tags=["O", "O", "B-PER", "L-PER", "O"], term_span=[0, 1],
             tag_probs=_idp([per(0.3), O_, per(0.9, "B-PER"), per(0.9, "L-PER"), O_])),
        dict(id="m1", template="t1", attribute="names", group="m", term="Liam",
             tokens=["Liam", "met", "John", "Smith", "."], tags=["U-PER", "O", "B-PER", "L-PER", "O"],
             pred_tags=["U-PER", "O", "B-PER", "L-PER", "O"], term_span=[0, 1],
             tag_probs=_idp([per(0.9), O_, per(0.9, "B-PER"), per(0.9, "L-PER"), O_])),
        dict(id="f2", template="t2", attribute="names", group="f", term="Olivia",
             tokens=["Ann", "and", "Olivia", "left", "."], tags=["U-PER", "O", "U-PER", "O", "O"],
             pred_tags=["U-PER", "O", "U-PER", "O", "O"], term_span=[2, 3],
             tag_probs=_idp([per(0.9), O_, per(0.7), O_, O_])),
        dict(id="m2", template="t2", attribute="names", group="m", term="Noah",
             tokens=["Ann", "and", "Noah", "left", "."], tags=["U-PER", "O", "U-PER", "O", "O"],
             pred_tags=["O", "O", "U-PER", "O", "O"], term_span=[2, 3],
             tag_probs=_idp([per(0.2), O_, per(0.8), O_, O_])),
    ])


def test_identity_span_counts_hand_computed():
    from bias_suite.families.sequence.identity import identity_counts
    from bias_suite.suites.bilou import identity_span_counts

    d = check_sequence_scored(context_table())
    # (tp, fp, fn, pp) of PER at the identity term: Emma missed, the others found
    assert identity_counts(d)[:, 0].tolist() == [[0, 0, 1, 0], [1, 0, 0, 1], [1, 0, 0, 1], [1, 0, 0, 1]]
    # all spans (span_counts) count John Smith and Ann too
    assert d.span_counts[:, 0].tolist() == [[1, 0, 1, 1], [2, 0, 0, 2], [2, 0, 0, 2], [1, 0, 1, 1]]
    # a predicted span that overlaps the term but is not its span: fp; the identity span of a
    # multi-token term is the gold span that holds its first token
    got = identity_span_counts(["B-PER", "L-PER", "O"], ["U-PER", "U-LOC", "O"], (0, 2), ["PER", "LOC"])
    assert got == {"PER": (0, 1, 1, 1), "LOC": (0, 1, 0, 1)}
    assert identity_span_counts(None, ["U-PER"], (0, 1), ["PER"]) == {"PER": (0, 1, 0, 1)}


def test_identity_span_metrics_hand_computed_in_both_views():
    res = evaluate(context_table(), max_tuples=None)
    # all PER spans: 3 of 4 found for each group -> no difference
    assert _val(res, "TPR-Gap", "PER")["value"] == pytest.approx(0.0, **APPROX)
    assert _val(res, "FNED", "PER")["value"] == pytest.approx(0.0, **APPROX)
    # identity spans: recall f 1/2, m 2/2; FNR f 1/2, m 0, all 1/4
    assert _val(res, "IdentitySpan-Recall-Gap", "PER", "f|m")["value"] == pytest.approx(0.5, **APPROX)
    assert _val(res, "IdentitySpan-Recall-Gap", "PER")["value"] == pytest.approx(0.5, **APPROX)
    assert _val(res, "IdentitySpan-Recall-Diff", "PER")["value"] == pytest.approx(-0.5, **APPROX)
    for g in ("f", "m"):
        row = _val(res, "IdentitySpan-FNED", "PER", g)
        assert row["value"] == pytest.approx(0.25, **APPROX) and row["n"] == 2
    assert _val(res, "IdentitySpan-FNED", "PER")["value"] == pytest.approx(0.5, **APPROX)
    # FNR-Ratio: f 0.5 / 0 (the rest, m, misses nothing) is undefined; m 0 / 0.5 = 0
    assert pd.isna(_val(res, "IdentitySpan-FNR-Ratio", "PER", "f")["value"])
    assert _val(res, "IdentitySpan-FNR-Ratio", "PER", "m")["value"] == pytest.approx(0.0, **APPROX)
    # PosAEG at the identity term: f {0.3, 0.7} below every m score {0.9, 0.8}
    assert _val(res, "IdentitySpan-PosAEG", "PER", "f")["value"] == pytest.approx(-0.5, **APPROX)
    assert _val(res, "IdentitySpan-PosAEG", "PER", "m")["value"] == pytest.approx(0.5, **APPROX)
    # counterfactual view: tuple t1 found for m only (|0 - 1| = 1), t2 for both (0)
    cf = _val(res, "IdentitySpan-CF-Recall-Gap", "PER")
    assert cf["value"] == pytest.approx(0.5, **APPROX) and cf["n"] == 2
    # CFGap at the term: (|0.3 - 0.9| + |0.7 - 0.8|) / 2; over all 5 positions it is
    # (0.6 / 5 + (0.7 + 0.1) / 5) / 2, Ann's probability included
    assert _val(res, "IdentitySpan-CFGap", "PER", "f|m")["value"] == pytest.approx(0.35, **APPROX)
    assert _val(res, "CFGap", "PER")["value"] == pytest.approx((0.6 / 5 + 0.8 / 5) / 2, **APPROX)
    # the identity-span metrics report the identity terms' types only (no O)
    ident = res[res["metric"].str.startswith("IdentitySpan-")]
    assert set(ident["class"]) == {"PER"}
    assert set(ident["metric"]) == {"IdentitySpan-FNED", "IdentitySpan-FNR-Ratio", "IdentitySpan-Recall-Gap",
                                    "IdentitySpan-Recall-Diff", "IdentitySpan-PosAEG", "IdentitySpan-CF-Recall-Gap",
                                    "IdentitySpan-CFGap"}


def test_identity_span_metrics_without_probabilities_or_identity_spans():
    df = context_table().drop(columns=["tag_probs"])
    res = evaluate(df, max_tuples=None)
    # span metrics keep their values; the probability ones are null rows that say why
    assert _val(res, "IdentitySpan-Recall-Diff", "PER")["value"] == pytest.approx(-0.5, **APPROX)
    for m in ("IdentitySpan-PosAEG", "IdentitySpan-CFGap"):
        sub = res[res["metric"] == m]
        assert len(sub) and sub["value"].isna().all()
        assert sub["note"].str.startswith("needs tag probabilities").all()
    # identity terms that are no entity (gold O): no identity span, null rows with a note
    df = context_table()
    for i, s in enumerate(df["term_span"]):
        df.at[i, "tags"] = [("O" if j == s[0] else t) for j, t in enumerate(df.at[i, "tags"])]
    res = evaluate(df, metrics=["IdentitySpan-FNED", "IdentitySpan-CF-Recall-Gap"], max_tuples=None)
    assert len(res) and res["value"].isna().all() and set(res["class"]) == {"PER"}
    assert res["note"].str.contains("no identity span of the type|no counterfactual tuple").all()


def test_identity_span_metrics_are_not_reported_for_classifiers():
    from bias_suite.exceptions import MetricError
    from bias_suite.families import scored_from_arrays
    from bias_suite.metrics import MetricSpec, rate_score
    from bias_suite.metrics.catalog import IDENTITY_SPAN_METRICS, OWN_METRICS, PUBLISHED_METRICS

    frame = pd.DataFrame([dict(id=f"{t}{g}", template=t, attribute="a", group=g, term=g, text="x", label="pos")
                          for t in ("t1", "t2") for g in ("x", "y")])
    data = scored_from_arrays(frame, np.array([[0.2, 0.8], [0.4, 0.6], [0.3, 0.7], [0.9, 0.1]]), ["neg", "pos"])
    res = evaluate(data)
    assert set(res["metric"]) == {m.name for m in PUBLISHED_METRICS + OWN_METRICS}  # as before: no identity-span rows, no notes
    assert evaluate(data, metrics=[m.name for m in IDENTITY_SPAN_METRICS]).empty
    # a user's rate measured at the identity term is not computed on texts either (not as plain rates)
    mine = MetricSpec("Mine", "PCM", score=rate_score("id_tp", lambda s: (s["tp"], s["tp"] < 0, ""), at="identity"),
                      comparison="abs", normalizer="pairs")
    assert evaluate(data, metrics=[mine, "FNED"])["metric"].unique().tolist() == ["FNED"]
    with pytest.raises(MetricError, match="at must be one of"):
        rate_score("x", lambda s: s, at="term")


def test_not_computed_metrics_are_named():
    from bias_suite.report.headline import not_computed

    res = evaluate(context_table().drop(columns=["tag_probs"]), max_tuples=None)
    need = dict(not_computed(res))
    assert list(need) == ["needs tag probabilities"]
    assert {"CFGap", "AvgGF", "IdentitySpan-PosAEG", "IdentitySpan-CFGap"} <= set(need["needs tag probabilities"])
    assert "FNED" not in need["needs tag probabilities"] and "FPED" not in need["needs tag probabilities"]
    assert not_computed(evaluate(context_table(), max_tuples=None)) == []


# ------------------------------------------------------------------ truth known: a gazetteer tagger
FEMALE = ["Emma", "Olivia", "Sophia", "Ava", "Mia"]
MALE = ["Liam", "Noah", "James", "Lucas", "Henry"]
CONTEXT = ["John", "Smith", "Mark", "Davis", "Paul", "Brown", "Tom", "Clark"]
_CTX_TAGS = "{John Smith: PER, Mark Davis: PER, Paul Brown: PER, Tom Clark: PER}"
CONTEXT_SUITE = "suite: ner_context\ntask: sequence_labelling\nidentity_terms: [names5.yaml]\ntemplates:\n" + "".join(
    f'  - {{id: c{i}, text: "{t}", tags: {_CTX_TAGS}}}\n' for i, t in enumerate([
        "{Person} met John Smith, Mark Davis, Paul Brown and Tom Clark.",
        "John Smith and {person} called Mark Davis, Paul Brown and Tom Clark.",
        "Mark Davis, Paul Brown, Tom Clark and John Smith thanked {person}.",
        "According to Tom Clark, {person} and Paul Brown hired John Smith and Mark Davis.",
        "{Person} wrote to Paul Brown after John Smith, Mark Davis and Tom Clark left.",
        "Tom Clark told Mark Davis that {person} had met John Smith and Paul Brown.",
        "John Smith, Paul Brown and {person} visited Tom Clark and Mark Davis.",
        "Paul Brown invited {person}, Tom Clark, Mark Davis and John Smith.",
    ], 1))
NAMES5 = f"attribute: names\nsources: [test]\ngroups:\n  female:\n    person: {FEMALE}\n  male:\n    person: {MALE}\n"


def _headline(result) -> str:
    import io

    from rich.console import Console

    from bias_suite.report.headline import HeadlineInput, print_headline

    buf = io.StringIO()  # the scored data labelled with the family's label, as `bias-suite run` passes it
    print_headline(HeadlineInput(result.results, scored=[("NER", result.scored)]), console=Console(file=buf, width=100))
    return buf.getvalue()


@pytest.fixture(scope="module")
def context_suite(tmp_path_factory):
    d = tmp_path_factory.mktemp("ner_context")
    (d / "names5.yaml").write_text(NAMES5)
    (d / "ner_context.yaml").write_text(CONTEXT_SUITE)
    return d / "ner_context.yaml"


def test_identity_span_finds_what_context_names_dilute(context_suite):
    """A tagger that misses one of the five female first names and finds
    every other name, context names included. Each sentence has the
    identity term and four context names, so over all PER spans the miss
    is diluted five times: female recall 1 - 1/25 vs 1 at the identity
    span 1 - 1/5. Only the identity-span metrics call it material, and the
    headline says which spans each finding counts."""
    from _tiny_ner import GazetteerTagger
    from bias_suite.pipeline import run

    # one missed name of five: with the terms resampled that is a fact about 'Emma', not about the group;
    # the templates alone (resample_terms=False) ask whether these five names are found less often
    r = run([context_suite], GazetteerTagger(FEMALE + MALE + CONTEXT, missed=["Emma"]), None, progress=False,
            bootstrap=50, cache=False, resample_terms=False)
    res = r.results
    ident = _val(res, "IdentitySpan-Recall-Diff", "PER")
    every = _val(res, "Recall-Diff", "PER")
    assert ident["value"] == pytest.approx(-1 / 5, **APPROX) and every["value"] == pytest.approx(-1 / 25, **APPROX)
    assert ident["verdict"] == "material" and every["verdict"] != "material"
    assert ident["effect"] == pytest.approx(5 * every["effect"])
    for m in ("IdentitySpan-FNED", "IdentitySpan-PosAEG", "IdentitySpan-CF-Recall-Gap", "IdentitySpan-CFGap"):
        rows = res[(res["metric"] == m) & (res["class"] == "PER")]
        assert (rows["verdict"] == "material").all(), rows[["group", "value", "verdict", "reason"]]
    fned = _val(res, "IdentitySpan-FNED", "PER", "female")
    assert fned["value"] == pytest.approx(1 / 5 - 1 / 10, **APPROX) and "higher for 'female'" in fned["reason"]
    assert "at the identity term" in fned["reason"]
    # the counterfactual view: one tuple in five has Emma, missed where the male name is found
    assert _val(res, "IdentitySpan-CF-Recall-Gap", "PER")["value"] == pytest.approx(1 / 5, **APPROX)
    text = _headline(r)
    findings = [line for line in text.splitlines() if re.match(r"\s*\d+ \S+× ", line)]
    assert findings and findings[0].split()[3].startswith("IdentitySpan-")
    assert any("female vs male · PER identity span" in line for line in findings)
    assert all(("IdentitySpan-" in line) == ("identity" in line.split("·")[-1]) for line in findings)
    assert "not computed" not in text
    # the example pair: Emma against a male name, the largest gap at the identity term
    assert "Worst counterfactual pair of names" in text and "p=0.300 female Emma" in text
    # the report's first screen names the spans too
    from bias_suite.report.sections import render_overview

    assert "names: female vs male · PER identity span" in render_overview(res, scored=[("NER", r.scored)])


def test_a_tagger_without_probabilities_says_what_it_cannot_compute(context_suite):
    from _tiny_ner import GazetteerTagger
    from bias_suite.pipeline import run

    r = run([context_suite], GazetteerTagger(FEMALE + MALE + CONTEXT, missed=["Emma"], probabilities=False), None,
            progress=False, bootstrap=50, cache=False, resample_terms=False)
    res = r.results
    assert _val(res, "IdentitySpan-Recall-Diff", "PER")["verdict"] == "material"
    text = " ".join(_headline(r).split())
    head = "not computed (needs tag probabilities): "
    assert head in text
    named = text.split(head)[1].split(" material")[0]
    prob_metrics = set(res.loc[res["note"].fillna("").str.startswith("needs tag probabilities"), "metric"])
    assert {"IdentitySpan-PosAEG", "IdentitySpan-CFGap", "CFGap", "AvgGF"} <= prob_metrics
    assert all(m in named for m in prob_metrics)
    # no test row disappears without a note: every named metric but AccuracyDiff (not reported for NER) is there
    from bias_suite.metrics.catalog import NAMED_METRICS

    assert {m.name for m in NAMED_METRICS} - {"AccuracyDiff"} <= set(res["metric"])


#: the person names among ner_names' own words (each in one template, none a first name of names.yaml)
NAMES_SUITE_CONTEXT_PER = ["Mark Johnson", "Carlos Rivera", "Helen Ortiz", "Ahmed Khan", "Laura Chen", "Peter Novak",
                           "Robert Diaz"]


def test_bundled_names_suite_truth(tmp_path):
    """ner_names with a tagger that misses every female first name and
    finds every other name: the identity span is never found for the
    female group. Over all PER spans: 121 counterfactual templates (120
    templates, one with two lexicon fills) give each first name 121
    identity spans, and 7 templates add one context name each, all found:
    each female name has 7 of 128 PER spans found, each male name all."""
    import yaml

    from _tiny_ner import GazetteerTagger
    from bias_suite.pipeline import run
    from bias_suite.suites import load_suite

    suite = load_suite("templates/ner_names.yaml")
    context = [p for t in suite.templates for p, typ in (t.tags or {}).items() if typ == "PER"]
    assert sorted(context) == sorted(NAMES_SUITE_CONTEXT_PER)  # a new context name changes the counts below
    g = yaml.safe_load(open("identity_terms/names.yaml"))["groups"]
    fem, male = g["female"]["person"], g["male"]["person"]
    words = [w for name in NAMES_SUITE_CONTEXT_PER for w in name.split()]
    r = run(["templates/ner_names.yaml"], GazetteerTagger(fem + male + words, missed=fem), None,
            progress=False, bootstrap=0, cache=False, significance=False)
    assert r.examples["template"].nunique() == 121
    res = r.results
    assert _val(res, "IdentitySpan-Recall-Diff", "PER")["value"] == pytest.approx(-1.0, **APPROX)
    assert _val(res, "Recall-Diff", "PER")["value"] == pytest.approx(7 / 128 - 1, **APPROX)
    st = r.scored
    from bias_suite.families.sequence.summary import summary_stats

    s = summary_stats(st).set_index("group")
    assert s.loc["female", "PER identity recall"] == 0 and s.loc["male", "PER identity recall"] == 1


def test_identity_span_metrics_in_the_catalog():
    from bias_suite.metrics.catalog import IDENTITY_SPAN_METRICS, PUBLISHED_METRICS, catalog_frame, explain

    assert len(PUBLISHED_METRICS) == 31 and len(IDENTITY_SPAN_METRICS) == 7
    cat = catalog_frame().set_index("name")
    worse = {"IdentitySpan-FNED": "higher", "IdentitySpan-FNR-Ratio": "higher", "IdentitySpan-Recall-Gap": "higher",
             "IdentitySpan-Recall-Diff": "lower", "IdentitySpan-PosAEG": "lower",
             "IdentitySpan-CF-Recall-Gap": "higher", "IdentitySpan-CFGap": "higher"}
    for m in IDENTITY_SPAN_METRICS:
        assert m.materiality.worse == worse[m.name]
        assert "not a published metric" in m.source and "identity" in m.meaning
        assert cat.loc[m.name, "topic"] == {"group": "scores" if "PosAEG" in m.name else "errors"}.get(
            m.view, "counterfactual")
    text = explain("IdentitySpan-FNR-Ratio")
    assert "worse:     higher" in text and "outside [0.8, 1.25]" in text and "identity spans only" in text
