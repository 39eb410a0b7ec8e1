# Two entry points for a fresh machine with nothing but Python 3.10+:
#   make run    set up .venv and run the main job (benchmark the shipped CPU levels)
#   make test   set up .venv with the dev/train extras and run the test suite
# and, for players and for the rest of the numbers:
#   make serve  the browser game on http://127.0.0.1:8000 (loopback only)
#   make duel   the duelist head to head (the standard 2-seat protocol against hard and optimal)
#   make bench  the speed benchmarks quoted in docs/speed.md
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
# Small-matrix numpy/torch work is slower with thread pools on 2 shared cores.
export OPENBLAS_NUM_THREADS = 1
export OMP_NUM_THREADS = 1
export MKL_NUM_THREADS = 1

.PHONY: run serve duel test bench lint docs setup setup-dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[plot]"
	touch $@

$(VENV)/.web: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[web]"
	touch $@

# The extras take version ranges (a library's habit); the exact versions the benchmarks ran
# with are constraints/benchmark.txt. torch 2.13.0 (a CPU build) is installed first, on its
# own, so that no other requirement can pull a CUDA build.
CONSTRAINTS = constraints/benchmark.txt
$(VENV)/.dev: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[train,export,plot,ray,jax,dev]" -c $(CONSTRAINTS)
	touch $@

# The docs site needs the `docs` extra only (mkdocstrings reads the code without importing it).
$(VENV)/.docs: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[docs]"
	touch $@

setup: $(VENV)/.core
setup-dev: $(VENV)/.dev

# The main job (the README's figure; tests/test_docs.py holds the README to these games and
# pairings): the solver, 10,000 games of each level and baseline, and the 2-player ladder of
# the score-playing levels, 5,000 games per pairing. The duelist is in neither: alone it plays
# hard's network (the same games), and its 2-seat play is `make duel`'s.
RUN_LEVELS = easy,medium,hard,expert,master
run: $(VENV)/.core
	$(BIN)/yahtzee solve --rules official
	$(BIN)/yahtzee evaluate --policy $(RUN_LEVELS),random,greedy,heuristic,optimal \
		--games 10000 --seed 0 --json out/benchmark.json --plot out/benchmark.png
	$(BIN)/yahtzee tournament --policies $(RUN_LEVELS) --players 2 --games 5000 --seed 0 \
		--json out/ladder.json --plot out/ladder.png

serve: $(VENV)/.web
	$(BIN)/yahtzee serve --host 127.0.0.1 --port 8000

duel: $(VENV)/.core
	$(BIN)/yahtzee benchmark duelist --players 2 --vs hard,optimal --json out/duel.json

bench: $(VENV)/.dev
	$(BIN)/yahtzee bench-env
	$(BIN)/python experiments/bench_solver.py --rules official
	$(BIN)/python experiments/bench_levels.py
	$(BIN)/python experiments/bench_train.py --timesteps 200000

test: $(VENV)/.dev
	$(BIN)/python -m pytest -q

docs: $(VENV)/.docs
	$(BIN)/mkdocs build --strict -d out/site

lint: $(VENV)/.dev
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
