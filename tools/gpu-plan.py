"""What a profile trains, per notebook: runs, optimisation steps, and GPU-minutes at measured rates.

    python tools/gpu-plan.py [PROFILE [BENCH_JSON [STREAMS_JSON]]]
        (default: gpu, figures/gpu/bench-train.json, figures/gpu/bench-streams.json or else results/bench/streams.json)

Every job of every notebook is called with training replaced by a recorder (the run's name and
config, an untrained model back), so the plan is the runs ``make figures`` would train, each
counted once, in the notebook that first needs it. Minutes use the steps per second summed over
the processes sharing one GPU that ``python -m ponder.bench train`` measured (captured where the
runs capture their step, of seeds trained together where they train so: :data:`MODES`); a family
the benchmark file lacks borrows another's rate, and says so. A notebook whose runs wait on each
other (an ACM notebook's base ViT, then its phases) cannot use that sum: its line also gives the
least wall time of its longest chain of runs at one process's rates, and the total sums, per
notebook, the larger of the two. Each notebook's line gives the megabytes of its runs' final weights
in the run cache (a run cut off holds a checkpoint of about three times that: weights and AdamW's
two moments), and what it reads of the runs that notebooks before it trained: what a lease's
``carry`` and the pack it brings back must hold where the two run in different leases (both under
64 MiB: figures/gpu/RUN.md). Before the runs, ``make figures``
draws the C-PVR training streams on every core of the host (:mod:`ponder.tasks.streams`): their
steps, and their CPU-minutes at the draw time ``python -m ponder.bench streams`` measured.
"""
import json
import sys
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import ponder  # noqa: F401  (pins the numerics before torch)
import torch
from ponder import ensemble, parallel
from ponder.tasks import streams
from ponder.bench.train import base_family
from ponder.experiments import acm, hyper_ut, hyper_ut_scratchpad, hyper_ut_vision, notebook_jobs, survey, training

ROOT = Path(__file__).resolve().parents[1]
# run-name prefix -> (benchmark family prefix, whether those runs capture their step); longest prefix wins
FAMILY = {
    "hyla/sraven": ("sraven", True),
    "hyla/fuzzy": ("fuzzy", True),
    "hyla/text": ("text", False),
    "hut/vision": ("digits U-ViT", False),
    "hut/scratchpad": ("C-PVR", False),  # a 6-layer sequence-to-sequence model: no family of its own
    "hut/cpvr/hyper": ("C-PVR hyper", True),  # Hyper-UT, with ACT and without: the hypernetwork's step
    "hut": ("C-PVR ut", True),  # the other kinds (the Transformer, UT, with ACT, FiLM): a step no dearer than UT+ACT's
    "survey/cpvr": ("C-PVR", False),
    "survey/parity": ("parity", False),
    "acm": ("ViT", False),  # the base models and MoEfication; the speech model too: no family of its own
    "acm/phase": ("ACM phase III", False),  # phases I and II (ACM layers, the base model as teacher) counted as III
    "acm/speech/phase": ("ACM phase III", False),
    "acm/avit": ("A-ViT", False),
}
BORROWED = {"fuzzy": "sraven", "text": "sraven", "digits U-ViT": "ViT", "ACM phase III": "ViT", "A-ViT": "ViT",
            "C-PVR ut": "C-PVR", "C-PVR hyper": "C-PVR"}  # until a benchmark measures them
# how a run trains: "eager", "captured" (its step a CUDA graph), "together" (captured, its seeds in one
# step: ponder.ensemble), "compiled" (captured, its loss compiled: ponder.compilation) or "compiled eager"
# (its loss compiled, the step not captured)
MODES = ("eager", "captured", "together", "compiled", "compiled eager")
# an ACM phase-III run's ``step`` (ponder.experiments.acm.FINETUNE_STEPS) -> its mode
ACM_STEP_MODES = {"captured": "captured", "compiled": "compiled eager", "compiled and captured": "compiled"}
COMPILED_GAIN = 1.1  # the sraven runs train compiled where the compiled row is at least this much faster (RUN.md)
# the families whose runs train eagerly, and the ways of training faster that they may take on a GPU (-> the change):
# adopted at the sraven rule's gain, the fastest against the eager rate side by side. Each way is a knob of the gpu
# row that no quick or cpu run's key holds (ACM's finetune_step; Text's compiled, in a run's config only where
# true). The language models validate inside their loss, at steps the host reads: they cannot be captured
# (RUN.md, session 40)
EAGER_WAYS = {
    "ACM phase III": {way: f'finetune_step="{way}" in the gpu row of lib/ponder/sizes/acm.py' for way in ("captured", "compiled", "compiled and captured")},
    "text": {"compiled": "compiled=True in the gpu row of TEXT in lib/ponder/sizes/hyla.py"},
}


