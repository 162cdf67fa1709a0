"""Where the probe's modules mode spends its time per step, part by part, on CPU torch (issue 12).

    PYTHONPATH=python/sitecustomize python3 bench/probe_parts_cpu.py [--steps N] [--rounds R] [--model small|toy]

On a launch-bound GPU model the probe costs what its hooks cost the host (Python, and the dispatch
of every op it issues) plus the kernels its digests launch; CPU torch on tiny tensors shows the same
host costs without the GPU. The model is examples/torch_moe/train.py's, shrunk (`small`, the
default: op time is dispatch time) or as the toy runs on the H200 (`toy`: slow, CPU arithmetic).

Three configurations run in interleaved rounds in one process (the probe stays installed; its
window moves): `off` (window past every step), `null` (hooks of the same number and places that do
nothing: what registering them costs torch itself) and `modules` (recording every step). Step times
are CPU time of the process (time.process_time, one torch thread), which other processes' load
disturbs less than wall time. Then, with the modules mode recording, each hook of the probe is timed
(thread CPU time, exclusive of the hooks nested in it) and each aten op it issues is counted and
charged to the innermost hook running, in one more step each (counting with a dispatch mode costs
time, so it is not the timed step). Prints one JSON object.
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
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("moe", os.path.join(HERE, "..", "examples", "torch_moe", "train.py"))
moe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(moe)

from probe_overhead_cpu import step  # noqa: E402 (the same training step as the overhead bench)
import bitexact_probe  # noqa: E402 (PYTHONPATH=python/sitecustomize)
import bitexact_probe_base  # noqa: E402
import bitexact_probe_digest  # noqa: E402
import bitexact_probe_sums  # noqa: E402

# The probe's entry points and helpers timed as parts, by the name they have where they are looked up
# (a name a version of the probe lacks is skipped).
PARTS = [
    (bitexact_probe.Probe, "forward_pre", "forward_pre hook"),
    (bitexact_probe.Probe, "forward", "forward hook"),
    (bitexact_probe.Probe, "before_backward", "loss (Tensor.backward)"),
    (bitexact_probe.Probe, "before_step", "optimizer pre hook"),
    (bitexact_probe.Probe, "after_step", "optimizer post hook"),
    (bitexact_probe.Probe, "flush", "flush (step boundary)"),
    (bitexact_probe.Probe, "record", "record() glue"),
    (bitexact_probe.Probe, "record_many", "record_many() glue"),
    (bitexact_probe.Probe, "_new_record", "record dict"),
    (bitexact_probe_digest, "digest", "digest (one tensor)"),
    (bitexact_probe_digest, "products", "products (one tensor)"),
    (bitexact_probe_sums.DeviceSums, "sum_products", "sum_products (flush)"),
    (bitexact_probe_sums.DeviceSums, "add_batch", "add_batch (batch)"),
]


class Timer(object):
    def __init__(self):
        self.stack = []
        self.totals = {}
        self.on = False

    def wrap(self, label, function):
        def timed(*args, **kwargs):
            if not self.on:
                return function(*args, **kwargs)
            self.stack.append([label, time.thread_time_ns(), 0])
            try:
                return function(*args, **kwargs)
            finally:
                name, start, inner = self.stack.pop()
                elapsed = time.thread_time_ns() - start
                if self.stack:
                    self.stack[-1][2] += elapsed
                total = self.totals.setdefault(name, [0, 0])
                total[0] += 1
                total[1] += elapsed - inner

        return timed


class CountCalls(TorchFunctionMode):
    """Counts torch calls made from Python (each a Python-to-C++ crossing and an argument parse), per innermost part."""

    def __init__(self, timer):
        TorchFunctionMode.__init__(self)
        self.timer = timer
        self.counts = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        label = self.timer.stack[-1][0] if self.timer.stack else "model"
        self.counts[label] = self.counts.get(label, 0) + 1
        return func(*args, **(kwargs or {}))


class CountOps(TorchDispatchMode):
    """Counts aten ops, and those that are not views (a kernel each on a GPU), per innermost part."""

    def __init__(self, timer):
        TorchDispatchMode.__init__(self)
        self.timer = timer
        self.counts = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        label = self.timer.stack[-1][0] if self.timer.stack else "model"
        count = self.counts.setdefault(label, [0, 0])
        count[0] += 1
        count[1] += not func.is_view
        return func(*args, **(kwargs or {}))


def null_hooks():
    """Hooks where the probe puts its own, doing nothing: what torch charges for calling them."""
    import torch.nn.modules.module as modules
    import torch.optim.optimizer as optimizers

    def on_output(module, args, output):
        for tensor in bitexact_probe_base.tensors(output):
            if tensor.requires_grad and tensor.grad_fn is not None:
                tensor.register_hook(lambda grad: None)

    return [
        modules.register_module_forward_pre_hook(lambda module, args: None),
        modules.register_module_forward_hook(on_output),
        optimizers.register_optimizer_step_pre_hook(lambda *a: None),
        optimizers.register_optimizer_step_post_hook(lambda *a: None),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--model", choices=("small", "toy"), default="small")
    options = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    if options.model == "small":
        model, tokens = moe.MoE(vocab=256, dim=32, heads=2, layers=2, experts=4, top_k=2), torch.randint(0, 256, (2, 17))
    else:
        model, tokens = moe.MoE(), torch.randint(0, 1024, (8, 257))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    timer = Timer()
    for owner, name, label in PARTS:
        if hasattr(owner, name):
            setattr(owner, name, timer.wrap(label, getattr(owner, name)))
    probe = bitexact_probe.install(torch, tempfile.mkdtemp(prefix="bitexact-parts-"))
    never, always = (10**9, 10**9), (1, float("inf"))

    def window(span):
        probe.low, probe.high = span
        probe.track_modules()

    times = {"off": [], "null": [], "modules": []}
    step(model, optimizer, tokens)  # warm-up: first calls, caches
    # The configurations take turns step by step (the order rotating each round), so that a change
    # in the machine's load reaches all three alike.
    for i in range(options.rounds * options.steps):
        configs = list(times)
        for config in configs[i % 3 :] + configs[: i % 3]:
            window(always if config == "modules" else never)
            handles = null_hooks() if config == "null" else []
            start = time.process_time()
            step(model, optimizer, tokens)
            times[config].append((time.process_time() - start) * 1e6)
            for handle in handles:
                handle.remove()
    window(always)
    before = probe.sequence
    timer.on = True
    step(model, optimizer, tokens)
    records = probe.sequence - before
    timer.totals, parts = {}, {}
    for _ in range(options.steps):
        step(model, optimizer, tokens)
    # What one timed call costs the timer itself, charged to the part it times: taken off each part.
    empty = timer.wrap("empty", lambda: None)
    for _ in range(2000):
        empty()
    calls, ns = timer.totals.pop("empty")
    cost = ns / calls
    for label, (calls, ns) in timer.totals.items():
        parts[label] = {"calls": calls // options.steps, "us": round((ns - calls * cost) / 1e3 / options.steps, 1)}
    with CountOps(timer) as counter:
        step(model, optimizer, tokens)
    for label, (ops, kernels) in counter.counts.items():
        parts.setdefault(label, {}).update({"aten_ops": ops, "kernels": kernels})
    with CountCalls(timer) as calls:
        step(model, optimizer, tokens)
    timer.on = False
    for label, count in calls.counts.items():
        parts.setdefault(label, {})["torch_calls"] = count
    window(never)
    with CountOps(timer) as counter:
        step(model, optimizer, tokens)
    parts["model"]["aten_ops_off"] = counter.counts["model"][0]
    probe.close()
    medians = {c: round(statistics.median(v), 1) for c, v in times.items()}
    # The machine's load scales every time alike: each part also as a share of the step without the
    # probe, which compares across runs.
    for part in parts.values():
        if "us" in part:
            part["pct_of_step"] = round(100 * part["us"] / medians["off"], 2)
    print(json.dumps({
        "torch": torch.__version__,
        "model": options.model,
        "steps_per_config": len(times["off"]),
        "step_cpu_us": medians,
        "min_step_cpu_us": {c: round(min(v), 1) for c, v in times.items()},
        "overhead_us": {"null": round(medians["null"] - medians["off"], 1), "modules": round(medians["modules"] - medians["off"], 1)},
        "overhead_pct": {"null": round(100 * (medians["null"] / medians["off"] - 1), 1), "modules": round(100 * (medians["modules"] / medians["off"] - 1), 1)},
        "records_per_step": records,
        "timer_cost_us_per_call": round(cost / 1e3, 2),
        "parts_per_step": parts,
    }, indent=1))


if __name__ == "__main__":
    sys.exit(main())
