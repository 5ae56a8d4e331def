#!/usr/bin/env bash
# make bench-rl: the comparison of issue 21. For each task, at equal
# training-episode budgets (Swimmer-v1 1000, Hopper-v1 4000, HalfCheetah-v1
# 3000) and one evaluation spacing (10 episodes after each iteration that
# crosses a multiple of 40 training episodes; Walker2d-v1 4000 and Ant-v1
# 3000 with TASKS=...), for each seed:
#   default  the trainer's default method
#   paper    STP_IS adaptive under --preset paper (the paper's method)
#   ars      ARS with its best published variant: V1-t (raw observations)
#            on Swimmer, V2-t elsewhere
# Runs go on after the threshold, so that the final evaluation is at the
# budget. Resumable: finished runs are left as they are, interrupted ones
# continue from their checkpoint.
#
#   make bench-rl                                     # seeds 1-10 (the reported ones)
#   SEEDS="$(seq 101 110)" OUT=results/dev make bench-rl   # development seeds
#   TASKS=Swimmer-v1 METHODS="default ars" make bench-rl
#   JOBS=4 make bench-rl     # four runs at a time on the one bridge (fills the workers between batches)
#
# Writes $OUT/runs/..., $OUT/summary.md, $OUT/table.md and $OUT/<task>.png.
set -euo pipefail
cd "$(dirname "$0")/.."
TASKS=${TASKS:-"Swimmer-v1 Hopper-v1 HalfCheetah-v1"}
SEEDS=${SEEDS:-$(seq 1 10)}
OUT=${OUT:-results/rl}
WORKERS=${WORKERS:-$(nproc)}
METHODS=${METHODS:-"default paper ars"}
JOBS=${JOBS:-1}
runs="$OUT/runs"
fail=0
# running: the trainers running in the background (the bridges are jobs too).
running() { echo $(($(jobs -rp | wc -l) - ${#BRIDGE_PIDS[@]})); }
mkdir -p "$runs"

source bench/lib.sh
start_bridge matrix "$WORKERS"

for task in $TASKS; do
  case $task in
    Swimmer-v1) budget=1000 ars=(--method ars --config bench/ars-v1.yaml) ;;
    Hopper-v1) budget=4000 ars=(--method ars) ;;
    HalfCheetah-v1) budget=3000 ars=(--method ars) ;;
    Walker2d-v1) budget=4000 ars=(--method ars) ;;
    Ant-v1) budget=3000 ars=(--method ars) ;;
    *) budget=${BUDGET:?set BUDGET for $task} ars=(--method ars) ;;
  esac
  for m in $METHODS; do
    case $m in
      default) margs=() ;;
      paper) margs=(--method stp_is --step adaptive --preset paper) ;;
      ars) margs=("${ars[@]}") ;;
      *) echo "bench-rl: unknown method $m" >&2; exit 2 ;;
    esac
    for seed in $SEEDS; do
      while [ "$(running)" -ge "$JOBS" ]; do wait -n || fail=1; done
      echo "run: $task $m seed $seed"
      bin/trainer --env "$task" "${margs[@]}" --seed "$seed" --max-episodes "$budget" --eval-spacing 40 \
        --continue-after-threshold --bridge "$BRIDGE_ADDR" --out "$runs" --log-level warn --resume ${RL_ARGS:-} >/dev/null &
    done
  done
  while [ "$(running)" -gt 0 ]; do wait -n || fail=1; done
  bin/trainer plot --methods default,ars,paper "$runs/$task" -o "$OUT/${task%-v1}.png" >/dev/null
  bin/trainer plot --methods default,ars,paper --success "$runs/$task" -o "$OUT/success-$task.png" >/dev/null
done
bin/trainer table "$runs" --summary | tee "$OUT/summary.md"
bin/trainer table "$runs" --paper >"$OUT/table.md"
exit "$fail"