# the rate keys of bench-train.json: (eager, captured, seeds together), summed over processes sharing the GPU or alone
RATE_KEYS = {True: ("shared_steps_per_s", "captured_shared_steps_per_s", "captured_together_shared_steps_per_s"),
             False: ("steps_per_s", "captured_steps_per_s", "captured_together_steps_per_s")}


def rates(bench: Path, shared: bool = True) -> dict[tuple[str, str], float]:
    """``{(family prefix, mode): run-steps/s}``, the slowest of the families that share a prefix, summed
    over the processes sharing the GPU (``shared``) or of one process alone; a mode the benchmark did
    not measured falls back to the captured rate (captured to the eager one). The compiled rates are
    those of the benchmark's ``"compiled ..."`` rows (captured, or eager for ``"compiled eager"``; where
    none, the family's own); its other variants (``"bf16 ..."``) are no run's."""
    eager_key, captured_key, together_key = RATE_KEYS[shared]
    found = defaultdict(list)
    for row in json.loads(bench.read_text())["families"]:
        family = base_family(row["family"])
        variant = row["family"].removesuffix(family).strip()  # "" for the family's own row
        if "error" in row or variant not in ("", "compiled"):
            continue
        eager = row[eager_key]
        captured = row.get(captured_key, eager)
        for prefix in {prefix for prefix, _ in FAMILY.values() if family.startswith(prefix)}:
            if variant:
                found[prefix, "compiled"].append(captured)
                found[prefix, "compiled eager"].append(eager)
                continue
            found[prefix, "eager"].append(eager)
            found[prefix, "captured"].append(captured)
            found[prefix, "together"].append(row.get(together_key, captured))
    measured = {key: min(values) for key, values in found.items()}
    fallback = {"compiled": "captured", "compiled eager": "eager"}  # where the benchmark has no compiled row
    return measured | {(prefix, mode): rate for mode, base in fallback.items() for (prefix, how), rate in measured.items() if how == base and (prefix, mode) not in measured}


# RUN.md's rules for the runs' modes: (family prefix, mode, the change where its rate is below the eager
# rate of as many processes sharing the GPU, or where the benchmark's ``what_error`` says it failed)
BELOW_EAGER = (
    ("C-PVR", "captured", "capture=False in hyper_ut.train_cpvr for runs not trained together (none while seeds_together is on)"),
    ("C-PVR", "together", "seeds_together=False in the gpu row of lib/ponder/sizes/hyper_ut.py"),
    ("digits U-ViT", "captured", "capture=False in hyper_ut_vision.train_vision"),
)
RATE = {"captured": "captured_shared_steps_per_s", "together": "captured_together_shared_steps_per_s"}
# the modes that are one setting for every kind of their family (``seeds_together`` in a profile's
# row): each kind's rate is reported, and the kinds' summed time decides (:func:`all_kinds`)
SHARED_SETTING = ("together",)


def decisions(rows: list[dict]) -> list[str]:
    """What figures/gpu/RUN.md's rules make of the benchmark's ``rows`` (its ``"families"``), a line
    per rule and row: :data:`BELOW_EAGER`; the sraven runs train compiled where the ``compiled`` row's
    captured rate is :data:`COMPILED_GAIN` times the plain row's, and with the small products as sums
    where that row is as fast as the ``compiled-cublas`` one (:func:`small_products`); the families
    that train eagerly (:func:`eager_step`); the ``bf16`` rows are reported only."""
    by_name = {row["family"]: row for row in rows}
    lines = []
    for name, row in by_name.items():
        for prefix, how, change in BELOW_EAGER:
            if not name.startswith(prefix):
                continue
            rate, eager = row.get(RATE[how]), row.get("shared_steps_per_s")
            if f"{how}_error" in row:
                lines.append(f"{name}, {how}: failed ({row[f'{how}_error'][:80]}): {change}")
            elif rate is None or eager is None:
                lines.append(f"{name}, {how}: not measured: no change until the benchmark measures it")
            else:
                below = "below eager: see all kinds" if how in SHARED_SETTING else change
                lines.append(f"{name}, {how}: {rate:.0f} against eager {eager:.0f} ({rate / eager:.2f}x): {'keep' if rate >= eager else below}")
        base = base_family(name)
        family = next((prefix for prefix in EAGER_WAYS if base.startswith(prefix)), None)
        if family:
            lines += eager_step(name, row, by_name.get(base, {}), EAGER_WAYS[family])
            continue
        if base != name:
            rate, plain = row.get("captured_shared_steps_per_s"), by_name.get(base, {}).get("captured_shared_steps_per_s")
            if rate is None or plain is None:
                lines.append(f"{name}: not measured ({row.get('error', 'no captured rate')}): no change")
                continue
            verdict = f"{rate:.0f} against {plain:.0f} captured ({rate / plain:.2f}x)"
            if name.startswith("compiled sraven"):
                lines.append(f"{name}: {verdict}: " + ("compiled=True in the gpu row of lib/ponder/sizes/hyla.py" if rate / plain >= COMPILED_GAIN else f"no change (below {COMPILED_GAIN}x)"))
            elif name.startswith("compiled-cublas"):
                lines.append(small_products(name, rate, by_name.get(f"compiled {base}", {}).get("captured_shared_steps_per_s")))
            else:
                lines.append(f"{name}: {verdict}: reported only")
    return lines + [all_kinds(rows, prefix, how, change) for prefix, how, change in BELOW_EAGER if how in SHARED_SETTING]


