"""The options of a run, as one value: :class:`RunOptions`.

``bias_suite.run(suites, model, out_dir, options, **overrides)`` and the
command line's ``run`` build one and hand it down the pipeline; keyword
overrides replace single fields (``run(..., bootstrap=50)``), and a name that
is no option is an error that suggests the nearest one.

>>> opts = RunOptions(bootstrap=50, metrics=["FNED", "CFGap"])
>>> opts.replace(seed=3).seed
3
"""
from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any

from .exceptions import BiasSuiteError

__all__ = ["RunOptions"]

@dataclass(frozen=True)
class RunOptions:
    """What a run computes and how it predicts (every field has a default).

    What is computed
        metrics : metric names or :class:`~bias_suite.metrics.MetricSpec`
            objects (default: every named metric).
        attributes : only these attributes (default: all of the suites).
        groups : ``{attribute: [group, ...]}``: only these groups of these
            attributes, in this order (``--group ATTR=g1,g2``); an unknown
            name is an error with a did-you-mean suggestion.
        max_tuples : counterfactual tuples per template above which tuples
            are sampled (None: all).
        seed : seed of the tuple sampler, the bootstrap and the INV cases.
        significance : add the Wilcoxon/Friedman rows.
        bernstein : add the Bernstein-bounded disparity rows (classification).
        invariance : add the CheckList INV fail rates over the templates.
        inv_threshold : threshold of the INV rule (``inv_criterion="prob"``;
            sequence labelling: any tag outside the identity changes).
        inv_criterion : "checklist" (CheckList's ``Expect.inv``: a case fails
            when the prediction flips, metric ``INV-FailRate``) or "prob" (a
            class probability moves by more than ``inv_threshold``, metric
            ``INV-ProbShift-FailRate``).
        inv_cases : "all_terms" (every term of every group in one case, as a
            CheckList perturbation) or "per_group" (one seeded term per group).

    How it is judged (docs/verdicts.md)
        bootstrap : template resamples of the cluster bootstrap behind the
            intervals and verdicts (0: no intervals).
        confidence : level of the intervals, tests and verdicts.
        thresholds : ``{metric name or topic: tau}``, the smallest effect that
            counts as material, over the suites' ``materiality`` and the
            registry's defaults.
        multiplicity : "hierarchical" (default: groups and pairs at a
            family-wise error rate, their values at a selective
            false-discovery rate), "holm" (family-wise error rate) or "bh"
            (false-discovery rate) over every claim of the run
            (docs/verdicts.md).
        weighting : "balanced" (each template counts once per group) or
            "pooled" (every example once) in the group view.
        resample_terms : False ("no", default: templates only, so that a
            verdict speaks of the suite's listed terms), "auto" (also a
            group's terms that the model tells apart) or True (every group's
            several terms): whether the bootstrap behind the verdicts
            resamples the identity terms as well as the templates. With
            False, each claim is also judged beyond the listed terms, on a
            two-way bootstrap, in the ``beyond`` columns (docs/statistics.md).

    How the model predicts
        class_map : ``{suite class: model class}`` when they are named differently.
        device : "auto", "cpu", "cuda" or "cuda:N".
        batch_size : texts per forward pass.
        dtype : weights dtype of Hugging Face models (None: float32; "bf16",
            "fp16", "int8", "onnx", ...: docs/scale.md).
        trust_remote_code : allow model code from the model folder or hub.
        cache : the prediction cache: True (default folder), False, a folder
            or a prediction cache object.
        engine : "local", "ray" or an engine object (docs/scale.md).
        progress : show progress bars.

    After the run
        baseline : a run folder (or scored file) of the same examples: when
            the run ends it is compared with it (``result.comparison``,
            written to ``comparison.jsonl``/``.csv`` in the run folder;
            docs/compare.md).
    """

    metrics: Any = None
    attributes: Any = None
    groups: dict | None = None
    max_tuples: int | None = 100
    seed: int = 0
    significance: bool = True
    bernstein: bool = True
    invariance: bool = True
    inv_threshold: float = 0.1
    inv_criterion: str = "checklist"
    inv_cases: str = "all_terms"
    bootstrap: int = 200
    confidence: float = 0.95
    thresholds: dict | None = None
    multiplicity: str = "hierarchical"
    weighting: str = "balanced"
    resample_terms: Any = False
    class_map: dict | None = None
    device: str = "auto"
    batch_size: int = 64
    dtype: str | None = None
    trust_remote_code: bool = False
    cache: Any = True
    engine: Any = "local"
    progress: bool = True
    baseline: Any = None

    @classmethod
    def names(cls) -> list:
        """The option names, in the order of the fields."""
        return [f.name for f in dataclasses.fields(cls)]

    def replace(self, **changes) -> "RunOptions":
        """A copy with ``changes``; an unknown name is a :class:`BiasSuiteError`
        that suggests the nearest option."""
        unknown = [k for k in changes if k not in self.names()]
        if unknown:
            k = unknown[0]
            near = difflib.get_close_matches(k, self.names(), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f"; the options are {self.names()}"
            raise BiasSuiteError(f"{k!r} is not a run option{hint}")
        return dataclasses.replace(self, **changes)

    @classmethod
    def of(cls, options: "RunOptions | None" = None, **overrides) -> "RunOptions":
        """``options`` (default: the defaults) with ``overrides`` applied."""
        if options is not None and not isinstance(options, RunOptions):
            raise BiasSuiteError(f"options must be a RunOptions, got {type(options).__name__}")
        return (options or cls()).replace(**overrides)

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
