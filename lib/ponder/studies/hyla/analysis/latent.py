"""Latent-code analyses of the HYLA paper (Fig. 2B/D, Fig. 5A/B/E/F) with scikit-learn.

The latent code of a query–key pair is the H-vector of its attention scores after σ
(:func:`ponder.models.attention.recording`). Which pairs, as in the official callbacks:

* **sraven** — on *unpermuted* instances (feature slot = rule slot), the query is the last
  token (the answer placeholder of the last feature) and the keys are the same feature of the
  panels (row 3, column 1) and (row 3, column 2): the code is the concatenation of the two
  H-vectors. Labels: the rule of that feature, the target value, the prediction.
* **fuzzy logic** — the query token attending to itself (H values per layer), on sequences
  with a fixed context and a varying query; labels: which terms the task uses.

Decoders are class-balanced logistic regressions trained on codes of in-distribution tasks, scored on
held-out compositions (the paper's protocol, per layer and term); the layer a claim reads is chosen on the
training tasks alone (fitted on half of their combinations, scored on the other half). For the fuzzy-logic
terms also the official code's decoder: a ridge regression from every layer's code at once to all the terms,
read as the official code reads it (its held-out R²) and, for an F1 per term, thresholded at each term's
share among the training tasks (a term present in 17 % of them is predicted present where the regression
says more than 0.17, not more than 1/2). t-SNE uses scikit-learn's defaults with a fixed ``random_state``.

The ledger rows these state: hyla-2's term decoding (:func:`term_decoding_claims`) and hyla-5's rule decoding
(:func:`rule_decoding_claims`).
"""

import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.manifold import TSNE
from sklearn.metrics import f1_score, r2_score
from sklearn.preprocessing import StandardScaler

from ....ledger.verdicts import Claim, above, greater
from ....models.attention import recording
from ....tasks import fuzzy, sraven
from .. import experiments as hyla


@torch.no_grad()
def layer_codes(model, x: torch.Tensor, pairs: list[tuple[int, int]], chunk: int = 512) -> np.ndarray:
    """``[layers, n, len(pairs) · H]``: every layer's latent codes of the ``(query, key)`` pairs."""
    device = next(model.parameters()).device
    out = []
    with recording(model) as layers:
        for i in range(0, len(x), chunk):
            model(x[i : i + chunk].to(device))
            out.append(torch.stack([torch.cat([m.latent[:, :, q, k] for q, k in pairs], -1) for m in layers]).cpu())
    return torch.cat(out, 1).numpy()


def sraven_codes(model, k: int, f: int, combos, n: int, seed: int) -> dict[str, np.ndarray]:
    """Codes and labels of ``n`` unpermuted instances drawn from ``combos``."""
    drawn = sraven.sample(n, combos, f, seed=seed, permute=False)
    x, target = sraven.tokens(drawn["grid"], f)
    query = 9 * k - 1
    codes = layer_codes(model, x, [(query, 6 * k + k - 1), (query, 7 * k + k - 1)])
    with torch.no_grad():
        prediction = sraven.answer_logits(model(x.to(next(model.parameters()).device)).cpu(), k).argmax(-1)[:, -1]
    return {
        "codes": codes,
        "rule": drawn["rules"][:, -1],
        "target": target[:, -1].numpy(),
        "prediction": prediction.numpy(),
    }


def fuzzy_codes(model, s, combos, n: int, seed: int, context: int) -> dict[str, np.ndarray]:
    """Codes of the query attending to itself, the context inputs drawn from the seed ``context`` and
    shared by every sequence; ``terms`` ``[n, 2^L]`` 0/1."""
    drawn = fuzzy.sample(n, combos, s.n_vars, s.length, seed=seed, fixed_context=context)
    seq, target = fuzzy.tokens(drawn["x"], drawn["y"])
    codes = layer_codes(model, seq, [(s.length - 1, s.length - 1)])
    used = np.zeros((n, 2**s.n_vars), dtype=np.int64)
    np.put_along_axis(used, np.asarray(combos)[drawn["combo"]], 1, axis=1)
    return {"codes": codes, "terms": used, "target": target.numpy(), "combo": drawn["combo"]}


