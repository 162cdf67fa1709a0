"""Does the probe sync the host inside its window? (issue 12: under torch.cuda.set_sync_debug_mode("error")
the window raises nothing.)

A small transformer-shaped model (layer norm, scaled-dot-product attention, MLP, AdamW) trains on
CUDA with no host sync of its own in a step: its data is made before the loop, its losses stay on
the device until the end. From step 2 on every step runs under set_sync_debug_mode("error"), so any
synchronising CUDA call in the step (the model's, the optimizer's or the probe's hooks and its
step-boundary flush) raises. Run it as is (the control: the script itself is sync-free), with a
deliberate `.item()` in a step (--item: the mode catches a sync), and under the probe
(`python -m bitexact_probe --mode modules|ops --steps 2-6 -- probe_sync_debug.py`). It prints one
JSON line: ok, the exception if any, the steps done, and the losses.

    PYTHONPATH=python/sitecustomize python3 -m bitexact_probe --mode ops --out /tmp/p --steps 2-6 -- bench/device/probe_sync_debug.py
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.norm2(x))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--item", action="store_true", help="sync in step 3 (the control that the mode catches one)")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = "cuda"
    model = nn.Sequential(*[Block(256, 4) for _ in range(2)], nn.Linear(256, 16)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.randn(args.steps, 8, 64, 256, device=device)
    target = torch.randint(0, 16, (args.steps, 8, 64), device=device)
    losses = []
    done = 0
    error = None
    try:
        for step in range(args.steps):
            torch.cuda.set_sync_debug_mode("error" if step >= 1 else 0)
            loss = F.cross_entropy(model(data[step]).flatten(0, 1), target[step].flatten())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.detach())
            if args.item and step == 2:
                loss.item()
            done += 1
    except RuntimeError as e:
        error = str(e).splitlines()[0]
    finally:
        torch.cuda.set_sync_debug_mode(0)
    print(json.dumps({"ok": error is None, "error": error, "steps": done, "losses": [float(x) for x in losses]}))
    return 0 if error is None else 1


if __name__ == "__main__":
    sys.exit(main())
