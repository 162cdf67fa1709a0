"""A toy training run that reproduces bit for bit: `bitexact pair` must call it `bitwise`.

Linear regression trained with SGD on a fixed synthetic problem (seeded data, a fixed batch order,
every sum taken in the same order). Each step prints one JSON object to stdout; json.dumps writes
floats as repr, so the log keeps every bit. step_time_ms changes from run to run, as timings do, and
bitexact shows it without counting it.

    python3 deterministic_trainer.py [STEPS]
"""
import json
import math
import random
import sys
import time

DIM = 8
SAMPLES = 64
BATCH = 16
BASE_LR = 0.05


def make_problem(seed):
    rng = random.Random(seed)
    true_w = [rng.uniform(-1.0, 1.0) for _ in range(DIM)]
    xs = [[rng.gauss(0.0, 1.0) for _ in range(DIM)] for _ in range(SAMPLES)]
    ys = [sum(w * x for w, x in zip(true_w, row)) + 0.1 * rng.gauss(0.0, 1.0) for row in xs]
    return xs, ys


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    xs, ys = make_problem(1234)
    w = [0.0] * DIM
    for step in range(1, steps + 1):
        started = time.perf_counter()
        batch = [(step * BATCH + i) % SAMPLES for i in range(BATCH)]
        loss = 0.0
        grad = [0.0] * DIM
        for i in batch:
            err = sum(wj * xj for wj, xj in zip(w, xs[i])) - ys[i]
            loss += err * err
            for j in range(DIM):
                grad[j] += 2.0 * err * xs[i][j]
        loss /= BATCH
        grad = [g / BATCH for g in grad]
        grad_norm = math.sqrt(sum(g * g for g in grad))
        lr = BASE_LR * 0.5 * (1.0 + math.cos(math.pi * (step - 1) / steps))
        w = [wj - lr * gj for wj, gj in zip(w, grad)]
        record = {"step": step, "loss": loss, "grad_norm": grad_norm, "lr": lr,
                  "step_time_ms": (time.perf_counter() - started) * 1000.0}
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
