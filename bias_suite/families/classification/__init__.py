"""Text classification: one text per example, class probabilities per text,
metrics one-vs-rest per class (docs/metrics.md)."""
from __future__ import annotations

from ...suites.expansion import EXAMPLE_COLUMNS, text_rows
from ..base import TaskFamily
from .metric_input import block_scores, metric_input
from .model import DEFAULT_NAMES, check_model, load_model, run_meta, score
from .summary import summary_stats
from .scored import ScoredData, check_scored, read_fast, scored_from_arrays
from .suite import check_suite

__all__ = ["FAMILY", "ScoredData", "check_scored", "scored_from_arrays"]

FAMILY = TaskFamily(
    name="classification",
    description="text classifiers: class probabilities per text",
    check_suite=check_suite,
    rows=text_rows,
    columns=tuple(EXAMPLE_COLUMNS),
    load_model=load_model,
    check_model=check_model,
    score=score,
    default_model="default-sentiment",
    default_names=DEFAULT_NAMES,
    marker_columns=("probs",),
    check_scored=check_scored,
    read_fast=read_fast,
    metric_input=metric_input,
    items_are_examples=True,
    block_scores=block_scores,
    fast_bootstrap=True,
    extra_parts=("bernstein",),
    run_meta=run_meta,
    summary_stats=summary_stats,
)
