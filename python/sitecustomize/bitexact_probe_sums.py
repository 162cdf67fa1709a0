"""A step's digests on one device (bitexact_probe_base.py): their sums are written into one int64 buffer
on the device and reach the host in one copy at the step boundary, where the last arithmetic is done.

A digest is Σ wᵢ·(2i+1) mod 2⁶⁴ over a tensor's words wᵢ (bitexact_probe_digest.py). Many tensors are
summed at once by laying them end to end after a zero word and taking one prefix sum (a cub scan,
across the whole device): a tensor's sum is the difference of the prefix sums read at its two ends.
The device does only the joins, the products, the scan and the read of the ends, a few kernels for any
number of tensors; the differences, and the correction that turns the weights of joined positions
into each tensor's own, are Python integer arithmetic on the host, where nothing waits for them.

- A lone record (a module output, a gradient, the loss) is recorded as its products wᵢ·(2i+1) (one
  kernel, at once: the tensor may be overwritten later); `add_products` keeps them, and `sum_products`
  sums the kept ones (join, scan, read: three kernels), at the step boundary, or once they hold
  HELD_WORDS, so that their memory is bounded.
- A batch (every parameter, every gradient: `add_batch`) is not weighted one by one: its words are
  joined twice, [0, w…, 0, w…], the second copy multiplied by the joined positions' weights W[p] = 2p+1,
  and one scan gives both Σw and Σw·W per tensor. A tensor starting at position s has 2i+1 = W[s+i] − 2s,
  so its digest is Σw·W − 2s·Σw (four kernels per chunk of CHUNK_WORDS; a larger tensor alone, two).
- Each record gets a cell, [(kind, indexes…)], filled in when its sums have a place in the buffer;
  `value(values, cell)` reads its digest from the buffer's host copy.
"""

import bitexact_probe_digest as digests

# The kept products are summed once they hold this many words (32 MiB per device).
HELD_WORDS = 1 << 22
# Tensors are joined in chunks of at most this many words (32 MiB); the chunk's scan works on twice
# that, in place. A larger tensor is digested alone.
CHUNK_WORDS = 1 << 22
_MASK64 = (1 << 64) - 1


