"""bias_suite: behavioural bias testing for NLP models.

Layers, bottom-up (each usable alone; docs/architecture.md): io (atomic
files, tidy results) -> suites (YAML -> validated objects -> examples) ->
models -> predict -> families (classification, sequence labelling: each
family's suite checks, models, scored data and metric input) -> metrics
(generalized builders + registry of named metrics) -> stats (bootstrap,
significance, Bernstein, verdicts) -> evaluation and run (the pipeline) ->
report (terminal, HTML, figures) -> cli.

Heavy libraries (torch, transformers) are imported lazily, never here.
"""
__version__ = "0.1.0"
