"""Self-contained HTML report of a results folder.

``write_html_report(results_dir, out)`` reads what a run wrote
(``results.jsonl``, ``run.json``, ``scored.parquet``/``scored.jsonl`` and,
when present, ``failures.jsonl``) and writes one HTML file with inline CSS,
JavaScript and SVG: it fetches nothing when opened.

Per attribute the report shows

- a heatmap of the per-group values (rows: metric and class, columns: groups)
  and one of the per-pair values (columns: pairs). Each cell holds the raw
  value; its colour is the value divided by the largest absolute value of its
  row (red positive, blue negative), as in the figures of Czarnowska et al.
  (2021). The accumulated value sits in an uncoloured last column;
- point-and-interval charts of the per-group metrics (``ci_low``/``ci_high``
  drawn when present);
- the significance tests (statistic, p, adjusted p, effect size), the
  Bernstein rows, verdicts (when the results carry a ``verdict`` column),
  invariance failures (``failures.jsonl``) and metrics without values;
- a per-template drill-down: for every template, each group's mean
  probability of each class minus the template's mean over groups; the
  templates with the largest deviation drive the group's gap.

The data-preparation helpers (:func:`load_report_data`,
:func:`heatmap_tables`, :func:`group_metric_rows`,
:func:`template_drilldown`) are shared with :mod:`bias_suite.report.plots`.
"""
from __future__ import annotations

import datetime as _dt
import html as _html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .files import RESULTS_CSV, RESULTS_JSONL, atomic_write_text, run_file

REPORT_NAME = "report.html"
FAILURES_NAMES = ("failures.jsonl", "inv_failures.jsonl")  # the second is what `bias-suite checklist import` writes
# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
CLASS_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
TINY = 1e-12  # below this a value is rounding noise, not a sign
POS_RGB = (178, 24, 43)  # RdBu ends
NEG_RGB = (33, 102, 172)


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
        return [a for a in pd.unique(self.results["attribute"]) if a is not None and not _isnull(a)]

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


def _isnull(v) -> bool:
    if v is None or v is pd.NA:
        return True
    try:
        return bool(isinstance(v, float) and math.isnan(v))
    except TypeError:
        return False


def read_results_table(path) -> pd.DataFrame:
    """Read ``results.jsonl`` (or ``results.csv``; or a folder holding
    either) keeping any extra columns such as ``verdict``."""
    from ..metrics.engine import RESULT_COLUMNS, results_frame

    path = Path(path)
    if path.is_dir():  # the results the folder's run wrote (run.json lists them)
        path = run_file(path, RESULTS_JSONL, RESULTS_CSV) or path / RESULTS_JSONL
    if not path.exists():
        raise FileNotFoundError(f"no results file at {path} (expected {RESULTS_JSONL} or {RESULTS_CSV})")
    if path.suffix == ".csv":
        raw = pd.read_csv(path, dtype={"group": object, "class": object, "attribute": object})
    else:
        raw = pd.read_json(path, lines=True, dtype=False) if path.stat().st_size else pd.DataFrame(columns=RESULT_COLUMNS)
    return with_extra_columns(results_frame(raw.to_dict("records")), raw)


def with_extra_columns(base: pd.DataFrame, raw: pd.DataFrame) -> pd.DataFrame:
    """``base`` plus the columns of ``raw`` it dropped (same row order)."""
    for c in raw.columns:
        if c not in base.columns:
            col = raw[c].astype(object)
            base[c] = col.where(col.notna(), None).to_numpy()
    return base


def as_results(results) -> pd.DataFrame:
    """A results table from a DataFrame, a RunResult, a folder or a file."""
    if isinstance(results, pd.DataFrame):
        return results
    if hasattr(results, "results") and isinstance(results.results, pd.DataFrame):
        return results.results
    if isinstance(results, (str, Path)):
        return read_results_table(results)
    if isinstance(results, list):
        from ..metrics.engine import results_frame

        raw = pd.DataFrame(results)
        return with_extra_columns(results_frame(results), raw)
    raise TypeError(f"expected a results DataFrame, a RunResult or a results folder, got {type(results).__name__}")


def load_report_data(results_dir, *, scored=None, recompute_failures: bool = True) -> ReportData:
    """Read a results folder: results, ``run.json``, scored examples and
    invariance failures (the last three when present). When the results hold
    INV rows but the folder has no failures file, the failing cases are
    replayed from the scored examples (``recompute_failures``)."""
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
            from ..scoring.scored import as_scored

            s = as_scored(scored)
            if getattr(s, "task", "classification") == "classification" and hasattr(s, "probs"):
                data.scored = s
            else:
                data.warnings.append("per-template drill-down is available for classification runs only")
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
    if data.failures is None and data.scored is not None and recompute_failures and (data.results["family"] == "invariance").any():
        data.failures = _replay_failures(data)
    return data


