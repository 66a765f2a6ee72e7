# The two commands of the README. Both bootstrap .venv themselves.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: example test bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip || echo "pip could not be upgraded; installing with the venv's own pip"
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

example: $(STAMP)
	$(PY) examples/keras_fit.py

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
