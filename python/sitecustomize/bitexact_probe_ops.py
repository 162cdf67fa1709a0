"""The `ops` mode of the probe (BITEXACT_PROBE=ops, `python -m bitexact_probe --mode ops`): which aten op
two runs part at, and on which line of the user's code.

A TorchDispatchMode sees every aten op below autograd, in the forward, the backward (the autograd
engine carries the mode to its threads) and the optimizer. Inside the step window
(BITEXACT_PROBE_STEPS) it records each tensor an op returns as an `op-output` record with the same
on-device digest as the modules mode (bitexact_probe_digest.digest, batched to the host at the step
boundary, no host sync per op). Outside the window the mode is not on the dispatcher's stack at all,
so it costs nothing there: it is pushed at the first module forward of a step in the window and
popped when that step's optimizer.step() returns.

Per record: op (e.g. aten.index_add_.default); phase: `optimizer` inside optimizer.step() and
between a backward's end and the next module forward (gradient clipping, scaling), `backward` while
the autograd engine runs a node (or inside Tensor.backward), else `forward`;
module: the innermost module whose forward is running (in the backward: the module the node's
forward ran in); source {path, line}: the first frame outside torch and outside the probe. A
backward op has no user frame of its own, so it gets the source of the forward op whose autograd
node it runs (kept in the node's metadata dict); occurrence counts per step, phase, op and source.

What it cannot see: ops inside a CUDA graph replay or a compiled region that runs as one kernel
(torch.compile's inductor code, custom CUDA / Triton kernels called outside the dispatcher), the
internals of any kernel (only its outputs), and ops between optimizer.step() and the next forward
(data loading, zero_grad before the forward).

Collectives: a c10d op (torch.distributed's collectives and DistributedDataParallel's bucket
all-reduces, which reach the dispatcher from C++) is a `collective` record of the tensors this rank
sends, digested before the op runs; its outputs are seen by the ops that read them.
"""

import bitexact_probe_base

_META_KEY = "bitexact_probe"

# Outputs whose bytes no computation wrote: the attention kernels' RNG state and placeholder
# outputs (named so in their schemas: `_scaled_dot_product_efficient_attention` returns
# `philox_seed`, `philox_offset`; the flash kernels `rng_state`, `unused`, `debug_attn_mask`). With
# dropout off they are allocated and left uninitialised, so their bytes differ between two runs that
# computed the same thing; an H200 pair parted at them before its real first divergence. Not recorded.
_UNWRITTEN_OUTPUTS = frozenset({"philox_seed", "philox_offset", "rng_state", "unused", "debug_attn_mask"})


