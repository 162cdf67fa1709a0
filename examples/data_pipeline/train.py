"""Distributed training entry point for the text classifier in dataset.py."""
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

from dataset import TextFolder

# Fixed before anything reads it: NCCL only looks at this when a communicator is created.
os.environ.setdefault("NCCL_ALGO", "Ring")


def collate(batch):
    tokens, labels = zip(*batch)
    return pad_sequence(list(tokens), batch_first=True), torch.tensor(labels)


def warm_cache(paths):
    # Reads every file once so the first epoch is not I/O bound. The byte counts come back in
    # completion order, and the running total depends on it.
    total = 0.0
    with ThreadPoolExecutor(16) as pool:
        for fut in as_completed([pool.submit(os.path.getsize, p) for p in paths]):
            total += fut.result() / 2**20
    return total


def main(seed=None):
    # A different seed per run unless one is passed on the command line.
    seed = seed if seed is not None else int(time.time())
    torch.manual_seed(seed)
    # Too late for this interpreter: hashing was salted when Python started.
    os.environ["PYTHONHASHSEED"] = str(seed)

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    # Set after the process group exists: if a communicator was already created, it keeps the
    # algorithm it started with. Tree is also the one choice Megatron refuses for bit-exact runs.
    os.environ["NCCL_ALGO"] = "Tree"

    data = TextFolder("/data/corpus", rank, world)
    print(f"cached {warm_cache(data.paths):.1f} MiB")
    # Four workers and a shuffle, both driven by torch's global generator: the order and the
    # worker seeds move whenever anything else draws from it first.
    loader = DataLoader(data, batch_size=32, shuffle=True, num_workers=4, collate_fn=collate)

    model = torch.nn.Sequential(torch.nn.Embedding(256, 64), torch.nn.Flatten(), torch.nn.LazyLinear(len(data.labels))).cuda()
    model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(3):
        for tokens, labels in loader:
            loss = F.cross_entropy(model(tokens.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(epoch, loss.item())


if __name__ == "__main__":
    main()
