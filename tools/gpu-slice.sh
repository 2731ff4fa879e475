#!/usr/bin/env bash
# One time-boxed slice of GPU work, for a GPU machine lent a few minutes at a time, whose python3
# already has a CUDA build of torch (no venv: the CPU pin of pyproject.toml does not apply):
#
#   tools/gpu-slice.sh OUT SECONDS STEP ...
#
# Each STEP, in the order given, while SECONDS (less the half minute the packing needs) last:
#   tests      the CUDA unit tests alone (tests/test_gpu.py, spread over 8 pytest-xdist workers where it
#              is installed: 109 s on one worker on 2026-11-27, since `loadfile` keeps a file on one);
#   test-gpu   `make test-gpu`: those and the smoke notebooks under nbval (107 s on the H200);
#   bench      `python -m ponder.bench streams train seeds kernels acm`, each in a process of its own (the
#              train rates halved in a process that had run kernels and acm first), train second: it
#              decides the plan (117 s on the H200 before it timed
#              the fuzzy-logic, language-model and digits U-ViT families, the C-PVR ones captured and
#              with their seeds together, sraven and the ViT in bfloat16 and sraven compiled, before
#              `kernels` profiled one step of each and `acm` the ACM layer with its fused Triton
#              kernels: on 2026-11-27 all but train's last 6 rows took 5.5 minutes; the train JSON is written row by row, so what
#              a cut-off run measured comes back; `streams`, first, times the host drawing C-PVR
#              batches: about 10 s);
#   bench:NAME[,NAME...]  those benchmarks only (bench:kernels,train: the profile, then the rates);
#   probes     tools/together-probe.py on the failing hyper_act test: its replay, the loss difference at every
#              step, then one step's gradients, stacked against alone, tensor by tensor, at every step 1-29,
#              then the whole update of steps 12-20 (about 2.5 minutes; lease 4 asked the gradients of
#              steps 0, 12, 13 and 20 and found none apart: RUN.md, lease 4);
#   lengths    tools/length-probe.py: the three kinds' fuzzy-logic runs of hyla-a1 at the profile's 2,000
#              steps and at 8,000, 3 seeds, 6 at a time (90k steps: about 2 minutes at lease 2's rates);
#              the 2,000-step runs are hyla-a1's own and stay in the run cache (RUN.md, session 35);
#   captures   first the CUDA tests of the ways the rule may adopt (an ACM phase-III run captured, compiled, or both
#              follows the eager one, a compiled language model too; the compiled losses are the eager ones: about 1.5
#              minutes with the compiles), then
#              tools/capture-probe.py: the bench's rates of the ACM phase-III, A-ViT and language-model steps, eager and
#              captured as a CUDA graph (they train eagerly; lease 4: an ACM step waits on the host), and of ACM's phase III
#              and the language model compiled, eager and captured (side by side their device time is the bound), about
#              6 minutes (RUN.md, sessions 39 and 40);
#   scenes     tools/scene-probe.py: the gpu base ViT and its exits on three scenes harder than the textured
#              digits, 3 processes (unmeasured: about 6-8 minutes), for ACM's stand-in at gpu (RUN.md, lease 3);
#              its runs are in the run cache, keyed by their scene: the adopted scene's base and exits are trained;
#   sraven-batch  tools/sraven-probe.py: the gpu sraven model at the same 10.24M instances in batches of 128
#              (80,000 steps, the paper's batch and updates: HYLA and softmax) and of 256 (40,000: HYLA), 3 processes
#              (unmeasured: about 6-8 minutes); RUN.md's rule (session 38) sets the gpu Sraven row's batch from it;
#   NAME[,NAME...]  notebooks at the `gpu` profile, the names joined by commas sharing one pool.
# Into OUT (at most 8 files, 64 MiB in all): logs.tgz (the logs and the benches' JSON), figures-gpu.tgz
# (figures/gpu/ and the profile's ledger rows, results/gpu/claims/) and the gpu run cache in parts
# of 15 MB, runs-gpu.tgz.part-aa, -ab, ... Of the run cache, at most PACK_MB megabytes (default 45, so
# that everything comes back) of the runs under the folders of results/gpu that PACK names (run-name
# prefixes, e.g. PACK="hyla hut/cpvr": those a later lease reads; default all), the runs cut off
# first, then the finished ones; each run left out is named (`python tools/gpu-plan.py gpu` gives each
# notebook's megabytes and what it reads of earlier notebooks' runs). Unpacked here (`cat OUT/runs-gpu.tgz.part-* |
# tar xzf -` in the repository's root) and carried by the next slice (`carry: [".whl", "results/gpu/hyla"]`:
# the folders it reads), it lets runs cut off in one slice resume in the next. A carry holds 64 MiB in
# all with the working tree (14 MB), the wheels 30 MB of it (20 without espeakng-loader, which only the speech data needs), so the runs of more
# than 10 MB, finished or cut off (the 12-block ViTs: 22 MB of weights, 66 MB with a checkpoint; the
# language models: 13 MB) stay out of the pack, named in the log: finish their notebooks (the ACM
# ones, hyla_lm) in the call that trains them (calls on a machine still warm find results/gpu as the
# last one left it). (On 2026-11-27 acm_vit was cut off with its ViTs' checkpoints in the cache, and
# the pack came to 21 parts, of which the run tool brought back 4: nothing could be unpacked.)
# Before the steps, tools/ledger-rows.py puts the committed gpu ledger's rows back into results/gpu/claims/ for
# the notebooks this call does not run, so that the ledger it gathers holds every lease's rows.
# The notebooks' packages (papermill, nbval, datasets, ...) come from wheels in .whl/ when there is one.
set -u
out=$1 budget=$2
shift 2
begin=$(date +%s)
left() { echo $((budget - 30 - $(date +%s) + begin)); }
logs=$(mktemp -d)
mkdir -p "$out"
site=${GPU_SLICE_SITE:-/tmp/site}  # where the wheels go; on a warm machine's next call they are there already
if [ -d .whl ] && [ "$(ls .whl | md5sum)" != "$(cat "$site/.wheels" 2>/dev/null)" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$site" .whl/*.whl || exit 1
  mkdir -p "$site" && ls .whl | md5sum > "$site/.wheels"
fi
export PYTHONPATH="$PWD/lib:$site" PYTHONUNBUFFERED=1 TQDM_DISABLE=1 HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; python3 -c "import torch; print('torch', torch.__version__)"; } | tee "$logs/device.log"
python3 tools/ledger-rows.py gpu  # the committed ledger's rows of the notebooks not run here, so that this call's ledger keeps them
xdist=$(python3 -c "import xdist" 2>/dev/null && echo "-n 8 --dist")  # + loadfile: one notebook per worker; load: tests spread
for step in "$@"; do
  [ "$(left)" -gt 30 ] || { echo "no time left for $step"; break; }
  echo "== $step: $(left) s left"
  case $step in
    tests) timeout "$(left)" python3 -m pytest -q ${xdist:+$xdist load} tests/test_gpu.py 2>&1 | tee "$logs/tests.log" | tail -n 5 ;;
    test-gpu) timeout "$(left)" make test-gpu PY=python3 INSTALL= PYTEST_ARGS="${xdist:+$xdist loadfile}" 2>&1 | tee "$logs/test-gpu.log" | tail -n 5 ;;
    bench|bench:*) names=${step#bench}; names=${names#:}; names=${names//,/ }
           timeout "$(left)" python3 -m ponder.bench ${names:-streams train seeds kernels acm} > "$logs/bench.log" 2>&1
           cp results/bench/streams.json results/bench/kernels.json results/bench/acm.json results/bench/train.json results/bench/seeds.json "$logs/" 2>/dev/null ;;
    probes) { timeout "$(left)" python3 tools/together-probe.py hyper_act --log-every 1
              timeout "$(left)" python3 tools/together-probe.py hyper_act --gradients "$(seq -s, 1 29)"
              timeout "$(left)" python3 tools/together-probe.py hyper_act --updates "$(seq -s, 12 20)"; } 2>&1 | tee "$logs/probes.log" | grep '^{' ;;
    lengths) timeout "$(left)" python3 tools/length-probe.py fuzzy gpu --steps 2000,8000 --jobs 6 2>&1 | tee "$logs/lengths.log" | grep -v '^{' ;;
    sraven-batch) for probe in "hyla 80000 128 600" "softmax 80000 128 600" "hyla 40000 256 300"; do
             timeout "$(left)" python3 tools/sraven-probe.py $probe >> "$logs/sraven-batch.log" 2>&1 &
           done; wait; grep '^{' "$logs/sraven-batch.log" ;;
    captures) { timeout "$(left)" python3 -m pytest -q tests/test_gpu.py -k "phase_three_trains_alike or compiled_variant or compiled_language_model"
                timeout "$(left)" python3 tools/capture-probe.py "ACM phase III,A-ViT,text"; } 2>&1 | tee "$logs/captures.log" | grep '^{\|passed\|failed' ;;
    scenes) timeout "$(left)" python3 tools/scene-probe.py gpu noise=0.15 texture=0.7 jitter=0.5,texture=0.6,noise=0.1 --jobs 3 2>&1 | tee "$logs/scenes.log" | grep '^{' ;;
    *) timeout "$(left)" python3 -m ponder.notebooks run ${step//,/ } --profile gpu 2>&1 | tee -a "$logs/figures.log" ;;
  esac
done
tar czf "$out/logs.tgz" -C "$logs" .
tar czf "$out/figures-gpu.tgz" figures/gpu $( [ -d results/gpu/claims ] && echo results/gpu/claims )
if [ -d results/gpu ]; then
  skip=() packed=0
  asked() { [ -z "${PACK:-}" ] && return 0; for prefix in $PACK; do [[ $1 == results/gpu/$prefix/* ]] && return 0; done; return 1; }
  # the runs cut off first (a checkpoint, no metrics: what a later slice resumes), then the finished ones
  for run in $(find results/gpu \( -name metrics.json -o -name checkpoint.safetensors \) -printf '%h\n' | sort -u |
               while read -r run; do [ -e "$run/metrics.json" ]; echo "$? $run"; done | sort -s -r -k1,1 | cut -d' ' -f2); do
    mb=$(du -sm "$run" | cut -f1)
    if ! asked "$run"; then why="not in PACK"
    elif [ "$mb" -gt 10 ]; then why="a run over 10 MB"
    elif [ $((packed + mb)) -gt "${PACK_MB:-45}" ]; then why="over the pack's ${PACK_MB:-45} MB"
    else packed=$((packed + mb)); continue; fi
    skip+=("--exclude=$run"); echo "not packed, $why: $run"
  done
  tar czf - "${skip[@]}" results/gpu | split -b 15M -a 2 - "$out/runs-gpu.tgz.part-"
fi
ls -l "$out"
echo "slice done after $(($(date +%s) - begin)) s"