def _replay_failures(data: ReportData) -> pd.DataFrame | None:
    """The failing INV cases of a run that wrote INV rows but no failures
    file: replayed from the scored probabilities (CheckList fast path) with
    the run's threshold and seed."""
    try:
        from ..interop.checklist import failures
    except ImportError as e:
        data.warnings.append(f"INV failures not shown: cannot import the CheckList interop ({e})")
        return None
    res = data.results
    order = {a: _order_unique(res.loc[(res["attribute"] == a) & res["group"].notna() & ~res["group"].map(_is_pair), "group"])
             for a in data.attributes}
    thr = data.metadata.get("inv_threshold")
    thr = 0.1 if thr is None else float(thr)
    try:
        f = failures(data.scored.to_frame(), threshold=thr, seed=int(data.metadata.get("seed") or 0),
                     group_order_override={a: g for a, g in order.items() if len(g) >= 2} or None)
    except Exception as e:  # the report must not die on a side computation
        data.warnings.append(f"INV failures could not be replayed from the scored examples ({e})")
        return None
    data.failures_source = f"replayed from the scored examples (threshold {thr:g})"
    return f


# ----------------------------------------------------------------- shaping
def _is_pair(g) -> bool:
    return isinstance(g, str) and "|" in g


def _class_rank(classes):
    order = {c: i for i, c in enumerate(classes)}
    return lambda c: (order.get(c, len(order) + (c == "all")), str(c))


def _order_unique(values) -> list:
    return [v for v in pd.unique(pd.Series(list(values), dtype=object)) if not _isnull(v)]


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

    @property
    def row_max(self) -> np.ndarray:
        with np.errstate(all="ignore"):
            a = np.abs(self.values)
            m = np.where(np.isnan(a).all(axis=1), np.nan, np.nanmax(np.where(np.isnan(a), -np.inf, a), axis=1))
        return m

    @property
    def scaled(self) -> np.ndarray:
        """Values divided by their row's largest absolute value, in [-1, 1].
        Rounding noise (|value| < 1e-12) counts as 0, so a row of zeros and
        -1e-17s stays uncoloured."""
        v = np.where(np.abs(self.values) < TINY, 0.0, self.values)
        m = np.nanmax(np.where(np.isnan(v), 0.0, np.abs(v)), axis=1, initial=0.0)[:, None]
        with np.errstate(all="ignore"):
            out = np.where(m > 0, v / m, 0.0)
        return np.where(np.isnan(self.values), np.nan, out)


def _heatmap_kind(res: pd.DataFrame) -> pd.Series:
    g = res["group"]
    pair = g.map(_is_pair)
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
    rank = _class_rank(classes)
    for k in ("group", "pair"):
        part = res[kind == k]
        if part.empty:
            continue
        cols = _order_unique(part["group"])
        metrics = _order_unique(part["metric"])
        rows = []
        for m in metrics:
            sub = part[part["metric"] == m]
            view = sub["view"].iloc[0]
            for c in sorted(_order_unique(sub["class"]), key=rank):
                rows.append((m, c, view))
        R, C = len(rows), len(cols)
        vals = np.full((R, C), np.nan)
        acc = np.full(R, np.nan)
        cells = {}
        col_ix = {g: j for j, g in enumerate(cols)}
        row_ix = {(m, c): i for i, (m, c, _) in enumerate(rows)}
        for rec in part.to_dict("records"):
            i, j = row_ix[(rec["metric"], rec["class"])], col_ix[rec["group"]]
            vals[i, j] = np.nan if _isnull(rec["value"]) else float(rec["value"])
            cells[(i, j)] = rec
        accs = res[(kind == "acc") & res["metric"].isin(metrics)]
        for rec in accs.to_dict("records"):
            i = row_ix.get((rec["metric"], rec["class"]))
            if i is not None:
                acc[i] = np.nan if _isnull(rec["value"]) else float(rec["value"])
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
    res = res[res["group"].notna() & ~res["group"].map(_is_pair)]
    res = res[~res["metric"].astype(str).str.endswith("-SampleSize")]
    out = {}
    for m in _order_unique(res["metric"]):
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
    tests = [m for m in _order_unique(sig["metric"]) if "-" not in m]
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
            notes = [r for r in (main, p) if r is not None and not _isnull(r.get("note"))]
            verdicts = [r.get("verdict") for r in (main, p, adj.iloc[0] if len(adj) else None) if r is not None and not _isnull(r.get("verdict", None))]
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
    val["_m"] = val["metric"].map({m: i for i, m in enumerate(_order_unique(val["metric"]))})
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
    df["label"] = fr.loc[mask, "label"].to_numpy()
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
    for g in _order_unique(df["group"]):
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


# ----------------------------------------------------------------- formatting
def esc(v) -> str:
    return _html.escape("" if v is None else str(v), quote=True)


def fmt(v, digits: int = 3) -> str:
    """Numbers for humans: 3 decimals, thousands separators for large values."""
    if _isnull(v):
        return "–"
    try:
        x = float(v)
    except (TypeError, ValueError):
        return esc(v)
    if not math.isfinite(x):
        return "∞" if x > 0 else ("−∞" if x < 0 else "–")
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.1f}"
    s = f"{x:.{digits}f}"
    if x < 0 and float(s) == 0:
        return s.lstrip("-")  # no "−0.000"
    return s.replace("-", "−") if x < 0 else s


