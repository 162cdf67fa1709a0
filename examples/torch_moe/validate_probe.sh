#!/usr/bin/env bash
# The probe on a GPU (issue 12's validation), as run on the H200: two default runs and two
# deterministic runs of train.py under the probe, the step time with the probe off / installed but
# outside its window / recording, and a sync check. Writes everything under $OUT (default ./out).
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/../../python/sitecustomize BITEXACT_TORCH_HOOKS=
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))' | tee "$OUT/device.txt"
for k in 1 2; do
  python3 -m bitexact_probe --out "$OUT/default-probe-$k" --steps 1-3 -- train.py --steps 3 > "$OUT/default-$k.jsonl"
  BITEXACT_TORCH_HOOKS=deterministic python3 -m bitexact_probe --out "$OUT/det-probe-$k" --steps 1-3 -- train.py --steps 3 > "$OUT/det-$k.jsonl"
done
# Step time: off, installed outside its window, recording every step; interleaved, 3 rounds.
for round in 1 2 3; do
  python3 train.py --steps 25 > "$OUT/time-off-$round.jsonl"
  python3 -m bitexact_probe --out "$OUT/time-outside-$round" --steps 1000-1000 -- train.py --steps 25 > "$OUT/time-outside-$round.jsonl"
  python3 -m bitexact_probe --out "$OUT/time-on-$round" -- train.py --steps 25 > "$OUT/time-on-$round.jsonl"
done
rm -rf "$OUT"/time-*/
# No host sync inside a recorded step: a model with no syncs of its own, under sync debug mode "error".
python3 - <<'PY' > "$OUT/sync-check.txt" 2>&1 || echo "sync check failed" >> "$OUT/sync-check.txt"
import tempfile, torch, bitexact_probe
bitexact_probe.install(torch, tempfile.mkdtemp())
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 256, device="cuda")
torch.cuda.set_sync_debug_mode("error")
for _ in range(3):
    loss = model(x).square().mean()
    opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.set_sync_debug_mode("default")
torch.cuda.synchronize()
print("no host sync in 3 recorded steps")
PY
cat "$OUT/sync-check.txt"
