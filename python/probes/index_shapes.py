# Session 9 (2026-12-02) probe on an H200, torch 2.11: cross_entropy on a 3-D (b, c, n) input, and
# backward passes through relative-position indices (q - k + L - 1, which repeat), by advanced
# indexing, nn.Embedding and torch.gather along dim 1; each run 20 times on the same inputs in one
# process, counting distinct results. Upstream gradients are random: equal contributions would sum
# to the same bits in any order and hide the atomics.
#     python3 python/probes/index_shapes.py > ground-truth/index-shapes-torch-2.11-h200.json
import torch, json
torch.manual_seed(0)
dev = "cuda"
out = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
def distinct(fn, n=20):
    seen = set()
    for _ in range(n):
        r = fn()
        seen.add(tuple(t.detach().cpu().reshape(-1).contiguous().view(torch.uint8).numpy().tobytes().__hash__() for t in r))
    return len(seen)
# cross_entropy on a 3-D (b, c, n) input, forward and backward
b, c, n = 16, 32000, 512
logits = torch.randn(b, c, n, device=dev, requires_grad=True)
target = torch.randint(0, c, (b, n), device=dev)
def ce():
    logits.grad = None
    loss = torch.nn.functional.cross_entropy(logits, target)
    loss.backward()
    return (loss, logits.grad)
out["cross_entropy_3d_fwd_bwd_distinct_of_20"] = distinct(ce)
def ce_loss_only():
    with torch.no_grad():
        return (torch.nn.functional.cross_entropy(logits, target),)
out["cross_entropy_3d_fwd_distinct_of_20"] = distinct(ce_loss_only)
# gather backward through relative positions (indices repeat)
L, d = 1024, 64
table = torch.randn(2 * L - 1, d, device=dev, requires_grad=True)
pos = torch.arange(L, device=dev)
rel = (pos[:, None] - pos[None, :]) + L - 1
# Random upstream gradients: equal contributions would sum to the same bits in any order.
w3 = torch.randn(L, L, d, device=dev)
w2 = torch.randn(L, L, device=dev)
def rel_gather():
    table.grad = None
    y = table[rel]            # advanced indexing: index backward accumulates
    (y * w3).sum().backward()
    return (table.grad,)
out["relative_position_index_backward_distinct_of_20"] = distinct(rel_gather)
emb = torch.nn.Embedding(2 * L - 1, d).to(dev)
def rel_emb():
    emb.weight.grad = None
    (emb(rel) * w3).sum().backward()
    return (emb.weight.grad,)
out["relative_position_embedding_backward_distinct_of_20"] = distinct(rel_emb)
g = torch.randn(L, L, device=dev, requires_grad=True)
idx = rel.clamp(max=L - 1)
def gath():
    g.grad = None
    (torch.gather(g, 1, idx) * w2).sum().backward()
    return (g.grad,)
out["gather_dim1_relative_backward_distinct_of_20"] = distinct(gath)
print(json.dumps(out, indent=1))
