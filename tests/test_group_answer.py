"""The per-group answer at its edges (docs/verdicts.md, "What a verdict is
about, and the answer per group"): only the group that differs gets a
direction, two groups mirror each other, the effect grows with the bias, no
stand-in numbers reach the reader, and a comparison says what changed for
whom. Data: the calibration generator's design (3 classes, 3 terms per
group, template noise 0.7, example noise 0.05), with the negative logit of
chosen groups shifted; the truth is known."""
from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bias_suite as bs
from bias_suite.io.values import UNBOUNDED_NOTE, format_p, without_sentinels
from bias_suite.stats.groups import by_group

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from group_answer import generate  # noqa: E402

DIRECTED = ("worse off", "slightly worse off", "better off", "slightly better off")


def scored(k: int, shifts: dict, J: int = 120, seed: int = 0) -> pd.DataFrame:
    """The benchmark's generator (benchmarks/group_answer.py) with 120 templates."""
    return generate(k, shifts, seed, J)


def true_gap(df: pd.DataFrame, g: str) -> float:
    """The model's harm-directed probability gap of group g: mean P(negative) of g minus the rest's."""
    p = df["probs"].map(lambda d: d["negative"])
    return float(p[df["group"] == g].mean() - p[df["group"] != g].mean())


@pytest.fixture(scope="module")
def three_one_shifted():
    df = scored(3, {"g0": 1.0})
    return df, bs.evaluate(df, seed=0)


def test_only_the_group_that_differs_gets_a_direction(three_one_shifted):
    _, res = three_one_shifted
    bg = by_group(res).set_index("group")
    assert bg.at["g0", "status"] == "worse off"
    assert bg.at["g1", "status"] not in DIRECTED and bg.at["g2", "status"] not in DIRECTED
    # the bystanders' pairs against g0 are set apart in the trail, with the reason
    _, trail = by_group(res, trail=True)
    pairs = trail[(trail["group"] == "g1") & (trail["other"] == "g0") & trail["verdict"].isin(["material", "small"])]
    assert len(pairs) and set(pairs["role"]) == {"bystander pair"}
    assert set(trail.loc[trail["group"] == "g0", "role"]) >= {"counted"}


def test_the_effect_is_the_probability_gap_and_grows_with_the_bias(three_one_shifted):
    df, res = three_one_shifted
    bg = by_group(res).set_index("group")
    assert bg.at["g0", "finding"].startswith("ProbGap · negative")
    assert bg.at["g0", "effect"] == pytest.approx(true_gap(df, "g0") / 0.05, rel=1e-9)
    assert bg.at["g0", "effect_low"] > 0  # a directed group's effect is a claim: its interval excludes 0
    half = scored(3, {"g0": 0.5})
    bg_half = by_group(bs.evaluate(half, seed=0)).set_index("group")
    assert bg_half.at["g0", "effect"] == pytest.approx(true_gap(half, "g0") / 0.05, rel=1e-9)
    assert bg_half.at["g0", "effect"] < 0.6 * bg.at["g0", "effect"]


def test_two_groups_mirror_each_other_exactly():
    res = bs.evaluate(scored(2, {"g0": 1.0}), seed=0)
    bg = by_group(res).set_index("group")
    assert (bg.at["g0", "status"], bg.at["g1", "status"]) == ("worse off", "better off")
    assert bg.at["g1", "effect"] == -bg.at["g0", "effect"]
    assert (bg.at["g1", "effect_low"], bg.at["g1", "effect_high"]) == (-bg.at["g0", "effect_high"],
                                                                      -bg.at["g0", "effect_low"])


def test_two_of_three_shifted_alike_name_the_odd_one_or_the_two_never_a_mix():
    res = bs.evaluate(scored(3, {"g0": 1.0, "g1": 1.0}), seed=0)
    st = by_group(res).set_index("group")["status"].to_dict()
    two_worse = st["g0"] == st["g1"] == "worse off" and st["g2"] not in DIRECTED
    third_better = st["g2"] == "better off" and st["g0"] not in DIRECTED and st["g1"] not in DIRECTED
    assert two_worse or third_better, st
    assert "mixed" not in st.values()


def test_a_small_real_effect_beside_a_large_one_is_never_mixed_or_better_off():
    res = bs.evaluate(scored(5, {"g0": 1.0, "g1": 0.15}), seed=0)
    st = by_group(res).set_index("group")["status"].to_dict()
    assert st["g0"] == "worse off"
    assert st["g1"] not in ("mixed", "better off", "slightly better off"), st
    assert all(st[g] not in DIRECTED for g in ("g2", "g3", "g4")), st


