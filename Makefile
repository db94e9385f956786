# The two commands of the README: `make train` and `make test`.
# Each creates the virtual environment and installs what is missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Tested torch version; pip on the reference machine takes this CPU build from local disk.
TORCH_SPEC ?= torch==2.13.0

.PHONY: venv train test lint format clean identical-outputs

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

train: venv
	$(PY) train.py $(ARGS)

test: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest -q -n auto --dist loadfile $(ARGS)

# Every system's parses by the working tree against those of the library of commit BASE
# (default HEAD: the uncommitted changes), both made on this machine
# (benchmarks/identical_outputs.py; about four minutes on one thread): exit status 1 lists
# the outputs that differ.
BASE ?= HEAD
identical-outputs: venv
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.identical_outputs --against $(BASE) $(ARGS)

lint: venv
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf $(VENV) outputs multirun .pytest_cache .hypothesis
