"""What the Hyper-UT figures and ledger rows read off trained runs."""
