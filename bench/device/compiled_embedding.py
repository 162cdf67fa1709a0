# Does torch.compile (Inductor) make an embedding's backward vary run to run? Eager CUDA embedding
# backward is deterministic (sort-based); Inductor decomposes embedding_dense_backward into an
# index_put with accumulate=True and may lower that to tl.atomic_add. Measured here: digests of the
# weight gradient over repeated calls in one process, eager vs compiled, with the deterministic mode
# off and on, and whether the generated code holds an atomic add. Prints one JSON line per case.
import hashlib, json, sys
import torch
from torch._inductor.utils import run_and_get_code

def digest(t):
    return hashlib.sha256(t.detach().float().cpu().numpy().tobytes()).hexdigest()[:16]

def case(name, dtype, compiled, deterministic, vocab=32000, dim=768, tokens=16384, distinct=512, runs=10):
    torch.use_deterministic_algorithms(deterministic)
    torch._dynamo.reset()
    g = torch.Generator(device='cuda').manual_seed(0)
    emb = torch.nn.Embedding(vocab, dim, device='cuda', dtype=dtype)
    ids = torch.randint(0, distinct, (tokens,), device='cuda', generator=g)
    upstream = torch.randn(tokens, dim, device='cuda', dtype=dtype, generator=g)
    def step(ids, upstream):
        out = emb(ids)
        (out * upstream).sum().backward()
    fn = torch.compile(step) if compiled else step
    code = ''
    digests = set()
    times = []
    for i in range(runs):
        emb.weight.grad = None
        if compiled and i == 0:
            _, sources = run_and_get_code(fn, ids, upstream)
            code = '\n'.join(sources)
        else:
            start = torch.cuda.Event(enable_timing=True); end = torch.cuda.Event(enable_timing=True)
            start.record(); fn(ids, upstream); end.record(); torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        digests.add(digest(emb.weight.grad))
    times.sort()
    print(json.dumps({'case': name, 'dtype': str(dtype), 'compiled': compiled, 'deterministic': deterministic,
                      'distinct_digests': len(digests), 'runs': runs, 'atomic_add_in_code': 'atomic_add' in code,
                      'median_ms': times[len(times) // 2] if times else None, 'torch': torch.__version__,
                      'gpu': torch.cuda.get_device_name()}), flush=True)

for dtype in (torch.float32, torch.bfloat16):
    for compiled in (False, True):
        for det in (False, True):
            try:
                case('embedding fwd+bwd, 16384 ids over 512 rows', dtype, compiled, det)
            except Exception as e:
                print(json.dumps({'case': 'embedding', 'dtype': str(dtype), 'compiled': compiled, 'deterministic': det, 'error': repr(e)[:300]}), flush=True)