def eager_step(name: str, row: dict, plain: dict, offered: dict[str, str]) -> list[str]:
    """The rule on a family that trains eagerly (:data:`EAGER_WAYS`), for its row or its compiled variant's:
    the fastest of the ways ``offered`` that the row measured (captured, where ``tools/capture-probe.py``
    captured the step; compiled; compiled and captured), adopted where it is :data:`COMPILED_GAIN` times
    the eager rate side by side; no line for a row that measures no way offered."""
    eager = plain.get("shared_steps_per_s")
    ways = {"captured": row.get("captured_shared_steps_per_s")} if name == base_family(name) else {
        "compiled": row.get("shared_steps_per_s"), "compiled and captured": row.get("captured_shared_steps_per_s")}
    ways = {way: rate for way, rate in ways.items() if way in offered}
    if not ways:
        return []
    measured = {way: rate for way, rate in ways.items() if rate}
    if eager is None or not measured:
        why = "no eager rate side by side" if eager is None else row.get("error") or row.get("captured_error") or f"no {' or '.join(ways)} rate"
        return [f"{name}: not measured ({why[:80]}): no change"]
    way, rate = max(measured.items(), key=lambda item: item[1])
    verdict = f"{name}, {way}: {rate:.0f} against eager {eager:.0f} ({rate / eager:.2f}x)"
    return [f"{verdict}: " + (offered[way] if rate / eager >= COMPILED_GAIN else f"no change (below {COMPILED_GAIN}x)")]


def small_products(name: str, cublas: float, sums: float | None) -> str:
    """The rule on :data:`ponder.compilation.SUM_SMALL_PRODUCTS`: the runs compile with the small
    batched products as sums where that step is at least as fast as the one that leaves them to cuBLAS."""
    if sums is None:
        return f"{name}: {cublas:.0f} captured; the compiled row not measured: no change"
    verdict = f"{name}: the compiled row (small products as sums) {sums:.0f} against {cublas:.0f} ({sums / cublas:.2f}x)"
    return f"{verdict}: " + ("keep SUM_SMALL_PRODUCTS" if sums >= cublas else "SUM_SMALL_PRODUCTS = False in lib/ponder/compilation.py")


def all_kinds(rows: list[dict], prefix: str, how: str, change: str) -> str:
    """The verdict on a mode that is one setting for every kind of the family ``prefix``: a run-step
    of each kind measured, in turn, takes less time that way than eagerly (as many runs of each
    kind); a kind where it failed makes the change."""
    mine = [row for row in rows if row["family"].startswith(prefix) and base_family(row["family"]) == row["family"]]
    if any(f"{how}_error" in row for row in mine):
        return f"{prefix}, {how}, all kinds: failed for one: {change}"
    measured = [row for row in mine if row.get(RATE[how]) and row.get("shared_steps_per_s")]
    if not measured:
        return f"{prefix}, {how}, all kinds: not measured: no change until the benchmark measures it"
    ms = lambda key: 1e3 * sum(1 / row[key] for row in measured)  # noqa: E731
    mode_ms, eager_ms = ms(RATE[how]), ms("shared_steps_per_s")
    return (f"{prefix}, {how}, all kinds: a run-step of each of the {len(measured)} kinds takes {mode_ms:.2f} ms against eager "
            f"{eager_ms:.2f} ({mode_ms / eager_ms:.2f}x): {'keep' if mode_ms <= eager_ms else change}")


