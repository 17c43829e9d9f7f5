"""Weighted item sets of the closed-form bootstrap's set metrics (W1, AEG,
the AUCs): :class:`ClassItems`, the probability items of one attribute and
class sorted once, with integer item weights (template and term weights,
template-balance multipliers, :func:`item_multipliers`) per chunk of
resamples, and the Mann-Whitney U and W1 sums over them.
"""
from __future__ import annotations

import numpy as np

from ...exceptions import MetricError
from ...metrics.generalized import NEG, POS, UNLABELLED
from .prepared import Prepared

#: the item categories of each selection of a set score
CATS = {"all": (POS, NEG, UNLABELLED), "pos": (POS,), "neg": (NEG,)}



# ------------------------------------------------------------ set metrics
class ClassItems:
    """The probability items of one attribute and class, sorted by f(x, c)
    once; per chunk of resamples, integer item weights in that order.

    Static structures (positions of a selection, group masks, tie blocks) are
    built once per class; per chunk, the gathered weights and the cumulative
    counts are cached and float buffers reused."""

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

    @staticmethod
    def _ties(x, seg=None):
        """None without ties, else (block start, block end) per item; blocks
        never cross the segment boundaries ``seg`` (group starts)."""
        if x.size < 2:
            return None
        new = np.r_[True, x[1:] != x[:-1]]
        if seg is not None:
            new[seg[seg < x.size]] = True
        if new.all():
            return None
        block = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        ends = np.r_[starts[1:], x.size] - 1
        bstart = starts[block]
        at_seg_start = np.isin(bstart, seg) if seg is not None else None
        return bstart, ends[block], at_seg_start

    # -- per chunk
    def start(self, Wc: np.ndarray, Tc: np.ndarray | None = None):
        """A new chunk of resamples: ``Wc`` (Bc, J) int32 template weights,
        ``Tc`` (Bc, n_terms) int32 term weights (None: terms not resampled)."""
        self.Wc, self.Tc = Wc, Tc
        self.Wf = Wc.astype(np.float64)
        self.Tf = None if Tc is None else Tc.astype(np.float64)
        wmax = (int(Wc.max()) if Wc.size else 0) * (int(self.r.max()) if self.r is not None and self.r.size else 1)
        if Tc is not None and Tc.size:
            wmax *= int(Tc.max())
        # U sums w_h * (2 C_L + w_l) per item: int32 unless that could overflow; so do cumulative counts
        self.idt = np.int32 if 2 * (self.m + 1) * (wmax + 1) ** 2 < 2**31 else np.int64
        self.cdt = np.int32 if (self.m + 1) * (wmax + 1) < 2**31 else np.int64
        self._chunk = {}

    def _weights(self, key, p):
        """Item weights (Bc, len(p)) of the positions ``p`` (cached per chunk)."""
        ck = ("w", key)
        if ck not in self._chunk:
            tp = self.memo(("tpl", key), lambda: self.tpl[p])
            w = self.Wc[:, tp]
            if self.Tc is not None:  # item weight W[b, template] * T[b, term]
                w = w * self.Tc[:, self.memo(("term", key), lambda: self.term[p])]
            if self.r is not None:
                w = w * self.memo(("r", key), lambda: self.r[p].astype(w.dtype))
            self._chunk[ck] = w
        return self._chunk[ck]

    def n(self, cats) -> np.ndarray:
        """(Bc, k) weighted item counts of a selection per group."""
        key = ("n", cats)
        if key not in self._chunk:
            if self.Tc is None:
                self._chunk[key] = self.Wf @ self.cells(cats)
            else:  # per term, then per group
                self._chunk[key] = ((self.Wf @ self.cells(cats)) * self.Tf) @ self.prep.term_onehot()
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

    # -- W1 = sum_i |F_Q(x_i) - F_P(x_i)| (x_{i+1} - x_i) over the sorted items
    def _w1_static(self, cats):
        def make():
            p = self.positions(cats)
            dx = np.zeros(p.size)
            if p.size > 1:
                dx[:-1] = np.diff(self.x[p])
            gm = [(self.g[p] == t).astype(np.int32) for t in range(self.k)]
            return p, dx, gm
        return self.memo(("w1", cats), make)

    def _cum(self, cats, d, out=None):
        """Cumulative weighted counts (Bc, m_sel) of ("all",), ("g", t) or
        ("rest", t) within a selection (the "all" one cached)."""
        p, dx, gm = self._w1_static(cats)
        Wp = self._weights(("sel", cats), p)
        if d[0] == "all":
            key = ("cum", cats)
            if key not in self._chunk:
                self._chunk[key] = np.cumsum(Wp, axis=1, dtype=self.cdt)
            return self._chunk[key]
        buf = np.multiply(Wp, gm[d[1]], out=out, dtype=self.cdt)
        np.cumsum(buf, axis=1, dtype=self.cdt, out=buf)
        if d[0] == "rest":
            np.subtract(self._cum(cats, ("all",)), buf, out=buf)
        return buf

    def _cdf(self, cats, d, out, ibuf):
        """Normalized cumulative counts into ``out``; also the undefined mask."""
        C = self._cum(cats, d, out=ibuf)
        n = C[:, -1].astype(np.float64)
        with np.errstate(divide="ignore"):
            inv = np.where(n > 0, 1.0 / np.where(n > 0, n, 1.0), 0.0)
        np.multiply(C, inv[:, None], out=out)
        return n == 0

    def w1(self, cats, P, Q) -> np.ndarray:
        """W1 between the sets P and Q of a selection, per resample."""
        p, dx, gm = self._w1_static(cats)
        Bc = self.Wc.shape[0]
        if p.size == 0:
            return np.full(Bc, np.nan)
        bufs = self._chunk.get(("w1buf", cats))
        if bufs is None:
            bufs = self._chunk[("w1buf", cats)] = (np.empty((Bc, p.size)), np.empty((Bc, p.size)),
                                                    np.empty((Bc, p.size), self.cdt))
        fp, fq, ibuf = bufs
        if P == ("all",):  # shared by every group: normalized once per chunk
            if ("Fall", cats) not in self._chunk:
                self._chunk[("Fall", cats)] = self._cdf(cats, P, fp, ibuf)
            badP = self._chunk[("Fall", cats)]
        else:
            self._chunk.pop(("Fall", cats), None)
            badP = self._cdf(cats, P, fp, ibuf)
        badQ = self._cdf(cats, Q, fq, ibuf)
        np.subtract(fq, fp, out=fq)
        np.abs(fq, out=fq)
        out = fq @ dx
        out[badP | badQ] = np.nan
        return out

    def w1_groups(self, cats, background: str) -> np.ndarray:
        """(Bc, k): W1(background, group t) for every group t, background
        "all" (the whole selection) or "rest" (the selection minus t)."""
        p, dx, gm = self._w1_static(cats)
        Bc, k = self.Wc.shape[0], self.k
        if p.size == 0:
            return np.full((Bc, k), np.nan)
        Wp = self._weights(("sel", cats), p)
        call = self._cum(cats, ("all",))
        n = self.n(cats)
        nall = n.sum(1)
        nb = nall[:, None] - n if background == "rest" else np.repeat(nall[:, None], k, 1)

        def inv(v):
            return np.where(v > 0, 1.0 / np.where(v > 0, v, 1.0), 0.0)

        inv_n, inv_b = inv(n), inv(nb)
        fp = np.empty((Bc, p.size))
        out = np.empty((Bc, k))
        if background == "all":  # F_all, shared by every group
            np.multiply(call, inv_b[:, :1], out=fp)
            for t in range(k):  # F_t from t's own items, spread over the selection; |F_t - F_all| . dx
                own, runs = self._group_steps(cats, t)
                Ft = np.zeros((Bc, own.size + 1))
                np.multiply(np.cumsum(Wp[:, own], axis=1, dtype=self.cdt), inv_n[:, t:t + 1], out=Ft[:, 1:])
                fq = np.repeat(Ft, runs, axis=1)
                np.subtract(fq, fp, out=fq)
                np.abs(fq, out=fq)
                out[:, t] = fq @ dx
            out[(n == 0) | (nb == 0)] = np.nan
            return out
        fq, ibuf = np.empty((Bc, p.size)), np.empty((Bc, p.size), self.cdt)
        for t in range(k):  # integer cumulative counts of group t, then |F_t - F_background| . dx
            np.multiply(Wp, gm[t], out=ibuf, dtype=self.cdt)
            np.cumsum(ibuf, axis=1, dtype=self.cdt, out=ibuf)
            np.multiply(ibuf, inv_n[:, t:t + 1], out=fq)
            if background == "rest":
                np.subtract(call, ibuf, out=ibuf)
                np.multiply(ibuf, inv_b[:, t:t + 1], out=fp)
            np.subtract(fq, fp, out=fq)
            np.abs(fq, out=fq)
            out[:, t] = fq @ dx
        out[(n == 0) | (nb == 0)] = np.nan
        return out

    def _group_steps(self, cats, t):
        """Group t's items within a selection (positions in it, in score
        order) and the length of each run of the selection's items with
        the same number of t's items at or before them (the first run has
        none): F_t is a step function that moves only at t's own items, so
        its cumulative counts are summed over those and repeated over their
        runs (the same integers as a sum over the whole selection with the
        other groups weighted 0)."""
        def make():
            p = self.positions(cats)
            on = self.g[p] == t
            own = np.flatnonzero(on)
            return own, np.bincount(np.cumsum(on), minlength=own.size + 1)
        return self.memo(("steps", cats, t), make)

    # -- Mann-Whitney U(H over L) = #{h > l} + 1/2 #{h = l}, exact in integers
    def _u2(self, key, p, inL, inH, ties, seg=None, cells=None):
        """2 U(H over L): per cell (``cells`` = (cell of each item, number
        of cells); value order, L of every group), per segment ``seg`` (group
        order: L and H of one group), or in total."""
        Wp = self._weights(key, p)
        idt = self.idt
        if Wp.dtype != idt:
            Wp = Wp.astype(idt)
        wL = Wp * inL
        CL = np.cumsum(wL, axis=1, dtype=idt)
        if seg is not None:  # cumulative counts restart in every group segment
            starts, sizes = seg
            before = np.zeros((CL.shape[0], starts.size), dtype=idt)
            nz = starts > 0
            before[:, nz] = CL[:, starts[nz] - 1]
            CL -= np.repeat(before, sizes, axis=1)
        if ties is None:  # C_L(<x) + C_L(<=x) = 2 C_L(before) + own weight
            term = CL
            term *= 2
            term -= wL
        else:  # C_L(<x) from the item before the tie block, C_L(<=x) at its end
            bstart, bend, at_seg_start = ties
            Cpad = np.zeros((CL.shape[0], CL.shape[1] + 1), dtype=idt)
            Cpad[:, 1:] = CL
            term = Cpad[:, bstart]
            if at_seg_start is not None:  # a block opening a group segment has nothing below it
                term[:, at_seg_start] = 0
            term += Cpad[:, bend + 1]
        v = Wp * term
        if not (np.isscalar(inH) and inH == 1):
            v *= inH
        if cells is not None:  # sum per (resample, cell) with one bincount
            cell, n_cells = cells
            Bc = v.shape[0]
            idx = self._chunk.get(("cellidx", key))
            if idx is None:
                idx = self._chunk[("cellidx", key)] = (np.arange(Bc)[:, None] * n_cells + cell).ravel()
            return np.bincount(idx, weights=v.ravel(), minlength=Bc * n_cells).reshape(Bc, n_cells)
        if seg is None:
            return v.sum(axis=1, dtype=np.float64)[:, None]
        starts, sizes = seg
        out = np.zeros((v.shape[0], starts.size))
        ne = sizes > 0
        if ne.any():
            out[:, ne] = np.add.reduceat(v, starts[ne], axis=1)
        return out

    def u_by_cat(self, catsL) -> np.ndarray:
        """(Bc, 3, k): U(items of category c and group t over L of all
        groups), for every category at once, from one cumulative count of L
        over all items in score order."""
        key = ("u_by_cat", catsL)
        if key not in self._chunk:
            def make():
                p = np.arange(self.m)
                inL = np.isin(self.cat, catsL).astype(np.int32)
                return p, inL, 1, self._ties(self.x), (self.cat * self.k + self.g, 3 * self.k)
            p, inL, inH, ties, cells = self.memo(key, make)
            u2 = self._u2(("sel", CATS["all"]), p, inL, inH, ties, cells=cells)
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
                inL = np.isin(self.cat[p], catsL).astype(np.int32)
                inH = np.isin(self.cat[p], catsH).astype(np.int32)
                return union, p, inL, inH, self._ties(self.x[p], starts), (starts, sizes)
            union, p, inL, inH, ties, seg = self.memo(key, make)
            self._chunk[key] = self._u2(("grp", union), p, inL, inH, ties, seg=seg) / 2.0
        return self._chunk[key]

    def u_pair(self, catsH, catsL, a, b) -> np.ndarray:
        """(Bc,): U(H within group a over L within group b)."""
        key = ("u_pair", catsH, catsL, a, b)

        def make():
            p_all = self.positions(tuple(sorted(set(catsH) | set(catsL))))
            p = p_all[(self.g[p_all] == a) | (self.g[p_all] == b)]
            inL = (np.isin(self.cat[p], catsL) & (self.g[p] == b)).astype(np.int32)
            inH = (np.isin(self.cat[p], catsH) & (self.g[p] == a)).astype(np.int32)
            return p, inL, inH, self._ties(self.x[p])
        p, inL, inH, ties = self.memo(key, make)
        return self._u2(key, p, inL, inH, ties)[:, 0] / 2.0


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
