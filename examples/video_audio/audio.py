"""A 1-D conv acoustic model with a CTC head over 80-bin log-mel frames, (B, 80, T)."""
import torch
import torch.nn.functional as F
from torch import nn

VOCAB = 32  # blank + 26 letters + space, apostrophe and a few punctuation marks


class CTCHead(nn.Module):
    def __init__(self, n_mels=80, hidden=256):
        super().__init__()
        # Mirror the first/last frames so the wide kernel sees speech, not zeros, at the edges.
        # The 1-D backward was bitwise stable when measured, but deterministic mode rejects it;
        # torch.flip + torch.cat builds the same border with a plain backward.
        self.pad = nn.ReflectionPad1d(5)
        self.conv = nn.Conv1d(n_mels, hidden, kernel_size=11, stride=2)
        self.proj = nn.Linear(hidden, VOCAB)
        # The CUDA backward sums alignment paths with atomics. It measured stable, yet it is
        # documented as nondeterministic and raises under the mode; the CPU loss avoids both.
        self.criterion = nn.CTCLoss(blank=0, zero_infinity=True)

    def output_lengths(self, frame_lengths):
        return (frame_lengths + 2 * 5 - 11) // 2 + 1

    def forward(self, mels):
        h = F.gelu(self.conv(self.pad(mels)))  # (B, 256, T')
        return self.proj(h.transpose(1, 2)).log_softmax(-1)  # (B, T', VOCAB)

    def loss(self, mels, frame_lengths, targets, target_lengths):
        log_probs = self(mels).transpose(0, 1)  # CTC wants (T', B, VOCAB)
        return self.criterion(log_probs, targets, self.output_lengths(frame_lengths), target_lengths)
