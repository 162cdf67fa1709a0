"""Where the modules mode's time goes on a GPU (issue 12), by leaving parts of the probe out.

    PYTHONPATH=python/sitecustomize python3 bench/device/probe_parts_gpu.py [--steps N] [--out FILE] [--profile]

One process, examples/torch_moe/train.py's model and step (as probe_overhead_steps.py times it). The
configurations take turns step by step, the order rotating every round, each adding a part of the
probe to the one before:
  bare     no probe: torch.Tensor.backward and the optimizers' global hooks as torch has them
  out      the probe installed, its window past the step (no module hooks): `bare` to `out` is
           what the probe costs outside its window
  hooks    the module hooks registered, recording nothing (Probe.record and record_many do nothing)
  nograd   records made as in `records`, but no gradient hook registered on the module outputs (no
           grad-output records): `nograd` to `records` is what the gradient hooks cost in the backward
  records  records made (occurrences, tuples, gradient hooks, the flush and its lines), but the
           digests replaced by one cached tensor (no kernel per record, none for the optimizer)
  lone     the module outputs', gradients' and loss's digests real, the optimizer's still replaced
  full     the whole modules mode
The differences between neighbours are what each part costs. With --profile, cProfile of `full`
steps (the probe's functions by their own time) and torch.profiler's per-op host and device times
of one `full` and one `out` step follow. Prints and writes (--out) one JSON object.
"""
import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_overhead_steps import timed_step  # noqa: E402  (the same model, data and timed step)

CONFIGS = ("bare", "out", "hooks", "nograd", "records", "lone", "full")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100, help="timed steps per configuration")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--out", default="")
    options = parser.parse_args()
    import bitexact_probe
    import bitexact_probe_digest

    import torch.optim.optimizer as optimizers

    scratch = tempfile.mkdtemp(prefix="bitexact-parts-")
    bare_backward = torch.Tensor.backward
    probe = bitexact_probe.install(torch, scratch)
    probed_backward = torch.Tensor.backward
    optimizer_hooks = [(d, dict(d)) for d in (optimizers._global_optimizer_pre_hooks, optimizers._global_optimizer_post_hooks)]
    step = timed_step(options)
    cuda = options.device == "cuda"

    # The optimizer's batch: digest_many before the step buffer (bitexact_probe_sums.py), add_batch since.
    try:
        import bitexact_probe_sums

        batch_owner, batch_name = bitexact_probe_sums.DeviceSums, "add_batch"
    except ImportError:
        batch_owner, batch_name = bitexact_probe_digest, "digest_many"
    real_products, real_batch = bitexact_probe_digest.products, getattr(batch_owner, batch_name)
    fake_one = torch.zeros((), dtype=torch.int64, device=options.device)
    fakes = {}

    def fake_products(torch_, tensor, cache):
        return fake_one

    def fake_many(torch_, tensors, cache):
        n = len(tensors)
        if n not in fakes:
            fakes[n] = torch.zeros(n, dtype=torch.int64, device=options.device)
        return fakes[n]

    def fake_add_batch(sums, tensors, cells):
        out, start = sums._take(1)
        for cell in cells:
            cell.append(("value", start))

    fake_batch = fake_add_batch if batch_name == "add_batch" else fake_many

    def nothing(*args, **kwargs):
        return None

    def configure(config):
        # Between steps: the window and the parts left out.
        for name in ("record", "record_many", "_output"):
            probe.__dict__.pop(name, None)
        if config == "hooks":
            probe.record = nothing
            probe.record_many = nothing
        if config == "nograd":
            probe._output = lambda site, phase, tensor, index: probe.record("module-output", phase, site[0], tensor, index, site[1])
        bitexact_probe_digest.products = fake_products if config in ("nograd", "records") else real_products
        setattr(batch_owner, batch_name, fake_batch if config in ("nograd", "records", "lone") else real_batch)
        probe.low, probe.high = (10**9, 10**9) if config in ("bare", "out") else (1, float("inf"))
        probe.track_modules()
        torch.Tensor.backward = bare_backward if config == "bare" else probed_backward
        for hooks, saved in optimizer_hooks:
            hooks.clear()
            if config != "bare":
                hooks.update(saved)

    times = {c: [] for c in CONFIGS}
    for i in range(options.warmup + options.steps):
        order = CONFIGS[i % len(CONFIGS):] + CONFIGS[: i % len(CONFIGS)]
        for config in order:
            configure(config)
            elapsed = step()
            if i >= options.warmup:
                times[config].append(elapsed)
    medians = {c: statistics.median(v) for c, v in times.items()}
    report = {
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "torch": torch.__version__,
        "steps_per_config": options.steps,
        "median_ms": {c: round(m, 3) for c, m in medians.items()},
        "min_ms": {c: round(min(v), 3) for c, v in times.items()},
        "p10_ms": {c: round(sorted(v)[len(v) // 10], 3) for c, v in times.items()},
        "p90_ms": {c: round(sorted(v)[(9 * len(v)) // 10], 3) for c, v in times.items()},
        "pct_of_bare": {c: round(100 * (m / medians["bare"] - 1), 2) for c, m in medians.items()},
        "full_vs_out_pct": round(100 * (medians["full"] / medians["out"] - 1), 2),
        "part_ms": {CONFIGS[k]: round(medians[CONFIGS[k]] - medians[CONFIGS[k - 1]], 3) for k in range(1, len(CONFIGS))},
    }
    if options.profile:
        configure("full")
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(30):
            step()
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(30)
        report["cprofile_full_30_steps"] = text.getvalue().splitlines()[:60]
        from torch.profiler import ProfilerActivity, profile

        for config in ("full", "out"):
            configure(config)
            step()
            with profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])) as prof:
                step()
            events = prof.key_averages()
            rows = sorted(events, key=lambda e: -e.self_cpu_time_total)[:25]
            report["torch_profile_" + config] = {
                "self_cpu_us_total": round(sum(e.self_cpu_time_total for e in events), 1),
                "device_us_total": round(sum(getattr(e, "self_device_time_total", 0) for e in events), 1),
                "kernel_launches": sum(e.count for e in events if e.key in ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx")),
                "top_self_cpu": [[e.key, e.count, round(e.self_cpu_time_total, 1), round(getattr(e, "self_device_time_total", 0), 1)] for e in rows],
            }
    configure("out")
    probe.close()
    shutil.rmtree(scratch, ignore_errors=True)
    text = json.dumps(report, indent=1)
    if options.out:
        with open(options.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
