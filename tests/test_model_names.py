"""Default-model names work wherever a model is accepted; a name that is
neither a default, a folder nor a loadable hub id fails at once."""
import time

import pytest

from _tiny_models import install_tiny_defaults
from bias_suite.exceptions import ModelError


@pytest.fixture
def tiny_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("BIAS_SUITE_CACHE", str(tmp_path / "cache"))
    return install_tiny_defaults(tmp_path / "cache")


def test_classifier_takes_default_names(tiny_defaults):
    from bias_suite.models import HFClassifier, as_predictor

    want = str(tiny_defaults["default-sentiment"].resolve())
    for name in ("default-sentiment", "default"):
        clf = HFClassifier(name, progress=False)
        assert clf.model_id == want and clf.is_local
        assert clf.predict_proba(["I liked it."]).shape == (1, 3)
    assert as_predictor("default-sentiment").class_names == ["negative", "neutral", "positive"]


def test_taggers_take_default_names(tiny_defaults):
    from bias_suite.models import TransformerCrfTagger

    tagger = TransformerCrfTagger("default", progress=False)
    assert str(tagger.path) == str(tiny_defaults["default-ner"].resolve())
    tags, probs = tagger.predict([["Anna", "lives", "in", "Paris"]])
    assert len(tags[0]) == 4


def test_a_default_of_the_other_kind_is_named(tiny_defaults):
    from bias_suite.models import HFClassifier

    with pytest.raises(ModelError, match=r"'default-ner' is a tagger, not a classifier: use 'default-sentiment'"):
        HFClassifier("default-ner")


def test_unknown_name_fails_at_once_with_the_defaults(tiny_defaults):
    from bias_suite.models import HFClassifier, HFTokenClassifier

    for cls in (HFClassifier, HFTokenClassifier):
        start = time.perf_counter()
        with pytest.raises(ModelError, match=r"not a default model \(default, default-sentiment, default-ner\)"):
            cls("nobody-here/no-such-model")
        assert time.perf_counter() - start < 5
    with pytest.raises(ModelError, match=r"model folder './missing-model' does not exist"):
        HFClassifier("./missing-model")
