"""Identity terms as the bootstrap's second sample (the two-way cluster bootstrap).

A claim about a group ("low-income countries are missed more often") is a
claim about the group's terms in general, not only about the few countries,
names or pronouns a suite happens to list: the terms are a sample from the
terms the group could have had, just as the templates are a sample of the
sentences. When a group has several terms, the bootstrap therefore
resamples them too (docs/statistics.md, "Templates and terms").

Per attribute, each resample b gets template weights ``W[b, j]``
(:func:`bias_suite.stats.bootstrap.template_weights`) and term weights
``T[b, t]``: within each group, its n_g terms are drawn n_g times with
replacement and counted (a group with one term keeps weight 1). An example
of template j and term t counts ``W[b, j] * T[b, t]`` times.

A term is a (group, term) pair of the attribute: the same string in two
groups is two terms. Rows without a term id (null ``term``) count as one
unknown term of their group.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..exceptions import MetricError

__all__ = ["AttributeTerms", "attribute_terms", "term_weights", "draw_term_weights", "resample_terms_option",
           "RESAMPLE_TERMS"]

#: the values of ``resample_terms`` (CLI: auto, yes, no)
RESAMPLE_TERMS = ("auto", True, False)


def resample_terms_option(value) -> str | bool:
    """``"auto"``, True or False from what a caller or the command line gives
    ("auto", "yes"/"no", "true"/"false", booleans); anything else is an error."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower()
    if text == "auto":
        return "auto"
    if text in ("yes", "true", "on", "1"):
        return True
    if text in ("no", "false", "off", "0"):
        return False
    raise MetricError(f"resample_terms must be 'auto', 'yes' or 'no' (or True/False), got {value!r}")


@dataclass(frozen=True)
class AttributeTerms:
    """The terms of one attribute.

    codes : (n,) the term index of each of the attribute's rows (rows in
        frame order), terms numbered in order of first appearance.
    group : (n_terms,) the group name of each term.
    name : (n_terms,) the term string (None: rows without a term id).
    """

    attribute: str
    codes: np.ndarray
    group: np.ndarray
    name: np.ndarray

    @property
    def n_terms(self) -> int:
        return len(self.group)

    @property
    def known(self) -> bool:
        """Whether every row has a term id."""
        return not any(n is None for n in self.name)

    def several(self) -> bool:
        """Whether some group has more than one term."""
        return len(pd.unique(pd.Series(self.group, dtype=object))) < self.n_terms

    def group_codes(self, groups) -> np.ndarray:
        """(n_terms,) each term's group as an index into ``groups``."""
        index = {g: i for i, g in enumerate(groups)}
        return np.array([index[g] for g in self.group], dtype=np.int64)


def attribute_terms(frame: pd.DataFrame, attribute: str) -> AttributeTerms:
    """The terms of ``attribute`` in ``frame`` (see :class:`AttributeTerms`)."""
    rows = np.flatnonzero(frame["attribute"].to_numpy(dtype=object) == attribute)
    grp = frame["group"].to_numpy(dtype=object)[rows]
    if "term" in frame.columns:
        term = frame["term"].to_numpy(dtype=object)[rows]
    else:
        term = np.full(len(rows), None, dtype=object)
    gcode, gnames = pd.factorize(pd.Series(grp, dtype=object), sort=False)
    tcode, _ = pd.factorize(pd.Series(term, dtype=object), sort=False)  # -1 for null terms
    key = gcode.astype(np.int64) * (int(tcode.max()) + 2 if tcode.size else 1) + (tcode + 1)
    codes, first = pd.factorize(pd.Series(key), sort=False)
    at = np.zeros(len(first), dtype=np.int64)
    at[codes[::-1]] = np.arange(len(codes))[::-1]  # first row of each term
    name = np.array([None if pd.isna(v) else v for v in term[at]], dtype=object) if len(at) else np.zeros(0, object)
    return AttributeTerms(attribute, np.asarray(codes, dtype=np.int64), np.asarray(grp[at], dtype=object), name)


def term_weights(term_group: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """(B, n_terms) term counts: for each group with n_g >= 2 terms (groups
    in order of their first term), n_g uniform draws among its terms per
    resample (``rng.integers``), counted; terms of one-term groups weigh 1."""
    term_group = np.asarray(term_group)
    nT = len(term_group)
    T = np.ones((B, nT), dtype=np.int64)
    codes, _ = pd.factorize(pd.Series(term_group, dtype=object), sort=False)
    for g in range(int(codes.max()) + 1 if nT else 0):
        members = np.flatnonzero(codes == g)
        n = members.size
        if n < 2:
            continue
        idx = rng.integers(n, size=(B, n)) + (np.arange(B) * n)[:, None]
        T[:, members] = np.bincount(idx.ravel(), minlength=B * n).reshape(B, n)
    return T


def term_generator(seed) -> np.random.Generator:
    """The generator of the term draws: a child of ``seed``'s seed sequence,
    so the template draws (``default_rng(seed)``) stay what they are."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])


def draw_term_weights(data, B: int, seed, mode="auto") -> dict:
    """{attribute: (AttributeTerms, T or None)} for every attribute of the
    data in order of first appearance; T (B, n_terms) where terms are
    resampled (``mode`` "auto" or True and some group has several terms),
    else None. The draws for all attributes come from one
    :func:`term_generator`, attribute after attribute."""
    mode = resample_terms_option(mode)
    rng = term_generator(seed)
    out = {}
    for a in data.attributes():
        terms = attribute_terms(data.frame, a)
        if mode is True and not terms.known:
            raise MetricError(f"resample_terms=yes needs a term for every example; attribute {a!r} has examples "
                              "without one (column 'term'); use resample_terms=auto or no")
        T = term_weights(terms.group, B, rng) if mode is not False and terms.several() else None
        out[a] = (terms, T)
    return out
