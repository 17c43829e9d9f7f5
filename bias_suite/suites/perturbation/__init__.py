"""Counterfactuals from real text: a user's own sentences perturbed by
identity (docs/perturb.md).

- :mod:`.words`: the closed word lists (pronouns, person nouns, ...);
- :mod:`.lexicon`: an attribute's identity terms and the one regular
  expression that finds them;
- :mod:`.pronouns`: which "her" is an object, which a possessive;
- :mod:`.first_names`: common first names (a person's name or a surname);
- :mod:`.people`: whose words they are: titles, surnames, ranks, other
  people, an ambiguous "her" (the skips of issue 51);
- :mod:`.engine`: one sentence's mentions and variants;
- :mod:`.ner`: the same on tagged tokens (CoNLL);
- :mod:`.trail`: the log of every sentence, and the user's own words
  (``--keep``, ``--pairs``, ``--review``);
- :mod:`.table`: tables in, examples out, and the report.
"""
from .table import (AttributeReport, PerturbReport, perturb, perturb_texts, perturb_with_report, read_sentences,
                    write_examples)

__all__ = ["perturb", "perturb_with_report", "perturb_texts", "read_sentences", "write_examples", "AttributeReport",
           "PerturbReport"]
