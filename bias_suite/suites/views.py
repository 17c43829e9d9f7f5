"""Group view and counterfactual view of a table of examples.

Both work on any table with ``attribute``, ``template`` and ``group``
columns (expanded suites, scored examples), with or without a model.

- Group view: ``S^t`` = every example of group t (all templates, all terms).
- Counterfactual view: for template j, ``S_j^t`` = its examples of group t;
  a counterfactual tuple picks one example per group from the same template.
  Templates missing a group are left out. When a template has more than
  ``max_tuples`` tuples, ``max_tuples`` distinct tuples are drawn with one
  ``numpy.random.default_rng(seed)`` per call: attributes, then their
  complete templates, in order of first appearance; each attempt draws, for
  each group in group order, ``int(rng.integers(len(S_j^t)))``; a tuple
  already drawn is rejected.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from math import prod
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import MetricError, did_you_mean


def _first_appearance(values) -> list:
    return list(pd.unique(pd.Series(values, dtype=object)))


def group_order(table: pd.DataFrame, attribute: str, override: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Groups of ``attribute`` in order of first appearance, or as given in
    ``override[attribute]``: the groups it names come first, in its order, and
    the attribute's other groups follow in their own order (so
    ``{"religion": ["muslim", "christian"]}`` makes muslim − christian the
    first pair of a seven-group attribute). Naming a group the attribute does
    not have, or a group twice, is an error."""
    present = _first_appearance(table.loc[table["attribute"] == attribute, "group"])
    if override and attribute in override:
        wanted = [str(g) for g in override[attribute]]
        unknown = [g for g in wanted if g not in present]
        twice = sorted({g for g in wanted if wanted.count(g) > 1})
        if unknown or twice:
            what = (f"names groups the attribute does not have: {unknown}" if unknown
                    else f"names {twice} more than once")
            close = did_you_mean(unknown[0], present) if unknown else ""
            raise MetricError(f"group order for attribute {attribute!r} {what} (its groups are {present}){close}")
        return wanted + [g for g in present if g not in wanted]
    return present


@dataclass(frozen=True)
class GroupView:
    """Examples of one attribute by group: ``indices[t]`` are row positions."""

    attribute: str
    groups: list
    indices: dict

    def sizes(self) -> dict:
        return {g: len(ix) for g, ix in self.indices.items()}


def group_view(table: pd.DataFrame, *, group_order_override=None) -> dict[str, GroupView]:
    """Per attribute (first-appearance order): row positions of each group."""
    out = {}
    attr = table["attribute"].to_numpy(dtype=object)
    grp = table["group"].to_numpy(dtype=object)
    for a in _first_appearance(attr):
        groups = group_order(table, a, group_order_override)
        rows = np.flatnonzero(attr == a)
        out[a] = GroupView(a, groups, {g: rows[grp[rows] == g] for g in groups})
    return out


@dataclass(frozen=True)
class CounterfactualView:
    """Counterfactual tuples of one attribute.

    Attributes
    ----------
    groups : list of str — group order (column order of ``tuples``).
    templates : list of str — complete templates (containing every group), in order.
    tuples : ndarray (M, k) — row positions (in the source table), one column per group.
    tuple_template : ndarray (M,) — index into ``templates`` of each tuple.
    members : dict template -> list of k arrays, the row positions of S_j^t.
    incomplete : list of str — templates left out because a group is missing.
    sampled : list of str — templates whose tuples were sampled.
    """

    attribute: str
    groups: list
    templates: list
    tuples: np.ndarray
    tuple_template: np.ndarray
    members: dict
    incomplete: list
    sampled: list

    def to_frame(self, table: pd.DataFrame | None = None, column: str = "id") -> pd.DataFrame:
        """One row per tuple: template plus one column per group (row
        positions, or ``table[column]`` values when a table is given)."""
        data = {"template": [self.templates[j] for j in self.tuple_template]}
        for k, g in enumerate(self.groups):
            col = self.tuples[:, k]
            data[g] = table[column].to_numpy()[col] if table is not None else col
        return pd.DataFrame(data)


def sample_tuples(lists, max_tuples, rng):
    """``max_tuples`` distinct tuples of positions, drawn as the module doc
    says: attempt after attempt, one ``rng.integers(len(S_j^t))`` per group
    in group order, a tuple already drawn rejected.

    The attempts are drawn in batches: while ``need`` tuples are missing,
    at least ``need`` more attempts are made, so the next ``need`` attempts
    are drawn in one call, ``rng.integers(sizes, size=(need, k))``, which
    takes the same draws from the generator, in the same order, as ``need``
    x ``k`` scalar calls (tests/test_group_order.py checks this against the
    draw-by-draw loop). No draw is made that the draw-by-draw loop would
    not make, so the generator is left in the same state for the next
    template."""
    sizes = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
    seen = set()
    picked = []
    while len(picked) < max_tuples:
        need = max_tuples - len(picked)
        for key in map(tuple, rng.integers(sizes, size=(need, len(sizes))).tolist()):
            if key not in seen:
                seen.add(key)
                picked.append(key)
    idx = np.asarray(picked, dtype=np.int64)
    return np.stack([lists[k][idx[:, k]] for k in range(len(lists))], axis=1)


