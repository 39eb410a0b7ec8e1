"""Training and evaluation agents for yahtzee-rl (the optional `train` extra: torch, SB3)."""
