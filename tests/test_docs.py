"""Every command and snippet of README.md, docs/*.md and the notebooks'
markdown runs as written (tests/_doc_blocks.py says how blocks are chosen and
marked), and every relative link resolves inside the repository.

The default models are stood in for by tiny local models placed where
``bias-suite models`` keeps them (``$BIAS_SUITE_CACHE/models``), so that
``--model default-sentiment`` and ``default-ner`` run in seconds; the numbers
differ from the real models', the commands and their outputs' shapes do not.
The placeholder models the docs name (``./my-finetuned-model``,
``./my-token-classifier``, ``./my-causal-lm``, ``./my-masked-lm``) are tiny
models too.
Each document runs in its own working folder holding copies of templates/ and
identity_terms/; its blocks run in order and share that folder (and, for
Python, one namespace).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _doc_blocks import ROOT, collect, relative_links

# Runs the README's and docs' code blocks (the default models, whole suites): left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


BLOCKS = collect()
RUN = [b for b in BLOCKS if b.kind or b.file]
TIMEOUT = 1200  # (a block that builds the default tagger and runs the NER suites takes minutes)


@pytest.fixture(scope="session")
def doc_env(tmp_path_factory):
    """Environment for the documentation: tiny default models, private caches."""
    from _tiny_models import install_tiny_defaults

    cache = tmp_path_factory.mktemp("doc_cache")
    install_tiny_defaults(cache)
    env = dict(os.environ)
    env.update(BIAS_SUITE_CACHE=str(cache), BIAS_SUITE_PREDICTION_CACHE=str(cache / "predictions"),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
               COLUMNS="100", PYTHONHASHSEED="0")
    return env


_WORKDIRS: dict[str, Path] = {}
_NAMESPACES: dict[str, dict] = {}


def _workdir(doc: str, factory) -> Path:
    key = doc.split("#")[0]
    if key not in _WORKDIRS:
        d = factory.mktemp("doc_" + Path(key).stem)
        for sub in ("templates", "identity_terms"):
            shutil.copytree(ROOT / sub, d / sub)
        # the placeholder models the docs name: tiny stand-ins
        from _tiny_models import make_tiny_classifier
        from _tiny_ner import make_tiny_token_classifier

        make_tiny_classifier(d / "my-finetuned-model")
        from _tiny_lms import make_tiny_bert_mlm, make_tiny_gpt2

        make_tiny_gpt2(d / "my-causal-lm", tokenizer="bpe")
        make_tiny_bert_mlm(d / "my-masked-lm")
        make_tiny_token_classifier(d / "my-token-classifier", tags=("O", "B-PER", "I-PER", "L-PER", "U-PER"))
        _WORKDIRS[key] = d
    return _WORKDIRS[key]


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_doc_block(block, doc_env, tmp_path_factory, monkeypatch):
    if block.skip:
        pytest.skip(f"{block.id}: {block.skip}")
    work = _workdir(block.doc, tmp_path_factory)
    if block.file:
        (work / block.file).parent.mkdir(parents=True, exist_ok=True)
        (work / block.file).write_text(block.text, encoding="utf-8")
    if block.kind == "shell":
        proc = subprocess.run(["bash", "-eo", "pipefail", "-c", block.text], cwd=work, env=doc_env,
                              capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        assert proc.returncode == block.exit, (
            f"{block.id} exited {proc.returncode} (expected {block.exit})\n--- block\n{block.text}"
            f"--- stdout (end)\n{proc.stdout[-3000:]}\n--- stderr (end)\n{proc.stderr[-3000:]}")
    elif block.kind == "python" and block.file:  # a module for later blocks to import: written, compiled
        compile(block.text, block.id, "exec")
    elif block.kind == "python":
        for k, v in doc_env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.chdir(work)
        ns = _NAMESPACES.setdefault(block.doc.split("#")[0], {"__name__": "__doc_block__"})
        exec(compile(block.text, block.id, "exec"), ns)
        for name, fn in list(ns.items()) if not block.define else []:   # a block that defines tests: run them
            if name.startswith("test_") and callable(fn) and getattr(fn, "__code__", None) \
                    and fn.__code__.co_filename == block.id:
                fn()
    elif block.kind == "yaml":
        import yaml

        data = yaml.safe_load(block.text)
        if not isinstance(data, dict) or not ({"suite", "templates"} <= data.keys() or {"attribute", "groups"} <= data.keys()):
            pytest.skip(f"{block.id}: a YAML fragment, not a whole suite or identity-term file")
        name = block.file or ("_doc_suite.yaml" if "suite" in data else "identity_terms/_doc_terms.yaml")
        if not block.file:
            (work / name).write_text(block.text, encoding="utf-8")
        # a suite, or an identity-term file on its own: each must pass validate
        proc = subprocess.run(["bias-suite", "validate", name], cwd=work, env=doc_env, capture_output=True,
                              text=True, timeout=TIMEOUT)
        assert proc.returncode == 0, f"{block.id}: the file does not validate:\n{proc.stdout}{proc.stderr}"


def test_blocks_are_collected():
    """The collector finds the documentation's runnable blocks (a guard
    against a parser change that silently finds none)."""
    docs = {b.doc.split("#")[0] for b in RUN}
    assert "README.md" in docs and any(d.startswith("docs/") for d in docs)
    assert sum(b.kind == "shell" for b in RUN) >= 5 and sum(b.kind == "python" for b in RUN) >= 3


def test_relative_links_resolve():
    """Every relative link of README.md and docs/*.md points at a file of the
    repository (none leaves it)."""
    bad = []
    for doc, line, target in relative_links():
        path = target.split("#")[0]
        resolved = ((ROOT / doc).parent / path).resolve()
        if not str(resolved).startswith(str(ROOT)) or not resolved.exists():
            bad.append(f"{doc}:{line}: {target}")
    assert not bad, "links that do not resolve inside the repository:\n" + "\n".join(bad)


HELP_ORDER = ["expand", "perturb", "validate", "run", "report", "plot", "check", "evaluate", "compare", "metrics", "sample-size",
              "models build", "models list", "models path", "cache info", "checklist export", "checklist predict",
              "checklist import", "cache clear"]


def _commands():
    import click
    import typer

    from bias_suite.cli import app

    root = typer.main.get_command(app)

    def walk(c, path, ctx):
        subs = c.list_commands(ctx) if hasattr(c, "list_commands") else []
        if not subs:
            yield " ".join(path), c
        for n in subs:
            sub = c.get_command(ctx, n)
            yield from walk(sub, path + [n], click.Context(sub, parent=ctx))

    return dict(walk(root, [], click.Context(root)))


def test_every_option_has_help_and_every_command_an_example():
    import click

    cmds = _commands()
    assert set(cmds) == set(HELP_ORDER), "a command was added or removed: keep HELP_ORDER in step"
    for name, c in cmds.items():
        missing = [p.name for p in c.params if isinstance(p, click.Option) and not (p.help or "").strip()]
        assert not missing, f"bias-suite {name}: options without help text: {missing}"
        assert f"Example: bias-suite {name}" in (c.help or ""), f"bias-suite {name} --help shows no example"


def test_help_examples_run(doc_env, tmp_path):
    """The example in each command's --help, run as written, in an order in
    which each finds what an earlier one made."""
    import re

    cmds = _commands()
    work = tmp_path / "help"
    work.mkdir()
    for sub in ("templates", "identity_terms"):
        shutil.copytree(ROOT / sub, work / sub)
    for name in HELP_ORDER:
        line = re.search(r"Example: (bias-suite [^\n]+)", cmds[name].help).group(1)
        proc = subprocess.run(["bash", "-c", line], cwd=work, env=doc_env, capture_output=True, text=True,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        ok = (0, 3) if name == "check" else (0,)   # check exits 3 when a rule fails
        assert proc.returncode in ok, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
