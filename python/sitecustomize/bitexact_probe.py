"""The probe of `bitexact pair --probe modules|ops`: where two runs of one training program part ways.

This file is the `modules` mode and what both modes share (digest, records, the step window, flushing);
the `ops` mode, every aten op's outputs, is bitexact_probe_ops.py.

Installed without code changes by bitexact's sitecustomize (BITEXACT_PROBE=modules) right after the
program imports torch. It records, in execution order, a digest of every nn.Module's outputs in the
forward, the gradient of each of those outputs in the backward, every parameter's gradient before
and every parameter after `optimizer.step()`, and each `loss.backward()`'s loss: one JSON line per
tensor in `$BITEXACT_PROBE_DIR/rank_<r>.jsonl`, appended, never rewritten.

Digests are computed on the tensor's device and stay there (no host sync); a step's digests are
copied towards the host in one transfer when the optimizer steps and written once they arrive. A
digest weighs each 64-bit word of the tensor's raw bytes by an odd number that grows with its
position and sums with wrap-around, so a single flipped bit anywhere, or two unequal elements
swapped, change it.

Records: sequence (execution order, from 0), rank, step (1-based, as training logs count), phase
(forward | backward | optimizer), kind (module-output | grad-output | param-grad | param | loss |
collective),
module (path as named_modules() names it, the root's class name for the root), output (index of the
tensor among the module's outputs), occurrence (how many times this module/kind/output was recorded
before in the step: microbatches, reused modules, recomputation), source {path, line} (where the
module's forward is defined), dtype, shape, digest (16 hex digits).

Ranks: each process writes its own rank_<r>.jsonl, r from $RANK (torchrun, Megatron), else
$LOCAL_RANK, else torch.distributed's rank once the process group exists, else 0; the file is opened
at the first step boundary, after the program has set its process group up.

Collectives: a call of torch.distributed's all_reduce, broadcast, reduce, all_gather(_into_tensor),
reduce_scatter(_tensor) or all_to_all_single is a `collective` record (op `torch.distributed.<name>`)
of what this rank sends, digested before the call (an asynchronous collective writes its tensors
later), with the user's source line. DistributedDataParallel's bucket all-reduces run in C++ and are
not Python calls: the `ops` mode sees them (c10d ops on the dispatcher).
"""
import atexit
import inspect
import json
import os
import sys

_MASK64 = (1 << 64) - 1


def _odd_weights(torch, count, device, cache):
    """1, 3, 5, ... as int64 on `device`: kept per (count, device), since shapes repeat every step."""
    key = (count, str(device))
    weights = cache.get(key)
    if weights is None:
        if len(cache) >= 256:
            cache.clear()
        weights = torch.arange(count, device=device, dtype=torch.int64) * 2 + 1
        cache[key] = weights
    return weights


def digest(torch, tensor, cache=None):
    """The tensor's 64-bit digest as a 0-d int64 tensor on its device (no host sync).

    Σ w_i · (2i + 1) mod 2**64 over the raw bytes' 64-bit words w_i: every weight is odd, so a change
    of any one word (a single flipped bit included, bit 63 too) changes the sum, and a swap of two
    unequal words at i and j changes it by 2·(w_i − w_j)·(j − i). Two kernels (a product and an
    integer sum, exact in any order) once the weights are cached.
    """
    x = tensor.detach()
    if x.is_complex():
        x = torch.view_as_real(x)
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    data = x.contiguous().reshape(-1).view(torch.uint8)
    pad = (-data.numel()) % 8
    if pad:
        data = torch.cat([data, data.new_zeros(pad)])
    words = data.view(torch.int64)
    weights = _odd_weights(torch, words.numel(), words.device, {} if cache is None else cache)
    return (words * weights).sum()


def _tensors(value, prefix=()):
    """The tensors in a module's output (a tensor, or tuples, lists and dicts of them), in order."""
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for key in value:
            yield from _tensors(value[key])


