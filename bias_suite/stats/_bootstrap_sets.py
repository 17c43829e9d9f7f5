"""Shared pieces of the cluster bootstrap's closed-form path and its set
metrics (:mod:`bias_suite.stats.bootstrap` has the method and the public
API, :mod:`bias_suite.stats._bootstrap_fast` the per-attribute fast path).

- :class:`_Prepared`: one attribute's arrays with every row's template;
- :func:`_scalar_values`: the engine's scalar group metrics on (R, k) arrays
  of phi values, with the signed basis beneath |x|;
- set metrics (W1, AEG, AUC) over once-sorted probability items with
  integer template weights per chunk of resamples (:class:`_ClassItems`);
- :func:`_fast_supported`: which metrics the closed form covers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import MetricError
from ..metrics.catalog import MetricSpec
from ..metrics.comparisons import get_comparison
from ..metrics.generalized import NEG, POS, UNLABELLED, AttributeData, normalizer_value
from ..metrics.scores import SCORES, AucScore, GoldProbScore, MeanScore, RateScore, SetScore, get_score

#: target size (resamples x items) of one chunk of the set-metric computations
CHUNK_ELEMENTS = 160_000

_CATS = {"all": (POS, NEG, UNLABELLED), "pos": (POS,), "neg": (NEG,)}
_BACKGROUND = {"all": "all", "S": "all", "rest": "rest", "S\\S^t": "rest"}


@dataclass
class _Prepared:
    """One attribute: the engine's arrays plus every row's template among all
    of the attribute's templates (complete or not)."""

    ad: AttributeData
    tpl: np.ndarray  # (n,) all-template index per row
    J: int
    complete_idx: np.ndarray  # (Jc,) all-template index of each complete template


def _nan_where(bad, val):
    val = np.asarray(val, float)
    return np.where(bad | ~np.isfinite(val), np.nan, val)


def _scalar_values(spec, ad, score, comp, phi, contrast=None):
    """Mirror of the engine's scalar group metrics on (R, k) phi arrays.
    Returns (values {group label: (R,)}, signed basis {label: (text, (R,))})."""
    gen, k = spec.generalized, ad.k
    gv, gb = phi["group"]
    out, signed = {}, {}
    phi_name = getattr(score, "name", "phi")
    if gen == "PCM":
        N = normalizer_value(spec.normalizer, k)
        pairs = ad.pairs()
        a = np.array([p[0] for p in pairs], dtype=np.int64)
        b = np.array([p[1] for p in pairs], dtype=np.int64)
        val, dbad = comp.fn(gv[:, a], gv[:, b])
        val = np.asarray(val, float)
        bad = gb[:, a] | gb[:, b] | np.asarray(dbad, bool)
        pv = _nan_where(bad, val)
        for i, name in enumerate(ad.pair_names()):
            out[name] = pv[:, i]
            if comp.name == "abs":
                signed[name] = (f"{phi_name}(first) - {phi_name}(second)", _nan_where(bad[:, i], gv[:, a[i]] - gv[:, b[i]]))
        acc = np.full(gv.shape[0], np.nan) if N == 0 else _nan_where(bad.any(1), val.sum(1) / N)
        out[None] = acc
        return out, signed
    if gen in ("BCM", "VBCM"):
        if isinstance(score, AucScore):
            bv, bb = gv, np.zeros(gv.shape, bool)
        else:
            key = _BACKGROUND.get(spec.background)
            if key is None:
                raise MetricError(f"{spec.name}: background must be 'all' or 'rest', got {spec.background!r}")
            bv, bb = phi[key]
        val, dbad = comp.fn(bv, gv)
        val = np.asarray(val, float)
        bad = gb | bb | np.asarray(dbad, bool)
        pv = _nan_where(bad, val)
        bg_text = "all" if _BACKGROUND.get(spec.background) == "all" else "rest"
        for t, name in enumerate(ad.groups):
            out[name] = pv[:, t]
            if comp.name == "abs" and not isinstance(score, AucScore):
                signed[name] = (f"{phi_name}(group) - {phi_name}({bg_text})", _nan_where(bad[:, t], gv[:, t] - bv[:, t]))
            elif isinstance(score, AucScore) and contrast is not None:
                signed[name] = ("AUC(group) - AUC(all examples)", _nan_where(bad[:, t], contrast[:, t]))
        if gen == "BCM":
            N = normalizer_value(spec.normalizer, k)
            out[None] = np.full(gv.shape[0], np.nan) if N == 0 else _nan_where(bad.any(1), val.sum(1) / N)
        return out, signed
    if gen == "MCM":
        if comp.kind != "multi":
            raise MetricError(f"{spec.name}: MCM needs a multi-group comparison (std, range), got {comp.name!r}")
        out[None] = _nan_where(gb.any(1), comp.fn(gv))
        return out, signed
    raise MetricError(f"unknown generalized metric {gen!r}")


