#!/usr/bin/env bash
# The ops probe on a GPU (issue 12's validation, prepared for the H200; run it there): the narrowing
# step by hand. The modules traces of two default runs first differ at step 1 (forward, blocks.0.moe:
# test/fixtures/runs/probe-h200/), so two default runs and two deterministic runs record every aten
# op of step 1 with `--mode ops`; then the step time with the ops probe off / installed but outside its
# window / recording, and a sync check. Writes everything under $OUT (default ./out-ops).
#   Expect: the default traces first differ at the combine's index_add_ (train.py's `index_add_` line),
#   the deterministic ones nowhere.
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-out-ops}
STEP=${STEP:-1}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/../../python/sitecustomize BITEXACT_TORCH_HOOKS=
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))' | tee "$OUT/device.txt"
for k in 1 2; do
  python3 -m bitexact_probe --mode ops --out "$OUT/default-probe-$k" --steps "$STEP" -- train.py --steps 3 > "$OUT/default-$k.jsonl"
  BITEXACT_TORCH_HOOKS=deterministic python3 -m bitexact_probe --mode ops --out "$OUT/det-probe-$k" --steps "$STEP" -- train.py --steps 3 > "$OUT/det-$k.jsonl"
done
# Where the traces part, with the comparer's own rules (first digest difference in execution order).
python3 - "$OUT" <<'PY' | tee "$OUT/first-divergence.txt"
import json, os, sys
out = sys.argv[1]
def records(d):
    with open(os.path.join(out, d, "rank_0.jsonl")) as f:
        return [json.loads(line) for line in f]
for kind in ("default", "det"):
    a, b = records(kind + "-probe-1"), records(kind + "-probe-2")
    same = lambda r, s: (r["op"], r["module"], r["source"], r["occurrence"], r["shape"]) == (s["op"], s["module"], s["source"], s["occurrence"], s["shape"])
    first = next((i for i, (r, s) in enumerate(zip(a, b)) if not same(r, s) or r["digest"] != s["digest"]), None)
    if first is None:
        print("%s: all %d / %d records equal" % (kind, len(a), len(b)))
    else:
        r = a[first]
        print("%s: %d / %d records; first divergence at sequence %d: step %d %s %s %s occurrence %d [%s]" % (kind, len(a), len(b), first, r["step"], r["phase"], r["module"], r["op"], r["occurrence"], r["source"] and "%s:%d" % (r["source"]["path"], r["source"]["line"])))
PY
# Step time: off, ops installed outside its window, ops recording every step; interleaved, 3 rounds.
for round in 1 2 3; do
  python3 train.py --steps 25 > "$OUT/time-off-$round.jsonl"
  python3 -m bitexact_probe --mode ops --out "$OUT/time-outside-$round" --steps 1000-1000 -- train.py --steps 25 > "$OUT/time-outside-$round.jsonl"
  python3 -m bitexact_probe --mode ops --out "$OUT/time-on-$round" -- train.py --steps 25 > "$OUT/time-on-$round.jsonl"
done
du -sh "$OUT"/time-on-1 > "$OUT/trace-size.txt" || true
rm -rf "$OUT"/time-*/
python3 - "$OUT" <<'PY' | tee "$OUT/step-times.txt"
import json, os, statistics, sys
out = sys.argv[1]
for mode in ("off", "outside", "on"):
    times = []
    for round in (1, 2, 3):
        with open(os.path.join(out, "time-%s-%d.jsonl" % (mode, round))) as f:
            times += [json.loads(line)["step_ms"] for line in f if line.startswith("{")][5:]
    print("%-8s median step %.3f ms over %d steps" % (mode, statistics.median(times), len(times)))
PY
# No host sync inside a recorded step under the ops probe: a model with no syncs of its own.
python3 - <<'PY' > "$OUT/sync-check.txt" 2>&1 || echo "sync check failed" >> "$OUT/sync-check.txt"
import tempfile, torch, bitexact_probe
bitexact_probe.install_ops(torch, tempfile.mkdtemp())
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 256, device="cuda")
torch.cuda.set_sync_debug_mode("error")
for _ in range(3):
    loss = model(x).square().mean()
    opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.set_sync_debug_mode("default")
torch.cuda.synchronize()
print("ops mode: no host sync in 3 recorded steps")
PY
cat "$OUT/sync-check.txt"
# With node here too, the whole narrowing through bitexact itself (modules pair, then the ops re-run).
if command -v node > /dev/null && [ -f ../../dist/cli.cjs ]; then
  node ../../bin/bitexact.cjs pair --probe modules --probe-steps 1-3 --no-check --format json --out "$OUT/pairs" -- python3 train.py --steps 3 > "$OUT/pair-modules.json" || true
fi