def _steps(text):
    """`A-B` (inclusive, 1-based) or `A` or empty (every step)."""
    if not text:
        return 1, float("inf")
    low, _, high = text.partition("-")
    return int(low), int(high) if high else int(low)


_HERE = os.path.dirname(os.path.abspath(__file__))

# torch.distributed's collectives the modules mode records, and the argument that holds what this
# rank sends (the others' outputs are written by the collective).
COLLECTIVES = {
    "all_reduce": "tensor",
    "broadcast": "tensor",
    "reduce": "tensor",
    "all_gather": "tensor",
    "all_gather_into_tensor": "input_tensor",
    "reduce_scatter": "input_list",
    "reduce_scatter_tensor": "input",
    "all_to_all_single": "input",
}


def _rank(torch):
    """This process's rank: $RANK, $LOCAL_RANK, torch.distributed's once initialised, else 0."""
    text = os.environ.get("RANK") or os.environ.get("LOCAL_RANK")
    if text:
        return int(text)
    try:
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            return torch.distributed.get_rank()
    except Exception:
        pass
    return 0


class Probe(object):
    def __init__(self, torch, out_dir, steps=""):
        self.torch = torch
        self.torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
        self.out_dir = out_dir
        # Opened at the first flush, when torch.distributed knows the rank (_rank).
        self.file = None
        self.rank = None
        self.low, self.high = _steps(steps)
        self.step = 1
        self.sequence = 0
        self.pending = []
        # Batches of records whose digests are on their way to the host: (records, host tensor, event).
        self.in_flight = []
        self.occurrences = {}
        self.names = {}
        self.param_names = {}
        self.sources = {}
        self.weights = {}
        self.stack = []
        self.in_backward = 0
        # A backward ended and no module forward began since (gradient all-reduce, clipping, scaling).
        self.after_backward = False

    # --- records -------------------------------------------------------------------------------

    def in_window(self):
        return self.low <= self.step <= self.high

    def record(self, kind, phase, module, tensor, output=0, source=None, op=None):
        if not self.in_window() or not isinstance(tensor, self.torch.Tensor):
            return
        # Occurrences count per module/kind/output; an op's per step, phase, op and source line.
        key = (kind, module, output) if op is None else (phase, op, output, source and (source["path"], source["line"]))
        occurrence = self.occurrences.get(key, 0)
        self.occurrences[key] = occurrence + 1
        record = {
            "sequence": self.sequence,
            "rank": None,  # set when written (_rank)
            "step": self.step,
            "phase": phase,
            "kind": kind,
            "module": module,
            "output": output,
            "occurrence": occurrence,
            "source": source,
            "dtype": str(tensor.dtype).replace("torch.", ""),
            "shape": list(tensor.shape),
            "digest": digest(self.torch, tensor, self.weights),
        }
        if op is not None:
            record["op"] = op
        self.pending.append(record)
        self.sequence += 1

    def flush(self, wait=False):
        """Moves the pending records' digests towards the host and writes the records that arrived.

        A CUDA step's digests are copied, one stack per device, into pinned host memory without
        waiting (no host sync: under torch.cuda.set_sync_debug_mode("error") nothing raises); they
        are written once the copy's event has completed, at a later step boundary, or at exit
        (`wait`). CPU digests are written at once.
        """
        if self.file is None and (self.pending or self.in_flight or wait):
            self.rank = _rank(self.torch)
            os.makedirs(self.out_dir, exist_ok=True)
            self.file = open(os.path.join(self.out_dir, "rank_%d.jsonl" % self.rank), "a")
        if self.pending:
            by_device = {}
            for record in self.pending:
                by_device.setdefault(record["digest"].device, []).append(record)
            for device, records in by_device.items():
                stacked = self.torch.stack([r["digest"] for r in records])
                if device.type == "cuda":
                    host = self.torch.empty(stacked.shape, dtype=stacked.dtype, pin_memory=True)
                    host.copy_(stacked, non_blocking=True)
                    event = self.torch.cuda.Event()
                    event.record()
                    self.in_flight.append((records, host, event))
                else:
                    self.in_flight.append((records, stacked, None))
            self.pending = []
        # In order: a batch is written only after every batch before it.
        while self.in_flight:
            records, host, event = self.in_flight[0]
            if event is not None and not event.query():
                if not wait:
                    break
                event.synchronize()
            self.in_flight.pop(0)
            for record, value in zip(records, host.tolist()):
                record["digest"] = "%016x" % (value & _MASK64)
                record["rank"] = self.rank
                self.file.write(json.dumps(record, separators=(",", ":")) + "\n")
        if self.file is not None:
            self.file.flush()

    def close(self):
        self.flush(wait=True)

    # --- names ---------------------------------------------------------------------------------

    def user_frame(self, depth=1):
        """The first frame outside torch and the probe: the user's line that led here."""
        frame = sys._getframe(depth)
        while frame is not None:
            path = frame.f_code.co_filename
            if not (path.startswith(self.torch_dir) or path.startswith(_HERE) or path.startswith("<")):
                return {"path": path, "line": frame.f_lineno}
            frame = frame.f_back
        return None

    def phase_now(self):
        return "backward" if self.in_backward else "optimizer" if self.after_backward else "forward"

    def collective(self, op, tensors):
        """What this rank sends to a collective, before it runs (it may write its tensors asynchronously)."""
        module = self.stack[-1] if self.stack else ""
        source = self.user_frame(2)
        for index, tensor in enumerate(t for t in _tensors(tensors) if t.layout == self.torch.strided):
            self.record("collective", self.phase_now(), module, tensor, index, source, op=op)

    def name_of(self, module):
        name = self.names.get(id(module))
        if name is None:
            # A module called with no module around it is a root: name its whole tree from it.
            root = type(module).__name__
            for sub_name, sub in module.named_modules():
                self.names.setdefault(id(sub), sub_name or root)
            for param_name, param in module.named_parameters():
                self.param_names.setdefault(id(param), "%s.%s" % (root, param_name))
            name = self.names[id(module)]
        return name

    def source_of(self, module):
        cls = type(module)
        if cls not in self.sources:
            try:
                forward = cls.forward
                self.sources[cls] = {"path": inspect.getsourcefile(forward) or "", "line": inspect.getsourcelines(forward)[1]}
            except (TypeError, OSError):
                self.sources[cls] = None
        return self.sources[cls]

    # --- hooks ---------------------------------------------------------------------------------

    def forward_pre(self, module, args):
        self.stack.append(self.name_of(module))
        self.after_backward = False

    def forward(self, module, args, output):
        if self.stack:
            self.stack.pop()
        if not self.in_window():
            return
        name = self.name_of(module)
        source = self.source_of(module)
        phase = "backward" if self.in_backward else "forward"  # activation recomputation runs in the backward
        for index, tensor in enumerate(_tensors(output)):
            self.record("module-output", phase, name, tensor, index, source)
            if tensor.requires_grad and tensor.grad_fn is not None:
                tensor.register_hook(self._grad_hook(name, index, source))

    def _grad_hook(self, name, index, source):
        def hook(grad):
            self.record("grad-output", "backward", name, grad, index, source)

        return hook

    def before_step(self, optimizer, args, kwargs):
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    self.record("param-grad", "optimizer", self.param_names.get(id(param), "?"), param.grad)

    def after_step(self, optimizer, args, kwargs):
        for group in optimizer.param_groups:
            for param in group["params"]:
                self.record("param", "optimizer", self.param_names.get(id(param), "?"), param)
        self.flush()
        self.step += 1
        self.occurrences = {}