class DeviceSums(object):
    def __init__(self, torch, device, cache):
        self.torch = torch
        self.device = device
        self.cache = cache
        # The step's sums, in the order they were placed; reused from the start each step (the copy to
        # the host is queued on the stream before the next step writes here).
        self.buffer = None
        self.used = 0
        # Lone records' products not summed yet, and their cells.
        self.products = []
        self.cells = []
        self.held = 0

    def _take(self, count):
        """`count` words of the buffer, from `used` on: a view that an op writes into (out=)."""
        torch = self.torch
        end = self.used + count
        if self.buffer is None or self.buffer.numel() < end:
            grown = torch.empty(max(end, 2 * (0 if self.buffer is None else self.buffer.numel()), 1024), dtype=torch.int64, device=self.device)
            if self.used:
                grown[: self.used].copy_(self.buffer[: self.used])
            self.buffer = grown
        start, self.used = self.used, end
        return self.buffer[start:end], start

    def add_products(self, value, cell):
        """A lone record's products (bitexact_probe_digest.products); a large one is summed at once."""
        count = value.numel()
        if count > CHUNK_WORDS:
            out, start = self._take(1)
            self.torch.sum(value.reshape(-1), 0, keepdim=True, out=out)
            cell.append(("value", start))
            return
        self.products.append(value)
        self.cells.append(cell)
        self.held += count
        if self.held > HELD_WORDS:
            self.sum_products()

    def sum_products(self):
        """The kept products' sums into the buffer: joined after a zero word, one scan, read at the ends."""
        if not self.products:
            return
        torch = self.torch
        ends = self._ends(tuple(p.numel() for p in self.products), 0)
        joined = torch._C._nn.flatten_dense_tensors([digests.zero_word(torch, self.device, self.cache)] + self.products)
        joined.cumsum_(0)
        out, start = self._take(len(self.products) + 1)
        torch.index_select(joined, 0, ends, out=out)
        for k, cell in enumerate(self.cells):
            cell.append(("diff", start + k))
        self.products, self.cells, self.held = [], [], 0

    def add_batch(self, tensors, cells):
        """Many tensors of one kind at once (the optimizer's parameters and gradients), in chunks.

        The chunks depend only on each tensor's dtype and size, which repeat every step: they are
        planned once per layout (_plan) and the step does only the device work and the cells.
        """
        key = ("plan", tuple([(t.dtype, t.numel()) for t in tensors]), self.device, CHUNK_WORDS)
        plan = self.cache.get(key)
        if plan is None:
            plan = self._plan(tensors)
            if len(self.cache) >= 4096:  # layouts that never repeat (dynamic shapes): start again
                self.cache.clear()
            self.cache[key] = plan
        for lo, hi, counts, total, positions, dtype in plan:
            if counts is None:  # a tensor larger than a chunk, digested alone
                self.add_products(digests.products(self.torch, tensors[lo], self.cache), cells[lo])
            else:
                self._chunk(tensors[lo:hi], cells[lo:hi], counts, total, positions, dtype)

    def _plan(self, tensors):
        """The chunks of a batch: (first, end, word counts, total, start positions, the one dtype or
        None), or (index, None, None, …) for a tensor digested alone."""
        sizes = digests.word_sizes(self.torch)
        plan, lo, counts, total = [], 0, [], 0

        def close(hi):
            if counts:
                positions, position = [], 1
                for n in counts:
                    positions.append(position)
                    position += n
                dtypes = {t.dtype for t in tensors[lo:hi]}
                dtype = dtypes.pop() if len(dtypes) == 1 else None
                # One flatten needs whole words in each tensor (joined_twice).
                if dtype is None or sizes.get(dtype) is None or any(t.numel() * sizes[dtype] % 8 for t in tensors[lo:hi]):
                    dtype = None
                plan.append((lo, hi, tuple(counts), total, tuple(positions), dtype))

        for i, tensor in enumerate(tensors):
            n = (tensor.numel() * tensor.element_size() + 7) // 8
            if counts and total + n > CHUNK_WORDS:
                close(i)
                lo, counts, total = i, [], 0
            if n > CHUNK_WORDS:
                plan.append((i, i + 1, None, None, None, None))
                lo = i + 1
            else:
                counts.append(n)
                total += n
        close(len(tensors))
        return plan

    def _chunk(self, tensors, cells, counts, total, positions, dtype):
        torch = self.torch
        length = total + 1
        twice = digests.joined_twice(torch, tensors, self.device, self.cache, dtype)
        weights = digests.odd_weights(torch, (length,), self.device, self.cache)
        twice[length:].mul_(weights)
        twice.cumsum_(0)
        ends = self._ends(counts, length)
        n = len(tensors)
        out, start = self._take(2 * (n + 1))
        torch.index_select(twice, 0, ends, out=out)
        second = start + n + 1
        for k, cell in enumerate(cells):
            # Σw at (start + k, +1), Σw·W at (second + k, +1); the tensor starts at positions[k].
            cell.append(("batch", start + k, second + k, positions[k]))

    def _ends(self, counts, second):
        """The positions where the tensors of `counts` end (after a zero word), on the device, made once per
        layout; with `second`, the same again that many words on (the joined copy that is weighted)."""
        key = ("ends", counts, second, self.device)
        ends = self.cache.get(key)
        if ends is None:
            if len(self.cache) >= 4096:  # layouts that never repeat (dynamic lengths): start again
                self.cache.clear()
            bounds = [0]
            for n in counts:
                bounds.append(bounds[-1] + n)
            if second:
                bounds += [b + second for b in bounds]
            host = self.torch.tensor(bounds, dtype=self.torch.int64)
            # A pinned copy travels without a host sync; layouts repeat every step, so this happens once.
            ends = host.pin_memory().to(self.device, non_blocking=True) if self.device.type == "cuda" else host
            self.cache[key] = ends
        return ends

    def to_host(self):
        """The step's sums on their way to the host: (host tensor, event or None); the buffer starts again."""
        torch = self.torch
        self.sum_products()
        if not self.used:
            return None, None
        sums = self.buffer[: self.used]
        self.used = 0
        if self.device.type != "cuda":
            return sums.clone(), None
        host = torch.empty((sums.numel(),), dtype=torch.int64, pin_memory=True)
        host.copy_(sums, non_blocking=True)
        event = torch.cuda.Event()
        event.record()
        return host, event


def value(values, cell):
    """A record's digest from its buffer's host values (a list of ints) and its cell."""
    entry = cell[0]
    kind = entry[0]
    if kind == "diff":
        i = entry[1]
        return (values[i + 1] - values[i]) & _MASK64
    if kind == "batch":
        plain, weighted, position = entry[1], entry[2], entry[3]
        return ((values[weighted + 1] - values[weighted]) - 2 * position * (values[plain + 1] - values[plain])) & _MASK64
    return values[entry[1]] & _MASK64


def digests_of(torch, tensors, cache=None):
    """Each tensor's digest through a batch (add_batch), read back at once: what the optimizer's records
    say, for tests and tools."""
    cache = {} if cache is None else cache
    by_device = {}
    cells = [[] for _ in tensors]
    for tensor, cell in zip(tensors, cells):
        by_device.setdefault(tensor.device, ([], []))
        by_device[tensor.device][0].append(tensor)
        by_device[tensor.device][1].append(cell)
    hosts = {}
    for device, (group, group_cells) in by_device.items():
        sums = DeviceSums(torch, device, cache)
        sums.add_batch(group, group_cells)
        host, event = sums.to_host()
        if event is not None:
            event.synchronize()
        values = host.tolist() if host is not None else []
        for cell in group_cells:
            hosts[id(cell)] = values
    return [value(hosts[id(cell)], cell) for cell in cells]
