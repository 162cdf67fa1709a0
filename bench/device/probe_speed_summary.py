"""Summarises bench/device/probe_speed.sh's results in $D: summary.json (and printed)."""
import glob
import json
import os
import statistics
import sys

import torch

D = os.environ["D"]
WARMUP = 5


def stats(times):
    times = sorted(times)
    return {"median_ms": round(statistics.median(times), 3), "min_ms": round(times[0], 3), "steps": len(times)}


report = {
    "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
    "torch": torch.__version__,
    "inproc": {},
    "cross": {},
}
for path in sorted(glob.glob(os.path.join(D, "inproc-*.json"))):
    r = json.load(open(path))
    name = os.path.basename(path)[len("inproc-") : -len(".json")]
    report["inproc"][name] = {
        "in": r["configs"]["in"]["median_ms"],
        "out": r["configs"]["out"]["median_ms"],
        "pct_by_median": r["overhead_pct"]["by_median"],
        "pct_by_min": r["overhead_pct"]["by_min"],
        "records_per_step": r["records_per_recorded_step"],
    }
# Pooled in-process: every rep's `in` and `out` steps of a tree together.
for mode in ("modules", "ops"):
    for tree in ("old", "new"):
        ins, outs = [], []
        for path in glob.glob(os.path.join(D, "inproc-%s-%s-*.json" % (mode, tree))):
            r = json.load(open(path))
            ins += r["step_ms"]["in"]
            outs += r["step_ms"]["out"]
        if ins:
            a, b = stats(ins), stats(outs)
            report["inproc"]["%s-%s-pooled" % (mode, tree)] = {
                "in": a, "out": b,
                "pct_by_median": round(100 * (a["median_ms"] / b["median_ms"] - 1), 2),
                "pct_by_min": round(100 * (a["min_ms"] / b["min_ms"] - 1), 2),
            }
configs = {}
for config in sys.argv[1:]:
    steps = []
    for r in range(1, int(os.environ["ROUNDS"]) + 1):
        lines = [json.loads(l) for l in open(os.path.join(D, "runs", "%s-%d.jsonl" % (config, r))) if l.startswith("{")]
        steps += [l["step_ms"] for l in lines if l["step"] > WARMUP]
    configs[config] = stats(steps)
off = configs["off"]
report["cross"] = {
    "configs": configs,
    "pct_vs_off_by_median": {c: round(100 * (v["median_ms"] / off["median_ms"] - 1), 2) for c, v in configs.items() if c != "off"},
    "pct_vs_off_by_min": {c: round(100 * (v["min_ms"] / off["min_ms"] - 1), 2) for c, v in configs.items() if c != "off"},
}
with open(os.path.join(D, "summary.json"), "w") as f:
    json.dump(report, f, indent=1)
print(json.dumps(report, indent=1))
