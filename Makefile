# Two commands on a fresh machine:
#   make demo   - venv, install, build the default model if missing, run the bundled suites
#   make test   - venv, install, run the tests
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
OUT ?= results/demo
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test install venv clean-venv models

$(PY):
	$(PYTHON) -m venv $(VENV)

# Install order matters: torch is pinned to the local CPU build first (a loose
# torch pulls GBs of CUDA packages); checklist 0.0.11 needs notebook<7,
# ipython<9 and a setuptools that still ships pkg_resources, and installs only
# without build isolation.
$(STAMP): $(PY) requirements.txt requirements-dev.txt setup.cfg setup.py
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q "notebook<7" "ipython<9" "setuptools<81" wheel
	$(PIP) install -q --no-build-isolation checklist==0.0.11
	$(PIP) install -q -r requirements.txt -r requirements-dev.txt
	$(PIP) install -q --no-build-isolation --no-deps -e .
	touch $(STAMP)

install venv: $(STAMP)

models: $(STAMP)
	$(VENV)/bin/bias-suite models build default-sentiment
	$(VENV)/bin/bias-suite models build default-ner

# templates/*.yaml mixes classification and NER suites: --model default-sentiment runs the
# NER suites (ner_*.yaml) with default-ner and writes them to $(OUT)/ner.
demo: $(STAMP)
	$(VENV)/bin/bias-suite models build default-sentiment
	$(VENV)/bin/bias-suite models build default-ner
	$(VENV)/bin/bias-suite run templates/*.yaml --model default-sentiment --out $(OUT) --report
	$(VENV)/bin/bias-suite plot $(OUT) --out $(OUT)/figures --format png

# The HTML report is tested in headless Chromium (Debian chromium + chromium-driver).
test: $(STAMP)
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver) || \
		echo "chromium could not be installed: the browser test will be skipped"
	$(PY) -m pytest -q

clean-venv:
	rm -rf $(VENV)
