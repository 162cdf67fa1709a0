"""The probe's digests (bitexact_probe.py): what a record says about a tensor's bytes.

A digest weighs each 64-bit word of the tensor's raw bytes by an odd number that grows with its
position and sums with wrap-around, on the tensor's own device: a single flipped bit anywhere, or two
unequal elements swapped, change it, and nothing reaches the host until the step's batch is copied.
"""

import ctypes
import hashlib


def odd_weights(torch, shape, device, cache):
    """1, 3, 5, ... as int64 on `device`, laid out in `shape` (row-major), kept per (shape, device).

    Every shape's weights are a view of one flat tensor per device, as long as the most words asked
    for so far (grown, never doubled): shapes repeat every step, so after the first step a digest
    finds its weights in the cache and issues no op for them.
    """
    key = (shape, device)
    weights = cache.get(key)
    if weights is None:
        count = 1
        for n in shape:
            count *= n
        flat = cache.get(("flat", device))
        if flat is None or flat.numel() < count:
            # The views of the smaller tensor go with it (their memory is freed with the last one).
            for old in [k for k in cache if len(k) == 2 and k[1] == device and k[0] != "flat"]:
                del cache[old]
            flat = cache[("flat", device)] = torch.arange(count, device=device, dtype=torch.int64) * 2 + 1
        elif len(cache) >= 1024:
            for old in [k for k in cache if len(k) == 2 and k[0] != "flat"]:
                del cache[old]
        weights = cache[key] = flat[:count].view(shape)
    return weights


def raw_bytes(torch, tensor):
    """The tensor's raw bytes as a flat uint8 tensor on its device (complex as its real pairs)."""
    x = tensor.detach()
    if x.is_complex():
        x = torch.view_as_real(x)
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    return x.contiguous().reshape(-1).view(torch.uint8)


def words(torch, tensor):
    """The tensor's raw bytes as int64 words in row-major order (zero-padded to a whole word), on its device.

    Where the layout allows, one view of the tensor itself and no copy, in the tensor's own shape
    with its last dimension counted in words: a 64-bit dtype in any layout (the product with the
    weights pairs logical positions, as a contiguous copy would), a narrower one whose last dimension
    holds whole words at unit stride. Otherwise (padding, a misaligned slice, complex, bool) a flat copy.
    """
    size = word_sizes(torch).get(tensor.dtype)
    if size is not None and (size == 8 or (tensor.dim() and tensor.shape[-1] * size % 8 == 0)):
        try:
            # Not differentiable: no autograd node even for a tensor that requires grad.
            return tensor.view(torch.int64)
        except RuntimeError:  # strides view_as(dtype) refuses (a transposed size-1 dimension, a slice)
            pass
    data = raw_bytes(torch, tensor)
    pad = (-data.numel()) % 8
    # A view that does not start on a word boundary (a slice) is copied, as a padded one is.
    if pad or data.storage_offset() % 8:
        data = torch.cat([data, data.new_zeros(pad)])
    return data.view(torch.int64)


_WORD_SIZES = []


def word_sizes(torch):
    """The element size of each dtype whose tensors view as int64 words (not complex, not bool), made once."""
    if not _WORD_SIZES:
        names = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8")
        dtypes = [getattr(torch, n) for n in names if hasattr(torch, n)]
        _WORD_SIZES.append({d: torch.empty(0, dtype=d).element_size() for d in dtypes})
    return _WORD_SIZES[0]


def digest(torch, tensor, cache=None):
    """The tensor's 64-bit digest as a 0-d int64 tensor on its device.

    Σ w_i · (2i + 1) mod 2**64 over the raw bytes' 64-bit words w_i: every weight is odd, so a change
    of any one word (a single flipped bit included, bit 63 too) changes the sum, and a swap of two
    unequal words at i and j changes it by 2·(w_i − w_j)·(j − i). Three ops, two kernels (a product
    and an integer sum, exact in any order) once the weights are cached; no host sync.
    """
    return products(torch, tensor, {} if cache is None else cache).sum()


