"""The named metrics: registered parametrizations (phi, d, N, beta) of the
generalized metrics, one data entry each (docs/metrics.md).

A new metric is one more :class:`MetricSpec`::

    from bias_suite.metrics import MetricSpec, evaluate
    fnr_range = MetricSpec("FNR-Range", generalized="MCM", view="group",
                           score="FNR", comparison="range")
    evaluate(scored, metrics=["FNED", fnr_range])
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..exceptions import MetricError, did_you_mean
from .comparisons import get_comparison
from .generalized import GENERALIZED
from .scores import get_score

BORKAN = "Borkan et al. 2019, Nuanced Metrics for Measuring Unintended Bias with Real Data for Text Classification"
DIXON = "Dixon et al. 2018, Measuring and Mitigating Unintended Bias in Text Classification"
HUANG = "Huang et al. 2020, Reducing Sentiment Bias in Language Models via Counterfactual Evaluation"
GARG = "Garg et al. 2019, Counterfactual Fairness in Text Classification through Robustness"
PRABHAKARAN = "Prabhakaran et al. 2019, Perturbation Sensitivity Analysis to Detect Unintended Model Biases"
DEARTEAGA = "De-Arteaga et al. 2019, Bias in Bios"
BEUTEL = "Beutel et al. 2019, Putting Fairness Principles into Practice"
GAUT = "Gaut et al. 2020, Towards Understanding Gender Bias in Relation Extraction"
STANOVSKY = "Stanovsky et al. 2019, Evaluating Gender Bias in Machine Translation"
ZHAO = "Zhao et al. 2018, Gender Bias in Coreference Resolution"
ZHIQIANG = "Webster et al. 2018 / Zhao et al. 2018 (accuracy and F1 gaps between two groups)"
BHAUMIK = "Bhaskaran and Bhallamudi 2019; Stanovsky et al. 2019 (F1 ratio)"
POPOVIC = "Popovic et al. 2020, Joint Multiclass Debiasing of Word Embeddings"
MEHRABI = "Mehrabi et al. 2020, Man is to Person as Woman is to Location (NER)"
PARK = "Park et al. 2018, Reducing Gender Bias in Abusive Language Detection"
CZARNOWSKA = "Czarnowska et al. 2021, Quantifying Social Biases in NLP"


@dataclass(frozen=True)
class MetricSpec:
    """One metric as data.

    Parameters
    ----------
    name : canonical name (docs/metrics.md).
    generalized : "PCM", "BCM", "VBCM" or "MCM".
    view : "group" or "counterfactual".
    score : phi, a registered score name (see ``bias_suite.metrics.scores``) or a score object.
    comparison : d, a registered comparison name or a callable ``d(x, y)``.
    normalizer : N: "1", "groups" (|T|), "pairs" (C(|T|,2)), a number or a callable of |T|.
    background : beta for BCM/VBCM: "all" (S) or "rest" (S minus S^t).
    per_template : counterfactual only: compare the template sets S_j^t and
        average over templates (AvgIF, AvgScoreDiff) instead of tuples.
    true_class : a TC variant (uses only examples/tuples/templates of gold class c).
    two_groups : defined only for attributes with exactly two groups.
    per_class : one value per class (False: class "all").
    based_on : "prediction" or "probability".
    signed : whether values carry a direction.
    source : literature source.
    """

    name: str
    generalized: str
    view: str = "group"
    score: object = "FNR"
    comparison: object = "abs"
    normalizer: object = "1"
    background: str | None = None
    per_template: bool = False
    true_class: bool = False
    two_groups: bool = False
    per_class: bool | None = None
    based_on: str | None = None
    signed: bool | None = None
    source: str = ""
    description: str = ""

    def __post_init__(self):
        if self.generalized not in GENERALIZED:
            raise MetricError(f"{self.name}: generalized must be one of {GENERALIZED}, got {self.generalized!r}")
        if self.view not in ("group", "counterfactual"):
            raise MetricError(f"{self.name}: view must be 'group' or 'counterfactual', got {self.view!r}")
        sc = get_score(self.score)
        comp = get_comparison(self.comparison)
        if self.generalized in ("BCM", "VBCM") and self.background is None and not sc.own_background:
            raise MetricError(f"{self.name}: {self.generalized} needs a background ('all' or 'rest')")
        if self.per_class is None:
            object.__setattr__(self, "per_class", bool(sc.per_class))
        if self.based_on is None:
            object.__setattr__(self, "based_on", "probability" if sc.needs_probabilities else "prediction")
        if self.signed is None:
            object.__setattr__(self, "signed", bool(comp.signed))

    @property
    def phi(self):
        return get_score(self.score)

    @property
    def d(self):
        return get_comparison(self.comparison)

    @property
    def label_free(self) -> bool:
        return not self.phi.label_based

    # what counts as material (bias_suite.metrics.materiality, docs/verdicts.md)
    @property
    def materiality(self):
        from .materiality import materiality

        return materiality(self)

    @property
    def baseline(self) -> str:
        """The no-bias value b: "0", "1" or "overall_auc"."""
        return self.materiality.baseline

    @property
    def threshold(self) -> float:
        """The default smallest meaningful effect tau."""
        return self.materiality.threshold

    @property
    def topic(self) -> str:
        return self.materiality.topic

    @property
    def meaning(self) -> str:
        return self.materiality.meaning

    @property
    def direction(self) -> str:
        return self.materiality.direction


def _g(name, gen, score, comp, N="1", bg=None, src="", desc="", **kw):
    return MetricSpec(name, gen, "group", score, comp, N, bg, source=src, description=desc, **kw)


def _cf(name, gen, score, comp, N="pairs", src="", desc="", **kw):
    return MetricSpec(name, gen, "counterfactual", score, comp, N, None, source=src, description=desc, **kw)


#: the published metrics (docs/metrics.md, "Named metrics"), each with its source
PUBLISHED_METRICS: list[MetricSpec] = [
    # ---- group view
    _g("FPED", "BCM", "FPR", "abs", "1", "all", DIXON, "False positive equality difference: sum_t |FPR(S) - FPR(S^t)|"),
    _g("FNED", "BCM", "FNR", "abs", "1", "all", DIXON, "False negative equality difference: sum_t |FNR(S) - FNR(S^t)|"),
    _g("FPED*", "BCM", "FPR", "abs", "groups", "all", CZARNOWSKA, "FPED normalised by the number of groups"),
    _g("FNED*", "BCM", "FNR", "abs", "groups", "all", CZARNOWSKA, "FNED normalised by the number of groups"),
    _g("AvgGF", "BCM", "prob", "W1", "groups", "all", HUANG, "Average group fairness: mean_t W1(f(S,c), f(S^t,c))"),
    _g("AvgGF-TC", "BCM", "prob_pos", "W1", "groups", "all", CZARNOWSKA, "AvgGF on gold-class-c examples only", true_class=True),
    _g("FPR-Ratio", "VBCM", "FPR", "ratio_to_background", None, "rest", BEUTEL, "FPR(S^t) / FPR(S minus S^t)"),
    _g("FNR-Ratio", "VBCM", "FNR", "ratio_to_background", None, "rest", BEUTEL, "FNR(S^t) / FNR(S minus S^t)"),
    _g("PosAEG", "VBCM", "prob_pos", "AEG", None, "rest", BORKAN, "Positive average equality gap (gold c)"),
    _g("NegAEG", "VBCM", "prob_neg", "AEG", None, "rest", BORKAN, "Negative average equality gap (gold not c)"),
    _g("SubgroupAUC", "VBCM", "subgroup_auc", "value", None, None, BORKAN, "AUC within the group"),
    _g("BPSN", "VBCM", "bpsn_auc", "value", None, "rest", BORKAN, "AUC on background positives + subgroup negatives"),
    _g("BNSP", "VBCM", "bnsp_auc", "value", None, "rest", BORKAN, "AUC on background negatives + subgroup positives"),
    _g("DisparityScore", "PCM", "F1", "abs", "groups", None, GAUT, "sum over pairs |F1 a - F1 b| / |T|"),
    _g("DisparityScore*", "PCM", "F1", "abs", "pairs", None, CZARNOWSKA, "sum over pairs |F1 a - F1 b| / C(|T|,2)"),
    _g("TPR-Gap", "PCM", "TPR", "abs", "pairs", None, DEARTEAGA, "mean over pairs |TPR a - TPR b|"),
    _g("TNR-Gap", "PCM", "TNR", "abs", "pairs", None, DEARTEAGA, "mean over pairs |TNR a - TNR b|"),
    _g("ParityGap", "PCM", "positive_rate", "abs", "pairs", None, DEARTEAGA, "mean over pairs |positive rate a - b|"),
    _g("AccuracyDiff", "PCM", "accuracy", "diff", "1", None, STANOVSKY, "accuracy(first) - accuracy(second)", two_groups=True),
    _g("TPR-Diff", "PCM", "TPR", "diff", "1", None, DEARTEAGA, "TPR(first) - TPR(second)", two_groups=True),
    _g("F1-Diff", "PCM", "F1", "diff", "1", None, ZHAO, "F1(first) - F1(second)", two_groups=True),
    _g("Recall-Diff", "PCM", "recall", "diff", "1", None, MEHRABI, "recall(first) - recall(second)", two_groups=True),
    _g("F1-Ratio", "PCM", "F1", "ratio", "1", None, GAUT, "F1(first) / F1(second)", two_groups=True),
    # ---- counterfactual view
    _cf("CFGap", "PCM", "prob", "abs", "pairs", GARG, "Counterfactual gap: mean over tuples and pairs |f(a,c) - f(b,c)|"),
    _cf("CFGap-TC", "PCM", "prob_pos", "abs", "pairs", CZARNOWSKA, "CFGap on tuples whose members all have gold c", true_class=True),
    _cf("PertSS", "PCM", "gold_prob", "abs", "pairs", PRABHAKARAN, "Perturbation score sensitivity (gold-class probability)"),
    _cf("PertSD", "MCM", "gold_prob", "std", None, PRABHAKARAN, "Perturbation score deviation (std over the tuple)"),
    _cf("PertSR", "MCM", "gold_prob", "range", None, PRABHAKARAN, "Perturbation score range (max - min over the tuple)"),
    _cf("AvgIF", "PCM", "prob", "W1", "pairs", HUANG, "Average individual fairness: W1 between template sets", per_template=True),
    _cf("AvgIF-TC", "PCM", "prob_pos", "W1", "pairs", CZARNOWSKA, "AvgIF on gold-c examples", per_template=True, true_class=True),
    _cf("AvgScoreDiff", "PCM", "mean_prob", "abs", "pairs", POPOVIC, "mean over pairs |mean f(S_j^a) - mean f(S_j^b)|, per template", per_template=True),
]


def _own(of: str) -> str:
    return f"bias_suite, not a published metric: {of}, counted at the identity term's own span"


#: this project's own metrics: taggers measured at the identity term's own span
#: (docs/metrics.md, "Measured at the identity term"); not reported for classifiers
IDENTITY_SPAN_METRICS: list[MetricSpec] = [
    _g("IdentitySpan-FNED", "BCM", "identity_FNR", "abs", "1", "all", _own(f"FNED ({DIXON})"),
       "FNED of identity spans: sum_t |FNR(S) - FNR(S^t)|, the identity slot's own span only"),
    _g("IdentitySpan-FNR-Ratio", "VBCM", "identity_FNR", "ratio_to_background", None, "rest", _own(f"FNR-Ratio ({BEUTEL})"),
       "FNR of identity spans: FNR(S^t) / FNR(S minus S^t)"),
    _g("IdentitySpan-Recall-Gap", "PCM", "identity_recall", "abs", "pairs", None, _own(f"TPR-Gap ({DEARTEAGA})"),
       "mean over pairs |recall a - recall b| of identity spans"),
    _g("IdentitySpan-Recall-Diff", "PCM", "identity_recall", "diff", "1", None, _own(f"Recall-Diff ({MEHRABI})"),
       "recall(first) - recall(second) of identity spans", two_groups=True),
    _g("IdentitySpan-PosAEG", "VBCM", "identity_prob_pos", "AEG", None, "rest", _own(f"PosAEG ({BORKAN})"),
       "PosAEG of the probability of the identity term's gold type at the term"),
    _cf("IdentitySpan-CF-Recall-Gap", "PCM", "identity_recall", "abs", "pairs", _own(f"span recall compared inside counterfactual tuples as CFGap compares probabilities ({GARG})"),
        "mean over tuples and pairs |hit(a) - hit(b)|, hit = the identity span is found"),
    _cf("IdentitySpan-CFGap", "PCM", "identity_prob", "abs", "pairs", _own(f"CFGap ({GARG})"),
        "mean over tuples and pairs |f(a,c) - f(b,c)| at the identity term"),
]

#: every named metric: the published ones and this project's own
NAMED_METRICS: list[MetricSpec] = PUBLISHED_METRICS + IDENTITY_SPAN_METRICS

REGISTRY: dict[str, MetricSpec] = {m.name: m for m in NAMED_METRICS}


def explain(name) -> str:
    """A metric in plain words: what it measures, which way is worse, its
    no-bias value and threshold (``bias-suite metrics --explain NAME``)."""
    m = get_metric(name)
    b = {"overall_auc": "the overall AUC of the class"}.get(m.baseline, m.baseline)
    lines = [f"{m.name} ({m.topic}, {m.view} view)", f"  meaning:   {m.meaning}"]
    if m.direction:
        lines.append(f"  direction: {m.direction}")
    worse = m.materiality.worse
    if worse:
        lines.append(f"  worse:     {worse} than the no-bias value, for the group"
                     + (" (a pair: for its first group)" if m.generalized == "PCM" else ""))
    lines += [f"  no bias:   {b}", f"  material:  |value − b| ≥ {m.threshold:g}"
              + (" (ratios: outside [0.8, 1.25])" if m.baseline == "1" else ""),
              f"  built as:  {m.generalized}, φ = {m.phi.formula or m.phi.name}, d = {m.d.name}",
              f"  source:    {m.source}"]
    return "\n".join(lines)


def get_metric(m) -> MetricSpec:
    """A registered metric by canonical name (case-insensitive), or a spec as is."""
    if isinstance(m, MetricSpec):
        return m
    if isinstance(m, str):
        if m in REGISTRY:
            return REGISTRY[m]
        low = {k.lower(): v for k, v in REGISTRY.items()}
        if m.lower() in low:
            return low[m.lower()]
        raise MetricError(f"unknown metric {m!r}{did_you_mean(m, REGISTRY)} (known: {', '.join(REGISTRY)})")
    raise MetricError(f"metric must be a name or a MetricSpec, got {m!r}")


def register(spec: MetricSpec, *, overwrite: bool = False) -> MetricSpec:
    """Add a metric to the registry: from then on its name works everywhere
    (``--metrics``, thresholds) and it is part of the default set that
    ``evaluate``, ``run``, the terminal summary and the report use."""
    if spec.name in REGISTRY and not overwrite:
        raise MetricError(f"metric {spec.name!r} is already registered (pass overwrite=True)")
    REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a metric added with :func:`register` (the named metrics stay)."""
    if any(m.name == name for m in NAMED_METRICS):
        raise MetricError(f"{name!r} is one of the named metrics; they cannot be removed")
    REGISTRY.pop(name, None)


def _fmt_n(N):
    return {"1": "1", "groups": "|T|", "pairs": "C(|T|,2)", None: "-"}.get(N, str(N))


def catalog_frame() -> pd.DataFrame:
    """The registry as a table (what ``bias-suite metrics`` prints)."""
    rows = []
    for m in REGISTRY.values():
        sc, d = m.phi, m.d
        rows.append(
            {
                "name": m.name,
                "generalized": m.generalized,
                "view": m.view,
                "phi": sc.formula or sc.name,
                "d": d.name,
                "N": _fmt_n(m.normalizer) if m.generalized in ("PCM", "BCM") else "-",
                "beta": {"all": "S", "rest": "S\\S^t"}.get(m.background, "-"),
                "based_on": m.based_on,
                "signed": m.signed,
                "classes": "per class" if m.per_class else "all",
                "TC": m.true_class,
                "two_groups": m.two_groups,
                "source": m.source,
                "b": {"overall_auc": "overall AUC"}.get(m.baseline, m.baseline),
                "tau": m.threshold,
                "topic": m.topic,
            }
        )
    return pd.DataFrame(rows)
