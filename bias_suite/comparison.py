"""Compare models: did the bias change?

``compare(baseline, candidate, *more)`` pairs the models' scored examples
by id (their texts checked), evaluates every model on the same examples
with the same settings and the same seed, so that the cluster bootstrap
draws the same template resamples for all of them, and judges the change
of every judged value with its paired interval
(:mod:`bias_suite.stats.change`): ``improved``, ``worsened``,
``unchanged`` or ``inconclusive``. The contract is docs/compare.md.

>>> from bias_suite import compare
>>> comp = compare("results/base", "results/candidate")  # doctest: +SKIP
>>> comp.findings("worsened")  # doctest: +SKIP

Each model is a run folder (its scored examples; a run that mixes task
families has its other parts in subfolders, compared part by part), a
scored file (JSONL or Parquet), a DataFrame of scored examples or a
:class:`~bias_suite.pipeline.RunResult`. A model is named by its ``run.json``,
else by the file's stem. ``bias-suite compare`` and ``run(...,
baseline=DIR)`` call this module; :mod:`bias_suite.report.compare` prints
and renders the result.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__
from .evaluation import evaluate_with_replicates
from .stats.bootstrap.terms import common_selection
from .exceptions import BiasSuiteError, PairingError
from .options import INHERIT, EvaluationOptions, recorded_options
from .families import as_scored, family_of, read_scored
from .io import atomic_path, atomic_write_text
from .io.results import RUN_JSON, SUBFOLDERS, file_entry, read_manifest, run_file
from .io.tables import write_jsonl
from .stats.change import CHANGE_COLUMNS, CHANGES, SCALES, paired_changes
from .stats.topics import SEVERITY, TOPIC_ORDER, ordered_topics, topic_of

__all__ = ["compare", "Comparison", "PairingError", "ModelInput", "read_model", "write_comparison",
           "compare_with_baseline", "COMPARISON_JSONL", "COMPARISON_CSV", "COMPARISON_JSON", "EXIT_WORSENED"]

COMPARISON_JSONL = "comparison.jsonl"
COMPARISON_CSV = "comparison.csv"
COMPARISON_JSON = "comparison.json"
#: the exit status of ``bias-suite compare --fail-on worsened`` when a value worsened (that of a failed gate)
EXIT_WORSENED = 3
#: the columns of a comparison, in order: who is compared, then :data:`bias_suite.stats.change.CHANGE_COLUMNS`
COLUMNS = ["baseline", "candidate", "task"] + CHANGE_COLUMNS + ["source"]


# --------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------
@dataclass
class ModelInput:
    """One model of a comparison: its scored data per task family (in the
    order of the run's parts), its run metadata per task and where it came from."""

    name: str
    parts: dict
    meta: dict = field(default_factory=dict)
    source: str = ""


def _run_meta(folder: Path) -> dict:
    try:
        doc = json.loads((folder / RUN_JSON).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _folder_part(folder: Path):
    """(scored data, run.json) of one run folder, or None without scored examples."""
    path = run_file(folder, "scored.parquet", "scored.jsonl")
    if path is None:
        return None
    return read_scored(path), _run_meta(folder)


def read_model(x, default_name: str) -> ModelInput:
    """A :class:`ModelInput` from a run folder, a scored file, a DataFrame,
    scored data or a RunResult (see the module doc)."""
    if isinstance(x, ModelInput):
        return x
    if hasattr(x, "parts") and hasattr(x, "scored") and callable(x.parts):  # a RunResult
        parts, meta = {}, {}
        for p in x.parts():
            parts[p.scored.task] = p.scored
            meta[p.scored.task] = dict(p.metadata or {})
        return ModelInput(str(x.model), parts, meta, str(getattr(x, "folder", None) or x.model))
    if isinstance(x, (str, Path)):
        path = Path(x)
        if path.is_dir():
            found = [(path, _folder_part(path))] + [(path / s, _folder_part(path / s)) for s in SUBFOLDERS
                                                    if (path / s / RUN_JSON).is_file()]
            found = [(p, f) for p, f in found if f is not None]
            if not found:
                raise BiasSuiteError(f"{path}: no scored examples (a run folder holds scored.jsonl or "
                                     "scored.parquet, listed in its run.json); give a run folder or a scored file")
            parts = {data.task: data for _, (data, _) in found}
            meta = {data.task: m for _, (data, m) in found}
            first = found[0][1][1]
            return ModelInput(str(first.get("model") or path.name), parts, meta, str(path))
        if not path.exists():
            raise BiasSuiteError(f"{path}: no such run folder or scored file")
        data = read_scored(path)
        meta = _run_meta(path.parent) if path.name in (read_manifest(path.parent) or {}) else {}
        return ModelInput(str(meta.get("model") or path.stem), {data.task: data}, {data.task: meta}, str(path))
    data = as_scored(x)
    return ModelInput(default_name, {data.task: data}, {}, default_name)


def _ids(data) -> np.ndarray:
    return data.frame["id"].astype(str).to_numpy(dtype=object)


def _identity(data) -> pd.DataFrame:
    """What must be equal for two examples of one id: the identity columns
    and the text (tokens) and gold labels (tags)."""
    fr = data.frame
    cols = {c: fr[c].astype(object).to_numpy() for c in ("template", "attribute", "group", "term", "text", "label")
            if c in fr.columns}
    for name in ("tokens", "tags"):
        v = getattr(data, name, None)
        if v is not None and not isinstance(v, np.ndarray):
            cols[name] = np.asarray([" ".join(t) if isinstance(t, (list, tuple)) else t for t in v], dtype=object)
    return pd.DataFrame(cols)


def _same(a, b) -> np.ndarray:
    a, b = pd.Series(a, dtype=object), pd.Series(b, dtype=object)
    return ((a == b) | (a.isna() & b.isna())).to_numpy()


def _pair(base, other):
    """(rows of the baseline, rows of ``other``) of the examples both hold
    with the same identity, in the baseline's order; and what does not pair:
    {"only_baseline": [ids], "only_candidate": [ids], "mismatched": count,
    "mismatch": [(id, field, baseline's, other's, count) per field]}."""
    ib, io_ = _ids(base), _ids(other)
    pos = pd.Series(np.arange(len(io_)), index=pd.Index(io_))
    hit = pos.reindex(ib).to_numpy()
    has = ~np.isnan(hit)
    rb = np.flatnonzero(has)
    ro = hit[has].astype(np.int64)
    only_b = list(ib[~has])
    seen = set(ib)
    only_o = [i for i in io_ if i not in seen] if len(io_) != len(rb) else []
    idb, ido = _identity(base), _identity(other)
    ok = np.ones(len(rb), dtype=bool)
    mismatch = []
    for c in idb.columns:
        if c not in ido.columns:
            continue
        same = _same(idb[c].to_numpy()[rb], ido[c].to_numpy()[ro])
        bad = np.flatnonzero(~same & ok)
        if bad.size:
            k = bad[0]
            mismatch.append((ib[rb[k]], c, idb[c].iloc[rb[k]], ido[c].iloc[ro[k]], int(bad.size)))
        ok &= same
    return rb[ok], ro[ok], {"only_baseline": only_b, "only_candidate": only_o, "mismatched": int((~ok).sum()),
                            "mismatch": mismatch}


def _short(v, n: int = 60) -> str:
    s = str(v)
    return repr(s if len(s) <= n else s[: n - 1] + "…")


def _pairing_error(names, label, info, common: int) -> PairingError:
    b, c = names
    bits = []
    if info["only_baseline"]:
        bits.append(f"{len(info['only_baseline'])} examples of {b} have no id in {c} (e.g. {_short(info['only_baseline'][0])})")
    if info["only_candidate"]:
        bits.append(f"{len(info['only_candidate'])} examples of {c} have no id in {b} (e.g. {_short(info['only_candidate'][0])})")
    if info["mismatched"]:
        i, col, x, y, _ = info["mismatch"][0]
        bits.append(f"{info['mismatched']} ids hold different examples (e.g. id {_short(i)}: {col} {_short(x)} in {b}, "
                    f"{_short(y)} in {c})")
    what = f" ({label} examples)" if label else ""
    return PairingError(f"the examples of {b} and {c}{what} do not pair: " + "; ".join(bits)
                        + f"; compare runs of the same examples, or keep the {common} common ones with --inner "
                          "(inner=True)")


def _align(models: list, inner: bool):
    """Per task: the models' data on the same examples in the same order,
    and how many examples each model lost; raises :class:`PairingError`."""
    base = models[0]
    tasks = list(base.parts)
    dropped = {m.name: 0 for m in models}
    for m in models[1:]:
        for t in m.parts:
            if t not in tasks:
                if not inner:
                    raise PairingError(f"{m.name} has {family_of(m.parts[t]).label or t} examples and {base.name} "
                                       "none; compare runs of the same suites, or pass --inner (inner=True)")
                dropped[m.name] += len(m.parts[t])
        for t in list(tasks):
            if t not in m.parts:
                if not inner:
                    raise PairingError(f"{base.name} has {family_of(base.parts[t]).label or t} examples and "
                                       f"{m.name} none; compare runs of the same suites, or pass --inner (inner=True)")
    common = [t for t in tasks if all(t in m.parts for m in models)]
    for t in tasks:
        if t not in common:
            for m in models:
                if t in m.parts:
                    dropped[m.name] += len(m.parts[t])
    aligned = {}
    for t in common:
        b = base.parts[t]
        keep = np.ones(len(b), dtype=bool)
        rows = []
        label = family_of(b).label
        for m in models[1:]:
            rb, ro, info = _pair(b, m.parts[t])
            lost = info["only_baseline"] or info["only_candidate"] or info["mismatched"]
            if lost and not inner:
                raise _pairing_error((base.name, m.name), label, info, len(rb))
            mask = np.zeros(len(b), dtype=bool)
            mask[rb] = True
            keep &= mask
            rows.append(pd.Series(ro, index=rb))
        rows_b = np.flatnonzero(keep)
        if rows_b.size == 0:
            raise PairingError(f"{base.name} and the other models have no {label + ' ' if label else ''}examples in common")
        parts = [b.take(rows_b)] + [m.parts[t].take(r.reindex(rows_b).to_numpy(dtype=np.int64))
                                    for m, r in zip(models[1:], rows)]
        for m, p in zip(models, parts):
            dropped[m.name] += len(m.parts[t]) - len(p)
        aligned[t] = parts
    return aligned, dropped


def _unique_names(models: list) -> None:
    """Models of one name are told apart by where they came from (the run
    folder's or the file's name: ``default-sentiment (int8)``), else by
    their place (``name (2)``)."""
    names = [m.name for m in models]
    for name in set(names):
        same = [m for m in models if m.name == name]
        if len(same) < 2:
            continue
        tags = [Path(m.source).name if m.source else "" for m in same]
        if all(tags) and len(set(tags)) == len(tags) and all(t != name for t in tags):
            for m, t in zip(same, tags):
                m.name = f"{name} ({t})"
        else:
            for k, m in enumerate(same[1:], 2):
                m.name = f"{name} ({k})"


# --------------------------------------------------------------------------
# the comparison
# --------------------------------------------------------------------------
@dataclass
class ComparisonInfo:
    """What a :class:`Comparison` knows beyond its rows."""

    models: list
    results: dict            # model name -> {task: Results on the paired examples}
    scored: dict             # model name -> {task: scored data, paired and aligned}
    settings: dict
    dropped: dict            # model name -> examples left out (inner)
    family: dict             # "candidate|task" -> the error control's sizes {"family": m, "units": U, "selected": R}
    sources: dict            # model name -> where it came from
    labels: dict             # task -> its label in summaries ("" for the first family)


def _label(attribute, task, labels) -> str:
    lab = labels.get(task, "")
    return f"{attribute} ({lab})" if lab and len(labels) > 1 else str(attribute)


class Comparison(pd.DataFrame):
    """The rows of a comparison (a pandas DataFrame, columns :data:`COLUMNS`)
    with the headline at hand: :meth:`findings`, :meth:`summary`,
    :meth:`counts`, :meth:`print` (what ``bias-suite compare`` prints), and
    for several models :meth:`models` and :meth:`ranking`; a notebook shows
    the same screen. ``details`` holds each model's results and scored
    examples on the paired examples and the settings."""

    _metadata = ["details"]
    details = None  # a ComparisonInfo; None for rows read back from comparison.jsonl
    _internal_names = pd.DataFrame._internal_names + ["_view"]
    _internal_names_set = set(_internal_names)
    # How the comparison shows itself (print, a notebook's view): set by ``bias_suite.compare``
    # (bias_suite.api, above the report layer); a frame made from it (a filter, some columns) is a table
    _view = None

    @property
    def _constructor(self):
        return Comparison

    def findings(self, change=None, top: int | None = None) -> pd.DataFrame:
        """Rows ranked by change (worsened, improved, inconclusive,
        unchanged), then by the size of the change in units of τ; ``change``
        keeps one word (or a list)."""
        keep = [change] if isinstance(change, str) else list(change) if change is not None else list(CHANGES)
        f = pd.DataFrame(self[self["change"].isin(keep)])
        rank = f["change"].map({c: i for i, c in enumerate(CHANGES)})
        size = -(f["change_value"].abs() / f["threshold"]).fillna(-1.0)
        f = f.assign(_r=rank, _s=size).sort_values(["_r", "_s"], kind="stable").drop(columns=["_r", "_s"])
        return (f.head(top) if top else f).reset_index(drop=True)

    def counts(self, candidate: str | None = None) -> dict:
        """``{change: rows}`` (of one candidate), rows without a paired interval apart."""
        c = self if candidate is None else self[self["candidate"] == candidate]
        paired = c["ci_low"].notna() | (c["scale"] == SCALES["parts"])
        out = {w: int(((c["change"] == w) & paired).sum()) for w in CHANGES}
        out["not resampled"] = int((~paired).sum())
        return out

    def print(self, *, lines: int = 60, file=None, width: int | None = None) -> None:
        """Print the comparison as ``bias-suite compare`` prints it: the
        grid of changes, what got materially worse and better with both
        models' values, the pair whose gap changed most, the counts.

        lines : at most this many lines (``--lines``).
        file, width : print to this stream at this width (default: stdout).
        """
        if self._view is None:
            raise BiasSuiteError("print() shows the comparison bias_suite.compare returned; a frame made from it "
                                 "is a table (print(frame))")
        self._view.print(self, lines=lines, file=file, width=width)

    def _repr_html_(self):
        if self._view is None or getattr(self, "details", None) is None:
            return super()._repr_html_()
        return self._view.html(self)

    def summary(self) -> pd.DataFrame:
        """One row per candidate, attribute and topic (topics in
        :data:`~bias_suite.stats.topics.TOPIC_ORDER`): the most urgent
        change (worsened, improved, inconclusive, unchanged), the largest
        change in units of τ among its rows, where it is, and the count of
        each change. Rows without a paired interval are left out, and so
        are spill-overs (a ``source``) when another row has the same change."""
        cols = ["candidate", "attribute", "topic", "change", "size", "metric", "class", "group", "source", *CHANGES]
        info = getattr(self, "details", None)
        labels = info.labels if info is not None else {}
        f = pd.DataFrame(self[self["ci_low"].notna() | (self["scale"] == SCALES["parts"])])
        if f.empty:
            return pd.DataFrame(columns=cols)
        f = f.assign(_a=[_label(a, t, labels) for a, t in zip(f["attribute"], f["task"])],
                     topic=[topic_of(m, fa) for m, fa in zip(f["metric"], f["family"])],
                     _r=f["change"].map({c: i for i, c in enumerate(CHANGES)}),
                     _s=(f["change_value"].abs() / f["threshold"]),
                     _x=f["source"].map(lambda s: isinstance(s, str) and bool(s)))
        rows = []
        for (cand, a, t), g in f.groupby(["candidate", "_a", "topic"], sort=False):
            worst = g[g["_r"] == g["_r"].min()]
            if not worst["_x"].all():
                worst = worst[~worst["_x"]]
            top = worst.loc[worst["_s"].fillna(-1).idxmax()]
            rows.append({"candidate": cand, "attribute": a, "topic": t, "change": top["change"],
                         "size": float(top["_s"]) if pd.notna(top["_s"]) else None, "metric": top["metric"],
                         "class": top["class"], "group": top["group"], "source": top["source"] if top["_x"] else None,
                         **{w: int((g["change"] == w).sum()) for w in CHANGES}})
        out = pd.DataFrame(rows, columns=cols)
        order = {t: i for i, t in enumerate(ordered_topics(out["topic"]))}
        return out.assign(_t=out["topic"].map(order)).sort_values(["candidate", "_t"], kind="stable") \
            .drop(columns="_t").reset_index(drop=True)

    def by_group(self) -> pd.DataFrame:
        """What changed for each group, per candidate: its status before and after, its effect (×τ, + = worse
        off) in both models, the paired change of that effect's distance from no bias with its interval, and a
        status: ``reduced``, ``increased``, ``reversed``, ``unchanged`` (the change's interval inside ±τ, or no
        direction in either model) or ``undecided`` (:func:`bias_suite.stats.groups.group_changes`)."""
        from .stats.groups import GROUP_CHANGE_COLUMNS, GROUP_CHANGES, group_changes

        info = getattr(self, "details", None)
        if info is None or not info.models:
            return pd.DataFrame(columns=GROUP_CHANGE_COLUMNS)
        base, parts = info.models[0], []
        for cand in info.models[1:]:
            for task, res in info.results[cand].items():
                before = info.results[base].get(task)
                if before is None:
                    continue
                rows = self[(self["candidate"] == cand) & (self["task"] == task)]
                part = group_changes(before, res, rows, candidate=cand)
                part["attribute"] = [_label(a, task, info.labels) for a in part["attribute"]]
                parts.append(part)
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=GROUP_CHANGE_COLUMNS)
        rank = out["status"].map({c: i for i, c in enumerate(GROUP_CHANGES)})
        return out.assign(_r=rank).sort_values(["candidate", "_r"], kind="stable").drop(columns="_r") \
            .reset_index(drop=True)

    def models(self) -> pd.DataFrame:
        """Models × attributes: each model's worst verdict per attribute on
        the paired examples and the largest effect (×τ) among its rows with
        that verdict."""
        info = getattr(self, "details", None)
        if info is None:
            return pd.DataFrame(columns=["model", "attribute", "verdict", "effect"])
        rows = []
        for name in info.models:
            for task, res in info.results[name].items():
                j = res[res["verdict"].isin(SEVERITY)] if "verdict" in res.columns else res.iloc[0:0]
                for a, g in j.groupby("attribute", sort=False):
                    rank = g["verdict"].map(SEVERITY.index)
                    worst = g[rank == rank.min()]
                    eff = pd.to_numeric(worst["effect"], errors="coerce").max()
                    rows.append({"model": name, "attribute": _label(a, task, info.labels),
                                 "verdict": worst["verdict"].iloc[0], "effect": None if pd.isna(eff) else float(eff)})
        return pd.DataFrame(rows, columns=["model", "attribute", "verdict", "effect"])

    def ranking(self) -> pd.DataFrame:
        """The models ranked: fewest ``material`` values first, then the
        smaller sum of their effects (×τ), then fewer ``inconclusive``."""
        info = getattr(self, "details", None)
        if info is None:
            return pd.DataFrame(columns=["rank", "model", "material", "material_effect", "inconclusive"])
        rows = []
        for name in info.models:
            res = pd.concat(list(info.results[name].values()), ignore_index=True)
            mat = res[res["verdict"] == "material"]
            rows.append({"model": name, "material": int(len(mat)),
                         "material_effect": float(pd.to_numeric(mat["effect"], errors="coerce").fillna(0).sum()),
                         "inconclusive": int((res["verdict"] == "inconclusive").sum())})
        out = pd.DataFrame(rows).sort_values(["material", "material_effect", "inconclusive"], kind="stable")
        out.insert(0, "rank", np.arange(1, len(out) + 1))
        return out.reset_index(drop=True)


#: compare's own fallback where no run recorded the option and it differs from the options model's default:
#: the terms of the groups either model tells apart are resampled, for both
COMPARE_FALLBACK = {"resample_terms": "auto"}


def _settings(models: list, given: dict, options=None):
    """The evaluation options of a comparison: those ``given`` (not
    :data:`~bias_suite.options.INHERIT`), else ``options``' (given as
    ``options=``), else the value the runs recorded (the baseline's
    ``run.json`` first, then the candidates'), else the default; and the
    names of those the runs gave."""
    records = [recorded_options(next(iter(m.meta.values()), {})) for m in models if m.meta]
    base = EvaluationOptions.of(options).as_dict() if options is not None else None
    out, inherited = {}, []
    for name in EvaluationOptions.names():
        value = given.get(name, INHERIT)
        if value is INHERIT and base is not None:
            value = base[name]
        if value is INHERIT:
            found = [r[name] for r in records if name in r]
            if found:
                value = found[0]
                inherited.append(name)
            else:
                value = COMPARE_FALLBACK.get(name, EvaluationOptions.field_of(name).default)
        out[name] = value
    return EvaluationOptions(**out), inherited


def _group_orders(meta: dict, data) -> dict | None:
    """The baseline run's group orders (run.json ``group_orders``), for the
    groups the paired examples hold."""
    orders = meta.get("group_orders")
    if not isinstance(orders, dict):
        return None
    fr = data.frame
    out = {}
    for a, groups in orders.items():
        present = set(fr.loc[fr["attribute"] == a, "group"])
        kept = [g for g in groups if g in present]
        if kept:
            out[a] = kept
    return out or None


def compare(baseline, candidate, *more, inner: bool = False, bootstrap: int = INHERIT, confidence: float = INHERIT,
            seed: int = INHERIT, multiplicity: str = INHERIT, thresholds=INHERIT, weighting: str = INHERIT,
            max_tuples: int | None = INHERIT, metrics=None, names=None, resample_terms=INHERIT,
            options: EvaluationOptions | None = None) -> Comparison:
    """Compare the bias of ``candidate`` (and ``more`` candidates) with that of ``baseline``.

    Parameters
    ----------
    baseline, candidate, *more : run folders, scored files (JSONL/Parquet),
        DataFrames of scored examples or RunResults of the same examples.
    inner : keep the examples every model holds (else examples that do not
        pair are an error); ``comp.details.dropped`` says how many each lost.
    bootstrap, confidence, seed, multiplicity, thresholds, weighting, max_tuples, resample_terms :
        the evaluation options (:class:`bias_suite.options.EvaluationOptions`;
        ``None`` means there what it means in ``evaluate``), the same for
        every model. Default :data:`~bias_suite.options.INHERIT`: the value
        the runs recorded (``run.json``: the baseline's, else a
        candidate's), else the options model's default (``resample_terms``:
        "auto"). ``bootstrap`` is B, the paired template resamples (a run
        made without intervals records none); ``multiplicity`` the error
        control over the changes of each candidate that could make a claim.
        With "auto" terms, both models are resampled alike: the terms of the
        groups that either model's scores tell apart.
    metrics : metric names or specs (default: every metric, the tests and
        the Bernstein rows, as a run).
    names : the models' names (default: from their run.json, else the file
        stem, else "baseline", "candidate", "candidate 2", ...).
    options : an :class:`~bias_suite.options.EvaluationOptions`: its values
        instead of the runs' (keywords given beside it win).

    Returns
    -------
    :class:`Comparison`: one row per judged value of the baseline present
    in a candidate, per candidate (docs/compare.md); ``comp.details.settings``
    the options used, and under ``from_runs`` the ones the runs gave.
    """
    from .stats.attribution import change_sources
    from .stats.verdicts import MULTIPLICITY

    inputs = [baseline, candidate, *more]
    defaults = ["baseline", "candidate"] + [f"candidate {i}" for i in range(2, len(more) + 2)]
    models = [read_model(x, d) for x, d in zip(inputs, defaults)]
    if names is not None:
        if len(names) != len(models):
            raise BiasSuiteError(f"names: {len(models)} models, {len(names)} names")
        for m, n in zip(models, names):
            m.name = str(n)
    _unique_names(models)
    given = dict(bootstrap=bootstrap, confidence=confidence, seed=seed, multiplicity=multiplicity,
                 thresholds=thresholds, weighting=weighting, max_tuples=max_tuples, resample_terms=resample_terms)
    if metrics is not None or options is None:
        given["metrics"] = metrics
    opts, from_runs = _settings(models, given, options)
    bootstrap, confidence, seed, multiplicity, metrics = (opts.bootstrap, opts.confidence, opts.seed,
                                                          opts.multiplicity, opts.metrics)
    if multiplicity not in MULTIPLICITY:
        raise BiasSuiteError(f"multiplicity must be one of {list(MULTIPLICITY)}, got {multiplicity!r}")
    if not isinstance(bootstrap, (int, np.integer)) or isinstance(bootstrap, bool) or bootstrap < 1:
        raise BiasSuiteError(f"a comparison needs template resamples: bootstrap must be a positive integer, got {bootstrap!r}")
    aligned, dropped = _align(models, inner)
    settings = {"bootstrap": int(bootstrap), "confidence": float(confidence), "seed": int(seed),
                "multiplicity": multiplicity, "thresholds": dict(opts.thresholds) if opts.thresholds else None,
                "weighting": opts.weighting, "max_tuples": opts.max_tuples, "resample_terms": opts.resample_terms,
                "metrics": metrics, "from_runs": from_runs}
    results = {m.name: {} for m in models}
    scored = {m.name: {} for m in models}
    frames, family = [], {}
    labels = {}
    for task, parts in aligned.items():
        labels[task] = family_of(parts[0]).label
        orders = _group_orders(models[0].meta.get(task, {}), parts[0])
        # the same term resamples for every model: the blocks any model's scores select
        part_opts = opts.replace(bootstrap=int(bootstrap), thresholds=settings["thresholds"],
                                 resample_terms=common_selection(parts, opts.resample_terms))
        evaluated = [evaluate_with_replicates(p, attribution=False, options=part_opts, group_order_override=orders)
                     for p in parts]
        for m, p, (res, _) in zip(models, parts, evaluated):
            results[m.name][task], scored[m.name][task] = res, p
        (rb, bb) = evaluated[0]
        for m, p, (rc, bc) in zip(models[1:], parts[1:], evaluated[1:]):
            ch, fam = paired_changes(rb, rc, bb, bc, confidence=confidence, multiplicity=multiplicity, metrics=metrics)
            ch = change_sources(ch, parts[0], p, max_tuples=settings["max_tuples"], seed=seed,
                                group_order_override=orders, weighting=settings["weighting"])
            ch.insert(0, "task", task)
            ch.insert(0, "candidate", m.name)
            ch.insert(0, "baseline", models[0].name)
            frames.append(ch)
            family[f"{m.name}|{task}"] = fam
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    out = Comparison(rows[COLUMNS])
    out.details = ComparisonInfo(models=[m.name for m in models], results=results, scored=scored, settings=settings,
                              dropped=dropped, family=family, sources={m.name: m.source for m in models}, labels=labels)
    return out


# --------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------
def comparison_metadata(comp: Comparison) -> dict:
    """What ``comparison.json`` records (besides the file listing)."""
    info = comp.details
    cands = info.models[1:]
    return {
        "bias_suite": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "baseline": info.models[0],
        "candidates": cands,
        "models": [{"name": n, "source": info.sources.get(n), "dropped_examples": int(info.dropped.get(n, 0)),
                    "examples": int(sum(len(d) for d in info.scored[n].values()))} for n in info.models],
        "settings": {k: v for k, v in info.settings.items() if k != "metrics"},
        "metrics": None if info.settings.get("metrics") is None else [getattr(m, "name", m) for m in info.settings["metrics"]],
        "changes": {c: comp.counts(c) for c in cands},
        "error_control": {k: {"multiplicity": info.settings["multiplicity"], **v} for k, v in info.family.items()},
        "ranking": comp.ranking().to_dict("records") if len(info.models) > 2 else None,
        "topic_order": list(TOPIC_ORDER),
    }


def _json_safe(v):
    """``v`` with NaN and infinities as null (JSON has neither) and numpy numbers as Python's."""
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def write_comparison(comp: Comparison, out_dir, *, files=()) -> dict:
    """Write ``comparison.jsonl`` and ``comparison.csv`` (the rows), then
    ``comparison.json`` (the models, settings, counts and a listing of the
    files, ``files`` already written into ``out_dir`` included, with size and
    SHA-256), each atomically; returns {"jsonl", "csv", "metadata": paths}."""
    from .io import ensure_folder

    out = ensure_folder(out_dir)
    paths = {"jsonl": write_jsonl(pd.DataFrame(comp), out / COMPARISON_JSONL)}
    with atomic_path(out / COMPARISON_CSV) as tmp:
        pd.DataFrame(comp).to_csv(tmp, index=False)
    paths["csv"] = out / COMPARISON_CSV
    meta = comparison_metadata(comp)
    meta["files"] = {Path(p).name: file_entry(p) for p in [*files, *paths.values()]}
    text = json.dumps(_json_safe(meta), indent=2, default=str, allow_nan=False)
    paths["metadata"] = atomic_write_text(out / COMPARISON_JSON, text + "\n")
    return paths


def compare_with_baseline(result, baseline, **options) -> Comparison:
    """``run(..., baseline=DIR)``: compare a finished run with ``baseline``
    using the run's own settings, write ``comparison.jsonl`` and
    ``comparison.csv`` into the run's folder and list them in its
    ``run.json`` (under ``files``, with the counts under ``comparison``)."""
    from .io.results import commit_run_folder

    opts = recorded_options(result.metadata)  # the run's own; what it did not record: the baseline's, else the defaults
    opts.update(options)
    comp = compare(baseline, result, **opts)
    folder = result.folder
    if folder is not None:
        paths = write_comparison(comp, folder)
        listed = [folder / n for n in (read_manifest(folder) or {})]
        doc = _run_meta(folder)
        doc.pop("files", None)
        source = baseline.source if isinstance(baseline, ModelInput) else str(baseline)
        doc["comparison"] = {"baseline": source, "files": [COMPARISON_JSONL, COMPARISON_CSV, COMPARISON_JSON],
                             "changes": comp.counts()}
        commit_run_folder(folder, listed + [paths["jsonl"], paths["csv"], paths["metadata"]], doc)
    return comp
