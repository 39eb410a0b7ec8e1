#!/usr/bin/env bash
# The duelist level head to head (issue 34, item 3): the benchmark's multi-player protocol
# (yahtzee-versus-v1) at 20,000 deals x 2 seat rotations = 40,000 games per opponent, seats
# alternated, win rate (draws 1/2) +- 95% CI over deals. One process; ~20 min on a loaded
# 2-core machine. Writes docs/duel/versus-2p-duelist.json.
set -euo pipefail
cd "$(dirname "$0")/.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
yahtzee="${YAHTZEE:-.venv/bin/yahtzee}"
nice -n 5 "$yahtzee" benchmark duelist --players 2 --vs optimal,hard --deals 20000 \
  --no-progress --json docs/duel/versus-2p-duelist.json
