"""Bundled real-text suites: the human-rated sentences of the default
sentiment model's corpus (:mod:`bias_suite.models.vader`) that the model
did not train on, perturbed by identity (docs/real_text.md).

``sentiment_vader_people``: the sentences that mention a person (a
``gender`` or ``names`` mention of the perturbation engine,
:func:`~bias_suite.models.vader.person_mentions`), which the default
recipe holds out of training (``hold_out="people"``), perturbed for
``gender`` and ``names`` and, by insertion, ``religion``. Nothing of the
corpus is shipped: the examples are made at run time from the
``vaderSentiment==3.3.2`` sdist the default model is built from, with the
perturbation engine's rule for "her" (no tagger). ``names`` also swaps
the first names its file does not list, found by spaCy's recogniser when
``en_core_web_sm`` is installed (the same examples wherever it is).
"""
from __future__ import annotations

import inspect
import os
import random
from dataclasses import dataclass

import pandas as pd

from bias_suite.exceptions import SuiteError
from bias_suite.models.vader import (CLASS_NAMES, VADER_REQUIREMENT, label_of, load_vader_sentences, merge_duplicates,
                                     person_mentions, vader_sdist)

__all__ = ["RealTextSuite", "REAL_TEXT_SUITES", "is_real_text_suite", "real_text_sentences", "real_text_examples"]


@dataclass(frozen=True)
class RealTextSuite:
    """A bundled real-text suite: which sentences, which attributes."""

    name: str
    description: str
    attributes: tuple            # swapped where mentioned
    insert_attributes: tuple     # swapped where mentioned, else inserted before a person noun
    unlisted_terms_per_group: int = 5  # names: term choices per group of an unlisted-name template


REAL_TEXT_SUITES = {
    "sentiment_vader_people": RealTextSuite(
        "sentiment_vader_people",
        f"The {VADER_REQUIREMENT} human-rated sentences that mention a person, held out of default-sentiment's "
        "training, perturbed for gender and names, and religion by insertion",
        ("gender", "names"), ("religion",)),
}


def is_real_text_suite(name) -> bool:
    """Whether ``name`` is the name of a bundled real-text suite."""
    return isinstance(name, str) and name in REAL_TEXT_SUITES


def _suite(name: str) -> RealTextSuite:
    if not is_real_text_suite(name):
        raise SuiteError(f"no bundled real-text suite {name!r}; bundled: {sorted(REAL_TEXT_SUITES)}")
    return REAL_TEXT_SUITES[name]


def _default_band() -> float:
    """The neutral band of the default recipe (the labels the model learnt)."""
    from bias_suite.models.default_sentiment import build_default_sentiment

    return inspect.signature(build_default_sentiment).parameters["neutral_band"].default


def real_text_sentences(name: str = "sentiment_vader_people", *,
                        download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The suite's source sentences: columns ``id`` (``FILE/ID`` of the
    corpus: ``tweets/17``), ``text``, ``label`` (the class of the mean human
    rating under the default recipe's neutral band), ``rating``."""
    _suite(name)
    rows, _ = merge_duplicates(load_vader_sentences(vader_sdist(download_dir)))
    mask = person_mentions([r.text for r in rows])
    band = _default_band()
    chosen = [r for r, m in zip(rows, mask) if m]
    return pd.DataFrame({"id": [f"{r.source}/{r.id}" for r in chosen], "text": [r.text for r in chosen],
                         "label": [CLASS_NAMES[label_of(r.rating, band)] for r in chosen],
                         "rating": [r.rating for r in chosen]})


def real_text_examples(name: str = "sentiment_vader_people", *, templates: int | None = None, seed: int = 0,
                       download_dir: str | os.PathLike | None = None, unlisted_names="auto"):
    """``(frame, report)``: the suite's examples table (the columns of
    :func:`bias_suite.perturb`) and its
    :class:`~bias_suite.suites.perturbation.PerturbReport`.

    ``templates``: a sample of at most this many templates per attribute,
    drawn by a generator seeded with ``seed`` and the attribute (the report
    then counts the sample); None keeps every template.

    ``unlisted_names``: also swap the first names ``names.yaml`` does not
    list, found by spaCy's recogniser (docs/perturb.md, "Unlisted names"),
    each such template written with ``unlisted_terms_per_group`` names per
    group: ``"auto"`` (when spaCy's ``en_core_web_sm`` is installed), True
    (required) or False.
    """
    from bias_suite.suites.perturbation.lexicon import load_lexicon
    from bias_suite.suites.perturbation.table import PerturbReport, perturb_texts
    from bias_suite.suites.perturbation.unlisted import load_person_finder

    suite = _suite(name)
    if templates is not None and (not isinstance(templates, int) or templates < 1):
        raise SuiteError(f"templates per attribute must be a positive integer, got {templates!r}")
    src = real_text_sentences(name, download_dir=download_dir)
    ids, texts, labels = list(src["id"]), list(src["text"]), list(src["label"])
    if unlisted_names not in ("auto", True, False):
        raise SuiteError(f"unlisted_names must be 'auto', True or False, got {unlisted_names!r}")
    persons = None
    if unlisted_names is not False and "names" in suite.attributes:
        try:
            persons = load_person_finder()
        except SuiteError:
            if unlisted_names is True:
                raise
    frames, reports = [], []
    for attrs, insert in ((suite.attributes, False), (suite.insert_attributes, True)):
        if attrs:
            frame, reps = perturb_texts(ids, texts, labels, [load_lexicon(a) for a in attrs], insert=insert)
            frames.append(frame)
            reports += reps
    if persons is not None:  # names again, with the unlisted names: its listed templates are the same
        k = reports.index(next(r for r in reports if r.attribute == "names"))
        frame, (rep,) = perturb_texts(ids, texts, labels, [load_lexicon("names")], persons=persons,
                                      terms_per_group=suite.unlisted_terms_per_group, seed=seed)
        unl = frame["template"].isin(set(frame["template"]) - set(frames[0].loc[frames[0]["attribute"] == "names",
                                                                                 "template"]))
        frames[0] = pd.concat([frames[0], frame[unl]], ignore_index=True)
        rep.templates, rep.examples = reports[k].templates + rep.unlisted, reports[k].examples + int(unl.sum())
        reports[k] = rep
    frame = pd.concat(frames, ignore_index=True)
    if templates is not None:
        keep = set()
        for rep in reports:
            tpls = list(dict.fromkeys(frame.loc[frame["attribute"] == rep.attribute, "template"]))
            if len(tpls) > templates:
                tpls = random.Random(f"{seed}/{rep.attribute}").sample(tpls, templates)
            keep.update(tpls)
        frame = frame[frame["template"].isin(keep)].reset_index(drop=True)
        for rep in reports:
            part = frame[frame["attribute"] == rep.attribute]
            rep.templates, rep.examples = int(part["template"].nunique()), len(part)
            groups = part.groupby("template")["group"].agg(set)
            for key in list(rep.left_out):  # "GROUP (reason)": the sampled templates without GROUP
                rep.left_out[key] = int(sum(key.split(" (")[0] not in g for g in groups))
            rep.left_out += type(rep.left_out)()  # drops the zero counts
    source = (f"{name}: {VADER_REQUIREMENT} sentences that mention a person, held out of default-sentiment"
              + (f" ({templates} templates per attribute at most, seed {seed})" if templates is not None else ""))
    how = "rule" + ("; unlisted names: spaCy en_core_web_sm PERSON entities" if persons is not None else "")
    report = PerturbReport(source, "bundled real-text suite", len(texts), 0, how, reports)
    frame.attrs["perturbation"] = report.as_dict()
    return frame, report
