"""Raw-file exchange (CheckList's ``tests.txt`` and predictions made
elsewhere) and TestSuite persistence (JSON by default, dill only on
explicit opt-in).
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

with warnings.catch_warnings():  # checklist's dependencies warn about pkg_resources / IPython
    warnings.simplefilter("ignore")
    from checklist.abstract_test import load_test
    from checklist.test_suite import TestSuite
    from checklist.test_types import INV, MFT

from ..exceptions import BiasSuiteError
from ..exceptions import DillWarning
from .invariance import run_indices, make_inv, present_order, to_builtin, failure_source
from .predict_fns import checklist_predict_fn
from .bias_tests import BiasTestSuite, MetricTest, SignificanceTest, to_testsuite
from .results import inv_tests, metrics_and_inv, CheckListRun, failures, invariance_rows, scored_from_testsuite

# =========================================================================
# raw-file export / import (predictions made elsewhere)


# =========================================================================
RAW_FILE = "tests.txt"
MANIFEST = "manifest.jsonl"
SPEC = "testsuite.json"


def export_checklist(examples_or_suite, out_dir, *, mode: str = "all_terms", threshold: float = 0.1, seed: int = 0,
                     criterion: str | None = None, attributes=None, class_names: Sequence[str] | None = None,
                     group_order_override=None) -> dict:
    """Export a suite as a CheckList TestSuite in CheckList's raw-file format.

    Writes to ``out_dir``: ``tests.txt`` (``TestSuite.to_raw_file``: one
    sentence per line, the file a model elsewhere predicts), ``manifest.jsonl``
    (one JSON object per line of tests.txt: test, case, the example's columns)
    and ``testsuite.json`` (the settings and classes). Nothing is pickled.
    ``mode="all_terms"`` (default) exports every example of the complete
    templates, so the metrics can be computed from the predictions too.
    Returns the paths.
    """
    from ..io import atomic_write_text
    from ..families import write_jsonl

    src = failure_source(examples_or_suite, attributes)
    suite = to_testsuite(src, threshold=threshold, mode=mode, seed=seed, criterion=criterion,
                         group_order_override=group_order_override, class_names=class_names)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    raw = out / RAW_FILE
    suite.to_raw_file(str(raw))
    rows = []
    for name, t in suite.tests.items():
        for c, (case, metas) in enumerate(zip(t.data, t.meta)):
            for text, m in zip(case, metas):
                rows.append({"test": name, "case": c, **m, "text": text})
    manifest = write_jsonl(pd.DataFrame(rows), out / MANIFEST)
    tests = []
    for name, t in suite.tests.items():
        tests.append({"name": name, "capability": suite.info[name]["capability"], "description": t.description,
                      **{k: v for k, v in t.bias_suite.items()}})
    spec = {
        "format": "bias_suite-checklist-export/1", "raw_file": RAW_FILE, "manifest": MANIFEST,
        "lines": len(rows), "task": src.task, "class_names": list(class_names or src.classes or []) or None,
        "tests": tests,
        "predictions": "one line per line of tests.txt, CheckList's format: 'pred p_0 ... p_C-1' (pred_and_softmax, "
                       "pred an index or a class name) or 'p_0 ... p_C-1' (softmax), classes in class_names order",
    }
    spec_path = atomic_write_text(out / SPEC, json.dumps(spec, indent=2) + "\n")
    return {"raw_file": raw, "manifest": manifest, "spec": spec_path}


def _suite_from_manifest(manifest: pd.DataFrame, spec: dict) -> BiasTestSuite:
    suite = BiasTestSuite()
    by_test = {name: g for name, g in manifest.groupby("test", sort=False)}
    for info in spec["tests"]:
        g = by_test.get(info["name"])
        if g is None:
            raise BiasSuiteError(f"manifest has no rows for test {info['name']!r}")
        data, meta = [], []
        for _, case in g.groupby("case", sort=True):
            data.append(case["text"].astype(str).tolist())
            meta.append([
                {k: to_builtin(v) for k, v in r.items() if k not in ("test", "case", "text") and not (k == "term_span" and v is None)}
                for r in case.to_dict("records")
            ])
        inv = make_inv(info["attribute"], info["groups"], data, meta, threshold=info["threshold"],
                        criterion=info["criterion"], mode=info["mode"], seed=info["seed"], task=info["task"],
                        class_names=info.get("class_names") or spec.get("class_names"), name=info["name"],
                        capability=info["capability"], description=info.get("description"),
                        dropped=info.get("dropped_templates", 0))
        suite.add(inv)
    return suite


def _pred_format_fn(file_format: str, class_names: Sequence[str] | None):
    """CheckList's line formats, with class-name predictions mapped to indices."""
    index = {c: i for i, c in enumerate(class_names or [])}

    def pred_of(tok):
        if tok.isdigit():
            return int(tok)
        if tok in index:
            return index[tok]
        raise BiasSuiteError(f"prediction {tok!r} is neither a class index nor one of the classes {list(index)}")

    if file_format == "pred_and_softmax":
        def fmt(line):
            parts = line.split()
            return pred_of(parts[0]), np.array([float(x) for x in parts[1:]])
        return fmt
    if file_format == "pred_and_conf":
        def fmt(line):
            p, c = line.split()
            return pred_of(p), float(c)
        return fmt
    return None


def import_checklist(export_dir, predictions, *, class_names: Sequence[str] | None = None,
                     file_format: str = "pred_and_softmax", format_fn=None, ignore_header: bool = False,
                     metrics=None, significance: bool = True, max_tuples: int | None = 100,
                     seed: int = 0) -> CheckListRun:
    """Read predictions made elsewhere (CheckList's prediction-file formats,
    one line per line of the export's ``tests.txt``) back with
    ``TestSuite.run_from_file``, into bias_suite scored examples, metrics and
    INV rows. ``class_names``: column order of the probabilities (default: the
    export's classes)."""
    from ..families import check_scored, read_table

    export_dir = Path(export_dir)
    spec_path = export_dir / SPEC
    if not spec_path.exists():
        raise BiasSuiteError(f"{export_dir}: not a CheckList export (no {SPEC}); create one with export_checklist")
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    manifest = read_table(export_dir / spec.get("manifest", MANIFEST)).drop(columns=["__line__"], errors="ignore")
    names = list(class_names) if class_names else spec.get("class_names")
    suite = _suite_from_manifest(manifest, spec)
    lines = suite.get_raw_examples(new_sample=True)  # sets test_ranges/result_indexes as to_raw_file did
    raw_path = export_dir / spec.get("raw_file", RAW_FILE)
    if raw_path.exists():
        on_disk = raw_path.read_text(encoding="utf-8").split("\n")
        if on_disk != lines:
            raise BiasSuiteError(f"{raw_path} does not match {MANIFEST}; re-export instead of editing the files")
    with open(predictions, "r", encoding="utf-8") as fh:
        n_pred = sum(1 for _ in fh) - (1 if ignore_header else 0)
    if n_pred != len(lines):
        raise BiasSuiteError(f"{predictions}: {n_pred} prediction lines for the {len(lines)} lines of {raw_path.name}")
    if format_fn is None:
        format_fn = _pred_format_fn(file_format, names)
    suite.run_from_file(str(predictions), file_format=None if format_fn else file_format, format_fn=format_fn,
                        ignore_header=ignore_header, overwrite=True)
    invs = inv_tests(suite.tests.values())
    for t in invs:
        t.bias_suite["class_names"] = names
    table = scored_from_testsuite(suite, names)
    if spec.get("task", "classification") != "classification":
        rows = invariance_rows(suite)
        return CheckListRun(suite, table, rows, failures(suite), None, manifest)
    scored = check_scored(table)
    order = {}
    for info in spec["tests"]:
        order[info["attribute"]] = info["groups"]
    results = metrics_and_inv(scored, suite, metrics=metrics, significance=significance, max_tuples=max_tuples,
                               seed=seed, group_order=present_order(order, scored.frame))
    return CheckListRun(suite, scored, results, failures(suite), None, manifest)


def import_raw_file(raw_file, predictions, suite, *, class_names: Sequence[str] | None = None,
                    file_format: str = "pred_and_softmax", format_fn=None, ignore_header: bool = False,
                    groups: Mapping[str, Sequence[str]] | None = None, attribute: str | None = None,
                    metrics=None, significance: bool = True, max_tuples: int | None = 100,
                    seed: int = 0) -> CheckListRun:
    """Predictions made elsewhere for a CheckList user's own ``to_raw_file``
    output: ``suite`` is the TestSuite that wrote ``raw_file`` (or a file of
    :func:`save_testsuite`). CheckList reads the predictions
    (``suite.run_from_file``), so its own fail rates stand; the tests' cases
    then become bias_suite examples (:func:`~bias_suite.interop.from_tests.from_checklist`,
    ``groups``/``attribute`` as there) scored with the same predictions, and
    the metrics, significance tests and INV rows come back side by side."""
    from ..families import scored_from_arrays
    from .from_tests import from_checklist

    if isinstance(suite, (str, Path)):
        suite = load_testsuite(suite)
    lines = Path(raw_file).read_text(encoding="utf-8").split("\n")
    if set(getattr(suite, "test_ranges", None) or {}) != set(suite.tests):
        # a suite loaded from a file has forgotten where its tests sit in the raw file: write it again
        # (CheckList's own to_raw_file) and check that it is the file the predictions are for
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            again = Path(d) / "tests.txt"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                suite.to_raw_file(str(again))
            if again.read_text(encoding="utf-8").split("\n") != lines:
                raise BiasSuiteError(f"{raw_file} is not this suite's raw file (its to_raw_file writes other lines); "
                                     "write it with to_raw_file of the same suite and no sampling (n=None)")
    with open(predictions, "r", encoding="utf-8") as fh:
        n_pred = sum(1 for _ in fh) - (1 if ignore_header else 0)
    if n_pred != len(lines):
        raise BiasSuiteError(f"{predictions}: {n_pred} prediction lines for the {len(lines)} lines of {raw_file}")
    if format_fn is None and class_names is not None:
        format_fn = _pred_format_fn(file_format, class_names)
    suite.run_from_file(str(predictions), file_format=None if format_fn else file_format, format_fn=format_fn,
                        ignore_header=ignore_header, overwrite=True)
    probs: dict = {}
    for t in suite.tests.values():
        for d, case in enumerate(t.data):
            if t.results.confs is None or d >= len(t.results.confs):
                continue
            sents = [case] if isinstance(case, str) else list(case)
            confs = t.results.confs[d]
            confs = [confs] if isinstance(case, str) else list(confs)
            probs.update((str(x), np.asarray(c, dtype=np.float64)) for x, c in zip(sents, confs))
    examples = from_checklist(suite, groups=groups, attribute=attribute, class_names=class_names)
    P = np.stack([probs[x] for x in examples["text"]])
    names = list(class_names) if class_names else [str(k) for k in range(P.shape[1])]
    frame = examples.assign(label=examples["label"].where(examples["label"].isin(names), None))
    scored = scored_from_arrays(frame, P, names)
    results = metrics_and_inv(scored, suite, metrics=metrics, significance=significance, max_tuples=max_tuples,
                               seed=seed, group_order=None)
    return CheckListRun(suite, scored, results, failures(suite), None, examples)


def write_predictions(raw_file, model, out_path, *, class_names: Sequence[str] | None = None,
                      file_format: str = "pred_and_softmax", decimals: int = 10) -> Path:
    """Predict every line of a CheckList raw file and write CheckList's
    prediction format (``pred_and_softmax``: "pred p_0 ... p_C-1";
    ``softmax``: "p_0 ... p_C-1") — what "running predictions elsewhere"
    produces. ``model``: anything :func:`checklist_predict_fn` accepts."""
    from ..io import atomic_write_text

    if file_format not in ("pred_and_softmax", "softmax"):
        raise BiasSuiteError(f"file_format must be 'pred_and_softmax' or 'softmax', got {file_format!r}")
    texts = Path(raw_file).read_text(encoding="utf-8").split("\n")
    fn = checklist_predict_fn(model, class_names)
    preds, confs = fn(texts)
    lines = []
    for p, c in zip(preds, confs):
        probs = " ".join(f"{x:.{decimals}f}" for x in c)
        lines.append(f"{int(p)} {probs}" if file_format == "pred_and_softmax" else probs)
    return atomic_write_text(out_path, "\n".join(lines) + "\n")


# =========================================================================
# persistence: JSON by default, dill only on explicit opt-in


# =========================================================================
def _flat_results(t) -> dict | None:
    if not t._results_exist():
        return None
    idxs = run_indices(t)
    preds, confs = [], []
    for d in idxs:
        if isinstance(t.data[d], str):  # a one-sentence case (MFT): one prediction
            preds.append(to_builtin(t.results.preds[d]))
            confs.append(to_builtin(t.results.confs[d]))
            continue
        for k in range(len(t.data[d])):
            preds.append(to_builtin(t.results.preds[d][k]))
            confs.append(to_builtin(t.results.confs[d][k]))
    return {"run_idxs": None if t.run_idxs is None else idxs, "preds": preds, "confs": confs}


def _expectation_chain(test, chain: Sequence[str]) -> list | None:
    """The values the innermost function of a CheckList expectation holds,
    when the expectation is exactly CheckList's ``chain`` of wrappers (by
    qualified name, from checklist.expect), else None."""
    fn = getattr(test, "expect", None)
    for i, name in enumerate(chain):
        if getattr(fn, "__qualname__", None) != name or getattr(fn, "__module__", "") != "checklist.expect":
            return None
        cells = [c.cell_contents for c in (fn.__closure__ or ())]
        if i == len(chain) - 1:
            return cells
        inner = [c for c in cells if callable(c)]
        if len(inner) != 1:
            return None
        fn = inner[0]
    return None


def _label_expectation(test) -> bool:
    """Whether a test's expectation is the one CheckList gives an MFT with
    labels (``Expect.eq()`` with no value of its own): its labels say it all."""
    cells = _expectation_chain(test, ["Expect.testcase.<locals>.expect", "Expect.single.<locals>.expect_fn",
                                      "Expect.eq.<locals>.ret_fn"])
    return cells == [None]


def _inv_tolerance(test) -> float | None:
    """The tolerance of an INV test whose expectation is CheckList's own
    ``Expect.inv(tolerance)`` (the default of ``INV``), else None."""
    cells = _expectation_chain(test, ["Expect.testcase.<locals>.expect", "Expect.pairwise.<locals>.expect_fn",
                                      "Expect.inv.<locals>.expect"])
    return float(cells[0]) if cells and len(cells) == 1 and isinstance(cells[0], (int, float)) else None


def testsuite_to_dict(suite: TestSuite) -> dict:
    """A JSON-able description of a TestSuite made of bias_suite-built tests
    (INV from :func:`invariance_tests`, :class:`MetricTest`,
    :class:`SignificanceTest`), a user's INV tests with CheckList's own rule
    (their groups read as on import) and MFTs judged by their labels, with their
    results when run. Other tests carry code (expectation functions) that
    JSON cannot hold: they raise."""
    tests = []
    for name, t in suite.tests.items():
        base = {"name": name, "capability": suite.info[name]["capability"], "description": t.description,
                "data": t.data, "meta": t.meta, "results": _flat_results(t)}
        if isinstance(t, INV) and getattr(t, "bias_suite", None) is None and _inv_tolerance(t) is not None:
            # a CheckList user's own INV with CheckList's rule: bias_suite reads its groups (as on import) and
            # saves it as data; one whose sentences hold no known identity term stays code (error below)
            from .from_tests import adopt_inv

            try:
                adopt_inv(t, threshold=_inv_tolerance(t))
            except BiasSuiteError:
                pass
        if isinstance(t, INV) and getattr(t, "bias_suite", None):
            tests.append({"type": "INV", "bias_suite": t.bias_suite, **base})
        elif isinstance(t, MetricTest):
            if callable(t.bound):
                raise BiasSuiteError(f"test {name!r}: a callable bound cannot be saved as JSON")
            from ..metrics.catalog import REGISTRY

            if REGISTRY.get(t.metric.name) is not t.metric:
                raise BiasSuiteError(f"test {name!r}: metric {t.metric.name!r} is not registered; register it to save")
            tests.append({"type": "METRIC", "metric": t.metric.name, "threshold": t.threshold, "bound": t.bound,
                          "max_tuples": t.max_tuples, "seed": t.seed, "class_names": t.class_names,
                          "group_order": t.group_order, **base})
        elif isinstance(t, MFT) and _label_expectation(t) and isinstance(t.agg_fn, str):
            # an MFT judged by its labels (CheckList's Expect.eq()): data, labels and agg_fn say it all
            tests.append({"type": "MFT", "labels": to_builtin(t.labels), "agg_fn": t.agg_fn, **base})
        elif isinstance(t, SignificanceTest):
            tests.append({"type": "SIG", "alpha": t.alpha, "adjust": t.adjust, "class_names": t.class_names,
                          "group_order": t.group_order, **base})
        else:
            raise BiasSuiteError(
                f"test {name!r} ({type(t).__name__}) is not a bias_suite-built test: its expectation is code, which "
                "JSON cannot hold; save with allow_dill=True (pickle: loading runs code from the file)"
            )
    return {"format": "bias_suite-checklist-testsuite/1", "tests": tests}


def _restore_results(t, res):
    if not res:
        return
    idxs = res["run_idxs"] if res["run_idxs"] is not None else list(range(len(t.data)))
    t.run_idxs = None if res["run_idxs"] is None else np.asarray(idxs)
    t.result_indexes = [i for i in idxs for _ in ([t.data[i]] if isinstance(t.data[i], str) else t.data[i])]
    confs = [np.asarray(c, dtype=float) if isinstance(c, list) else c for c in res["confs"]]
    t.run_from_preds_confs(res["preds"], confs, overwrite=True)


def testsuite_from_dict(d: Mapping) -> BiasTestSuite:
    """Rebuild a TestSuite saved by :func:`testsuite_to_dict` (real CheckList
    INV objects, bias_suite metric/significance tests, results restored)."""
    suite = BiasTestSuite()
    for spec in d.get("tests", []):
        kind = spec["type"]
        if kind == "INV":
            info = spec["bias_suite"]
            t = make_inv(info["attribute"], info["groups"], spec["data"], spec["meta"], threshold=info["threshold"],
                          criterion=info["criterion"], mode=info["mode"], seed=info["seed"], task=info["task"],
                          class_names=info.get("class_names"), name=spec["name"], capability=spec["capability"],
                          description=spec.get("description"), dropped=info.get("dropped_templates", 0))
            if info.get("case_meta"):  # an adopted test (a CheckList user's own): its groups were read per case
                t.bias_suite.update(case_meta=info["case_meta"], adopted=bool(info.get("adopted")))
        elif kind == "MFT":
            t = MFT(spec["data"], labels=spec["labels"], meta=spec["meta"], agg_fn=spec.get("agg_fn", "all"),
                    name=spec["name"], capability=spec["capability"], description=spec.get("description"))
        else:
            ex = pd.DataFrame([{**m, "text": x} for case, metas in zip(spec["data"], spec["meta"]) for x, m in zip(case, metas)])
            if kind == "METRIC":
                t = MetricTest(spec["metric"], ex, threshold=spec["threshold"], bound=spec["bound"],
                               class_names=spec.get("class_names"), max_tuples=spec.get("max_tuples"),
                               seed=spec.get("seed", 0), name=spec["name"], capability=spec["capability"],
                               description=spec.get("description"), group_order_override=spec.get("group_order"))
            elif kind == "SIG":
                t = SignificanceTest(ex, alpha=spec["alpha"], adjust=spec.get("adjust"), class_names=spec.get("class_names"),
                                     name=spec["name"], capability=spec["capability"], description=spec.get("description"),
                                     group_order_override=spec.get("group_order"))
            else:
                raise BiasSuiteError(f"unknown test type {kind!r}")
        suite.add(t, name=spec["name"])
        _restore_results(t, spec.get("results"))
    return suite


def _is_json(path: Path) -> bool:
    try:
        head = path.read_bytes()[:1]
    except FileNotFoundError:
        raise BiasSuiteError(f"{path}: no such file") from None
    return head in (b"{", b"[")


def save_testsuite(suite: TestSuite, path, *, allow_dill: bool = False) -> Path:
    """Save a TestSuite. Default: JSON (:func:`testsuite_to_dict`), for suites
    of bias_suite-built tests. ``allow_dill=True`` uses CheckList's own
    ``TestSuite.save`` (dill, i.e. pickle) and warns: a dill file runs code
    when loaded, so only load files you made yourself."""
    from ..io import atomic_write_text

    path = Path(path)
    if allow_dill:
        warnings.warn(f"saving {path} with dill (CheckList's TestSuite.save): loading it executes code from the file",
                      DillWarning, stacklevel=2)
        suite.save(str(path))
        return path
    return atomic_write_text(path, json.dumps(testsuite_to_dict(suite), default=to_builtin) + "\n")


def load_testsuite(path, *, allow_dill: bool = False) -> TestSuite:
    """Load a TestSuite saved by :func:`save_testsuite`. JSON files are read
    safely; dill files (CheckList's ``TestSuite.save``) only with
    ``allow_dill=True``, with a :class:`DillWarning`: unpickling executes
    code from the file."""
    path = Path(path)
    if _is_json(path):
        return testsuite_from_dict(json.loads(path.read_text(encoding="utf-8")))
    if not allow_dill:
        raise BiasSuiteError(
            f"{path} is not JSON: it looks like a dill/pickle TestSuite (CheckList's TestSuite.save). Loading it executes "
            "code from the file; pass allow_dill=True only for files you trust"
        )
    warnings.warn(f"loading {path} with dill: this executes code from the file", DillWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return load_test(str(path))
