"""Do float CUDA cumsums along the rows of batched tensors vary run to run? (bench/truth disputes)

Runs each case 20 times on fresh random inputs drawn once from a fixed seed and counts distinct
results (bitwise, by hash of the bytes). Prints one JSON line per case.
"""
import hashlib
import json
import torch

CASES = [
    ("fp32 (8, 4096) dim=1", (8, 4096), 1, False),
    ("fp32 (64, 2048) dim=1 reversed by flip", (64, 2048), 1, True),
    ("fp32 (4, 8, 16, 256) dim=-1", (4, 8, 16, 256), -1, False),
    ("fp32 (4, 8, 16, 256) dim=-1 reversed by flip", (4, 8, 16, 256), -1, True),
    ("fp32 (2, 1_000_000) dim=1", (2, 1_000_000), 1, False),
    ("fp32 (10_000_000,) dim=0 (control: 1-D)", (10_000_000,), 0, False),
]

def digest(t):
    return hashlib.sha256(t.detach().cpu().numpy().tobytes()).hexdigest()

g = torch.Generator(device="cuda").manual_seed(0)
for name, shape, dim, flip in CASES:
    x = torch.randn(shape, device="cuda", generator=g)
    seen = set()
    for _ in range(20):
        y = x.flip(dim).cumsum(dim).flip(dim) if flip else x.cumsum(dim)
        torch.cuda.synchronize()
        seen.add(digest(y))
    print(json.dumps({"case": name, "runs": 20, "distinct": len(seen), "torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
