#!/usr/bin/env bash
# make bench-scale: training throughput of one run spread over 2 bridge
# replicas of 1 worker each, against 1 such replica, on loopback. Hopper-v1
# with terminate_when_unhealthy=false so every episode has 1000 steps. The
# last line is JSON:
#   {"env":"Hopper-v1","replicas_1_eps":…,"replicas_2_eps":…,"ratio":…}
set -euo pipefail
cd "$(dirname "$0")/.."
EPISODES=${EPISODES:-192}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

start_bridge() { # $1: name; prints host:port
  (cd bridge_py && exec ../.venv/bin/python -m stpis_bridge --listen 127.0.0.1:0 --workers 1) >"$tmp/$1.out" 2>"$tmp/$1.err" &
  pids+=($!)
  for _ in $(seq 1 600); do
    if grep -q '^LISTENING ' "$tmp/$1.out" 2>/dev/null; then
      awk '/^LISTENING /{print $2; exit}' "$tmp/$1.out"
      return
    fi
    sleep 0.1
  done
  echo "bridge $1 did not start:" >&2; cat "$tmp/$1.err" >&2; exit 1
}

a=$(start_bridge a)
b=$(start_bridge b)

train() { # $1: bridge target, $2: out dir; prints training episodes per second
  bin/trainer --env Hopper-v1 --kwarg terminate_when_unhealthy=false --method stp_is --seed 1 \
    --max-episodes "$EPISODES" --eval-every 100000 --eval-episodes 1 --continue-after-threshold \
    --bridge "$1" --out "$2" --log-level warn >/dev/null
  .venv/bin/python - "$2/Hopper-v1/stp_is-adaptive/seed1" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(f"{sys.argv[1]}/curve.jsonl")]
# Training time only: from the end of the initial evaluation to the last
# iteration (the final evaluation is not in elapsed_s of the last line... it
# is, so use the line before the last for the end when it evaluated).
first, last = lines[0], lines[-1]
steps = [l for l in lines[1:] if "eval_mean" not in l]
end = steps[-1]
print(f"{(end['episodes'] - first['episodes']) / (end['elapsed_s'] - first['elapsed_s']):.4f}")
PY
}

one=$(train "$a" "$tmp/one")
two=$(train "$a,$b" "$tmp/two")
echo "1 replica x 1 worker: $one training episodes/s"
echo "2 replicas x 1 worker: $two training episodes/s"
.venv/bin/python -c "import json; print(json.dumps({'env':'Hopper-v1','episodes':$EPISODES,'replicas_1_eps':$one,'replicas_2_eps':$two,'ratio':round($two/$one,3)}))"
