"""What the probe's modules mode costs per step on CPU torch, and where (issue 12's overhead item).

    PYTHONPATH=python/sitecustomize python3 bench/probe_overhead_cpu.py [--steps N]

Runs examples/torch_moe/train.py's model (shrunk to CPU size) with the probe off and with the modules
mode recording every step, in interleaved rounds, and prints one JSON object: the median step time
of each, the records per step, the aten ops the probe dispatches per step and per record (counted
by a dispatch mode that sees every op, the probe's digests included), and the probe's time per
record. Op counts are what matter on a GPU: each op costs a dispatch on the host, and each op that
is not a view launches at least one kernel.
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("moe", os.path.join(HERE, "..", "examples", "torch_moe", "train.py"))
moe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(moe)


class CountOps(TorchDispatchMode):
    def __init__(self):
        TorchDispatchMode.__init__(self)
        self.count = 0
        self.kernels = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # A view only changes metadata; every other op launches work (a kernel on a GPU).
        self.count += 1
        self.kernels += not func.is_view
        return func(*args, **(kwargs or {}))


def step(model, optimizer, tokens):
    logits = model(tokens[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = moe.MoE(vocab=256, dim=32, heads=2, layers=2, experts=4, top_k=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 256, (2, 17))
    import bitexact_probe

    probe = bitexact_probe.install(torch, tempfile.mkdtemp(prefix="bitexact-overhead-"))
    times = {"off": [], "modules": []}
    off_window = (10**9, 10**9)
    for _ in range(options.rounds):
        for mode in ("off", "modules"):
            # The probe stays installed; outside its window it records nothing (the 'off' rows).
            probe.low, probe.high = off_window if mode == "off" else (1, float("inf"))
            for _ in range(options.steps):
                start = time.perf_counter()
                step(model, optimizer, tokens)
                times[mode].append((time.perf_counter() - start) * 1e6)
    counts = {}
    for mode in ("off", "modules"):
        probe.low, probe.high = off_window if mode == "off" else (1, float("inf"))
        before = probe.sequence
        with CountOps() as counter:
            step(model, optimizer, tokens)
        counts[mode] = (counter.count, probe.sequence - before, counter.kernels)
    probe.close()
    off, on = statistics.median(times["off"]), statistics.median(times["modules"])
    records = counts["modules"][1]
    probe_ops = counts["modules"][0] - counts["off"][0]
    probe_kernels = counts["modules"][2] - counts["off"][2]
    print(json.dumps({
        "torch": torch.__version__,
        "steps_per_mode": len(times["off"]),
        "step_us_off": round(off, 1),
        "step_us_modules": round(on, 1),
        "records_per_step": records,
        "probe_ops_per_step": probe_ops,
        "probe_ops_per_record": round(probe_ops / records, 2),
        "probe_kernel_ops_per_step": probe_kernels,
        "probe_kernel_ops_per_record": round(probe_kernels / records, 2),
        "probe_us_per_record": round((on - off) / records, 2),
    }))


if __name__ == "__main__":
    sys.exit(main())
