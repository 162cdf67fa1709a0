"""Ground BX403 (timed @triton.autotune choices) on a real GPU: which config changes change the bits.

Runs each kernel, on the same inputs, under every config an autotuner might pick and counts the
distinct results across configs:
- a matmul that loops tl.dot over K into one fp32 accumulator, under BLOCK_K, BLOCK_M/BLOCK_N,
  num_warps and num_stages choices;
- a row reduction with tl.sum, under BLOCK and num_warps choices;
- a split-K matmul whose K slices meet in a float tl.atomic_add, under SPLIT_K choices.
Prints JSON and writes $OUT/triton_configs.json when OUT is set.
"""
import itertools
import json
import os

import torch
import triton
import triton.language as tl

M = N = 256
K = 4096


@triton.jit
def matmul_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        x = tl.load(a + rm[:, None] * K + rk[None, :])
        y = tl.load(b + rk[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def split_k_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    ps = tl.program_id(2)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(ps * BLOCK_K, K, BLOCK_K * SPLIT_K):
        rk = k + tl.arange(0, BLOCK_K)
        acc += tl.dot(tl.load(a + rm[:, None] * K + rk[None, :]), tl.load(b + rk[:, None] * N + rn[None, :]))
    tl.atomic_add(c + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def row_sum_kernel(x, out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out + row, tl.sum(acc, axis=0))


def distinct(outputs):
    return len({o.cpu().numpy().tobytes() for o in outputs})


def main():
    torch.manual_seed(0)
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__}
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        outs = {}
        for bm, bn, bk, warps, stages in itertools.product((32, 64), (32, 64), (16, 32, 64, 128), (1, 2, 4, 8), (2, 3)):
            c = torch.empty(M, N, device="cuda", dtype=torch.float32)
            matmul_kernel[(M // bm, N // bn)](a, b, c, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
            outs[(bm, bn, bk, warps, stages)] = c
        results[f"dot K loop {str(dtype).split('.')[-1]}: BLOCK_M x BLOCK_N x BLOCK_K x num_warps x num_stages"] = f"{distinct(outs.values())} distinct of {len(outs)} configs"
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    outs = []
    for split in (1, 2, 4, 8):
        c = torch.zeros(M, N, device="cuda", dtype=torch.float32)
        split_k_kernel[(M // 64, N // 64, split)](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, SPLIT_K=split)
        outs.append(c)
    results["split-K dot with float atomic_add: SPLIT_K 1, 2, 4, 8"] = f"{distinct(outs)} distinct of {len(outs)} configs"
    x = torch.randn(512, 65536, device="cuda", dtype=torch.float32)
    for label, configs in (("BLOCK", [(blk, 4) for blk in (256, 512, 1024, 2048)]), ("num_warps", [(1024, w) for w in (1, 2, 4, 8, 16)])):
        outs = []
        for blk, warps in configs:
            out = torch.empty(512, device="cuda", dtype=torch.float32)
            row_sum_kernel[(512,)](x, out, 65536, BLOCK=blk, num_warps=warps)
            outs.append(out)
        results[f"tl.sum row reduction: {label} varied"] = f"{distinct(outs)} distinct of {len(outs)} configs"
    # The same config twice: the kernels themselves are run-to-run stable.
    outs = []
    for _ in range(5):
        out = torch.empty(512, device="cuda", dtype=torch.float32)
        row_sum_kernel[(512,)](x, out, 65536, BLOCK=1024, num_warps=4)
        outs.append(out)
    results["tl.sum row reduction: one config, 5 runs"] = f"{distinct(outs)} distinct of 5 runs"
    text = json.dumps(results, indent=2)
    print(text)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "triton_configs.json"), "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