def decode(
    train_codes: np.ndarray,
    train_labels: np.ndarray,
    test_codes: np.ndarray,
    test_labels: np.ndarray,
    metric: str = "accuracy",
) -> float:
    """Fit a standardised logistic regression on ``train`` and score it on ``test``
    (``accuracy`` or binary ``f1``)."""
    if len(np.unique(train_labels)) < 2:
        return float("nan")
    scaler = StandardScaler().fit(train_codes)
    clf = LogisticRegression(max_iter=500, class_weight="balanced").fit(scaler.transform(train_codes), train_labels)
    guess = clf.predict(scaler.transform(test_codes))
    return (
        float((guess == test_labels).mean())
        if metric == "accuracy"
        else float(f1_score(test_labels, guess, zero_division=0))
    )


def rule_decoding(train: dict, test: dict) -> list[float]:
    """Per layer: accuracy of decoding the rule from the code, trained on ``train`` codes
    (in-distribution combinations), scored on ``test`` (held-out combinations)."""
    return [decode(a, train["rule"], b, test["rule"]) for a, b in zip(train["codes"], test["codes"])]


def term_decoding(train: dict, test: dict, terms: list[int]) -> np.ndarray:
    """``[layers, len(terms)]``: the F1 of a logistic decoder per layer and term (is term ``t`` in the task?),
    fitted on ``train`` codes and scored on ``test`` (the paper's protocol, Fig. 2B)."""
    return np.array(
        [
            [decode(a, train["terms"][:, t], b, test["terms"][:, t], metric="f1") for t in terms]
            for a, b in zip(train["codes"], test["codes"])
        ]
    )


def ridge_term_decoding(train: dict, test: dict, terms: list[int]) -> dict[str, np.ndarray]:
    """The official decoder: one ridge regression from the concatenation of every layer's code (standardised) to
    the 0/1 ``terms``, fitted on ``train`` and scored on ``test``: ``r2`` ``[len(terms)]`` its held-out R² per term
    (the official code's measure), ``f1`` ``[len(terms)]`` the F1 of its predictions thresholded at each term's
    share among the training codes."""
    flat = lambda codes: np.concatenate(list(codes), axis=-1)  # noqa: E731  [layers, n, H] -> [n, layers · H]
    scaler = StandardScaler().fit(flat(train["codes"]))
    ridge = Ridge().fit(scaler.transform(flat(train["codes"])), train["terms"][:, terms])
    truth = test["terms"][:, terms]
    predicted = ridge.predict(scaler.transform(flat(test["codes"]))).reshape(truth.shape)
    guess = predicted > train["terms"][:, terms].mean(0)
    return {
        "r2": r2_score(truth, predicted, multioutput="raw_values"),
        "f1": np.array([f1_score(truth[:, i], guess[:, i], zero_division=0) for i in range(len(terms))]),
    }


def training_split(codes: dict) -> tuple[dict, dict]:
    """``codes`` of training tasks split by their task: those of the even-numbered term combinations and those
    of the odd-numbered ones (for choosing a decoder's layer without the held-out tasks)."""
    even = codes["combo"] % 2 == 0
    return tuple({"codes": codes["codes"][:, part], "terms": codes["terms"][part]} for part in (even, ~even))


def chosen_layer(train: dict, terms: list[int]) -> int:
    """The layer whose logistic decoders (:func:`term_decoding`) have the highest mean F1 over ``terms``, fitted
    on one half of the training tasks' codes and scored on the other (:func:`training_split`)."""
    fit, score = training_split(train)
    return int(np.nanargmax(np.nanmean(term_decoding(fit, score, terms), 1)))