class OpsProbe(bitexact_probe_base.ProbeBase):
    def __init__(self, torch, out_dir, steps="", full_hash=False):
        bitexact_probe_base.ProbeBase.__init__(self, torch, out_dir, steps, full_hash)
        self.mode = None
        self.in_optimizer = 0
        # (Probe.after_backward: gradient clipping, scaling, all-reduce before optimizer.step() belong
        # to the optimizer's phase; a microbatch's forward ends it.)
        # Forward outputs whose autograd node is set only once the op has returned to autograd:
        # tagged with their source at the next op (tensor, source, module).
        self.untagged = []
        self.writes = {}
        self.unwritten = {}
        self.collective_inputs = {}

    # --- where an op comes from ----------------------------------------------------------------

    def tag_nodes(self):
        for tensor, source, module in self.untagged:
            node = tensor.grad_fn
            if node is not None and _META_KEY not in node.metadata:
                node.metadata[_META_KEY] = (source, module)
        self.untagged = []

    # --- the dispatch mode ---------------------------------------------------------------------

    def written(self, func, args, kwargs):
        """The tensors an op writes in place (its mutable arguments): what an op that returns None changed."""
        positions = self.writes.get(func)
        if positions is None:
            positions = [(i, a.name) for i, a in enumerate(func._schema.arguments) if a.alias_info is not None and a.alias_info.is_write]
            self.writes[func] = positions
        return [args[i] if i < len(args) else kwargs.get(name) for i, name in positions]

    def unwritten_outputs(self, func, out):
        """The ids of the tensors among `out` that the op's schema names as unwritten (_UNWRITTEN_OUTPUTS)."""
        flags = self.unwritten.get(func)
        if flags is None:
            flags = self.unwritten[func] = [r.name in _UNWRITTEN_OUTPUTS for r in func._schema.returns]
        if not any(flags) or not isinstance(out, (tuple, list)) or len(out) != len(flags):
            return ()
        return {id(value) for value, skip in zip(out, flags) if skip}

    def on_op(self, func, out, args, kwargs):
        torch = self.torch
        self.tag_nodes()
        node = torch._C._current_autograd_node()
        if self.in_optimizer or (self.after_backward and node is None and not self.in_backward):
            phase, source, module = "optimizer", self.user_frame(), ""
        elif node is not None or self.in_backward:
            phase = "backward"
            source, module = (node.metadata.get(_META_KEY) if node is not None else None) or (self.user_frame(), "")
        else:
            phase, source, module = "forward", self.user_frame(), self.stack[-1] if self.stack else ""
        name = str(func)
        tensors = list(bitexact_probe_base.tensors(out))
        if not tensors:
            # In-place ops that return nothing (the optimizers' _foreach_add_, ...): their written arguments.
            tensors = list(bitexact_probe_base.tensors(self.written(func, args, kwargs)))
        unwritten = self.unwritten_outputs(func, out)
        for index, tensor in enumerate(tensors):
            # Sparse, nested and meta tensors have no plain bytes to digest on the device. An
            # unwritten output keeps its index, so the other outputs are numbered as before.
            if tensor.layout != torch.strided or tensor.device.type == "meta" or id(tensor) in unwritten:
                continue
            self.record("op-output", phase, module, tensor, index, source, op=name)
            # Below autograd an output has no grad_fn (nor requires_grad) yet: look again at the next op.
            if phase == "forward":
                self.untagged.append((tensor, source, module))

    def on_collective(self, func, args, kwargs):
        """A c10d op (a collective, DDP's bucket all-reduces included): what this rank sends, before it
        runs, since the op returns while the collective may still be writing its tensors."""
        self.tag_nodes()
        names = self.collective_inputs.get(func)
        if names is None:
            # Arguments named output* are written by the collective; the others (or, for in-place
            # collectives such as allreduce_ and broadcast_, the tensors themselves) are sent.
            names = [(i, a.name) for i, a in enumerate(func._schema.arguments) if "Tensor" in str(a.type) and not a.name.startswith("output")]
            self.collective_inputs[func] = names
        sent = [args[i] if i < len(args) else kwargs.get(name) for i, name in names]
        node = self.torch._C._current_autograd_node()
        if self.in_optimizer or (self.after_backward and node is None and not self.in_backward):
            phase = "optimizer"
        else:
            phase = "backward" if node is not None or self.in_backward else "forward"
        module = self.stack[-1] if self.stack and phase == "forward" else ""
        source = self.user_frame()
        for index, tensor in enumerate(t for t in bitexact_probe_base.tensors(sent) if t.layout == self.torch.strided and t.device.type != "meta"):
            self.record("collective", phase, module, tensor, index, source, op=str(func))

    def start(self):
        if self.mode is None and self.in_window():
            self.mode = _mode_class(self.torch)(self)
            self.mode.__enter__()

    def stop(self):
        if self.mode is not None:
            mode, self.mode = self.mode, None
            mode.__exit__(None, None, None)
        self.untagged = []

    # --- hooks ---------------------------------------------------------------------------------

    def forward_pre(self, module, args):
        bitexact_probe_base.ProbeBase.forward_pre(self, module, args)
        self.start()

    def before_step(self, optimizer, args, kwargs):
        self.in_optimizer += 1

    def after_step(self, optimizer, args, kwargs):
        self.in_optimizer -= 1
        self.after_backward = False
        self.stop()
        self.end_step()

    def close(self):
        self.stop()
        bitexact_probe_base.ProbeBase.close(self)


def _mode_class(torch):
    from torch.utils._python_dispatch import TorchDispatchMode

    class _RecordOps(TorchDispatchMode):
        def __init__(self, probe):
            TorchDispatchMode.__init__(self)
            self.probe = probe

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func.namespace == "c10d":
                self.probe.on_collective(func, args, kwargs)
                return func(*args, **kwargs)
            out = func(*args, **kwargs)
            # The mode is off inside this call: the digest's own ops are not recorded.
            self.probe.on_op(func, out, args, kwargs)
            return out

    return _RecordOps


def install(torch, out_dir, steps="", full_hash=False):
    """Hooks modules and optimizers to know the step, phase and module; records ops in the window."""
    return bitexact_probe_base.install_hooks(torch, OpsProbe(torch, out_dir, steps, full_hash))
