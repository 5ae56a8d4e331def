# Shared by the bench scripts (source it): start Python bridges on loopback
# and stop them on exit.
#
#   source bench/lib.sh
#   start_bridge NAME WORKERS [ARGS...]   # sets BRIDGE_ADDR to host:port
#
# ARGS are more bridge flags (--backend fast, say).
#
# Call start_bridge in the script's own shell, not in $(...): the bridge's
# pid must be recorded where the EXIT trap runs, or it outlives the script.

BENCH_TMP=$(mktemp -d)
BRIDGE_PIDS=()

stop_bridges() {
  for p in "${BRIDGE_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${BRIDGE_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$BENCH_TMP"
}
trap stop_bridges EXIT

start_bridge() { # $1: name, $2: workers, then more bridge flags; sets BRIDGE_ADDR
  local out="$BENCH_TMP/$1.out" err="$BENCH_TMP/$1.err"
  (cd bridge_py && exec ../.venv/bin/python -m stpis_bridge --listen 127.0.0.1:0 --workers "$2" "${@:3}") >"$out" 2>"$err" &
  BRIDGE_PIDS+=($!)
  for _ in $(seq 1 600); do
    if grep -q '^LISTENING ' "$out" 2>/dev/null; then
      BRIDGE_ADDR=$(awk '/^LISTENING /{print $2; exit}' "$out")
      return 0
    fi
    sleep 0.1
  done
  echo "bridge $1 did not start:" >&2
  cat "$err" >&2
  exit 1
}
