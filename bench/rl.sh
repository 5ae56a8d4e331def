#!/usr/bin/env bash
# make bench-rl: run an experiment matrix (bench/matrices/*.yaml: tasks and
# budgets, methods and their flags, seeds, evaluation spacing; MATRIX picks
# the file, bench/matrices/rl.yaml by default, the comparison reported in
# docs/results.md). Resumable: finished runs are left as they are,
# interrupted ones continue from their checkpoint.
#
#   make bench-rl                                          # the whole matrix
#   MATRIX=bench/matrices/v4.yaml make bench-rl            # another matrix
#   SEEDS="$(seq 101 110)" OUT=results/dev make bench-rl   # development seeds
#   TASKS=Swimmer-v1 METHODS="default ars" make bench-rl   # part of it
#   TASKS=Hopper-v4 BUDGET=4000 METHODS=paper make bench-rl  # a task the matrix lacks
#   JOBS=4 make bench-rl     # four runs at a time on the one bridge (fills the workers between batches)
#   RL_ARGS="--rate 0.02" make bench-rl   # more trainer flags for every run
#
# TASKS, METHODS, SEEDS, BUDGET and OUT narrow or override the matrix
# (go run ./bench/matrix -h). Writes OUT/runs/..., OUT/<task>.png,
# OUT/success-<task>.png, OUT/table.md, and OUT/summary.md, which ends with
# the matrix file, the overrides and the build (git commit, trainer version)
# that ran it.
set -euo pipefail
cd "$(dirname "$0")/.."
MATRIX=${MATRIX:-bench/matrices/rl.yaml}
WORKERS=${WORKERS:-$(nproc)}
JOBS=${JOBS:-1}
plan=$(go run ./bench/matrix -tasks "${TASKS:-}" -methods "${METHODS:-}" -seeds "${SEEDS:-}" \
  -budget "${BUDGET:-0}" -out "${OUT:-}" "$MATRIX")
out=$(awk -F'\t' '$1 == "out" {print $2}' <<<"$plan")
plot=$(awk -F'\t' '$1 == "plot" {print $2}' <<<"$plan")
runs="$out/runs"
fail=0
# running: the trainers running in the background (the bridges are jobs too).
running() { echo $(($(jobs -rp | wc -l) - ${#BRIDGE_PIDS[@]})); }
mkdir -p "$runs"

source bench/lib.sh
start_bridge matrix "$WORKERS"

while IFS=$'\t' read -r -a line; do
  case ${line[0]} in
    run)
      while [ "$(running)" -ge "$JOBS" ]; do wait -n || fail=1; done
      echo "run: ${line[1]} ${line[2]} seed ${line[3]}"
      # shellcheck disable=SC2086  # RL_ARGS is a list of flags
      bin/trainer "${line[@]:4}" --bridge "$BRIDGE_ADDR" --out "$runs" --log-level warn --resume ${RL_ARGS:-} \
        </dev/null >/dev/null &
      ;;
    done)
      task=${line[1]}
      while [ "$(running)" -gt 0 ]; do wait -n || fail=1; done
      bin/trainer plot --methods "$plot" "$runs/$task" -o "$out/${task%-v1}.png" >/dev/null
      if [ "${line[2]}" = success ]; then
        bin/trainer plot --methods "$plot" --success "$runs/$task" -o "$out/success-$task.png" >/dev/null
      fi
      ;;
  esac
done <<<"$plan"
{
  bin/trainer table "$runs" --summary
  echo
  echo "Matrix \`$MATRIX\`$(for v in TASKS METHODS SEEDS BUDGET OUT RL_ARGS; do [ -n "${!v:-}" ] && printf ' %s="%s"' "$v" "${!v}"; done), last run at commit \`$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)\` (\`$(bin/trainer version)\`) on $(date -u +%Y-%m-%d)."
} | tee "$out/summary.md"
bin/trainer table "$runs" --paper >"$out/table.md"
exit "$fail"
