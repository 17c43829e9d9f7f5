"""Sequence labelling (NER): tokens with BILOU tags per example; span metrics
per entity type by exact span matching, probability metrics per token
position (docs/metrics.md, "Sequence labelling")."""
from __future__ import annotations

from ..base import TaskFamily
from .expansion import SEQUENCE_COLUMNS, check_suite, identity_type, sequence_rows
from .identity import measured_on
from .metric_input import block_scores, metric_input, missing_probabilities
from .model import DEFAULT_NAMES, check_model, load_model, run_meta, score
from .summary import example_scores, summary_stats
from .scored import SequenceData, check_sequence_scored

__all__ = ["FAMILY", "SequenceData", "NOT_APPLICABLE_NOTE"]

NOT_APPLICABLE_NOTE = "not applicable to sequence labelling"

FAMILY = TaskFamily(
    name="sequence_labelling",
    label="NER",
    description="taggers: BILOU tags (and tag probabilities) per token",
    check_suite=check_suite,
    rows=sequence_rows,
    columns=tuple(SEQUENCE_COLUMNS),
    load_model=load_model,
    check_model=check_model,
    score=score,
    default_model="default-ner",
    default_names=DEFAULT_NAMES,
    marker_columns=("tokens",),
    check_scored=check_sequence_scored,
    metric_input=metric_input,
    # FPR and TNR need true negatives, which spans do not have; accuracy is not reported
    score_notes={"FPR": NOT_APPLICABLE_NOTE, "TNR": NOT_APPLICABLE_NOTE, "accuracy": None},
    identity_span=True,  # term_span: the identity-span metrics (identity.py)
    missing_probabilities=missing_probabilities,
    block_scores=block_scores,
    # the bootstrap's closed form: rates from per-sentence span counts, probability sets from token items
    # (each with its sentence's template and term), tuples of aligned positions
    fast_bootstrap=True,
    run_meta=run_meta,
    summary_stats=summary_stats,
    example_scores=example_scores,
    example_score_name="probability at the identity term",
    measured_on=measured_on,
    inv_criteria=("tags",),
    template_class=identity_type,  # a template's rates are those of its identity slot's entity type
    class_word="entity type",
)
