# Set-up and the two everyday commands. `make demo` and `make test` each set
# up a virtual environment in .venv on first use (Python >= 3.10 needed).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch, pinned: an unpinned torch pulls a multi-GB CUDA build.
TORCH ?= torch==2.13.0

.PHONY: setup demo test clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "$(TORCH)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

demo: setup
	$(BIN)/lmgrade demo

test: setup
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) lmgrade-demo .pytest_cache
