#!/usr/bin/env bash
# Two ranks on ONE GPU (issue 13's rehearsal of the 2-GPU runs): pairs of torchrun --nproc-per-node 2
# runs of examples/torch_moe/train_ddp.py, each run probed as `bitexact pair --probe` probes it, the
# traces laid out as bitexact lays out a pair directory, so that on a machine with node:
#
#     bitexact compare $OUT/two_ranks/<pair>              (logs, then probe-1/ and probe-2/ per rank)
#     bitexact compare $OUT/two_ranks/<pair>/narrow/probe-1 $OUT/two_ranks/<pair>/narrow/probe-2
#
# node is not on the GPU machine: this runs the Python side only, with the environment bitexact's
# launcher gives each run (server/src/runs/launch.ts runEnvironment, probe-run.ts probeEnvironment):
# python/sitecustomize first on PYTHONPATH, BITEXACT_TORCH_HOOKS, BITEXACT_PROBE, BITEXACT_PROBE_DIR,
# BITEXACT_PROBE_STEPS, and for --preset det the DET_PRESET_ENV variables.
#
# Both ranks share the GPU, so the backend is gloo with CUDA tensors (NCCL refuses two ranks on one
# device); NVLink multicast stays off in every launched environment.
#
# Pairs (each: run-1.log, run-2.log, their .stderr, probe-1/ and probe-2/ with rank_0/rank_1.jsonl,
# and narrow/ = the ops probe on step 1, as bitexact's automatic narrowing records it):
#   default/    two default runs: both ranks' MoE combines add with float atomics (index_add_)
#   det/        deterministic (the det preset): every record of both ranks should match
#   rehearsal/  deterministic, and rank 1 alone adds its combine in a per-run order
#               (BITEXACT_REHEARSAL_RANK=1): rank 1 first, rank 0 only through the all-reduce
#
#     bash bench/device/two_ranks_one_gpu.sh            (writes under $OUT, or /tmp/two_ranks_out)
#     TRAIN_ARGS="--tiny --steps 1 --batch 4 --seq 16" bash bench/device/two_ranks_one_gpu.sh   (a CPU try)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT_DIR=${OUT:-/tmp/two_ranks_out}/two_ranks
TRAIN_ARGS=${TRAIN_ARGS:---steps 3}
PAIRS=${PAIRS:-default det rehearsal}
mkdir -p "$OUT_DIR"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.device_count())"
  echo "train args: $TRAIN_ARGS"
} > "$OUT_DIR/device.txt" 2>&1

# run DIR K MODE STEPS HOOKS [VAR=VALUE...]: run K of a pair, probed into DIR/probe-K, logged to DIR/run-K.log
run() {
  local dir=$1 k=$2 mode=$3 steps=$4 hooks=$5
  shift 5
  local start end
  start=$(date +%s.%N)
  env "$@" \
    PYTHONPATH="$ROOT/python/sitecustomize${PYTHONPATH:+:$PYTHONPATH}" \
    BITEXACT_TORCH_HOOKS="$hooks" BITEXACT_PROBE="$mode" BITEXACT_PROBE_DIR="$dir/probe-$k" \
    ${steps:+BITEXACT_PROBE_STEPS=$steps} \
    timeout 300 python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
    "$ROOT/examples/torch_moe/train_ddp.py" $TRAIN_ARGS < /dev/null > "$dir/run-$k.log" 2> "$dir/run-$k.log.stderr"
  local rc=$?
  end=$(date +%s.%N)
  echo "${dir#$OUT_DIR/} run $k ($mode${steps:+ steps $steps}): exit $rc, $(awk "BEGIN { printf \"%.1f\", $end - $start }") s" | tee -a "$OUT_DIR/runs.txt"
  [ $rc -eq 0 ] || tail -5 "$dir/run-$k.log.stderr"
}

# pair NAME HOOKS [VAR=VALUE...]: the modules pair, then the ops pair of step 1 in NAME/narrow/
pair() {
  local name=$1 hooks=$2
  shift 2
  local dir="$OUT_DIR/$name"
  rm -rf "$dir"
  mkdir -p "$dir/narrow"
  for k in 1 2; do run "$dir" "$k" modules "" "$hooks" "$@"; done
  for k in 1 2; do run "$dir/narrow" "$k" ops 1 "$hooks" "$@"; done
}

# DET_PRESET_ENV (server/src/runs/launch.ts), with the deterministic hook, as `--preset det` sets them.
DET="CUBLAS_WORKSPACE_CONFIG=:4096:8 PYTHONHASHSEED=0 NVTE_ALLOW_NONDETERMINISTIC_ALGO=0 NCCL_ALGO=Ring FLASH_ATTENTION_DETERMINISTIC=1"
for name in $PAIRS; do
  case $name in
    default) pair default probe ;;
    det) pair det deterministic,probe $DET ;;
    rehearsal) pair rehearsal deterministic,probe $DET BITEXACT_REHEARSAL_RANK=1 ;;
    *) echo "unknown pair $name (default, det, rehearsal)" >&2 ;;
  esac
done
ls -R "$OUT_DIR" | head -60
