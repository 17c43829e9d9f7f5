"""bias_suite: behavioural bias testing for NLP models.

    import bias_suite as bs

    result = bs.run(["sentiment_gender"], "default-sentiment", "results/gender")
    result.print()                      # the headline, as `bias-suite run` prints it
    result.results.findings("material")

The names below are the public API (docs/api.md lists each with an
example); everything else is internal and may change. They are loaded
lazily (PEP 562): ``import bias_suite`` imports no library, and a name's
module is imported when the name is first used.

Layers, bottom-up (docs/architecture.md): io -> suites -> models -> predict
-> families -> metrics -> stats -> pipeline (evaluation, run) -> report ->
the public API (api) and the command line (cli).
"""
from __future__ import annotations

import importlib
import sys
import types

__version__ = "0.1.0"

#: public name -> "module:attribute", or "module" for a namespace
_FACE = {
    # run, evaluate, compare
    "run": "bias_suite.api:run",
    "RunOptions": "bias_suite.options:RunOptions",
    "EvaluationOptions": "bias_suite.options:EvaluationOptions",
    "PredictionOptions": "bias_suite.options:PredictionOptions",
    "RunResult": "bias_suite.pipeline:RunResult",
    "evaluate": "bias_suite.api:evaluate",
    "Results": "bias_suite.api:Results",
    "compare": "bias_suite.api:compare",
    "Comparison": "bias_suite.comparison:Comparison",
    "load_results": "bias_suite.api:load_results",
    "write_report": "bias_suite.api:write_report",
    # suites and examples, step by step
    "load_suite": "bias_suite.api:load_suite",
    "Suite": "bias_suite.suites.loader:Suite",
    "expand": "bias_suite.api:expand",
    "read_examples": "bias_suite.suites.tables:read_examples",
    "perturb": "bias_suite.suites.perturbation:perturb",
    "score": "bias_suite.api:score",
    "read_scored": "bias_suite.families:read_scored",
    # models
    "CallablePredictor": "bias_suite.models.base:CallablePredictor",
    "HFClassifier": "bias_suite.models.hf:HFClassifier",
    "HFTokenClassifier": "bias_suite.models.token:HFTokenClassifier",
    "PromptClassifier": "bias_suite.models.prompt:PromptClassifier",
    # tests and errors
    "assert_no_bias": "bias_suite.testing:assert_no_bias",
    "BiasSuiteError": "bias_suite.exceptions:BiasSuiteError",
    # namespaces
    "metrics": "bias_suite.metrics",
    "checklist": "bias_suite.interop.checklist",
    "families": "bias_suite.families",
    "exceptions": "bias_suite.exceptions",
}

__all__ = ["__version__", *_FACE]


def __getattr__(name: str):
    target = _FACE.get(name)
    if target is None:
        raise AttributeError(f"module 'bias_suite' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = importlib.import_module(module)
    if attr:
        value = getattr(value, attr)
    globals()[name] = value  # later look-ups do not come here
    return value


def __dir__():
    return sorted(__all__)


class _Face(types.ModuleType):
    """The package module: a submodule named like a public name (the
    module ``bias_suite.compare`` beside the function ``bs.compare``) does
    not replace the public name when it is imported."""

    def __setattr__(self, name, value):
        if (isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}"
                and ":" in _FACE.get(name, "")):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Face
