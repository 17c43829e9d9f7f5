"""Selecting groups of an attribute without copying a suite.

``groups={"gender": ["female", "male"]}`` (``--group gender=female,male`` on
the command line) keeps only those groups of ``gender``, in the order given
(first minus second in two-group metrics); other attributes keep all their
groups. It applies to loaded suites (:func:`select_groups`), to examples and
scored tables (:func:`group_mask`), and to examples tables
(:meth:`~bias_suite.suites.tables.ExamplesTable.select_groups`).

``sample_terms=N`` (``--sample-terms N``) keeps, of every group with more
than N terms of a kind, a seeded sample of N of them, the same in every
template of the suite (:func:`sample_terms`). The verdicts then speak of the
sampled terms: they are the listed terms of that run.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import BiasSuiteError, did_you_mean, option

__all__ = ["check_groups", "check_attributes", "select_groups", "sample_terms", "group_mask", "available_groups",
           "frame_groups"]


def check_groups(groups: Mapping[str, Sequence[str]] | None, available: Mapping[str, Sequence[str]], *,
                 where: str = "the suites") -> dict | None:
    """``groups`` as ``{attribute: [groups]}`` after checking it against the
    ``available`` attributes and groups: an unknown name is an error with a
    did-you-mean suggestion; each attribute needs two distinct groups or more.
    None (or empty) selects nothing."""
    if not groups:
        return None
    if not isinstance(groups, Mapping):
        raise BiasSuiteError(f"groups must be a mapping {{attribute: [group, ...]}}, got {type(groups).__name__}")
    out = {}
    for attribute, wanted in groups.items():
        if attribute not in available:
            raise BiasSuiteError(f"{option('groups=', '--group')}: unknown attribute {attribute!r} ({where} have "
                                 f"{list(available)}){did_you_mean(attribute, available)}")
        wanted = [wanted] if isinstance(wanted, str) else list(wanted)
        have = list(available[attribute])
        for g in wanted:
            if g not in have:
                raise BiasSuiteError(f"{option('groups=', '--group')}: attribute {attribute!r} has no group {g!r} "
                                     f"(its groups: {have}){did_you_mean(g, have)}")
        dup = sorted({g for g in wanted if wanted.count(g) > 1})
        if dup:
            raise BiasSuiteError(f"{option('groups=', '--group')}: group(s) {dup} of {attribute!r} listed twice")
        if len(wanted) < 2:
            raise BiasSuiteError(f"{option('groups=', '--group')}: {attribute!r} needs two groups or more to compare, "
                                 f"got {wanted}")
        out[attribute] = wanted
    return out


def check_attributes(suites: Iterable, attributes) -> None:
    """Every attribute of ``attributes`` (``--attribute``) is one of the
    suites'; else an error with a did-you-mean suggestion (an unknown one
    would silently expand to nothing)."""
    if not attributes:
        return
    have = available_groups(suites)
    for a in [attributes] if isinstance(attributes, str) else list(attributes):
        if a not in have:
            raise BiasSuiteError(f"{option('attributes=', '--attribute')}: unknown attribute {a!r} (the suites have "
                                 f"{list(have)}){did_you_mean(a, have)}")


def available_groups(suites: Iterable) -> dict:
    """``{attribute: [groups]}`` over loaded suites (file order, first seen first)."""
    out: dict = {}
    for s in suites:
        for a, terms in s.identity.items():
            have = out.setdefault(a, [])
            have.extend(g for g in terms.groups if g not in have)
    return out


def select_groups(suites: Sequence, groups: Mapping[str, Sequence[str]] | None) -> list:
    """The suites with only the selected groups of each attribute named in
    ``groups`` (in that order); the suite objects given are not changed."""
    suites = list(suites)
    groups = check_groups(groups, available_groups(suites))
    if not groups:
        return suites
    out = []
    for s in suites:
        identity = {a: (t.restrict([g for g in groups[a] if g in t.groups]) if a in groups else t)
                    for a, t in s.identity.items()}
        out.append(dataclasses.replace(s, identity=identity))
    return out


def sample_terms(suites: Sequence, n: int | None, seed: int = 0) -> list:
    """The suites with at most ``n`` terms of each kind per group: a group
    with more keeps a sample of ``n`` drawn without replacement with
    ``seed`` (and the attribute's and group's names), in file order, the
    same in every template and every suite that shares the identity file.
    Where a group's kinds list the same number of terms (parallel forms:
    'Muslim', 'a Muslim', 'Muslims'), one sample of positions serves every
    kind, so that the forms of one term stay together. None keeps every
    term; the suite objects given are not changed."""
    suites = list(suites)
    if n is None:
        return suites
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise BiasSuiteError(f"{option('sample_terms=', '--sample-terms')}: needs a whole number of terms of 1 or "
                             f"more, got {n!r}")
    out = []
    for s in suites:
        identity = {}
        for a, t in s.identity.items():
            terms = {g: _sample_group(t.terms[g], int(n), seed, a, g) for g in t.groups}
            identity[a] = dataclasses.replace(t, terms=terms)
        out.append(dataclasses.replace(s, identity=identity))
    return out


def _sample_group(kinds: Mapping[str, Sequence[str]], n: int, seed: int, attribute: str, group: str) -> dict:
    """One group's ``{kind: terms}`` with at most ``n`` terms of each kind."""
    import zlib

    rng = np.random.default_rng([seed, zlib.crc32(attribute.encode()), zlib.crc32(group.encode())])

    def keep(size: int):
        return sorted(rng.choice(size, n, replace=False)) if size > n else range(size)

    sizes = {len(v) for v in kinds.values()}
    shared = keep(sizes.pop()) if len(sizes) == 1 else None  # parallel forms: one sample of positions
    return {k: [v[i] for i in (shared if shared is not None else keep(len(v)))] for k, v in kinds.items()}


def frame_groups(frame: pd.DataFrame) -> dict:
    """``{attribute: [groups]}`` of an examples or scored table, in order of
    first appearance."""
    if frame.empty:
        return {}
    pairs = frame[["attribute", "group"]].drop_duplicates()
    out: dict = {}
    for a, g in zip(pairs["attribute"], pairs["group"]):
        out.setdefault(a, []).append(g)
    return out


def group_mask(frame: pd.DataFrame, groups: Mapping[str, Sequence[str]] | None, *, where: str = "the data") -> np.ndarray:
    """Boolean mask of the rows of an examples or scored table that the
    selection keeps (every row when ``groups`` is empty); names are checked
    against the table's attributes and groups."""
    groups = check_groups(groups, frame_groups(frame), where=where)
    if not groups:
        return np.ones(len(frame), dtype=bool)
    attr = frame["attribute"].to_numpy(dtype=object)
    grp = frame["group"].to_numpy(dtype=object)
    keep = ~np.isin(attr, list(groups))
    for a, wanted in groups.items():
        keep |= (attr == a) & np.isin(grp, wanted)
    return keep