def _fmt_count(v) -> str:
    """A sample-size bound as the smallest integer above it."""
    if _isnull(v):
        return "–"
    x = float(v)
    return "∞" if not math.isfinite(x) else f"{math.floor(x) + 1:,}"


def fmt_p(p) -> str:
    if _isnull(p):
        return "–"
    p = float(p)
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def verdict_kind(v) -> str | None:
    """"bias", "ok" or "data" for the verdict strings; None when absent."""
    if _isnull(v) or not str(v).strip():
        return None
    s = str(v).lower()
    if s.startswith("bias detected"):
        return "bias"
    if s.startswith("no evidence"):
        return "ok"
    if "too little data" in s or "need" in s:
        return "data"
    return "other"


def _badge(v) -> str:
    k = verdict_kind(v)
    if k is None:
        return ""
    return f'<span class="verdict v-{k}">{esc(v)}</span>'


def _cell_style(s: float) -> str:
    if _isnull(s):
        return ""
    rgb = POS_RGB if s >= 0 else NEG_RGB
    a = min(1.0, abs(float(s)))
    r, g, b = (round(255 + (c - 255) * a) for c in rgb)
    ink = "#fff" if a > 0.6 else "#111"
    return f' style="background:rgb({r},{g},{b});color:{ink}"'


def _tooltip(rec: dict | None) -> str:
    if not rec:
        return ""
    parts = [f"{rec.get('metric')} · {rec.get('class')} · {rec.get('group') or 'accumulated'}"]
    parts.append(f"value {fmt(rec.get('value'), 4)}")
    if not _isnull(rec.get("ci_low")) or not _isnull(rec.get("ci_high")):
        parts.append(f"interval [{fmt(rec.get('ci_low'), 4)}, {fmt(rec.get('ci_high'), 4)}]")
    if not _isnull(rec.get("n")):
        parts.append(f"n = {rec.get('n')}")
    if not _isnull(rec.get("note")):
        parts.append(str(rec.get("note")))
    if not _isnull(rec.get("verdict", None)):
        parts.append(f"verdict: {rec.get('verdict')}")
    return esc(" | ".join(parts))


def _metric_info(metric: str) -> tuple[str, str]:
    """(description, source) from the registry, or empty strings."""
    try:
        from ..metrics.catalog import REGISTRY

        spec = REGISTRY.get(metric)
    except Exception:  # registry import must never break a report
        spec = None
    if spec is None:
        if str(metric).startswith("Bernstein-"):
            return ("Bernstein-bounded amortized disparity δ̄ (group minus rest) with its interval", "Ethayarajh 2020")
        return ("", "")
    return (spec.description, spec.source.split(",")[0])


