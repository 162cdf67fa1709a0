"""Ground the Triton rules (BX401 float atomics, BX402 returned slots) on a real GPU.

Runs each kind of tiny Triton kernel several times on the same inputs and records how many distinct
results it gave: a float atomic_add into few slots, an integer counter atomic_add whose result is
unused, and an atomic_add whose returned old value picks an output slot (compaction). Prints JSON
and writes $OUT/triton_kinds.json when OUT is set.
"""
import json
import os
import sys

import torch
import triton
import triton.language as tl

RUNS = int(os.environ.get("RUNS", "10"))
N = 1_000_000
SLOTS = 1000
BLOCK = 1024


@triton.jit
def float_atomic_kernel(values, index, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(values + offs, mask=mask)
    i = tl.load(index + offs, mask=mask)
    tl.atomic_add(out + i, v, mask=mask)


@triton.jit
def int_counter_kernel(index, counts, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    i = tl.load(index + offs, mask=mask)
    tl.atomic_add(counts + i, 1, mask=mask)


@triton.jit
def slot_kernel(values, counter, out, n, BLOCK: tl.constexpr):
    # Stream compaction: each kept element takes the next free slot from a shared counter.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(values + offs, mask=mask)
    keep = mask & (v > 0)
    slot = tl.atomic_add(counter + tl.zeros_like(offs), 1, mask=keep)
    tl.store(out + slot, v, mask=keep)


def distinct(fn):
    seen = set()
    for _ in range(RUNS):
        result = fn()
        torch.cuda.synchronize()
        seen.add(result.cpu().numpy().tobytes())
    return len(seen)


def main():
    torch.manual_seed(0)
    dev = "cuda"
    values = torch.randn(N, device=dev)
    index = torch.randint(0, SLOTS, (N,), device=dev, dtype=torch.int32)
    grid = (triton.cdiv(N, BLOCK),)

    def float_atomic():
        out = torch.zeros(SLOTS, device=dev)
        float_atomic_kernel[grid](values, index, out, N, BLOCK=BLOCK)
        return out

    def int_counter():
        counts = torch.zeros(SLOTS, device=dev, dtype=torch.int32)
        int_counter_kernel[grid](index, counts, N, BLOCK=BLOCK)
        return counts

    def slot_order():
        counter = torch.zeros(1, device=dev, dtype=torch.int32)
        out = torch.zeros(N, device=dev)
        slot_kernel[grid](values, counter, out, N, BLOCK=BLOCK)
        return out

    def slot_set():
        # The same compaction, compared as a set: which values were kept does not vary.
        return torch.sort(slot_order()).values

    result = {
        "torch": torch.__version__,
        "triton": triton.__version__,
        "device": torch.cuda.get_device_name(0),
        "runs": RUNS,
        "float_atomic_add_1e6_into_1e3_distinct": distinct(float_atomic),
        "int32_counter_atomic_add_unused_result_distinct": distinct(int_counter),
        "returned_slot_compaction_distinct": distinct(slot_order),
        "returned_slot_compaction_sorted_distinct": distinct(slot_set),
    }
    torch.use_deterministic_algorithms(True)
    result["float_atomic_add_under_deterministic_mode_distinct"] = distinct(float_atomic)
    return result


if __name__ == "__main__":
    out = main()
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "triton_kinds.json"), "w") as f:
            json.dump(out, f, indent=1)
