"""Prediction throughput: the bias_suite runner against a bare loop of
``model(**batch)`` on the same sentences, plus what de-duplication and the
prediction cache save.

Sentences: the bundled sentiment suites expanded (13,215 examples, 12,999
distinct texts), or the first ``--limit`` distinct texts of them (in a seeded
random order) together with every example that uses one of those texts.

Measured, each the best of ``--repeat`` runs (the machine is shared):

1. **bare loop** — the loop a user would write: ``tokenizer(batch,
   padding=True, truncation=True)`` then ``model(**batch)`` and a softmax
   copied to the host, over the distinct texts in suite order, under
   ``torch.inference_mode()``; batch sizes ``--batch-sizes`` are tried on a
   probe of ``--probe`` texts and the best is timed on all of them. The same
   loop over length-sorted texts is shown as a second reference.
2. **runner** — ``bias_suite.predict.predict(HFClassifier(...), texts)`` with
   the cache off, at the bare loop's best batch size and at the default 64.
   Target: >= 90% of the bare loop's sentences/second.
3. **de-duplication** — the runner and the bare loop over every example
   (duplicates included): forward passes saved and time.
4. **cache** — a first run into an empty cache and a second run of the same
   texts with a new predictor (model construction included in both).
   Target: the second run >= 50x faster.

    python benchmarks/throughput.py [--model default-sentiment] [--limit 4000] [--device auto]
                                    [--dtype bf16] [--batch-sizes 8,16,32,64,128] [--repeat 2]
                                    [--json results/benchmarks/throughput.json]

On a CUDA machine pass ``--device cuda --dtype bf16`` (the bare loop then
also runs in bf16, so both sides do the same arithmetic).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

SUITES = ["sentiment_generic", "sentiment_gender", "sentiment_names", "sentiment_age", "sentiment_disability",
          "sentiment_nationality", "sentiment_race_ethnicity", "sentiment_religion", "sentiment_sexual_orientation"]


def sentences(limit: int | None, seed: int):
    """(all example texts, distinct texts in suite order) of the bundled suites."""
    from bias_suite.families import expand_suites, load_suite
    from bias_suite.suites.loader import find_suite

    ex = expand_suites([load_suite(find_suite(n)) for n in SUITES])
    texts = ex["text"].tolist()
    distinct = list(dict.fromkeys(texts))
    if limit and limit < len(distinct):
        keep = set(np.random.default_rng(seed).choice(len(distinct), size=limit, replace=False).tolist())
        distinct = [t for i, t in enumerate(distinct) if i in keep]
        kept = set(distinct)
        texts = [t for t in texts if t in kept]
    return texts, distinct


def sync(torch, device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def bare_loop(model, tok, texts, bs, device, max_length, torch):
    """The plain loop; returns seconds."""
    sync(torch, device)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(texts), bs):
            enc = tok(texts[i:i + bs], padding=True, truncation=True, max_length=max_length, return_tensors="pt")
            enc = {k: v.to(device) for k, v in enc.items()}
            torch.softmax(model(**enc).logits.double(), dim=-1).cpu().numpy()
    sync(torch, device)
    return time.perf_counter() - t0


def best(fn, repeat):
    return min(fn() for _ in range(repeat))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default-sentiment")
    ap.add_argument("--limit", type=int, default=4000, help="distinct texts (0: all 12,999)")
    ap.add_argument("--probe", type=int, default=768, help="texts used to pick the bare loop's batch size")
    ap.add_argument("--batch-sizes", default="8,16,32,64,128")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--dtype", default=None, help="bf16 / fp16 (GPU) or float32")
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="also write the figures here (JSON)")
    ap.add_argument("--ray-workers", type=int, default=0,
                    help="also time the runner on the Ray engine with this many actors (a local Ray; start-up included)")
    args = ap.parse_args(argv)

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from bias_suite.models import HFClassifier, ensure_model
    from bias_suite.models.hf import _resolve_dtype, resolve_device
    from bias_suite.predict import predict

    path = str(ensure_model(args.model)) if args.model.startswith("default") else args.model
    device = resolve_device(args.device)
    dtype = _resolve_dtype(args.dtype)
    texts, distinct = sentences(args.limit or None, args.seed)
    n, n_all = len(distinct), len(texts)
    print(f"model {args.model} on {device} ({torch.get_num_threads()} threads), dtype {args.dtype or 'checkpoint'}; "
          f"{n} distinct texts, {n_all} examples")

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, **({"dtype": dtype} if dtype else {}))
    model.to(device).eval()
    bare_loop(model, tok, distinct[:64], 32, device, args.max_length, torch)  # warm-up

    sizes = [int(x) for x in args.batch_sizes.split(",")]
    probe = distinct[: args.probe]
    probe_rate = {}
    for bs in sizes:
        probe_rate[bs] = len(probe) / best(lambda: bare_loop(model, tok, probe, bs, device, args.max_length, torch),
                                           args.repeat)
        print(f"  bare loop, batch {bs:>4}: {probe_rate[bs]:8.1f} sentences/s (probe of {len(probe)})")
    bs_best = max(probe_rate, key=probe_rate.get)
    t_bare = best(lambda: bare_loop(model, tok, distinct, bs_best, device, args.max_length, torch), args.repeat)
    by_len = sorted(distinct, key=lambda t: -len(tok(t, truncation=True, max_length=args.max_length)["input_ids"]))
    t_bare_sorted = best(lambda: bare_loop(model, tok, by_len, bs_best, device, args.max_length, torch), args.repeat)
    del model

    def runner_time(bs, items):
        clf = HFClassifier(path, device=device, batch_size=bs, progress=False, dtype=args.dtype)
        clf.model  # load outside the timing, as the bare loop's model is
        sync(torch, device)
        t0 = time.perf_counter()
        predict(clf, items, cache=False)
        sync(torch, device)
        return time.perf_counter() - t0

    t_run_best = best(lambda: runner_time(bs_best, distinct), args.repeat)
    t_run_64 = best(lambda: runner_time(64, distinct), args.repeat) if bs_best != 64 else t_run_best

    t_ray = None
    if args.ray_workers:
        from bias_suite.predict.ray_engine import RayEngine

        clf = HFClassifier(path, device=device, batch_size=bs_best, progress=False, dtype=args.dtype)
        t0 = time.perf_counter()
        predict(clf, distinct, cache=False, engine=RayEngine(num_workers=args.ray_workers))
        t_ray = time.perf_counter() - t0

    # de-duplication: every example, duplicates included
    t_run_all = best(lambda: runner_time(bs_best, texts), 1)
    tok2 = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, **({"dtype": dtype} if dtype else {}))
    model.to(device).eval()
    t_bare_all = bare_loop(model, tok2, texts, bs_best, device, args.max_length, torch)
    del model

    # cache: construction + prediction, empty cache vs filled cache
    with tempfile.TemporaryDirectory() as cdir:
        def cached_run():
            sync(torch, device)
            t0 = time.perf_counter()
            clf = HFClassifier(path, device=device, batch_size=bs_best, progress=False, dtype=args.dtype)
            _, st = predict(clf, texts, cache=cdir)
            sync(torch, device)
            return time.perf_counter() - t0, st

        t_first, st1 = cached_run()
        t_second, st2 = min((cached_run() for _ in range(max(args.repeat, 3))), key=lambda x: x[0])
        assert st2.computed == 0 and st1.computed == n, (st1, st2)

    rate = {"bare": n / t_bare, "bare_sorted": n / t_bare_sorted, "runner_best": n / t_run_best,
            "runner_64": n / t_run_64}
    fig = {
        "device": device, "threads": torch.get_num_threads(), "dtype": args.dtype or "checkpoint",
        "model": args.model, "distinct_texts": n, "examples": n_all, "bare_best_batch": bs_best,
        "sentences_per_s": {k: round(v, 1) for k, v in rate.items()},
        "runner_vs_bare": round(rate["runner_best"] / rate["bare"], 3),
        "runner64_vs_bare": round(rate["runner_64"] / rate["bare"], 3),
        "runner_vs_bare_sorted": round(rate["runner_best"] / rate["bare_sorted"], 3),
        "dedupe": {"forward_passes_saved": n_all - n, "runner_all_examples_s": round(t_run_all, 2),
                   "bare_all_examples_s": round(t_bare_all, 2), "speedup": round(t_bare_all / t_run_all, 3)},
        "cache": {"first_run_s": round(t_first, 3), "second_run_s": round(t_second, 4),
                  "speedup": round(t_first / t_second, 1)},
        "python": platform.python_version(), "torch": torch.__version__,
    }
    if t_ray is not None:
        fig["ray"] = {"workers": args.ray_workers, "seconds_incl_startup": round(t_ray, 2),
                      "sentences_per_s": round(n / t_ray, 1), "vs_bare": round(n / t_ray / rate["bare"], 3)}
    print(f"\n{'':28}{'sentences/s':>12}  ratio to bare loop")
    print(f"{'bare loop (suite order)':28}{rate['bare']:12.1f}  1.000   (batch {bs_best})")
    print(f"{'bare loop (length-sorted)':28}{rate['bare_sorted']:12.1f}  {rate['bare_sorted'] / rate['bare']:.3f}")
    print(f"{'runner, batch ' + str(bs_best):28}{rate['runner_best']:12.1f}  {fig['runner_vs_bare']:.3f}   target >= 0.9")
    print(f"{'runner, batch 64':28}{rate['runner_64']:12.1f}  {fig['runner64_vs_bare']:.3f}")
    if t_ray is not None:
        print(f"{'ray, ' + str(args.ray_workers) + ' actors (incl. start)':28}{n / t_ray:12.1f}  {fig['ray']['vs_bare']:.3f}")
    print(f"\nde-duplication: {n_all} examples -> {n} forward passes ({n_all - n} saved); "
          f"all examples: bare {t_bare_all:.1f} s, runner {t_run_all:.1f} s ({fig['dedupe']['speedup']:.2f}x)")
    print(f"cache: first run {t_first:.2f} s, second run {t_second * 1000:.0f} ms -> "
          f"{fig['cache']['speedup']:.0f}x faster (target >= 50x)")
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(out.suffix + ".tmp")
        tmp.write_text(json.dumps(fig, indent=2))
        os.replace(tmp, out)
        print(f"figures -> {out}")
    return fig


if __name__ == "__main__":
    main()
