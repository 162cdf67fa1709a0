"""Probe facts the rule catalogue relies on that the op ground truth does not cover.

Runs on a CUDA machine with torch installed; prints one JSON object. Each check is independent and
records its error instead of stopping the probe. Used for: BX205 (which backend attributes exist),
BX203 (what warn_only does), BX111 (int repeats), BX107 (plain setitem), BX117 (nanmedian).
"""
import json
import os
import sys
import warnings


def run_checks():
    import torch

    out = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0)}

    def public_attrs(obj):
        # torch.backends.cudnn and cuda.matmul are objects whose flags are class-level descriptors,
        # so list the class attributes as well as the instance ones.
        names = set(dir(obj)) | set(vars(type(obj)))
        return sorted(a for a in names if not a.startswith("_"))

    out["cudnn_attrs"] = public_attrs(torch.backends.cudnn)
    out["cuda_matmul_attrs"] = public_attrs(torch.backends.cuda.matmul)
    out["deterministic_attrs"] = public_attrs(torch.utils.deterministic)
    # Does assigning a misspelt flag raise, or silently create an attribute?
    for name, target in [("cudnn.benchmarks", torch.backends.cudnn), ("cuda.matmul.allow_tf23", torch.backends.cuda.matmul),
                         ("deterministic.fill_uninitialised_memory", torch.utils.deterministic)]:
        attr = name.split(".")[-1]
        try:
            setattr(target, attr, False)
            out[f"set_{name}"] = "silently accepted" if hasattr(target, attr) else "accepted, not readable"
        except Exception as e:  # noqa: BLE001
            out[f"set_{name}"] = f"raises {type(e).__name__}: {e}"[:200]

    def runs(fn, reps=10):
        results = set()
        for _ in range(reps):
            r = fn()
            results.add(tuple(t.detach().float().cpu().numpy().tobytes().hex()[:64] + str(t.detach().double().sum().item()) for t in r))
        return len(results)

    dev = "cuda"
    torch.manual_seed(0)
    idx = torch.randint(0, 1000, (1_000_000,), device=dev)
    src = torch.randn(1_000_000, device=dev)

    def index_reduce_mean():
        return (torch.zeros(1000, device=dev).index_reduce_(0, idx, src, "mean"),)

    # warn_only: does the op run, warn, and stay nondeterministic?
    torch.use_deterministic_algorithms(True, warn_only=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out["warn_only_index_reduce_distinct_of_10"] = runs(index_reduce_mean)
        except Exception as e:  # noqa: BLE001
            out["warn_only_index_reduce_distinct_of_10"] = f"raises {e}"[:200]
        out["warn_only_warnings"] = sorted({str(w.message)[:120] for w in caught})
    out["debug_mode_after_warn_only"] = torch.get_deterministic_debug_mode()
    torch.use_deterministic_algorithms(False)

    x = torch.randn(100_000, 64, device=dev, requires_grad=True)
    g = torch.randn(300_000, 64, device=dev)

    def repeat_int():
        (grad,) = torch.autograd.grad(torch.repeat_interleave(x, 3, dim=0), x, g)
        return (grad,)

    out["repeat_interleave_int_backward_distinct_of_10"] = runs(repeat_int)

    def setitem_plain():
        y = torch.zeros(1000, device=dev)
        y[idx] = src
        return (y,)

    out["setitem_plain_duplicates_distinct_of_10"] = runs(setitem_plain)

    ties = torch.randint(0, 10, (1000, 1000), device=dev).float()

    def nanmedian_dim():
        v, i = torch.nanmedian(ties, dim=1)
        return (v, i.float())

    out["nanmedian_dim_distinct_of_10"] = runs(nanmedian_dim)
    torch.use_deterministic_algorithms(True)
    for label, fn in [("nanmedian_dim", nanmedian_dim), ("setitem_plain", setitem_plain), ("repeat_interleave_int_backward", repeat_int)]:
        try:
            out[f"det_{label}_distinct_of_10"] = runs(fn)
        except Exception as e:  # noqa: BLE001
            out[f"det_{label}_distinct_of_10"] = f"raises {str(e)[:120]}"
    torch.use_deterministic_algorithms(False)
    return out


if __name__ == "__main__":
    try:
        result = run_checks()
    except Exception as e:  # noqa: BLE001
        result = {"error": repr(e)}
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "config_facts.json"), "w") as f:
            json.dump(result, f, indent=1)
