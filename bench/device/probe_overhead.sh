#!/usr/bin/env bash
# The probe's overhead on a GPU (issue 12: <= 1 % outside the window, <= 7 % for modules inside it):
# the step time of examples/torch_moe/train.py with the probe off, modules inside / outside its
# window, ops inside / outside its window. Each configuration is its own process, run in interleaved
# rounds (the order rotates every round: two identical runs already differ by a few per cent, so
# rounds, not one long run, are what make the medians comparable). Every run's first WARMUP steps
# are dropped (CUDA init, allocator growth, first kernels); the median is over ROUNDS x (STEPS - WARMUP)
# steps per configuration. Before those rounds, the probe is toggled inside one process, step by step
# (probe_overhead_steps.py, for modules and for ops: `in` vs `out` with the machine's drift shared
# alike, the tighter measure of the two). The rounds stop starting once BUDGET_S seconds have gone
# (default 320: a round of five processes takes under 2 minutes on an H200, so the script ends within 8).
#
#     bash bench/device/probe_overhead.sh          (from the repository root; torch with CUDA, no node)
#     ROUNDS=2 STEPS=8 WARMUP=3 INPROC_STEPS=4 INPROC_WARMUP=1 DEVICE=cpu TRAIN_ARGS="--batch 2 --seq 32" bash bench/device/probe_overhead.sh
#
# Writes $OUT/probe_overhead/ (default OUT=/tmp/probe_overhead_out): inproc-modules.json and
# inproc-ops.json (probe_overhead_steps.py: per-step times, medians, mins), runs/<config>-<round>.jsonl
# (train.py's step lines) and probe_overhead.json:
#   { device, torch, rounds_done, configs: { off: { median_ms, min_ms, p95_ms, steps }, ... },
#     overhead_pct: { modules_in: ..., ... } (relative to off's median), overhead_pct_by_min,
#     inproc: { modules: { in_vs_out_pct_by_median, by_min }, ops: ... } }
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
INPROC_STEPS=${INPROC_STEPS:-200}
INPROC_WARMUP=${INPROC_WARMUP:-10}
BUDGET_S=${BUDGET_S:-320}
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

# The probe toggled inside one process (modules: INPROC_STEPS per configuration; ops records ~15x
# more per step, so a third of them). INPROC_STEPS=0 leaves it out.
if ((INPROC_STEPS > 0)); then
  # shellcheck disable=SC2086 # TRAIN_ARGS is a list of arguments
  BITEXACT_TORCH_HOOKS= python3 "$ROOT/bench/device/probe_overhead_steps.py" --mode modules --device "$DEVICE" \
    --steps "$INPROC_STEPS" --warmup "$INPROC_WARMUP" --out "$OUT_DIR/inproc-modules.json" $TRAIN_ARGS >&2
  # shellcheck disable=SC2086
  BITEXACT_TORCH_HOOKS= python3 "$ROOT/bench/device/probe_overhead_steps.py" --mode ops --device "$DEVICE" \
    --steps "$(((INPROC_STEPS + 2) / 3))" --warmup "$(((INPROC_WARMUP + 2) / 3))" --out "$OUT_DIR/inproc-ops.json" $TRAIN_ARGS >&2
fi

ROUNDS_DONE=0
for round in $(seq 1 "$ROUNDS"); do
  if ((round > 1 && SECONDS > BUDGET_S)); then
    echo "stopping after $ROUNDS_DONE rounds: ${SECONDS}s > BUDGET_S=$BUDGET_S" >&2
    break
  fi
  n=${#CONFIGS[@]}
  for i in $(seq 0 $((n - 1))); do
    config=${CONFIGS[$(((i + round - 1) % n))]}
    echo "round $round/$ROUNDS: $config" >&2
    run "$config" "$round"
  done
  ROUNDS_DONE=$round
done

OUT_DIR="$OUT_DIR" WARMUP="$WARMUP" DEVICE="$DEVICE" ROUNDS_DONE="$ROUNDS_DONE" python3 - "${CONFIGS[@]}" <<'PY'
import glob, json, os, statistics, sys

import torch

out, warmup = os.environ["OUT_DIR"], int(os.environ["WARMUP"])
configs = {}
for config in sys.argv[1:]:
    steps = []
    rounds = int(os.environ["ROUNDS_DONE"])
    for path in [os.path.join(out, "runs", "%s-%d.jsonl" % (config, r)) for r in range(1, rounds + 1)]:
        lines = [json.loads(l) for l in open(path) if l.startswith("{")]
        steps += [l["step_ms"] for l in lines if l["step"] > warmup]
    steps.sort()
    configs[config] = {
        "median_ms": round(statistics.median(steps), 3),
        "min_ms": round(steps[0], 3),
        "p95_ms": round(steps[min(len(steps) - 1, int(0.95 * len(steps)))], 3),
        "steps": len(steps),
    }
off = configs["off"]["median_ms"]
cuda = os.environ["DEVICE"] == "cuda" and torch.cuda.is_available()
report = {
    "device": torch.cuda.get_device_name(0) if cuda else "cpu",
    "torch": torch.__version__,
    "warmup_steps_dropped": warmup,
    "rounds_done": int(os.environ["ROUNDS_DONE"]),
    "configs": configs,
    "overhead_pct": {c: round(100 * (v["median_ms"] / off - 1), 2) for c, v in configs.items() if c != "off"},
    "overhead_pct_by_min": {c: round(100 * (v["min_ms"] / configs["off"]["min_ms"] - 1), 2) for c, v in configs.items() if c != "off"},
    "targets_pct": {"modules_out": 1, "ops_out": 1, "modules_in": 7},
    "inproc": {},
}
for mode in ("modules", "ops"):
    path = os.path.join(out, "inproc-%s.json" % mode)
    if os.path.exists(path):
        inproc = json.load(open(path))
        report["inproc"][mode] = {
            "in_vs_out_pct_by_median": inproc["overhead_pct"]["by_median"],
            "in_vs_out_pct_by_min": inproc["overhead_pct"]["by_min"],
            "in": inproc["configs"]["in"],
            "out": inproc["configs"]["out"],
            "records_per_recorded_step": inproc["records_per_recorded_step"],
        }
with open(os.path.join(out, "probe_overhead.json"), "w") as f:
    json.dump(report, f, indent=2)
print(json.dumps(report, indent=2))
PY
