"""The probe of `bitexact pair --probe modules|ops`: where two runs of one training program part ways.

This file is the `modules` mode and the entry points (`python -m bitexact_probe`, the sitecustomize's
install_from_environment); what both modes share (records, the step window, flushing, the hooks) is
bitexact_probe_base.py, the digests bitexact_probe_digest.py, and the `ops` mode, every aten op's
outputs, bitexact_probe_ops.py.

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
module's forward is defined), dtype, shape, digest (16 hex digits), and with
`--hash full` (BITEXACT_PROBE_HASH=full) sha256: the SHA-256 of the tensor's bytes, copied to the host
(a host sync per record, so only where asked).

Collectives: a call of torch.distributed's all_reduce, broadcast, reduce, all_gather(_into_tensor),
reduce_scatter(_tensor) or all_to_all_single is a `collective` record (op `torch.distributed.<name>`)
of what this rank sends, digested before the call (an asynchronous collective writes its tensors
later), with the user's source line. DistributedDataParallel's bucket all-reduces run in C++ and are
not Python calls: the `ops` mode sees them (c10d ops on the dispatcher).
"""
import collections
import inspect
import os
import sys

import bitexact_probe_base
from bitexact_probe_digest import digest  # noqa: F401 (the probe's digest, as tests and tools import it)

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


class Probe(bitexact_probe_base.ProbeBase):
    """The modules mode: module outputs, their gradients, parameters and their gradients, the loss."""

    def __init__(self, torch, out_dir, steps="", full_hash=False):
        bitexact_probe_base.ProbeBase.__init__(self, torch, out_dir, steps, full_hash)
        self.grad_hooks = {}
        # (name, source) per module id: what its records say (name_of, source_of), looked up once.
        self.sites = {}
        self.hook_key = 0

    def collective(self, op, tensors):
        """What this rank sends to a collective, before it runs (it may write its tensors asynchronously)."""
        module = self.stack[-1] if self.stack else ""
        source = self.user_frame(2)
        for index, tensor in enumerate(t for t in bitexact_probe_base.tensors(tensors) if t.layout == self.torch.strided):
            self.record("collective", self.phase_now(), module, tensor, index, source, op=op)

    def forward(self, module, args, output):
        if self.stack:
            self.stack.pop()
        if not (self.low <= self.step <= self.high):
            return
        site = self.sites.get(id(module))
        if site is None:
            site = self.sites[id(module)] = (self.name_of(module), self.source_of(module))
        phase = "backward" if self.in_backward else "forward"  # activation recomputation runs in the backward
        if isinstance(output, self.torch.Tensor):  # the common case, without walking a structure
            self._output(site, phase, output, 0)
        else:
            for index, tensor in enumerate(bitexact_probe_base.tensors(output)):
                self._output(site, phase, tensor, index)

    def _output(self, site, phase, tensor, index):
        name, source = site
        self.record("module-output", phase, name, tensor, index, source)
        node = tensor.grad_fn
        if node is None or not tensor.requires_grad:
            return
        hook = self._grad_hook(name, index, source)
        if type(tensor) is not self.torch.Tensor or not hasattr(node, "_register_hook_dict"):
            tensor.register_hook(hook)  # a subclass may register its own way (__torch_function__)
            return
        # What Tensor.register_hook does, less the handle the probe never uses (it was a third of
        # the time of a module's hook): the node calls the tensor's hooks in this dict's order.
        # Negative keys, since the handles' ids count up from 0.
        hooks = tensor._backward_hooks
        if hooks is None:
            hooks = tensor._backward_hooks = collections.OrderedDict()
            node._register_hook_dict(tensor)
        self.hook_key -= 1
        hooks[self.hook_key] = hook

    def _grad_hook(self, name, index, source):
        # One hook per module output, made once: a module's outputs are hooked again every step.
        key = (name, index)
        hook = self.grad_hooks.get(key)
        if hook is None:

            def hook(grad):
                self.record("grad-output", "backward", name, grad, index, source)

            self.grad_hooks[key] = hook
        return hook

    def before_backward(self, tensor):
        if tensor.numel() == 1:
            self.record("loss", "forward", "", tensor)

    def _parameters(self, optimizer, grads):
        names = self.param_names
        for group in optimizer.param_groups:
            for param in group["params"]:
                if not grads:
                    yield names.get(id(param), "?"), param
                elif param.grad is not None:
                    yield names.get(id(param), "?"), param.grad

    def before_step(self, optimizer, args, kwargs):
        # Every gradient, then after the step every parameter: each batch digested in a few kernels.
        if self.in_window():
            self.record_many("param-grad", "optimizer", self._parameters(optimizer, grads=True))

    def after_step(self, optimizer, args, kwargs):
        if self.in_window():
            self.record_many("param", "optimizer", self._parameters(optimizer, grads=False))
        self.end_step()


def install(torch, out_dir, steps="", full_hash=False):
    """Hooks every module and optimizer of the process; returns the Probe."""
    probe = bitexact_probe_base.install_hooks(torch, Probe(torch, out_dir, steps, full_hash))
    _hook_collectives(torch, probe)
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
    hashing = os.environ.get("BITEXACT_PROBE_HASH", "")
    if hashing not in HASHES:
        sys.stderr.write("bitexact probe: unknown hash %r (digest, full); not recording\n" % hashing)
        return None
    out_dir = os.environ.get("BITEXACT_PROBE_DIR") or "bitexact-probe"
    return MODES[mode](torch, out_dir, os.environ.get("BITEXACT_PROBE_STEPS", ""), full_hash=hashing == "full")


def install_ops(torch, out_dir, steps="", full_hash=False):
    """The `ops` mode (bitexact_probe_ops.py): every aten op's outputs inside the step window."""
    import bitexact_probe_ops

    return bitexact_probe_ops.install(torch, out_dir, steps, full_hash)


MODES = {"modules": install, "ops": install_ops}
# `digest` (the default): the device digest only; `full`: also a SHA-256 of every byte, on the host.
HASHES = ("", "digest", "full")


def main(argv):
    """`python -m bitexact_probe [--mode modules|ops] [--out DIR] [--steps A-B] [--hash digest|full] -- script.py args...`: runs the script probed."""
    import argparse
    import runpy

    if "--" not in argv:
        sys.stderr.write("usage: python -m bitexact_probe [--mode modules|ops] [--out DIR] [--steps A-B] [--hash digest|full] -- script.py [args...]\n")
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="python -m bitexact_probe")
    parser.add_argument("--mode", choices=sorted(MODES), default=os.environ.get("BITEXACT_PROBE") or "modules")
    parser.add_argument("--out", default=os.environ.get("BITEXACT_PROBE_DIR") or "bitexact-probe")
    parser.add_argument("--steps", default=os.environ.get("BITEXACT_PROBE_STEPS", ""))
    parser.add_argument("--hash", choices=["digest", "full"], default=os.environ.get("BITEXACT_PROBE_HASH") or "digest")
    options = parser.parse_args(argv[:split])
    script = argv[split + 1 :]
    if not script:
        sys.stderr.write("bitexact probe: no script after --\n")
        return 2
    import torch

    MODES[options.mode](torch, options.out, options.steps, full_hash=options.hash == "full")
    sys.argv = script
    sys.path.insert(0, os.path.dirname(os.path.abspath(script[0])))
    runpy.run_path(script[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
