"""The named metrics: one record each (:class:`MetricSpec`), holding all
there is to know about the metric: its definition (a parametrization phi,
d, N, beta of a generalized metric), what it means and which side is worse
for a group, its topic and threshold tau, the scale it is judged on, and
where the detailed terminal tables show it (docs/metrics.md). Every layer
reads the record: the engine, the verdicts and the statistics beneath them,
the headline, the report, ``bias-suite metrics``.

A new named metric is one more record here and its line in docs/metrics.md;
a user's metric is one more :class:`MetricSpec`, whose facts left out get
defaults from its definition (:func:`bias_suite.metrics.materiality.defaults`)::

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
from .materiality import Materiality, defaults, judged_on
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
    """One metric as data: its record.

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
    description : one line on how it is built.

    The rest of the record (left out: a default from the definition,
    :func:`bias_suite.metrics.materiality.defaults`):

    topic : the summaries' topic ("errors", "outcomes", "scores", "AUC", "counterfactual").
    meaning : what the value is, in plain words (headline, report, ``explain``).
    direction : how to read it, in plain words ("higher = ...").
    worse : which side of the no-bias value is worse for the group: "higher", "lower" or None (unknown).
    threshold : tau, the smallest effect that is material (ratios: 0.25, the band [0.8, 1.25]).
    shown : where the detailed terminal tables show it: "column" (a per-group column), "footer" (with its
        accumulated value in the column's footer), "line" (a line of the accumulated and counterfactual
        table); default: a column and a line for a group-view BCM or VBCM, else a line.
    order : its place in those tables (ascending; a record without one follows those with one).
    measures : what its signed value measures, for the per-group answer (:mod:`bias_suite.report.groups`):
        (kind, sign), kind "errors", "outcome", "correct" or "auc".
    error_rate : +1 (-1) when it compares an error rate (a correct rate) whose class has no valence.
    consistency : a counterfactual metric whose per-template effect is the difference of the groups' mean
        probability of c (its rows get the templates' ``consistency``).

    The scale it is judged on and its no-bias value follow from phi and d
    (:attr:`scale`, :attr:`baseline`: :func:`bias_suite.metrics.materiality.judged_on`).
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
    # ---- the rest of the record
    topic: str | None = None
    meaning: str | None = None
    direction: str | None = None
    worse: str | None = None
    threshold: float | None = None
    shown: tuple | None = None
    order: float | None = None
    measures: tuple | None = None
    error_rate: int = 0
    consistency: bool = False

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
        if self.shown is None:
            grouped = self.view == "group" and self.generalized in ("BCM", "VBCM")
            object.__setattr__(self, "shown", ("column", "line") if grouped else ("line",))
        given = {"topic": self.topic, "meaning": self.meaning, "direction": self.direction, "worse": self.worse,
                 "threshold": self.threshold}
        if any(v is None for v in given.values()):
            filled = defaults(name=self.name, phi=sc, d=comp, view=self.view, based_on=self.based_on,
                              description=self.description, topic=self.topic)
            for k, v in given.items():
                if v is None:
                    object.__setattr__(self, k, filled[k])

    @property
    def phi(self):
        return get_score(self.score)

    @property
    def d(self):
        return get_comparison(self.comparison)

    @property
    def label_free(self) -> bool:
        return not self.phi.label_based

    @property
    def scale(self) -> str:
        """The scale its verdict is judged on: "ratio", "signed" or "unsigned"
        (:func:`bias_suite.metrics.materiality.judged_on`)."""
        return judged_on(self.phi, self.d)[0]

    @property
    def baseline(self) -> str:
        """The no-bias value b: "0", "1" or "overall_auc"."""
        return judged_on(self.phi, self.d)[1]

    # what counts as material (bias_suite.metrics.materiality, docs/verdicts.md)
    @property
    def materiality(self) -> Materiality:
        return Materiality(self.baseline, self.threshold, self.topic, self.meaning, self.direction, self.worse)


def _g(name, gen, score, comp, N="1", bg=None, src="", desc="", **kw):
    return MetricSpec(name, gen, "group", score, comp, N, bg, source=src, description=desc, **kw)


def _cf(name, gen, score, comp, N="pairs", src="", desc="", **kw):
    return MetricSpec(name, gen, "counterfactual", score, comp, N, None, source=src, description=desc, **kw)


#: the published metrics (docs/metrics.md, "Named metrics"), each with its source
PUBLISHED_METRICS: list[MetricSpec] = [
    # ---- group view
    _g("FPED", "BCM", "FPR", "abs", "1", "all", DIXON, "False positive equality difference: sum_t |FPR(S) - FPR(S^t)|",
       topic="errors", threshold=0.05, worse="higher", shown=("column", "footer"), order=3,
       meaning="sum over groups of |FPR(group) − FPR(all)|",
       direction="higher = false positive rates differ more between groups and the whole",
       measures=("outcome", 1), error_rate=1),
    _g("FNED", "BCM", "FNR", "abs", "1", "all", DIXON, "False negative equality difference: sum_t |FNR(S) - FNR(S^t)|",
       topic="errors", threshold=0.05, worse="higher", shown=("column", "footer"), order=1,
       meaning="sum over groups of |FNR(group) − FNR(all)|",
       direction="higher = false negative rates differ more between groups and the whole",
       measures=("outcome", -1), error_rate=1),
    _g("FPED*", "BCM", "FPR", "abs", "groups", "all", CZARNOWSKA, "FPED normalised by the number of groups",
       topic="errors", threshold=0.05, worse="higher", shown=("line",), order=4,
       meaning="FPED divided by the number of groups",
       direction="higher = a group's false positive rate is further from the whole's",
       measures=("outcome", 1), error_rate=1),
    _g("FNED*", "BCM", "FNR", "abs", "groups", "all", CZARNOWSKA, "FNED normalised by the number of groups",
       topic="errors", threshold=0.05, worse="higher", shown=("line",), order=2,
       meaning="FNED divided by the number of groups",
       direction="higher = a group's false negative rate is further from the whole's",
       measures=("outcome", -1), error_rate=1),
    _g("AvgGF", "BCM", "prob", "W1", "groups", "all", HUANG, "Average group fairness: mean_t W1(f(S,c), f(S^t,c))",
       topic="scores", threshold=0.05, worse="higher", shown=("column", "footer", "line"), order=5,
       meaning="mean over groups of the distance (W1) between the group's and all scores of class c",
       direction="higher = a group's probabilities for c are distributed more differently"),
    _g("AvgGF-TC", "BCM", "prob_pos", "W1", "groups", "all", CZARNOWSKA, "AvgGF on gold-class-c examples only", true_class=True,
       topic="scores", threshold=0.05, worse="higher", shown=(),
       meaning="AvgGF on examples of gold class c",
       direction="higher = a group's probabilities for its true class differ more"),
    _g("FPR-Ratio", "VBCM", "FPR", "ratio_to_background", None, "rest", BEUTEL, "FPR(S^t) / FPR(S minus S^t)",
       topic="errors", threshold=0.25, worse="higher", shown=(),
       meaning="FPR(group) ÷ FPR(rest)",
       direction="above 1 = the group gets more false positives than the rest",
       measures=("outcome", 1), error_rate=1),
    _g("FNR-Ratio", "VBCM", "FNR", "ratio_to_background", None, "rest", BEUTEL, "FNR(S^t) / FNR(S minus S^t)",
       topic="errors", threshold=0.25, worse="higher", shown=(),
       meaning="FNR(group) ÷ FNR(rest)",
       direction="above 1 = the group gets more false negatives than the rest",
       measures=("outcome", -1), error_rate=1),
    _g("PosAEG", "VBCM", "prob_pos", "AEG", None, "rest", BORKAN, "Positive average equality gap (gold c)",
       topic="scores", threshold=0.05, worse="lower", shown=("column",), order=6,
       meaning="1/2 − P(a rest score > a group score), gold-c examples",
       direction="positive = the group's true c examples get higher c probabilities than the rest's",
       measures=("outcome", 1)),
    _g("NegAEG", "VBCM", "prob_neg", "AEG", None, "rest", BORKAN, "Negative average equality gap (gold not c)",
       topic="scores", threshold=0.05, worse="higher", shown=("column",), order=7,
       meaning="1/2 − P(a rest score > a group score), examples not of gold c",
       direction="positive = the group's non-c examples get higher c probabilities (more false alarms)",
       measures=("outcome", 1)),
    # the AUCs' signed contrast with the overall AUC: BPSN is lower when the group's other-class examples score
    # higher for c (c more often), BNSP higher when its c examples do; Subgroup AUC is separation within the
    # group (higher: fewer errors)
    _g("SubgroupAUC", "VBCM", "subgroup_auc", "value", None, None, BORKAN, "AUC within the group",
       topic="AUC", threshold=0.02, worse="lower", shown=("column",), order=8,
       meaning="AUC of class c within the group",
       direction="below the overall AUC = the model separates c worse within the group",
       measures=("auc", 1)),
    _g("BPSN", "VBCM", "bpsn_auc", "value", None, "rest", BORKAN, "AUC on background positives + subgroup negatives",
       topic="AUC", threshold=0.02, worse="lower", shown=("column",), order=9,
       meaning="AUC on the rest's positives and the group's negatives",
       direction="below the overall AUC = the group's negatives get scores like positives",
       measures=("outcome", -1)),
    _g("BNSP", "VBCM", "bnsp_auc", "value", None, "rest", BORKAN, "AUC on background negatives + subgroup positives",
       topic="AUC", threshold=0.02, worse="lower", shown=("column",), order=10,
       meaning="AUC on the rest's negatives and the group's positives",
       direction="below the overall AUC = the group's positives get scores like negatives",
       measures=("outcome", 1)),
    _g("DisparityScore", "PCM", "F1", "abs", "groups", None, GAUT, "sum over pairs |F1 a - F1 b| / |T|",
       topic="errors", threshold=0.05, worse="higher", shown=(),
       meaning="sum over pairs of |F1(a) − F1(b)|, divided by the number of groups",
       direction="higher = F1 differs more between groups",
       measures=("errors", -1)),
    _g("DisparityScore*", "PCM", "F1", "abs", "pairs", None, CZARNOWSKA, "sum over pairs |F1 a - F1 b| / C(|T|,2)",
       topic="errors", threshold=0.05, worse="higher", shown=("line",), order=14,
       meaning="mean over pairs of |F1(a) − F1(b)|",
       direction="higher = F1 differs more between groups",
       measures=("errors", -1)),
    _g("TPR-Gap", "PCM", "TPR", "abs", "pairs", None, DEARTEAGA, "mean over pairs |TPR a - TPR b|",
       topic="errors", threshold=0.05, worse="higher", shown=("line",), order=11,
       meaning="mean over pairs of |TPR(a) − TPR(b)|",
       direction="higher = groups' true positive rates differ more",
       measures=("outcome", 1), error_rate=-1),
    _g("TNR-Gap", "PCM", "TNR", "abs", "pairs", None, DEARTEAGA, "mean over pairs |TNR a - TNR b|",
       topic="errors", threshold=0.05, worse="higher", shown=("line",), order=12,
       meaning="mean over pairs of |TNR(a) − TNR(b)|",
       direction="higher = groups' true negative rates differ more",
       measures=("outcome", -1), error_rate=-1),
    _g("ParityGap", "PCM", "positive_rate", "abs", "pairs", None, DEARTEAGA, "mean over pairs |positive rate a - b|",
       topic="outcomes", threshold=0.05, worse="higher", shown=("line",), order=13,
       meaning="mean over pairs of |P(predict c | a) − P(predict c | b)|",
       direction="higher = groups receive class c at more different rates",
       measures=("outcome", 1)),
    _g("AccuracyDiff", "PCM", "accuracy", "diff", "1", None, STANOVSKY, "accuracy(first) - accuracy(second)", two_groups=True,
       topic="errors", threshold=0.05, worse="lower", shown=("line",), order=15,
       meaning="accuracy(first) − accuracy(second)",
       direction="higher = the model is more accurate for the first group",
       measures=("errors", -1)),
    _g("TPR-Diff", "PCM", "TPR", "diff", "1", None, DEARTEAGA, "TPR(first) - TPR(second)", two_groups=True,
       topic="errors", threshold=0.05, worse="lower", shown=(),
       meaning="TPR(first) − TPR(second)",
       direction="higher = the first group is recognised more often",
       measures=("outcome", 1), error_rate=-1),
    _g("F1-Diff", "PCM", "F1", "diff", "1", None, ZHAO, "F1(first) - F1(second)", two_groups=True,
       topic="errors", threshold=0.05, worse="lower", shown=("line",), order=16,
       meaning="F1(first) − F1(second)",
       direction="higher = better F1 for the first group",
       measures=("errors", -1)),
    _g("Recall-Diff", "PCM", "recall", "diff", "1", None, MEHRABI, "recall(first) - recall(second)", two_groups=True,
       topic="errors", threshold=0.05, worse="lower", shown=("line",), order=17,
       meaning="recall(first) − recall(second)",
       direction="higher = the first group's entities/classes are found more often",
       measures=("outcome", 1), error_rate=-1),
    _g("F1-Ratio", "PCM", "F1", "ratio", "1", None, GAUT, "F1(first) / F1(second)", two_groups=True,
       topic="errors", threshold=0.25, worse="lower", shown=(),
       meaning="F1(first) ÷ F1(second)",
       direction="above 1 = better F1 for the first group",
       measures=("errors", -1)),
    # ---- counterfactual view
    _cf("CFGap", "PCM", "prob", "abs", "pairs", GARG, "Counterfactual gap: mean over tuples and pairs |f(a,c) - f(b,c)|",
       topic="counterfactual", threshold=0.05, worse="higher", shown=("line",), order=22,
       meaning="mean over template variants of |f(a, c) − f(b, c)|, pairs of groups",
       direction="higher = swapping the identity term moves the probability of c more",
       measures=("outcome", 1), consistency=True),
    _cf("CFGap-TC", "PCM", "prob_pos", "abs", "pairs", CZARNOWSKA, "CFGap on tuples whose members all have gold c", true_class=True,
       topic="counterfactual", threshold=0.05, worse="higher", shown=("line",), order=23,
       meaning="CFGap on variants of gold class c",
       direction="higher = swapping the term moves the true class's probability more",
       measures=("correct", 1)),
    _cf("PertSS", "PCM", "gold_prob", "abs", "pairs", PRABHAKARAN, "Perturbation score sensitivity (gold-class probability)",
       topic="counterfactual", threshold=0.05, worse="higher", shown=("line",), order=26,
       meaning="mean |change| of the gold-class probability when the term is swapped",
       direction="higher = the right answer depends more on the identity term",
       measures=("correct", 1), consistency=True),
    _cf("PertSD", "MCM", "gold_prob", "std", None, PRABHAKARAN, "Perturbation score deviation (std over the tuple)",
       topic="counterfactual", threshold=0.025, worse="higher", shown=("line",), order=27,
       meaning="standard deviation of the gold-class probability over a template's groups",
       direction="higher = the right answer depends more on the identity term"),
    _cf("PertSR", "MCM", "gold_prob", "range", None, PRABHAKARAN, "Perturbation score range (max - min over the tuple)",
       topic="counterfactual", threshold=0.05, worse="higher", shown=("line",), order=28,
       meaning="range of the gold-class probability over a template's groups",
       direction="higher = the right answer depends more on the identity term"),
    _cf("AvgIF", "PCM", "prob", "W1", "pairs", HUANG, "Average individual fairness: W1 between template sets", per_template=True,
       topic="counterfactual", threshold=0.05, worse="higher", shown=("line",), order=24,
       meaning="mean over templates of the W1 distance between groups' probabilities of c",
       direction="higher = a template's groups get differently distributed probabilities"),
    _cf("AvgIF-TC", "PCM", "prob_pos", "W1", "pairs", CZARNOWSKA, "AvgIF on gold-c examples", per_template=True, true_class=True,
       topic="counterfactual", threshold=0.05, worse="higher", shown=(),
       meaning="AvgIF on examples of gold class c",
       direction="higher = the true class's probabilities differ more between groups"),
    _cf("AvgScoreDiff", "PCM", "mean_prob", "abs", "pairs", POPOVIC, "mean over pairs |mean f(S_j^a) - mean f(S_j^b)|, per template", per_template=True,
       topic="counterfactual", threshold=0.05, worse="higher", shown=("line",), order=25,
       meaning="mean over templates of |mean f(a, c) − mean f(b, c)|",
       direction="higher = a template's groups get more different mean probabilities of c",
       measures=("outcome", 1), consistency=True),
]


def _own(of: str) -> str:
    return f"bias_suite, not a published metric: {of}, counted at the identity term's own span"


#: this project's own metrics: taggers measured at the identity term's own span
#: (docs/metrics.md, "Measured at the identity term"); not reported for classifiers
IDENTITY_SPAN_METRICS: list[MetricSpec] = [
    _g("IdentitySpan-FNED", "BCM", "identity_FNR", "abs", "1", "all", _own(f"FNED ({DIXON})"),
       "FNED of identity spans: sum_t |FNR(S) - FNR(S^t)|, the identity slot's own span only",
       topic="errors", threshold=0.05, worse="higher", shown=("column",), order=18,
       meaning="sum over groups of |FNR(group) − FNR(all)|, identity spans only (the span the identity slot filled, not every span of the type)",
       direction="higher = groups' identity terms are missed at more different rates",
       measures=("errors", 1)),
    _g("IdentitySpan-FNR-Ratio", "VBCM", "identity_FNR", "ratio_to_background", None, "rest", _own(f"FNR-Ratio ({BEUTEL})"),
       "FNR of identity spans: FNR(S^t) / FNR(S minus S^t)",
       topic="errors", threshold=0.25, worse="higher", shown=(),
       meaning="FNR(group) ÷ FNR(rest) of identity spans only (not every span of the type)",
       direction="above 1 = the group's identity terms are missed more often than the rest's",
       measures=("errors", 1)),
    _g("IdentitySpan-Recall-Gap", "PCM", "identity_recall", "abs", "pairs", None, _own(f"TPR-Gap ({DEARTEAGA})"),
       "mean over pairs |recall a - recall b| of identity spans",
       topic="errors", threshold=0.05, worse="higher", shown=("line",), order=20,
       meaning="mean over pairs of |recall(a) − recall(b)|, identity spans only (not every span of the type)",
       direction="higher = groups' identity terms are found at more different rates",
       measures=("errors", -1)),
    _g("IdentitySpan-Recall-Diff", "PCM", "identity_recall", "diff", "1", None, _own(f"Recall-Diff ({MEHRABI})"),
       "recall(first) - recall(second) of identity spans", two_groups=True,
       topic="errors", threshold=0.05, worse="lower", shown=("line",), order=21,
       meaning="recall(first) − recall(second) of identity spans only (not every span of the type)",
       direction="higher = the first group's identity terms are found more often",
       measures=("errors", -1)),
    _g("IdentitySpan-PosAEG", "VBCM", "identity_prob_pos", "AEG", None, "rest", _own(f"PosAEG ({BORKAN})"),
       "PosAEG of the probability of the identity term's gold type at the term",
       topic="scores", threshold=0.05, worse="lower", shown=("column",), order=19,
       meaning="1/2 − P(a rest score > a group score), the probability of the entity type at the identity term",
       direction="positive = the group's identity terms get higher probabilities of their type than the rest's",
       measures=("correct", 1)),
    _cf("IdentitySpan-CF-Recall-Gap", "PCM", "identity_recall", "abs", "pairs", _own(f"span recall compared inside counterfactual tuples as CFGap compares probabilities ({GARG})"),
        "mean over tuples and pairs |hit(a) - hit(b)|, hit = the identity span is found",
       topic="counterfactual", threshold=0.05, worse="higher", shown=("line",), order=29,
       meaning="share of template variants, pairs of groups, where the identity span is found for one group and missed for the other",
       direction="higher = swapping the identity term decides more often whether it is found"),
    _cf("IdentitySpan-CFGap", "PCM", "identity_prob", "abs", "pairs", _own(f"CFGap ({GARG})"),
        "mean over tuples and pairs |f(a,c) - f(b,c)| at the identity term",
       topic="counterfactual", threshold=0.05, worse="higher", shown=("line",), order=30,
       meaning="mean over template variants of |f(a, c) − f(b, c)| at the identity term only (not averaged over the sentence)",
       direction="higher = swapping the term moves the probability of c at the term more",
       measures=("correct", 1)),
]

#: this project's own metrics of classifiers: the per-group answer's headline effect (docs/verdicts.md), a
#: probability gap that grows with the size of the difference (the rank and rate metrics saturate)
OWN_METRICS: list[MetricSpec] = [
    _g("ProbGap", "VBCM", "mean_prob", "diff_to_background", None, "rest", "bias_suite, not a published metric: a BCM of Czarnowska et al. 2021 (phi = mean probability of c, "
       "d = signed difference, beta = the rest)",
       "mean f(S^t, c) - mean f(S minus S^t, c): the group's mean probability of c minus the rest's",
       topic="scores", threshold=0.05, worse=None, shown=("column",), order=2.5,
       meaning="mean probability of c for the group − the same for the other groups",
       direction="higher = the group's sentences get a higher probability of c than the other groups' sentences",
       measures=("outcome", 1)),
]

#: every named metric: the published ones and this project's own
NAMED_METRICS: list[MetricSpec] = PUBLISHED_METRICS + OWN_METRICS + IDENTITY_SPAN_METRICS

REGISTRY: dict[str, MetricSpec] = {m.name: m for m in NAMED_METRICS}


def explain(name) -> str:
    """A metric in plain words: what it measures, which way is worse, its
    no-bias value and threshold (``bias-suite metrics --explain NAME``)."""
    m = get_metric(name)
    b = {"overall_auc": "the overall AUC of the class"}.get(m.baseline, m.baseline)
    lines = [f"{m.name} ({m.topic}, {m.view} view)", f"  meaning:   {m.meaning}"]
    if m.direction:
        lines.append(f"  direction: {m.direction}")
    worse = m.worse
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
