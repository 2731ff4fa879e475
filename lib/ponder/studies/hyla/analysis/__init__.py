"""What the HYLA figures and ledger rows read off trained runs."""
