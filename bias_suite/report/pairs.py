"""The worst counterfactual pair of a finding, from the scored examples.

Within a template, examples of different groups differ only in the identity
term. :func:`worst_pair` finds the two examples (of two groups, same
template) whose scores of a class differ most (the task family's example
score: a class probability, or for NER that of the entity type at the
identity term).
:func:`worst_template_block` shows it for the top finding of the headline.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from . import theme
from .data import _isnull

__all__ = ["worst_pair", "worst_template_block"]


def _example_probs(scored, cls) -> np.ndarray | None:
    """Per example, the score of class ``cls`` that the family compares
    (classification: its probability; NER: the type's mean probability over
    the identity term)."""
    from ..families import FAMILIES

    fam = FAMILIES.get(getattr(scored, "task", None))
    return None if fam is None else fam.example_scores(scored, cls)


def _texts(scored) -> np.ndarray:
    fr = scored.frame
    if "text" in fr.columns and fr["text"].notna().all():
        return fr["text"].astype(str).to_numpy()
    toks = getattr(scored, "tokens", None)
    if toks is not None:
        return np.asarray([" ".join(t) for t in toks], dtype=object)
    return fr["id"].astype(str).to_numpy()


def worst_pair(scored, attribute: str, cls: str, groups: Sequence[str] | None = None) -> dict | None:
    """The counterfactual pair with the largest probability gap for ``cls``.

    Within each template of ``attribute``, two examples of different groups
    differ only in the identity term; the pair (one example of each of two
    groups, same template) whose probabilities of ``cls`` differ most is
    returned as {"template", "class", "gap", "rows": [(group, text, p), (group, text, p)]}.
    ``groups`` restricts it: one group (that group against any other) or two
    (that pair). None when the data has no such pair."""
    if scored is None:
        return None
    fr = scored.frame
    p = _example_probs(scored, cls)
    if p is None:
        return None
    m = (fr["attribute"] == attribute).to_numpy() & np.isfinite(p)
    if not m.any():
        return None
    df = pd.DataFrame({"template": fr["template"].to_numpy()[m], "group": fr["group"].to_numpy()[m],
                       "p": p[m], "row": np.flatnonzero(m)})
    hi = df.loc[df.groupby(["template", "group"], sort=False)["p"].idxmax()]
    lo = df.loc[df.groupby(["template", "group"], sort=False)["p"].idxmin()]
    pairs = hi.merge(lo, on="template", suffixes=("_a", "_b"))
    pairs = pairs[pairs["group_a"] != pairs["group_b"]]
    groups = [g for g in (groups or []) if not _isnull(g)]
    if len(groups) == 1:
        pairs = pairs[(pairs["group_a"] == groups[0]) | (pairs["group_b"] == groups[0])]
    elif len(groups) >= 2:
        pairs = pairs[pairs["group_a"].isin(groups[:2]) & pairs["group_b"].isin(groups[:2])]
    if pairs.empty:
        return None
    gap = pairs["p_a"] - pairs["p_b"]
    best = pairs.loc[gap.idxmax()]
    texts = _texts(scored)
    rows = [(best["group_a"], texts[int(best["row_a"])], float(best["p_a"])),
            (best["group_b"], texts[int(best["row_b"])], float(best["p_b"]))]
    return {"template": best["template"], "class": cls, "gap": float(best["p_a"] - best["p_b"]), "rows": rows}


def _scored_parts(scored) -> list:
    """[(label, scored)] from one scored object, a list of them, or a list of (label, scored)."""
    items = scored if isinstance(scored, (list, tuple)) else [scored]
    out = []
    for it in items:
        if isinstance(it, tuple) and len(it) == 2:
            out.append((it[0] or "", it[1]))
        elif it is not None:
            out.append(("", it))
    return [(lab, s) for lab, s in out if s is not None]


def _attribute_in(attribute: str, label: str, scored) -> str | None:
    """The scored data's name of a headline attribute ("nationality (NER)" is
    "nationality" of the part labelled NER), or None when it is not there."""
    a = str(attribute)
    if label:
        suffix = f" ({label})"
        a = a[: -len(suffix)] if a.endswith(suffix) else a
    return a if a in set(pd.unique(scored.frame["attribute"])) else None


def worst_template_block(fd: pd.DataFrame, scored) -> list:
    """The worst counterfactual pair for the class of the top finding that
    the scored examples can show (lines of rich Text)."""
    from rich.table import Table
    from rich.text import Text

    parts = _scored_parts(scored)
    if not parts or fd.empty:
        return []
    labelled = {lab for lab, _ in parts if lab}
    for r in fd.to_dict("records"):
        own = next((lab for lab in labelled if str(r["attribute"]).endswith(f" ({lab})")), "")
        for lab, s in parts:
            a = _attribute_in(r["attribute"], lab, s) if lab == own else None
            if a is None:
                continue
            cls = r.get("class")
            candidates = [cls] if cls in tuple(s.classes) else list(s.classes)  # "all": the class with the largest gap
            g = r.get("group")
            groups = [] if _isnull(g) else str(g).split("|")
            found = [wp for wp in (worst_pair(s, a, c, groups) for c in candidates) if wp is not None]
            if found:
                wp = max(found, key=lambda w: abs(w["gap"]))
                c = wp["class"]
                from ..families import FAMILIES

                kind = getattr(FAMILIES.get(getattr(s, "task", None)), "example_score_name", "probability")
                head = Text.assemble(("Worst counterfactual pair: ", "bold"), f"template {wp['template']}, {kind} of ",
                                     (str(c), "bold"), f" differs by {abs(wp['gap']):.3f}")
                g = Table.grid(padding=(0, 1))
                g.add_column(justify="right")
                g.add_column(style=theme.MUTED)
                g.add_column()
                for grp, text, p in wp["rows"]:
                    g.add_row(Text(f"p={p:.3f}", style="bold"), Text(str(grp)), Text(str(text)))
                return [head, g]
    return []
