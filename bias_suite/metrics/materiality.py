"""What counts as a bias worth acting on, per metric: the no-bias value b,
the smallest meaningful effect tau, a topic for summaries, and the metric's
meaning and direction in plain words.

Defaults (the reasoning is in docs/verdicts.md):

- differences of rates or probabilities (FNED, TPR-Gap, ParityGap, CFGap,
  AvgScoreDiff, PertSS/SR, Bernstein disparities, ...): tau = 0.05, five
  points of a rate or probability;
- distances between score distributions (W1: AvgGF, AvgIF) and the average
  equality gaps (AEG): tau = 0.05, on the same probability scale;
- PertSD, a standard deviation (half the range for two groups): tau = 0.025;
- ratios (FPR-Ratio, FNR-Ratio, F1-Ratio): b = 1 and the four-fifths rule:
  a ratio outside [0.8, 1.25] is material; judged on |log ratio| against
  log 1.25, so both ends of the band count alike (tau is stored as 0.25);
- Subgroup AUC, BPSN and BNSP: b = the overall AUC of the class, tau = 0.02.

Topics group metrics for summaries: errors (error rates, F1, accuracy and
their ratios), outcomes (rates of predicting a class), scores (probability
distributions), AUC, counterfactual, Bernstein.

Which side of b is worse for the group (``worse``): "higher" for
disparities (a larger gap, distance or spread is more bias), error ratios
(more errors for the group) and NegAEG (more false alarms); "lower" for the
AUCs (worse separation within the group), PosAEG (lower probabilities of the
true class) and the differences and ratios of a good quantity between the
first and the second group (TPR-Diff, F1-Ratio, ...: worse for the first).
A user's metric: "lower" for an AUC, "higher" for an unsigned comparison
of two sets (abs, W1, std, range: any departure from 0 is disparity), None
(unknown) for a signed one, a ratio or a raw value. The
report colours values by it (red worse, blue better). Users change tau per metric
name or per topic (``thresholds={...}`` in
Python, ``--threshold NAME=VALUE`` on the command line).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Materiality", "materiality", "TOPICS", "RATIO_BAND"]

RATIO_BAND = 1.25  # four-fifths rule: [0.8, 1.25]

#: topic -> default tau (ratios: 0.25 whatever their topic, see RATIO_BAND)
TOPICS = {"errors": 0.05, "outcomes": 0.05, "scores": 0.05, "AUC": 0.02, "counterfactual": 0.05, "Bernstein": 0.05}


@dataclass(frozen=True)
class Materiality:
    baseline: str        # "0", "1" or "overall_auc"
    threshold: float     # tau
    topic: str
    meaning: str
    direction: str
    worse: str | None = None  # "higher", "lower" or None: which side of b is worse for the group

    def effect(self, distance: float) -> float:
        """Size in units of tau of a distance |value - b| (ratios: the
        distance is |log value|, compared with log 1.25)."""
        if self.baseline == "1":
            return distance / math.log(RATIO_BAND)
        return distance / self.threshold


_G = "the group"
_TABLE = {
    "FPED": ("errors", "sum over groups of |FPR(group) − FPR(all)|", "higher = false positive rates differ more between groups and the whole"),
    "FNED": ("errors", "sum over groups of |FNR(group) − FNR(all)|", "higher = false negative rates differ more between groups and the whole"),
    "FPED*": ("errors", "FPED divided by the number of groups", "higher = a group's false positive rate is further from the whole's"),
    "FNED*": ("errors", "FNED divided by the number of groups", "higher = a group's false negative rate is further from the whole's"),
    "TPR-Gap": ("errors", "mean over pairs of |TPR(a) − TPR(b)|", "higher = groups' true positive rates differ more"),
    "TNR-Gap": ("errors", "mean over pairs of |TNR(a) − TNR(b)|", "higher = groups' true negative rates differ more"),
    "TPR-Diff": ("errors", "TPR(first) − TPR(second)", "higher = the first group is recognised more often"),
    "Recall-Diff": ("errors", "recall(first) − recall(second)", "higher = the first group's entities/classes are found more often"),
    "ParityGap": ("outcomes", "mean over pairs of |P(predict c | a) − P(predict c | b)|", "higher = groups receive class c at more different rates"),
    "AccuracyDiff": ("errors", "accuracy(first) − accuracy(second)", "higher = the model is more accurate for the first group"),
    "DisparityScore": ("errors", "sum over pairs of |F1(a) − F1(b)|, divided by the number of groups", "higher = F1 differs more between groups"),
    "DisparityScore*": ("errors", "mean over pairs of |F1(a) − F1(b)|", "higher = F1 differs more between groups"),
    "F1-Diff": ("errors", "F1(first) − F1(second)", "higher = better F1 for the first group"),
    "FPR-Ratio": ("errors", "FPR(group) ÷ FPR(rest)", "above 1 = the group gets more false positives than the rest"),
    "FNR-Ratio": ("errors", "FNR(group) ÷ FNR(rest)", "above 1 = the group gets more false negatives than the rest"),
    "F1-Ratio": ("errors", "F1(first) ÷ F1(second)", "above 1 = better F1 for the first group"),
    "AvgGF": ("scores", "mean over groups of the distance (W1) between the group's and all scores of class c", "higher = a group's probabilities for c are distributed more differently"),
    "AvgGF-TC": ("scores", "AvgGF on examples of gold class c", "higher = a group's probabilities for its true class differ more"),
    "PosAEG": ("scores", "1/2 − P(a rest score > a group score), gold-c examples", "positive = the group's true c examples get higher c probabilities than the rest's"),
    "NegAEG": ("scores", "1/2 − P(a rest score > a group score), examples not of gold c", "positive = the group's non-c examples get higher c probabilities (more false alarms)"),
    "SubgroupAUC": ("AUC", "AUC of class c within the group", "below the overall AUC = the model separates c worse within the group"),
    "BPSN": ("AUC", "AUC on the rest's positives and the group's negatives", "below the overall AUC = the group's negatives get scores like positives"),
    "BNSP": ("AUC", "AUC on the rest's negatives and the group's positives", "below the overall AUC = the group's positives get scores like negatives"),
    "CFGap": ("counterfactual", "mean over template variants of |f(a, c) − f(b, c)|, pairs of groups", "higher = swapping the identity term moves the probability of c more"),
    "CFGap-TC": ("counterfactual", "CFGap on variants of gold class c", "higher = swapping the term moves the true class's probability more"),
    "PertSS": ("counterfactual", "mean |change| of the gold-class probability when the term is swapped", "higher = the right answer depends more on the identity term"),
    "PertSD": ("counterfactual", "standard deviation of the gold-class probability over a template's groups", "higher = the right answer depends more on the identity term"),
    "PertSR": ("counterfactual", "range of the gold-class probability over a template's groups", "higher = the right answer depends more on the identity term"),
    "AvgIF": ("counterfactual", "mean over templates of the W1 distance between groups' probabilities of c", "higher = a template's groups get differently distributed probabilities"),
    "AvgIF-TC": ("counterfactual", "AvgIF on examples of gold class c", "higher = the true class's probabilities differ more between groups"),
    "AvgScoreDiff": ("counterfactual", "mean over templates of |mean f(a, c) − mean f(b, c)|", "higher = a template's groups get more different mean probabilities of c"),
    # a tagger measured at the identity term's own span (not every span of the type: context names left out)
    "IdentitySpan-FNED": ("errors", "sum over groups of |FNR(group) − FNR(all)|, identity spans only (the span the identity slot filled, not every span of the type)", "higher = groups' identity terms are missed at more different rates"),
    "IdentitySpan-FNR-Ratio": ("errors", "FNR(group) ÷ FNR(rest) of identity spans only (not every span of the type)", "above 1 = the group's identity terms are missed more often than the rest's"),
    "IdentitySpan-Recall-Gap": ("errors", "mean over pairs of |recall(a) − recall(b)|, identity spans only (not every span of the type)", "higher = groups' identity terms are found at more different rates"),
    "IdentitySpan-Recall-Diff": ("errors", "recall(first) − recall(second) of identity spans only (not every span of the type)", "higher = the first group's identity terms are found more often"),
    "IdentitySpan-PosAEG": ("scores", "1/2 − P(a rest score > a group score), the probability of the entity type at the identity term", "positive = the group's identity terms get higher probabilities of their type than the rest's"),
    "IdentitySpan-CF-Recall-Gap": ("counterfactual", "share of template variants, pairs of groups, where the identity span is found for one group and missed for the other", "higher = swapping the identity term decides more often whether it is found"),
    "IdentitySpan-CFGap": ("counterfactual", "mean over template variants of |f(a, c) − f(b, c)| at the identity term only (not averaged over the sentence)", "higher = swapping the term moves the probability of c at the term more"),
}
_TAU = {"PertSD": 0.025}
#: the named metrics for which a value below b is worse (the others: above b)
_LOWER_WORSE = frozenset({"TPR-Diff", "Recall-Diff", "AccuracyDiff", "F1-Diff", "F1-Ratio", "PosAEG", "SubgroupAUC",
                          "BPSN", "BNSP", "IdentitySpan-Recall-Diff", "IdentitySpan-PosAEG"})


def materiality(spec) -> Materiality:
    """The :class:`Materiality` of a metric spec (registered metrics from the
    table above; a user's metric from its comparison and view)."""
    from .scores import AucScore

    name = spec.name
    comp = spec.d.name
    if isinstance(spec.phi, AucScore) and comp == "value":
        baseline = "overall_auc"
    elif comp in ("ratio", "ratio_to_background"):
        baseline = "1"
    else:
        baseline = "0"
    if name in _TABLE:
        topic, meaning, direction = _TABLE[name]
        worse = "lower" if name in _LOWER_WORSE else "higher"
    else:
        worse = ("lower" if baseline == "overall_auc" else None if spec.d.signed or comp in ("value", "ratio", "ratio_to_background")
                 else "higher")
        topic = ("AUC" if baseline == "overall_auc" else "counterfactual" if spec.view == "counterfactual"
                 else "errors" if spec.based_on == "prediction" else "scores")
        meaning, direction = spec.description or name, ""
    tau = _TAU.get(name, 0.25 if baseline == "1" else TOPICS[topic])
    return Materiality(baseline, tau, topic, meaning, direction, worse)
