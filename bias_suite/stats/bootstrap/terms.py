"""Identity terms as the bootstrap's second sample (the two-way cluster bootstrap).

A claim about a group ("low-income countries are missed more often") is a
claim about the group's terms in general, not only about the few countries,
names or pronouns a suite happens to list: the terms are a sample from the
terms the group could have had, just as the templates are a sample of the
sentences. When a group has several terms, the bootstrap therefore
resamples them too (docs/statistics.md, "Templates and terms").

Per attribute, each resample b gets template weights ``W[b, j]``
(:func:`bias_suite.stats.bootstrap.template_weights`) and term weights
``T[b, t]``: within each block of interchangeable terms, its n terms are
drawn n times with replacement and counted (a block of one term keeps
weight 1). An example of template j and term t counts ``W[b, j] * T[b, t]``
times.

A term is a (group, term) pair of the attribute: the same string in two
groups is two terms. Rows without a term id (null ``term``) count as one
unknown term of their group.

Blocks: the terms of a group that fill the same templates are a sample of
the group's terms *within* those templates, and are resampled together. A
term that never shares a template with another term of its group (the
bundled suites' "Muslim" in singular slots and "Muslims" in plural ones,
or a design that puts one randomly chosen name in each template) is nested
in its templates, and resampling templates already resamples it; it keeps
weight 1. Formally, the blocks of a group are the connected components of
its terms, two terms being linked when some template holds both.

Which blocks (``resample_terms``): ``True`` every block of several terms;
``False`` none; ``"auto"`` (the default) the blocks whose terms the model
tells apart, by a two-way analysis of variance of its scores (templates x
terms, the templates that hold every term of the block, one F test of the
terms per class, Bonferroni over the classes) at ``TERM_TEST_LEVEL``. Terms
the model treats alike add nothing to a claim's uncertainty but noise the
template resampling already counts: resampling them anyway counts the
examples' own noise twice and widens every interval (docs/statistics.md,
"Templates and terms"). A block that cannot be tested (fewer than two
templates with all its terms, or no per-example scores) is resampled. A
mapping {attribute: blocks} gives the selection itself (a comparison of two
models resamples the blocks either model's scores select, so that both get
the same resamples).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...exceptions import MetricError

__all__ = ["AttributeTerms", "attribute_terms", "term_weights", "draw_term_weights", "resample_terms_option",
           "RESAMPLE_TERMS", "TERM_TEST_LEVEL", "term_test", "selected_blocks", "common_selection", "resampled_groups"]

#: "auto" resamples a block's terms when a test of the model's scores tells them apart at this level
TERM_TEST_LEVEL = 0.2

#: the values of ``resample_terms`` (CLI: auto, yes, no)
RESAMPLE_TERMS = ("auto", True, False)


def resample_terms_option(value) -> str | bool:
    """``"auto"``, True or False from what a caller or the command line gives
    ("auto", "yes"/"no", "true"/"false", booleans); anything else is an error."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, dict):  # a selection of blocks per attribute (selected_blocks)
        return {str(a): tuple(int(b) for b in blocks) for a, blocks in value.items()}
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
    block: np.ndarray | None = None  # (n_terms,) block of each term (terms that share templates)

    @property
    def n_terms(self) -> int:
        return len(self.group)

    @property
    def known(self) -> bool:
        """Whether every row has a term id."""
        return not any(n is None for n in self.name)

    def several(self) -> bool:
        """Whether some block holds more than one term (some group has
        several terms in one template)."""
        return self.block is not None and len(np.unique(self.block)) < self.n_terms

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
    codes = np.asarray(codes, dtype=np.int64)
    tpl, _ = pd.factorize(pd.Series(frame["template"].to_numpy(dtype=object)[rows], dtype=object), sort=False)
    block = _blocks(codes, tpl.astype(np.int64) * (int(gcode.max()) + 1 if gcode.size else 1) + gcode, len(first))
    return AttributeTerms(attribute, codes, np.asarray(grp[at], dtype=object), name, block)


def _blocks(term: np.ndarray, cell: np.ndarray, n_terms: int) -> np.ndarray:
    """(n_terms,) block of each term: connected components of the terms,
    two terms linked when they share a cell (a template's examples of one
    group); blocks numbered in order of their first term."""
    label = np.arange(n_terms)
    if term.size == 0:
        return label
    cells, cell_id = np.unique(cell, return_inverse=True)
    while True:  # propagate the smallest label through cells and terms until nothing changes
        low = np.full(cells.size, n_terms)
        np.minimum.at(low, cell_id, label[term])
        new = label.copy()
        np.minimum.at(new, term, low[cell_id])
        if np.array_equal(new, label):
            break
        label = new
    return pd.factorize(label, sort=False)[0].astype(np.int64)


