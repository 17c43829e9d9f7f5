"""The public face, ``import bias_suite as bs``: its names, its lazy import,
results that print the command line's headline, run options, model names,
and documentation that uses nothing else."""
from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import bias_suite as bs
from _doc_blocks import collect
from _report_data import mini_names_suite
from _tiny_models import make_tiny_classifier

ROOT = Path(__file__).resolve().parent.parent
CLASSES = ["negative", "neutral", "positive"]


# ---------------------------------------------------------------- the names
def test_the_face_is_small_and_every_name_resolves():
    assert "__version__" in bs.__all__ and len(bs.__all__) <= 40
    assert dir(bs) == sorted(bs.__all__)
    for name in bs.__all__:
        assert getattr(bs, name) is not None, name
    for name in ("run", "evaluate", "expand", "score", "load_suite", "load_results", "assert_no_bias"):
        assert callable(getattr(bs, name)), name
    assert issubclass(bs.Results, pd.DataFrame) and issubclass(bs.BiasSuiteError, Exception)
    assert {"get", "list", "register", "unregister", "explain"} <= set(vars(bs.metrics))
    assert "FNED" in bs.metrics.list() and bs.metrics.get("fned").name == "FNED"
    assert set(bs.metrics.list(view="counterfactual")) < set(bs.metrics.list())
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        bs.not_a_name  # noqa: B018


#: the most names the face may have: the top-level names and every namespace's together
FACE_CAP = 85


def _documented_namespaces() -> dict:
    """namespace -> the names its row of docs/api.md lists (in backticks after the colon)."""
    out = {}
    for line in (ROOT / "docs" / "api.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `bs\.(metrics|checklist|families|exceptions)` \|[^:]*:(.*)\|\s*$", line)
        if m:
            out[m.group(1)] = [n.split("(")[0] for n in re.findall(r"`([^`]+)`", m.group(2))]
    return out


def test_every_namespace_holds_what_its_docs_list():
    """Each namespace's ``__all__`` (and its ``dir()``) is the list docs/api.md
    gives it, and the whole face stays under FACE_CAP names."""
    documented = _documented_namespaces()
    assert set(documented) == {"metrics", "checklist", "families", "exceptions"}
    total = len(bs.__all__)
    for ns, names in documented.items():
        mod = getattr(bs, ns)
        own = list(mod.__all__) + (["list"] if ns == "metrics" else [])  # list: not starred over the builtin
        assert sorted(own) == sorted(names), (ns, set(own) ^ set(names))
        assert len(set(own)) == len(own), ns
        for n in own:
            assert getattr(mod, n) is not None, (ns, n)
        total += len(own)
    assert sorted(dir(bs.metrics)) == sorted(documented["metrics"])
    assert total <= FACE_CAP, total
    # distinct names for distinct things
    assert bs.metrics.Distance is not bs.Comparison and bs.exceptions.PairingError.__name__ == "PairingError"
    assert not {"read_table", "write_jsonl", "write_parquet", "write_scored", "load_suite"} & set(bs.families.__all__)
    assert bs.RunResult.__module__ == "bias_suite.pipeline"  # one RunResult: bs.run returns the pipeline's


def test_renamed_names_warn_and_still_work():
    with pytest.warns(DeprecationWarning, match="bias_suite.metrics.compute"):
        old = bs.metrics.evaluate
    assert old is bs.metrics.compute
    with pytest.warns(DeprecationWarning, match="bias_suite.metrics.Distance"):
        assert bs.metrics.Comparison is bs.metrics.Distance
    with pytest.raises(AttributeError):
        bs.metrics.not_a_name  # noqa: B018