# ------------------------------------------------------------ set metrics
class _ClassItems:
    """The probability items of one attribute and class, sorted by f(x, c)
    once; per chunk of resamples, integer item weights in that order.

    Static structures (positions of a selection, group masks, tie blocks) are
    built once per class; per chunk, the gathered weights and the cumulative
    counts are cached and float buffers reused."""

    def __init__(self, prep: _Prepared, c: int):
        ad = prep.ad
        x = np.asarray(ad.item_P[:, c], dtype=np.float64)
        order = np.argsort(x, kind="stable")
        self.x = x[order]
        self.g = ad.item_g()[order]
        yy = ad.item_y[order]
        self.cat = np.where(yy < 0, UNLABELLED, np.where(yy == c, POS, NEG))
        self.tpl = prep.tpl[ad.item_row[order]]
        self.k, self.J, self.m = ad.k, prep.J, self.x.size
        # template balance: integer item multipliers L / (the group's examples in the template), L their
        # least common multiple, so U and the cumulative counts stay exact in integers
        self.r = item_multipliers(ad.row_weight, ad.item_row[order])
        self._static: dict = {}
        self._chunk: dict = {}

    # -- static (per class) helpers
    def _memo(self, key, fn):
        if key not in self._static:
            self._static[key] = fn()
        return self._static[key]

    def positions(self, cats) -> np.ndarray:
        """Items of a selection, in score order."""
        return self._memo(("p", cats), lambda: np.flatnonzero(np.isin(self.cat, cats)))

    def positions_by_group(self, cats):
        """Items of a selection in (group, score) order, and the group segments."""
        def make():
            p = self.positions(cats)
            p = p[np.argsort(self.g[p], kind="stable")]
            sizes = np.bincount(self.g[p], minlength=self.k)
            return p, np.cumsum(sizes) - sizes, sizes
        return self._memo(("pg", cats), make)

    def cells(self, cats) -> np.ndarray:
        """(J, k) item counts of a selection per template and group."""
        def make():
            p = self.positions(cats)
            w = None if self.r is None else self.r[p].astype(np.float64)
            return np.bincount(self.tpl[p] * self.k + self.g[p], weights=w,
                               minlength=self.J * self.k).reshape(self.J, self.k)
        return self._memo(("cells", cats), make)

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
    def start(self, Wc: np.ndarray):
        """A new chunk of resamples: ``Wc`` (Bc, J) int32 template weights."""
        self.Wc = Wc
        self.Wf = Wc.astype(np.float64)
        wmax = (int(Wc.max()) if Wc.size else 0) * (int(self.r.max()) if self.r is not None and self.r.size else 1)
        # U sums w_h * (2 C_L + w_l) per item: int32 unless that could overflow
        self.idt = np.int32 if 2 * (self.m + 1) * (wmax + 1) ** 2 < 2**31 else np.int64
        self._chunk = {}

    def _weights(self, key, p):
        """Item weights (Bc, len(p)) of the positions ``p`` (cached per chunk)."""
        ck = ("w", key)
        if ck not in self._chunk:
            tp = self._memo(("tpl", key), lambda: self.tpl[p])
            w = self.Wc[:, tp]
            if self.r is not None:
                w = w * self._memo(("r", key), lambda: self.r[p].astype(w.dtype))
            self._chunk[ck] = w
        return self._chunk[ck]

    def n(self, cats) -> np.ndarray:
        """(Bc, k) weighted item counts of a selection per group."""
        key = ("n", cats)
        if key not in self._chunk:
            self._chunk[key] = self.Wf @ self.cells(cats)
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
        return self._memo(("within", cats), make)

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
        return self._memo(("w1", cats), make)

    def _cum(self, cats, d, out=None):
        """Cumulative weighted counts (Bc, m_sel) of ("all",), ("g", t) or
        ("rest", t) within a selection (the "all" one cached)."""
        p, dx, gm = self._w1_static(cats)
        Wp = self._weights(("sel", cats), p)
        if d[0] == "all":
            key = ("cum", cats)
            if key not in self._chunk:
                self._chunk[key] = np.cumsum(Wp, axis=1, dtype=np.int32)
            return self._chunk[key]
        buf = np.multiply(Wp, gm[d[1]], out=out)
        np.cumsum(buf, axis=1, dtype=np.int32, out=buf)
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
                                                    np.empty((Bc, p.size), np.int32))
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
        fp, fq, ibuf = np.empty((Bc, p.size)), np.empty((Bc, p.size)), np.empty((Bc, p.size), np.int32)
        if background == "all":  # F_all, shared by every group
            np.multiply(call, inv_b[:, :1], out=fp)
        out = np.empty((Bc, k))
        for t in range(k):  # integer cumulative counts of group t, then |F_t - F_background| . dx
            np.multiply(Wp, gm[t], out=ibuf)
            np.cumsum(ibuf, axis=1, dtype=np.int32, out=ibuf)
            np.multiply(ibuf, inv_n[:, t:t + 1], out=fq)
            if background == "rest":
                np.subtract(call, ibuf, out=ibuf)
                np.multiply(ibuf, inv_b[:, t:t + 1], out=fp)
            np.subtract(fq, fp, out=fq)
            np.abs(fq, out=fq)
            out[:, t] = fq @ dx
        out[(n == 0) | (nb == 0)] = np.nan
        return out

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
            p, inL, inH, ties, cells = self._memo(key, make)
            u2 = self._u2(("sel", _CATS["all"]), p, inL, inH, ties, cells=cells)
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
            union, p, inL, inH, ties, seg = self._memo(key, make)
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
        p, inL, inH, ties = self._memo(key, make)
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


