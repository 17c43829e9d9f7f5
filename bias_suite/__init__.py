"""bias_suite: behavioural bias testing for NLP models.

Stages (each usable alone): suites (YAML -> validated objects) -> expansion
(examples) -> models (texts -> probabilities) -> scoring (scored examples) ->
metrics (generalized builders + registry of named metrics) -> stats
(significance, Bernstein, bootstrap, verdicts) -> evaluation and run (the
pipeline: judged results) -> report (terminal, tidy files, HTML) -> cli.

Heavy libraries (torch, transformers) are imported lazily, never here.
"""
__version__ = "0.1.0"
