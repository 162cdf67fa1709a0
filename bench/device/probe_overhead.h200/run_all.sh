#!/usr/bin/env bash
# One device call: the probe's overhead before (old/) and after (python/), and a deferred-digest variant (defer/).
# Run from a folder laid out as the repository (python/, bench/device/, examples/torch_moe/) plus old/python
# (`git archive c0e29c5 python | tar -x -C old`), defer/python (`python3 make_defer.py python defer/python`),
# and check_cumsum.py and summarize.py beside this script:
#     PSTEPS=50 ISTEPS=150 OSTEPS=25 ROUNDS=3 STEPS=25 BUDGET_S=150 bash run_all.sh
set -u
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1 BITEXACT_TORCH_HOOKS=
R=$OUT/r; mkdir -p $R
T0=$SECONDS
[ -z "${ARGS:-}" ] && python3 check_cumsum.py > $R/check.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv >> $R/check.txt 2>&1
for v in old new defer; do
  P=python; [ $v = old ] && P=old/python; [ $v = defer ] && P=defer/python
  PYTHONPATH=$P/sitecustomize python3 bench/device/probe_parts_gpu.py --steps ${PSTEPS:-60} ${ARGS:-} $([ $v != defer ] && echo --profile) --out $R/parts-$v.json > $R/parts-$v.log 2>&1
  PYTHONPATH=$P/sitecustomize python3 bench/device/probe_overhead_steps.py --mode modules --steps ${ISTEPS:-200} ${ARGS:-} --out $R/inproc-modules-$v.json > /dev/null 2>&1
  echo "$v done at $((SECONDS - T0)) s"
done
for v in old new; do
  P=python; [ $v = old ] && P=old/python
  PYTHONPATH=$P/sitecustomize python3 bench/device/probe_overhead_steps.py --mode ops --steps ${OSTEPS:-30} --warmup 3 ${ARGS:-} --out $R/inproc-ops-$v.json > /dev/null 2>&1
done
echo "inproc done at $((SECONDS - T0)) s"
# Cross-process, interleaved (new probe; probe_overhead.sh's configurations, in-process part skipped).
ROUNDS=${ROUNDS:-3} STEPS=${STEPS:-25} WARMUP=5 INPROC_STEPS=0 BUDGET_S=${BUDGET_S:-200} OUT=$R bash bench/device/probe_overhead.sh > $R/cross.log 2>&1
echo "cross done at $((SECONDS - T0)) s"
python3 summarize.py $R > $OUT/summary.txt 2>&1
cat $OUT/summary.txt
tar czf $OUT/raw.tgz -C $OUT r && rm -rf $R
