"""Faster CPU inference paths (ONNX Runtime, int8, bf16) against float32 on the default models and the bundled suites.

For ``default-sentiment`` on the bundled sentiment suites and ``default-ner``
on the bundled NER suites, in one run:

1. **throughput** over the distinct texts (token lists) of the suites:
   the bare float32 loop a user would write (``tokenizer(batch,
   padding=True)`` then ``model(**batch)``, suite order, batch 64; for the
   tagger the same with its emissions, Viterbi tags and softmax), the
   float32 predictor (``HFClassifier`` / ``TransformerCrfTagger``:
   length-sorted batches) and the same predictor with each of ``--dtypes``:
   ``onnx`` (the float32 model exported to ONNX, run by ONNX Runtime),
   ``onnx-int8`` (int8 weights in every weight MatMul; uncertain rows
   recomputed in float32), ``onnx-int8-unchecked`` (int8 alone), ``int8`` (torch
   dynamic int8 quantization of every linear layer) and ``bf16`` (bfloat16
   weights; fast only on CPUs with native bf16 arithmetic, e.g. AMX or
   AVX512-BF16). The candidates are timed in turn, round after round
   (``--repeat`` rounds, best of each), so that load from other jobs on a
   shared machine hits all of them alike; ``--time-texts N`` times a seeded
   sample of N texts instead of all of them.
2. **agreement** with float32: argmax (classifier) or tag (tagger)
   agreement, max and mean ``|Δp|`` over all probabilities, and for
   ``onnx-int8`` the share of texts (sentences) recomputed in float32.
3. **what the results move**: the whole evaluation (metrics, bootstrap
   intervals and verdicts, significance tests, Bernstein rows, INV) is run
   on the float32 and on the other predictions; the largest change of each
   metric's value and every row whose verdict (material, small,
   negligible, inconclusive, ...) differs are reported.

    python benchmarks/quantized.py [--threads 2] [--repeat 2] [--bootstrap 200] [--no-ner]
                                   [--dtypes onnx,onnx-int8,onnx-int8-unchecked,int8] [--time-texts N]
                                   [--no-eval]
                                   [--json results/benchmarks/quantized.json]

The default models are built first if they are not cached. Run it on a
quiet machine: throughput figures are wall-clock.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bias_suite import paths  # noqa: E402
from _machine import cpu_model  # noqa: E402 (benchmarks/_machine.py)
from bias_suite.models import CallablePredictor, HFClassifier, TransformerCrfTagger, ensure_model  # noqa: E402
from bias_suite.families import expand_suites, load_suite  # noqa: E402

KEYS = ["metric", "family", "view", "attribute", "class", "group"]


def interleaved(repeat, fns: dict) -> tuple[dict, dict]:
    """Best seconds and last result of each of ``fns``, timed in turn for
    ``repeat`` rounds."""
    best, out = {k: float("inf") for k in fns}, {}
    for _ in range(repeat):
        for k, fn in fns.items():
            t = time.perf_counter()
            out[k] = fn()
            best[k] = min(best[k], time.perf_counter() - t)
    return best, out


def bare_loop(model_dir, texts, batch_size=64):
    """The plain float32 loop: pad each batch in suite order, forward, softmax."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()

    def go():
        out = []
        with torch.inference_mode():
            for s in range(0, len(texts), batch_size):
                b = tok(texts[s:s + batch_size], padding=True, truncation=True, max_length=128, return_tensors="pt")
                out.append(torch.softmax(model(**b).logits.double(), -1).numpy())
        return np.concatenate(out)

    return go


def bare_tagger_loop(model, tok, token_lists, batch_size=64):
    """The plain float32 loop for the CRF tagger (its torch module and
    tokenizer): encode and pad each batch of word lists in suite order,
    emissions, Viterbi tags and softmax."""
    import torch

    from bias_suite.models.crf import encode_words, pad_batch

    def go():
        tags, probs = [], []
        with torch.inference_mode():
            for s in range(0, len(token_lists), batch_size):
                ids, widx = encode_words(tok, token_lists[s:s + batch_size], 128)
                b = pad_batch(ids, widx, tok.pad_token_id or 0)
                em = model.emissions(b["input_ids"], b["attention_mask"], b["word_index"])
                tags.extend(model.crf.decode(em, b["word_mask"]))
                probs.append(torch.softmax(em.double(), -1).numpy())
        return tags, probs

    return go


def verdict_kind(v) -> str:
    """A row's verdict category; "" for none."""
    return v if isinstance(v, str) else ""


