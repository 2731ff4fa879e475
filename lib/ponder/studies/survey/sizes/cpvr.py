"""What the survey's C-PVR notebooks add to :data:`ponder.studies.hyper_ut.sizes.cpvr.SIZES` at each profile
(:mod:`ponder.studies.survey.cpvr`)."""

import math

# What the survey adds to hyper_ut.SIZES, per profile. PonderNet-UT's ``lambda_p`` (the geometric
# prior's halting probability) and ``beta`` (the KL's weight), with its halting unit held at its deep
# start for the first ``act_hold`` of training as ACT's is (``TrainConfig.hold``). Design runs on the
# decoy task (quick, seed 0, hops 1-3 / 1-5): not held, it halts after ~3.7 steps at every hop count
# before the block has learned, and never fits (0.78 / 0.73 / 0.62 at hops 1-3 with lambda_p 0.3,
# 0.83 / 0.76 / 0.64 with 0.1); held, with beta 0.01 it fits and never halts early (8 steps at every
# hop count), with beta 0.03 it fits and its steps grow from 3.8 at 1 hop to 6.5 at 5, with beta 0.1
# from 3.5 to 5.8 (0.99 / 0.87 at hops 4 / 5).
SURVEY = {
    "smoke": dict(
        thresholds=(0.5, 0.9, math.inf),
        capacities=(0.25, 1.0),
        table_capacity=0.25,
        table_threshold=0.9,
        lambda_p=0.3,
        beta=0.1,
        timing_rounds=1,
    ),
    "cpu": dict(
        thresholds=(0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, math.inf),
        capacities=(0.125, 0.25, 0.5, 1.0),
        table_capacity=0.5,
        table_threshold=0.9,
        lambda_p=0.3,
        beta=0.1,
        timing_rounds=3,
    ),
    "gpu": dict(
        thresholds=(0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, math.inf),
        capacities=(0.125, 0.25, 0.5, 1.0),
        table_capacity=0.5,
        table_threshold=0.9,
        lambda_p=0.2,
        beta=0.1,
        timing_rounds=5,
    ),
    "paper": dict(
        thresholds=(0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, math.inf),
        capacities=(0.125, 0.25, 0.5, 1.0),
        table_capacity=0.5,
        table_threshold=0.9,
        lambda_p=0.2,
        beta=0.1,
        timing_rounds=10,
    ),
}
# quick: cpu's row with survey-3's curve at the one capacity survey-4 times, beside the Transformer (each of 0.125,
# 0.25 and 1.0 costs about 1.1-2.1 CPU-minutes; the dense MoD, c = 1, is cpu's), and survey-4's times over one round
# of its alternation, not three (survey_table took 21 s instead of 51 in a cold quick run; the timing notebooks run
# alone)
SURVEY["quick"] = dict(SURVEY["cpu"], capacities=(0.5,), timing_rounds=1)