#: the last few views computed (their key: the attribute, template and group
#: columns' contents, ``max_tuples``, ``seed`` and the group order): the views
#: depend on nothing else, so the metrics, the bootstrap and a comparison of
#: several models on the same examples share one; callers never change a view
_VIEWS: OrderedDict = OrderedDict()
_VIEWS_KEPT = 4
_VIEWS_LOCK = threading.Lock()


def _view_key(table: pd.DataFrame, max_tuples, seed, group_order_override):
    cols = table[["attribute", "template", "group"]]
    digest = hashlib.blake2b(pd.util.hash_pandas_object(cols, index=False).to_numpy().tobytes(),
                             digest_size=16).hexdigest()
    order = None if not group_order_override else tuple(
        sorted((str(a), tuple(map(str, g))) for a, g in group_order_override.items()))
    return digest, len(table), max_tuples, int(seed), order


def counterfactual_view(
    table: pd.DataFrame, *, max_tuples: int | None = 100, seed: int = 0, group_order_override=None
) -> dict[str, CounterfactualView]:
    """Counterfactual tuples for every attribute of ``table`` (see module doc).

    ``max_tuples=None`` keeps every tuple. The same call with the same seed
    always gives the same tuples (the last few are kept and returned again:
    treat them as read-only).
    """
    key = _view_key(table, max_tuples, seed, group_order_override)
    with _VIEWS_LOCK:
        hit = _VIEWS.get(key)
        if hit is not None:
            _VIEWS.move_to_end(key)
            return hit
    out = _counterfactual_view(table, max_tuples=max_tuples, seed=seed, group_order_override=group_order_override)
    with _VIEWS_LOCK:
        _VIEWS[key] = out
        while len(_VIEWS) > _VIEWS_KEPT:
            _VIEWS.popitem(last=False)
    return out


def _counterfactual_view(table, *, max_tuples, seed, group_order_override) -> dict[str, CounterfactualView]:
    rng = np.random.default_rng(seed)
    attr = table["attribute"].to_numpy(dtype=object)
    out = {}
    # row positions by (attribute, template, group), groups in first-appearance order
    keyed = pd.DataFrame(
        {"a": attr, "t": table["template"].to_numpy(dtype=object), "g": table["group"].to_numpy(dtype=object)}
    )
    buckets = keyed.groupby(["a", "t", "g"], sort=False).indices
    for a in _first_appearance(attr):
        groups = group_order(table, a, group_order_override)
        k = len(groups)
        rows_a = np.flatnonzero(attr == a)
        templates = _first_appearance(keyed["t"].to_numpy()[rows_a])
        complete, incomplete, sampled, members = [], [], [], {}
        chunks, owner = [], []
        for t in templates:
            lists = [np.asarray(buckets.get((a, t, g), []), dtype=np.int64) for g in groups]
            if k == 0 or any(len(x) == 0 for x in lists):
                incomplete.append(t)
                continue
            j = len(complete)
            complete.append(t)
            members[t] = lists
            total = prod(len(x) for x in lists)
            if max_tuples is not None and total > max_tuples:
                tup = sample_tuples(lists, max_tuples, rng)
                sampled.append(t)
            else:
                grids = np.meshgrid(*lists, indexing="ij")
                tup = np.stack([gr.ravel() for gr in grids], axis=1)
            chunks.append(tup)
            owner.append(np.full(len(tup), j, dtype=np.int64))
        tuples = np.concatenate(chunks) if chunks else np.zeros((0, k), dtype=np.int64)
        tuple_template = np.concatenate(owner) if owner else np.zeros(0, dtype=np.int64)
        out[a] = CounterfactualView(a, groups, complete, tuples, tuple_template, members, incomplete, sampled)
    return out


def block_tables(sub: pd.DataFrame, classes: Sequence[str], probs: np.ndarray, groups: Sequence[str],
                 complete_only: bool = True) -> dict:
    """class -> template x group table of the mean of ``probs[:, class]``
    over each template's examples of the group (``sub``: their template and
    group columns; templates in order of first appearance; ``complete_only``
    drops templates that lack a group): the block scores of the
    significance tests, for every task family."""
    templates = list(pd.unique(sub["template"]))
    groups = list(groups)
    frame = pd.DataFrame(probs, columns=list(classes))
    frame["__t"] = sub["template"].to_numpy()
    frame["__g"] = sub["group"].to_numpy()
    means = frame.groupby(["__t", "__g"], sort=False)[list(classes)].mean()
    # template x group x class array of the means (NaN: the template lacks the group)
    t_at = pd.Index(templates).get_indexer(means.index.get_level_values(0))
    g_at = pd.Index(groups).get_indexer(means.index.get_level_values(1))  # -1: not one of ``groups``
    keep = g_at >= 0
    cube = np.full((len(templates), len(groups), len(classes)), np.nan)
    cube[t_at[keep], g_at[keep]] = means.to_numpy(dtype=float)[keep]
    rows = ~np.isnan(cube).any(axis=(1, 2)) if complete_only else np.ones(len(templates), dtype=bool)
    index = pd.Index([t for t, r in zip(templates, rows) if r], dtype=object, name="template")
    out = {}
    for i, c in enumerate(classes):
        out[c] = pd.DataFrame(cube[rows, :, i], index=index.copy(), columns=pd.Index(groups, dtype=object, name="group"))
    return out
