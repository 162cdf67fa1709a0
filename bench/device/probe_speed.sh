#!/usr/bin/env bash
# The modules mode's overhead, the probe of one tree (OLD, a baseline) against this one, in one device call
# (issue 12: <= 7 % for modules inside the window, <= 1 % outside it), on examples/torch_moe/train.py.
#
#     OLD=path/to/old/python [REPS=3 ISTEPS=200 OSTEPS=20 ROUNDS=2 STEPS=25] bash bench/device/probe_speed.sh
#
# 1. In-process (probe_overhead_steps.py: the probe installed once, `in` and `out` of its window taking
#    turns step by step), modules mode, REPS processes per tree, the trees alternating; ops mode once each.
# 2. Cross-process, interleaved rounds (the order rotating): off, modules in / out of the window for each tree.
# Writes $OUT/probe_speed/: inproc-<mode>-<tree>-<rep>.json, runs/<config>-<round>.jsonl (train.py's step
# lines) and summary.json (medians, overheads, the GPU and torch).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OLD=${OLD:?OLD=path of the baseline python/ tree}
NEW=$ROOT/python
D=${OUT:-/tmp/probe_speed_out}/probe_speed
REPS=${REPS:-3} ISTEPS=${ISTEPS:-200} OSTEPS=${OSTEPS:-20} ROUNDS=${ROUNDS:-2} STEPS=${STEPS:-25}
DEVICE=${DEVICE:-cuda} TRAIN_ARGS=${TRAIN_ARGS:-}
mkdir -p "$D/runs"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
tree() { if [ "$1" = old ]; then echo "$OLD"; else echo "$NEW"; fi; }
inproc() { # mode tree rep steps
  # shellcheck disable=SC2086
  BITEXACT_TORCH_HOOKS= PYTHONPATH="$(tree "$2")/sitecustomize" python3 "$ROOT/bench/device/probe_overhead_steps.py" \
    --mode "$1" --device "$DEVICE" --steps "$4" --warmup 5 --out "$D/inproc-$1-$2-$3.json" $TRAIN_ARGS > /dev/null
}
for rep in $(seq 1 "$REPS"); do
  if ((rep % 2)); then order="old new"; else order="new old"; fi
  for v in $order; do echo "inproc modules $v $rep" >&2; inproc modules "$v" "$rep" "$ISTEPS"; done
done
for v in old new; do echo "inproc ops $v" >&2; inproc ops "$v" 1 "$OSTEPS"; done
CONFIGS=(off modules_in-old modules_in-new modules_out-old modules_out-new)
run() { # config round
  local config=$1 mode=${1%-*} v=${1#*-} env=(BITEXACT_TORCH_HOOKS=)
  case $mode in
    modules_in) env=(BITEXACT_TORCH_HOOKS=probe BITEXACT_PROBE=modules BITEXACT_PROBE_STEPS="1-$STEPS") ;;
    modules_out) env=(BITEXACT_TORCH_HOOKS=probe BITEXACT_PROBE=modules BITEXACT_PROBE_STEPS="$((STEPS + 1))") ;;
  esac
  # shellcheck disable=SC2086
  env "${env[@]}" PYTHONPATH="$(tree "$v")/sitecustomize" BITEXACT_PROBE_DIR="$SCRATCH/$config-$2" \
    python3 "$ROOT/examples/torch_moe/train.py" --device "$DEVICE" --steps "$STEPS" $TRAIN_ARGS > "$D/runs/$config-$2.jsonl"
  rm -rf "${SCRATCH:?}/$config-$2"
}
for round in $(seq 1 "$ROUNDS"); do
  n=${#CONFIGS[@]}
  for i in $(seq 0 $((n - 1))); do
    config=${CONFIGS[$(((i + round - 1) % n))]}
    echo "round $round: $config" >&2
    run "$config" "$round"
  done
done
D="$D" ROUNDS="$ROUNDS" python3 "$ROOT/bench/device/probe_speed_summary.py" "${CONFIGS[@]}"
