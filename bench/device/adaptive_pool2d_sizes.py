"""Does adaptive_avg_pool2d's CUDA backward vary run to run when the output shrinks? (BX126)

The backward adds each output gradient into its window of the input with atomics. Shrinking, an
input element lies in one window (sizes that divide) or in two per dimension at a window border
(sizes that do not); growing, it feeds many outputs. Each case runs the backward 20 times on one
input and one output gradient drawn once from a fixed seed and counts the distinct input gradients
(bitwise, by hash of the bytes). Prints one JSON line per case (adaptive_pool2d_sizes.h200.jsonl).
"""
import hashlib
import json
import torch
import torch.nn.functional as F

# name, input shape, output size, dtype, channels_last
CASES = [
    ("24x24 -> 4x4 (divides)", (64, 64, 24, 24), (4, 4), torch.float32, False),
    ("64x64 -> 7x7", (32, 256, 64, 64), (7, 7), torch.float32, False),
    ("56x56 -> 6x6", (32, 256, 56, 56), (6, 6), torch.float32, False),
    ("60x60 -> 7x7 bf16", (32, 256, 60, 60), (7, 7), torch.bfloat16, False),
    ("100x100 -> 3x3", (16, 256, 100, 100), (3, 3), torch.float32, False),
    ("13x13 -> 6x6", (64, 256, 13, 13), (6, 6), torch.float32, False),
    ("33x33 -> 32x32 (barely shrinks)", (32, 128, 33, 33), (32, 32), torch.float32, False),
    ("64x64 -> 7x7 channels_last", (32, 256, 64, 64), (7, 7), torch.float32, True),
    ("16x16 -> 64x64 (grows)", (32, 64, 16, 16), (64, 64), torch.float32, False),
    ("7x7 -> 13x13 (grows)", (64, 256, 7, 7), (13, 13), torch.float32, False),
]

def digest(t):
    return hashlib.sha256(t.detach().float().cpu().numpy().tobytes()).hexdigest()

g = torch.Generator(device="cuda").manual_seed(0)
for name, shape, out, dtype, cl in CASES:
    x = torch.randn(shape, device="cuda", generator=g, dtype=torch.float32).to(dtype)
    if cl:
        x = x.contiguous(memory_format=torch.channels_last)
    x.requires_grad_(True)
    gy = torch.randn((shape[0], shape[1], *out), device="cuda", generator=g, dtype=torch.float32).to(dtype)
    seen = set()
    for _ in range(20):
        x.grad = None
        F.adaptive_avg_pool2d(x, out).backward(gy)
        torch.cuda.synchronize()
        seen.add(digest(x.grad))
    print(json.dumps({"case": name, "shape": shape, "output": out, "dtype": str(dtype), "channels_last": cl, "runs": 20, "distinct": len(seen), "torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
