"""Message passing plus hierarchical pooling for graph classification (molecule-sized graphs).

Graphs arrive as one disjoint union: x (N, F) node features, edge_index (2, E), batch (N,) graph ids.
Deterministic mode stays off here, so each hazard below varies silently on CUDA.
"""
import torch
from torch import nn


class MeanConv(nn.Module):
    """Mean of incoming messages, plus a GCN-style propagation over a normalised sparse adjacency."""

    def __init__(self, dim):
        super().__init__()
        self.msg = nn.Linear(dim, dim)
        self.upd = nn.Linear(2 * dim, dim)

    def forward(self, h, edge_index, edge_weight):
        n = h.shape[0]
        src, dst = edge_index[0].long(), edge_index[1].long()
        messages = self.msg(h)[src] * edge_weight.unsqueeze(-1)  # (E, D)
        agg = torch.zeros_like(h)
        # Mean over in-edges: the running mean depends on the order edges arrive in. Sort edges by
        # dst and reduce segments, or use scatter_reduce_ "mean" under deterministic mode.
        agg.index_reduce_(0, dst, messages, "mean", include_self=False)
        # The most recent edge feature per node, for a "last bond" channel. Nodes with several
        # in-edges keep whichever write lands last; pick one edge explicitly (e.g. max edge id).
        last_edge = torch.zeros_like(h).scatter_(0, dst.unsqueeze(-1).expand_as(messages), messages)
        adj = torch.sparse_coo_tensor(edge_index, edge_weight, (n, n))
        # Sparse x dense reduces rows in a varying order, even with deterministic mode. A dense
        # adjacency and torch.mm is exact for graphs this small.
        prop = torch.sparse.mm(adj, h)
        return torch.relu(self.upd(torch.cat([agg + last_edge, prop], dim=-1)))


class DiffPool(nn.Module):
    """Soft cluster assignment per graph (DiffPool): X' = S^T X, A' = S^T A S on padded batches."""

    def __init__(self, dim, clusters):
        super().__init__()
        self.assign = nn.Linear(dim, clusters)

    def forward(self, h_dense, adj_dense):
        # h_dense (B, Nmax, D), adj_dense (B, Nmax, Nmax)
        s = torch.softmax(self.assign(h_dense), dim=-1)  # (B, Nmax, K)
        # bmm with a sparse first operand accumulates with atomics; keep adj dense (or turn on
        # deterministic mode, which has a stable path for this one).
        a_s = torch.bmm(adj_dense.to_sparse(), s)
        return s.transpose(1, 2) @ h_dense, s.transpose(1, 2) @ a_s


def to_dense_batch(h, batch, num_graphs, max_nodes):
    """Pack (N, D) node rows into (B, Nmax, D). batch is sorted, so positions come from a cumsum."""
    ones = torch.ones_like(batch, dtype=torch.float32)
    # A float scan adds in a varying order. Counts of ones stay exact below 2**24, but any other
    # weights would round differently per run; an integer cumsum (ones_like(batch)) is exact.
    pos = (ones.cumsum(0) - 1).long()
    counts = torch.bincount(batch, minlength=num_graphs)
    pos = pos - torch.cat([counts.new_zeros(1), counts.cumsum(0)[:-1]])[batch]
    dense = h.new_zeros(num_graphs, max_nodes, h.shape[-1])
    graph = batch.long()
    # Each (graph, pos) pair is unique here, but nothing checks it: if a pair repeats, the last
    # write wins at random. Deduplicate, or index_put_(..., accumulate=True) if rows should add.
    dense[graph, pos] = h
    return dense
