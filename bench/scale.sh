#!/usr/bin/env bash
# make bench-scale: training throughput of one run of the default method
# (on Hopper M = 4 directions: 8 episodes an iteration) spread over 2 bridge
# replicas of 1 worker each, against 1 such replica, on loopback. Hopper-v1
# with terminate_when_unhealthy=false so every episode has 1000 steps. The
# last line is JSON:
#   {"env":"Hopper-v1","replicas_1_eps":…,"replicas_2_eps":…,"ratio":…}
# TRAINER_ARGS adds trainer flags (for example "--directions 8 --top 4").
set -euo pipefail
cd "$(dirname "$0")/.."
EPISODES=${EPISODES:-192}
source bench/lib.sh
start_bridge a 1
a=$BRIDGE_ADDR
start_bridge b 1
b=$BRIDGE_ADDR

train() { # $1: bridge target, $2: out dir; prints training episodes per second
  bin/trainer --env Hopper-v1 --kwarg terminate_when_unhealthy=false --seed 1 \
    --max-episodes "$EPISODES" --eval-spacing 1000000 --eval-episodes 1 --continue-after-threshold \
    --bridge "$1" --out "$2" --log-level warn ${TRAINER_ARGS:-} >/dev/null
  .venv/bin/python - "$2"/Hopper-v1/*/seed1 <<'PY'
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

one=$(train "$a" "$BENCH_TMP/one")
two=$(train "$a,$b" "$BENCH_TMP/two")
echo "1 replica x 1 worker: $one training episodes/s"
echo "2 replicas x 1 worker: $two training episodes/s"
.venv/bin/python -c "import json; print(json.dumps({'env':'Hopper-v1','episodes':$EPISODES,'replicas_1_eps':$one,'replicas_2_eps':$two,'ratio':round($two/$one,3)}))"
