"""A toy training run that does NOT reproduce: its gradient is summed in thread-completion order.

The same regression as deterministic_trainer.py, but each step splits the batch over worker threads
and adds their partial gradients in the order the threads finish (concurrent.futures.as_completed),
in float32, the way a GPU kernel adds partial sums with atomics. Float addition is not associative, so
another order gives other bits. Each worker sleeps a random moment (os.urandom) before it returns, so
the order changes from step to step and from run to run.

What `bitexact pair` should find: grad_norm differs first, at the first step whose order changed; the
loss of that step still matches (it is computed before the update), and differs from the next step
on. That is the signature of a nondeterministic backward pass or gradient reduction.

    python3 completion_order_trainer.py [STEPS]
"""
import json
import math
import os
import random
import struct
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

DIM = 8
SAMPLES = 64
BATCH = 32
WORKERS = 8
BASE_LR = 0.02


def f32(x):
    """Round a Python float to the nearest float32, as a float32 accumulator would."""
    return struct.unpack("f", struct.pack("f", x))[0]


def make_problem(seed):
    rng = random.Random(seed)
    true_w = [rng.uniform(-1.0, 1.0) for _ in range(DIM)]
    # Rows of very different scales make partial sums of different magnitudes, so the rounding of a
    # float32 sum depends on the order in which they are added.
    scales = [rng.choice((0.01, 0.1, 1.0, 3.0)) for _ in range(DIM)]
    xs = [[rng.gauss(0.0, 1.0) * scale for scale in scales] for _ in range(SAMPLES)]
    ys = [sum(w * x for w, x in zip(true_w, row)) + 0.1 * rng.gauss(0.0, 1.0) for row in xs]
    return xs, ys


def partial_gradient(w, xs, ys, rows):
    grad = [0.0] * DIM
    for i in rows:
        err = sum(wj * xj for wj, xj in zip(w, xs[i])) - ys[i]
        for j in range(DIM):
            grad[j] = f32(grad[j] + f32(2.0 * err * xs[i][j]))
    time.sleep(os.urandom(1)[0] / 255.0 * 0.002)  # scheduling jitter: who finishes first varies
    return grad


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    xs, ys = make_problem(1234)
    w = [0.0] * DIM
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for step in range(1, steps + 1):
            started = time.perf_counter()
            batch = [(step * BATCH + i) % SAMPLES for i in range(BATCH)]
            # Forward pass: one thread, a fixed order, so the loss of a step only changes once the
            # weights it sees have changed.
            loss = 0.0
            for i in batch:
                err = sum(wj * xj for wj, xj in zip(w, xs[i])) - ys[i]
                loss += err * err
            loss /= BATCH
            shards = [batch[k::WORKERS] for k in range(WORKERS)]
            futures = [pool.submit(partial_gradient, w, xs, ys, shard) for shard in shards]
            grad = [0.0] * DIM
            for future in as_completed(futures):
                part = future.result()
                grad = [f32(g + p) for g, p in zip(grad, part)]
            grad = [f32(g / BATCH) for g in grad]
            grad_norm = math.sqrt(sum(g * g for g in grad))  # float64, so any changed bit of grad shows
            lr = BASE_LR * 0.5 * (1.0 + math.cos(math.pi * (step - 1) / steps))
            w = [f32(wj - lr * gj) for wj, gj in zip(w, grad)]
            elapsed = time.perf_counter() - started
            record = {"step": step, "loss": loss, "grad_norm": grad_norm, "lr": lr,
                      "step_time_ms": elapsed * 1000.0, "samples_per_sec": BATCH / elapsed}
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