def install(torch, out_dir, steps=""):
    """Hooks every module and optimizer of the process; returns the Probe."""
    import torch.nn.modules.module as modules
    import torch.optim.optimizer as optimizers

    probe = Probe(torch, out_dir, steps)
    modules.register_module_forward_pre_hook(probe.forward_pre)
    modules.register_module_forward_hook(probe.forward)
    optimizers.register_optimizer_step_pre_hook(probe.before_step)
    optimizers.register_optimizer_step_post_hook(probe.after_step)

    original_backward = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        if self.numel() == 1:
            probe.record("loss", "forward", "", self)
        probe.in_backward += 1
        try:
            return original_backward(self, *args, **kwargs)
        finally:
            probe.in_backward -= 1
            probe.after_backward = True

    torch.Tensor.backward = backward
    _hook_collectives(torch, probe)
    atexit.register(probe.close)
    return probe


def _hook_collectives(torch, probe):
    """Wraps torch.distributed's collectives (COLLECTIVES) to record what each rank sends."""
    try:
        import torch.distributed as dist
        import torch.distributed.distributed_c10d as c10d
    except Exception:  # a torch built without distributed: nothing to record
        return
    for name, argument in COLLECTIVES.items():
        original = getattr(c10d, name, None)
        if original is None:
            continue
        try:
            signature = inspect.signature(original)
        except (TypeError, ValueError):
            continue
        wrapped = _collective_wrapper(probe, "torch.distributed." + name, original, signature, argument)
        for namespace in (dist, c10d):
            if getattr(namespace, name, None) is original:
                setattr(namespace, name, wrapped)


