"""Counterfactuals from real text: a user's own sentences perturbed by
identity (docs/perturb.md).

- :mod:`.words`: the closed word lists (pronouns, person nouns, ...);
- :mod:`.lexicon`: an attribute's identity terms and the one regular
  expression that finds them;
- :mod:`.pronouns`: which "her" is an object, which a possessive;
- :mod:`.engine`: one sentence's mentions and variants;
- :mod:`.ner`: the same on tagged tokens (CoNLL);
- :mod:`.table`: tables in, examples out, and the report.
"""
from .table import (AttributeReport, PerturbReport, perturb, perturb_texts, perturb_with_report, read_sentences,
                    write_examples)

__all__ = ["perturb", "perturb_with_report", "perturb_texts", "read_sentences", "write_examples", "AttributeReport",
           "PerturbReport"]
