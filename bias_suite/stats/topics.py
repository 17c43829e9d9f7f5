"""The five verdicts and their orders, the order in which topics are shown,
and the topic of a metric: shared by the verdicts (stats layer), the
comparison of models and the threshold rules (pipeline layer) and every
output (report layer), so every output orders verdicts and its overview the
same way."""
from __future__ import annotations

__all__ = ["VERDICTS", "SEVERITY", "FINDING_ORDER", "TOPIC_ORDER", "ordered_topics", "severity_rank", "topic_of"]

#: the five verdicts, the one place that orders them: in the order results list them (counts, columns),
#: each with its rank by severity (what a reader must look at before the rest: the overview's "worst
#: verdict", the sum of parts' verdict) and its rank among findings (a value shown to be material, then
#: one shown to be small but not negligible, then one whose interval is too wide to tell)
VERDICT_RANKS = {  # verdict: (severity, finding)
    "material": (0, 0),
    "small": (2, 1),
    "negligible": (3, 3),
    "inconclusive": (1, 2),
    "undefined": (4, 4),
}
VERDICTS = tuple(VERDICT_RANKS)
#: worst first
SEVERITY = tuple(sorted(VERDICTS, key=lambda v: VERDICT_RANKS[v][0]))
#: the order of findings
FINDING_ORDER = tuple(sorted(VERDICTS, key=lambda v: VERDICT_RANKS[v][1]))


#: the overview's topic columns, in this order in every output (the terminal
#: headline, the HTML report, the comparison): the group view's topics, from
#: error rates to scores and AUCs, then the counterfactual view, then the
#: tests and the Bernstein bounds. A topic not listed here (a user metric's
#: family) follows them in order of first appearance.
TOPIC_ORDER = ("errors", "outcomes", "scores", "AUC", "counterfactual", "significance", "Bernstein")


def ordered_topics(topics) -> list:
    """The distinct ``topics`` in :data:`TOPIC_ORDER`, others after them."""
    seen = list(dict.fromkeys(str(t) for t in topics))
    return [t for t in TOPIC_ORDER if t in seen] + [t for t in seen if t not in TOPIC_ORDER]


def severity_rank(v) -> int:
    """Position of a verdict in :data:`SEVERITY` (unknown ones last)."""
    return SEVERITY.index(v) if v in SEVERITY else len(SEVERITY)


def topic_of(metric: str, family: str) -> str:
    """The summary topic of a metric (its registry topic; "Bernstein" for
    Bernstein rows, "significance" for the tests, else the family)."""
    from ..metrics.catalog import REGISTRY

    spec = REGISTRY.get(metric)
    if spec is not None:
        return spec.topic
    if str(metric).startswith("Bernstein-"):
        return "Bernstein"
    return {"significance": "significance"}.get(str(family), str(family))


