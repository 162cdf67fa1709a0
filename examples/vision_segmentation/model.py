"""A small encoder-decoder for semantic segmentation, built from the usual parts.

train.py turns on torch.use_deterministic_algorithms(True), and bitexact applies that to this file
too: ops the mode makes reproducible stay quiet, ops it cannot handle are reported as errors.
"""
import torch
import torch.nn.functional as F
from torch import nn

NUM_CLASSES = 21


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        # Mirrored borders avoid dark edges. The 2-D backward adds border gradients with atomics,
        # but torch 2.11 has a deterministic kernel for it under the mode (about 2x slower): quiet.
        self.pad = nn.ReflectionPad2d(1)
        # cuDNN may pick nondeterministic algorithms; the mode restricts it to reproducible ones.
        self.conv = nn.Conv2d(cin, cout, 3)
        self.norm = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.norm(self.conv(self.pad(x))))


class FeatureAlign(nn.Module):
    """A spatial transformer: predicts an affine warp and resamples the features with it."""

    def __init__(self, channels):
        super().__init__()
        self.theta = nn.Linear(channels, 6)

    def forward(self, x):
        theta = self.theta(x.mean(dim=(2, 3))).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        # Gradients of the samples are pushed into neighbouring pixels with atomics, and PyTorch
        # has no deterministic version: this raises at the first backward() under the mode.
        return F.grid_sample(x, grid, align_corners=False)


class PyramidContext(nn.Module):
    """PSPNet-style context: a global summary plus a coarse 6x6 grid of local summaries."""

    def __init__(self, channels):
        super().__init__()
        self.global_pool = nn.AdaptiveAvgPool2d(1)  # a plain mean: deterministic, not reported
        # Overlapping adaptive windows: the backward has no deterministic kernel and raises.
        self.grid_pool = nn.AdaptiveAvgPool2d(6)
        self.proj = nn.Conv2d(channels * 2, channels, 1)

    def forward(self, x):
        h, w = x.shape[-2:]
        summary = self.global_pool(x).expand_as(x)
        # Bilinear backward varies by default; under the mode torch 2.11 makes it reproducible
        # (roughly 22x slower backward), so nothing is reported here.
        local = F.interpolate(self.grid_pool(x), size=(h, w), mode="bilinear", align_corners=False)
        return self.proj(torch.cat([x + summary, local], dim=1))


def composite(alpha):
    """Front-to-back compositing of depth-ordered layer masks (N, K, H, W) into visible masks."""
    # Each layer is seen through the layers in front of it. cumprod has no deterministic kernel
    # and the mode does not notice: it keeps varying silently, which bitexact reports as an error.
    through = torch.cumprod(1 - alpha, dim=1)
    return alpha * torch.cat([torch.ones_like(alpha[:, :1]), through[:, :-1]], dim=1)


class SegNet(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, width=32, layers=4):
        super().__init__()
        self.enc1 = ConvBlock(3, width)
        self.enc2 = ConvBlock(width, width * 2)
        self.align = FeatureAlign(width * 2)
        self.context = PyramidContext(width * 2)
        self.head = nn.Conv2d(width * 2, num_classes, 1)
        self.layer_head = nn.Conv2d(width * 2, layers, 1)

    def forward(self, x):
        features = self.context(self.align(self.enc2(F.max_pool2d(self.enc1(x), 2))))
        # Bicubic upsampling back to input resolution: no deterministic backward, raises.
        logits = F.interpolate(self.head(features), scale_factor=2, mode="bicubic", align_corners=False)
        layers = composite(torch.sigmoid(self.layer_head(features)))
        # Scores leave the model flattened per pixel: (N, C, H*W).
        return logits.flatten(2), layers
