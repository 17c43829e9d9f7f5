"""The worst counterfactual pair of a finding, from the scored examples.

Within a template, examples of different groups differ only in the identity
term. :func:`worst_pair` finds the two examples (of two groups, same
template) whose scores of a class differ most (the task family's example
score: a class probability, or for NER that of the entity type at the
identity term); a largest gap within round-off of zero (below
:data:`ZERO_GAP`) is no pair at all, so a model that ignores an attribute
shows none.
:func:`example_pair` is the headline's pair: the largest gap in the
attribute of the top finding, for its class (every class for a finding about
"all"), whichever groups it involves; :func:`finding_pair` is the largest gap
that involves a finding's own groups (the report's findings table).
:func:`example_pair_block` renders the headline's pair.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..io.values import is_null
from . import theme

__all__ = ["worst_pair", "example_pair", "finding_pair", "example_pair_block", "example_texts", "locate", "ZERO_GAP"]

#: probability gaps below this are floating round-off, not a difference
ZERO_GAP = 1e-9


def _example_probs(scored, cls) -> np.ndarray | None:
    """Per example, the score of class ``cls`` that the family compares
    (classification: its probability; NER: the type's mean probability over
    the identity term)."""
    from ..families import FAMILIES

    fam = FAMILIES.get(getattr(scored, "task", None))
    return None if fam is None else fam.example_scores(scored, cls)


def example_texts(scored) -> np.ndarray:
    """Per example, its sentence (NER: the tokens joined by spaces; else its id)."""
    fr = scored.frame
    if "text" in fr.columns and fr["text"].notna().all():
        return fr["text"].astype(str).to_numpy()
    toks = getattr(scored, "tokens", None)
    if toks is not None:
        return np.asarray([" ".join(t) for t in toks], dtype=object)
    return fr["id"].astype(str).to_numpy()


def worst_pair(scored, attribute: str, cls: str, groups: Sequence[str] | None = None, *,
               min_gap: float = ZERO_GAP) -> dict | None:
    """The counterfactual pair with the largest probability gap for ``cls``.

    Within each template of ``attribute``, two examples of different groups
    differ only in the identity term; the pair (one example of each of two
    groups, same template) whose probabilities of ``cls`` differ most is
    returned as {"template", "class", "gap", "rows": [(group, text, p), (group, text, p)]}.
    ``groups`` restricts it: one group (that group against any other) or two
    (that pair). None when the data has no such pair or when the largest gap
    is below ``min_gap`` (round-off)."""
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
    groups = [g for g in (groups or []) if not is_null(g)]
    if len(groups) == 1:
        pairs = pairs[(pairs["group_a"] == groups[0]) | (pairs["group_b"] == groups[0])]
    elif len(groups) >= 2:
        pairs = pairs[pairs["group_a"].isin(groups[:2]) & pairs["group_b"].isin(groups[:2])]
    if pairs.empty:
        return None
    gap = pairs["p_a"] - pairs["p_b"]
    best = pairs.loc[gap.idxmax()]
    if not float(best["p_a"] - best["p_b"]) >= min_gap:
        return None
    texts = example_texts(scored)
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


def _classes_for(r, scored) -> list:
    cls = r.get("class")
    return [cls] if cls in tuple(scored.classes) else list(scored.classes)  # "all": the class with the largest gap


def _own_groups(r) -> list:
    """The groups a finding is about: its group, the two of a pair, the
    shared group of a merged line ("jewish vs 5 groups"); none for a line
    about all groups or a spill-over."""
    if not is_null(r.get("via")):
        return []
    if not is_null(r.get("own_group")):
        return [str(r["own_group"])]
    g = r.get("group")
    return [] if is_null(g) else str(g).split("|")


def _largest(r, scored, attribute: str, groups: list) -> dict | None:
    found = [wp for wp in (worst_pair(scored, attribute, c, groups) for c in _classes_for(r, scored)) if wp is not None]
    if not found:
        return None
    wp = max(found, key=lambda w: abs(w["gap"]))
    return dict(wp, attribute=attribute)


def _locate(r, parts) -> tuple | None:
    """(scored, its name of the attribute) of a finding, or None."""
    labelled = {lab for lab, _ in parts if lab}
    own = next((lab for lab in labelled if str(r["attribute"]).endswith(f" ({lab})")), "")
    for lab, s in parts:
        # an attribute without a label's suffix is any part's that has it (one labelled part is not suffixed)
        a = _attribute_in(r["attribute"], lab, s) if lab == own or not own else None
        if a is not None:
            return s, a
    return None


def locate(r, scored) -> tuple | None:
    """(scored data, its name of the attribute) of a finding's row, from
    ``scored`` as the headline takes it; None when it is not there."""
    parts = _scored_parts(scored)
    return _locate(r, parts) if parts else None


def example_pair(fd: pd.DataFrame, scored) -> dict | None:
    """The headline's counterfactual pair: the largest probability gap in
    the attribute of the first finding of ``fd`` that the scored examples
    hold, for that finding's class (the class with the largest gap for a
    finding about "all"), over every pair of its groups. None when there is
    none or the gap is round-off. The dict of :func:`worst_pair`, plus
    ``attribute`` (the scored data's name), ``label`` (the finding's) and
    ``scored``."""
    parts = _scored_parts(scored)
    if not parts or fd is None or fd.empty:
        return None
    for r in fd.to_dict("records"):
        loc = _locate(r, parts)
        if loc is not None:
            wp = _largest(r, loc[0], loc[1], [])
            return None if wp is None else dict(wp, scored=loc[0], label=str(r["attribute"]))
    return None


def finding_pair(r: dict, scored) -> dict | None:
    """The largest probability gap for a finding's class that involves its
    own groups (:func:`_own_groups`; the whole attribute for a finding about
    all groups), or None."""
    parts = _scored_parts(scored)
    loc = _locate(r, parts) if parts else None
    if loc is None:
        return None
    return _largest(r, loc[0], loc[1], _own_groups(r)[:2])


def example_pair_block(fd: pd.DataFrame, scored) -> list:
    """The headline's pair (:func:`example_pair`) as lines of rich Text;
    empty when there is none."""
    from rich.table import Table
    from rich.text import Text

    from ..families import FAMILIES

    wp = example_pair(fd, scored)
    if wp is None:
        return []
    kind = getattr(FAMILIES.get(getattr(wp["scored"], "task", None)), "example_score_name", "probability")
    head = Text.assemble(("Worst counterfactual pair", "bold"), f" of {wp['label']}: template {wp['template']}, {kind} of ", (str(wp["class"]), "bold"),
                         f" differs by {abs(wp['gap']):.3f}")
    g = Table.grid(padding=(0, 1))
    g.add_column(justify="right")
    g.add_column(style=theme.MUTED)
    g.add_column()
    for grp, text, p in wp["rows"]:
        g.add_row(Text(f"p={p:.3f}", style="bold"), Text(str(grp)), Text(str(text)))
    return [head, g]
