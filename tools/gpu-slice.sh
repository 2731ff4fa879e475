#!/usr/bin/env bash
# One time-boxed slice of GPU work, for a GPU machine lent a few minutes at a time, whose python3
# already has a CUDA build of torch (no venv: the CPU pin of pyproject.toml does not apply):
#
#   tools/gpu-slice.sh OUT SECONDS [NOTEBOOK ...]
#
# 1. the CUDA unit tests (tests/test_gpu.py, no notebooks; `make test-gpu` adds the smoke notebooks);
# 2. `python -m ponder.bench train seeds` (steps/s per family, eager and captured, against the
#    arithmetic limit; 3 seeds' gradients batched with vmap against one after the other);
# 3. the NOTEBOOKs at the `gpu` profile, stopped when SECONDS have passed since the start.
# Into OUT (at most 8 files): the logs, the benches' JSON and figures-gpu.tgz (figures/gpu/ and
# the profile's ledger rows, results/gpu/claims/). Runs not finished are lost with the machine: give
# each slice notebooks that finish in it. The notebooks' packages (papermill, nbval, datasets, ...)
# come from wheels in .whl/ when there is one.
set -u
out=$1 budget=$2
shift 2
begin=$(date +%s)
left() { echo $((budget - $(date +%s) + begin)); }
mkdir -p "$out"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH="$PWD/lib:/tmp/site" PYTHONUNBUFFERED=1 TQDM_DISABLE=1 HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.log"
workers=$(python3 -c "import xdist" 2>/dev/null && echo "-n 6")  # pytest-xdist where there is one
timeout 300 python3 -m pytest -q $workers tests/test_gpu.py 2>&1 | tee "$out/test-gpu.log"
timeout 300 python3 -m ponder.bench train seeds 2>&1 | tee "$out/bench.log"
cp results/bench/train.json "$out/bench-train.json" 2>/dev/null
cp results/bench/seeds.json "$out/bench-seeds.json" 2>/dev/null
if [ $# -gt 0 ] && [ "$(left)" -gt 60 ]; then
  echo "notebooks $*: $(left) s left"
  timeout "$(left)" python3 -m ponder.notebooks run "$@" --profile gpu --jobs 4 2>&1 | tee "$out/figures.log"
fi
tar czf "$out/figures-gpu.tgz" figures/gpu $( [ -d results/gpu/claims ] && echo results/gpu/claims )
echo "slice done after $(($(date +%s) - begin)) s"