def _ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, np.nan, num / np.where(den == 0, 1.0, den))


def _auc_group(items: _ClassItems, score: AucScore):
    """(Bc, k) AUC per group and the (Bc,) AUC of all examples; AUC =
    U(positives over negatives) / (n_pos n_neg), rest-of-group sets by
    linearity of U in each argument."""
    pos, neg = _CATS["pos"], _CATS["neg"]
    npos, nneg = items.n(pos), items.n(neg)
    npa, nna = npos.sum(1, keepdims=True), nneg.sum(1, keepdims=True)
    Ugg = items.u_grp(pos, neg)  # U(pos_t over neg_t)
    Uta = items.u_over_all(pos, neg)  # U(pos_t over neg_all)
    Utot = Uta.sum(1, keepdims=True)  # U(pos_all over neg_all)
    side = (score.pos_from, score.neg_from)
    if side == ("group", "group"):
        U, nP, nN = Ugg, npos, nneg
    elif side == ("group", "rest"):
        U, nP, nN = Uta - Ugg, npos, nna - nneg
    else:
        Uat = npa * nneg - items.u_over_all(neg, pos)  # U(pos_all over neg_t) = |P||N| - U(neg_t over pos_all)
        if side == ("rest", "group"):
            U, nP, nN = Uat - Ugg, npa - npos, nneg
        elif side == ("rest", "rest"):
            U, nP, nN = Utot - Uta - Uat + Ugg, npa - npos, nna - nneg
        else:
            raise MetricError(f"AUC sides must be 'group' or 'rest', got {side}")
    return _ratio(U, nP * nN), _ratio(Utot[:, 0], (npa * nna)[:, 0])