def test_import_loads_no_library():
    """``import bias_suite`` imports neither a library nor another module of
    the package, and takes well under 0.3 s once the interpreter runs."""
    code = ("import sys, time, json; t = time.perf_counter(); import bias_suite; t = time.perf_counter() - t; "
            "print(json.dumps({'t': t, 'mods': sorted(sys.modules)}))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    heavy = {"numpy", "pandas", "torch", "transformers", "scipy", "rich", "typer", "yaml", "checklist"}
    assert not heavy & {m.split(".")[0] for m in out["mods"]}, heavy & set(out["mods"])
    assert [m for m in out["mods"] if m.startswith("bias_suite")] == ["bias_suite"]
    assert out["t"] < 0.3, out["t"]


def test_a_submodule_does_not_replace_a_public_name(monkeypatch):
    """The module bias_suite.compare must not hide the function bs.compare
    when something imports it first (the import system sets a submodule as
    an attribute of its package)."""
    fn = bs.run
    planted = types.ModuleType("bias_suite.run")
    try:
        setattr(bs, "run", planted)  # what importing a module bias_suite/run.py would do
        assert bs.run is fn
    finally:
        vars(bs)["run"] = fn
    other = types.ModuleType("bias_suite.somewhere")
    monkeypatch.setattr(bs, "somewhere", other, raising=False)  # other names are left alone
    assert bs.somewhere is other


def test_compare_is_on_the_face_when_its_module_is_there():
    if importlib.util.find_spec("bias_suite.comparison") is None:
        assert "compare" not in bs.__all__
        pytest.skip("bias_suite.comparison is not in this version")
    code = ("import bias_suite.comparison, bias_suite as bs; "
            "assert callable(bs.compare) and not isinstance(bs.compare, type(bias_suite)), bs.compare; "
            "assert bs.Comparison is bias_suite.comparison.Comparison")
    p = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "compare" in bs.__all__


# ---------------------------------------------------------------- runs
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_classifier(tmp_path_factory.mktemp("m") / "tiny")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return mini_names_suite(tmp_path_factory.mktemp("s"))


def _same(text: str) -> str:
    """Output without what the clock gives (the prediction rate)."""
    return re.sub(r"[\d.,]+/s\b", "N/s", text)


def test_run_prints_what_the_command_line_prints(tiny, suite, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    res = bs.run([suite], str(tiny), out, progress=False, cache=False, bootstrap=40)
    assert isinstance(res, bs.RunResult) and isinstance(res.results, bs.Results)
    buf = io.StringIO()
    res.results.print(file=buf, width=100)
    mine = buf.getvalue()
    buf2 = io.StringIO()
    res.print(file=buf2, width=100)  # one family: the run's headline is its part's
    assert buf2.getvalue() == mine
    r = CliRunner().invoke(bs_cli(), ["run", str(suite), "--model", str(tiny), "--out", str(out), "--no-cache",
                                      "--bootstrap", "40"], env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    assert _same(mine) == _same(r.stdout)  # (the progress bars go to stderr)
    assert "Top findings" in mine and "full tables: --detail · out/results.csv · bias-suite report out" in mine
    # the counts the headline prints are the table's
    counts = res.results.counts()
    assert f"{counts['material']} material" in mine and sum(counts.values()) == res.results["verdict"].notna().sum()
    # quiet: one line after the prediction counts
    buf3 = io.StringIO()
    res.results.print(file=buf3, width=100, quiet=True)
    assert buf3.getvalue().splitlines()[-1].endswith("→ out/results.csv, bias-suite report out")


def bs_cli():
    from bias_suite.cli import app

    return app


def test_results_summarise_themselves(tiny, suite, tmp_path):
    res = bs.run([suite], str(tiny), tmp_path / "o", progress=False, cache=False, bootstrap=40).results
    ov = res.summary()
    assert list(ov["attribute"].unique()) == ["names"] and "verdict" in ov.columns
    fd = res.findings("material")
    assert len(fd) == res.counts()["material"] and (fd["verdict"] == "material").all()
    with pytest.warns(DeprecationWarning, match="counts"):
        assert res.verdict_counts() == res.counts()
    html = res._repr_html_()
    top = res.findings(top=1).iloc[0]
    assert "<table" in html and "Top findings" in html and "material" in html
    assert top["metric"] in html and str(top["reason"]).split(":")[0][:20] in html.replace("&#x27;", "'")
    assert "result rows" in html
    # a frame derived from the results is a table again (a notebook shows its rows)
    sub = res[res["metric"] == "CFGap"]
    assert isinstance(sub, bs.Results) and sub._repr_html_() == pd.DataFrame(sub)._repr_html_()
    assert isinstance(sub.findings(), pd.DataFrame)


def test_a_python_model_is_named_by_its_fingerprint(suite, tmp_path):
    import numpy as np

    def model(texts):
        return np.tile([0.2, 0.3, 0.5], (len(texts), 1))

    pred = bs.CallablePredictor(model, CLASSES, fingerprint="my-model-v3")
    res = bs.run([suite], pred, tmp_path / "fp", progress=False, bootstrap=0)
    assert res.model == "my-model-v3"
    assert json.loads((tmp_path / "fp" / "run.json").read_text())["model"] == "my-model-v3"
    buf = io.StringIO()
    res.print(file=buf, width=100)
    assert "my-model-v3: 72 examples" in buf.getvalue() and "CallablePredictor" not in buf.getvalue()
    # a callable with class_names: named by the function
    model.class_names = CLASSES
    res = bs.run([suite], model, None, progress=False, bootstrap=0, cache=False)
    assert res.model.endswith("model") and res.paths == {}
    assert bs.CallablePredictor(model, CLASSES, name="mine").name == "mine"


def test_run_options_and_overrides(tiny, suite, tmp_path):
    opts = bs.RunOptions(bootstrap=0, metrics=["CFGap", "FNED"], significance=False, bernstein=False)
    res = bs.run([suite], str(tiny), tmp_path / "a", opts, seed=3, progress=False, cache=False)
    assert res.metadata["seed"] == 3 and res.metadata["bootstrap"] == 0
    assert set(res.results["metric"]) - {"INV-FailRate"} <= {"CFGap", "FNED"}
    assert opts.seed == 0  # the options object is not changed
    with pytest.raises(bs.BiasSuiteError, match="did you mean 'bootstrap'"):
        bs.run([suite], str(tiny), None, opts, bootstraps=10)
    with pytest.raises(bs.BiasSuiteError, match="must be a RunOptions"):
        bs.run([suite], str(tiny), None, {"bootstrap": 0})
    with pytest.raises(bs.BiasSuiteError, match="multiplicity"):
        bs.run([suite], str(tiny), None, multiplicity="bonferroni")
    assert opts.replace(seed=1) == bs.RunOptions(bootstrap=0, metrics=["CFGap", "FNED"], significance=False,
                                                 bernstein=False, seed=1)


def test_step_by_step_judges_like_run(tiny, suite, tmp_path):
    """expand -> score -> evaluate gives the values and verdicts a run gives
    (without the INV rows, which the run adds to the same verdict stage)."""
    run = bs.run([suite], str(tiny), None, progress=False, cache=False, bootstrap=40, seed=2, invariance=False)
    examples = bs.expand(suite)
    assert len(examples) == len(run.examples)
    scored = bs.score(examples, str(tiny))
    res = bs.evaluate(scored, bootstrap=40, seed=2, significance=True, bernstein=True)
    assert isinstance(res, bs.Results)
    key = ["metric", "attribute", "class", "group"]
    m = run.results.merge(res, on=key, suffixes=("", "_2"))
    assert len(m) == len(run.results) == len(res)
    assert (m["verdict"].fillna("") == m["verdict_2"].fillna("")).all()
    assert ((m["value"] - m["value_2"]).abs().fillna(0) < 1e-5).all()


def test_results_of_a_folder_and_the_report(tiny, suite, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = bs.run([suite], str(tiny), "run1", progress=False, cache=False, bootstrap=40)
    back = bs.load_results("run1")
    assert isinstance(back, bs.Results) and len(back) == len(res.results)
    buf = io.StringIO()
    back.print(file=buf, width=100)
    assert buf.getvalue().startswith(f"{res.model}: 72 examples, {len(back)} result rows")
    assert "Worst counterfactual pair" in buf.getvalue()  # the scored examples were read
    report = bs.write_report(res)
    assert report == Path("run1") / "report.html" or report.resolve() == (tmp_path / "run1" / "report.html")
    buf = io.StringIO()
    res.print(file=buf, width=100)
    assert "full tables: --detail · run1/results.csv · run1/report.html" in buf.getvalue()
    with pytest.raises(bs.BiasSuiteError, match="out_dir"):
        bs.write_report(bs.run([suite], str(tiny), None, progress=False, cache=False, bootstrap=0))


# ---------------------------------------------------------------- the docs use the face
IMPORT = re.compile(r"^\s*(from\s+bias_suite(\.[\w.]+)?\s+import\s+(.*)|import\s+bias_suite(\.[\w.]+)?(\s+as\s+\w+)?)",
                    re.M)


def face_violations(text: str) -> list:
    """Imports of anything but the face, and bs.NAME uses of names it lacks."""
    bad = []
    for m in IMPORT.finditer(text):
        if m.group(2) or m.group(4):  # from bias_suite.x import / import bias_suite.x
            bad.append(m.group(0).strip())
        elif m.group(3) is not None:
            names = [n.strip().split(" as ")[0] for n in m.group(3).strip("() ").split(",") if n.strip()]
            bad += [f"from bias_suite import {n}" for n in names if n not in bs.__all__]
    bad += [f"bs.{n}" for n in re.findall(r"\bbs\.(\w+)", text) if n not in bs.__all__]
    return bad


def test_face_violations_finds_internal_imports():
    assert face_violations("import bias_suite as bs\nx = bs.run\nfrom bias_suite import Results") == []
    assert face_violations("from bias_suite.run import run\nimport bias_suite.metrics\nbs.pipeline.run()\n"
                           "from bias_suite import pipeline") == [
        "from bias_suite.run import run", "import bias_suite.metrics", "from bias_suite import pipeline",
        "bs.pipeline"]


def test_readme_and_docs_use_the_face_only():
    blocks = [b for b in collect() if b.lang.lower() == "python" and not b.doc.startswith("notebooks")]
    assert any(b.doc == "README.md" for b in blocks) and any(b.doc == "docs/api.md" for b in blocks)
    bad = {b.id: face_violations(b.text) for b in blocks}
    assert not {k: v for k, v in bad.items() if v}


#: the notebooks' own set-up (is the default model built? else a stand-in), not a use of the API
NOTEBOOK_SETUP = {"from bias_suite.models.default import is_built", "from bias_suite.paths import model_dir"}


def test_notebooks_use_the_face_only():
    import json as _json

    bad = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = _json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        found = [v for v in face_violations(text) if v not in NOTEBOOK_SETUP]
        if found:
            bad[path.name] = found
    assert not bad


def test_api_md_lists_every_public_name():
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [n for n in bs.__all__ if f"`bs.{n}" not in text]
    assert not missing, missing
