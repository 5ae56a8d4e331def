#!/usr/bin/env bash
# Convex benchmark: synthetic ridge, m = 100, n = 1000, 15000 iterations,
# 10 runs of STP and STP_IS (cmd/convex --only bench), then CMA-ES and
# Nevergrad on the same exported problem. The LAST line is the JSON result.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/bench-convex}
VPY=.venv/bin/python
mkdir -p "$OUT"
test -x "$VPY" || python3 -m venv .venv
"$VPY" -m pip install --quiet --disable-pip-version-check -r bench/requirements-convex.txt >&2
go run ./cmd/convex --only bench --runs "${RUNS:-10}" --seed "${SEED:-0}" --out "$OUT" > "$OUT/go_line.json"
if ! "$VPY" bench/convex_baselines.py --dir "$OUT" --seed "${SEED:-0}" > "$OUT/baselines.txt"; then
  echo "baselines failed; STP / STP_IS only" >&2
  cat "$OUT/go_line.json"
  exit 0
fi
cat "$OUT/baselines.txt"
