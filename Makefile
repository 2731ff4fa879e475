# ponder: every table and figure of the papers from one command.
#   make help               this list
#   make figures            execute every notebook (PROFILE=quick by default), write figures/ + CLAIMS.md
#                           PROFILE=cpu: the same models with the seeds of every judged comparison and the full grids, figures/cpu/ (its time: figures/TIMES.json)
#                           NOTEBOOKS="hyla_lm acm_vit" a subset; SEED=N another seed (figures/seed-N/); JOBS=N runs and notebooks at a time (default: one per core)
#   make plan               what make figures would train (same PROFILE, NOTEBOOKS) and how long it should take here; trains nothing
#   make test               ruff, unit tests + nbval over every notebook in the smoke profile (what CI runs), one pytest-xdist worker per core (TEST_WORKERS=0: one process); its checked numbers: see refresh; RECORD=1: its time into figures/TIMES.json
#   make refresh            re-run the smoke notebooks (NOTEBOOKS="..." some), store the outputs nbval checks, print what changed (alias: refresh-notebooks)
#   make verify             after make figures: per target, are figures/ and CLAIMS.md rows identical to the committed ones? (NOTEBOOKS="..." their targets)
#   make test-gpu           the CUDA tests and the smoke notebooks on the GPU (says so and passes without one)
#   make lab                JupyterLab with widgets, on copies of the notebooks in build/lab/
#   make results PROFILE=.. train every cached run, no plotting
#   make bench              wall-clock benchmarks into results/bench/ (ratios to a baseline of the same run)
#   make clean              remove build/, results/, the data-set cache and figures of other profiles
PROFILE ?= quick
SEED ?= 0
JOBS ?=
NOTEBOOKS ?=
VENV := .venv
PY ?= $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# a machine whose python already has torch (e.g. a GPU box): make ... PY=python3 INSTALL= (and PYTHONPATH=lib)
INSTALL ?= $(STAMP)
# make test spreads its tests over TEST_WORKERS pytest-xdist workers (auto: one per core, at most 4),
# a file to a worker (a notebook's cells in order); TEST_WORKERS=0 runs them in this process
TEST_WORKERS ?= auto
# extra pytest arguments, e.g. PYTEST_ARGS="-n 6 --dist loadfile" for make test-gpu
PYTEST_ARGS ?=

export HF_DATASETS_OFFLINE := 1
export HF_HUB_OFFLINE := 1
export PYTHONHASHSEED := 0

.PHONY: help figures plan test test-gpu lab results bench clean refresh refresh-notebooks verify

help:
	@sed -n 's/^#   //p' Makefile

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# the pinned CPU build of torch first: an unpinned resolve would pull several GB of CUDA wheels
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

figures: $(INSTALL)
	$(PY) -m ponder.repro run $(NOTEBOOKS) --profile $(PROFILE) --seed $(SEED) $(if $(JOBS),--jobs $(JOBS))

plan: $(INSTALL)
	$(PY) -m ponder.repro plan $(NOTEBOOKS) --profile $(PROFILE) --seed $(SEED) $(if $(JOBS),--jobs $(JOBS))

results: $(INSTALL)
	$(PY) -m ponder.repro.registry --profile $(PROFILE) --seed $(SEED)

# pytest over unit tests and the smoke notebooks (prepared into $(1)), results into $(2): make test, make test-gpu
define nbval
	rm -rf $(1) $(2)
	$(PY) -m ponder.repro prepare --profile smoke --out $(1)
	TQDM_DISABLE=1 HF_DATASETS_DISABLE_PROGRESS_BARS=1 PONDER_RESULTS=$(CURDIR)/$(2) \
		$(PY) -m pytest -q $(3) $(1) --nbval-lax --nbval-current-env --nbval-cell-timeout=600 --nbval-sanitize-with tests/nbval-sanitize.cfg $(PYTEST_ARGS)
endef

test: $(STAMP)
	mkdir -p build && date +%s > build/test-began
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(call nbval,build/nbval,build/test-results,tests -n $(TEST_WORKERS) --maxprocesses 4 --dist loadfile)
	$(if $(RECORD),$(PY) -m ponder.repro.measured test $$(( $$(date +%s) - $$(cat build/test-began) )))

test-gpu: $(INSTALL)
	@$(PY) -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)" || { echo "no CUDA device here: nothing to test"; exit 0; }
	$(call nbval,build/nbval-gpu,build/test-gpu-results,tests/test_gpu.py)

bench: $(INSTALL)
	$(PY) -m ponder.bench

# the lab works on copies in build/lab/, so autosave never writes outputs into the tracked notebooks;
# a copy older than its notebook is replaced (the old one kept as NAME.ipynb.~N~); --allow-root where
# the user is root (containers)
lab: $(STAMP)
	mkdir -p build/lab && cp -uv --backup=numbered notebooks/*.ipynb build/lab/
	$(PY) -m ponder.repro.lab notebooks build/lab  # names each copy cp -u kept though its notebook changed since it was copied
	$(PY) -c 'import os, sys, ponder; os.execv(sys.argv[1], sys.argv[1:])' $(VENV)/bin/jupyter lab $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) build/lab/  # through ponder: its kernels run pinned

# re-run the smoke notebooks with a fresh run cache, keep only the outputs nbval checks (the
# regression cells' numbers among them) and print a diff of the stored against the new ones
refresh: $(STAMP)
	TQDM_DISABLE=1 $(PY) -m ponder.repro refresh $(NOTEBOOKS)

refresh-notebooks: refresh

# after make figures: which targets' figures and ledger rows differ from the committed ones
verify: $(INSTALL)
	$(PY) -m ponder.repro verify $(NOTEBOOKS) --profile $(PROFILE)

clean:
	rm -rf build results .cache figures/smoke figures/paper figures/seed-*