# ----------------------------------------------------------------- rendering
def render_heatmap(hm: Heatmap) -> str:
    scaled = hm.scaled
    what = "groups" if hm.kind == "group" else "pairs"
    head = "".join(f'<th scope="col">{esc(c)}</th>' for c in hm.columns)
    body = []
    prev = None
    for i, (m, c, view) in enumerate(hm.rows):
        desc, src = _metric_info(m)
        first = m != prev
        prev = m
        cls_attr = esc(c)
        tr = [f'<tr data-class="{cls_attr}" data-metric="{esc(m)}"{" class=first" if first else ""}>']
        vtag = '<span class="tag">cf</span>' if view == "counterfactual" else ""
        title = esc(f"{m}: {desc} ({src})" if desc else m)
        tr.append(f'<th scope="row" class="metric{"" if first else " rep"}" title="{title}">{esc(m)} {vtag}</th><td class="cls">{esc(c)}</td>')
        for j in range(len(hm.columns)):
            rec = hm.cells.get((i, j))
            v = hm.values[i, j]
            mark = ""
            if rec is not None and verdict_kind(rec.get("verdict")) == "bias":
                mark = '<span class="dot" aria-label="bias detected">●</span>'
            elif rec is not None and verdict_kind(rec.get("verdict")) == "data":
                mark = '<span class="dot dim" aria-label="too little data">○</span>'
            tr.append(f'<td class="cell"{_cell_style(scaled[i, j])} title="{_tooltip(rec)}">{fmt(v)}{mark}</td>')
        rec = hm.cells.get((i, -1))
        tr.append(f'<td class="acc" title="{_tooltip(rec)}">{fmt(hm.accumulated[i]) if rec is not None else ""}</td>')
        tr.append("</tr>")
        body.append("".join(tr))
    caption = (
        f"{esc(hm.attribute)}: per-{what[:-1]} values (rows: metric and class). Colour: value ÷ the row's largest "
        f"absolute value (red positive, blue negative); the accumulated value is not coloured. "
        f"● verdict “bias detected”, ○ “too little data”; hover a cell for n, interval and notes."
    )
    return (
        f'<div class="scroll"><table class="heatmap" data-attribute="{esc(hm.attribute)}" data-kind="{hm.kind}">'
        f"<caption>{caption}</caption>"
        f'<thead><tr><th scope="col">metric</th><th scope="col">class</th>{head}<th scope="col" class="acc">accumulated</th></tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, n)
    mag = 10 ** math.floor(math.log10(raw))
    step = min((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw), default=raw)
    start = math.ceil(lo / step) * step
    ticks, t = [], start
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def _tick(t: float) -> str:
    s = f"{t:.4g}"
    return s.replace("-", "−") if t < 0 else s


def render_group_chart(metric: str, sub: pd.DataFrame, classes, groups) -> str:
    """An inline SVG: groups down, value across, one point (and interval)
    per class."""
    cls = sorted(_order_unique(sub["class"]), key=_class_rank(classes))
    groups = [g for g in groups if g in set(sub["group"])] or _order_unique(sub["group"])
    vals = pd.concat([sub["value"], sub["ci_low"], sub["ci_high"]]).astype(float)
    vals = vals[np.isfinite(vals)]
    if vals.empty:
        return ""
    lo, hi = float(vals.min()), float(vals.max())
    ref = 1.0 if "Ratio" in metric else 0.0
    if lo - (hi - lo) * 0.5 <= ref <= hi + (hi - lo) * 0.5 or lo <= ref <= hi:
        lo, hi = min(lo, ref), max(hi, ref)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.06
    lo, hi = lo - pad, hi + pad
    left, right, top, band = 150, 20, 34, 8 + 11 * len(cls)
    width = 560
    plot_w = width - left - right
    height = top + band * len(groups) + 34
    X = lambda v: left + (float(v) - lo) / (hi - lo) * plot_w
    parts = [
        f'<svg class="chart" role="img" aria-label="{esc(metric)} per group" viewBox="0 0 {width} {height}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="8" y="14" class="ct">{esc(metric)}</text>',
    ]
    lx = width - right - sum(22 + 6.5 * len(str(c)) for c in cls)
    for k, c in enumerate(cls):
        col = CLASS_COLOURS[classes.index(c) % len(CLASS_COLOURS)] if c in classes else CLASS_COLOURS[k % len(CLASS_COLOURS)]
        parts.append(f'<circle cx="{lx + 6:.1f}" cy="10" r="4" fill="{col}"/><text x="{lx + 13:.1f}" y="14" class="lg">{esc(c)}</text>')
        lx += 22 + 6.5 * len(str(c))
    y0, y1 = top - 4, top + band * len(groups)
    for t in _nice_ticks(lo, hi):
        x = X(t)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y0}" y2="{y1}" class="grid"/><text x="{x:.1f}" y="{y1 + 14}" class="tk" text-anchor="middle">{_tick(t)}</text>')
    if lo <= ref <= hi:
        parts.append(f'<line x1="{X(ref):.1f}" x2="{X(ref):.1f}" y1="{y0}" y2="{y1}" class="ref"/>')
    for gi, g in enumerate(groups):
        yb = top + gi * band
        if gi % 2 == 0:
            parts.append(f'<rect x="{left}" y="{yb - 2}" width="{plot_w}" height="{band}" class="stripe"/>')
        parts.append(f'<text x="{left - 8}" y="{yb + band / 2 + 2:.1f}" class="gl" text-anchor="end">{esc(g)}</text>')
        for k, c in enumerate(cls):
            r = sub[(sub["group"] == g) & (sub["class"] == c)]
            if r.empty or _isnull(r["value"].iloc[0]):
                continue
            rec = r.iloc[0]
            col = CLASS_COLOURS[classes.index(c) % len(CLASS_COLOURS)] if c in classes else CLASS_COLOURS[k % len(CLASS_COLOURS)]
            y = yb + 6 + k * 11
            if not _isnull(rec["ci_low"]) and not _isnull(rec["ci_high"]):
                parts.append(f'<line x1="{X(rec["ci_low"]):.1f}" x2="{X(rec["ci_high"]):.1f}" y1="{y}" y2="{y}" stroke="{col}" stroke-width="1.6"/>')
            parts.append(f'<circle cx="{X(rec["value"]):.1f}" cy="{y}" r="3.6" fill="{col}"><title>{_tooltip(rec.to_dict())}</title></circle>')
    parts.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 4}" class="tk" text-anchor="middle">value{" (line: " + fmt(ref, 0) + ")" if lo <= ref <= hi else ""}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(headers, rows, cls="data", attrs="") -> str:
    head = "".join(f'<th scope="col">{h}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="scroll"><table class="{cls}"{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def render_significance(sig: pd.DataFrame) -> str:
    if sig.empty:
        return '<p class="muted">No significance tests in these results.</p>'
    rows = []
    for r in sig.to_dict("records"):
        star = ""
        p_adj = r["p_adj"] if not _isnull(r["p_adj"]) else r["p"]
        if not _isnull(p_adj) and float(p_adj) < 0.05:
            star = ' <span class="verdict v-bias">p&lt;0.05</span>'
        rows.append([
            esc(r["attribute"]), esc(r["class"]), esc(r["test"]), fmt(r["statistic"]), fmt_p(r["p"]),
            fmt_p(r["p_adj"]) + (f' <span class="muted">({esc(r["adjustment"])})</span>' if r.get("adjustment") else "") + star,
            f'{fmt(r["effect"])} <span class="muted">{esc(r["effect_name"])}</span>',
            "" if _isnull(r["n"]) else str(r["n"]),
            _badge(r.get("verdict")) or esc(r.get("note") or ""),
        ])
    return _table(["attribute", "class", "test", "statistic", "p", "adjusted p", "effect size", "templates", "verdict / note"], rows, "data significance")


def render_verdicts(res: pd.DataFrame) -> str:
    if "verdict" not in res.columns:
        return ""
    v = res[res["verdict"].notna() & (res["verdict"].astype(str).str.strip() != "")]
    if v.empty:
        return ""
    kinds = v["verdict"].map(verdict_kind)
    order = {"bias": 0, "data": 1, "other": 2, "ok": 3}
    v = v.assign(_k=kinds.map(order)).sort_values("_k", kind="stable")
    rows = []
    for r in v.to_dict("records"):
        ci = "" if _isnull(r["ci_low"]) and _isnull(r["ci_high"]) else f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]"
        rows.append([esc(r["metric"]), esc(r["class"]), esc(r["group"] or "accumulated"), fmt(r["value"]), ci,
                     "" if _isnull(r["n"]) else str(r["n"]), _badge(r["verdict"])])
    counts = kinds.value_counts()
    summary = ", ".join(f"{counts.get(k, 0)} {label}" for k, label in (("bias", "bias detected"), ("ok", "no evidence of bias"), ("data", "too little data")) if counts.get(k, 0))
    return f'<p>{esc(summary)}</p>' + _table(["metric", "class", "group", "value", "interval", "n", "verdict"], rows, "data verdicts")


