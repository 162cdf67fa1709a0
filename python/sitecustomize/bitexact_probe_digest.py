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
    data = raw_bytes(torch, tensor)
    pad = (-data.numel()) % 8
    if pad:
        data = torch.cat([data, data.new_zeros(pad)])
    return data.view(torch.int64)


def digest(torch, tensor, cache=None):
    """The tensor's 64-bit digest as a 0-d int64 tensor on its device (no host sync).

    Σ w_i · (2i + 1) mod 2**64 over the raw bytes' 64-bit words w_i: every weight is odd, so a change
    of any one word (a single flipped bit included, bit 63 too) changes the sum, and a swap of two
    unequal words at i and j changes it by 2·(w_i − w_j)·(j − i). Two kernels (a product and an
    integer sum, exact in any order) once the weights are cached.
    """
    w = words(torch, tensor)
    weights = _odd_weights(torch, w.numel(), w.device, {} if cache is None else cache)
    return (w * weights).sum()


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
