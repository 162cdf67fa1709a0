"""The probe's digests (bitexact_probe.py): what a record says about a tensor's bytes.

A digest weighs each 64-bit word of the tensor's raw bytes by an odd number that grows with its
position and sums with wrap-around, on the tensor's own device: a single flipped bit anywhere, or two
unequal elements swapped, change it, and nothing reaches the host until the step's batch is copied.
"""

import ctypes
import hashlib

_MASK64 = (1 << 64) - 1


def _odd_weights(torch, count, device, cache):
    """1, 3, 5, ... as int64 on `device`: kept per (count, device), since shapes repeat every step."""
    key = (count, device)
    weights = cache.get(key)
    if weights is None:
        if len(cache) >= 256:
            cache.clear()
        weights = torch.arange(count, device=device, dtype=torch.int64) * 2 + 1
        cache[key] = weights
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
    """The tensor's raw bytes as int64 words (zero-padded to a whole word), on its device."""
    x = tensor.detach()
    # The common case in three views and no copy: a contiguous tensor of whole, aligned words.
    size = x.element_size()
    if x.is_contiguous() and x.dtype in _wordable(torch) and (x.numel() * size) % 8 == 0 and (x.storage_offset() * size) % 8 == 0:
        return x.view(-1).view(torch.int64) if x.dim() else x.reshape(1).view(torch.int64)
    data = raw_bytes(torch, x)
    pad = (-data.numel()) % 8
    # A view that does not start on a word boundary (a slice) is copied, as a padded one is.
    if pad or data.storage_offset() % 8:
        data = torch.cat([data, data.new_zeros(pad)])
    return data.view(torch.int64)


_WORDABLE = []


def _wordable(torch):
    """The dtypes whose tensors view as int64 words directly (not complex, not bool), made once."""
    if not _WORDABLE:
        names = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8")
        _WORDABLE.append(frozenset(getattr(torch, n) for n in names if hasattr(torch, n)))
    return _WORDABLE[0]


def digest(torch, tensor, cache=None, keepdim=False):
    """The tensor's 64-bit digest as an int64 tensor on its device (0-d, or 1-d of one with `keepdim`).

    Σ w_i · (2i + 1) mod 2**64 over the raw bytes' 64-bit words w_i: every weight is odd, so a change
    of any one word (a single flipped bit included, bit 63 too) changes the sum, and a swap of two
    unequal words at i and j changes it by 2·(w_i − w_j)·(j − i). Two kernels (a product and an
    integer sum, exact in any order) once the weights are cached; no host sync.
    """
    w = words(torch, tensor)
    weights = _odd_weights(torch, w.numel(), w.device, {} if cache is None else cache)
    return (w * weights).sum(0, keepdim=True) if keepdim else (w * weights).sum()


# Tensors up to this many words are digested together (digest_many); a larger one alone, where its
# two kernels are worth their launch. It bounds the batch's temporary memory (a few times 8 MiB).
CHUNK_WORDS = 1 << 20


def digest_many(torch, tensors, cache):
    """The digests of several tensors on one device as one 1-d int64 tensor, equal to digest() of each.

    The optimizer's hooks record every parameter and gradient: one digest each would be two kernels
    per parameter. Batched, the tensors' words are laid end to end after a zero word and two prefix
    sums give every tensor's sums at once: with W[p] = 2p + 1 over the joined words and tensor j at
    positions b_j + 1 .. b_{j+1}, its word i sits at p = b_j + 1 + i, so 2i + 1 = W[p] − 2(b_j + 1)
    and its digest is (ΣwW)_j − 2(b_j + 1)(Σw)_j, exact with wrap-around like digest().
    """
    ws = [words(torch, t) for t in tensors]
    pieces = []
    i = 0
    while i < len(ws):
        if ws[i].numel() > CHUNK_WORDS:
            weights = _odd_weights(torch, ws[i].numel(), ws[i].device, cache)
            pieces.append((ws[i] * weights).sum(0, keepdim=True))
            i += 1
            continue
        j, total = i, 0
        while j < len(ws) and total + ws[j].numel() <= CHUNK_WORDS:
            total += ws[j].numel()
            j += 1
        pieces.append(_joined_digests(torch, ws[i:j], cache))
        i = j
    return pieces[0] if len(pieces) == 1 else torch.cat(pieces)


def _joined_digests(torch, ws, cache):
    device = ws[0].device
    counts = tuple(w.numel() for w in ws)
    key = ("joined", counts, device)
    layout = cache.get(key)
    if layout is None:
        bounds = [0]
        for n in counts:
            bounds.append(bounds[-1] + n)
        host = torch.tensor(bounds, dtype=torch.int64)
        # A pinned copy travels without a host sync; shapes repeat every step, so this happens once.
        on_device = host.pin_memory().to(device, non_blocking=True) if device.type == "cuda" else host
        layout = (on_device, (on_device[:-1] + 1) * 2)
        cache[key] = layout
        zero = ("zero", device)
        if zero not in cache:
            cache[zero] = torch.zeros(1, dtype=torch.int64, device=device)
    bounds, offsets = layout
    joined = torch.cat([cache[("zero", device)]] + list(ws))
    weights = _odd_weights(torch, CHUNK_WORDS + 1, device, cache)[: joined.numel()]
    weighted = (joined * weights).cumsum(0)[bounds]
    plain = joined.cumsum(0)[bounds]
    return weighted.diff() - offsets * plain.diff()


def hex64(value):
    """A digest's host value (a Python int, signed) as the 16 hex digits a record carries."""
    return "%016x" % (value & _MASK64)


def sha256(torch, tensor):
    """The SHA-256 of the tensor's raw bytes, as hex, computed on the host (`--probe-hash full`).

    The bytes are copied to the host first, so a CUDA tensor waits for the kernels that write it: a
    host sync per record, which is why it is computed only where asked.
    """
    data = raw_bytes(torch, tensor).cpu()
    return hashlib.sha256(ctypes.string_at(data.data_ptr(), data.numel()) if data.numel() else b"").hexdigest()
