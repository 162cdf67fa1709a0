"""Process-wide setup shared by every entry point: environment, seeds and backend flags.

Most of it was collected from tuning guides and old issues over time, which is how the mistakes
bitexact reports here tend to creep in.
"""
import os
import random

import numpy as np
import torch
import torch.backends.cudnn as cudnn


def configure_environment() -> None:
    # cuBLAS reads the workspace setting when its first handle is created, so this must run
    # before any CUDA work. ":4096:2" is not one of the two settings cuBLAS documents (BX206).
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:2")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def apply_speed_defaults() -> None:
    # Copied from a throughput guide. Timing-based algorithm choice (BX201) and cuDNN
    # determinism switched off (BX202, informational here because the mode is on below).
    torch.backends.cuda.matmul.allow_tf32 = False
    cudnn.benchmark = True
    cudnn.deterministic = False


def configure_backends(deterministic: bool, skip_fill: bool) -> None:
    if not deterministic:
        return
    # warn_only keeps the nondeterministic kernels of ops that have no deterministic version and
    # only prints a warning for each (BX203).
    torch.use_deterministic_algorithms(True, warn_only=True)
    # Two typos: neither line changes anything at run time (BX205).
    cudnn.determinstic = True
    cudnn.benchmarks = False
    if skip_fill:
        # Saves most of the mode's cost, at the price of hiding reads of unwritten memory (BX207).
        torch.utils.deterministic.fill_uninitialized_memory = False
