"""The options model: every option of ``evaluate``, ``run``, ``compare`` and
the command line, with its name, its one default and its help, written once.

- :class:`EvaluationOptions`: what is computed and how it is judged
  (``bias_suite.evaluate``, ``bias_suite.compare``, the ``evaluate``,
  ``run`` and ``compare`` commands);
- :class:`PredictionOptions`: how a model predicts (``run``);
- :class:`RunOptions`: both, and what only a run does (the CheckList INV
  rows, a baseline to compare with at the end).

``bias_suite.run(suites, model, out_dir, options, **overrides)``,
``bias_suite.evaluate(scored, options, **overrides)`` and
``bias_suite.compare(..., options=...)`` take one; keyword overrides
replace single fields (``run(..., bootstrap=50)``), and a name that is no
option is an error that suggests the nearest one. The command line's flags
read their default and help from the fields' metadata
(:func:`bias_suite.cli.options.option`), so they cannot drift apart.

``None`` means one thing per option, everywhere: ``max_tuples=None`` all
tuples, ``metrics=None`` every named metric, ``thresholds=None`` the
registry's defaults (and the suites'), ``significance=None`` and
``bernstein=None`` with every metric only. "The runs' value" is
:data:`INHERIT`, the default of ``compare``'s evaluation options: the value
the compared runs recorded (``run.json``), else the default here.

>>> opts = RunOptions(bootstrap=50, metrics=["FNED", "CFGap"])
>>> opts.replace(seed=3).seed
3
>>> EvaluationOptions().bootstrap == RunOptions().bootstrap
True
"""
from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any

from .exceptions import BiasSuiteError
from .stats.defaults import DEFAULT_B, DEFAULT_CONFIDENCE, DEFAULT_MULTIPLICITY

__all__ = ["EvaluationOptions", "PredictionOptions", "RunOptions", "INHERIT", "recorded_options", "DEFAULT_B"]


class _Inherit:
    """The value the compared runs recorded (their ``run.json``), else the
    option's default (:data:`INHERIT`)."""

    _one = None

    def __new__(cls):
        if cls._one is None:
            cls._one = super().__new__(cls)
        return cls._one

    def __repr__(self) -> str:
        return "INHERIT"

    def __reduce__(self):
        return (_Inherit, ())


#: "the runs' value": ``compare``'s default for the evaluation options
INHERIT = _Inherit()


def _option(default, doc: str, **cli) -> Any:
    """A field with its default, its help ``doc`` (the docs and ``--help``) and how
    the command line shows it (``cli``: ``flags``, ``help`` where the
    command line's words differ, ``metavar``, ``panel``, ``show``: the
    default as the command line writes it)."""
    return field(default=default, metadata={"help": doc, "cli": cli})


