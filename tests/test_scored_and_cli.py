"""Scored-examples validation, bring-your-own-predictions, and the CLI end to end."""
import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from _tiny_models import make_tiny_classifier
from bias_suite.cli import app
from bias_suite.exceptions import ScoredFormatError
from bias_suite.metrics import RESULT_COLUMNS
from bias_suite.metrics import compute as evaluate
from bias_suite.families import read_scored, write_jsonl, write_parquet

runner = CliRunner()


def rows(n_templates=3):
    out = []
    for t in range(n_templates):
        for g, p in (("female", 0.7), ("male", 0.6)):
            out.append({"id": f"{t}{g}", "template": f"t{t}", "attribute": "gender", "group": g, "term": g,
                        "text": f"text {t} {g}", "label": "positive" if t % 2 else "negative",
                        "probs": {"negative": round(1 - p, 6), "positive": p}})
    return out


def jsonl(path, recs):
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


@pytest.mark.parametrize(
    "mutate,line,field,msg",
    [
        (lambda r: r[2].pop("group"), 3, "group", "missing or null"),
        (lambda r: r[3].update(group=None), 4, "group", "non-empty string"),
        (lambda r: r[1]["probs"].update(positive=0.9), 2, "probs", "sum to"),
        (lambda r: r[4].update(label="neutral"), 5, "label", "unknown class 'neutral'"),
        (lambda r: r[5].update(probs={"neg": 0.5, "pos": 0.5}), 6, "probs", "mixed class sets"),
        (lambda r: r[1].update(id=r[0]["id"]), 2, "id", "duplicate id"),
        (lambda r: r[0]["probs"].update(positive="high"), 1, "probs", "not a number"),
        (lambda r: r[2].update(pred="maybe"), 3, "pred", "unknown class"),
    ],
)
def test_bad_scored_files_name_line_and_field(tmp_path, mutate, line, field, msg):
    recs = rows()
    mutate(recs)
    p = jsonl(tmp_path / "s.jsonl", recs)
    with pytest.raises(ScoredFormatError) as e:
        read_scored(p)
    assert e.value.field == field and msg in str(e.value), str(e.value)
    if line is not None:
        assert e.value.row == line and str(e.value).startswith(f"{p}:{line}:")


def test_invalid_json_line(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps(rows()[0]) + "\n{not json\n")
    with pytest.raises(ScoredFormatError, match=r":2: invalid JSON"):
        read_scored(p)


def test_jsonl_and_parquet_round_trip_give_same_results(tmp_path):
    df = pd.DataFrame(rows(4))
    write_jsonl(df, tmp_path / "a.jsonl")
    write_parquet(df, tmp_path / "a.parquet")
    r1 = evaluate(tmp_path / "a.jsonl")
    r2 = evaluate(tmp_path / "a.parquet")
    pd.testing.assert_frame_equal(r1, r2)
    assert list(r1.columns) == RESULT_COLUMNS


