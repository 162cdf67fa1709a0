import json, os, sys
R = sys.argv[1]
def load(name):
    p = os.path.join(R, name)
    return json.load(open(p)) if os.path.exists(p) else None
print(open(os.path.join(R, "check.txt")).read() if os.path.exists(os.path.join(R, "check.txt")) else "")
for v in ("old", "new", "defer"):
    parts = load("parts-%s.json" % v)
    if parts:
        print(v, "parts median_ms", parts["median_ms"], "p10", parts["p10_ms"], "p90", parts["p90_ms"])
        print(v, "  part_ms", parts["part_ms"], "full_vs_out", parts["full_vs_out_pct"], "pct_of_bare", parts["pct_of_bare"])
        for k in ("torch_profile_full", "torch_profile_out"):
            if k in parts:
                t = parts[k]
                print(v, " ", k, "cpu_us", t["self_cpu_us_total"], "dev_us", t["device_us_total"], "launches", t["kernel_launches"])
    for mode in ("modules", "ops"):
        d = load("inproc-%s-%s.json" % (mode, v))
        if d:
            print(v, "inproc", mode, "in", d["configs"]["in"], "out", d["configs"]["out"], "overhead", d["overhead_pct"], "records/step", d["records_per_recorded_step"])
c = load("probe_overhead/probe_overhead.json")
if c:
    print("cross", json.dumps(c["configs"]), "\n overhead_pct", c["overhead_pct"], "\n by_min", c["overhead_pct_by_min"], "rounds", c["rounds_done"])