def term_weights(term_block: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """(B, n_terms) term counts: for each block of n >= 2 terms (blocks in
    order of their first term), n uniform draws among its terms per
    resample (``rng.integers``), counted; terms alone in their block weigh 1."""
    term_block = np.asarray(term_block)
    nT = len(term_block)
    T = np.ones((B, nT), dtype=np.int64)
    codes, _ = pd.factorize(pd.Series(term_block, dtype=object), sort=False)
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


def term_test(data, attribute: str, terms: AttributeTerms | None = None) -> np.ndarray:
    """(n_blocks,) per block of several terms, the p-value of "the model's
    scores do not depend on the term" (NaN: a block of one term, or one
    that cannot be tested): two-way analysis of variance without
    replication on the mean score of each (template, term) cell, templates
    that hold every term of the block, F = MS(terms) / MS(residual) per
    class, the smallest p times the number of classes tested. Scores equal
    up to round-off are equal (no residual and no term effect: p = 1; no
    residual and a term effect: p = 0)."""
    from scipy.stats import f as f_dist

    from ...families import family_of

    terms = attribute_terms(data.frame, attribute) if terms is None else terms
    n_blocks = int(terms.block.max()) + 1 if terms.n_terms else 0
    out = np.full(n_blocks, np.nan)
    rows = np.flatnonzero(data.frame["attribute"].to_numpy(dtype=object) == attribute)
    fam = family_of(data)
    scores = [fam.example_scores(data, c) for c in getattr(data, "classes", ())]
    scores = [np.asarray(v, float)[rows] for v in scores if v is not None]
    if not scores:
        return out
    S = np.column_stack(scores)  # (rows, classes)
    tpl, _ = pd.factorize(pd.Series(data.frame["template"].to_numpy(dtype=object)[rows], dtype=object), sort=False)
    for b in range(n_blocks):
        members = np.flatnonzero(terms.block == b)
        n = members.size
        if n < 2:
            continue
        place = np.full(terms.n_terms, -1)
        place[members] = np.arange(n)
        on = place[terms.codes] >= 0
        t_codes, t_index = np.unique(tpl[on], return_inverse=True)
        cell = t_index * n + place[terms.codes[on]]
        cnt = np.bincount(cell, minlength=t_codes.size * n).reshape(t_codes.size, n)
        Y = np.stack([np.bincount(cell, weights=S[on, c], minlength=t_codes.size * n) for c in range(S.shape[1])],
                     axis=-1).reshape(t_codes.size, n, S.shape[1])
        full = (cnt > 0).all(axis=1)
        Y = Y[full] / cnt[full][:, :, None]
        Y = Y[:, :, np.isfinite(Y).all(axis=(0, 1))]
        J = Y.shape[0]
        if J < 2 or Y.shape[2] == 0:
            continue
        resid = Y - Y.mean(axis=1, keepdims=True) - Y.mean(axis=0, keepdims=True) + Y.mean(axis=(0, 1), keepdims=True)
        ss_term = J * ((Y.mean(axis=0) - Y.mean(axis=(0, 1))) ** 2).sum(axis=0)
        ss_res = (resid ** 2).sum(axis=(0, 1))
        tiny = 1e-20 * J * n
        df1, df2 = n - 1, (J - 1) * (n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            F = (ss_term / df1) / (ss_res / df2)
        p = np.where(ss_res <= tiny, np.where(ss_term <= tiny, 1.0, 0.0), f_dist.sf(F, df1, df2))
        out[b] = min(1.0, float(np.min(p)) * p.size)
    return out


def selected_blocks(data, mode="auto") -> dict:
    """{attribute: blocks whose terms are resampled} under ``mode`` (module doc)."""
    mode = resample_terms_option(mode)
    return {a: _chosen(data, a, attribute_terms(data.frame, a), mode) for a in data.attributes()}


def _chosen(data, attribute: str, terms: AttributeTerms, mode) -> tuple:
    """The blocks of one attribute's ``terms`` resampled under ``mode`` (an option already read)."""
    if mode is False:
        return ()
    if isinstance(mode, dict):
        return tuple(mode.get(attribute, ()))
    several = np.flatnonzero(np.bincount(terms.block) >= 2) if terms.n_terms else np.zeros(0, np.int64)
    if mode is True:
        return tuple(int(b) for b in several)
    p = term_test(data, attribute, terms)[several]
    return tuple(int(b) for b in several[~(p >= TERM_TEST_LEVEL)])  # NaN (untestable): resampled


def resampled_groups(data, mode="auto") -> dict:
    """{attribute: the groups whose terms are resampled under ``mode``}
    (what ``run.json`` records as ``terms_resampled``)."""
    mode = resample_terms_option(mode)
    out = {}
    for a in data.attributes():
        terms = attribute_terms(data.frame, a)
        on = np.isin(terms.block, np.asarray(_chosen(data, a, terms, mode), dtype=np.int64))
        out[a] = list(dict.fromkeys(terms.group[on].tolist()))
    return out


def common_selection(datas, mode="auto") -> dict:
    """The blocks to resample for several models' scored data of the same
    examples, so that all get the same resamples: under "auto" the blocks
    any of them selects; other modes as they are."""
    mode = resample_terms_option(mode)
    if mode != "auto":
        return mode
    out: dict = {}
    for d in datas:
        for a, blocks in selected_blocks(d, mode).items():
            out[a] = tuple(sorted(set(out.get(a, ())) | set(blocks)))
    return out


def draw_term_weights(data, B: int, seed, mode="auto") -> dict:
    """{attribute: (AttributeTerms, T or None)} for every attribute of the
    data in order of first appearance; T (B, n_terms) where some block's
    terms are resampled (``mode``: see the module doc), with weight 1 for
    the terms of the other blocks; else None. The draws for all attributes
    come from one :func:`term_generator`, attribute after attribute, and do
    not depend on which blocks are selected (every block of several terms
    is drawn), so two models with the same selection get the same draws."""
    mode = resample_terms_option(mode)
    rng = term_generator(seed)
    out = {}
    for a in data.attributes():
        terms = attribute_terms(data.frame, a)
        if mode is True and not terms.known:
            raise MetricError(f"resample_terms=yes needs a term for every example; attribute {a!r} has examples "
                              "without one (column 'term'); use resample_terms=auto or no")
        T = term_weights(terms.block, B, rng) if mode is not False and terms.several() else None
        if T is not None:
            keep = np.isin(terms.block, np.asarray(_chosen(data, a, terms, mode), dtype=np.int64))
            if not keep.any():
                T = None
            else:
                T[:, ~keep] = 1
        out[a] = (terms, T)
    return out
