"""Writes logs/: one pair of sample logs (run a, run b) per text format bitexact reads.

These are imitations, not captures: each line is built with the format strings the libraries use
(Megatron-LM training_log, the Hugging Face Trainer's logs dict, a plain `key: value` logger), around
a made-up loss curve. Run b drifts from run a the way a nondeterministic kernel makes a run drift: by
a relative 1e-10 at first, growing each step, so the rounded prints hide it for a while.
Logs captured from the real libraries on a GPU machine belong in test/fixtures/runs/.

    python3 make_sample_logs.py        # rewrites logs/*.log
"""
import datetime
import math
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "logs")


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def curve(steps, seed, drift_from=None, growth=4.0):
    """Per-step (loss, grad_norm, lr); from `drift_from` on, values move by 1e-10 * growth**k."""
    rng = random.Random(seed)
    out = []
    for i in range(1, steps + 1):
        loss = 10.0 * math.exp(-i / 40.0) + 0.5 + 0.05 * rng.random()
        grad = 2.0 + math.exp(-i / 10.0) + 0.1 * rng.random()
        lr = 1.0e-4 * 0.5 * (1.0 + math.cos(math.pi * (i - 1) / steps))
        if drift_from is not None and i >= drift_from:
            rel = min(1.0e-10 * growth ** (i - drift_from), 1.0e-3)
            loss *= 1.0 + rel
            grad *= 1.0 - rel
        out.append((loss, grad, lr))
    return out


def megatron(run_b):
    """Megatron-LM stdout: log interval 5 (printed losses are interval means), last-rank print."""
    train_iters, interval, batch = 50, 5, 32
    values = curve(train_iters, 7, drift_from=13 if run_b else None)
    start = datetime.datetime(2026, 5, 28, 22, 26, 20)
    lines = [
        "using world size: 1, data-parallel size: 1, context-parallel size: 1, tensor-model-parallel size: 1, pipeline-model-parallel size: 1",
        "> building GPT model ...",
        " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 125829120",
        "[after dataloaders are built] datetime: 2026-05-28 22:26:19",
        "training ...",
    ]
    total = 0.0
    count = 0
    for iteration in range(1, train_iters + 1):
        loss, grad, lr = values[iteration - 1]
        total += loss
        count += 1
        if iteration % interval != 0 and iteration != 1:
            continue
        stamp = (start + datetime.timedelta(milliseconds=140.6 * iteration)).strftime("%Y-%m-%d %H:%M:%S.%f")
        s = f" [{stamp}]"
        s += " iteration {:8d}/{:8d} |".format(iteration, train_iters)
        s += " consumed samples: {:12d} |".format(iteration * batch)
        s += " elapsed time per iteration (ms): {:.1f} |".format(140.6 + (3.1 if run_b else 0.0) + (iteration % 3) * 0.7)
        s += f" learning rate: {lr:.6E} |"
        s += " global batch size: {:5d} |".format(batch)
        avg = total / count
        if avg >= 0.0:
            s += " {}: {:.6E} |".format("lm loss", avg)
        s += f" loss scale: {1.0:.1f} |"
        s += f" grad norm: {grad:.3f} |"
        s += " number of skipped iterations: {:3d} |".format(0)
        s += " number of nan iterations: {:3d} |".format(0)
        lines.append(s)
        total, count = 0.0, 0
        if iteration % 25 == 0:
            loss_value = loss * 1.02
            text = f" validation loss at iteration {iteration} | "
            text += "{} value: {:.6E} | ".format("lm loss", loss_value)
            text += "{} PPL: {:.6E} | ".format("lm loss", math.exp(min(20.0, loss_value)))
            lines += ["-" * len(text), text, "-" * len(text)]
    lines.append("[after training is done] datetime: 2026-05-28 22:26:28")
    return "\n".join(lines) + "\n"


def hf(run_b):
    """HF Trainer stdout: print(logs) every 5 steps between tqdm redraws; loss is round(x, 4)."""
    steps, logging_steps = 40, 5
    values = curve(steps, 11, drift_from=6 if run_b else None, growth=10.0)
    parts = ["***** Running training *****\n  Num examples = 320\n  Num Epochs = 1\n  Total optimization steps = 40\n"]
    window = []
    for step in range(1, steps + 1):
        loss, grad, lr = values[step - 1]
        window.append(loss)
        bar = int(10 * step / steps)
        parts.append("\r {:3d}%|{}{}| {}/{} [00:0{}<00:05,  7.{}it/s]".format(
            int(100 * step / steps), "\u2588" * bar, " " * (10 - bar), step, steps, step // 10, step % 10))
        if step % logging_steps == 0:
            logs = {"loss": round(sum(window) / len(window), 4), "grad_norm": f32(grad),
                    "learning_rate": lr, "epoch": round(step / steps, 2)}
            window = []
            parts.append("\n" + str(logs) + "\n")
    summary = {"train_runtime": 5.4321 + (0.37 if run_b else 0.0), "train_samples_per_second": 58.91,
               "train_steps_per_second": 7.364, "train_loss": sum(v[0] for v in values) / steps, "epoch": 1.0}
    parts.append("\n" + str(summary) + "\n")
    return "".join(parts)


def generic(run_b):
    """A plain logger: timestamp, level, `key: value` pairs, floats as repr (full precision)."""
    values = curve(20, 3)
    start = datetime.datetime(2026, 5, 28, 9, 0, 0)
    lines = ["2026-05-28 09:00:00,000 INFO config: batch_size=16 seed=0"]
    for step, (loss, grad, lr) in enumerate(values, start=1):
        stamp = (start + datetime.timedelta(seconds=step)).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
        tokens = 12000.0 + step * (37.5 if run_b else 41.25)
        lines.append(f"{stamp} INFO step {step} | loss: {loss!r} | grad_norm: {grad!r} | lr: {lr!r} | tokens_per_sec: {tokens:.1f}")
    return "\n".join(lines) + "\n"


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, make in (("megatron", megatron), ("hf", hf), ("generic", generic)):
        for run, is_b in (("a", False), ("b", True)):
            with open(os.path.join(OUT, f"{name}-{run}.log"), "w", encoding="utf-8", newline="") as f:
                f.write(make(is_b))


if __name__ == "__main__":
    main()