def render_bernstein(b: pd.DataFrame) -> str:
    if b.empty:
        return ""
    rows = []
    for r in b.to_dict("records"):
        rows.append([
            esc(str(r["metric"]).removeprefix("Bernstein-")), esc(r["class"]), esc(r["group"]), fmt(r["value"]),
            f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]", "" if _isnull(r["n"]) else str(r["n"]),
            _fmt_count(r.get("sample_size")), _badge(r.get("verdict")) or esc(r.get("note") or ""),
        ])
    return _table(["preset", "class", "group", "δ̄ (group − rest)", "Bernstein interval", "n", "n needed", "verdict / note"], rows, "data bernstein")


def _fmt_sentence_probs(p) -> str:
    if isinstance(p, dict):
        return ", ".join(f"{esc(k)} {fmt(v)}" for k, v in p.items())
    if isinstance(p, (list, tuple)):
        return ", ".join(fmt(x) for x in p)
    return fmt(p)


def render_failures(fail: pd.DataFrame, attribute: str | None, *, limit: int = 50) -> str:
    """INV failures: per failing case the sentences (group, prediction and
    class probabilities of each) and the largest change, largest first."""
    if fail is None or fail.empty:
        return ""
    f = fail
    if attribute is not None and "attribute" in f.columns:
        f = f[f["attribute"] == attribute]
    if f.empty:
        return ""
    if "change" in f.columns:
        f = f.sort_values("change", ascending=False, kind="stable", key=lambda s: pd.to_numeric(s, errors="coerce"))
    sent_col = next((c for c in ("sentences", "pairs_text", "texts", "text") if c in f.columns), None)
    if sent_col is None and "pairs" in f.columns and f["pairs"].map(lambda v: isinstance(v, (list, tuple)) and v and isinstance(v[0], (list, tuple))).any():
        sent_col = "pairs"  # pairs of sentences
    prob_col = next((c for c in ("probabilities", "probs", "probas") if c in f.columns), None)
    inline = {"template", "attribute", sent_col, prob_col, "groups", "preds", "terms", "id"}
    extra = [c for c in f.columns if c not in inline]
    rows = []
    for r in f.head(limit).to_dict("records"):
        sents = r.get(sent_col) if sent_col else None
        probs = r.get(prob_col) if prob_col else None
        groups = r.get("groups") if isinstance(r.get("groups"), (list, tuple)) else None
        preds = r.get("preds") if isinstance(r.get("preds"), (list, tuple)) else None
        if isinstance(sents, (list, tuple)) and sents and isinstance(sents[0], (list, tuple)):
            sents = [s for pair in sents for s in pair]  # a list of pairs -> one list
        if isinstance(sents, str):
            sents = [sents]
        lines = []
        for k, s in enumerate(sents or []):
            p = probs[k] if isinstance(probs, (list, tuple)) and k < len(probs) else None
            tag = f'<span class="tag">{esc(groups[k])}</span> ' if groups and k < len(groups) else ""
            pred = f"→ <b>{esc(preds[k])}</b> " if preds and k < len(preds) else ""
            pr = _fmt_sentence_probs(p) if p is not None else ""
            lines.append(f'<div class="sent"><span>{tag}{esc(s)}</span><span class="probs">{pred}{pr}</span></div>')
        if not sents and probs is not None:
            lines.append(f'<div class="probs">{_fmt_sentence_probs(probs)}</div>')
        rows.append([esc(r.get("template", "")), "".join(lines)] + [esc(_short(r.get(c))) for c in extra])
    more = f'<p class="muted">Showing the {limit} largest of {len(f)} failures.</p>' if len(f) > limit else ""
    return _table(["template", "sentences, predictions and probabilities"] + [esc(c) for c in extra], rows, "data failures") + more


