#!/usr/bin/env bash
# The probe's overhead on a GPU (issue 12: <= 1 % outside the window, <= 7 % for modules inside it):
# the step time of examples/torch_moe/train.py with the probe off, modules inside / outside its
# window, ops inside / outside its window. Each configuration is its own process, run in interleaved
# rounds (the order rotates every round: two identical runs already differ by a few per cent, so
# rounds, not one long run, are what make the medians comparable). Every run's first WARMUP steps
# are dropped (CUDA init, allocator growth, first kernels); the median is over ROUNDS x (STEPS - WARMUP)
# steps per configuration (>= 60 by default).
#
#     bash bench/device/probe_overhead.sh          (from the repository root; torch with CUDA, no node)
#     ROUNDS=2 STEPS=8 WARMUP=3 DEVICE=cpu TRAIN_ARGS="--batch 2 --seq 32" bash bench/device/probe_overhead.sh
#
# Writes $OUT/probe_overhead/ (default OUT=/tmp/probe_overhead_out): runs/<config>-<round>.jsonl
# (train.py's step lines) and probe_overhead.json:
#   { device, torch, steps_per_config, configs: { off: { median_ms, p95_ms, steps }, ... },
#     overhead_pct: { modules_in: ..., ... } }   (relative to off's median)
# The environment is the one bitexact's launcher gives a probed run (probe-run.ts probeEnvironment):
# python/sitecustomize first on PYTHONPATH, BITEXACT_TORCH_HOOKS=probe, BITEXACT_PROBE,
# BITEXACT_PROBE_DIR, BITEXACT_PROBE_STEPS. "Outside the window" is a window past the last step: the
# probe is installed and its hooks run, but nothing is recorded.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT_DIR=${OUT:-/tmp/probe_overhead_out}/probe_overhead
ROUNDS=${ROUNDS:-4}
STEPS=${STEPS:-20}
WARMUP=${WARMUP:-5}
DEVICE=${DEVICE:-cuda}
TRAIN_ARGS=${TRAIN_ARGS:-}
CONFIGS=(off modules_in modules_out ops_in ops_out)
mkdir -p "$OUT_DIR/runs"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
export PYTHONPATH="$ROOT/python/sitecustomize${PYTHONPATH:+:$PYTHONPATH}"

run() { # config round
  local config=$1 round=$2 env=(BITEXACT_TORCH_HOOKS=)
  case $config in
    off) ;;
    modules_in) env=(BITEXACT_TORCH_HOOKS=probe BITEXACT_PROBE=modules BITEXACT_PROBE_STEPS="1-$STEPS") ;;
    modules_out) env=(BITEXACT_TORCH_HOOKS=probe BITEXACT_PROBE=modules BITEXACT_PROBE_STEPS="$((STEPS + 1))") ;;
    ops_in) env=(BITEXACT_TORCH_HOOKS=probe BITEXACT_PROBE=ops BITEXACT_PROBE_STEPS="1-$STEPS") ;;
    ops_out) env=(BITEXACT_TORCH_HOOKS=probe BITEXACT_PROBE=ops BITEXACT_PROBE_STEPS="$((STEPS + 1))") ;;
  esac
  # shellcheck disable=SC2086 # TRAIN_ARGS is a list of arguments
  env "${env[@]}" BITEXACT_PROBE_DIR="$SCRATCH/$config-$round" \
    python3 "$ROOT/examples/torch_moe/train.py" --device "$DEVICE" --steps "$STEPS" $TRAIN_ARGS \
    > "$OUT_DIR/runs/$config-$round.jsonl"
  rm -rf "${SCRATCH:?}/$config-$round"
}

for round in $(seq 1 "$ROUNDS"); do
  n=${#CONFIGS[@]}
  for i in $(seq 0 $((n - 1))); do
    config=${CONFIGS[$(((i + round - 1) % n))]}
    echo "round $round/$ROUNDS: $config" >&2
    run "$config" "$round"
  done
done

OUT_DIR="$OUT_DIR" WARMUP="$WARMUP" DEVICE="$DEVICE" python3 - "${CONFIGS[@]}" <<'PY'
import glob, json, os, statistics, sys

import torch

out, warmup = os.environ["OUT_DIR"], int(os.environ["WARMUP"])
configs = {}
for config in sys.argv[1:]:
    steps = []
    for path in sorted(glob.glob(os.path.join(out, "runs", config + "-*.jsonl"))):
        lines = [json.loads(l) for l in open(path) if l.startswith("{")]
        steps += [l["step_ms"] for l in lines if l["step"] > warmup]
    steps.sort()
    configs[config] = {
        "median_ms": round(statistics.median(steps), 3),
        "p95_ms": round(steps[min(len(steps) - 1, int(0.95 * len(steps)))], 3),
        "steps": len(steps),
    }
off = configs["off"]["median_ms"]
cuda = os.environ["DEVICE"] == "cuda" and torch.cuda.is_available()
report = {
    "device": torch.cuda.get_device_name(0) if cuda else "cpu",
    "torch": torch.__version__,
    "warmup_steps_dropped": warmup,
    "configs": configs,
    "overhead_pct": {c: round(100 * (v["median_ms"] / off - 1), 2) for c, v in configs.items() if c != "off"},
    "targets_pct": {"modules_out": 1, "ops_out": 1, "modules_in": 7},
}
with open(os.path.join(out, "probe_overhead.json"), "w") as f:
    json.dump(report, f, indent=2)
print(json.dumps(report, indent=2))
PY