class _Options:
    """What the three options classes share: names, replace, of, help."""

    _what = "option"

    @classmethod
    def names(cls) -> list:
        """The option names, in the order of the fields."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def field_of(cls, name: str) -> dataclasses.Field:
        """The field of option ``name`` (its default and metadata)."""
        for f in dataclasses.fields(cls):
            if f.name == name:
                return f
        raise cls.not_an_option(name)

    @classmethod
    def help_of(cls, name: str) -> str:
        """The help text of option ``name``."""
        return cls.field_of(name).metadata["help"]

    @classmethod
    def not_an_option(cls, name: str, others=()) -> BiasSuiteError:
        """The error for a keyword ``name`` that is no option (nor one of
        ``others``): it suggests the nearest name."""
        known = cls.names() + list(others)
        near = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else f"; the options are {known}"
        return BiasSuiteError(f"{name!r} is not {'an' if cls._what[0] in 'aeiou' else 'a'} {cls._what}{hint}")

    def replace(self, **changes):
        """A copy with ``changes``; an unknown name is a :class:`BiasSuiteError`
        that suggests the nearest option."""
        for k in changes:
            if k not in self.names():
                raise self.not_an_option(k)
        return dataclasses.replace(self, **changes)

    @classmethod
    def of(cls, options=None, **overrides):
        """``options`` (default: the defaults) with ``overrides`` applied;
        ``options`` may also be another options object, whose fields that
        this class has are taken."""
        if options is None:
            return cls().replace(**overrides)
        if type(options) is cls:
            return options.replace(**overrides)
        if isinstance(options, _Options):
            mine = set(cls.names())
            return cls(**{k: v for k, v in options.as_dict().items() if k in mine}).replace(**overrides)
        raise BiasSuiteError(f"options must be a {cls.__name__} (or another options object of bias_suite.options), "
                             f"got {type(options).__name__}")

    def as_dict(self) -> dict:
        """``{name: value}`` of every option (values as they are, not copied)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class EvaluationOptions(_Options):
    """What is computed and how it is judged: the options of
    ``bias_suite.evaluate`` (and of a run, and of a comparison, whose
    defaults are the compared runs' values: :data:`INHERIT`)."""

    _what = "evaluation option"

    metrics: Any = _option(
        None, "Metric names or MetricSpec objects (None: every named metric).",
        flags=("--metrics",), help="Comma-separated metric names (default: all).")
    attributes: Any = _option(
        None, "Only these attributes (None: all, in order of first appearance).",
        flags=("--attribute", "-a"), help="Only this attribute (repeatable; default: all).")
    groups: dict | None = _option(
        None, "{attribute: [group, ...]}: only these groups of these attributes, in this order (first minus "
              "second in two-group metrics); an unknown name is an error with a did-you-mean suggestion "
              "(None: every group).",
        flags=("--group", "-g"), metavar="ATTRIBUTE=GROUP,GROUP",
        help="Only these groups of an attribute, in this order (first minus second in two-group metrics), "
             "e.g. gender=female,male; repeatable, one attribute each. The suite files stay as they are.")
    max_tuples: int | None = _option(
        100, "Counterfactual tuples per template above which tuples are sampled (None: all tuples).",
        help="Counterfactual tuples per template before sampling.")
    seed: int = _option(
        0, "Seed of the tuple sampler, the bootstrap (and in a run the INV cases).",
        help="Seed of the tuple sampler and the bootstrap.")
    significance: bool | None = _option(
        None, "Add the Wilcoxon/Friedman rows (None: with every metric, metrics=None, only).",
        flags=("--significance/--no-significance",),
        help="Add Wilcoxon/Friedman rows (default: with every metric only).")
    bernstein: bool | None = _option(
        None, "Add the Bernstein-bounded disparity rows, classification (None: with every metric only).",
        flags=("--bernstein/--no-bernstein",),
        help="Add Bernstein-bounded disparity rows, classification (default: with every metric only).")
    bootstrap: int = _option(
        DEFAULT_B, "B template resamples of the cluster bootstrap behind the intervals and verdicts (0: no "
                   "intervals; the metric values are then judged inconclusive).",
        help="B template resamples for cluster-bootstrap intervals and verdicts (0: no intervals; the metric "
             "values are then judged inconclusive).")
    confidence: float = _option(DEFAULT_CONFIDENCE, "Confidence of the intervals, tests and verdicts.")
    thresholds: dict | None = _option(
        None, "{metric name or topic: tau}: the smallest effect that counts as material, over the suites' "
              "materiality and the registry's defaults (None: those).",
        flags=("--threshold",), metavar="NAME=TAU",
        help="Smallest effect that counts as material, for a metric or a topic (e.g. FNED=0.1, errors=0.03; "
             "repeatable; defaults: bias-suite metrics).")
    multiplicity: str = _option(
        DEFAULT_MULTIPLICITY,
        "Error control over every claim (material, small) judged together: hierarchical (groups and pairs "
        "claimed at a family-wise error rate, their values at a selective false-discovery rate; "
        "docs/verdicts.md), holm (family-wise error rate over every value) or bh (Benjamini-Hochberg "
        "false-discovery rate).")
    weighting: str = _option(
        "balanced", "Group view: balanced (every template counts once for every group) or pooled (every "
                    "example once, the published definitions).")
    resample_terms: Any = _option(
        False, "Bootstrap behind the verdicts: no/False (templates only: a verdict speaks of the suite's "
               "listed terms, and each claim is judged beyond them too, in the beyond columns), auto (also the "
               "terms of a group the model tells apart: an F test of its scores) or yes/True (every group with "
               "several terms in a template).",
        metavar="no|auto|yes", show=lambda v: {False: "no", True: "yes"}.get(v, v),
        help="Bootstrap behind the verdicts: no (templates only: a verdict speaks of the suite's listed terms, and "
             "each claim is judged beyond them too, in the beyond columns), auto (also the terms of a group the "
             "model tells apart: an F test of its scores) or yes (every group with several terms in a template).")


