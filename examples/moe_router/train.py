"""Trains a bag-of-n-grams classifier with one MoE block on random data."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from moe import MoE, router_stats

VOCAB, DIM, EXPERTS, CLASSES, BAG = 5000, 64, 8, 10, 12


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        # Max-pooled bag of hashed n-grams. In the backward pass each gradient goes to the winning
        # row through atomics, with no deterministic kernel (BX114); mode="mean" would be stable.
        self.embed = nn.EmbeddingBag(VOCAB, DIM, mode="max")
        self.moe = MoE(DIM, 4 * DIM, EXPERTS)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, ids, offsets):
        h, aux = self.moe(self.embed(ids, offsets))
        return self.head(h), aux


def main(steps: int = 100, batch: int = 256):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Classifier().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(steps):
        ids = torch.randint(0, VOCAB, (batch * BAG,), device=device)
        offsets = torch.arange(0, batch * BAG, BAG, device=device)
        labels = torch.randint(0, CLASSES, (batch,), device=device)
        logits, aux = model(ids, offsets)
        loss = F.cross_entropy(logits, labels) + 0.01 * aux
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0:
            with torch.no_grad():
                routing = model.moe.router(model.embed(ids, offsets))
            stats = router_stats(*routing, EXPERTS)
            print(f"step {step} loss {loss.item():.4f} expert mass {stats['mass'].tolist()}")


if __name__ == "__main__":
    main()