def fuzzy_term_decoding(model, s, seed: int, n: int) -> dict:
    """hyla-2 (B) for one fuzzy-logic model on ``seed``'s split of term combinations, decoders fitted on the codes
    of ``n`` training-task sequences and scored on ``n`` held-out-task ones, both with one fixed context, so that a
    code differs only by the task and the query: ``logistic`` ``[layers, terms]`` (:func:`term_decoding`), the
    ``layer`` chosen on the training tasks (:func:`chosen_layer`), ``ridge`` (:func:`ridge_term_decoding`'s
    ``r2`` and ``f1``), the ``terms`` decoded (those of the training tasks), the F1 of always answering "present"
    (``present``, the baseline) and the held-out codes (``test``)."""
    split = fuzzy.split(s.n_vars, s.n_terms, s.frac_test, seed=seed)
    known = sorted({t for combo in split["train"] for t in combo})
    train = fuzzy_codes(model, s, split["train"], n, seed=seed + 1, context=seed + 2)
    test = fuzzy_codes(model, s, split["test"], n, seed=seed + 2, context=seed + 2)
    present = s.n_terms / len(known)  # the share of (task, known term) pairs where the term is present
    return {
        "logistic": term_decoding(train, test, known),
        "layer": chosen_layer(train, known),
        "ridge": ridge_term_decoding(train, test, known),
        "terms": known,
        "present": 2 * present / (1 + present),
        "test": test,
    }


def hyla_term_decoding(profile: str, seed: int, n: int) -> pd.DataFrame:
    """hyla-2 (B) on every seed of :func:`hyla.seeds_of`, each seed's HYLA model on its own split
    (:func:`fuzzy_term_decoding`): one row per seed and decoded term (``term``, its truth table as bits) with the
    F1 of the logistic decoder of the layer chosen on the seed's training tasks (``logistic, chosen layer``), the
    F1 of the ridge decoder on every layer (``ridge, all layers``), its held-out R² (``ridge R²``) and the F1 of
    always answering "present"."""
    s = hyla.fuzzy_setup(profile, kind="hyla")
    rows = []
    for run_seed in hyla.seeds_of(profile, seed):
        found = fuzzy_term_decoding(hyla.train_fuzzy(s, profile, run_seed)[0], s, run_seed, n)
        chosen, ridge = found["logistic"][found["layer"]], found["ridge"]
        names = ["".join(map(str, fuzzy.terms(s.n_vars)[t])) for t in found["terms"]]
        rows += [
            {"seed": run_seed, "term": name, "logistic, chosen layer": a, "ridge, all layers": b, "ridge R²": r2}
            | {"always present": found["present"]}
            for name, a, b, r2 in zip(names, chosen, ridge["f1"], ridge["r2"], strict=True)
        ]
    return pd.DataFrame(rows)


def sraven_rule_decoding(profile: str, seed: int, n: int) -> tuple[dict[str, dict], pd.DataFrame]:
    """hyla-5 (F) for each main kind's base sraven run: its codes (:func:`sraven_codes`) of ``n`` instances of the
    training rule combinations (seed + 1) and of the held-out ones (seed + 2), and :func:`rule_decoding`'s accuracy
    per layer. Returns the held-out codes per kind and a frame of ``kind``, ``layer`` (from 1) and the accuracy."""
    base = hyla.sraven_setup(profile)
    train_combos, held_combos = sraven.split(base.k, base.holdout, seed)
    codes, rows = {}, []
    for kind in hyla.MAIN_KINDS:
        model, _ = hyla.train_sraven(hyla.sraven_setup(profile, kind=kind), profile, seed)
        train = sraven_codes(model, base.k, base.f, train_combos, n, seed=seed + 1)
        codes[kind] = sraven_codes(model, base.k, base.f, held_combos, n, seed=seed + 2)
        rows += [
            {"kind": kind, "layer": layer + 1, "rule decoding accuracy (OOD)": acc}
            for layer, acc in enumerate(rule_decoding(train, codes[kind]))
        ]
    return codes, pd.DataFrame(rows)