@dataclass(frozen=True)
class PredictionOptions(_Options):
    """How the model predicts (``bias_suite.run``, ``bias-suite run``)."""

    _what = "prediction option"

    class_map: dict | None = _option(
        None, "{suite class: model class} when they are named differently.",
        flags=("--class-map",), help="SUITE_CLASS=MODEL_CLASS, repeatable.")
    device: str = _option("auto", "auto, cpu, cuda or cuda:N.")
    batch_size: int = _option(64, "Texts per forward pass.")
    dtype: str | None = _option(
        None, "Weights dtype for Hugging Face models and taggers: float32 (default), bf16 (GPUs, and CPUs with "
              "native bf16 such as AMX), fp16 (GPUs), int8 (dynamic int8 quantization on the CPU), onnx (ONNX "
              "Runtime on the CPU, float32: the same results, faster), onnx-int8 (ONNX Runtime with int8 "
              "weights; predictions near a decision boundary are recomputed in float32) or onnx-int8-unchecked "
              "(int8 alone). bf16, fp16 and the int8 ones are faster, but probabilities move; see docs/scale.md.")
    trust_remote_code: bool = _option(
        False, "Allow model code from the model folder/hub (off by default).")
    cache: Any = _option(
        True, "The prediction cache: True (the default folder), False, a folder or a prediction cache object; "
              "it reuses and stores predictions (resumes interrupted runs).",
        flags=("--cache/--no-cache",),
        help="Reuse and store predictions in the prediction cache (resumes interrupted runs).")
    engine: Any = _option(
        "local", "Where predictions run: local, ray (Ray Data actor pool; needs ray[data]) or an engine object "
                 "(docs/scale.md).",
        help="Where predictions run: local, or ray (Ray Data actor pool; needs ray[data]).")
    progress: bool = _option(True, "Show progress bars (the command line: unless --quiet).")


