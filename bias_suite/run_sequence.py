"""Deprecated path: sequence labelling runs through :func:`bias_suite.run.run`
like every task family; the tagger steps are in :mod:`bias_suite.families.sequence`."""
from __future__ import annotations

from .families.sequence.model import DEFAULT_NAMES as DEFAULT_TAGGER_NAMES  # noqa: F401
from .families.sequence.model import load_model as load_tagger  # noqa: F401
from .families.sequence.model import score as tag_examples  # noqa: F401
from .run import run as run_sequence  # noqa: F401

NER_SUBDIR = "ner"