def _set_values(prep: _Prepared, c: int, jobs, Wx, out, basis, B):
    """Set and AUC metrics of one class, in chunks of resamples."""
    ad = prep.ad
    items = _ClassItems(prep, c)
    R = Wx.shape[0]
    Bc = int(np.clip(CHUNK_ELEMENTS // max(items.m, 1), 1, 256))
    Wi32 = Wx.astype(np.int32)
    acc: dict = {}
    for s in range(0, R, Bc):
        items.start(Wi32[s:s + Bc])
        for spec, cls in jobs:
            sc = get_score(spec.score)
            comp = get_comparison(spec.comparison)
            if isinstance(sc, AucScore):
                gv, overall = _auc_group(items, sc)
                phi = {"group": (gv, ~np.isfinite(gv))}
                contrast = gv - overall[:, None]
                vals, signed = _scalar_values(spec, ad, sc, comp, phi, contrast=contrast)
            else:
                vals, signed = _set_metric_chunk(spec, ad, sc, comp, items), {}
            for g, v in vals.items():
                acc.setdefault((spec.name, cls, g), []).append(v)
            for g, (label, v) in signed.items():
                acc.setdefault(("basis", spec.name, cls, g), [label]).append(v)
    for key, parts in acc.items():
        if key[0] == "basis":
            label, parts = parts[0], parts[1:]
            v = np.concatenate(parts)
            basis[key[1:]] = {"basis": label, "basis_reps": v[:B], "basis_obs": v[B]}
        else:
            out[key] = np.concatenate(parts)[:B]


def _set_metric_chunk(spec, ad, score, comp, items: _ClassItems) -> dict:
    """W1 / AEG metrics of one chunk: {group label: (Bc,)}; mirrors the
    engine's set metrics (accumulated value undefined if any part is)."""
    k, gen = ad.k, spec.generalized
    cats = _CATS[getattr(score, "select", "all")]
    n = items.n(cats)  # (Bc, k)
    n_all = n.sum(1)
    out = {}
    if gen == "PCM":
        vals = []
        for a, b in ad.pairs():
            if comp.name == "W1":
                vals.append(items.w1(cats, ("g", a), ("g", b)))
            else:  # AEG(background a, group b) = 1/2 - U(a over b) / (|a||b|), pairs of copies of one template left out
                M, Nj = items.within(cats)
                Q = items.within_excess()
                U = items.u_pair(cats, cats, a, b) - Q @ M[:, a, b]
                vals.append(0.5 - _ratio(U, n[:, a] * n[:, b] - Q @ (Nj[:, a] * Nj[:, b])))
        V = np.column_stack(vals) if vals else np.zeros((n.shape[0], 0))
        for i, name in enumerate(ad.pair_names()):
            out[name] = V[:, i]
        N = normalizer_value(spec.normalizer, k)
        out[None] = _acc(V, N)
        return out
    if gen not in ("BCM", "VBCM"):
        raise MetricError(f"{spec.name}: {gen} with a set-valued score is not defined (use PCM, BCM or VBCM)")
    bg = _BACKGROUND.get(spec.background)
    if bg is None:
        raise MetricError(f"{spec.name}: background must be 'all' or 'rest', got {spec.background!r}")
    if comp.name == "W1":
        V = items.w1_groups(cats, bg)
    else:  # AEG = 1/2 - U(bg over t)/(|bg||t|) = U(t over bg)/(|bg||t|) - 1/2
        U = items.u_over_all(cats, cats)
        nb = np.repeat(n_all[:, None], k, 1)
        M, Nj = items.within(cats)  # a template drawn W times: its own pairs once per copy, not W^2 times
        Q = items.within_excess()
        Mt = M.sum(axis=2)  # (J, k): U(t over all) inside each template
        Nall = Nj.sum(axis=1, keepdims=True)
        if bg == "rest":
            U = U - items.u_grp(cats, cats)
            nb = nb - n
            Mt = Mt - M[:, np.arange(k), np.arange(k)]
            Nall = Nall - Nj
        V = _ratio(U - Q @ Mt, nb * n - Q @ (Nall * Nj)) - 0.5
    for t, name in enumerate(ad.groups):
        out[name] = V[:, t]
    if gen == "BCM":
        out[None] = _acc(V, normalizer_value(spec.normalizer, k))
    return out


def aeg_without_copy_pairs(prep: _Prepared, spec, c: int, W: np.ndarray, values: dict) -> dict:
    """AEG values of resamples evaluated on copied templates (the generic
    path), with the pairs between two copies of one template left out as
    the closed form leaves them out: ``values`` {group label: (B,)} as the
    engine gives them on the resampled data, ``W`` (B, J) the template
    counts."""
    ad = prep.ad
    sc = get_score(spec.score)
    cats = _CATS[getattr(sc, "select", "all")]
    items = _ClassItems(prep, c)
    M, Nj = items.within(cats)
    Wf = W.astype(np.float64)
    Q = Wf * Wf - Wf
    n = Wf @ Nj  # (B, k) item weights per group in each resample
    out = dict(values)
    k = ad.k
    if spec.generalized == "PCM":
        for (a, b), name in zip(ad.pairs(), ad.pair_names()):
            if name not in values:
                continue
            N = n[:, a] * n[:, b]
            U = (0.5 - values[name]) * N
            out[name] = 0.5 - _ratio(U - Q @ M[:, a, b], N - Q @ (Nj[:, a] * Nj[:, b]))
        parts = [out[nm] for nm in ad.pair_names() if nm in out]
    else:
        Mt, Nall = M.sum(axis=2), Nj.sum(axis=1, keepdims=True)
        nb = np.repeat(n.sum(1, keepdims=True), k, 1)
        if _BACKGROUND.get(spec.background) == "rest":
            Mt, Nall, nb = Mt - M[:, np.arange(k), np.arange(k)], Nall - Nj, nb - n
        for t, name in enumerate(ad.groups):
            if name not in values:
                continue
            N = nb[:, t] * n[:, t]
            V = (values[name] + 0.5) * N
            out[name] = _ratio(V - Q @ Mt[:, t], N - Q @ (Nall[:, 0 if Nall.shape[1] == 1 else t] * Nj[:, t])) - 0.5
        parts = [out[nm] for nm in ad.groups if nm in out]
    if None in values and parts and spec.generalized in ("PCM", "BCM"):
        out[None] = _acc(np.column_stack(parts), normalizer_value(spec.normalizer, k))
    return out


def _acc(V, N):
    if N == 0 or V.shape[1] == 0:
        return np.full(V.shape[0], np.nan)
    bad = ~np.isfinite(V).all(axis=1)
    return np.where(bad, np.nan, np.nan_to_num(V).sum(axis=1) / N)


def _fast_supported(spec: MetricSpec) -> bool:
    """Whether the vectorized path covers a metric (classification)."""
    sc = get_score(spec.score)
    comp = get_comparison(spec.comparison)
    if isinstance(sc, RateScore) and not any(sc is s for s in SCORES.values()):
        return False  # a user rate function may not broadcast over resamples
    if spec.view == "group":
        if isinstance(sc, (SetScore, GoldProbScore)):
            return comp.name in ("W1", "AEG") and getattr(sc, "select", "all") in _CATS
        return isinstance(sc, (RateScore, AucScore))
    if spec.per_template:
        return (isinstance(sc, SetScore) and comp.name == "W1") or isinstance(sc, MeanScore)
    return isinstance(sc, (GoldProbScore, SetScore, RateScore))


def _class_list(spec, ad):
    if not spec.per_class:
        return [(0, "all")]
    return list(enumerate(ad.classes))
