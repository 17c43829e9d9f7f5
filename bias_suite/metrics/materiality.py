"""What counts as a bias worth acting on, per metric: the scale a metric is
judged on and its no-bias value b (:func:`judged_on`, the one place that
derives them), the smallest meaningful effect tau, a topic for summaries,
and the metric's meaning and direction in plain words. A named metric's
facts are its record (:class:`bias_suite.metrics.catalog.MetricSpec`, in
``metrics/catalog.py``); this module gives a user's record the defaults
below (:func:`defaults`).

The rules the named records follow and a user's record gets by default
(the reasoning is in docs/verdicts.md):

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
(unknown) for a signed one, a ratio or a raw value; its topic: "AUC" for an
AUC, "counterfactual" in the counterfactual view, else "errors" (based on
predictions) or "scores" (on probabilities); its meaning: its description. The
report colours values by it (red worse, blue better). Users change tau per metric
name or per topic (``thresholds={...}`` in
Python, ``--threshold NAME=VALUE`` on the command line).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Materiality", "defaults", "judged_on", "TOPICS", "RATIO_BAND", "SCALES", "RATIOS"]

RATIO_BAND = 1.25  # four-fifths rule: [0.8, 1.25]

#: topic -> default tau (ratios: 0.25 whatever their topic, see RATIO_BAND)
TOPICS = {"errors": 0.05, "outcomes": 0.05, "scores": 0.05, "AUC": 0.02, "counterfactual": 0.05, "Bernstein": 0.05}

#: the scales a metric is judged on: a ratio (no-bias value 1, judged on |log value| against log 1.25), a signed
#: value (a difference, an AEG; an AUC as its contrast with the overall AUC) or an unsigned one (a distance or an
#: absolute difference, judged through its signed basis where it has one)
SCALES = ("ratio", "signed", "unsigned")
#: the comparisons that make a ratio
RATIOS = ("ratio", "ratio_to_background")


def judged_on(phi, d) -> tuple[str, str]:
    """(scale, no-bias value b) of a metric with score ``phi`` and
    comparison ``d``: the one place that derives them. b is "1" for a
    ratio, "overall_auc" for an AUC taken as it is (d = "value": judged by
    its signed contrast with the overall AUC of the class), else "0"."""
    if d.name in RATIOS:
        return "ratio", "1"
    if getattr(phi, "kind", None) == "auc" and d.name == "value":
        return "signed", "overall_auc"
    return ("signed" if d.signed else "unsigned"), "0"


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


def defaults(*, name: str, phi, d, view: str, based_on: str, description: str = "", topic: str | None = None) -> dict:
    """The facts a record leaves out (module doc): topic, meaning,
    direction, worse side and tau, from its definition."""
    scale, baseline = judged_on(phi, d)
    if topic is None:
        topic = ("AUC" if baseline == "overall_auc" else "counterfactual" if view == "counterfactual"
                 else "errors" if based_on == "prediction" else "scores")
    worse = ("lower" if baseline == "overall_auc" else None if scale != "unsigned" or d.name == "value"
             else "higher")
    tau = 0.25 if scale == "ratio" else TOPICS.get(topic, TOPICS["errors"])
    return {"topic": topic, "meaning": description or name, "direction": "", "worse": worse, "threshold": tau}

