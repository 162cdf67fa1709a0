"""A small 3-D conv clip classifier with an auxiliary frame-reconstruction decoder.

Input clips are (B, 3, T=16, H=112, W=112). Deterministic mode is off for this project.
"""
import torch
from torch import nn


class ClipEncoder(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        # Repeat the edge frames/pixels instead of zero padding. Border gradients are summed with
        # atomics in the backward; torch.cat of expanded edge slices gives the same padding stably.
        self.pad = nn.ReplicationPad3d(1)
        # cuDNN chooses a 3-D conv algorithm per shape, and some documented ones are not
        # repeatable; torch.backends.cudnn.deterministic = True rules those out.
        self.conv1 = nn.Conv3d(3, width, kernel_size=3)
        # Overlapping spatial windows: one pixel can be the max of two windows, and its gradient
        # contributions are added in scheduling order. kernel == stride (a reshape + amax) avoids it.
        self.pool1 = nn.MaxPool3d(kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
        self.conv2 = nn.Conv3d(width, 2 * width, kernel_size=3, padding=1)
        # Overlapping 3x3x3 averaging: the backward spreads each gradient over shared voxels with
        # atomics. A 2x2x2 window with stride 2, written as reshape + mean, is exact.
        self.pool2 = nn.AvgPool3d(kernel_size=3, stride=2, padding=1)

    def forward(self, clip):
        x = self.pool1(torch.relu(self.conv1(self.pad(clip))))  # (B, 32, 16, 56, 56)
        return self.pool2(torch.relu(self.conv2(x)))  # (B, 64, 8, 28, 28)


class FrameHead(nn.Module):
    """Per-frame 2-D pooling after folding time into the batch, then a temporal average."""

    def __init__(self, channels, num_classes):
        super().__init__()
        # Random pooling regions act as augmentation, but the backward adds gradients with
        # atomics where regions overlap. A plain MaxPool2d with a fixed stride is repeatable.
        self.frac = nn.FractionalMaxPool2d(3, output_size=(14, 14))
        # 14 -> 3 windows overlap (14 is not a multiple of 3), so inputs shared by two windows get
        # gradients in varying order. Pick sizes that divide and use max_pool2d(kernel=stride).
        self.grid = nn.AdaptiveMaxPool2d((3, 3))
        self.fc = nn.Linear(channels * 9, num_classes)

    def forward(self, feats):
        b, c, t, h, w = feats.shape
        frames = feats.transpose(1, 2).reshape(b * t, c, h, w)  # (B*8, 64, 28, 28)
        pooled = self.grid(self.frac(frames)).flatten(1)  # (B*8, 576)
        return self.fc(pooled).view(b, t, -1).mean(dim=1)  # (B, num_classes)


class FrameDecoder(nn.Module):
    """Rebuilds the middle frame's feature map from a pooled code (masked-reconstruction loss)."""

    def __init__(self, channels):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=2, padding=1, return_indices=True)
        self.mix = nn.Conv2d(channels, channels, 1)
        # Overlapping windows can return the same argmax twice; after self.mix the two values
        # differ, and unpooling writes both to one slot: the survivor is random. Nearest
        # upsampling (F.interpolate(mode="nearest")) avoids the indexed write altogether.
        # The suppression below meant BX130 but has a letter O: it silences nothing (BX001).
        self.unpool = nn.MaxUnpool2d(3, stride=2, padding=1)  # bitexact: ignore[BX13O] -- aux loss only

    def forward(self, frame):
        code, idx = self.pool(frame)  # (B, 64, 14, 14)
        return self.unpool(self.mix(code), idx, output_size=frame.shape[-2:])  # (B, 64, 28, 28)
