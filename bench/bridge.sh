#!/usr/bin/env bash
# Hopper-v5 episodes per second through the bridge (Go client -> gRPC -> one
# bridge with 2 worker processes) against the same episode loop run
# in-process in Python on a pool of the same size, measured in the same run.
#
# Every episode runs the full horizon (terminate_when_unhealthy=false) under a
# fixed random linear policy. The two sides run one after the other, never at
# once; with ROUNDS=2 (the default) the order is bridge, in-process,
# in-process, bridge, and each side's figure is the mean of its runs.
#
# The last line of output is:
#   {"env":"Hopper-v5","workers":2,"bridge_eps":…,"inprocess_eps":…,"ratio":…}
# with ratio = bridge_eps / inprocess_eps (target: >= 0.95).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

PY=${STPIS_BRIDGE_PYTHON:-$root/.venv/bin/python}
ENV_ID=Hopper-v5
WORKERS=2
EPISODES=${EPISODES:-64}
HORIZON=1000
SEED=0
ROUNDS=${ROUNDS:-2}

if [[ ! -x "$PY" ]]; then
  echo "bench/bridge.sh: bridge python not found at $PY: run \`make venv\`" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bridgebench" ./bench/bridgebench

run_bridge() {
  "$tmp/bridgebench" --env "$ENV_ID" --workers "$WORKERS" --episodes "$EPISODES" \
    --horizon "$HORIZON" --kwarg terminate_when_unhealthy=false --seed "$SEED" | tail -n 1
}

run_inprocess() {
  (cd bridge_py && "$PY" ../bench/inprocess_bridge.py --env "$ENV_ID" --workers "$WORKERS" \
    --episodes "$EPISODES" --horizon "$HORIZON" --kwarg terminate_when_unhealthy=false \
    --seed "$SEED" | tail -n 1)
}

: >"$tmp/bridge.jsonl"
: >"$tmp/inprocess.jsonl"
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2 == 1)); then order=(bridge inprocess); else order=(inprocess bridge); fi
  for side in "${order[@]}"; do
    line=$("run_$side")
    echo "round $r $side: $line"
    echo "$line" >>"$tmp/$side.jsonl"
  done
done

"$PY" - "$tmp/bridge.jsonl" "$tmp/inprocess.jsonl" "$ENV_ID" "$WORKERS" <<'EOF'
import json
import statistics
import sys

bridge_path, inproc_path, env, workers = sys.argv[1:5]


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


bridge, inproc = load(bridge_path), load(inproc_path)
b_eps = statistics.fmean(r["eps"] for r in bridge)
i_eps = statistics.fmean(r["eps"] for r in inproc)
b_sps = statistics.fmean(r["steps_per_s"] for r in bridge)
i_sps = statistics.fmean(r["steps_per_s"] for r in inproc)
print(f"bridge (Go client, gRPC): {b_eps:.3f} episodes/s, {b_sps:.0f} steps/s over {len(bridge)} run(s)")
print(f"in-process (Python):      {i_eps:.3f} episodes/s, {i_sps:.0f} steps/s over {len(inproc)} run(s)")
print(json.dumps({
    "env": env,
    "workers": int(workers),
    "bridge_eps": round(b_eps, 4),
    "inprocess_eps": round(i_eps, 4),
    "ratio": round(b_eps / i_eps, 4),
}, separators=(",", ":")))
EOF