# hyla-2's term decoders: a column of :func:`hyla_term_decoding` and how its row names it
TERM_DECODERS = {
    "logistic, chosen layer": "the paper's logistic decoder per term, its layer chosen on the training tasks",
    "ridge, all layers": "the official ridge decoder on every layer, thresholded at the training base rate",
}


def term_decoding_claims(decoded: pd.DataFrame) -> list[Claim]:
    """hyla-2's decoding rows from :func:`hyla_term_decoding`'s rows (per seed and term: the F1 of each of
    :data:`TERM_DECODERS` and of ``always present``, and the ridge decoder's R²): per decoder, HYLA's latent code
    predicts the task's terms on held-out tasks, its mean F1 over the terms above always answering "present", per
    seed; and the official reading, the ridge decoder's mean held-out R² over the terms above 0 (better than
    predicting each term's training share), per seed."""
    per_seed = decoded.groupby("seed")[[*TERM_DECODERS, "always present", "ridge R²"]].mean()
    r2 = Claim(
        "hyla-2",
        "fuzzy logic: HYLA's latent code predicts the task's terms on held-out tasks (the official ridge decoder on "
        "every layer: its mean held-out R² over the terms above 0)",
        ours=f"R² {per_seed['ridge R²'].mean():+.3f}",
        verdict=above(per_seed["ridge R²"], 0),
    )
    return [
        Claim(
            "hyla-2",
            "fuzzy logic: HYLA's latent code predicts the task's terms on held-out tasks (mean F1 over the terms "
            f"above always-present; {how})",
            ours=f"F1 {per_seed[decoder].mean():.3f} vs {per_seed['always present'].mean():.3f}",
            verdict=above(per_seed[decoder] - per_seed["always present"], 0),
        )
        for decoder, how in TERM_DECODERS.items()
    ] + [r2]


def rule_decoding_claims(decoding: pd.DataFrame, majority: float, k: int) -> list[Claim]:
    """hyla-5's decoding rows from the rule-decoding accuracy on held-out combinations of sraven at ``K = k`` (a row
    per kind and layer: ``kind``, ``layer``, ``rule decoding accuracy (OOD)``) and the share of the majority rule
    (``majority``): the rule can be decoded from HYLA's last-layer code above the majority rule, and better from
    its last layer than from its first."""
    by_layer = decoding[decoding.kind == "hyla"].set_index("layer")["rule decoding accuracy (OOD)"]
    first, last = by_layer.iloc[0], by_layer.iloc[-1]
    return [
        Claim(
            "hyla-5",
            f"sraven K={k}: the rule can be decoded from HYLA's last-layer code on unseen compositions (above the "
            "majority rule)",
            ours=f"{last:.3f} vs {majority:.3f}",
            verdict=greater([last], [majority]),
        ),
        Claim(
            "hyla-5",
            "sraven: rule decoding is better in the last layer than in the first (HYLA)",
            ours=f"{first:.3f} -> {last:.3f}",
            verdict=greater([last], [first]),
        ),
    ]


def tsne(codes: np.ndarray, seed: int = 0) -> np.ndarray:
    """``[n, 2]`` t-SNE embedding of ``[n, d]`` codes."""
    perplexity = min(30.0, max(2.0, (len(codes) - 1) / 3))
    return TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(codes)


def rule_similarity(codes: np.ndarray, rule: np.ndarray, n_rules: int = len(sraven.RULES)) -> np.ndarray:
    """``[R, R]`` cosine similarity of the per-rule mean codes (NaN for a rule never seen)."""
    means = np.stack(
        [codes[rule == r].mean(0) if (rule == r).any() else np.full(codes.shape[1], np.nan) for r in range(n_rules)]
    )
    unit = means / np.linalg.norm(means, axis=1, keepdims=True)
    return unit @ unit.T
