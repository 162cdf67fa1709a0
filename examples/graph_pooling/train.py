"""Graph classification with message passing, DiffPool and a noisy-OR readout.

Run: python train.py (needs a CUDA device). Deterministic mode is deliberately left off.
"""
import torch
import torch.nn.functional as F

from model import DiffPool, MeanConv, to_dense_batch

NUM_GRAPHS, NODES_PER_GRAPH, DIM, CLUSTERS = 16, 24, 64, 6


def random_batch(device):
    n = NUM_GRAPHS * NODES_PER_GRAPH
    batch = torch.arange(NUM_GRAPHS, device=device).repeat_interleave(NODES_PER_GRAPH)  # (N,)
    src = torch.randint(0, NODES_PER_GRAPH, (n * 3,), device=device)
    dst = torch.randint(0, NODES_PER_GRAPH, (n * 3,), device=device)
    offset = batch[torch.randint(0, n, (n * 3,), device=device)] * NODES_PER_GRAPH
    edge_index = torch.stack([src + offset, dst + offset])  # (2, E); duplicate edges are allowed
    return torch.randn(n, DIM, device=device), edge_index, batch


def dense_adjacency(edge_index, edge_weight, n):
    adj = torch.zeros(n, n, device=edge_weight.device)
    flat = edge_index[0] * n + edge_index[1]
    # put_ writes through flat positions; repeated edges race (with accumulate=True they add
    # with atomics). Coalesce the edge list first, or index_put_(..., accumulate=True).
    adj.put_(flat, edge_weight)
    return adj


def train_step(conv, pool, head, opt, x, edge_index, batch):
    n = x.shape[0]
    edge_weight = torch.ones(edge_index.shape[1], device=x.device)
    h = conv(x, edge_index, edge_weight)
    # Link-prediction auxiliary loss: read pair scores out of the (N, N) score matrix.
    scores = torch.matmul(h, h.t())
    # take's backward puts gradients back with accumulate=True, in a varying order for repeated
    # pairs; scores.reshape(-1)[flat] reads the same values with a sorted, stable backward.
    pair_logits = scores.take(edge_index[0] * n + edge_index[1])
    link_loss = F.binary_cross_entropy_with_logits(pair_logits, torch.ones_like(pair_logits))

    adj = dense_adjacency(edge_index, edge_weight, n)
    h_dense = to_dense_batch(h, batch, NUM_GRAPHS, NODES_PER_GRAPH)
    blocks = adj.view(NUM_GRAPHS, NODES_PER_GRAPH, NUM_GRAPHS, NODES_PER_GRAPH)
    adj_dense = blocks.diagonal(dim1=0, dim2=2).permute(2, 0, 1)  # (B, Nmax, Nmax)
    pooled, _ = pool(h_dense, adj_dense)

    # Noisy-OR readout: P(graph active) = 1 - prod over nodes of (1 - p_node). The product is
    # formed with atomics in a varying order; sum log1p(-p) per graph with a sorted segment sum
    # (batch is already sorted) and exponentiate.
    p_node = torch.sigmoid(head(h)).squeeze(-1)  # (N,)
    keep = torch.ones(NUM_GRAPHS, device=x.device)
    p_graph = 1 - keep.scatter_reduce(0, batch, 1 - p_node, reduce="prod")
    target = (pooled.mean(dim=(1, 2)) > 0).float()
    loss = F.binary_cross_entropy(p_graph.clamp(1e-6, 1 - 1e-6), target) + link_loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.detach()


def main():
    device = "cuda"
    conv, pool = MeanConv(DIM).to(device), DiffPool(DIM, CLUSTERS).to(device)
    head = torch.nn.Linear(DIM, 1).to(device)
    params = [*conv.parameters(), *pool.parameters(), *head.parameters()]
    opt = torch.optim.Adam(params, lr=1e-3)
    for step in range(100):
        loss = train_step(conv, pool, head, opt, *random_batch(device))
        if step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
