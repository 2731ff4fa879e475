"""What the survey's figures and ledger rows read off trained runs."""
