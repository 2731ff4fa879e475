"""The runner: a run as data (its config and key), the cache, the plan, training and the schedule."""
