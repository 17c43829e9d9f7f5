"""Weighted item sets of the closed-form bootstrap's set metrics (W1, AEG,
the AUCs): :class:`ClassItems`, the probability items of one attribute and
class sorted once, with integer item weights (template and term weights,
template-balance multipliers, :func:`item_multipliers`) per chunk of
resamples, and the Mann-Whitney U and W1 sums over them, which the
compiled loops of :mod:`bias_suite.stats.bootstrap.kernels` take.
"""
from __future__ import annotations

import numpy as np

from ...exceptions import MetricError
from ...metrics.generalized import NEG, POS, UNLABELLED
from .kernels import by_resamples, draws_for_kernels, u2_cells, w1_groups, w1_pairs
from .prepared import Prepared

#: the item categories of each selection of a set score
CATS = {"all": (POS, NEG, UNLABELLED), "pos": (POS,), "neg": (NEG,)}



# ------------------------------------------------------------ set metrics
class ClassItems:
    """The probability items of one attribute and class, sorted by f(x, c)
    once; per chunk of resamples, integer item weights in that order.

    Static structures (positions of a selection, the kernels' item arrays,
    tie blocks) are built once per class; per chunk, what several metrics
    read (the U sums, the pairs' W1) is computed once."""

    def __init__(self, prep: Prepared, c: int, integer: bool = True):
        ad = prep.ad
        x = np.asarray(ad.item_P[:, c], dtype=np.float64)
        order = np.argsort(x, kind="stable")
        self.x = x[order]
        self.g = ad.item_g()[order]
        yy = ad.item_y[order]
        self.cat = np.where(yy < 0, UNLABELLED, np.where(yy == c, POS, NEG))
        self.tpl = prep.tpl[ad.item_row[order]]
        self.term = None if prep.term is None else prep.term[ad.item_row[order]]
        self.prep = prep
        self.k, self.J, self.m = ad.k, prep.J, self.x.size
        # template balance: integer item multipliers L / (the group's examples in the template), L their
        # least common multiple, so U and the cumulative counts stay exact in integers (``integer=False``:
        # the weights themselves, for sums that need no exactness)
        if integer or ad.row_weight is None:
            self.r = item_multipliers(ad.row_weight, ad.item_row[order])
        else:
            self.r = np.asarray(ad.row_weight, dtype=np.float64)[ad.item_row[order]]
        self.Tc = None
        self._static: dict = {}
        self._chunk: dict = {}

    # -- static (per class) helpers
    def memo(self, key, fn):
        """``fn()`` once per class (static structures)."""
        if key not in self._static:
            self._static[key] = fn()
        return self._static[key]

    def chunk_memo(self, key, fn):
        """``fn()`` once per chunk of resamples."""
        if key not in self._chunk:
            self._chunk[key] = fn()
        return self._chunk[key]


    def positions(self, cats) -> np.ndarray:
        """Items of a selection, in score order."""
        return self.memo(("p", cats), lambda: np.flatnonzero(np.isin(self.cat, cats)))

    def positions_by_group(self, cats):
        """Items of a selection in (group, score) order, and the group segments."""
        def make():
            p = self.positions(cats)
            p = p[np.argsort(self.g[p], kind="stable")]
            sizes = np.bincount(self.g[p], minlength=self.k)
            return p, np.cumsum(sizes) - sizes, sizes
        return self.memo(("pg", cats), make)

    def cells(self, cats) -> np.ndarray:
        """(J, k) item counts of a selection per template and group (with
        the items' multipliers); (J, n_terms) per template and term once
        terms are resampled."""
        terms = self.Tc is not None
        by, n = (self.term, self.prep.n_terms) if terms else (self.g, self.k)

        def make():
            p = self.positions(cats)
            w = None if self.r is None else self.r[p].astype(np.float64)
            return np.bincount(self.tpl[p] * n + by[p], weights=w, minlength=self.J * n).reshape(self.J, n)
        return self.memo(("cells", terms, cats), make)

    # -- per chunk
    def start(self, Wc: np.ndarray, Tc: np.ndarray | None = None):
        """A new chunk of resamples: ``Wc`` (Bc, J) int32 template weights,
        ``Tc`` (Bc, n_terms) int32 term weights (None: terms not resampled)."""
        self.Wc, self.Tc = Wc, Tc
        self.Wf = Wc.astype(np.float64)
        self.Tf = None if Tc is None else Tc.astype(np.float64)
        # the draws as the compiled loops take them (resamples last): float64 for the W1 sums and the
        # pairs inside templates, int64 for the exact U sums
        self.draws = draws_for_kernels(Wc, Tc, np.float64)
        self.draws_exact = draws_for_kernels(Wc, Tc, np.int64)
        self._chunk = {}

    def n(self, cats) -> np.ndarray:
        """(Bc, k) weighted item counts of a selection per group."""
        key = ("n", cats)
        if key not in self._chunk:
            if self.Tc is None:
                self._chunk[key] = self.Wf @ self.cells(cats)
            else:  # per term, then per group
                self._chunk[key] = ((self.Wf @ self.cells(cats)) * self.Tf) @ self.prep.term_onehot()
        return self._chunk[key]

    def sums(self, cats) -> np.ndarray:
        """(Bc, k) weighted sums of f(x, c) over a selection's items per group (as :meth:`n` counts them)."""
        key = ("sum", cats)
        if key not in self._chunk:
            terms = self.Tc is not None
            by, n = (self.term, self.prep.n_terms) if terms else (self.g, self.k)

            def make():
                p = self.positions(cats)
                w = self.x[p] if self.r is None else self.x[p] * self.r[p]
                return np.bincount(self.tpl[p] * n + by[p], weights=w, minlength=self.J * n).reshape(self.J, n)
            cells = self.memo(("sum_cells", terms, cats), make)
            if not terms:
                self._chunk[key] = self.Wf @ cells
            else:
                self._chunk[key] = ((self.Wf @ cells) * self.Tf) @ self.prep.term_onehot()
        return self._chunk[key]

    # -- pairs inside one template (the AEG correction)
    def within(self, cats):
        """Per template j: ``M[j, a, b]`` = U(items of group a over items of
        group b) among the pairs of template j, and ``N[j, a]`` the items of
        group a in j (both with the items' multipliers); cached per class."""
        def make():
            p = self.positions(cats)
            J, k = self.J, self.k
            tp, gp, xp = self.tpl[p], self.g[p], self.x[p]
            rp = np.ones(p.size) if self.r is None else self.r[p].astype(np.float64)
            order = np.lexsort((xp, tp))  # by template, then score
            tp, gp, xp, rp = tp[order], gp[order], xp[order], rp[order]
            N = np.zeros((J, k))
            np.add.at(N, (tp, gp), rp)
            M = np.zeros((J, k, k))
            if p.size == 0:
                return M, N
            new_block = np.r_[True, (xp[1:] != xp[:-1]) | (tp[1:] != tp[:-1])]
            block = np.cumsum(new_block) - 1
            starts = np.flatnonzero(new_block)
            ends = np.r_[starts[1:], xp.size] - 1
            seg_start = np.r_[True, tp[1:] != tp[:-1]]
            for a in range(k):
                wa = np.where(gp == a, rp, 0.0)
                cum = np.cumsum(wa)
                before_seg = (cum - wa)[np.flatnonzero(seg_start)][np.cumsum(seg_start) - 1]
                leq = cum[ends[block]] - before_seg          # a-weight at or below each item, in its template
                less = leq - (cum[ends[block]] - (cum - wa)[starts[block]])  # strictly below
                above = N[tp, a] - leq
                val = rp * (above + 0.5 * (leq - less))       # U contribution of each item as the lower one
                np.add.at(M[:, a, :], (tp, gp), val)
            return M, N
        return self.memo(("within", cats), make)

    def within_excess(self):
        """(Bc, J): W_j^2 - W_j, how often template j's own pairs are counted
        once too many when it is drawn W_j times (copies paired with copies)."""
        key = ("excess",)
        if key not in self._chunk:
            self._chunk[key] = self.Wf * self.Wf - self.Wf
        return self._chunk[key]

    # -- the compiled loops' inputs
    def _item_arrays(self, key, p):
        """Template, term and multiplier of the items ``p`` (per class)."""
        if self.r is not None and not np.issubdtype(self.r.dtype, np.integer):
            raise MetricError("the compiled U and W1 sums take integer multipliers (ClassItems(integer=True))")

        def make():
            n = p.size
            return (np.ascontiguousarray(self.tpl[p], dtype=np.int64),
                    np.zeros(n, np.int64) if self.term is None else np.ascontiguousarray(self.term[p], dtype=np.int64),
                    np.ones(n, np.int32) if self.r is None else np.ascontiguousarray(self.r[p], dtype=np.int32))
        return self.memo(("items", key), make)

    # -- W1 = sum_i |F_Q(x_i) - F_P(x_i)| (x_{i+1} - x_i) over the sorted items
    def _w1_static(self, cats):
        def make():
            p = self.positions(cats)
            dx = np.zeros(p.size)
            if p.size > 1:
                dx[:-1] = np.diff(self.x[p])
            return p, dx, np.ascontiguousarray(self.g[p], dtype=np.int64)
        return self.memo(("w1", cats), make)

    def w1_pairs(self, cats) -> np.ndarray:
        """(Bc, pairs) W1 between the two groups of every pair (in
        ``ad.pairs()`` order) within a selection; NaN where a side weighs 0."""
        key = ("w1_pairs", cats)
        if key not in self._chunk:
            p, _, g = self._w1_static(cats)

            def make():
                pairs = self.prep.ad.pairs()
                pa = np.array([a for a, _ in pairs], dtype=np.int64)
                pb = np.array([b for _, b in pairs], dtype=np.int64)
                ends = np.r_[pa, pb]  # each pair listed under both of its groups
                pair_of = np.argsort(ends, kind="stable") % max(len(pairs), 1)
                start = np.r_[0, np.cumsum(np.bincount(ends, minlength=self.k))]
                return (np.ascontiguousarray(self.x[p]), pa, pb, start.astype(np.int64), pair_of.astype(np.int64))
            x, pa, pb, start, pair_of = self.memo(("w1_pairs", cats), make)
            out = by_resamples(w1_pairs, *self.draws, *self._item_arrays(("sel", cats), p), g, x,
                               self.k, pa, pb, start, pair_of, items=p.size)
            self._chunk[key] = np.ascontiguousarray(out.T)
        return self._chunk[key]

    def w1_groups(self, cats, background: str) -> np.ndarray:
        """(Bc, k): W1(background, group t) for every group t, background
        "all" (the whole selection) or "rest" (the selection minus t)."""
        p, dx, g = self._w1_static(cats)
        out = by_resamples(w1_groups, *self.draws, *self._item_arrays(("sel", cats), p), g, dx, self.k,
                           background == "rest", items=p.size)
        return np.ascontiguousarray(out.T)

    # -- Mann-Whitney U(H over L) = #{h > l} + 1/2 #{h = l}, exact in integers
    def _u2_static(self, p, inL, inH, seg=None, cells=None):
        """The kernel's item arrays of a U sum (built once per class): low
        and high flags, the end of each item's tie block, where segments
        start and the output cells."""
        n = p.size
        new_segment = np.zeros(n, np.bool_)
        if seg is not None:
            starts, sizes = seg
            new_segment[starts[sizes > 0]] = True
            cell, n_cells = np.repeat(np.arange(starts.size, dtype=np.int64), sizes), starts.size
        else:
            cell, n_cells = (np.zeros(n, np.int64), 1) if cells is None else (cells[0].astype(np.int64), cells[1])
        low = np.ascontiguousarray(np.broadcast_to(np.asarray(inL, dtype=np.bool_), (n,)))
        high = np.ascontiguousarray(np.broadcast_to(np.asarray(inH, dtype=np.bool_), (n,)))
        return low, high, block_ends(self.x[p], new_segment), new_segment, np.ascontiguousarray(cell), int(n_cells)

    def _u2(self, key, p, static) -> np.ndarray:
        """2 U(H over L) of the items ``p`` per output cell (:meth:`_u2_static`),
        exact in 64-bit integers: a cell's sum is at most 2 S^2 for S the
        items' summed weight in a resample, which is checked first."""
        Wt, Tt = self.draws_exact
        tpl, term, mult = self._item_arrays(key, p)
        per_template = self.memo(("mult_sum", key), lambda: np.bincount(tpl, weights=mult, minlength=self.J))
        S = float((per_template @ Wt).max()) if Wt.size else 0.0
        if Tt.size:
            S *= max(int(Tt.max()), 1)
        if 2 * S * S >= 2.0**62:
            raise MetricError(f"items of summed weight up to {S:.3g} in a resample overflow the exact U sums "
                              "(bootstrap(..., method='generic'))")
        out = by_resamples(u2_cells, Wt, Tt, tpl, term, mult, *static, items=p.size)
        return np.ascontiguousarray(out.T, dtype=np.float64)

    def u_by_cat(self, catsL) -> np.ndarray:
        """(Bc, 3, k): U(items of category c and group t over L of all
        groups), for every category at once, from one cumulative count of L
        over all items in score order."""
        key = ("u_by_cat", catsL)
        if key not in self._chunk:
            def make():
                p = np.arange(self.m)
                inL = np.isin(self.cat, catsL)
                return p, self._u2_static(p, inL, True, cells=(self.cat * self.k + self.g, 3 * self.k))
            p, static = self.memo(key, make)
            u2 = self._u2(("sel", CATS["all"]), p, static)
            self._chunk[key] = u2.reshape(-1, 3, self.k) / 2.0
        return self._chunk[key]

    def u_over_all(self, catsH, catsL) -> np.ndarray:
        """(Bc, k): U(H within group t over L of all groups)."""
        return self.u_by_cat(catsL)[:, list(catsH), :].sum(axis=1)

    def u_grp(self, catsH, catsL) -> np.ndarray:
        """(Bc, k): U(H within t over L within t), all groups in one pass;
        U(A over A) = |A|^2 / 2 needs no data."""
        if catsH == catsL:
            return self.n(catsH) ** 2 / 2.0
        key = ("u_grp", catsH, catsL)
        if key not in self._chunk:
            def make():
                union = tuple(sorted(set(catsH) | set(catsL)))
                p, starts, sizes = self.positions_by_group(union)
                inL = np.isin(self.cat[p], catsL)
                inH = np.isin(self.cat[p], catsH)
                return union, p, self._u2_static(p, inL, inH, seg=(starts, sizes))
            union, p, static = self.memo(key, make)
            self._chunk[key] = self._u2(("grp", union), p, static) / 2.0
        return self._chunk[key]

    def u_pair(self, catsH, catsL, a, b) -> np.ndarray:
        """(Bc,): U(H within group a over L within group b)."""
        key = ("u_pair", catsH, catsL, a, b)

        def make():
            p_all = self.positions(tuple(sorted(set(catsH) | set(catsL))))
            p = p_all[(self.g[p_all] == a) | (self.g[p_all] == b)]
            inL = np.isin(self.cat[p], catsL) & (self.g[p] == b)
            inH = np.isin(self.cat[p], catsH) & (self.g[p] == a)
            return p, self._u2_static(p, inL, inH)
        p, static = self.memo(key, make)
        return self._u2(key, p, static)[:, 0] / 2.0