@dataclass(frozen=True)
class RunOptions(PredictionOptions, EvaluationOptions):
    """What a run computes, how it predicts and what it does after (every
    field has a default): the fields of :class:`EvaluationOptions` and
    :class:`PredictionOptions`, and the CheckList INV rows and the
    baseline.

    A run adds the Wilcoxon/Friedman and Bernstein rows whatever the metrics
    (``significance=True``, ``bernstein=True``), where ``evaluate`` adds them
    with every metric only (None)."""

    _what = "run option"

    significance: bool | None = _option(
        True, "Add the Wilcoxon/Friedman rows (True in a run: whatever the metrics; None: with every metric only).",
        flags=("--significance/--no-significance",), help="Add Wilcoxon/Friedman rows.")
    bernstein: bool | None = _option(
        True, "Add the Bernstein-bounded disparity rows, classification (True in a run: whatever the metrics; "
              "None: with every metric only).",
        flags=("--bernstein/--no-bernstein",), help="Add Bernstein-bounded disparity rows.")
    invariance: bool = _option(
        True, "Add the CheckList INV fail rates over the counterfactual templates.",
        flags=("--invariance/--no-invariance",))
    inv_threshold: float = _option(
        0.1, "Threshold of the INV rule (classification, inv_criterion='prob'; sequence labelling: any tag "
             "outside the identity changes).",
        help="Threshold of the INV rule (classification; NER: any tag outside the identity changes).")
    inv_criterion: str = _option(
        "checklist", "INV rule (classification): checklist = CheckList's Expect.inv, a case fails only when the "
                     "prediction flips (INV-FailRate); prob = fails when any class probability moves by more than "
                     "inv_threshold (INV-ProbShift-FailRate).",
        help="INV rule (classification): checklist = CheckList's Expect.inv, a case fails only when the prediction "
             "flips (INV-FailRate); prob = fails when any class probability moves by more than --inv-threshold "
             "(INV-ProbShift-FailRate).")
    inv_cases: str = _option(
        "all_terms", "INV test cases: all_terms = every term of every group per template, as a CheckList "
                     "perturbation; per_group = one seeded term per group.")
    sample_terms: int | None = _option(
        None, "Of every group with more than N terms of a kind, a sample of N drawn with the seed, the same in "
              "every template (template suites only); the verdicts then speak of the sampled terms. None: every "
              "term.",
        flags=("--sample-terms",), metavar="N",
        help="Of every group with more than N terms of a kind, a sample of N drawn with --seed, the same in every "
             "template (template suites); the verdicts then speak of the sampled terms (make demo: 8).")
    baseline: Any = _option(
        None, "A run folder (or scored file) of the same examples: compare with it when the run ends "
              "(result.comparison, comparison.jsonl/.csv in the run folder; docs/compare.md).",
        help="A run folder of the same suites (e.g. the released model's): compare with it when the run ends "
             "(OUT/comparison.jsonl; --fail-on worsened exits 3 when a value worsened).")

    def evaluation(self) -> EvaluationOptions:
        """The evaluation options of this run."""
        return EvaluationOptions.of(self)

    def check(self) -> None:
        """Refuse values that would fail later, before any prediction."""
        from .families import FAMILIES
        from .metrics.engine import check_weighting
        from .stats.verdicts import MULTIPLICITY

        check_weighting(self.weighting)
        from .stats.bootstrap.terms import resample_terms_option

        resample_terms_option(self.resample_terms)
        if self.multiplicity not in MULTIPLICITY:
            raise BiasSuiteError(f"multiplicity must be one of {list(MULTIPLICITY)}, got {self.multiplicity!r}")
        known = list(dict.fromkeys(c for f in FAMILIES.values() for c in f.inv_criteria))
        if self.invariance and self.inv_criterion not in known:
            raise BiasSuiteError(f"unknown INV criterion {self.inv_criterion!r}; expected one of {known}")


def _document(cls) -> None:
    """Append every option, its default and its help to the class's docstring."""
    lines = [cls.__doc__.rstrip(), "", "    Options (name = default: help)"]
    for f in dataclasses.fields(cls):
        lines.append(f"        {f.name} = {f.default!r}: {f.metadata['help']}")
    cls.__doc__ = "\n".join(lines) + "\n"


for _cls in (EvaluationOptions, PredictionOptions, RunOptions):
    _document(_cls)


def recorded_options(meta: dict | None) -> dict:
    """The evaluation options a results folder's ``run.json`` recorded
    (``bias-suite run``, ``bias_suite.run``, ``bias-suite evaluate``,
    ``checklist import``): ``{name: value}`` for those it holds. A run
    without intervals (``bootstrap`` 0) records no resample count."""
    meta = meta if isinstance(meta, dict) else {}
    out = {}
    b = meta.get("bootstrap")
    if isinstance(b, int) and not isinstance(b, bool) and b > 0:
        out["bootstrap"] = b
    if isinstance(meta.get("confidence"), float) and 0 < meta["confidence"] < 1:
        out["confidence"] = meta["confidence"]
    if isinstance(meta.get("seed"), int) and not isinstance(meta.get("seed"), bool):
        out["seed"] = meta["seed"]
    if "max_tuples" in meta:
        out["max_tuples"] = meta["max_tuples"]
    if isinstance(meta.get("weighting"), str):
        out["weighting"] = meta["weighting"]
    if meta.get("resample_terms") is not None:
        out["resample_terms"] = meta["resample_terms"]
    if meta.get("thresholds"):
        out["thresholds"] = dict(meta["thresholds"])
    multiplicity = (meta.get("intervals") or {}).get("multiplicity") if isinstance(meta.get("intervals"), dict) else None
    if isinstance(multiplicity, str):
        out["multiplicity"] = multiplicity
    return out
