"""Language models as classifiers (bias_suite.models.prompt): tiny random
GPT-2 and BERT masked LMs built from configs, checked against a direct
transformers computation, under any batch size, through the cache, the
CLI and Python runs, and their error messages."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

# Builds and runs language models: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


torch = pytest.importorskip("torch")

from _tiny_lms import make_tiny_bert_mlm, make_tiny_gpt2  # noqa: E402
from _tiny_models import FLOAT32_ATOL  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from bias_suite.cli import app  # noqa: E402
from bias_suite.exceptions import BiasSuiteError, ModelError  # noqa: E402
from bias_suite.models import PromptClassifier, PromptSpec, read_prompt_spec  # noqa: E402
from bias_suite.models.prompt_spec import parse_verbalizer  # noqa: E402
from bias_suite.predict import predict  # noqa: E402

CAUSAL = "Review: {text} Sentiment:"
MASKED = "Review: {text} Sentiment: {mask}."
VERB = {"negative": ["bad", "awful"], "neutral": "okay", "positive": "good"}
TEXTS = ["the movie was good", "I hated the food and the service was awful, really awful!", "a",
         "She is a nurse.", "the movie was good", "My neighbor is a Muslim doctor and a very nice person.",
         "ok", "{mask} {text} stay as they are"]


@pytest.fixture(scope="module")
def lms(tmp_path_factory):
    root = tmp_path_factory.mktemp("lms")
    return {"gpt2": make_tiny_gpt2(root / "gpt2"), "bpe": make_tiny_gpt2(root / "bpe", tokenizer="bpe"),
            "mlm": make_tiny_bert_mlm(root / "mlm")}


def _load(path, masked: bool):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    auto = AutoModelForMaskedLM if masked else AutoModelForCausalLM
    return auto.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


def _direct(path, prompt, verbalizer, texts, masked: bool, scoring="first-token"):
    """Class probabilities computed one text and one word at a time with
    plain transformers calls (the definition in the module doc)."""
    model, tok = _load(path, masked)

    def run(ids):  # what the tokenizer gives for one segment: token type ids 0 where it has them
        x = torch.tensor([ids])
        extra = {"token_type_ids": torch.zeros_like(x)} if "token_type_ids" in tok.model_input_names else {}
        with torch.no_grad():
            return model(input_ids=x, **extra).logits[0]

    out = []
    for t in texts:
        if masked:
            filled = re.sub(r"\{(text|mask)\}", lambda m: t if m.group(1) == "text" else tok.mask_token, prompt)
            ids = tok(filled)["input_ids"]
            a = ids.index(tok.mask_token_id)
        else:
            ids = tok(prompt.replace("{text}", t), add_special_tokens=False)["input_ids"]
            a = len(ids) - 1
        scores = []
        for words in verbalizer.values():
            words = [words] if isinstance(words, str) else words
            s, seen = 0.0, set()
            for w in words:
                # the word where it follows the prompt: after a space, as the model would continue
                before = prompt.split("{mask}")[0].split("{text}")[-1] if masked else prompt.split("{text}")[-1] + " "
                full = tok(before + w, add_special_tokens=False)["input_ids"]
                head = tok(before.rstrip(" "), add_special_tokens=False)["input_ids"]
                wid = full[len(head):]
                if scoring == "first-token":
                    if wid[0] in seen:
                        continue
                    seen.add(wid[0])
                    logits = run(ids)[a]
                    s += float(torch.softmax(logits.double(), -1)[wid[0]])
                    continue
                lp = 0.0
                for k in range(len(wid)):
                    if masked:
                        x = ids[:a] + wid[:k] + [tok.mask_token_id] * (len(wid) - k) + ids[a + 1:]
                        at = a + k
                    else:
                        x, at = ids + wid[:k], a + k
                    logits = run(x)[at]
                    lp += float(torch.log_softmax(logits.double(), -1)[wid[k]])
                s += np.exp(lp)
            scores.append(s)
        out.append(np.array(scores) / sum(scores))
    return np.array(out)


# ------------------------------------------------------------- probabilities
@pytest.mark.parametrize("name", ["gpt2", "bpe", "mlm"])
def test_first_token_probabilities_equal_a_direct_computation(lms, name):
    masked = name == "mlm"
    clf = PromptClassifier(lms[name], MASKED if masked else CAUSAL, VERB, progress=False, batch_size=3)
    assert clf.lm_kind == ("masked" if masked else "causal")
    assert clf.class_names == ["negative", "neutral", "positive"]
    p = clf.predict_proba(TEXTS)
    assert p.shape == (len(TEXTS), 3) and p.dtype == np.float64
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(p, _direct(lms[name], clf.prompt, VERB, TEXTS, masked), atol=FLOAT32_ATOL, rtol=0)
    assert len({tuple(np.round(r, 8)) for r in p}) == len(set(TEXTS))  # the texts matter


@pytest.mark.parametrize("name,verb", [
    ("bpe", {"negative": ["bad", "horrid"], "positive": ["good", "superb"]}),
    ("mlm", {"negative": ["bad", "meh"], "positive": ["good", "okayish"]}),
])
def test_word_scoring_equals_a_direct_computation(lms, name, verb):
    masked = name == "mlm"
    clf = PromptClassifier(lms[name], MASKED if masked else CAUSAL, verb, scoring="word", progress=False,
                           batch_size=4)
    assert any(len(ids) > 1 for ids in sum(clf.answer_ids.values(), []))  # multi-token words are scored
    p = clf.predict_proba(TEXTS[:4])
    np.testing.assert_allclose(p, _direct(lms[name], clf.prompt, verb, TEXTS[:4], masked, scoring="word"),
                               atol=FLOAT32_ATOL, rtol=0)
    first = PromptClassifier(lms[name], MASKED if masked else CAUSAL, verb, progress=False).predict_proba(TEXTS[:4])
    assert np.abs(first - p).max() > 1e-3  # the other words' later sub-tokens count


@pytest.mark.parametrize("name", ["bpe", "mlm"])
def test_same_probabilities_under_any_batch_size_and_padding(lms, name):
    masked = name == "mlm"
    prompt = MASKED if masked else CAUSAL
    verb = {"negative": ["bad", "horrid"], "positive": ["good", "superb"]}
    ref = PromptClassifier(lms[name], prompt, verb, scoring="word", progress=False, batch_size=1).predict_proba(TEXTS)
    for bs in (2, 5, 64):
        clf = PromptClassifier(lms[name], prompt, verb, scoring="word", progress=False, batch_size=bs)
        np.testing.assert_allclose(clf.predict_proba(TEXTS), ref, atol=FLOAT32_ATOL, rtol=0)
    # a text padded in a batch of longer ones, and alone
    alone = clf.predict_proba(["a"])
    padded = clf.predict_proba(["a", "a much much longer text that pads the short one on the left or right"])
    np.testing.assert_allclose(padded[0], alone[0], atol=FLOAT32_ATOL, rtol=0)
    # the output layer at the answer positions only, against whole logits
    assert clf._gather is not None
    clf._gather.handle.remove()
    clf._gather = None
    np.testing.assert_allclose(clf.predict_proba(TEXTS), ref, atol=FLOAT32_ATOL, rtol=0)


# ------------------------------------------------------------- answer tokens
def test_leading_space_forms(lms):
    bpe = PromptClassifier(lms["bpe"], CAUSAL, VERB, progress=False)
    tok = bpe.tokenizer
    assert tok.convert_ids_to_tokens(bpe.answer_ids["positive"][0]) == ["Ġgood"]
    assert tok.convert_ids_to_tokens(bpe.answer_ids["negative"][0]) == ["Ġbad"]
    # a trailing space of the prompt is taken out of the model input: the answer follows it
    spaced = PromptClassifier(lms["bpe"], CAUSAL + " ", VERB, progress=False)
    assert spaced.answer_ids == bpe.answer_ids
    np.testing.assert_array_equal(spaced.predict_proba(TEXTS[:3]), bpe.predict_proba(TEXTS[:3]))
    # after a newline, or with answer_prefix="", the bare form
    nl = PromptClassifier(lms["bpe"], CAUSAL + "\n", VERB, progress=False)
    assert tok.convert_ids_to_tokens(nl.answer_ids["positive"][0])[0] == "good"
    bare = PromptClassifier(lms["bpe"], CAUSAL, VERB, answer_prefix="", progress=False)
    assert tok.convert_ids_to_tokens(bare.answer_ids["positive"][0])[0] == "good"
    # WordPiece has no leading-space form: the word's own tokens
    wp = PromptClassifier(lms["gpt2"], CAUSAL, VERB, progress=False)
    assert wp.tokenizer.convert_ids_to_tokens(wp.answer_ids["positive"][0]) == ["good"]
    assert PromptClassifier(lms["gpt2"], CAUSAL + "\n", VERB, progress=False).answer_ids == wp.answer_ids


def test_first_tokens_shared_within_a_class_count_once(lms):
    one = PromptClassifier(lms["mlm"], MASKED, {"neg": ["bad"], "pos": ["okay"]}, progress=False)
    two = PromptClassifier(lms["mlm"], MASKED, {"neg": ["bad"], "pos": ["okay", "okayish"]}, progress=False)
    np.testing.assert_array_equal(one.predict_proba(TEXTS), two.predict_proba(TEXTS))


# -------------------------------------------------------------------- errors
@pytest.mark.parametrize("kwargs,match", [
    (dict(prompt="Review: Sentiment:"), r"has no \{text\}"),
    (dict(model="mlm", prompt="Review: {text} Sentiment:"), r"masked language model has no \{mask\}"),
    (dict(model="mlm", prompt="{mask} {text} {mask}"), r"has 2 \{mask\}s"),
    (dict(prompt="Review: {text} Sentiment: {mask}"), r"causal language model"),
    (dict(verbalizer={"negative": "bad", "positive": "\U0001F99C"}), r"cannot encode answer word '\U0001F99C'"),
    (dict(verbalizer={"negative": "okay", "positive": "okayish"}), r"share their first sub-token 'okay'.*word"),
    (dict(verbalizer={"negative": "bad", "positive": "bad"}), r"given to two classes"),
    (dict(verbalizer={"negative": "bad", "positive": []}), r"no answer words"),
    (dict(verbalizer={}), r"must map each class"),
    (dict(verbalizer={"positive": "good"}), r"at least two classes"),
    (dict(scoring="sum"), r"unknown scoring"),
    (dict(dtype="onnx"), r"not supported for language models"),
])
def test_one_line_errors(lms, kwargs, match):
    args = dict(model="gpt2", prompt=CAUSAL, verbalizer=VERB)
    args.update(kwargs)
    args["model"] = lms[args["model"]]
    with pytest.raises(ModelError, match=match) as e:
        PromptClassifier(progress=False, **args)
    assert "\n" not in str(e.value)


def test_a_sequence_classifier_is_no_language_model(tmp_path):
    from _tiny_models import make_tiny_classifier

    with pytest.raises(ModelError, match="is a BertForSequenceClassification, not a causal or masked language model"):
        PromptClassifier(make_tiny_classifier(tmp_path / "clf"), MASKED, VERB, progress=False)


def test_a_text_holding_the_mask_token_is_an_error(lms):
    clf = PromptClassifier(lms["mlm"], MASKED, VERB, progress=False)
    with pytest.raises(ModelError, match=r"holds the mask token '\[MASK\]' 2 times"):
        clf.predict_proba(["a [MASK] b"])


def test_verbalizer_options_and_spec_file(tmp_path, lms):
    assert parse_verbalizer(["negative=bad, awful", "positive=good", "negative=terrible"]) == \
        {"negative": ["bad", "awful", "terrible"], "positive": ["good"]}
    with pytest.raises(ModelError, match="CLASS=WORD"):
        parse_verbalizer(["negative"])
    (tmp_path / "m").symlink_to(lms["gpt2"])
    spec = tmp_path / "spec.yaml"
    spec.write_text("model: m\nprompt: 'Review: {text} Sentiment:'\nverbalizer:\n  negative: [bad, awful]\n"
                    "  positive: good\nscoring: word\n")
    s = read_prompt_spec(spec)
    assert s == PromptSpec(str((tmp_path / "m").resolve()), CAUSAL, {"negative": ["bad", "awful"],
                                                                    "positive": ["good"]}, scoring="word")
    spec.write_text("model: m\nprompt: 'Review: {text}'\nverbalizer: {a: x}\nlayers: 3\n")
    with pytest.raises(ModelError, match=r"spec.yaml:4: field 'layers': unknown key"):
        read_prompt_spec(spec)
    spec.write_text("model: m\nprompt: 'Review: text'\nverbalizer: {a: x}\n")
    with pytest.raises(ModelError, match=r"spec.yaml:2: field 'prompt': .*has no \{text\}"):
        read_prompt_spec(spec)
    spec.write_text("model: m\nprompt: 'Review: {text}'\n")
    with pytest.raises(ModelError, match=r"field 'verbalizer' is missing"):
        read_prompt_spec(spec)
    spec.write_text("!!python/object:os.system ls\n")
    with pytest.raises(ModelError, match="invalid YAML"):
        read_prompt_spec(spec)


# ---------------------------------------------------------------- machinery
def test_cache_hits_on_a_rerun_and_the_fingerprint(lms, tmp_path):
    clf = PromptClassifier(lms["mlm"], MASKED, VERB, progress=False, batch_size=4)
    a, st1 = predict(clf, TEXTS, cache=tmp_path)
    again = PromptClassifier(lms["mlm"], MASKED, VERB, progress=False)
    b, st2 = predict(again, TEXTS, cache=tmp_path)
    assert st1.computed == st1.distinct == len(set(TEXTS)) and st2.cached == st2.distinct and st2.computed == 0
    assert not again.loaded  # a fully cached run never loads the weights
    np.testing.assert_array_equal(a, b)
    fp = clf.fingerprint()
    assert fp["prompt"] == MASKED and fp["lm_kind"] == "masked" and fp["weights_sha256"]
    assert fp["verbalizer"] == [["negative", ["bad", "awful"]], ["neutral", ["okay"]], ["positive", ["good"]]]
    other_prompt = PromptClassifier(lms["mlm"], "Text: {text} Answer: {mask}", VERB, progress=False)
    other_words = PromptClassifier(lms["mlm"], MASKED, {**VERB, "neutral": "fine"}, progress=False)
    assert len({json.dumps(c.fingerprint(), sort_keys=True) for c in (clf, other_prompt, other_words)}) == 3
    _, st3 = predict(other_words, TEXTS, cache=tmp_path)
    assert st3.cached == 0


def test_spec_rebuilds_the_same_classifier(lms):
    from bias_suite.predict.specs import build_predictor, predictor_spec

    clf = PromptClassifier(lms["bpe"], CAUSAL, VERB, scoring="word", progress=False, batch_size=4)
    copy = build_predictor(predictor_spec(clf), device="cpu")
    assert isinstance(copy, PromptClassifier) and copy.fingerprint() == clf.fingerprint()
    np.testing.assert_array_equal(copy.predict_proba(TEXTS), clf.predict_proba(TEXTS))


def test_int8_runs_on_the_cpu(lms):
    clf = PromptClassifier(lms["mlm"], MASKED, VERB, dtype="int8", progress=False)
    p = clf.predict_proba(TEXTS)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert clf.fingerprint()["dtype"] == "int8" and "quantization" in clf.fingerprint()


# ---------------------------------------------------------------- runs
def test_python_run_of_a_sentiment_suite(lms, tmp_path):
    from bias_suite.pipeline import run

    spec = PromptSpec(str(lms["mlm"]), MASKED, VERB)
    res = run(["sentiment_gender"], spec, tmp_path / "out", bootstrap=10, cache=tmp_path / "cache", progress=False)
    direct = _direct(lms["mlm"], MASKED, VERB, list(res.examples["text"][:5]), masked=True)
    np.testing.assert_allclose(np.asarray(res.scored.probs[:5]), direct, atol=FLOAT32_ATOL, rtol=0)
    assert res.metadata["model_fingerprint"]["prompt"] == MASKED and len(res.results) > 50
    clf = PromptClassifier(lms["gpt2"], CAUSAL, {"negative": "bad", "positive": "good"}, progress=False)
    with pytest.raises(ModelError, match=r"\['neutral'\] are unknown to the model .*class_map=.*verbalizer"):
        run(["sentiment_gender"], clf, None, bootstrap=0, cache=False, progress=False)
    binary = run(["sentiment_gender"], clf, None, bootstrap=0, cache=False, progress=False,
                 class_map={"neutral": "positive"})
    assert list(binary.scored.classes) == ["negative", "positive"]


def test_cli_run_with_prompt_and_verbalizer_then_a_spec_file(lms, tmp_path):
    cli = CliRunner()
    args = ["run", "sentiment_gender", "--model", str(lms["gpt2"]), "--prompt", CAUSAL,
            "--verbalizer", "negative=bad,awful", "--verbalizer", "neutral=okay", "--verbalizer", "positive=good",
            "--bootstrap", "10", "--cache-dir", str(tmp_path / "cache"), "--quiet"]
    r = cli.invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    meta = json.loads((tmp_path / "a" / "run.json").read_text())
    assert meta["model_fingerprint"]["kind"] == "prompt-lm" and meta["predictions"]["computed"] > 100
    scored = [json.loads(line) for line in (tmp_path / "a" / "scored.jsonl").read_text().splitlines()[:3]]
    direct = _direct(lms["gpt2"], CAUSAL, VERB, [s["text"] for s in scored], masked=False)
    np.testing.assert_allclose([[s["probs"][c] for c in VERB] for s in scored], direct, atol=FLOAT32_ATOL, rtol=0)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"model: {lms['gpt2']}\nprompt: '{CAUSAL}'\nverbalizer:\n  negative: bad, awful\n"
                    "  neutral: [okay]\n  positive: good\n")
    r = cli.invoke(app, ["run", "sentiment_gender", "--model", str(spec), "--bootstrap", "10", "--cache-dir",
                         str(tmp_path / "cache"), "--quiet", "--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    meta_b = json.loads((tmp_path / "b" / "run.json").read_text())
    assert meta_b["predictions"]["computed"] == 0 and meta_b["predictions"]["cached"] == meta["predictions"]["distinct"]
    two = ["--verbalizer", "negative=bad", "--verbalizer", "positive=good"]
    for bad, msg in [(["--prompt", "Review:", *two], "has no {text}"), (["--verbalizer", "positive=good"], "needs both"),
                     (["--prompt", CAUSAL, "--verbalizer", "positive=good"], "at least two classes"),
                     (["--prompt", CAUSAL, *two], "or give them answer words with --verbalizer")]:
        r = cli.invoke(app, ["run", "sentiment_gender", "--model", str(lms["gpt2"]), *bad, "--quiet",
                             "--out", str(tmp_path / "c")])
        assert r.exit_code != 0 and msg in r.output, r.output


def test_bf16_weights(lms):
    clf = PromptClassifier(lms["gpt2"], CAUSAL, VERB, dtype="bf16", device="cpu", progress=False)
    p = clf.predict_proba(TEXTS)
    assert next(clf.model.parameters()).dtype == torch.bfloat16 and clf.fingerprint()["dtype"] == "bfloat16"
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)  # scores are summed in float64 whatever the weights
