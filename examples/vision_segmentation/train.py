"""One training step and an evaluation pass for model.SegNet, with deterministic mode on."""
import torch
import torch.nn.functional as F

from model import NUM_CLASSES, SegNet

# From here on every CUDA op must be deterministic or raise.
torch.use_deterministic_algorithms(True)


def train_step(model, optimizer, images, masks, layer_targets):
    n, _, h, w = images.shape
    flat_logits, layers = model(images)
    logits = flat_logits.view(n, NUM_CLASSES, h, w)
    # With (N, C, H, W) input cross_entropy runs the nll_loss2d kernel, whose atomic reduction
    # raises under the mode (even in the forward pass). The quick fix rewrites this line to
    # reduction="none" followed by .mean(), which is reproducible and allowed.
    loss = F.cross_entropy(logits, masks)
    loss = loss + F.binary_cross_entropy(layers, layer_targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


def upsample_masks(mask_logits, size):
    # A guarded pair: the deterministic branch uses nearest (exact, allowed under the mode); the
    # other branch only runs with the mode off, so bicubic there is reported as info at most.
    if torch.are_deterministic_algorithms_enabled():
        return F.interpolate(mask_logits, size=size, mode="nearest")
    else:
        return F.interpolate(mask_logits, size=size, mode="bicubic", align_corners=False)


@torch.no_grad()
def evaluate(model, images, masks):
    n, _, h, w = images.shape
    # Backward-only hazards cannot happen without autograd: multi-scale bicubic resizing is fine.
    small = F.interpolate(images, scale_factor=0.5, mode="bicubic", align_corners=False)
    flat_logits, _ = model(small)
    logits = upsample_masks(flat_logits.view(n, NUM_CLASSES, h // 2, w // 2), (h, w))
    # Per-pixel losses reduced outside the kernel: reproducible, and allowed under the mode.
    return F.cross_entropy(logits, masks, reduction="none").mean()


if __name__ == "__main__":
    net = SegNet().cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(2, 3, 64, 64, device="cuda")
    y = torch.randint(0, NUM_CLASSES, (2, 64, 64), device="cuda")
    t = torch.rand(2, 4, 32, 32, device="cuda")
    print(train_step(net, opt, x, y, t).item(), evaluate(net, x, y).item())
