# How often (session 7, to decide whether BX504 should cover them) nn.MultiheadAttention / TransformerEncoderLayer training steps give different bits on this GPU:
# 20 repetitions of one forward+backward from identical inputs and weights, distinct digests of the
# output and of every gradient. Writes JSON lines to stdout.
import hashlib, json, sys, time
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

def digest(ts):
    h = hashlib.sha256()
    for t in ts:
        h.update(t.detach().float().cpu().numpy().tobytes())
    return h.hexdigest()[:16]

def case(name, make, run, reps=20, ctx=None):
    torch.manual_seed(0)
    module = make().cuda()
    state = {k: v.clone() for k, v in module.state_dict().items()}
    torch.manual_seed(1)
    x = torch.randn(8, 256, 256, device="cuda")
    outs, grads, times = set(), set(), []
    for _ in range(reps):
        module.load_state_dict(state)
        module.zero_grad(set_to_none=True)
        xi = x.clone().requires_grad_(True)
        torch.manual_seed(2)
        torch.cuda.synchronize(); t0 = time.perf_counter()
        if ctx:
            with ctx():
                y = run(module, xi)
                y.float().square().mean().backward()
        else:
            y = run(module, xi)
            y.float().square().mean().backward()
        torch.cuda.synchronize(); times.append((time.perf_counter() - t0) * 1e3)
        outs.add(digest([y]))
        grads.add(digest([xi.grad] + [p.grad for p in module.parameters() if p.grad is not None]))
    times.sort()
    print(json.dumps({"case": name, "reps": reps, "distinct_outputs": len(outs), "distinct_grads": len(grads), "median_ms": round(times[len(times)//2], 3)}), flush=True)

mha = lambda: torch.nn.MultiheadAttention(256, 4, batch_first=True)
no_w = lambda m, x: m(x, x, x, need_weights=False)[0]
with_w = lambda m, x: m(x, x, x)[0]
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(0)}), flush=True)
case("mha fp32 need_weights=False", mha, no_w)
case("mha fp32 need_weights=True (default)", mha, with_w)
case("mha fp32 need_weights=False, causal mask", mha, lambda m, x: m(x, x, x, need_weights=False, attn_mask=torch.nn.Transformer.generate_square_subsequent_mask(256, device="cuda"), is_causal=True)[0])
case("mha bf16 autocast need_weights=False", mha, no_w, ctx=lambda: torch.autocast("cuda", dtype=torch.bfloat16))
case("mha fp32 need_weights=False under sdpa_kernel(MATH)", mha, no_w, ctx=lambda: sdpa_kernel(SDPBackend.MATH))
enc = lambda: torch.nn.TransformerEncoderLayer(256, 4, batch_first=True)
case("TransformerEncoderLayer fp32 (dropout 0.1, train)", enc, lambda m, x: m(x))
enc0 = lambda: torch.nn.TransformerEncoderLayer(256, 4, dropout=0.0, batch_first=True)
case("TransformerEncoderLayer fp32 dropout=0", enc0, lambda m, x: m(x))
torch.use_deterministic_algorithms(True)
case("mha fp32 need_weights=False under use_deterministic_algorithms(True)", mha, no_w)
case("TransformerEncoderLayer fp32 dropout=0 under use_deterministic_algorithms(True)", enc0, lambda m, x: m(x))
