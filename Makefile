# mads-bench developer tasks. Every target creates .venv and installs into it when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_WORKERS ?= 2

# Nothing may reach the Hub at run time. (WANDB_MODE is left to the user and to the tests
# that log: transformers prints a banner to stdout when it is set, which would break JSON output.)
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install models demo test test-slow lint format bench bench-train clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

models: install
	$(BIN)/mads-bench models setup

demo: install
	$(BIN)/mads-bench demo --out outputs/demo

test: install
	$(BIN)/mads-bench models setup minilm minilm-static tiny-lm
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q

test-slow: install
	$(BIN)/mads-bench models setup
	$(BIN)/python -m pytest -m slow -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install
	$(BIN)/mads-bench models setup minilm minilm-static tiny-lm
	$(BIN)/python -m benchmarks.run

# Online success of the base and the demo's trained policy on unseen scenarios (runs the demo
# first when outputs/demo holds no finished training); ~10 min on 2 cores after the demo.
bench-train: install
	$(BIN)/mads-bench models setup
	@test -f outputs/demo/train_summary.json || $(BIN)/mads-bench demo --out outputs/demo
	$(BIN)/python -m benchmarks.run online_gain

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis outputs
