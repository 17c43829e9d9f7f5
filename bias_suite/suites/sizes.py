"""How many counterfactual templates a suite gives each class, per attribute.

The intervals of the metrics resample counterfactual templates: a template
with lexicon slots is one template per lexicon fill (``template`` in the
examples, see :mod:`bias_suite.suites.expansion`). A rate of class c (the
true positive rate, say) has a chance in the templates of gold class c, so
the number of such templates bounds what its interval can show
(:mod:`bias_suite.stats.suite_size` turns the count into a warning).
Counted from the suite file alone: nothing is expanded.
"""
from __future__ import annotations

from typing import Callable, Iterable

from .expansion import n_fills
from .loader import Suite, Template

__all__ = ["class_templates", "frame_class_templates"]


def class_templates(suite: Suite, *, attributes: Iterable[str] | None = None,
                    class_of: Callable[[Template], str | None] | None = None) -> dict[str, dict[str, int]]:
    """``{attribute: {class: counterfactual templates}}`` of ``suite``.

    ``class_of(template)`` names the class a template counts for (default:
    its gold ``label``; None leaves it out). Only the attributes a template
    applies to count it (its identity slot kind, its ``attributes:``); with
    ``attributes``, only those. Classes with no template are left out;
    classes come in the order of the suite's ``classes`` (others after, in
    order of appearance)."""
    wanted = None if attributes is None else set(attributes)
    key = class_of or (lambda t: t.label)
    out: dict[str, dict[str, int]] = {a: {} for a in suite.identity if wanted is None or a in wanted}
    for tpl in suite.templates:
        c = key(tpl)
        if c is None:
            continue
        k = n_fills(tpl, suite.lexicons)
        for a in suite.attributes_for(tpl):
            if a in out:
                out[a][c] = out[a].get(c, 0) + k
    rank = {c: i for i, c in enumerate(suite.classes or [])}
    return {a: dict(sorted(per.items(), key=lambda kv: rank.get(kv[0], len(rank))))
            for a, per in out.items()}


def frame_class_templates(frame, *, attributes: Iterable[str] | None = None) -> dict[str, dict[str, int]]:
    """``{attribute: {class: counterfactual templates}}`` of an examples frame (an examples table, a user's
    perturbed sentences): the templates with rows of at least two groups of the attribute, counted by their
    gold ``label`` (a template's rows share it; unlabelled templates left out)."""
    need = {"template", "attribute", "group", "label"}
    if frame is None or len(frame) == 0 or not need <= set(frame.columns):
        return {}
    f = frame[list(need)].dropna(subset=["template", "attribute", "group", "label"])
    if attributes is not None:
        f = f[f["attribute"].isin(set(attributes))]
    groups = f.groupby(["attribute", "template"], sort=False)["group"].nunique()
    counterfactual = groups[groups >= 2].index
    f = f.set_index(["attribute", "template"])
    f = f[f.index.isin(counterfactual)].reset_index()
    first = f.drop_duplicates(["attribute", "template"])
    out: dict[str, dict[str, int]] = {}
    for (a, c), n in first.groupby(["attribute", "label"], sort=False).size().items():
        out.setdefault(str(a), {})[str(c)] = int(n)
    return out
