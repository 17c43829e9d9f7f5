"""``bias-suite evaluate``: metrics and verdicts on a user's own scored predictions."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..exceptions import BiasSuiteError
from .options import GROUP_HELP, name_lists, parse_thresholds, group_selection, terms_option
from .output import exit_with, console

commands = typer.Typer()


@commands.command(short_help="Metrics and verdicts on your own scored predictions.")
def evaluate(
    scored: Path = typer.Argument(..., help="Scored examples (.jsonl or .parquet)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder for results.jsonl/results.csv."),
    attribute: Optional[List[str]] = typer.Option(None, "--attribute", "-a"),
    group: Optional[List[str]] = typer.Option(None, "--group", "-g", metavar="ATTRIBUTE=GROUP,GROUP", help=GROUP_HELP),
    metrics: Optional[str] = typer.Option(None, help="Comma-separated metric names (default: all)."),
    max_tuples: int = typer.Option(100, help="Counterfactual tuples per template before sampling."),
    seed: int = typer.Option(0),
    group_order: Optional[List[str]] = typer.Option(None, help="ATTRIBUTE=g1,g2 (first minus second), repeatable."),
    significance: bool = typer.Option(True, help="Add Wilcoxon/Friedman rows."),
    threshold: Optional[List[str]] = typer.Option(None, "--threshold", metavar="NAME=TAU",
                                                  help="Smallest effect that counts as material, for a metric or a topic (e.g. FNED=0.1, errors=0.03; repeatable; defaults: bias-suite metrics)."),
    bootstrap: int = typer.Option(200, "--bootstrap", help="B template resamples for cluster-bootstrap intervals and verdicts (0: no intervals; the metric values are then judged inconclusive)."),
    confidence: float = typer.Option(0.95, help="Confidence of the intervals, tests and verdicts."),
    bernstein: bool = typer.Option(True, "--bernstein/--no-bernstein", help="Add Bernstein-bounded disparity rows (classification)."),
    multiplicity: str = typer.Option("hierarchical", "--multiplicity", help="Error control over every claim (material, small) of the run: hierarchical (groups and pairs claimed at a family-wise error rate, their values at a selective false-discovery rate; docs/verdicts.md), holm (family-wise error rate over every value) or bh (Benjamini-Hochberg false-discovery rate)."),
    weighting: str = typer.Option("balanced", "--weighting", help="Group view: balanced (every template counts once for every group) or pooled (every example once, the published definitions)."),
    resample_terms: str = typer.Option("no", "--resample-terms", metavar="no|auto|yes", help="Bootstrap behind the verdicts: no (templates only: a verdict speaks of the suite's listed terms, and each claim is judged beyond them too, in the beyond columns), auto (also the terms of a group the model tells apart: an F test of its scores) or yes (every group with several terms in a template)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary, one line."),
    detail: bool = typer.Option(False, "--detail", help="Also print the full per-group tables of every attribute."),
    lines: int = typer.Option(60, "--lines", min=8, help="At most this many lines of summary."),
):
    """Compute every applicable metric on a scored-examples file (bring your own predictions).

    Example: bias-suite evaluate results/gender/scored.jsonl --out results/again --metrics FNED,CFGap
    """
    from ..evaluation import evaluate as evaluate_
    from ..families import read_scored
    from ..io.results import write_results

    resample_terms = terms_option(resample_terms)  # a bad value fails before any work

    try:
        data = read_scored(scored)
        groups = group_selection(group)
        if groups:  # the summary's counts and example pairs from the selected groups too
            import numpy as np

            from ..suites.selection import group_mask

            data = data.take(np.flatnonzero(group_mask(data.frame, groups, where=str(scored))))
        res = evaluate_(data, metrics=metrics, attributes=attribute, groups=groups, max_tuples=max_tuples, seed=seed, group_order_override=name_lists(group_order),
                        bootstrap=bootstrap, confidence=confidence, thresholds=parse_thresholds(threshold),
                        significance=None if significance else False, bernstein=None if bernstein else False,
                        multiplicity=multiplicity, weighting=weighting, resample_terms=resample_terms)
        inside = [scored] if scored.resolve().parent == Path(out).resolve() else []  # an input in OUT stays, listed
        write_results(res, out, metadata={"scored": str(scored), "max_tuples": max_tuples, "seed": seed, "bootstrap": bootstrap, "confidence": confidence,
                                          "weighting": weighting, "resample_terms": resample_terms,
                                          "intervals": dict(res.attrs.get("intervals") or {}, bootstrap=bootstrap),
                                          "thresholds": parse_thresholds(threshold) or {}},
                      files=inside)
    except BiasSuiteError as e:
        exit_with(e)
    from ..report.runs import print_results

    print_results([(res, data, "")], title=f"{scored}: {len(data)} examples, {len(res)} result rows",
                  files=[f"{out}/results.csv", f"bias-suite report {out}"], intervals=_intervals_of(out),
                  console=console, quiet=quiet, detail=detail, attributes=attribute, lines=lines)


def _intervals_of(folder: Path):
    """The ``intervals`` entry of a results folder's run.json (None if absent)."""
    import json

    try:
        return json.loads((folder / "run.json").read_text(encoding="utf-8")).get("intervals")
    except (OSError, ValueError, AttributeError):
        return None
