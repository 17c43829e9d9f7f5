"""What the HTML report and the figures are made from: reading a results
folder and shaping the tidy results into tables.

:func:`load_report_data` reads ``results.jsonl`` (or ``results.csv``),
``run.json``, the scored examples and invariance failures;
:func:`heatmap_tables`, :func:`group_metric_rows`, :func:`significance_table`,
:func:`bernstein_table` and :func:`template_drilldown` shape them. Shared by
:mod:`bias_suite.report.html` and :mod:`bias_suite.report.plots`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..io.values import is_null
from ..io.results import as_results, read_results_table, run_file, with_extra_columns  # noqa: F401 (re-exported)

FAILURES_NAMES = ("failures.jsonl", "inv_failures.jsonl")  # the second is what `bias-suite checklist import` writes

# ----------------------------------------------------------------- loading
@dataclass
class ReportData:
    """Everything the report and the figures are made from."""

    results: pd.DataFrame
    metadata: dict = field(default_factory=dict)
    scored: object | None = None  # ScoredData (classification) or None
    failures: pd.DataFrame | None = None
    source: Path | None = None
    warnings: list = field(default_factory=list)
    failures_source: str | None = None

    @property
    def attributes(self) -> list:
        return [a for a in pd.unique(self.results["attribute"]) if a is not None and not is_null(a)]

    @property
    def classes(self) -> list:
        meta = self.metadata.get("classes")
        if meta:
            return list(meta)
        if self.scored is not None and hasattr(self.scored, "classes"):
            return list(self.scored.classes)
        return [c for c in pd.unique(self.results["class"]) if c != "all"]

    @property
    def has_verdicts(self) -> bool:
        return "verdict" in self.results.columns and self.results["verdict"].notna().any()


isnull = is_null  # None, pandas' NA or a float NaN (bias_suite.io.values)




def metric_spec(metric):
    """The registered spec of a metric name, or None (unknown, or the
    registry failed: a report or a printout must never break on it)."""
    try:
        from ..metrics.catalog import REGISTRY

        return REGISTRY.get(metric)
    except Exception:
        return None


def metric_worse(metric) -> str | None:
    """Which side of the no-bias value is worse for the group: "higher",
    "lower" (the metric's record) or None (unknown).
    Bernstein rows are a cost of the group minus the rest: higher is worse."""
    spec = metric_spec(metric)
    if spec is not None:
        return spec.worse
    return "higher" if str(metric).startswith("Bernstein-") else None


def is_ratio(metric) -> bool:
    """Whether a metric is a ratio (no-bias value 1), judged on its log
    against log 1.25 (the record's scale)."""
    spec = metric_spec(metric)
    return spec is not None and spec.scale == "ratio"


def signed_distance(metric, value, baseline, threshold) -> float | None:
    """The distance of a value from its no-bias value in units of its
    threshold, with its sign: ``(value - b) / tau``; for a ratio
    ``log(value) / log 1.25``, the scale its effect is judged on. None when
    a number is missing or tau is not positive."""
    from ..metrics.materiality import RATIO_BAND

    try:
        v, b, t = float(value), float(baseline), float(threshold)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(v) and math.isfinite(b) and t > 0):
        return None
    if is_ratio(metric):
        return math.log(v) / math.log(RATIO_BAND) if v > 0 else None
    return (v - b) / t


def load_report_data(results_dir, *, scored=None) -> ReportData:
    """Read a results folder: results, ``run.json``, scored examples and the
    failing INV cases the run wrote (the last three when present)."""
    src = Path(results_dir)
    folder = src if src.is_dir() else src.parent
    data = ReportData(results=read_results_table(src), source=folder)
    meta_path = folder / "run.json"
    if meta_path.exists():
        try:
            data.metadata = json.loads(meta_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            data.warnings.append(f"run.json could not be read ({e})")
    if scored is None:  # only the run's own files: run.json lists them
        scored = run_file(folder, "scored.parquet", "scored.jsonl")
    if scored is not None:
        try:
            from ..families import as_scored

            s = as_scored(scored)
            if getattr(s, "probs", None) is not None:  # one probability row per example
                data.scored = s
            else:
                data.warnings.append("per-template drill-down needs one probability row per example "
                                     "(classification runs)")
        except Exception as e:  # a report must not die on an unreadable side file
            data.warnings.append(f"scored examples could not be read ({e}); no per-template drill-down")
    for name in FAILURES_NAMES:
        fpath = run_file(folder, name)
        if fpath is not None:
            try:
                data.failures = pd.read_json(fpath, lines=True, dtype=False) if fpath.stat().st_size else pd.DataFrame()
                data.failures_source = name
            except ValueError as e:
                data.warnings.append(f"{name} could not be read ({e})")
            break
    if data.failures is None and (data.results["family"] == "invariance").any():
        data.warnings.append("the folder holds INV rows but no failures file (written by runs of this version): "
                             "run again to list the failing cases")
    return data


# ----------------------------------------------------------------- shaping
def is_pair(g) -> bool:
    return isinstance(g, str) and "|" in g


def class_rank(classes):
    order = {c: i for i, c in enumerate(classes)}
    return lambda c: (order.get(c, len(order) + (c == "all")), str(c))


def order_unique(values) -> list:
    return [v for v in pd.unique(pd.Series(list(values), dtype=object)) if not is_null(v)]


@dataclass
class Heatmap:
    """Values of one attribute as a matrix: rows (metric, class), columns
    groups (``kind="group"``) or pairs (``kind="pair"``)."""

    attribute: str
    kind: str
    columns: list
    rows: list  # [(metric, class, view)]
    values: np.ndarray  # (R, C), nan where missing
    accumulated: np.ndarray  # (R,), nan where missing
    cells: dict  # (i, j) -> result row (dict); j == -1 for the accumulated value

    def _ref(self, i, j, key) -> float:
        rec = self.cells.get((i, j))
        v = None if rec is None else rec.get(key)
        try:
            return float("nan") if is_null(v) else float(v)
        except (TypeError, ValueError):
            return float("nan")

    @property
    def distance(self) -> np.ndarray:
        """Signed distance of each cell from its no-bias value in units of its
        threshold, ``(value - baseline) / threshold``; for a ratio
        ``log(value) / log 1.25``, the scale its effect is judged on (nan
        where the cell has no value, baseline or positive threshold)."""
        R, C = self.values.shape
        b = np.array([[self._ref(i, j, "baseline") for j in range(C)] for i in range(R)]).reshape(R, C)
        t = np.array([[self._ref(i, j, "threshold") for j in range(C)] for i in range(R)]).reshape(R, C)
        return self._distance(self.values, b, t)

    def _distance(self, values: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
        from ..metrics.materiality import RATIO_BAND

        ratio = np.array([is_ratio(m) for m, _, _ in self.rows], dtype=bool).reshape((-1,) + (1,) * (values.ndim - 1))
        with np.errstate(all="ignore"):
            lin = (values - b) / t
            logd = np.log(np.where(values > 0, values, np.nan)) / math.log(RATIO_BAND)
            return np.where((t > 0) & np.isfinite(b), np.where(ratio, logd, lin), np.nan)

    @property
    def worse(self) -> list:
        """Per row, the metric's worse side: "higher", "lower" or None
        (:func:`metric_worse`)."""
        return [metric_worse(m) for m, _, _ in self.rows]

    @property
    def accumulated_distance(self) -> np.ndarray:
        """:attr:`distance` of the accumulated column."""
        R = len(self.rows)
        b = np.array([self._ref(i, -1, "baseline") for i in range(R)])
        t = np.array([self._ref(i, -1, "threshold") for i in range(R)])
        return self._distance(self.accumulated, b, t)


def _heatmap_kind(res: pd.DataFrame) -> pd.Series:
    g = res["group"]
    pair = g.map(is_pair)
    return np.where(g.isna(), "acc", np.where(pair, "pair", "group"))


def heatmap_tables(results: pd.DataFrame, attribute: str, classes=()) -> list:
    """The group heatmap and the pair heatmap of one attribute (either may
    be missing). Significance rows and ``*-SampleSize`` rows are left out."""
    res = results[(results["attribute"] == attribute) & (results["family"] != "significance")]
    res = res[~res["metric"].astype(str).str.endswith("-SampleSize")]
    if res.empty:
        return []
    kind = pd.Series(_heatmap_kind(res), index=res.index)
    out = []
    rank = class_rank(classes)
    for k in ("group", "pair"):
        part = res[kind == k]
        if part.empty:
            continue
        cols = order_unique(part["group"])
        metrics = order_unique(part["metric"])
        rows = []
        for m in metrics:
            sub = part[part["metric"] == m]
            view = sub["view"].iloc[0]
            for c in sorted(order_unique(sub["class"]), key=rank):
                rows.append((m, c, view))
        R, C = len(rows), len(cols)
        vals = np.full((R, C), np.nan)
        acc = np.full(R, np.nan)
        cells = {}
        col_ix = {g: j for j, g in enumerate(cols)}
        row_ix = {(m, c): i for i, (m, c, _) in enumerate(rows)}
        for rec in part.to_dict("records"):
            i, j = row_ix[(rec["metric"], rec["class"])], col_ix[rec["group"]]
            vals[i, j] = np.nan if is_null(rec["value"]) else float(rec["value"])
            cells[(i, j)] = rec
        accs = res[(kind == "acc") & res["metric"].isin(metrics)]
        for rec in accs.to_dict("records"):
            i = row_ix.get((rec["metric"], rec["class"]))
            if i is not None:
                acc[i] = np.nan if is_null(rec["value"]) else float(rec["value"])
                cells[(i, -1)] = rec
        # drop rows with nothing to show (kept in the "without values" list)
        keep = [i for i in range(R) if not (np.isnan(vals[i]).all() and np.isnan(acc[i]))]
        if not keep:
            continue
        remap = {old: new for new, old in enumerate(keep)}
        cells = {(remap[i], j): v for (i, j), v in cells.items() if i in remap}
        out.append(Heatmap(attribute, k, cols, [rows[i] for i in keep], vals[keep], acc[keep], cells))
    return out


def accumulated_only(results: pd.DataFrame, attribute: str) -> pd.DataFrame:
    """Metrics of an attribute with only an accumulated value (MCM, and
    others without per-group or per-pair rows), with at least one value."""
    res = results[(results["attribute"] == attribute) & (results["family"] != "significance")]
    res = res[~res["metric"].astype(str).str.endswith("-SampleSize")]
    has_parts = set(res.loc[res["group"].notna(), "metric"])
    acc = res[res["group"].isna() & ~res["metric"].isin(has_parts)]
    return acc[acc["value"].notna()]


def missing_values(results: pd.DataFrame, attribute: str) -> pd.DataFrame:
    """(metric, class) combinations whose values are all null, with notes."""
    res = results[results["attribute"] == attribute]
    if res.empty:
        return res
    g = res.groupby(["metric", "class"], sort=False, dropna=False)
    allnull = g["value"].transform(lambda s: s.isna().all())
    sub = res[allnull.astype(bool)]
    return sub.drop_duplicates(["metric", "class"])


def group_metric_rows(results: pd.DataFrame, attribute: str) -> dict:
    """Per-group rows (no pairs, no accumulated values, no sample sizes) of
    one attribute, as {metric: DataFrame} in order of appearance: the
    vector-valued metrics (VBCM, BCM parts, Bernstein deltas)."""
    res = results[(results["attribute"] == attribute) & (results["family"] != "significance")]
    res = res[res["group"].notna() & ~res["group"].map(is_pair)]
    res = res[~res["metric"].astype(str).str.endswith("-SampleSize")]
    out = {}
    for m in order_unique(res["metric"]):
        sub = res[res["metric"] == m]
        if sub["value"].notna().any():
            out[m] = sub
    return out


def significance_table(results: pd.DataFrame, attribute: str | None = None) -> pd.DataFrame:
    """One row per (attribute, class, test): statistic, p, adjusted p (and
    the adjustment method), effect size and the number of templates."""
    sig = results[results["family"] == "significance"]
    if attribute is not None:
        sig = sig[sig["attribute"] == attribute]
    rows = []
    if sig.empty:
        return pd.DataFrame(columns=["attribute", "class", "test", "statistic", "p", "p_adj", "adjustment", "effect", "effect_name", "n", "note", "verdict"])
    tests = [m for m in order_unique(sig["metric"]) if "-" not in m]
    for (a, c), s in sig.groupby(["attribute", "class"], sort=False):
        names = tests or sorted({m.split("-")[0] for m in s["metric"]})
        for t in names:
            st = s[s["metric"].astype(str).str.startswith(t)]
            if st.empty:
                continue

            def get(name, st=st):
                r = st[st["metric"] == name]
                return r.iloc[0] if len(r) else None

            adj = st[st["metric"].astype(str).str.startswith(f"{t}-p-")]
            eff_name = {"Wilcoxon": "r (rank-biserial)", "Friedman": "Kendall's W"}.get(t, "effect")
            eff = get(f"{t}-r") if t == "Wilcoxon" else get(f"{t}-W")
            if eff is None:
                others = st[~st["metric"].isin([t, f"{t}-p"]) & ~st["metric"].astype(str).str.startswith(f"{t}-p-")]
                eff = others.iloc[0] if len(others) else None
            main, p = get(t), get(f"{t}-p")
            notes = [r for r in (main, p) if r is not None and not is_null(r.get("note"))]
            verdicts = [r.get("verdict") for r in (main, p, adj.iloc[0] if len(adj) else None) if r is not None and not is_null(r.get("verdict", None))]
            ns = st["n"].dropna()
            rows.append({
                "attribute": a, "class": c, "test": t,
                "statistic": None if main is None else main["value"],
                "p": None if p is None else p["value"],
                "p_adj": adj["value"].iloc[0] if len(adj) else None,
                "adjustment": adj["metric"].iloc[0].split("-p-", 1)[1] if len(adj) else None,
                "effect": None if eff is None else eff["value"],
                "effect_name": eff_name,
                "n": int(ns.max()) if len(ns) else None,
                "note": notes[0]["note"] if notes else None,
                "verdict": verdicts[0] if verdicts else None,
            })
    return pd.DataFrame(rows)


def bernstein_table(results: pd.DataFrame, attribute: str) -> pd.DataFrame:
    """Bernstein rows of one attribute: δ̄ with its interval and the
    sample-size bound, one row per (preset, class, group)."""
    b = results[(results["attribute"] == attribute) & (results["family"] == "bernstein")]
    if b.empty:
        return b
    size = b[b["metric"].astype(str).str.endswith("-SampleSize")]
    val = b[~b["metric"].astype(str).str.endswith("-SampleSize")].copy()
    key = lambda df, suffix="": list(zip(df["metric"].astype(str).str.removesuffix(suffix), df["class"], df["group"]))
    sizes = dict(zip(key(size, "-SampleSize"), size["value"]))
    val["sample_size"] = [sizes.get(k) for k in key(val)]
    val["_m"] = val["metric"].map({m: i for i, m in enumerate(order_unique(val["metric"]))})
    return val.sort_values(["_m"], kind="stable").drop(columns="_m")


def template_drilldown(scored, attribute: str, *, top: int = 5) -> dict:
    """Which templates drive each group's gap.

    For every template of ``attribute`` that contains at least two groups,
    the mean probability of each class over a group's examples minus the
    template mean (the average of the group means). Per group, the ``top``
    templates by largest absolute deviation over classes.

    Returns {group: DataFrame[template, label, text, n, dev_<class>..., max_abs]}.
    """
    if scored is None:
        return {}
    fr = scored.frame
    mask = (fr["attribute"] == attribute).to_numpy()
    if not mask.any():
        return {}
    classes = list(scored.classes)
    df = fr.loc[mask, ["template", "group"]].reset_index(drop=True)
    for k, c in enumerate(classes):
        df[c] = scored.probs[mask, k]
    df["text"] = fr.loc[mask, "text"].to_numpy() if "text" in fr.columns else None
    df["label"] = fr.loc[mask, "label"].to_numpy() if "label" in fr.columns else None
    gm = df.groupby(["template", "group"], sort=False)[classes].mean()
    n = df.groupby(["template", "group"], sort=False).size()
    ngroups = gm.groupby(level="template", sort=False).size()
    good = ngroups[ngroups >= 2].index
    if len(good) == 0:
        return {}
    gm = gm[gm.index.get_level_values("template").isin(good)]
    tm = gm.groupby(level="template", sort=False).transform("mean")
    dev = gm - tm
    first = df.groupby(["template", "group"], sort=False).first()
    out = {}
    for g in order_unique(df["group"]):
        if g not in dev.index.get_level_values("group"):
            continue
        d = dev.xs(g, level="group")
        t = pd.DataFrame({"template": d.index})
        for c in classes:
            t[f"dev_{c}"] = d[c].to_numpy()
        t["max_abs"] = np.abs(d[classes].to_numpy()).max(axis=1)
        t["n"] = [int(n.loc[(tpl, g)]) for tpl in d.index]
        t["text"] = [first.loc[(tpl, g), "text"] for tpl in d.index]
        t["label"] = [first.loc[(tpl, g), "label"] for tpl in d.index]
        out[g] = t.sort_values("max_abs", ascending=False, kind="stable").head(top).reset_index(drop=True)
    return out
