"""A causal self-attention block with two backends: flash-attn and PyTorch SDPA.

flash-attn needs `deterministic=True` for a reproducible backward (BX501); forcing SDPA onto cuDNN
varies by default and aborts under deterministic mode with an unrelated message (BX504).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from flash_attn import flash_attn_func
from torch.nn.attention import SDPBackend, sdpa_kernel


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, use_flash_attn: bool = True):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.use_flash_attn = use_flash_attn

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).unbind(dim=2)
        if self.use_flash_attn:
            out = flash_attn_func(q, k, v, causal=True)
        else:
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
            out = out.transpose(1, 2)
        return self.proj(out.reshape(b, t, d))


@torch.no_grad()
def score(block: CausalSelfAttention, x):
    # No backward runs here, so the attention backends cannot make this vary.
    return block(x).norm()
