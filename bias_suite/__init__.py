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
__all__ = ["compare", "Comparison", "__version__"]


def __getattr__(name):
    """``bias_suite.compare(baseline, candidate, ...)`` and ``Comparison``
    (:mod:`bias_suite.comparison`), imported on first use. The package root
    is the bottom layer; this facade names the pipeline's function by its
    module path at call time, so that ``import bias_suite`` stays light and
    the root imports nothing above it."""
    if name in ("compare", "Comparison"):
        import importlib

        return getattr(importlib.import_module(f"{__name__}.comparison"), name)
    raise AttributeError(f"module 'bias_suite' has no attribute {name!r}")
