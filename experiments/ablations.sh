#!/usr/bin/env bash
# Issue 22's ablations of the reward-only recipe: one lever at a time against
# configs/ppo.yaml, each variant with several seeds, every run in parallel (one core each).
#
#   experiments/ablations.sh [VARIANT ...]        # default: every variant below
#
# Environment: CONFIG (default configs/ppo.yaml), BASE (--set overrides of every run), SEEDS (default "0 1"), STEPS (env-steps per run, default 10000000; the
# recipe's learning-rate schedule still spans 40 M, so a run is the recipe's first STEPS),
# JOBS (runs at once, default: the number of cores), PREFIX (of the run names, default abl), LIMIT (wall time per session, e.g. 9m:
# each run then stops with an exact checkpoint), RUNS (parent folder, default runs/ablations).
# Run it again to continue: an unfinished run resumes bit for bit from its newest checkpoint,
# a finished one is left as it is. Then the tables, by variant, against the recipe's seeds:
#
#   python experiments/learning_curves.py --runs runs/ablations/abl-* --csv data/learning/ablations.csv
#   python experiments/learning_curves.py --csv data/learning/learning_curves.csv data/learning/ablations.csv \
#       --marks 1,2,5,10
#
# Issue 34's one-lever table (each aid alone added to the strict track, against its seeds):
#
#   CONFIG=configs/ppo-strict.yaml PREFIX=lever SEEDS=0 RUNS=runs/levers \
#       experiments/ablations.sh features shaping canonical-holds
#
# Issue 52's levers against the strict λ 0.9 seed that stalls (BASE: --set overrides every
# run gets before its variant's, here the 120 M schedule with λ 0.9):
#
#   CONFIG=configs/ppo-strict.yaml BASE="ppo.gae_lambda=0.9 ppo.learning_rate.steps=120000000" \
#       PREFIX=stall SEEDS=1 RUNS=runs/stall experiments/ablations.sh ent-0.06 vf-clip wide-512
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A VARIANTS=(  # name -> --set overrides of configs/ppo.yaml
  [lambda-0.9]="ppo.gae_lambda=0.9"
  [lambda-0.98]="ppo.gae_lambda=0.98"
  [wide-512]="policy.net_arch=[512,512]"
  [deep-3x256]="policy.net_arch=[256,256,256]"
  [reward-0.03]="env.reward_scale=0.03"
  [reward-0.003]="env.reward_scale=0.003"
  [holds-32]="env.canonical_holds=false"
  [batch-8192]="ppo.batch_size=8192"
  # issue 34's one-lever table, each aid alone added to CONFIG=configs/ppo-strict.yaml
  [features]="env.observation_version=2"
  [shaping]="env.shaping=upper-bonus"
  [canonical-holds]="env.canonical_holds=true"
  # issue 52's levers against a stalled strict seed (with BASE, see above)
  [ent-0.06]="ppo.ent_coef=0.06"
  [vf-clip]="ppo.clip_range_vf=0.2"
)
CONFIG=${CONFIG:-configs/ppo.yaml}
SEEDS=${SEEDS:-"0 1"}
STEPS=${STEPS:-10000000}
JOBS=${JOBS:-$(nproc)}
RUNS=${RUNS:-runs/ablations}
PREFIX=${PREFIX:-abl}
BASE=${BASE:-}
LIMIT=${LIMIT:-}
YAHTZEE=${YAHTZEE:-yahtzee}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

names=("$@")
[ ${#names[@]} -eq 0 ] && names=("${!VARIANTS[@]}")
mkdir -p "$RUNS/logs"
jobs_file=$(mktemp)
trap 'rm -f "$jobs_file"' EXIT
for name in "${names[@]}"; do
  sets=${VARIANTS[$name]:-}
  if [ -z "$sets" ]; then
    echo "ablations.sh: unknown variant '$name' (known: ${!VARIANTS[*]})" >&2
    exit 2
  fi
  for seed in $SEEDS; do
    run="$PREFIX-$name-s$seed"
    args=(train)
    if [ -f "$RUNS/$run/config.yaml" ]; then
      args+=(--resume "$RUNS/$run")
    else
      args+=("$CONFIG" --runs-dir "$RUNS" --set "name=$run" --set "train.seed=$seed"
             --set "train.total_timesteps=$STEPS" --set level=null)
      for s in $BASE $sets; do args+=(--set "$s"); done
    fi
    args+=(--no-progress)
    [ -n "$LIMIT" ] && args+=(--time-limit "$LIMIT")
    printf '%q ' "$YAHTZEE" "${args[@]}" >> "$jobs_file"
    printf '>> %q 2>&1\n' "$RUNS/logs/$run.log" >> "$jobs_file"
  done
done
echo "ablations.sh: $(wc -l < "$jobs_file") runs, $JOBS at once, logs in $RUNS/logs/"
# a run stopped by LIMIT exits 75 (checkpoint written): not a failure of this script
xargs -P "$JOBS" -I{} -d '\n' bash -c '{}; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 75 ]' < "$jobs_file"