def _short(v, n: int = 160) -> str:
    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        s = ", ".join(v)
    elif isinstance(v, (list, dict, tuple)):
        s = json.dumps(v, default=str)
    elif _isnull(v):
        return ""
    elif isinstance(v, float):
        return fmt(v)
    else:
        s = str(v)
    return s if len(s) <= n else s[: n - 1] + "…"


def render_drilldown(dd: dict, classes) -> str:
    if not dd:
        return ""
    blocks = []
    for g, t in dd.items():
        rows = []
        for r in t.to_dict("records"):
            devs = []
            for c in classes:
                d = r.get(f"dev_{c}")
                s = 0 if _isnull(d) or r["max_abs"] == 0 else d / r["max_abs"]
                devs.append(f'<span class="dev"{_cell_style(s * 0.7)}>{fmt(d)}</span>')
            rows.append([esc(r["template"]), esc(r["label"] if not _isnull(r["label"]) else ""), esc(r["text"]), str(r["n"]), " ".join(devs)])
        head = f"Δ mean p ({' / '.join(esc(c) for c in classes)})"
        blocks.append(f'<details class="dd" open><summary><b>{esc(g)}</b>: top {len(t)} templates</summary>'
                      + _table(["template", "gold", "example (this group)", "n", head], rows, "data drilldown") + "</details>")
    return "".join(blocks)


def render_accumulated(acc: pd.DataFrame) -> str:
    if acc.empty:
        return ""
    rows = [[esc(r["metric"]), esc(r["view"]), esc(r["class"]), fmt(r["value"]),
             "" if _isnull(r["ci_low"]) else f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]",
             "" if _isnull(r["n"]) else str(r["n"]), _badge(r.get("verdict")) or esc(r.get("note") or "")]
            for r in acc.to_dict("records")]
    return _table(["metric", "view", "class", "value", "interval", "n", "verdict / note"], rows, "data accumulated")


def render_rows(df: pd.DataFrame) -> str:
    """Result rows as a plain table (metric, class, group, value, interval, n, verdict/note)."""
    if df.empty:
        return ""
    rows = [[esc(r["metric"]), esc(r["class"]), esc(r["group"] or "accumulated"), fmt(r["value"]),
             "" if _isnull(r["ci_low"]) else f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]",
             "" if _isnull(r["n"]) else str(r["n"]), _badge(r.get("verdict")) or esc(r.get("note") or "")]
            for r in df.to_dict("records")]
    return _table(["metric", "class", "group", "value", "interval", "n", "verdict / note"], rows, "data rows")


def render_missing(miss: pd.DataFrame) -> str:
    if miss.empty:
        return ""
    items = "".join(f"<li><b>{esc(r['metric'])}</b> ({esc(r['class'])}): {esc(r['note'] or 'no value')}</li>" for r in miss.to_dict("records"))
    return f'<details class="missing"><summary>{len(miss)} metric/class combinations without values</summary><ul>{items}</ul></details>'


def render_metadata(meta: dict, data: ReportData) -> str:
    if not meta:
        return '<p class="muted">No run.json in the results folder: model, suites and seed unknown.</p>'
    rows = []
    suites = meta.get("suites")
    pretty = {
        "model": meta.get("model"),
        "suites": ", ".join(f"{s.get('name')} ({s.get('path')})" if isinstance(s, dict) else str(s) for s in suites) if isinstance(suites, list) else suites,
        "seed": meta.get("seed"),
        "max_tuples": meta.get("max_tuples"),
        "classes": ", ".join(map(str, meta.get("classes") or [])) or None,
        "examples": meta.get("examples"),
        "bias_suite": meta.get("bias_suite"),
        "python": meta.get("python"),
        "created": meta.get("created"),
    }
    fp = meta.get("model_fingerprint")
    if isinstance(fp, dict):
        sha = fp.get("weights_sha256")
        pretty["model fingerprint"] = ", ".join(f"{k}={v}" for k, v in fp.items()
                                                if v is not None and k != "weights_sha256" and not isinstance(v, (list, dict)))
        if sha:
            pretty["weights sha256"] = sha
    files = meta.get("files")
    if isinstance(files, dict) and files:  # the run's own files (run.json lists them)
        pretty["files"] = ", ".join(sorted(files))
    versions = meta.get("versions")
    if isinstance(versions, dict):
        pretty["versions"] = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
    for k, v in meta.items():
        if k not in pretty and k not in ("model_fingerprint", "versions", "files") and v is not None:
            pretty[k] = v if not isinstance(v, (dict, list)) else json.dumps(v, default=str)
    for k, v in pretty.items():
        if v is None or v == "":
            continue
        rows.append(f'<tr><th scope="row">{esc(k)}</th><td>{esc(v)}</td></tr>')
    return f'<table class="meta"><tbody>{"".join(rows)}</tbody></table>'