def block_ends(x: np.ndarray, new_segment: np.ndarray | None = None) -> np.ndarray:
    """The last item of each item's block of equal scores (``x`` sorted
    within segments; blocks never cross a segment start ``new_segment``):
    what the compiled U sums read at a block's first item."""
    n = x.size
    if n == 0:
        return np.zeros(0, np.int64)
    new = np.r_[True, x[1:] != x[:-1]]
    if new_segment is not None:
        new |= new_segment
    starts = np.flatnonzero(new)
    return (np.r_[starts[1:], n] - 1)[np.cumsum(new) - 1].astype(np.int64)


#: the largest common multiple of the template-balance denominators the closed form takes (above it,
#: the cumulative integer counts could overflow; such metrics take the generic path)
MAX_MULTIPLE = 840


def item_multipliers(row_weight, item_row) -> np.ndarray | None:
    """Integer multipliers proportional to the example weights 1/m of the
    items (None: all weights 1), or an error when their least common
    multiple exceeds :data:`MAX_MULTIPLE`."""
    if row_weight is None:
        return None
    m = np.rint(1.0 / np.asarray(row_weight, dtype=np.float64)).astype(np.int64)
    L = int(np.lcm.reduce(np.unique(m))) if m.size else 1
    if L > MAX_MULTIPLE:
        raise MetricError(f"template balance needs a common multiple of {L} (above {MAX_MULTIPLE})")
    return (L // m)[item_row].astype(np.int32)
