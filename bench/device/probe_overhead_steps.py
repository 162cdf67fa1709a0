"""The probe's overhead toggled inside one process, step by step (issue 12: <= 7 % for `modules`
inside its window, <= 1 % outside it), on examples/torch_moe/train.py's model and training step.

    PYTHONPATH=python/sitecustomize python3 bench/device/probe_overhead_steps.py --mode modules|ops [--steps N] [--out FILE]

The probe is installed once; between two steps its window is moved so that the next step is recorded
(`in`) or not (`out`: the probe installed, its window past the step). The two take turns step by
step, the order flipping every pair, so that a drift of the machine (clocks, other tenants, the
allocator) reaches both alike; two separate processes already differ by a few per cent. The step
is train.py's (forward, loss, zero_grad, backward, clip_grad_norm_, optimizer.step, then
torch.cuda.synchronize), timed as train.py times it. The first WARMUP steps of each are dropped.
Prints and writes (--out) one JSON object: per configuration the median, min, 10th percentile and
mean step time, and the overhead of `in` over `out` by the median and by the min.
"""
import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
spec = importlib.util.spec_from_file_location("torch_moe_train", os.path.join(ROOT, "examples", "torch_moe", "train.py"))
train = importlib.util.module_from_spec(spec)
spec.loader.exec_module(train)


def summary(times):
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "min_ms": round(ordered[0], 3),
        "p10_ms": round(ordered[len(ordered) // 10], 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
        "steps": len(ordered),
    }


def timed_step(options):
    """The MoE toy's model and optimizer (seed 0) and one training step of it on `options.device`,
    with data drawn from its own generator (seed 1); the step returns its wall time in ms, the
    device synchronised."""
    torch.manual_seed(0)
    model = train.MoE().to(options.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.Generator().manual_seed(1)
    cuda = options.device == "cuda"

    def step():
        tokens = torch.randint(0, 1024, (options.batch, options.seq + 1), generator=data).to(options.device)
        start = time.perf_counter()
        logits = model(tokens[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if cuda:
            torch.cuda.synchronize()
        return (time.perf_counter() - start) * 1e3

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("modules", "ops"), default="modules")
    parser.add_argument("--steps", type=int, default=150, help="timed steps per configuration")
    parser.add_argument("--warmup", type=int, default=10, help="steps of each configuration dropped first")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--out", default="")
    options = parser.parse_args()
    import bitexact_probe

    scratch = tempfile.mkdtemp(prefix="bitexact-overhead-")
    install = bitexact_probe.install if options.mode == "modules" else bitexact_probe.install_ops
    probe = install(torch, scratch)
    step = timed_step(options)
    cuda = options.device == "cuda"

    def window(recording):
        # Between steps no module runs: the probe's own step-boundary code moves its hooks in or out.
        probe.low, probe.high = (1, float("inf")) if recording else (10**9, 10**9)
        probe.track_modules()

    times = {"in": [], "out": []}
    for i in range(options.warmup + options.steps):
        for config in (("in", "out") if i % 2 == 0 else ("out", "in")):
            window(config == "in")
            elapsed = step()
            if i >= options.warmup:
                times[config].append(elapsed)
    window(False)
    probe.close()
    records = 0
    for name in os.listdir(scratch):
        with open(os.path.join(scratch, name)) as f:
            records += sum(1 for _ in f)
    shutil.rmtree(scratch, ignore_errors=True)
    configs = {c: summary(v) for c, v in times.items()}
    report = {
        "mode": options.mode,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "torch": torch.__version__,
        "batch": options.batch,
        "seq": options.seq,
        "records_per_recorded_step": round(records / (options.warmup + options.steps), 1),
        "configs": configs,
        "overhead_pct": {
            "by_median": round(100 * (configs["in"]["median_ms"] / configs["out"]["median_ms"] - 1), 2),
            "by_min": round(100 * (configs["in"]["min_ms"] / configs["out"]["min_ms"] - 1), 2),
        },
        "step_ms": {c: [round(t, 3) for t in v] for c, v in times.items()},
    }
    text = json.dumps(report, indent=1)
    if options.out:
        with open(options.out, "w") as f:
            f.write(text + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "step_ms"}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
