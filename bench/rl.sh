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
#   make results             # draw only: the figures and tables of the runs there, no run started
#
# TASKS, METHODS, SEEDS, BUDGET and OUT narrow or override the matrix
# (go run ./bench/matrix -h). Writes OUT/runs/..., OUT/<task>.png,
# OUT/success-<task>.png, OUT/table.md, OUT/summary.md, which ends with
# the matrix file, the overrides and the build (git commit, trainer version)
# that ran it, and, across the tasks, OUT/aggregate.md and OUT/profile.png
# (trainer table --aggregate, trainer plot --profile). DRAW_ONLY=1 (make
# results) starts no bridge and no run: it draws those files from the runs
# already there.
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
DRAW_ONLY=${DRAW_ONLY:-}
mkdir -p "$runs"

source bench/lib.sh
[ -n "$DRAW_ONLY" ] || start_bridge matrix "$WORKERS"

while IFS=$'\t' read -r -a line; do
  case ${line[0]} in
    run)
      [ -z "$DRAW_ONLY" ] || continue
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
what="last run"
[ -z "$DRAW_ONLY" ] || what="drawn"
build="$what at commit \`$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)\` (\`$(bin/trainer version)\`) on $(date -u +%Y-%m-%d)"
overrides=$(for v in TASKS METHODS SEEDS BUDGET OUT RL_ARGS; do [ -n "${!v:-}" ] && printf ' %s="%s"' "$v" "${!v}"; done; true)
{
  bin/trainer table "$runs" --summary
  echo
  echo "Matrix \`$MATRIX\`$overrides, $build."
} | tee "$out/summary.md"
bin/trainer table "$runs" --paper >"$out/table.md"
# Across the tasks: rliable's aggregate figures and the performance profile
# of the plotted methods.
{
  bin/trainer table "$runs" --aggregate --methods "$plot"
  echo
  echo "\`trainer table $runs --aggregate --methods $plot\`; matrix \`$MATRIX\`$overrides, $build."
} >"$out/aggregate.md"
bin/trainer plot "$runs" --profile --methods "$plot" -o "$out/profile.png" >/dev/null
exit "$fail"
