#!/usr/bin/env bash
# make bench-trainer: train Hopper-v1 with the default method (one seed, a
# local bridge with 2 workers; TRAINER_ARGS="--preset paper" for the
# paper's STP_IS) until the threshold or 4000 training episodes. The last
# line is JSON:
#   {"env":"Hopper-v1","episodes_to_threshold":…,"final_eval":…,"wall_s":…,"trainer_cpu_share":…}
# trainer_cpu_share is the trainer's own CPU time (surrogate, optimizer, I/O;
# the bridge is a child process and is not counted) over wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
SEED=${SEED:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin/trainer --env Hopper-v1 --seed "$SEED" --max-episodes 4000 --workers 2 \
  --out "$out" --log-level warn ${TRAINER_ARGS:-} >/dev/null
dir=$(echo "$out"/Hopper-v1/*/seed"$SEED")
.venv/bin/python - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/result.json"))
evals = [json.loads(l) for l in open(f"{d}/curve.jsonl") if '"eval_mean"' in l]
for e in evals:
    print(f"episodes {e['episodes']:5d}  eval {e['eval_mean']:8.1f} ± {e['eval_std']:6.1f}")
print(json.dumps({
    "env": "Hopper-v1",
    "episodes_to_threshold": r["episodes_to_threshold"],
    "final_eval": round(r["final_eval"], 1),
    "wall_s": r["wall_s"],
    "trainer_cpu_share": round(r["cpu_s"] / r["wall_s"], 4),
}))
PY
