"""``bias-suite checklist ...``: CheckList export and import.

    bias-suite checklist export SUITE... --out DIR          suite -> CheckList raw file (+ manifest, settings)
    bias-suite checklist predict DIR --model M --out PREDS  predict the raw file, CheckList's prediction format
    bias-suite checklist import DIR PREDS --out OUT         predictions -> scored examples, metrics, INV rows
    bias-suite checklist import RAW PREDS --suite FILE ...   the same for a CheckList user's own to_raw_file output

This module only defines the commands; ``checklist`` (slow to import) is
imported when a command runs.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..exceptions import BiasSuiteError
from .options import comma_list, name_lists, option
from .output import exit_with, console

checklist_app = typer.Typer(
    no_args_is_help=True,
    help="CheckList interop: export suites as CheckList tests (raw file), import predictions made elsewhere.",
)


@checklist_app.command("export")
def export_cmd(
    suites: List[str] = typer.Argument(..., help="Suite files or bundled suite names."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder (tests.txt, manifest.jsonl, testsuite.json)."),
    attribute: Optional[List[str]] = typer.Option(None, "--attribute", "-a", help="Keep only these attributes."),
    mode: str = typer.Option("all_terms", help="all_terms (every example) or per_group (one variant per group)."),
    threshold: float = typer.Option(0.1, help="INV probability threshold."),
    criterion: Optional[str] = typer.Option(None, help="INV rule: checklist (CheckList's Expect.inv, the default for classification), prob (any class probability moves by more than --threshold) or tags (sequence labelling, its default)."),
    seed: int = typer.Option(0, help="Seed of the per-group variant choice."),
):
    """Export suites as a CheckList TestSuite in CheckList's raw-file format (one sentence per line).

    Example: bias-suite checklist export sentiment_gender --out exp
    """
    from ..interop.checklist import export_checklist

    try:
        paths = export_checklist(suites, out, mode=mode, threshold=threshold, seed=seed, criterion=criterion, attributes=attribute)
    except BiasSuiteError as e:
        exit_with(e)
    import json

    spec = json.loads(Path(paths["spec"]).read_text(encoding="utf-8"))
    console.print(f"{spec['lines']} lines, {len(spec['tests'])} INV tests ({', '.join(t['name'] for t in spec['tests'])})")
    console.print(f"raw file: {paths['raw_file']}", soft_wrap=True)
    console.print("predict each line elsewhere and write one line per sentence: 'PRED p_0 ... p_C-1' "
                  f"(classes {spec['class_names']}), then: bias-suite checklist import {out} PREDICTIONS --out DIR", soft_wrap=True)


@checklist_app.command("predict")
def predict_cmd(
    export_dir: Path = typer.Argument(..., help="Folder written by `bias-suite checklist export`."),
    model: str = typer.Option("default-sentiment", "--model", "-m", help="default-sentiment, a local model folder or a hub id."),
    out: Path = typer.Option(..., "--out", "-o", help="Prediction file to write (CheckList's pred_and_softmax format)."),
    device: str = typer.Option("auto"),
    batch_size: int = typer.Option(64),
):
    """Predict an exported raw file with a bias_suite model, in CheckList's prediction-file format.

    Example: bias-suite checklist predict exp --model default-sentiment --out preds.txt
    """
    from ..interop.checklist import RAW_FILE, write_predictions
    from ..pipeline import load_predictor

    try:
        predictor, name = load_predictor(model, device=device, batch_size=batch_size, progress=False)
        write_predictions(Path(export_dir) / RAW_FILE, predictor, out)
    except BiasSuiteError as e:
        exit_with(e)
    console.print(f"model {name}: predictions → {out}", soft_wrap=True)


@checklist_app.command("import")
def import_cmd(
    export_dir: Path = typer.Argument(..., help="Folder written by `bias-suite checklist export`, or a CheckList raw file (TestSuite.to_raw_file) with --suite."),
    predictions: Path = typer.Argument(..., help="CheckList prediction file, one line per line of tests.txt / the raw file."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder for scored.jsonl and results.jsonl/csv."),
    suite: Optional[Path] = typer.Option(None, "--suite", help="The TestSuite that wrote the raw file: JSON (save_testsuite) or CheckList's TestSuite.save file (with --allow-dill)."),
    allow_dill: bool = typer.Option(False, "--allow-dill", help="Load a CheckList TestSuite.save (dill) file; this executes code from the file."),
    group: Optional[List[str]] = typer.Option(None, "--group", metavar="GROUP=TERM,TERM", help="Identity terms of a group in the cases (repeatable; default: read from the tests)."),
    attribute: Optional[str] = typer.Option(None, "--attribute", help="Attribute name for --group (default: identity)."),
    classes: Optional[str] = typer.Option(None, help="Comma-separated class names in probability order (default: the suite's)."),
    file_format: str = typer.Option("pred_and_softmax", help="CheckList format: pred_and_softmax, softmax or binary_conf."),
    ignore_header: bool = typer.Option(False, help="Skip the first line of the prediction file."),
    metrics: Optional[str] = option("metrics"),
    max_tuples: int = option("max_tuples"),
    seed: int = option("seed"),
    bootstrap: int = option("bootstrap"),
    confidence: float = option("confidence"),
    lines: int = typer.Option(60, "--lines", min=8, help="At most this many lines of summary."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
):
    """Read predictions back (TestSuite.run_from_file) into scored examples, metrics and INV fail rates, judged as run judges them.

    Example: bias-suite checklist import exp preds.txt --out results/imported

    A CheckList user's own suite: bias-suite checklist import raw.txt preds.txt --suite suite.json --out results/mine
    """
    from ..interop.checklist import import_checklist
    from ..interop.exchange import import_raw_file, load_testsuite
    from ..io.results import prepare_run_folder, write_results
    from ..families import write_jsonl, write_scored

    names = comma_list(classes) if classes else None
    try:
        if export_dir.is_dir():
            if suite is not None or group:
                raise BiasSuiteError(f"{export_dir} is an export folder, which holds its own suite: --suite and --group "
                                     "are for a CheckList raw file")
            res = import_checklist(export_dir, predictions, class_names=names, file_format=file_format,
                                   ignore_header=ignore_header, metrics=metrics, max_tuples=max_tuples, seed=seed)
        else:
            if suite is None:
                raise BiasSuiteError(f"{export_dir} is a file: a CheckList raw file needs the TestSuite that wrote it "
                                     "(--suite FILE)")
            if not export_dir.exists():
                raise BiasSuiteError(f"{export_dir}: no such file or folder")
            groups = name_lists(group, "--group", "GROUP=TERM,TERM")
            ts = load_testsuite(suite, allow_dill=allow_dill)
            res = import_raw_file(export_dir, predictions, ts, class_names=names, file_format=file_format,
                                  ignore_header=ignore_header, groups=groups, attribute=attribute, metrics=metrics,
                                  max_tuples=max_tuples, seed=seed)
        results, data = _judged(res, metrics=metrics, max_tuples=max_tuples, seed=seed, bootstrap=bootstrap,
                          confidence=confidence)
        folder = prepare_run_folder(out)  # ".." resolved
        if hasattr(res.scored, "to_frame"):
            files = list(write_scored(res.scored, folder).values())
        else:
            files = [write_jsonl(res.scored, folder / "scored.jsonl")]
        if len(res.failures):
            files.append(write_jsonl(res.failures, folder / "inv_failures.jsonl"))
        source = {"checklist_export": str(export_dir)} if export_dir.is_dir() else {"raw_file": str(export_dir),
                                                                                    "suite": str(suite)}
        intervals = dict(results.attrs.get("intervals") or {}, bootstrap=bootstrap)
        write_results(results, folder, metadata={**source, "predictions": str(predictions), "bootstrap": bootstrap,
                                                 "confidence": confidence, "intervals": intervals},
                      files=files)  # run.json last, listing every file
    except BiasSuiteError as e:
        exit_with(e)
    from ..report.runs import print_results
    from .output import console

    title = f"CheckList import: {len(results)} result rows, {len(res.failures)} failing INV cases"
    print_results([(results, data, "")], title=title, files=[f"{out}/results.csv", f"bias-suite report {out}"],
                  intervals=intervals, console=console, quiet=quiet, lines=lines)


def _judged(res, *, metrics, max_tuples, seed, bootstrap, confidence):
    """The import's metric values, intervals, tests and INV rows judged in one
    verdict stage, as ``run`` judges its own (the INV rows as they came from
    CheckList; group orders those of the INV tests)."""
    from ..evaluation import evaluate

    inv = res.results[res.results["family"] == "invariance"]
    orders = {t.bias_suite["attribute"]: list(t.bias_suite["groups"]) for t in res.suite.tests.values()
              if isinstance(getattr(t, "bias_suite", None), dict) and t.bias_suite.get("attribute")
              and t.bias_suite.get("groups")}
    from ..families import as_scored

    data = as_scored(res.scored)
    present = set(data.frame["attribute"])
    results = evaluate(data, metrics=metrics, max_tuples=max_tuples, seed=seed, bootstrap=bootstrap,
                       confidence=confidence,
                       group_order_override={a: g for a, g in orders.items() if a in present} or None,
                       extra_rows=[inv] if len(inv) else [])
    return results, data
