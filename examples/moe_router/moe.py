"""Top-k mixture-of-experts block: router, token dispatch, expert MLPs and the weighted combine.

The comments name what `bitexact check` reports here and why. Deterministic mode is left off on
purpose, so each finding shows the default-mode behaviour.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Router(nn.Module):
    def __init__(self, dim: int, num_experts: int, top_k: int = 2):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.top_k = top_k

    def forward(self, x):
        probs = F.softmax(self.gate(x), dim=-1)  # (tokens, experts)
        _, expert_idx = probs.topk(self.top_k, dim=-1)
        # Reading the chosen probabilities is exact, and top-k indices are distinct in each row, so
        # even the backward of gather never adds twice into one element: not reported.
        weights = probs.gather(1, expert_idx)
        return probs, weights / weights.sum(dim=-1, keepdim=True), expert_idx


class MoE(nn.Module):
    def __init__(self, dim: int, hidden: int, num_experts: int, top_k: int = 2):
        super().__init__()
        self.num_experts = num_experts
        self.router = Router(dim, num_experts, top_k)
        self.w_in = nn.Parameter(torch.randn(num_experts, dim, hidden) * dim**-0.5)
        self.w_out = nn.Parameter(torch.randn(num_experts, hidden, dim) * hidden**-0.5)
        self.expert_bias = nn.Parameter(torch.zeros(num_experts, dim))
        # One recent input per expert, used to re-seed experts that stop receiving tokens.
        self.register_buffer("last_input", torch.zeros(num_experts, dim))

    def forward(self, x):
        tokens, dim = x.shape
        probs, weights, expert_idx = self.router(x)
        flat_expert, flat_weight = expert_idx.flatten(), weights.flatten()
        # Group the (token, expert) pairs by expert; stable=True keeps ties in token order.
        order = flat_expert.argsort(stable=True)
        token_of = order // self.router.top_k
        # Tokens per expert: integer counting is exact, so this bincount is not reported.
        counts = torch.bincount(flat_expert, minlength=self.num_experts)
        # The inverse permutation, to undo the sort later. `order` is a permutation (argsort), so
        # every slot is written exactly once: nothing can race, and nothing is reported.
        inverse = torch.empty_like(order)
        positions = torch.arange(order.numel(), device=x.device)
        inverse[order] = positions

        # Dispatch. The copy is exact; its backward adds the gradients of a token chosen by two
        # experts back into `x` with atomics (BX110).
        routed = x.index_select(0, token_of)
        # A per-expert bias repeated by a tensor of counts is an index_select in disguise (BX111).
        bias = self.expert_bias.repeat_interleave(counts, dim=0)
        chunks = torch.split(routed, counts.tolist())
        outs = [F.gelu(chunk @ self.w_in[e]) @ self.w_out[e] for e, chunk in enumerate(chunks)]
        expert_out = (torch.cat(outs) + bias) * flat_weight[order].unsqueeze(-1)
        # Several tokens go to the same expert, so which one is kept here changes per run. The expert
        # ids come from another module, so the code does not show they repeat: BX106 as info.
        self.last_input.index_copy_(0, flat_expert[order], routed.detach())

        # Combine: each token sums the outputs of its k experts.
        if torch.are_deterministic_algorithms_enabled():
            # Undo the sort and add the k outputs of each token in a fixed order.
            out = expert_out[inverse].view(tokens, -1, dim).sum(dim=1)
        else:
            # Faster, but float atomics add the k outputs in a varying order. bitexact reports it
            # as info only: this branch is guarded and the code has a deterministic path (BX101).
            out = torch.zeros_like(x).index_add_(0, token_of, expert_out)

        # Load-balancing loss: router mass per expert, summed with float atomics (BX102).
        importance = torch.zeros(self.num_experts, device=x.device)
        importance.scatter_add_(0, flat_expert, flat_weight)
        aux = self.num_experts * (counts.float() / flat_expert.numel() * importance / tokens).sum()
        return out, aux


@torch.no_grad()
def router_stats(probs, weights, expert_idx, num_experts):
    """Numbers for the training log. no_grad does not help: these ops vary in the forward pass."""
    flat_expert, flat_weight = expert_idx.flatten(), weights.flatten()
    # Total gate weight per expert: bincount with float weights uses atomics (BX115).
    mass = torch.bincount(flat_expert, weights=flat_weight, minlength=num_experts)
    # Mean gate weight per expert, a float scatter-reduce (BX103).
    zeros = torch.zeros(num_experts, device=probs.device)
    mean_w = zeros.scatter_reduce(0, flat_expert, flat_weight, reduce="mean", include_self=False)
    # Router confidence histogram: stable in practice, but raises under deterministic mode (BX116).
    hist = torch.histc(probs.amax(dim=-1), bins=10, min=0, max=1)
    # Median probability per expert; with ties, the returned indices differ between runs (BX117).
    median = probs.median(dim=0)
    # Peak gate weight per expert. amax does not depend on order, but index_reduce_ raises under
    # deterministic mode for every reduce, so BX113 appears only once the mode is turned on.
    peak = zeros.clone().index_reduce_(0, flat_expert, flat_weight, "amax", include_self=False)
    return {"mass": mass, "mean": mean_w, "hist": hist, "median": median.values, "peak": peak}
