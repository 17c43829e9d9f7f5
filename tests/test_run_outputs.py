"""Run folders: determinism, file modes, output-path errors, run.json's
file listing, stale and temporary files, and the CLI's error lines."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _report_data import mini_names_suite
from _tiny_models import make_tiny_classifier
from bias_suite.cli import app
from bias_suite.exceptions import OutputError
from bias_suite.io.results import atomic_write_text, file_mode, read_manifest, run_file

ROOT = Path(__file__).resolve().parent.parent
RUN_FILES = ("examples.jsonl", "scored.jsonl", "scored.parquet", "failures.jsonl", "results.jsonl", "results.csv")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_classifier(tmp_path_factory.mktemp("m") / "tiny")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return mini_names_suite(tmp_path_factory.mktemp("s"))


def _run_args(suite, model, out, *extra):
    return ["run", str(suite), "--model", str(model), "--out", str(out), "-q", "--no-cache", "--bootstrap", "0",
            *extra]


def _invoke(args):
    return CliRunner().invoke(app, args, env={"COLUMNS": "200"})


def _one_error_line(r, code=2):
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output
    # (the mini suite is too small for its rate metrics: that warning may stand beside the error, never another)
    lines = [ln for ln in r.output.splitlines() if ln.strip() and not ln.startswith("warning: mini_names: ")]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    return lines[0]


# ---------------------------------------------------------------- determinism
def _stable_run_json(path: Path) -> dict:
    """run.json without what a clock or the cache state gives (creation
    time; the prediction statistics: durations, cached/computed counts)."""
    meta = json.loads(path.read_text())
    meta.pop("created")
    meta.pop("predictions")
    return meta


@pytest.mark.slow  # runs a suite in subprocesses under several hash seeds
def test_run_is_a_function_of_inputs_and_seed_whatever_the_hash_seed(tiny_dir, suite, tmp_path):
    """Runs in fresh interpreters with different PYTHONHASHSEED, with a cold
    cache, a warm cache and no cache, write the same bytes: predictions,
    bootstrap, tuple sampling (few tuples per template) and the INV replay
    depend on the inputs and --seed alone."""
    outs = []
    for h, cache in (("1", ["--cache-dir", str(tmp_path / "cache")]), ("4242", ["--cache-dir", str(tmp_path / "cache")]),
                     ("99", ["--no-cache"])):
        out = tmp_path / f"hash{h}"
        env = dict(os.environ, PYTHONHASHSEED=h, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        args = [sys.executable, "-m", "bias_suite.cli", "run", str(suite), "--model", str(tiny_dir), "--out", str(out),
                "-q", "--bootstrap", "40", "--max-tuples", "3", "--seed", "7", *cache]
        p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        outs.append(out)
    stats = [json.loads((o / "run.json").read_text())["predictions"] for o in outs]
    assert stats[0]["computed"] > 0 and stats[1]["computed"] == 0 and stats[1]["cached"] == stats[0]["computed"]
    a = outs[0]
    rows = [json.loads(ln) for ln in (a / "results.jsonl").read_text().splitlines()]
    assert any(r["metric"] == "INV-FailRate" for r in rows)  # the INV replay ran
    assert any(r["ci_low"] is not None and r["family"] != "bernstein" for r in rows)  # the bootstrap ran
    # run.json, the summary line and every reason give the error control the same sizes
    meta = json.loads((a / "run.json").read_text())
    iv = meta["intervals"]
    # which groups' terms the bootstrap resampled, per attribute: none for the verdicts (they speak of the
    # listed terms), the ones the model tells apart for the reading beyond them
    attrs = {r["attribute"] for r in rows if r.get("attribute")}
    assert meta["resample_terms"] is False and set(meta["terms_resampled"]) == attrs
    assert not any(meta["terms_resampled"].values()) and set(meta["beyond_terms"]) == attrs
    assert iv["multiplicity"] == "hierarchical" and iv["family"] > 0 and 0 <= iv["selected"] <= iv["units"]
    assert f"({iv['units']} units)" in iv["method"] and f"({iv['family']} values)" in iv["method"]
    for r in rows:
        if "units" in str(r.get("reason")):
            assert f"{iv['units']} units" in r["reason"] and f"{iv['family']} values" in r["reason"], r["reason"]
    for b in outs[1:]:
        for name in RUN_FILES:
            assert (a / name).read_bytes() == (b / name).read_bytes(), (b.name, name)
        assert _stable_run_json(a / "run.json") == _stable_run_json(b / "run.json")
        assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())


# ---------------------------------------------------------------- file modes
@pytest.mark.slow
@pytest.mark.parametrize("mask, want", [(0o022, 0o644), (0o077, 0o600)])
def test_outputs_respect_the_umask(tiny_dir, suite, tmp_path, mask, want):
    old = os.umask(mask)
    try:
        assert file_mode() == want
        r = _invoke(_run_args(suite, tiny_dir, tmp_path / "o"))
        assert r.exit_code == 0, r.output
        assert _invoke(["report", str(tmp_path / "o")]).exit_code == 0
        single = atomic_write_text(tmp_path / "one.txt", "x")
    finally:
        os.umask(old)
    files = [p for p in (tmp_path / "o").iterdir()] + [single]
    assert {p.name for p in files} >= set(RUN_FILES) | {"run.json", "report.html"}
    for p in files:
        assert stat.S_IMODE(p.stat().st_mode) == want, p


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path):
    from bias_suite.io.results import atomic_path

    target = tmp_path / "f.txt"
    atomic_write_text(target, "old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("stop")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]


# ---------------------------------------------------------------- output paths
def test_bad_out_paths_are_one_line_errors_before_predicting(tiny_dir, suite, tmp_path):
    (tmp_path / "afile").write_text("x")
    line = _one_error_line(_invoke(_run_args(suite, tiny_dir, tmp_path / "afile")))
    assert "is a file, not a folder" in line
    line = _one_error_line(_invoke(_run_args(suite, tiny_dir, tmp_path / "afile" / "sub")))
    assert "afile is a file, not a folder" in line
    if os.geteuid() == 0:  # root writes anywhere: use a file system nobody may write
        locked = Path("/proc/bias_suite_out")
    else:
        (tmp_path / "ro").mkdir(mode=0o555)
        locked = tmp_path / "ro" / "out"
    line = _one_error_line(_invoke(_run_args(suite, tiny_dir, locked)))
    assert "output folder" in line and str(locked) in line
    r = _invoke(["report", str(tmp_path), "--out", str(tmp_path / "afile" / "r.html")])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_dotdot_leaves_no_stray_folder(tiny_dir, suite, tmp_path):
    r = _invoke(_run_args(suite, tiny_dir, tmp_path / "nope" / ".." / "out"))
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (tmp_path / "out" / "run.json").is_file()
    r = _invoke(["report", str(tmp_path / "out"), "--out", str(tmp_path / "gone" / ".." / "r.html")])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "r.html"]
    # a run that fails before writing creates no output folder
    line = _one_error_line(_invoke(_run_args(suite, tmp_path / "no_model", tmp_path / "new" / "o")))
    assert "no_model" in line and not (tmp_path / "new").exists()


def test_debug_shows_the_traceback_and_bugs_say_so(tiny_dir, suite, tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("x")
    r = _invoke(["--debug"] + _run_args(suite, tiny_dir, tmp_path / "afile"))
    assert isinstance(r.exception, OutputError)  # raised: the console script prints its traceback

    def broken(*a, **k):
        raise KeyError("boom")

    monkeypatch.setattr("bias_suite.pipeline.run", broken)
    line = _one_error_line(_invoke(_run_args(suite, tiny_dir, tmp_path / "o")), code=1)
    assert "bug" in line and "KeyError" in line and "--debug" in line
    r = _invoke(["--debug"] + _run_args(suite, tiny_dir, tmp_path / "o"))
    assert isinstance(r.exception, KeyError)


def test_console_script_prints_no_traceback(tmp_path):
    (tmp_path / "afile").write_text("x")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "bias_suite.cli", "report", str(tmp_path / "afile" / "x")],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "Traceback" not in p.stderr + p.stdout
    assert len([ln for ln in p.stderr.splitlines() if ln.strip()]) == 1, p.stderr


# ---------------------------------------------------------------- run folders
def test_run_json_lists_the_files_and_readers_use_only_those(tiny_dir, suite, tmp_path):
    out = tmp_path / "o"
    assert _invoke(_run_args(suite, tiny_dir, out)).exit_code == 0
    listing = read_manifest(out)
    assert set(listing) == set(RUN_FILES)
    for name, entry in listing.items():
        assert entry["bytes"] == (out / name).stat().st_size and len(entry["sha256"]) == 64
    earlier_scored = (out / "scored.jsonl").read_bytes()
    # evaluate into the same folder: the earlier run's examples and scored files go
    r = _invoke(["evaluate", str(out / "scored.jsonl"), "--out", str(tmp_path / "ev"), "-q"])
    assert r.exit_code == 0, r.output
    (tmp_path / "copy.parquet").write_bytes((out / "scored.parquet").read_bytes())
    assert _invoke(["evaluate", str(tmp_path / "ev" / ".." / "copy.parquet"), "--out", str(out), "-q"]).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["results.csv", "results.jsonl", "run.json"]
    # a scored file put there later is not the run's: the report ignores it
    (out / "scored.jsonl").write_bytes(earlier_scored)
    assert run_file(out, "scored.parquet", "scored.jsonl") is None
    from bias_suite.report.html import load_report_data

    assert load_report_data(out).scored is None
    # a listed file that changed is refused, by report and check
    with open(out / "results.jsonl", "a") as fh:
        fh.write("\n")
    line = _one_error_line(_invoke(["report", str(out)]))
    assert "results.jsonl" in line and "changed since the run wrote it" in line
    line = _one_error_line(_invoke(["check", str(out), "--fail-if", "FNED>9"]))
    assert "changed since the run wrote it" in line


def test_evaluate_in_place_keeps_its_input(tiny_dir, suite, tmp_path):
    out = tmp_path / "o"
    assert _invoke(_run_args(suite, tiny_dir, out)).exit_code == 0
    assert _invoke(["evaluate", str(out / "scored.jsonl"), "--out", str(out), "-q"]).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["results.csv", "results.jsonl", "run.json", "scored.jsonl"]
    assert set(read_manifest(out)) == {"results.csv", "results.jsonl", "scored.jsonl"}
    assert run_file(out, "scored.parquet", "scored.jsonl") == out / "scored.jsonl"


def test_stale_files_and_interrupted_temp_files_are_removed(tiny_dir, suite, tmp_path):
    out = tmp_path / "o"
    assert _invoke(_run_args(suite, tiny_dir, out, "--report")).exit_code == 0
    (out / "ner").mkdir()
    for name in ("results.jsonl", "run.json", "scored.jsonl"):  # an earlier mixed run's NER part
        (out / "ner" / name).write_text("{}\n")
    (out / ".scored.parquet.k3j4h5g6.tmp").write_bytes(b"\0" * 4096)  # kill -9 while writing
    (out / "notes.txt").write_text("mine")
    assert _invoke(_run_args(suite, tiny_dir, out)).exit_code == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(RUN_FILES + ("run.json", "notes.txt"))  # no temp file, no old report, no ner/


def test_prepare_removes_temp_files_before_a_run_writes(tmp_path):
    from bias_suite.io.results import prepare_run_folder

    (tmp_path / ".results.jsonl.abcd_123.tmp").write_text("x")
    (tmp_path / ".hidden.tmp").write_text("not ours")
    (tmp_path / ".notes.txt.abcd_123.tmp").write_text("another tool's")
    prepare_run_folder(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hidden.tmp", ".notes.txt.abcd_123.tmp"]


def test_a_folder_that_is_no_run_folder_keeps_files_with_our_names(tiny_dir, suite, tmp_path):
    """Without a run.json the folder is not an earlier run's: a user's own
    report.html or results.csv there stays (results.* are overwritten)."""
    (tmp_path / "report.html").write_text("mine")
    (tmp_path / "inv_failures.jsonl").write_text("mine")
    assert _invoke(_run_args(suite, tiny_dir, tmp_path)).exit_code == 0
    assert (tmp_path / "report.html").read_text() == "mine" and (tmp_path / "inv_failures.jsonl").exists()
    assert run_file(tmp_path, "inv_failures.jsonl") is None  # not the run's: the report does not read it
    assert _invoke(_run_args(suite, tiny_dir, tmp_path)).exit_code == 0  # a run folder now: its files go, not mine
    assert (tmp_path / "inv_failures.jsonl").exists() and not (tmp_path / "report.html").exists()


# ---------------------------------------------------------------- single group
def test_single_group_comparisons_are_null_with_a_note(tmp_path):
    """A comparison on an attribute with one group has nothing to compare:
    FNED against S (= the group itself) would read 0. Null with a note;
    SubgroupAUC (no comparison) keeps its value; a two-group attribute beside
    it is untouched."""
    import pandas as pd

    from bias_suite.evaluation import evaluate

    rows = [dict(id=f"g{i}", template=f"t{i % 3}", attribute="gender", group="f", term=f"w{i % 2}", text=f"x{i}",
                 label=["pos", "neg"][i % 2], probs={"pos": 0.2 + 0.1 * (i % 5), "neg": 0.8 - 0.1 * (i % 5)})
            for i in range(12)]
    two = [dict(r, id=f"r{i}", attribute="race", group=["a", "b"][i // 2 % 2]) for i, r in enumerate(rows)]
    df = pd.DataFrame(rows + two)
    res = evaluate(df, bootstrap=10)
    g = res[res["attribute"] == "gender"]
    fned = g[g["metric"].isin(["FNED", "FPED*", "AvgGF", "CFGap"])]
    assert len(fned) and fned["value"].isna().all() and fned["verdict"].isna().all() and fned["ci_low"].isna().all()
    assert (fned["note"] == "needs at least two groups; attribute 'gender' has one ('f')").all()
    auc = g[g["metric"] == "SubgroupAUC"]
    assert auc["value"].notna().all()  # an AUC within the group, not a comparison
    assert not g["value"].fillna(1).eq(0).any()  # no silent 0 anywhere on the single-group attribute
    r = res[(res["attribute"] == "race") & (res["metric"] == "FNED") & res["group"].isna()]
    assert r["value"].notna().all()
    # the files say so too
    df.to_json(tmp_path / "s.jsonl", orient="records", lines=True)
    out = _invoke(["evaluate", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "o")])
    assert out.exit_code == 0, out.output
    written = [json.loads(ln) for ln in (tmp_path / "o" / "results.jsonl").read_text().splitlines()]
    fned = [w for w in written if w["attribute"] == "gender" and w["metric"] == "FNED"]
    assert fned and all(w["value"] is None and "one ('f')" in w["note"] for w in fned)
