#!/usr/bin/env bash
# The duelist level head to head (issue 34, item 3): the benchmark's multi-player protocol
# (yahtzee-versus-v1) at 20,000 deals x 2 seat rotations = 40,000 games per opponent, seats
# alternated, win rate (draws 1/2) +- 95% CI over deals. One process per opponent (the two
# run side by side, at nice 5); writes data/duel/versus-2p-duelist-{optimal,hard}.json.
set -euo pipefail
cd "$(dirname "$0")/.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
yahtzee="${YAHTZEE:-.venv/bin/yahtzee}"
for opponent in optimal hard; do
  nice -n 5 "$yahtzee" benchmark duelist --players 2 --vs "$opponent" --deals 20000 \
    --no-progress --json "data/duel/versus-2p-duelist-$opponent.json" &
done
wait
