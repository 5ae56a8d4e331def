#!/usr/bin/env bash
# make bench-rl: the paper's Table 2 / Figure 4 matrix on Swimmer, Hopper and
# HalfCheetah (v1 names, v5 envs): STP fixed, STP_IS fixed, STP adaptive,
# STP_IS adaptive and ARS V2-t (published hyperparameters), 5 seeds each, the
# paper's thresholds and K. Resumable: finished runs (result.json) are
# skipped, interrupted ones continue from their checkpoint.
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
METHODS=${METHODS:-"stp:fixed stp_is:fixed stp:adaptive stp_is:adaptive ars:"}
runs="$OUT/runs"
mkdir -p "$runs"

# One local bridge for the whole matrix.
tmp=$(mktemp -d)
(cd bridge_py && exec ../.venv/bin/python -m stpis_bridge --listen 127.0.0.1:0 --workers "$WORKERS") >"$tmp/bridge.out" 2>"$tmp/bridge.err" &
bridge_pid=$!
trap 'kill -TERM $bridge_pid 2>/dev/null; wait $bridge_pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 600); do grep -q '^LISTENING ' "$tmp/bridge.out" && break; sleep 0.1; done
addr=$(awk '/^LISTENING /{print $2; exit}' "$tmp/bridge.out")
[ -n "$addr" ] || { cat "$tmp/bridge.err" >&2; exit 1; }

for task in $TASKS; do
  for m in $METHODS; do
    method=${m%%:*}; step=${m#*:}
    sub=$method${step:+-$step}
    for seed in $(seq 1 "$SEEDS"); do
      dir="$runs/$task/$sub/seed$seed"
      if [ -f "$dir/result.json" ]; then echo "done: $dir"; continue; fi
      echo "run:  $dir"
      args=(--env "$task" --method "$method" --seed "$seed" --bridge "$addr" --out "$runs" --log-level warn --resume ${RL_ARGS:-})
      [ -n "$step" ] && args+=(--step "$step")
      bin/trainer "${args[@]}" >/dev/null
    done
  done
  bin/trainer plot "$runs/$task" -o "$OUT/${task%-v1}.png" >/dev/null
done
bin/trainer table "$runs" --paper | tee "$OUT/table.md"