CSS = """
:root{--ink:#1b1f23;--muted:#6a737d;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--accent:#0b5cad}
*{box-sizing:border-box}
body{font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--ink);background:var(--bg);margin:0}
header{padding:18px 28px;border-bottom:1px solid var(--line);background:var(--soft)}
header h1{margin:0 0 4px;font-size:22px}
main{padding:8px 28px 40px;max-width:1400px}
h2{font-size:19px;margin:28px 0 8px;padding-top:8px;border-top:2px solid var(--ink)}
h3{font-size:15px;margin:20px 0 6px}
nav a{margin-right:12px;color:var(--accent)}
.muted{color:var(--muted)}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}
caption{caption-side:bottom;text-align:left;color:var(--muted);font-size:12px;padding-top:4px;max-width:900px}
th,td{padding:3px 8px;border:1px solid var(--line);text-align:left;vertical-align:top}
thead th{background:var(--soft);font-weight:600;white-space:nowrap}
table.heatmap td.cell,table.heatmap td.acc{text-align:right;min-width:66px;white-space:nowrap}
table.heatmap td.acc{background:#fff;font-weight:600;border-left:3px double var(--ink)}
table.heatmap thead th.acc{border-left:3px double var(--ink)}
table.heatmap tr.first th,table.heatmap tr.first td{border-top:2px solid #8c959f}
table.heatmap th.metric{white-space:nowrap;font-weight:600;background:#fff}
table.heatmap th.rep{color:#9aa3ad;font-weight:400}
.filtered table.heatmap th.rep{color:inherit;font-weight:600}
table.heatmap td.cls{color:var(--muted);white-space:nowrap}
.tag{font-size:10px;background:#eef;border:1px solid #ccd;border-radius:3px;padding:0 3px;color:#335;font-weight:400}
.dot{font-size:10px;margin-left:3px}.dot.dim{opacity:.7}
table.data td{font-size:13px}
table.meta th{background:var(--soft);white-space:nowrap}
.verdict{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;white-space:nowrap}
.v-bias{background:#fde2e1;color:#8a1111;border:1px solid #f1a7a4}
.v-ok{background:#e3f4e6;color:#145a22;border:1px solid #9bd3a6}
.v-data{background:#fff4d6;color:#6b4a00;border:1px solid #e6c66b}
.v-other{background:#eee;color:#333;border:1px solid #ccc}
.sent{margin:1px 0;display:flex;justify-content:space-between;gap:12px}.sent .probs{white-space:nowrap}
.probs{color:var(--muted);font-size:12px;font-variant-numeric:tabular-nums}
.dev{display:inline-block;min-width:54px;text-align:right;padding:0 4px;border-radius:3px}
svg.chart{max-width:100%;height:auto;margin:4px 18px 8px 0;border:1px solid var(--line);background:#fff}
svg .ct{font-weight:600;font-size:13px}svg .lg,svg .tk{font-size:11px;fill:#444}svg .gl{font-size:12px;fill:#222}
svg .grid{stroke:#e4e7eb}svg .ref{stroke:#555;stroke-dasharray:3 3}svg .stripe{fill:#f7f8fa}
.charts{display:flex;flex-wrap:wrap}
.controls{margin:6px 0}
.warn{background:#fff4d6;border:1px solid #e6c66b;padding:6px 10px;border-radius:4px}
details summary{cursor:pointer;margin:4px 0}
footer{color:var(--muted);font-size:12px;padding:16px 28px;border-top:1px solid var(--line)}
@media print{nav,.controls{display:none}h2{break-before:page}}
"""

JS = """
(function(){
  'use strict';
  function filter(section, cls){
    var rows = section.querySelectorAll('table.heatmap tbody tr');
    for (var i = 0; i < rows.length; i++){
      var show = cls === '' || rows[i].getAttribute('data-class') === cls;
      rows[i].style.display = show ? '' : 'none';
    }
  }
  var selects = document.querySelectorAll('select.class-filter');
  for (var i = 0; i < selects.length; i++){
    selects[i].addEventListener('change', function(ev){
      var sec = ev.target.closest('section');
      if (sec) { filter(sec, ev.target.value); sec.classList.toggle('filtered', ev.target.value !== ''); }
    });
  }
  document.documentElement.setAttribute('data-report-ready', '1');
})();
"""


def _slug(s) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in str(s)).strip("-").lower() or "x"


