"""Text-classification data: files on disk, a label vocabulary, per-rank shards, light augmentation.

Every hazard here is in the data, not in a kernel: the same code on the same files can feed the
model a different sequence of samples, with different label ids, from one run to the next.
"""
import os
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset


def list_documents(root: str) -> list[str]:
    # The directory order is whatever the file system returns; a copy of the corpus on another
    # disk lists differently, and so does the same disk after files were added and removed.
    return [os.path.join(root, name) for name in os.listdir(root) if name.endswith(".txt")]


def label_vocabulary(paths: list[str]) -> dict[str, int]:
    # The label is the parent folder name. Numbering a set of strings gives ids in hash order,
    # and string hashes are salted per interpreter: "spam" may be class 0 today and 1 tomorrow.
    labels = {Path(p).parent.name for p in paths}
    return {label: i for i, label in enumerate(labels)}


def shard_for_rank(paths: list[str], rank: int, world_size: int) -> list[str]:
    # Built-in hash() of a str is salted too, so which rank reads which document changes per run.
    return [p for p in paths if hash(p) % world_size == rank]


class TextFolder(Dataset):
    def __init__(self, root: str, rank: int = 0, world_size: int = 1, max_len: int = 256):
        self.root = Path(root)
        # Already sorted: pathlib results wrapped in sorted() come out the same everywhere.
        self.vocab_files = sorted(self.root.glob("vocab*.json"))
        self.paths = shard_for_rank(list_documents(root), rank, world_size)
        self.labels = label_vocabulary(self.paths)
        self.max_len = max_len

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int):
        path = self.paths[index]
        tokens = np.frombuffer(Path(path).read_bytes()[: self.max_len], dtype=np.uint8).astype(np.int64)
        # Token dropout for augmentation, drawn from NumPy's process-global generator: the mask a
        # document gets depends on which worker loads it and on how many draws came before.
        keep = np.random.rand(len(tokens)) > 0.1
        label = self.labels[Path(path).parent.name]
        return torch.from_numpy(tokens[keep]), label
