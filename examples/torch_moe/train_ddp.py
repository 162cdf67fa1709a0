"""train.py's mixture-of-experts model trained with data parallelism (DistributedDataParallel): each
rank draws its own batches, and DDP all-reduces the gradients in the backward, so what one rank's
local ops do reaches every rank at that all-reduce.

    python -m torch.distributed.run --nproc-per-node 2 train_ddp.py [--steps N] [--tiny]

The backend is nccl when every rank has a GPU of its own, else gloo (CPU tensors, or CUDA tensors
when ranks share one GPU: NCCL refuses two ranks on one device). NVLink multicast stays off
(NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1 unless set).

Rehearsal of "one rank's local op diverges": with BITEXACT_REHEARSAL_RANK=r, rank r adds each token
row's expert outputs in the combine in an order drawn afresh in every run (seeds from os.urandom),
inside one op (bitexact_rehearsal::shuffled_index_add, an index_add_ on a permutation), which is what
float atomics do inside index_add_ on a GPU; the other ranks add in the fixed order with index_add_. On a
CPU nothing else differs between runs, so this is a deliberate injection, not a finding: the other
ranks' records must stay equal until the gradient all-reduce carries rank r's difference over.

Rank 0 logs one JSON line per step: step, loss (its own batch's), grad_norm, step_ms.
"""
import argparse
import gc
import json
import os
import random
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from train import Experts, MoE

for _key in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
    os.environ.setdefault(_key, "0" if _key == "NCCL_NVLS_ENABLE" else "1")


@torch.library.custom_op("bitexact_rehearsal::shuffled_index_add", mutates_args=())
def shuffled_index_add(tokens: torch.Tensor, rows: torch.Tensor, contributions: torch.Tensor, seed: int) -> torch.Tensor:
    """zeros_like(tokens).index_add_(0, rows, contributions), adding each row's contributions in an
    order drawn from `seed`: one op whose summation order changes from run to run, as an atomic
    index_add_ on a GPU does (an op of its own, so the probe sees the op, not the order's draw)."""
    order = torch.randperm(rows.numel(), generator=torch.Generator().manual_seed(seed)).to(rows.device)
    return torch.zeros_like(tokens).index_add_(0, rows[order], contributions[order])


@shuffled_index_add.register_fake
def _(tokens, rows, contributions, seed):
    return torch.empty_like(tokens)


def _shuffled_index_add_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[1])


def _shuffled_index_add_backward(ctx, grad):
    (rows,) = ctx.saved_tensors
    return None, None, grad.index_select(0, rows), None


shuffled_index_add.register_autograd(_shuffled_index_add_backward, setup_context=_shuffled_index_add_setup)


class RehearsalExperts(Experts):
    """Experts whose combine, given `seeds` (a random.Random), adds the contributions in an order drawn afresh per call."""

    seeds = None

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        weights, chosen = torch.topk(F.softmax(self.router(tokens), dim=-1), self.top_k, dim=-1)
        rows_all, outputs = [], []
        for e in range(self.up.shape[0]):
            rows, slot = torch.nonzero(chosen == e, as_tuple=True)
            if rows.numel() == 0:
                continue
            hidden = F.gelu(tokens[rows] @ self.up[e]) @ self.down[e]
            rows_all.append(rows)
            outputs.append(hidden * weights[rows, slot].unsqueeze(-1))
        rows, contributions = torch.cat(rows_all), torch.cat(outputs)
        # Each row receives top_k contributions; with three or more, their order changes the sum's bits.
        if self.seeds is not None:
            combined = shuffled_index_add(tokens, rows, contributions, self.seeds.getrandbits(62))
        else:
            combined = torch.zeros_like(tokens).index_add_(0, rows, contributions)
        return combined.reshape_as(x)


def setup(requested):
    """Process group and device: nccl when every rank has its own GPU, else gloo."""
    local = int(os.environ.get("LOCAL_RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", local % torch.cuda.device_count()) if cuda else torch.device("cpu")
    backend = requested or ("nccl" if cuda and torch.cuda.device_count() >= world else "gloo")
    if cuda:
        torch.cuda.set_device(device)
    dist.init_process_group(backend)
    return device, backend


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--backend", choices=["gloo", "nccl"], default=None)
    parser.add_argument("--tiny", action="store_true", help="a model small enough for a CPU test: 1 layer, dim 16, 4 experts, top 3")
    args = parser.parse_args()
    device, backend = setup(args.backend)
    rank = dist.get_rank()
    shape = dict(vocab=64, dim=16, heads=2, layers=1, experts=4, top_k=3) if args.tiny else {}
    torch.manual_seed(0)
    model = MoE(**shape).to(device)
    for block in model.blocks:
        block.moe.__class__ = RehearsalExperts
        if os.environ.get("BITEXACT_REHEARSAL_RANK") == str(rank):
            block.moe.seeds = random.Random(os.urandom(16))
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    vocab = model.embed.num_embeddings
    data = torch.Generator().manual_seed(1 + rank)  # each rank its own shard of the data
    for step in range(1, args.steps + 1):
        tokens = torch.randint(0, vocab, (args.batch, args.seq + 1), generator=data).to(device)
        start = time.perf_counter()
        logits = ddp(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        step_ms = (time.perf_counter() - start) * 1e3
        if rank == 0:
            print(json.dumps({"step": step, "loss": loss.item(), "grad_norm": grad_norm.item(), "step_ms": round(step_ms, 3), "backend": backend}), flush=True)
    # DDP's reducer goes first, while the process group is still registered: were the reducer's
    # reference the group's last, the group would be destroyed with the GIL held, waiting for gloo's
    # threads, one of which may need the GIL to free a finished work (a hang at exit, seen under load).
    # destroy_process_group releases the GIL while it waits (torch >= 2.8).
    del ddp
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