def products(torch, tensor, cache):
    """Each word of the tensor times its weight (w_i · (2i + 1)): the digest is their sum. One kernel.

    The probe's hooks keep these and sum many tensors' at once (bitexact_probe_sums.py), one kernel per record
    fewer than digest() each.
    """
    # words()'s view of the tensor itself, tried first (the common case: a float output or gradient).
    w = None
    size = _WORD_SIZES[0].get(tensor.dtype) if _WORD_SIZES else None
    if size == 8 or (size is not None and tensor.dim() and tensor.shape[-1] * size % 8 == 0):
        try:
            w = tensor.view(torch.int64)
        except RuntimeError:
            pass
    if w is None:
        w = words(torch, tensor)
    shape = w.shape
    key = (shape, w.device)
    weights = cache.get(key)
    if weights is None:
        weights = odd_weights(torch, shape, key[1], cache)
    # The weights first: the product takes their (contiguous) layout, which the step's sums join without a copy.
    return weights * w


def joined_twice(torch, tensors, device, cache, dtype=None):
    """[0, words of each tensor…, 0, words of each tensor…]: one flat int64 tensor of 2·(1 + Σ words).

    Tensors of one dtype whose bytes fill whole words are joined by one flatten (one copy, the views
    taken in C++), the list given twice; any other tensor, or a run of several dtypes, by its own
    words(), joined once and the result repeated. `dtype`: the caller knows that every tensor is of
    this dtype and fills whole words (a batch's plan, bitexact_probe_sums.py).
    """
    sizes = word_sizes(torch)
    if dtype is not None:
        with torch.no_grad():
            zero = cache.get(("zero", dtype, device))
            if zero is None:
                zero = cache[("zero", dtype, device)] = torch.zeros(8 // sizes[dtype], dtype=dtype, device=device)
            once = [zero] + list(tensors)
            return torch._C._nn.flatten_dense_tensors(once + once).view(torch.int64)
    runs = []  # (dtype or None, [tensors]): consecutive tensors of one wordable dtype, or one other tensor
    for t in tensors:
        size = sizes.get(t.dtype)
        dtype = t.dtype if size is not None and t.numel() * size % 8 == 0 else None
        if dtype is not None and runs and runs[-1][0] == dtype:
            runs[-1][1].append(t)
        else:
            runs.append((dtype, [t]))
    with torch.no_grad():  # parameters require grad; their words need no graph
        if len(runs) == 1 and runs[0][0] is not None:
            dtype = runs[0][0]
            zero = cache.get(("zero", dtype, device))
            if zero is None:
                zero = cache[("zero", dtype, device)] = torch.zeros(8 // sizes[dtype], dtype=dtype, device=device)
            once = [zero] + runs[0][1]
            return torch._C._nn.flatten_dense_tensors(once + once).view(torch.int64)
        parts = [zero_word(torch, device, cache)]
        for dtype, run in runs:
            if dtype is None or len(run) == 1:
                parts.extend(words(torch, t).reshape(-1) for t in run)
            else:
                parts.append(torch._C._nn.flatten_dense_tensors(run).view(torch.int64))
        return torch.cat(parts + parts)


def zero_word(torch, device, cache):
    zero = cache.get(("zero", torch.int64, device))
    if zero is None:
        zero = cache[("zero", torch.int64, device)] = torch.zeros(1, dtype=torch.int64, device=device)
    return zero


def sha256(torch, tensor):
    """The SHA-256 of the tensor's raw bytes, as hex, computed on the host (`--probe-hash full`).

    The bytes are copied to the host first, so a CUDA tensor waits for the kernels that write it: a
    host sync per record, which is why it is computed only where asked.
    """
    data = raw_bytes(torch, tensor).cpu()
    return hashlib.sha256(ctypes.string_at(data.data_ptr(), data.numel()) if data.numel() else b"").hexdigest()
