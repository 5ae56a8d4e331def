#!/usr/bin/env bash
# make bench-rl: the paper's Table 2 / Figure 4 matrix on Swimmer, Hopper and
# HalfCheetah (v1 names, v5 envs): STP fixed, STP_IS fixed, STP adaptive,
# STP_IS adaptive and ARS V2-t (published hyperparameters), 5 seeds each, the
# paper's thresholds and K; then STP_IS adaptive with the tuned preset
# (":tuned"; on Swimmer and HalfCheetah it averages K = 1 episode per point
# on common seeds, and its runs go to stp_is-adaptive-k1/). Resumable:
# finished runs (result.json) are skipped, interrupted ones continue from
# their checkpoint.
#
#   TASKS="Swimmer-v1" SEEDS=3 make bench-rl     # a smaller matrix
#
# Writes results/runs/..., results/table.md and results/<task>.png.
set -euo pipefail
cd "$(dirname "$0")/.."
TASKS=${TASKS:-"Swimmer-v1 Hopper-v1 HalfCheetah-v1"}
SEEDS=${SEEDS:-5}
OUT=${OUT:-results}
WORKERS=${WORKERS:-$(nproc)}
METHODS=${METHODS:-"stp:fixed stp_is:fixed stp:adaptive stp_is:adaptive ars: stp_is:adaptive:tuned"}
runs="$OUT/runs"
mkdir -p "$runs"

# One local bridge for the whole matrix.
source bench/lib.sh
start_bridge matrix "$WORKERS"
addr=$BRIDGE_ADDR

for task in $TASKS; do
  for m in $METHODS; do
    IFS=: read -r method step variant <<<"$m"
    sub=$method${step:+-$step}
    k=paper
    [ "$variant" = tuned ] && k=auto
    for seed in $(seq 1 "$SEEDS"); do
      # At the paper's K the run is <sub>/seedN; a tuned K other than the
      # paper's writes to <sub>-k<K>/, which the trainer picks (and leaves
      # alone when that run has finished).
      dir="$runs/$task/$sub/seed$seed"
      if [ "$k" = paper ] && [ -f "$dir/result.json" ]; then echo "done: $dir"; continue; fi
      echo "run:  $task $m seed $seed"
      args=(--env "$task" --method "$method" --seed "$seed" --bridge "$addr" --out "$runs" --log-level warn --resume ${RL_ARGS:-})
      [ "$method" != ars ] && args+=(--k "$k")
      [ -n "$step" ] && args+=(--step "$step")
      bin/trainer "${args[@]}" >/dev/null
    done
  done
  bin/trainer plot "$runs/$task" -o "$OUT/${task%-v1}.png" >/dev/null
done
bin/trainer table "$runs" --paper | tee "$OUT/table.md"