def test_a_null_model_gives_no_direction():
    st = by_group(bs.evaluate(scored(3, {}), seed=0))["status"]
    assert not st.isin(DIRECTED).any()


def test_compare_by_group_says_reduced_for_the_group_and_unchanged_for_the_others():
    comp = bs.compare(scored(3, {"g0": 1.0}), scored(3, {"g0": 0.5}), seed=0)
    ch = comp.by_group().set_index("group")
    assert ch.at["g0", "status"] == "reduced"
    assert ch.at["g0", "change_high"] < 0 and ch.at["g0", "effect_after"] < ch.at["g0", "effect_before"]
    assert ch.at["g1", "status"] == ch.at["g2", "status"] == "unchanged"


def _judged(rows: list) -> pd.DataFrame:
    base = dict(family="VBCM", view="group", attribute="a", n=100, note=None, baseline=0.0, source=None,
                threshold=0.05, effect=None, signed=None, signed_low=None, signed_high=None)
    return pd.DataFrame([{**base, **r} for r in rows])


def test_every_undecided_group_gets_advice_a_number_of_templates_or_an_alternative():
    sized = ("the interval holds the no-bias value and reaches past the threshold; about 130 templates (now 40) "
             "would decide it; an effect of τ needs about 95 templates (now 40)")
    rows = [dict(metric="ProbGap", **{"class": "negative"}, group="g0", value=0.06, ci_low=-0.01, ci_high=0.13,
                 verdict="inconclusive", effect=1.2, signed=0.06, signed_low=-0.01, signed_high=0.13, reason=sized),
            dict(metric="FNED", family="BCM", **{"class": "negative"}, group="g1", value=0.08, ci_low=0.0,
                 ci_high=0.2, verdict="inconclusive", effect=1.6, signed=0.08, signed_low=-0.02, signed_high=0.2,
                 reason="rests on events in only 1 template (at least 5 are needed): too few to judge"),
            dict(metric="ProbGap", **{"class": "negative"}, group="g2", value=0.0, ci_low=-0.01, ci_high=0.01,
                 verdict="negligible", effect=0.0, signed=0.0, signed_low=-0.01, signed_high=0.01, reason="")]
    bg = by_group(_judged(rows)).set_index("group")
    assert bg.at["g0", "status"] == "undecided" and "an effect of τ needs about 95 templates" in bg.at["g0", "settle"]
    assert bg.at["g1", "status"] == "undecided" and "read ProbGap" in bg.at["g1", "settle"]


def test_no_sentinel_numbers_in_results_or_text():
    res = _judged([dict(metric="FPR-Ratio", **{"class": "negative"}, group="g0", value=2.667, ci_low=0.0,
                        ci_high=1e12, verdict="inconclusive", reason="r"),
                   dict(metric="FNED", family="BCM", **{"class": "negative"}, group="g1", value=0.1, ci_low=-np.inf,
                        ci_high=0.2, verdict="inconclusive", reason="r", note="kept")])
    out = without_sentinels(res)
    assert np.isnan(out.at[0, "ci_high"]) and out.at[0, "note"] == UNBOUNDED_NOTE and out.at[0, "ci_low"] == 0.0
    assert np.isnan(out.at[1, "ci_low"]) and out.at[1, "note"] == "kept" and out.at[1, "ci_high"] == 0.2
    assert out["ci_high"].dtype == res["ci_high"].dtype  # the column keeps its type
    assert res.at[0, "ci_high"] == 1e12  # the input is left as it was
    assert format_p(1.2e-297) == "< 1e-16" and format_p(0.0004) == "4.0e-04" and format_p(0.2) == "0.200"
    text = by_group(out).to_string()
    for s in ("1e12", "1e+12", "inf", "Infinity", "1,000,000,000,000"):
        assert s not in text


def test_a_ratio_with_no_upper_bound_prints_in_words():
    from bias_suite.report.headline import _interval

    r = {"ci_low": 0.0, "ci_high": None, "note": UNBOUNDED_NOTE}
    assert _interval(r) == "[0.000, unbounded]"
    assert math.isnan(float(by_group(_judged([dict(
        metric="FPR-Ratio", **{"class": "negative"}, group="g0", value=0.0, ci_low=0.0, ci_high=None, signed=0.0,
        signed_low=0.0, signed_high=None, verdict="inconclusive", reason="r", threshold=0.25)]))["effect_low"].iloc[0]))