def family(run_name: str) -> tuple[str, bool]:
    """``(benchmark family prefix, whether the run captures its step)`` of a run."""
    return FAMILY[max((p for p in FAMILY if run_name.startswith(p)), key=len)]


def mode(run) -> str:
    """How ``run`` trains (:data:`MODES`)."""
    if run.config.get("seeds_together"):
        return "together"
    if run.config.get("compiled"):  # a sraven or fuzzy-logic run captures its compiled step; a language model cannot
        return "compiled" if family(run.name)[1] else "compiled eager"
    if run.config.get("step"):
        return ACM_STEP_MODES[run.config["step"]]
    return "captured" if family(run.name)[1] else "eager"


def plan(profile: str, chains: dict | None = None, reads: dict | None = None) -> dict[str, dict[str, list]]:
    """``{notebook: {run group: [runs, steps, mode, MB, largest MB]}}`` of what ``profile`` trains, MB
    the runs' final weights (:func:`megabytes`), in all and of the largest run. A ``chains`` dict gets ``{notebook: (upstream, jobs)}``: for
    each job, the runs it trains one after the other, ``[(run name, steps, mode)]``, those of the
    jobs that run before the notebook's (an ACM notebook's base model and phases) apart. A ``reads``
    dict gets ``{notebook: {earlier notebook: [runs, MB]}}``: the finished runs of notebooks before
    it that it needs."""
    trained_by, table = {}, defaultdict(lambda: defaultdict(lambda: [0, 0, "", 0.0, 0.0]))
    needs = defaultdict(lambda: defaultdict(lambda: [0, 0.0]))
    for notebook, todo in notebook_jobs(profile).items():
        read = set()  # the runs of earlier notebooks this one has counted

        def record(run, make, *args, **kwargs):
            torch.manual_seed(0)
            model = make()
            mb = megabytes(model)
            if run.key not in trained_by:
                trained_by[run.key] = notebook
                row = table[notebook][group_name(run.name)]
                row[0] += 1
                row[1] += run.config["train"]["steps"]
                row[2] = mode(run)
                row[3] += mb
                row[4] = max(row[4], mb)
                chain.append((run.name, run.config["train"]["steps"], mode(run)))
            elif trained_by[run.key] != notebook and run.key not in read:
                read.add(run.key)
                need = needs[notebook][trained_by[run.key]]
                need[0] += 1
                need[1] += mb
            return model, {}

        def record_group(members, make, *args, **kwargs):
            return [record(m.run, make) for m in members]

        upstream = acm.upstream(profile, notebook) if notebook.startswith("acm_") else []
        found = ([], [])  # the chains of the upstream jobs, of the notebook's jobs
        with recording(record, record_group):
            for jobs, chains_of_part in zip((upstream, list(todo)), found):
                for job in jobs:
                    chain = []  # what record() appends to while this job runs
                    job()
                    chains_of_part.append(chain)
        if chains is not None:
            chains[notebook] = found
    if reads is not None:
        reads.update({notebook: dict(earlier) for notebook, earlier in needs.items()})
    return table


def run_cache(rows: dict[str, list], reads: dict[str, list]) -> str:
    """A notebook's line on the run cache: the final weights of the runs it trains (``rows``, of
    :func:`plan`), its largest run, and what it reads of earlier notebooks' runs (``reads``)."""
    trained = sum(row[3] for row in rows.values())
    largest = max((row[4] for row in rows.values()), default=0.0)
    line = f"run cache: {trained:.1f} MB of weights" + (f" (largest run {largest:.1f} MB, cut off about {3 * largest:.0f})" if rows else "")
    if reads:
        line += "; reads " + ", ".join(f"{mb:.1f} MB of {notebook}'s runs ({runs})" for notebook, (runs, mb) in reads.items())
    return line


def megabytes(model: torch.nn.Module) -> float:
    """MiB of ``model``'s state as the run cache stores its final weights (``model.safetensors``)."""
    return sum(tensor.numel() * tensor.element_size() for tensor in model.state_dict().values()) / 2**20


def group_name(run_name: str) -> str:
    """The plan's line for a run: its name without the kind (``hut/cpvr/ut_act`` -> ``hut/cpvr``), ACM's whole,
    and kinds whose runs count at a family of their own apart (``hut/cpvr/hyper_act`` -> ``hut/cpvr/hyper``)."""
    if run_name.startswith("acm"):
        return run_name
    group, prefix = run_name.rsplit("/", 1)[0], max((p for p in FAMILY if run_name.startswith(p)), key=len)
    return prefix if len(prefix) > len(group) else group


