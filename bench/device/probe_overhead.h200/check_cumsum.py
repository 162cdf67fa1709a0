import torch, time
x = torch.randint(-2**62, 2**62, (2, 3_000_000), dtype=torch.int64, device="cuda")
ref = x.cumsum(1)
y = x.clone(); torch.cumsum(y, 1, out=y)
print("cumsum out=self equal:", torch.equal(ref, y))
z = x.clone(); z.cumsum_(1)
print("cumsum_ equal:", torch.equal(ref, z))
# launch cost of small ops from Python
a = torch.zeros(1000, device="cuda"); torch.cuda.synchronize()
for name, f in [("mul", lambda: a * a), ("view", lambda: a.view(torch.int32)), ("empty", lambda: torch.empty(10, device="cuda")), ("attr", lambda: (a.dtype, a.shape, a.device))]:
    for _ in range(100): f()
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(2000): f()
    torch.cuda.synchronize(); print(name, round((time.perf_counter() - t) / 2000 * 1e6, 2), "us")
