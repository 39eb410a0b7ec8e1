#!/usr/bin/env bash
# Grade the win level (issue 52, item 2; docs/win-level.md): the model of a configs/win.yaml
# run exported to numpy (data/win/model/, small enough to commit, so `yahtzee verify` can
# replay the rows), then the benchmark's multi-player protocol (yahtzee-versus-v1) against
# optimal and against hard: DEALS deals x 2 seat rotations (40,000 games per opponent at
# the default 20,000), seats alternated, the win rate with draws as 1/2 and over decisive
# games, 95% CIs over deals (paired by deal; the decisive rate by the delta method, and
# binomially). The standard protocol (the duelist's and hard's rows are on it) and, beside
# it, the same games on duplicate dice (both seats of a game roll the same dice for the same
# turn and roll: the luck of the dice cancels within each game). Then where it leaves the
# solitaire optimum because of the other card (experiments/win_decisions.py).
#
#   experiments/win_level.sh [RUN_DIR] [MODEL]      (defaults: runs/win best)
#   DEALS=500 OUT=/tmp/win experiments/win_level.sh runs/win final     (a quick look)
set -euo pipefail
cd "$(dirname "$0")/.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
yahtzee="${YAHTZEE:-.venv/bin/yahtzee}"
python="${PYTHON:-.venv/bin/python}"
run="${1:-runs/win}"
which="${2:-best}"
deals="${DEALS:-20000}"
out="${OUT:-data/win}"  # the data shelf (data/README.md)
mkdir -p "$out/model"
"$yahtzee" export "$run" --format npz --model "$which" --name win --out "$out/model"
model="$out/model/win.json"
for opponent in optimal hard; do
  "$yahtzee" benchmark "$model" --players 2 --vs "$opponent" --deals "$deals" \
    --no-progress --json "$out/versus-2p-win-$opponent.json"
  "$yahtzee" benchmark "$model" --players 2 --vs "$opponent" --deals "$deals" --duplicate \
    --no-progress --json "$out/versus-2p-win-$opponent-duplicate.json"
done
"$python" experiments/win_decisions.py "$model" --games "${DECISION_GAMES:-2000}" \
  --out "$out/decisions.json"
for row in "$out"/versus-2p-win-*.json; do
  "$yahtzee" verify --digests "$row" "$model"
done