def chain_minutes(chain: list[tuple[str, int, str]], alone: dict) -> float:
    """Minutes of the GPU that a job's runs take one after the other, each at one process's rate."""
    return sum(steps / rate_of(alone, family(name)[0], how) / 60 for name, steps, how in chain)


def rate_of(measured: dict, fam: str, how: str) -> float:
    """The rate of ``(fam, how)``, or of the family it borrows from (:data:`BORROWED`)."""
    return measured.get((fam, how)) or measured[BORROWED[fam], how]


def longest_path(upstream: list, jobs: list, alone: dict) -> float:
    """The longest the notebook's runs take whatever the processes that share the GPU: its longest
    upstream job, then its longest job."""
    return max((chain_minutes(c, alone) for c in upstream), default=0.0) + max((chain_minutes(c, alone) for c in jobs), default=0.0)


@contextmanager
def recording(record, record_group):
    """Every trainer the experiments call replaced by ``record`` (``record_group`` for the groups of
    seeds trained together), restored on leaving."""
    trainers = [(m, "train_run", record) for m in (acm, hyper_ut, hyper_ut_vision, hyper_ut_scratchpad, survey)]
    trainers += [(parallel, "train_one_thread", record), (ensemble, "train_runs", record_group)]
    saved = [getattr(m, name) for m, name, _ in trainers]
    for m, name, replacement in trainers:
        setattr(m, name, replacement)
    try:
        yield
    finally:
        for (m, name, _), original in zip(trainers, saved):
            setattr(m, name, original)


def stream_steps(profile: str) -> tuple[int, int]:
    """``(chunks, steps)`` of the training streams ``make figures`` draws for ``profile`` before its runs."""
    chunks = {parallel.key(job): job for upstream, _ in training(profile)[1] for job in upstream if streams.is_chunk(job)}
    return len(chunks), sum(job.args[4] for job in chunks.values())  # draw(sampler, knobs, seed, version, chunk, index)


def print_streams(profile: str, measured: Path) -> None:
    chunks, steps = stream_steps(profile)
    line = f"training streams: {chunks} chunks, {steps:,d} batches to draw on the host's cores"
    if measured.exists():
        result = json.loads(measured.read_text())
        ms = result["median_ms"]["draw a gpu-size batch" if profile == "gpu" else "draw a batch"]
        line += f", {steps * ms / 6e4:.1f} CPU-min at {ms:.1f} ms a batch ({measured}): {steps * ms / 6e4 / 16:.1f} min on 16 cores"
    print(line)


def main(profile: str = "gpu", bench: str = str(ROOT / "figures" / "gpu" / "bench-train.json"), streams_bench: str = "") -> None:
    measured, alone = rates(Path(bench)), rates(Path(bench), shared=False)
    print(f"{profile}: the runs of every notebook, at the rates of {bench} ({json.loads(Path(bench).read_text())['device']})")
    total, wall, borrowed, chains, reads = 0.0, 0.0, set(), {}, {}
    table = plan(profile, chains, reads)
    for notebook in dict.fromkeys([*table, *reads]):
        rows, minutes = table.get(notebook, {}), 0.0
        for name, (runs, steps, how, *_) in sorted(rows.items()):
            fam = family(name)[0]
            if (fam, how) not in measured:
                borrowed.add(fam)
            rate = rate_of(measured, fam, how)
            minutes += steps / rate / 60
            print(f"  {name:24s} {runs:3d} runs {steps:9,d} steps {how:8s} at {rate:5.0f}/s {steps / rate / 60:5.1f} min{'' if (fam, how) in measured else f' ({fam}: rate of {BORROWED[fam]})'}")
        path = longest_path(*chains[notebook], alone)
        total, wall = total + minutes, wall + max(minutes, path)
        print(f"{notebook:26s} {minutes:5.1f} GPU-min" + (f"; at least {path:.1f} min of wall: its runs that wait on each other, at one process's rates" if path > minutes else ""))
        print(f"{'':26s} {run_cache(rows, reads.get(notebook, {}))}")
    print(f"total {total:.1f} GPU-min, at least {wall:.1f} min of wall" + (f"; not measured, borrowed: {', '.join(sorted(borrowed))}" if borrowed else ""))
    lease = ROOT / "figures" / "gpu" / "bench-streams.json"
    print_streams(profile, Path(streams_bench) if streams_bench else lease if lease.exists() else ROOT / "results" / "bench" / "streams.json")
    print("what the rules of figures/gpu/RUN.md make of these rates:")
    for line in decisions(json.loads(Path(bench).read_text())["families"]):
        print(f"  {line}")


if __name__ == "__main__":
    main(*sys.argv[1:])
