#!/usr/bin/env bash
# Runs probe_sync_debug.py four ways on a GPU and writes $OUT/probe_sync_debug.json: the script alone
# (must pass: it is sync-free), with --item (must fail: the mode catches a sync), and under the probe
# in modules and in ops mode with steps 2-6 recorded (must pass: no host sync in the window, nor
# outside it in steps 7-8), with the records each probe wrote.
#
#     bash bench/device/probe_sync_debug.sh      (from the repository root; torch with CUDA, no node)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT_DIR=${OUT:-/tmp/probe_sync_debug_out}
mkdir -p "$OUT_DIR"
export PYTHONPATH="$ROOT/python/sitecustomize${PYTHONPATH:+:$PYTHONPATH}"
SCRIPT="$ROOT/bench/device/probe_sync_debug.py"
results=()
one() { # name, command...
  local name=$1; shift
  local line
  line=$("$@" 2>"$OUT_DIR/$name.stderr" | tail -n 1)
  [ -n "$line" ] || line='{"ok": false, "error": "no output (see the stderr file)"}'
  local records=0
  if [ -d "$OUT_DIR/trace-$name" ]; then records=$(cat "$OUT_DIR/trace-$name"/rank_*.jsonl 2>/dev/null | wc -l); fi
  results+=("\"$name\": {\"result\": $line, \"records\": $records}")
}
one alone python3 "$SCRIPT"
one item_control python3 "$SCRIPT" --item
one modules python3 -m bitexact_probe --mode modules --out "$OUT_DIR/trace-modules" --steps 2-6 -- "$SCRIPT"
one ops python3 -m bitexact_probe --mode ops --out "$OUT_DIR/trace-ops" --steps 2-6 -- "$SCRIPT"
torch_version=$(python3 -c 'import torch; print(torch.__version__, torch.cuda.get_device_name(0))')
( IFS=,; echo "{\"torch\": \"$torch_version\", ${results[*]}}" ) | python3 -m json.tool > "$OUT_DIR/probe_sync_debug.json"
cat "$OUT_DIR/probe_sync_debug.json"
