#!/usr/bin/env bash
# Control steps per second on Hopper-v5 and HalfCheetah-v5, batches of 12 and 64
# episodes of 1000 steps, with 2 workers or threads, four ways in one run:
#
#   limit      mujoco.rollout, zero controls, the same model and frame skip,
#              2 C threads (bench/physics_limit.py): the physics alone
#   gymnasium  the bridge's gymnasium backend through the Go client
#              (bench/bridgebench against a bridge with --backend gymnasium)
#   fast       the bridge's fast backend through the Go client (--backend fast)
#   inprocess  the gymnasium episode loop on a 2-process pool in Python, no gRPC
#              (bench/inprocess_bridge.py)
#
# Hopper runs with terminate_when_unhealthy=false so that every episode runs its
# 1000 steps. The policy is a fixed random linear one (W ~ N(0, 0.1²), seeded).
# The four sides run one after the other, never at once; the order is reversed
# every other round, and each figure is the median of ROUNDS rounds (default 3).
# Ratios are taken within the run: on a shared machine single figures drift.
#
# The last line of output is one JSON object:
#   {"workers":2,"horizon":1000,"rounds":2,"results":[{"env":…,"batch":…,
#    "limit_sps":…,"gymnasium_sps":…,"fast_sps":…,"inprocess_sps":…,
#    "fast_over_limit":…,"gymnasium_over_limit":…,"fast_over_gymnasium":…,
#    "gymnasium_over_inprocess":…},…],"goal":{…}}
# Goal (issue 18): fast/limit >= 0.6 on Hopper at batch 64 and >= 0.4 at 12.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

PY=${STPIS_BRIDGE_PYTHON:-$root/.venv/bin/python}
WORKERS=2
HORIZON=1000
SEED=0
ROUNDS=${ROUNDS:-3}
ENVS=(Hopper-v5 HalfCheetah-v5)
BATCHES=(12 64)

if [[ ! -x "$PY" ]]; then
  echo "bench/bridge.sh: bridge python not found at $PY: run \`make venv\`" >&2
  exit 1
fi

source bench/lib.sh
go build -o "$BENCH_TMP/bridgebench" ./bench/bridgebench
start_bridge gymnasium "$WORKERS" --backend gymnasium
GYM_ADDR=$BRIDGE_ADDR
start_bridge fast "$WORKERS" --backend fast
FAST_ADDR=$BRIDGE_ADDR

kwargs_for() { # $1: env id
  if [[ $1 == Hopper-* ]]; then echo "--kwarg terminate_when_unhealthy=false"; fi
}

run_side() { # $1: side, $2: env, $3: batch; prints one JSON line
  local kw
  kw=$(kwargs_for "$2")
  case $1 in
  limit)
    # shellcheck disable=SC2086
    (cd bridge_py && "$PY" ../bench/physics_limit.py --env "$2" --threads "$WORKERS" \
      --episodes "$3" --horizon "$HORIZON" --seed "$SEED" $kw 2>/dev/null | tail -n 1) ;;
  gymnasium | fast)
    local addr=$GYM_ADDR
    [[ $1 == fast ]] && addr=$FAST_ADDR
    # shellcheck disable=SC2086
    "$BENCH_TMP/bridgebench" --bridge "$addr" --backend "$1" --env "$2" --workers "$WORKERS" \
      --episodes "$3" --horizon "$HORIZON" --seed "$SEED" $kw | tail -n 1 ;;
  inprocess)
    # shellcheck disable=SC2086
    (cd bridge_py && "$PY" ../bench/inprocess_bridge.py --env "$2" --workers "$WORKERS" \
      --episodes "$3" --horizon "$HORIZON" --seed "$SEED" $kw 2>/dev/null | tail -n 1) ;;
  esac
}

results="$BENCH_TMP/results.tsv"
: >"$results"
sides=(limit gymnasium fast inprocess)
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2 == 1)); then order=("${sides[@]}"); else order=(inprocess fast gymnasium limit); fi
  for env in "${ENVS[@]}"; do
    for batch in "${BATCHES[@]}"; do
      for side in "${order[@]}"; do
        line=$(run_side "$side" "$env" "$batch")
        echo "round $r $env batch $batch $side: $line"
        printf '%s\t%s\t%s\t%s\n' "$env" "$batch" "$side" "$line" >>"$results"
      done
    done
  done
done

"$PY" - "$results" "$WORKERS" "$HORIZON" "$ROUNDS" <<'PYEOF'
import collections
import json
import statistics
import sys

path, workers, horizon, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
sps = collections.defaultdict(list)
with open(path) as f:
    for row in f:
        env, batch, side, line = row.rstrip("\n").split("\t", 3)
        sps[(env, int(batch), side)].append(json.loads(line)["steps_per_s"])

results = []
for env, batch in sorted({(e, b) for e, b, _ in sps}, key=lambda k: (k[0] != "Hopper-v5", k)):
    m = {side: statistics.median(sps[(env, batch, side)]) for side in ("limit", "gymnasium", "fast", "inprocess")}
    row = {"env": env, "batch": batch}
    row.update({f"{side}_sps": round(v) for side, v in m.items()})
    row["fast_over_limit"] = round(m["fast"] / m["limit"], 3)
    row["gymnasium_over_limit"] = round(m["gymnasium"] / m["limit"], 3)
    row["fast_over_gymnasium"] = round(m["fast"] / m["gymnasium"], 3)
    row["gymnasium_over_inprocess"] = round(m["gymnasium"] / m["inprocess"], 3)
    results.append(row)
    print(
        f"{env:15s} batch {batch:3d}: limit {m['limit']:8.0f}  gymnasium {m['gymnasium']:8.0f}  "
        f"fast {m['fast']:8.0f}  in-process {m['inprocess']:8.0f} control steps/s;  "
        f"fast/limit {row['fast_over_limit']:.3f}  gymnasium/limit {row['gymnasium_over_limit']:.3f}  "
        f"fast/gymnasium {row['fast_over_gymnasium']:.3f}"
    )

def ratio(env, batch):
    return next(r["fast_over_limit"] for r in results if r["env"] == env and r["batch"] == batch)

goal = {
    "hopper_64_fast_over_limit": ratio("Hopper-v5", 64),
    "hopper_64_target": 0.6,
    "hopper_12_fast_over_limit": ratio("Hopper-v5", 12),
    "hopper_12_target": 0.4,
}
goal["met"] = goal["hopper_64_fast_over_limit"] >= 0.6 and goal["hopper_12_fast_over_limit"] >= 0.4
print(json.dumps({"workers": workers, "horizon": horizon, "rounds": rounds, "results": results, "goal": goal}, separators=(",", ":")))
PYEOF
