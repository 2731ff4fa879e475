"""What the ACM figures and ledger rows read off trained runs."""
