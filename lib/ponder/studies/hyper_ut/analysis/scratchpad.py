"""Hyper-UT scratch-pad analysis (hut-7): the seq2seq runs' frame (:mod:`ponder.studies.hyper_ut.scratchpad`)
turned into the claims: accuracy in and out of the training hops per seed, scratch-pad against answer-only under
each decoding rule, read only where both models fit their training hops.

Nothing here trains, so nothing here is part of a run's cache key (:func:`ponder.runner.runs.import_closure`): an edit
retrains no run."""

import pandas as pd

from ....ledger import convergence, verdicts
from ....ledger.verdicts import Claim
from ..scratchpad import DECODING_LABELS, DECODINGS, LABELS

EOS, TASK = (DECODING_LABELS[d] for d in DECODINGS)
PAD, ANSWER = LABELS["scratchpad"], LABELS["answer"]


def split_accuracy(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The mean accuracy per ``[target, decoding, seed]`` in and out of distribution (hop counts weighted equally),
    from :func:`~ponder.studies.hyper_ut.scratchpad.scratchpad`'s rows of ``seed, target, decoding, hops,
    accuracy, split``."""
    by_seed = frame.groupby(["split", "target", "decoding", "seed"])["accuracy"].mean()
    return by_seed["in distribution"], by_seed["out of distribution"]


def unfit_runs(iid: pd.Series) -> dict[str, str]:
    """``{"model, seed s": why}`` for the runs (both targets, stop at EOS) below
    :data:`~ponder.ledger.convergence.FIT` on their training hops (``iid``: :func:`split_accuracy`'s first): what
    falls off beyond the training hops must first fit them."""
    accuracies = {f"{name}, seed {s}": a for name in (ANSWER, PAD) for s, a in iid[name, EOS].items()}
    return convergence.unfit(accuracies, what="accuracy on the training hops")


def scratchpad_claims(frame: pd.DataFrame) -> list[Claim]:
    """hut-7's rows from :func:`~ponder.studies.hyper_ut.scratchpad.scratchpad`'s frame (one row per seed,
    target, decoding and test hop count: ``accuracy``, ``split``), on :func:`split_accuracy`'s per-seed means,
    paired by seed: the scratch-pad's out-of-distribution accuracy is above answer-only's, stopped at EOS and by
    the task's rule, and the scratch-pad loses less from in- to out-of-distribution (stop at EOS); each inconclusive
    where a run does not fit its training hops (:func:`unfit_runs`). Two rows describe: in-distribution accuracy,
    and the scratch-pad's out-of-distribution accuracy under either stop."""
    iid, ood = split_accuracy(frame)
    unfit = unfit_runs(iid)
    drop = {name: iid[name, EOS] - ood[name, EOS] for name in (ANSWER, PAD)}
    improves = {  # the decoding's stop -> the claim
        EOS: "the scratch-pad improves generalization: OOD accuracy, scratch-pad vs answer-only (seq2seq from "
        "scratch, stand-in for pre-trained T5)",
        TASK: "the scratch-pad improves generalization, decoding stopped by the task's rule (the walk ends at a value "
        "that is not a forward pointer): OOD accuracy, scratch-pad vs answer-only",
    }
    return [
        *(
            Claim(
                "hut-7",
                text,
                ours=f"{ood[PAD, stop].mean():.2f} vs {ood[ANSWER, stop].mean():.2f}",
                verdict=verdicts.unconverged(verdicts.greater(ood[PAD, stop], ood[ANSWER, stop]), unfit),
            )
            for stop, text in improves.items()
        ),
        Claim(
            "hut-7",
            "the scratch-pad loses less accuracy beyond the training hops: in- minus out-of-distribution accuracy, "
            "answer-only vs scratch-pad (stop at EOS)",
            ours=f"{drop[ANSWER].mean():.2f} vs {drop[PAD].mean():.2f}",
            verdict=verdicts.unconverged(verdicts.greater(drop[ANSWER], drop[PAD]), unfit),
        ),
        Claim(
            "hut-7",
            "in-distribution accuracy, scratch-pad vs answer-only",
            ours=f"{iid[PAD, EOS].mean():.2f} vs {iid[ANSWER, EOS].mean():.2f}",
            verdict=None,
        ),
        Claim(
            "hut-7",
            "scratch-pad OOD accuracy, stopped at EOS vs by the task's rule (does EOS extrapolate?)",
            ours=f"{ood[PAD, EOS].mean():.2f} vs {ood[PAD, TASK].mean():.2f}",
            verdict=None,
        ),
    ]