def render_report(data: ReportData, *, title: str | None = None, top_templates: int = 5) -> str:
    """The report as one HTML string."""
    from .. import __version__

    res = data.results
    classes = data.classes
    attrs = data.attributes
    meta = data.metadata
    model = meta.get("model") or meta.get("scored") or "results"
    title = title or f"bias_suite report — {model}"
    sections = []
    for a in attrs:
        ra = res[res["attribute"] == a]
        sid = f"attr-{_slug(a)}"
        parts = [f'<section class="attribute" id="{sid}" data-attribute="{esc(a)}"><h2>{esc(a)}</h2>']
        groups = _order_unique(ra.loc[ra["group"].notna() & ~ra["group"].map(_is_pair), "group"])
        if data.scored is not None:
            fr = data.scored.frame
            groups = groups or _order_unique(fr.loc[fr["attribute"] == a, "group"])
        if groups:
            parts.append(f'<p class="muted">groups: {", ".join(esc(g) for g in groups)}</p>')
        cls_here = sorted(_order_unique(ra["class"]), key=_class_rank(classes))
        hms = heatmap_tables(res, a, classes)
        if len(cls_here) > 1 and hms:
            opts = "".join(f'<option value="{esc(c)}">{esc(c)}</option>' for c in cls_here)
            parts.append(f'<div class="controls"><label>show class <select class="class-filter"><option value="">all</option>{opts}</select></label></div>')
        for hm in hms:
            parts.append(f"<h3>{'Per-group metrics' if hm.kind == 'group' else 'Pairwise metrics'}</h3>")
            parts.append(render_heatmap(hm))
        if not hms:
            parts.append('<p class="muted">No per-group or per-pair values for this attribute.</p>')
        acc = accumulated_only(res, a)
        if not acc.empty:
            parts.append("<h3>Metrics with one value per class</h3>" + render_accumulated(acc))
        gm = group_metric_rows(res, a)
        if gm:
            charts = "".join(render_group_chart(m, sub, classes, groups) for m, sub in gm.items())
            parts.append(f'<h3>Per-group values with intervals</h3><div class="charts">{charts}</div>')
        sig = significance_table(res, a)
        parts.append("<h3>Significance across templates</h3>" + render_significance(sig))
        bern = bernstein_table(res, a)
        if not bern.empty:
            parts.append("<h3>Bernstein-bounded disparity</h3>" + render_bernstein(bern))
        vhtml = render_verdicts(ra)
        if vhtml:
            parts.append("<h3>Verdicts</h3>" + vhtml)
        inv = ra[ra["family"] == "invariance"]
        fhtml = render_failures(data.failures, a)
        if not inv.empty or fhtml:
            parts.append("<h3>Invariance (INV) tests</h3>")
            if not inv.empty:
                parts.append(render_rows(inv))
            if fhtml and data.failures_source:
                parts.append(f'<p class="muted">Failing cases ({esc(data.failures_source)}):</p>')
            parts.append(fhtml or '<p class="muted">No INV failure cases recorded for this attribute.</p>')
        dd = template_drilldown(data.scored, a, top=top_templates)
        if dd:
            parts.append(
                "<h3>Which templates drive each group's gap</h3>"
                '<p class="muted">Per template: the group\'s mean probability of each class minus the template\'s mean over '
                f"groups; the {top_templates} templates with the largest absolute deviation per group.</p>" + render_drilldown(dd, classes)
            )
        parts.append(render_missing(missing_values(res, a)))
        parts.append("</section>")
        sections.append("".join(parts))
    # failures not tied to a known attribute
    if data.failures is not None and not data.failures.empty:
        rest = data.failures
        if "attribute" in rest.columns:
            rest = rest[~rest["attribute"].isin(attrs)]
        if not rest.empty:
            sections.append('<section id="inv-other"><h2>Invariance failures (other)</h2>' + render_failures(rest, None) + "</section>")
    nav = "".join(f'<a href="#attr-{_slug(a)}">{esc(a)}</a>' for a in attrs)
    sig_all = significance_table(res)
    overview = []
    if data.has_verdicts:
        kinds = res["verdict"].map(verdict_kind)
        nb = int((kinds == "bias").sum())
        overview.append(f"<p><b>{nb}</b> result{'s' if nb != 1 else ''} with verdict “bias detected”.</p>")
    if not sig_all.empty:
        p = sig_all["p_adj"].where(sig_all["p_adj"].notna(), sig_all["p"]).astype(float)
        overview.append(f"<p><b>{int((p < 0.05).sum())}</b> of {len(sig_all)} significance tests below 0.05 after adjustment.</p>")
    warn = "".join(f'<p class="warn">{esc(w)}</p>' for w in data.warnings)
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{esc(title)}</h1>"
        f'<div class="muted">{len(res)} result rows · {len(attrs)} attribute{"s" if len(attrs) != 1 else ""} · classes {esc(", ".join(map(str, classes)))}</div>'
        f"<nav>{nav}<a href=\"#run\">run</a></nav></header><main>{warn}"
        + "".join(overview)
        + "".join(sections)
        + f'<section id="run"><h2>Run</h2>{render_metadata(meta, data)}</section>'
        + f"</main><footer>Written by bias_suite {esc(__version__)} on {esc(created)} from {esc(data.source or '')}.</footer>"
        + f"<script>{JS}</script></body></html>\n"
    )


def write_html_report(results_dir, out=None, *, title: str | None = None, top_templates: int = 5) -> Path:
    """Write the self-contained HTML report of a results folder (atomically).

    Parameters
    ----------
    results_dir : a folder with ``results.jsonl`` (and optionally ``run.json``,
        ``scored.parquet``/``scored.jsonl``, ``failures.jsonl``), or the
        results file itself.
    out : the HTML file (default ``results_dir/report.html``).

    Returns
    -------
    Path of the written file.
    """
    data = load_report_data(results_dir)
    out = Path(out) if out is not None else data.source / REPORT_NAME
    return atomic_write_text(out, render_report(data, title=title, top_templates=top_templates))
