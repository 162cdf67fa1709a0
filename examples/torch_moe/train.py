"""A small mixture-of-experts transformer that trains on random tokens: the model the probe is
validated on. Its combine step adds each token's top-k expert outputs into the token's row with
index_add_ (float atomics on CUDA, several contributions per row), so two default runs on a GPU part
ways in the first forward; with torch.use_deterministic_algorithms(True) they agree bit for bit.

    python train.py [--steps N] [--device cuda|cpu]

Logs one JSON line per step: step, loss, grad_norm, step_ms.
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F


class Experts(torch.nn.Module):
    """Top-k routing; each expert's outputs are scaled and added back into the token rows."""

    def __init__(self, dim, experts, top_k):
        super().__init__()
        self.router = torch.nn.Linear(dim, experts, bias=False)
        self.up = torch.nn.Parameter(torch.randn(experts, dim, 2 * dim) / dim**0.5)
        self.down = torch.nn.Parameter(torch.randn(experts, 2 * dim, dim) / (2 * dim) ** 0.5)
        self.top_k = top_k

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        weights, chosen = torch.topk(F.softmax(self.router(tokens), dim=-1), self.top_k, dim=-1)
        rows_all, outputs = [], []
        for e in range(self.up.shape[0]):
            rows, slot = torch.nonzero(chosen == e, as_tuple=True)
            if rows.numel() == 0:
                continue
            hidden = F.gelu(tokens[rows] @ self.up[e]) @ self.down[e]
            rows_all.append(rows)
            outputs.append(hidden * weights[rows, slot].unsqueeze(-1))
        # The accumulation: one index_add_ in which every token row receives its top_k expert
        # outputs, added with float atomics in whatever order the threads reach the row.
        combined = torch.zeros_like(tokens).index_add_(0, torch.cat(rows_all), torch.cat(outputs))
        return combined.reshape_as(x)


class Block(torch.nn.Module):
    def __init__(self, dim, heads, experts, top_k):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(dim)
        self.attn = torch.nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.moe = Experts(dim, experts, top_k)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.moe(self.norm2(x))


class MoE(torch.nn.Module):
    def __init__(self, vocab=1024, dim=256, heads=4, layers=2, experts=8, top_k=4):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.blocks = torch.nn.ModuleList(Block(dim, heads, experts, top_k) for _ in range(layers))
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=256)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = MoE().to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.Generator().manual_seed(1)
    for step in range(1, args.steps + 1):
        tokens = torch.randint(0, 1024, (args.batch, args.seq + 1), generator=data).to(args.device)
        start = time.perf_counter()
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if args.device == "cuda":
            torch.cuda.synchronize()
        step_ms = (time.perf_counter() - start) * 1e3
        print(json.dumps({"step": step, "loss": loss.item(), "grad_norm": grad_norm.item(), "step_ms": round(step_ms, 3)}), flush=True)


if __name__ == "__main__":
    main()