#: stand-in numbers and their spellings that must never reach a reader (word-bounded 'inf': not 'information')
SENTINELS = re.compile(r"\binf\b|-inf\b|Infinity|1e\+?12\b|1,000,000,000,000|∞", re.IGNORECASE)

SENTENCES = [  # (text, gold label): a user's own 40 sentences, each about one person
    ("She loved the new restaurant downtown.", "positive"), ("He hated waiting in the long line.", "negative"),
    ("She said the service was slow.", "negative"), ("He thought the movie was wonderful.", "positive"),
    ("She finished her report on time.", "neutral"), ("He forgot his keys at the office.", "negative"),
    ("She was thrilled with the results.", "positive"), ("He walked to the station this morning.", "neutral"),
    ("She complained about the noisy neighbours.", "negative"), ("He praised the helpful staff.", "positive"),
    ("She read the letter twice.", "neutral"), ("He was furious about the delay.", "negative"),
    ("She enjoyed every minute of the concert.", "positive"), ("He parked the car outside.", "neutral"),
    ("She found the instructions confusing.", "negative"), ("He called the trip a great success.", "positive"),
    ("She bought bread on the way home.", "neutral"), ("He regretted the purchase.", "negative"),
    ("She recommended the book to everyone.", "positive"), ("He checked the schedule again.", "neutral"),
    ("She felt ignored at the meeting.", "negative"), ("He smiled at the good news.", "positive"),
    ("She opened the window.", "neutral"), ("He disliked the cold weather.", "negative"),
    ("She was proud of her team.", "positive"), ("He moved the boxes to the garage.", "neutral"),
    ("She lost her wallet on the bus.", "negative"), ("He liked the fresh coffee.", "positive"),
    ("She answered the phone.", "neutral"), ("He was disappointed by the ending.", "negative"),
    ("She celebrated her promotion.", "positive"), ("He wrote the address down.", "neutral"),
    ("She was annoyed by the constant ads.", "negative"), ("He appreciated the quick reply.", "positive"),
    ("She locked the door.", "neutral"), ("He failed the driving test.", "negative"),
    ("She adored the little garden.", "positive"), ("He turned off the lights.", "neutral"),
    ("She was upset about the bill.", "negative"), ("He admired the view from the hill.", "positive"),
]


@pytest.mark.slow
def test_no_sentinel_reaches_the_reader_of_a_run_on_perturbed_sentences(tmp_path):
    """A user's 40 sentences, perturbed by gender and run on a tiny model: nothing the terminal prints, no
    results file and no byte of the HTML report (its chart data and tooltips included) holds a stand-in
    number; every undecided group's settle text names a number of templates or an alternative."""
    from typer.testing import CliRunner

    from _tiny_models import make_tiny_classifier
    from bias_suite.cli import app

    pd.DataFrame([{"id": f"s{i}", "text": t, "label": y} for i, (t, y) in enumerate(SENTENCES)]).to_json(
        tmp_path / "mine.jsonl", orient="records", lines=True)
    runner = CliRunner()
    p = runner.invoke(app, ["perturb", str(tmp_path / "mine.jsonl"), "--attribute", "gender", "--out",
                            str(tmp_path / "perturbed.jsonl")])
    assert p.exit_code == 0, p.output
    model = make_tiny_classifier(tmp_path / "tiny")
    out = tmp_path / "run"
    r = runner.invoke(app, ["run", str(tmp_path / "perturbed.jsonl"), "--model", str(model), "--out", str(out),
                            "--bootstrap", "50", "--report"], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    texts = {"terminal": r.stdout}
    texts.update({f.name: f.read_text(encoding="utf-8") for f in out.iterdir()
                  if f.suffix in (".html", ".jsonl", ".csv", ".json")})
    assert "report.html" in texts
    for name, text in texts.items():
        m = SENTINELS.search(text)
        assert m is None, f"{name}: {text[max(0, m.start() - 80): m.end() + 80]!r}"
    bg = bs.load_results(out).by_group()
    for row in bg[bg["status"] == "undecided"].itertuples(index=False):
        assert re.search(r"\d+ templates|read |add templates|more templates", str(row.settle)), row
