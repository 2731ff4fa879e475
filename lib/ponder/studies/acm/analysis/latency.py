"""acm-9's rows: the ACM layer's latency against the dense MLP it replaces, measured by
:func:`ponder.bench.acm.measure_processes`, judged against the paper's "negligible overhead": grouped execution at
most linear in the learners run (plus :data:`OVERHEAD_BOUND` of the MLP's time), and 1 of 4 learners within
:func:`quarter_bound` of the MLP's time.

Nothing here trains, so nothing here is part of a run's cache key."""

from ....ledger.verdicts import Claim, below, every

# acm-9's executions judged, as its rows name them
TIMED = {
    "grouped": "grouped ACM",
    "fused": "fused ACM (Triton)",
    "replayed": "fused ACM (Triton), it and the MLP replayed from CUDA graphs,",
}
OVERHEAD_BOUND = 0.15  # above the linear ideal an execution may take at most this of the MLP's time


IDEAL_QUARTER = 0.25  # 1 of 4 learners run: a quarter of the MLP's products
GPU_FACTOR = 1.3  # a GPU's grouped kernel (Triton) within 1.3 times that ideal, the paper's "negligible overhead"


def quarter_bound(result: dict) -> float:
    """acm-9's bound at 1 of 4 learners, as a multiple of the MLP's time, where ``result`` was measured. On a GPU,
    :data:`GPU_FACTOR` times the ideal quarter: 0.325. On the CPU, the ideal quarter plus the overhead the linearity
    row allows (:data:`OVERHEAD_BOUND`): 0.4, so that both rows hold a CPU to the one allowance; a CPU runs each
    learner's product as its own call, paying a fixed cost (gather, dispatch) that the GPU's fused kernel does not."""
    factor = IDEAL_QUARTER + OVERHEAD_BOUND if result["device"] == "cpu" else IDEAL_QUARTER * GPU_FACTOR
    return round(factor, 3)


def _execution_claims(result: dict, name: str, where: str) -> list[Claim]:
    """acm-9's two rows of execution ``name`` in one ``result`` of :func:`ponder.bench.acm.measure_processes`
    (measured ``where``)."""
    what, cases = TIMED[name], result["cases"]
    linear = [c["mean_learners"] / result["learners"] for c in cases]  # each case's ideal, of the MLP's time
    overhead = max(c[name + "_ratio"] - ideal for c, ideal in zip(cases, linear))
    bound = quarter_bound(result)
    return [
        Claim(
            "acm-9",
            f"{what} time scales linearly with the learners run: overhead above linear <= {OVERHEAD_BOUND} of the MLP "
            f"({where})",
            f"max overhead {overhead:+.2f}",
            every([below([r - ideal for r in c[name + "_ratios"]], OVERHEAD_BOUND) for c, ideal in zip(cases, linear)]),
            paper="negligible overhead (A100, Triton)",
        ),
        Claim(
            "acm-9",
            f"{what} at 1 of 4 learners takes <= {bound}x the dense MLP's time ({where})",
            f"{cases[0][name + '_ratio']:.2f}x",
            below(cases[0][name + "_ratios"], bound),
        ),
    ]


def latency_claims(results: list[dict]) -> list[Claim]:
    """acm-9's rows from :func:`ponder.bench.acm.measure_processes`' ``results``: one per device, dtype,
    thread count
    and mix of learner counts, with ``learners`` and ``cases`` (the fewest learners first), each case with its
    ``mean_learners`` and per execution the ratio to the dense MLP's time (``<name>_ratio``, the median) and one per
    process (``<name>_ratios``). Per result, for each execution of :data:`TIMED` it timed: the time above linear in
    the learners run is at most :data:`OVERHEAD_BOUND` of the MLP's in every case, and the first
    case (1 of 4 learners) takes at most :func:`quarter_bound` of the MLP's time."""
    rows = []
    for result in results:
        where = f"{result['device']}, {result['dtype']}, {result['threads']} thread(s), {result['mix']} k per token"
        for name in TIMED:
            if name + "_ratios" in result["cases"][0]:
                rows += _execution_claims(result, name, where)
    return rows
