"""Triton kernels for a token-level loss and MoE token dispatch.

Deterministic mode is off here. `bitexact check` flags the float atomic (BX401), the slot handed
out by an atomic (BX402) and the autotuned reduction (BX403, information while the mode is off).
"""
import torch
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK": 512}, num_warps=4), triton.Config({"BLOCK": 2048}, num_warps=8)]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def loss_sum_kernel(loss_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    loss = tl.load(loss_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    # Every program adds its block sum into one scalar: the order of those adds is up to the GPU.
    tl.atomic_add(total_ptr, tl.sum(loss, axis=0))


@triton.jit
def dispatch_kernel(expert_ptr, fill_ptr, slots_ptr, n, CAPACITY: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    expert = tl.load(expert_ptr + offs, mask=mask, other=0)
    # The old fill level becomes the token's row in its expert buffer, so rows depend on scheduling.
    row = tl.atomic_add(fill_ptr + expert, 1, mask=mask)
    tl.store(slots_ptr + expert * CAPACITY + row, offs, mask=mask & (row < CAPACITY))


@triton.jit
def expert_histogram_kernel(expert_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    expert = tl.load(expert_ptr + offs, mask=offs < n, other=0)
    # Integer counts come out the same in any order: not reported.
    tl.atomic_add(counts_ptr + expert, 1, mask=offs < n)


def mean_loss(per_token: torch.Tensor) -> torch.Tensor:
    total = torch.zeros(1, device=per_token.device, dtype=torch.float32)
    n = per_token.numel()
    loss_sum_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](per_token, total, n)
    return total / n
