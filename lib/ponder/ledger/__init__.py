"""The ledger: the verdict rule, the rows each target records, convergence and tuning checks."""
