"""How big the sequence-to-sequence runs of hut-7 are at each profile
(:mod:`ponder.studies.hyper_ut.scratchpad`)."""

# cpu: the Hyper-UT design (C-PVR with a decoy chain, length 12, train on hops 1-3, test on 1-5: the most a decoy
# leaves room for), 5 seeds (as every judged comparison at cpu; quick: one). Depth 4 and 2,000 steps: the answer-only
# model must fit its training hops before its extrapolation means anything (hut-2: from 3 hops on a Transformer
# needs 4 layers); on seed 0 it fits hops 1-3 at 1.00 (depth 3 and 500 steps left it at 0.57). Each run takes about
# 2 minutes on one CPU core. ``clip``: distances 0 and 1 (the token itself and the one before) get their own bias,
# every longer one shares one.
SIZES = {
    "smoke": dict(
        length=8,
        train_hops=(1, 2),
        test_hops=(1, 2, 3),
        seeds=(0,),
        positions="relative",
        clip=2,
        dim=16,
        heads=2,
        depth=2,
        steps=30,
        batch_size=32,
        lr=3e-3,
        n_test=32,
    ),
    "cpu": dict(
        length=12,
        train_hops=(1, 2, 3),
        test_hops=(1, 2, 3, 4, 5),
        seeds=(0, 1, 2, 3, 4),
        positions="relative",
        clip=2,
        dim=32,
        heads=4,
        depth=4,
        steps=2_000,
        batch_size=128,
        lr=3e-3,
        n_test=200,
    ),
    # gpu: the Hyper-UT runs' length 16 and hops 1-4 (a decoy leaves room for 7), one seed as at quick
    "gpu": dict(
        length=16,
        train_hops=(1, 2, 3, 4),
        test_hops=(1, 2, 3, 4, 5, 6, 7),
        seeds=(0,),
        positions="relative",
        clip=2,
        dim=128,
        heads=4,
        depth=6,
        steps=6_000,
        batch_size=128,
        lr=1e-3,
        n_test=1_000,
    ),
    "paper": dict(
        length=16,
        train_hops=(1, 2, 3, 4),
        test_hops=(1, 2, 3, 4, 5, 6, 7),
        seeds=(0, 1, 2),
        positions="relative",
        clip=2,
        dim=128,
        heads=4,
        depth=6,
        steps=30_000,
        batch_size=128,
        lr=1e-3,
        n_test=2_000,
    ),
}
SIZES["quick"] = dict(SIZES["cpu"], seeds=(0,))
