"""How big the ACM runs are at each profile (:mod:`ponder.studies.acm`): the base models, the three
phases and the baselines, and which points of the full grids (:data:`ponder.studies.acm.phases.GRIDS`) a
profile trains."""

# Training sizes per profile (digits: the ViT; speech overrides a few entries in SPEECH_SIZES). Phase III and
# every baseline get the same total, distill + gate + finetune steps. ``finetune_lr`` and ``loss_scale`` (a
# factor on the paper's auxiliary weights 0.1 / 0.05 / 0.05) are per profile: the paper's lr 1e-4 and weights
# assume ~97 ImageNet epochs; in a few hundred to a thousand steps they do not reach the budget (README, ACM).
# The gpu row's lr and scale sit between quick's and the paper's and are not measured yet.
# ``expert_units``: MoEfication's expert width (the official 24 units at ViT-B's scale). ``seeds``: the seeds of the
# judged comparisons (acm-1, -3, -4, -5, -7, -8), each its own base model: five at cpu, which judges them (a seed
# of acm_vit is 11 runs of about 1350 steps, ~15 CPU-minutes; of acm_speech 6, ~8; of acm-8 five 450-step runs, ~2);
# one at quick, whose rows are therefore inconclusive by the rule.
# ``base_lr``: the base model's peak learning rate. Measured at quick on the digits (seeds 0 / 1 / 2, 2000 steps):
# lr 3e-3 leaves the ViT at chance for up to 1100 steps and ends at test accuracy 0.735 / 0.414 / 0.643; lr 1e-3
# ends at 0.767 / 0.693 / 0.726, the spread between seeds that acm-3's comparisons inherit cut by about 4.
# The speech base model keeps 3e-3.
# ``lr_grid``: the learning rates every method that trains from the base model tries, on seed 0 and in-distribution
# validation (ponder.studies.acm.tuning): the official fine-tuning rate of MoEfication and A-ViT, 5e-4, and
# phase III's 2e-3. One rate (quick): every method trains at it. None at smoke (each method keeps its own rate)
# and at gpu, where a run costs GPU-minutes.
# ``base_steps``: long enough for the base model to finish learning, since every method fine-tunes it
# (ponder.ledger.convergence checks each seed in acm-3 and acm-4). Seed 0 on the digits: 2,000 steps end at test
# accuracy 0.775 with the training loss still falling 27 % over the last quarter; 8,000 steps end at 0.979, the
# loss below 0.05 (fitted), but seeds 1 and 2 end at losses 0.118 and 0.186, still falling 48 % and 40 %; 16,000
# steps fit seed 2 (test 0.985, loss 0.034). The speech model: 800 steps end at 0.757, falling 25 %; 2,400 at
# 0.817, falling 4 %.
# ``phase1_plateau_steps``: acm-5's phase I, run until its distillation loss flattens (the phase I that phase III
# starts from keeps ``distill_steps``). Seed 0, random learners: the loss fell 11 % over the last quarter of
# 1,000 steps, 9 % of 3,000 and 8 % of 6,000 (a power law's fall, which longer training barely shrinks), and the
# share of tokens that need 2-3 learners rose from 54 % to 66 % and 73 %; 6,000 steps take ~10 CPU-minutes.
# ``warm_start_count``: whether acm-5 counts the learners needed after a phase I from our warm start as well, beside
# the paper's random learners (described on the first seed).
# ``pretraining_variants``: whether acm-10 trains the pre-training variants (without phase I, without either) beside
# the model with both phases.
# ``scene``: how the digits are drawn (a name of ``ponder.tasks.images.SCENES`` or an ``images.Scene``), in the
# digits base model's config, so a row that changes it trains its own runs and no other profile's. Textured at
# every profile; at gpu the 12-block ViT reaches 0.986 on it (H200, figures/gpu/) and its exits reach that at a
# fifth of the depth, so a harder scene may suit that row.
SIZES = {
    "smoke": dict(
        scene="textured",
        warm_start_count=True,
        pretraining_variants=True,
        seeds=1,
        dim=16,
        depth=2,
        heads=2,
        batch=16,
        base_steps=20,
        distill_steps=4,
        phase1_plateau_steps=8,
        gate_steps=4,
        finetune_steps=8,
        ablation_steps=4,
        base_lr=3e-3,
        eval_images=64,
        finetune_lr=2e-3,
        loss_scale=10.0,
        expert_units=16,
    ),
    "cpu": dict(
        scene="textured",
        warm_start_count=True,
        pretraining_variants=True,
        seeds=5,
        dim=32,
        depth=4,
        heads=4,
        batch=32,
        base_steps=16_000,
        distill_steps=100,
        phase1_plateau_steps=6_000,
        gate_steps=50,
        finetune_steps=1200,
        ablation_steps=300,
        base_lr=1e-3,
        eval_images=None,
        finetune_lr=2e-3,
        lr_grid=(5e-4, 2e-3),
        loss_scale=10.0,
        expert_units=16,
        # a budget below the paper's grid, where compute binds: on the fitted base ACM keeps 0.963 from beta = 0.25
        # up and A-ViT 0.977-0.982 at every target, while ZTW's early exits fall below about half the MACs
        budgets=(0.1, 0.25, 0.4, 0.6, 0.75),
    ),
    # gpu: a ViT-Ti-sized base (width 192, 12 blocks) and phase III long enough to converge, on quick's
    # thinner grids (below): at 57 ViT steps/s summed over the processes sharing an H200, every 2,100-step
    # phase-III or baseline run costs about 0.6 GPU-minutes, and cpu's full grids would add 9 runs. One
    # seed, as at quick (3 would triple its ~10 GPU-minutes): its judged rows are inconclusive; cpu judges them.
    # ``base_lr`` 1e-3 (digits and speech), not the 3e-3 of ViT-B's recipe, which was set for batches of
    # 4,096: at quick, 1e-3 ended the digits ViT higher on every seed (above), and a 12-block model is the
    # more fragile one. A ViT-Ti step costs ~20 s on one CPU core, so this could not be checked here; the
    # base accuracy of a gpu run says whether it trained.
    "gpu": dict(
        scene="textured",
        warm_start_count=True,
        pretraining_variants=True,
        seeds=1,
        dim=192,
        depth=12,
        heads=3,
        batch=256,
        base_steps=4_000,
        distill_steps=400,
        phase1_plateau_steps=6_000,
        gate_steps=200,
        finetune_steps=1_500,
        ablation_steps=500,
        base_lr=1e-3,
        eval_images=None,
        finetune_lr=5e-4,
        loss_scale=3.0,
        expert_units=24,
        budgets=(0.25, 0.4, 0.6),
        avit_targets=(4, 8),
    ),
    "paper": dict(
        scene="textured",
        warm_start_count=True,
        pretraining_variants=True,
        seeds=3,
        dim=192,
        depth=12,
        heads=3,
        batch=256,
        base_steps=20_000,
        distill_steps=400,
        phase1_plateau_steps=6_000,
        gate_steps=200,
        finetune_steps=19_400,
        ablation_steps=1000,
        base_lr=3e-3,
        eval_images=None,
        finetune_lr=1e-4,
        loss_scale=1.0,
        expert_units=24,
    ),
}
# quick: a look at every ACM figure, judging nothing (one seed), within quick's budget. Its digits base model trains
# 2,000 steps (cpu's 16,000 cost about 26 CPU-minutes alone): unconverged, which the convergence check names in
# acm-3's and acm-4's evidence. Every method trains at one rate, 5e-4 (the rate cpu's grid chose for four of the
# five digits methods), so none is tuned and none is set apart, and fine-tunes 400 steps after phases I-II (cpu:
# 1,200), the same for every method: in a cold quick run on a 2-core Intel Xeon the ACM runs took 30 of its 76
# CPU-minutes at 1,200, about 17 of them fine-tuning. acm-5's phase I runs 500 steps.
# Thinner grids: three budgets on the digits (acm-1's 0.4 and acm-6's 0.6 among them; acm-10's robustness uses
# the largest), two on the speech (acm-7's 0.25), A-ViT at 4 of 12 blocks, acm-10's robustness on 2 of the 16
# renderings of each test digit (718 images). What only adds a variant is cpu's alone: acm-5's count from the warm
# start (``warm_start_count``), and acm-10's learner counts other than 4 and its pre-training variants (about 2.5
# CPU-minutes; at quick's 2,000-step base, without phase I and without either stayed at chance, 0.109 and 0.100).
# Its speech base model is cpu's.
SIZES["quick"] = dict(
    SIZES["cpu"],
    seeds=1,
    base_steps=2_000,
    phase1_plateau_steps=500,
    finetune_steps=400,
    lr_grid=(5e-4,),
    budgets=(0.25, 0.4, 0.6),
    avit_targets=(4,),
    learner_counts=(4,),
    robustness_copies=2,
    warm_start_count=False,
    pretraining_variants=False,
)
SPEECH_SIZES = {
    "smoke": dict(base_steps=20),
    "quick": dict(base_steps=2_400, base_lr=3e-3, budgets=(0.25, 0.6)),
    "cpu": dict(base_steps=2_400, base_lr=3e-3, budgets=(0.1, 0.25, 0.4, 0.6, 0.75)),
    "gpu": dict(base_steps=3_000, budgets=(0.25, 0.6)),
    "paper": dict(base_steps=20_000),
}