def _collective_wrapper(probe, op, original, signature, argument):
    import functools

    compiling = getattr(getattr(probe.torch, "compiler", None), "is_compiling", lambda: False)

    @functools.wraps(original)
    def collective(*args, **kwargs):
        # While torch.compile traces the call there is no tensor to digest, only its description.
        if probe.in_window() and not compiling():
            try:
                sent = signature.bind(*args, **kwargs).arguments.get(argument)
            except TypeError:  # let the collective itself say what is wrong with its arguments
                sent = None
            if sent is not None:
                probe.collective(op, sent)
        return original(*args, **kwargs)

    return collective


def install_from_environment(torch):
    mode = os.environ.get("BITEXACT_PROBE", "")
    if not mode:
        return None
    if mode not in MODES:
        sys.stderr.write("bitexact probe: unknown mode %r (modules, ops); not recording\n" % mode)
        return None
    out_dir = os.environ.get("BITEXACT_PROBE_DIR") or "bitexact-probe"
    return MODES[mode](torch, out_dir, os.environ.get("BITEXACT_PROBE_STEPS", ""))


def install_ops(torch, out_dir, steps=""):
    """The `ops` mode (bitexact_probe_ops.py): every aten op's outputs inside the step window."""
    import bitexact_probe_ops

    return bitexact_probe_ops.install(torch, out_dir, steps)


MODES = {"modules": install, "ops": install_ops}


def main(argv):
    """`python -m bitexact_probe [--mode modules|ops] [--out DIR] [--steps A-B] -- script.py args...`: runs the script probed."""
    import argparse
    import runpy

    if "--" not in argv:
        sys.stderr.write("usage: python -m bitexact_probe [--mode modules|ops] [--out DIR] [--steps A-B] -- script.py [args...]\n")
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="python -m bitexact_probe")
    parser.add_argument("--mode", choices=sorted(MODES), default=os.environ.get("BITEXACT_PROBE") or "modules")
    parser.add_argument("--out", default=os.environ.get("BITEXACT_PROBE_DIR") or "bitexact-probe")
    parser.add_argument("--steps", default=os.environ.get("BITEXACT_PROBE_STEPS", ""))
    options = parser.parse_args(argv[:split])
    script = argv[split + 1 :]
    if not script:
        sys.stderr.write("bitexact probe: no script after --\n")
        return 2
    import torch

    MODES[options.mode](torch, options.out, options.steps)
    sys.argv = script
    sys.path.insert(0, os.path.dirname(os.path.abspath(script[0])))
    runpy.run_path(script[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