def test_evaluate_cli_writes_results(tmp_path):
    p = jsonl(tmp_path / "s.jsonl", rows(4))
    res = runner.invoke(app, ["evaluate", str(p), "--out", str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 0, res.output
    out = pd.read_json(tmp_path / "out" / "results.jsonl", lines=True)
    csv = pd.read_csv(tmp_path / "out" / "results.csv")
    assert len(out) == len(csv) > 0
    assert {"FNED", "CFGap", "AccuracyDiff", "Wilcoxon"} <= set(out["metric"])
    # CFGap by hand: every tuple differs by |0.7-0.6| in both classes
    cf = out[(out.metric == "CFGap") & out.group.isna()]
    assert np.allclose(cf["value"], 0.1)
    # only the named metrics asked for
    res = runner.invoke(app, ["evaluate", str(p), "--out", str(tmp_path / "o2"), "--metrics", "FNED,CFGap", "-q"])
    assert res.exit_code == 0
    assert set(pd.read_json(tmp_path / "o2" / "results.jsonl", lines=True)["metric"]) == {"FNED", "CFGap"}


def test_evaluate_cli_bad_file_is_one_clear_error(tmp_path):
    recs = rows()
    recs[1]["probs"]["positive"] = 0.95
    p = jsonl(tmp_path / "s.jsonl", recs)
    res = runner.invoke(app, ["evaluate", str(p), "--out", str(tmp_path / "out")])
    assert res.exit_code == 2
    assert f"{p}:2: field 'probs'" in res.output.replace("\n", "")
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_metrics_cli_lists_registry():
    res = runner.invoke(app, ["metrics"])
    assert res.exit_code == 0
    for name in ("FPED", "BPSN", "AvgIF-TC", "PertSR", "F1-Ratio"):
        assert name in res.output


def test_sample_size_cli_matches_paper():
    res = runner.invoke(app, ["sample-size", "--bias", "0.05", "--confidence", "0.95", "--gamma", "0.5", "--max-cost", "1"])
    assert res.exit_code == 0 and "minimum n: 11903" in res.output


SUITE = """\
suite: tiny_cli
classes: [negative, neutral, positive]
identity_terms:
  - file: gender.yaml
    groups: [female, male]
lexicons:
  job: [doctor, engineer]
templates:
  - {id: n1, text: "I hated the {identity_adj} {job}.", label: negative}
  - {id: p1, text: "I liked {a:identity_np}.", label: positive}
  - {id: u1, text: "{Identity_plural} are here.", label: neutral}
"""


@pytest.mark.slow  # builds a tiny model and runs it
def test_run_cli_end_to_end_with_tiny_model(tmp_path):
    model = make_tiny_classifier(tmp_path / "tiny")
    suite = tmp_path / "suites" / "tiny.yaml"
    suite.parent.mkdir()
    suite.write_text(SUITE)
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(suite), "--model", str(model), "--out", str(out), "--batch-size", "4", "--detail"])
    assert res.exit_code == 0, res.output
    for f in ("examples.jsonl", "scored.jsonl", "scored.parquet", "results.jsonl", "results.csv", "run.json"):
        assert (out / f).exists(), f
    # --detail: the per-group tables with metrics
    assert "gender" in res.output and "female" in res.output and "FNED" in res.output
    scored = read_scored(out / "scored.parquet")
    assert scored.classes == ("negative", "neutral", "positive")
    assert np.allclose(scored.probs.sum(1), 1)
    # re-evaluating the written scored file gives the same metric values
    again = evaluate(out / "scored.jsonl", group_order_override={"gender": ["female", "male"]})
    results = pd.read_json(out / "results.jsonl", lines=True)
    m = results[results.family.isin(["PCM", "BCM", "VBCM", "MCM"])].reset_index(drop=True)
    assert np.allclose(m["value"].astype(float), again["value"].astype(float), equal_nan=True)
    meta = json.loads((out / "run.json").read_text())
    assert meta["model"] == str(model) and meta["examples"] == len(scored)


def test_expand_and_validate_cli(tmp_path):
    res = runner.invoke(app, ["expand", "sentiment_gender", "--out", str(tmp_path / "ex.parquet")])
    assert res.exit_code == 0, res.output
    ex = pd.read_parquet(tmp_path / "ex.parquet")
    assert set(ex["group"]) == {"female", "male", "non_binary"}
    assert runner.invoke(app, ["validate", "sentiment_generic"]).exit_code == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text(SUITE.replace("label: neutral", "label: meh"))
    res = runner.invoke(app, ["validate", str(bad)])
    assert res.exit_code == 2 and "label 'meh' is not among the classes" in res.output.replace("\n", "")


def test_wheel_ships_templates_and_identity_terms(tmp_path):
    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(root)],
                   check=True, capture_output=True)
    wheel = next(tmp_path.glob("bias_suite-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "bias_suite/data/templates/sentiment_generic.yaml" in names
    assert "bias_suite/data/identity_terms/gender.yaml" in names
