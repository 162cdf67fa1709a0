"""A small mixture-of-experts language model trainer, set up for paired reproducibility runs."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from setup_env import apply_speed_defaults, configure_backends, configure_environment, seed_everything


class TopKRouter(nn.Module):
    def __init__(self, d_model: int, n_experts: int, k: int):
        super().__init__()
        self.gate = nn.Linear(d_model, n_experts, bias=False)
        self.k = k

    def forward(self, x):
        logits = self.gate(x)
        # sorted=False skips ordering the chosen experts, so the slot each expert lands in is
        # whatever the kernel produced; the softmax and the weighted sum over slots below add
        # in slot order, so a different order can change the last bits (BX136).
        weights, expert_ids = torch.topk(logits, self.k, dim=-1, sorted=False)
        return F.softmax(weights, dim=-1), expert_ids


class MoELayer(nn.Module):
    def __init__(self, d_model: int, n_experts: int, k: int):
        super().__init__()
        self.router = TopKRouter(d_model, n_experts, k)
        self.experts = nn.ModuleList(nn.Linear(d_model, d_model) for _ in range(n_experts))

    def forward(self, x):
        weights, expert_ids = self.router(x)
        # Group token slots by expert so each expert runs one dense matmul. Many slots share an
        # expert id, and an unstable sort may order those ties differently (BX135).
        _, perm = expert_ids.flatten().sort()
        flat_ids = expert_ids.flatten()[perm]
        tokens = x.repeat_interleave(expert_ids.shape[-1], dim=0)[perm]
        out = torch.empty_like(tokens)
        for e, expert in enumerate(self.experts):
            mask = flat_ids == e
            out[mask] = expert(tokens[mask])
        restored = torch.empty_like(out)
        restored[perm] = out
        combined = restored.view(x.shape[0], -1, x.shape[-1]) * weights.unsqueeze(-1)
        return x + combined.sum(dim=1)


def length_buckets(lengths, batch_size: int):
    # Bucket sequences of similar length to cut padding. Equal lengths are common, and argsort
    # without stable=True leaves their relative order open (BX135).
    order = torch.argsort(lengths, descending=True)
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def log_activation_stats(acts):
    # histc raised under deterministic mode, so the mode was switched off "just for logging" and
    # never switched back on: every later step runs the default kernels (BX204).
    torch.use_deterministic_algorithms(False)
    return torch.histc(acts.float(), bins=64)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--skip-fill", action="store_true")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    configure_environment()
    seed_everything(1234)
    apply_speed_defaults()
    configure_backends(args.deterministic, args.skip_fill)

    d_model, vocab = 256, 1000
    embed = nn.Embedding(vocab, d_model).cuda()
    layer = MoELayer(d_model, n_experts=8, k=4).cuda()
    head = nn.Linear(d_model, vocab).cuda()
    params = [*embed.parameters(), *layer.parameters(), *head.parameters()]
    optimizer = torch.optim.AdamW(params, lr=3e-4)

    lengths = torch.randint(16, 64, (512,))
    for step, batch in zip(range(args.steps), length_buckets(lengths, 32)):
        tokens = torch.randint(0, vocab, (len(batch),), device="cuda")
        hidden = layer(embed(tokens))
        loss = F.cross_entropy(head(hidden), tokens)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step == 0:
            log_activation_stats(hidden.detach())
        print(f"step {step} loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