def compare_results(a, b) -> dict:
    """Largest value change per metric and the rows whose verdict differs."""
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    if len(a) != len(b) or not a[KEYS].astype(str).equals(b[KEYS].astype(str)):
        raise SystemExit("the two evaluations produced different result rows")
    va, vb = a["value"].astype(float), b["value"].astype(float)
    delta = (va - vb).abs()
    per_metric = {m: round(float(np.nanmax(d)), 6) if np.isfinite(d).any() else None
                  for m, d in delta.groupby(a["metric"])}
    verdict_a = a["verdict"] if "verdict" in a else None
    verdict_b = b["verdict"] if "verdict" in b else None
    changed = []
    if verdict_a is not None and verdict_b is not None:
        ka, kb = verdict_a.map(verdict_kind), verdict_b.map(verdict_kind)
        for i in np.flatnonzero((ka != kb).to_numpy()):
            changed.append({**{k: a.at[i, k] for k in KEYS}, "fp32": ka[i], "other": kb[i],
                            "value_fp32": float(va[i]), "value_other": float(vb[i])})
    n_verdicts = int(verdict_a.notna().sum()) if verdict_a is not None else 0
    kinds = verdict_a.dropna().map(verdict_kind).value_counts().to_dict() if verdict_a is not None else {}
    return {"rows": int(len(a)), "rows_with_verdict": n_verdicts, "verdicts_fp32": kinds,
            "verdict_changes": len(changed),
            "changed": changed, "max_abs_value_change_per_metric": per_metric}


def bench_sentiment(args) -> dict:
    from bias_suite.pipeline import run

    suites = [load_suite(p) for p in sorted(paths.data_dir("templates").glob("*.yaml"))]
    suites = [s for s in suites if s.task == "classification"]
    path = ensure_model("default-sentiment")
    examples = expand_suites(suites)
    texts = list(dict.fromkeys(examples["text"]))
    fp32 = HFClassifier(path, device="cpu", progress=False)
    fp32.model  # load before timing
    others = {dt: HFClassifier(path, device="cpu", progress=False, dtype=dt) for dt in args.dtypes}
    for o in others.values():
        o.model  # load (export, quantize) before timing
    print(f"sentiment: {len(examples)} examples, {len(texts)} distinct texts", flush=True)
    timed = texts
    if args.time_texts and args.time_texts < len(texts):
        pick = np.random.default_rng(0).choice(len(texts), args.time_texts, replace=False)
        timed = [texts[i] for i in sorted(pick)]
    fns = {"bare_fp32_loop": bare_loop(str(path), timed), "fp32_predictor": lambda: fp32.predict_proba(timed)}
    fns.update({f"{dt}_predictor": (lambda o=o: o.predict_proba(timed)) for dt, o in others.items()})
    secs, got = interleaved(args.repeat, fns)
    full = timed is texts or args.no_eval
    p32 = got["fp32_predictor"] if full else fp32.predict_proba(texts)
    scored = timed if full else texts
    out = {"examples": int(len(examples)), "distinct_texts": len(texts), "timed_texts": len(timed),
           "agreement_texts": len(scored), "repeat": args.repeat,
           "texts_per_second": {k: round(len(timed) / t, 1) for k, t in secs.items()}}
    names = fp32.class_names

    def evaluate(probs):
        table = dict(zip(texts, probs))
        pred = CallablePredictor(lambda xs: np.stack([table[x] for x in xs]), names)
        return run(suites, pred, None, cache=False, progress=False, bootstrap=args.bootstrap).results

    ref = None if args.no_eval else evaluate(p32)
    for dt, other in others.items():
        t = secs[f"{dt}_predictor"]
        p = got[f"{dt}_predictor"] if full else other.predict_proba(texts)
        d = np.abs(p - p32)
        out[dt] = {"speedup_vs_bare_fp32_loop": round(secs["bare_fp32_loop"] / t, 2),
                   "speedup_vs_fp32_predictor": round(secs["fp32_predictor"] / t, 2),
                   "argmax_agreement": round(float(np.mean(p.argmax(1) == p32.argmax(1))), 5),
                   "max_abs_dp": float(f"{d.max():.3g}"), "mean_abs_dp": float(f"{d.mean():.3g}")}
        f = getattr(other.model, "function", None)
        if f is not None and f.check_session is not None:
            out[dt]["rechecked_in_fp32"] = round(f.rechecked / max(f.rows, 1), 4)
        print(dt, json.dumps(out[dt]), flush=True)
        if ref is not None:
            out[dt]["evaluation"] = compare_results(ref, evaluate(p))
    return out


class _Lookup:
    """A tagger answering from precomputed predictions."""

    def __init__(self, tag_names, table):
        self.tag_names, self.table = list(tag_names), table

    def predict(self, tokens_list):
        got = [self.table[tuple(t)] for t in tokens_list]
        return [g[0] for g in got], [g[1] for g in got]


