"""Does avg_pool3d's CUDA backward vary run to run when its windows do not overlap? (BX125)

The backward kernel adds into the input gradient with atomics only when some window overlaps the
next one (a stride smaller than the kernel in some dimension); with kernel_size <= stride every
input element lies in at most one window and gets its gradient from one thread. Each case runs the
backward 20 times on one input and one output gradient drawn once from a fixed seed, counts the
distinct input gradients (bitwise, by hash of the bytes), and tries the call once more under
torch.use_deterministic_algorithms(True). Prints one JSON line per case.
"""
import hashlib
import json
import torch
import torch.nn.functional as F

# name, input shape, kernel_size, stride, padding, ceil_mode, dtype
CASES = [
    ("k2 s2", (8, 64, 16, 64, 64), 2, 2, 0, False, torch.float32),
    ("k2 stride omitted", (8, 64, 16, 64, 64), 2, None, 0, False, torch.float32),
    ("k(1,2,2) s(1,2,2)", (8, 64, 16, 64, 64), (1, 2, 2), (1, 2, 2), 0, False, torch.float32),
    ("k(1,2,2) s(1,2,2) bf16", (8, 64, 16, 64, 64), (1, 2, 2), (1, 2, 2), 0, False, torch.bfloat16),
    ("k2 s2 p1 odd ceil_mode", (4, 32, 15, 63, 63), 2, 2, 1, True, torch.float32),
    ("k2 s3", (8, 64, 16, 64, 64), 2, 3, 0, False, torch.float32),
    ("k3 s2 p1 overlap", (8, 64, 16, 64, 64), 3, 2, 1, False, torch.float32),
    ("k(2,3,3) s2 overlap HW", (8, 64, 16, 64, 64), (2, 3, 3), 2, 0, False, torch.float32),
]

def digest(t):
    return hashlib.sha256(t.detach().float().cpu().numpy().tobytes()).hexdigest()

g = torch.Generator(device="cuda").manual_seed(0)
for name, shape, k, s, p, ceil, dtype in CASES:
    x = torch.randn(shape, device="cuda", generator=g, dtype=torch.float32).to(dtype).requires_grad_(True)
    out_shape = F.avg_pool3d(x.detach(), k, s, p, ceil).shape
    gy = torch.randn(out_shape, device="cuda", generator=g, dtype=torch.float32).to(dtype)
    seen = set()
    for _ in range(20):
        x.grad = None
        F.avg_pool3d(x, k, s, p, ceil).backward(gy)
        torch.cuda.synchronize()
        seen.add(digest(x.grad))
    torch.use_deterministic_algorithms(True)
    try:
        F.avg_pool3d(x, k, s, p, ceil).backward(gy)
        raises = None
    except RuntimeError as e:
        raises = str(e).split("\n")[0][:90]
    torch.use_deterministic_algorithms(False)
    print(json.dumps({"case": name, "shape": shape, "dtype": str(dtype), "runs": 20, "distinct": len(seen), "deterministic_mode_raises": raises, "torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