def bench_ner(args) -> dict:
    from bias_suite.pipeline import run

    suites = [load_suite(p) for p in sorted(paths.data_dir("templates").glob("*.yaml"))]
    suites = [s for s in suites if s.task == "sequence_labelling"]
    path = ensure_model("default-ner")
    examples = expand_suites(suites)
    seqs = list(dict.fromkeys(tuple(t) for t in examples["tokens"]))
    lists = [list(t) for t in seqs]
    fp32 = TransformerCrfTagger(path, device="cpu", progress=False)
    others = {dt: TransformerCrfTagger(path, device="cpu", progress=False, dtype=dt) for dt in args.dtypes}
    print(f"ner: {len(examples)} examples, {len(seqs)} distinct token lists", flush=True)
    fns = {"bare_fp32_loop": bare_tagger_loop(fp32.model, fp32.tokenizer, lists),
           "fp32_tagger": lambda: fp32.predict(lists)}
    fns.update({f"{dt}_tagger": (lambda o=o: o.predict(lists)) for dt, o in others.items()})
    secs, got = interleaved(args.repeat, fns)
    t32, (tags32, pr32) = secs["fp32_tagger"], got["fp32_tagger"]
    flat32 = np.concatenate([np.asarray(t) for t in tags32])
    out = {"examples": int(len(examples)), "distinct_token_lists": len(seqs), "repeat": args.repeat,
           "token_lists_per_second": {k: round(len(seqs) / t, 1) for k, t in secs.items()}}

    def evaluate(tags, probs):
        tagger = _Lookup(fp32.tag_names, dict(zip(seqs, zip(tags, probs))))
        return run(suites, tagger, None, cache=False, progress=False, bootstrap=args.bootstrap).results

    ref = None if args.no_eval else evaluate(tags32, pr32)
    for dt, other in others.items():
        t, (tags, probs) = secs[f"{dt}_tagger"], got[f"{dt}_tagger"]
        flat = np.concatenate([np.asarray(x) for x in tags])
        d = np.concatenate([np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).ravel()
                            for a, b in zip(pr32, probs)])
        out[dt] = {"speedup_vs_bare_fp32_loop": round(secs["bare_fp32_loop"] / t, 2),
                   "speedup_vs_fp32_tagger": round(t32 / t, 2), "tag_agreement": round(float(np.mean(flat32 == flat)), 5),
                   "sequences_identical": round(float(np.mean([a == b for a, b in zip(tags32, tags)])), 5),
                   "max_abs_dp": round(float(d.max()), 5), "mean_abs_dp": round(float(d.mean()), 6)}
        f = getattr(getattr(other, "_emissions", None), "function", None)
        if f is not None and f.check_session is not None:
            out[dt]["rechecked_in_fp32"] = round(f.rechecked / max(f.rows, 1), 4)
        print(dt, json.dumps(out[dt]), flush=True)
        if not args.no_eval:
            out[dt]["evaluation"] = compare_results(ref, evaluate(tags, probs))
    return out


def _version(dist):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--no-ner", action="store_true")
    ap.add_argument("--dtypes", default="onnx,onnx-int8,onnx-int8-unchecked,int8",
                    type=lambda v: [x.strip() for x in v.split(",") if x.strip()],
                    help="dtypes compared with float32 (default: onnx,onnx-int8,onnx-int8-unchecked,int8; "
                         "bf16 where the CPU has native bf16)")
    ap.add_argument("--time-texts", type=int, default=0,
                    help="time the sentiment candidates on a seeded sample of this many texts (default: all)")
    ap.add_argument("--no-eval", action="store_true",
                    help="skip the evaluations (metrics, verdicts); agreement then covers the timed texts only")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    report = {"machine": {"python": platform.python_version(), "torch": torch.__version__, "threads": args.threads,
                          "quantized_engine": torch.backends.quantized.engine, "processor": platform.processor(),
                          "cpu": cpu_model(), "cpus": os.cpu_count(), "onnxruntime": _version("onnxruntime")},
              "sentiment": bench_sentiment(args)}
    if not args.no_ner:
        report["ner"] = bench_ner(args)
    for part in ("sentiment", "ner"):
        for dt in args.dtypes:
            ev = report.get(part, {}).get(dt, {}).get("evaluation")
            if ev:
                print(f"{part} {dt}: {ev['verdict_changes']} verdict change(s) of {ev['rows_with_verdict']}; "
                      f"largest value change per metric: {ev['max_abs_value_change_per_metric']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"→ {args.json}")


if __name__ == "__main__":
    main()
