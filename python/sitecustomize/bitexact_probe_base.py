"""What both modes of the probe share (bitexact_probe.py: modules, bitexact_probe_ops.py: ops): the
record, the step window, the batched flush of digests to rank_<r>.jsonl, names and source lines, and
the hooks that tell a mode where the program is (module forwards, Tensor.backward, optimizer.step()).

Ranks: each process writes its own rank_<r>.jsonl, r from $RANK (torchrun, Megatron), else
$LOCAL_RANK, else torch.distributed's rank once the process group exists, else 0; the file is opened
at the first step boundary, after the program has set its process group up.
"""
import atexit
import inspect
import json
import os
import sys

import bitexact_probe_digest
import bitexact_probe_sums

_HERE = os.path.dirname(os.path.abspath(__file__))


def tensors(value):
    """The tensors in a module's output (a tensor, or tuples, lists and dicts of them), in order."""
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from tensors(item)
    elif isinstance(value, dict):
        for key in value:
            yield from tensors(value[key])


def steps_of(text):
    """`A-B` (inclusive, 1-based) or `A` or empty (every step)."""
    if not text:
        return 1, float("inf")
    low, _, high = text.partition("-")
    return int(low), int(high) if high else int(low)


def rank_of(torch):
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


class ProbeBase(object):
    def __init__(self, torch, out_dir, steps="", full_hash=False):
        self.torch = torch
        # `--probe-hash full`: each record also carries the SHA-256 of the tensor's bytes (a host sync).
        self.full_hash = full_hash
        self.torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
        self.out_dir = out_dir
        # Opened at the first flush, when torch.distributed knows the rank (rank_of).
        self.file = None
        self.rank = None
        self.low, self.high = steps_of(steps)
        self.step = 1
        self.sequence = 0
        # The step's records in execution order: (record, its device's DeviceSums, its cell), the cell
        # filled once its sums have a place in that device's buffer (bitexact_probe_sums.py).
        self.records = []
        self.sums = {}
        # The last record's (tensor, its version, sums, cell) if it was a module's output: a module that
        # returns its child's output itself (a wrapper, a Sequential) reuses that digest.
        self.last = None
        # Steps whose digests are on their way to the host: (records, [(sums, host tensor, event)]).
        self.in_flight = []
        self.occurrences = {}
        self.names = {}
        self.param_names = {}
        self.sources = {}
        self.weights = {}
        # A record's line format per the fields that repeat (_format), and each shape's JSON.
        self.formats = {}
        self.shapes = {}
        self.stack = []
        # The global module hooks' handles while the window runs (track_modules).
        self.module_hooks = []
        self.in_backward = 0
        # A backward ended and no module forward began since (gradient all-reduce, clipping, scaling).
        self.after_backward = False

    # --- records -------------------------------------------------------------------------------

    def in_window(self):
        return self.low <= self.step <= self.high

    def _new_record(self, kind, phase, module, tensor, output, source, op):
        """The record of `tensor` without its digest, numbered; None outside the window.

        A tuple of what the line will say (RECORD_FIELDS), made as cheaply as a hook allows: the
        JSON is written at the step boundary (_lines), where nothing waits for it.
        """
        if not (self.low <= self.step <= self.high) or not isinstance(tensor, self.torch.Tensor):
            return None
        # Occurrences count per module/kind/output; an op's per step, phase, op and source line.
        key = (kind, module, output) if op is None else (phase, op, output, source and (source["path"], source["line"]))
        occurrences = self.occurrences
        occurrence = occurrences.get(key, 0)
        occurrences[key] = occurrence + 1
        sha = bitexact_probe_digest.sha256(self.torch, tensor) if self.full_hash else None
        self.sequence += 1
        return (self.sequence - 1, self.step, phase, kind, module, output, occurrence, source, tensor.dtype, tensor.shape, op, sha)

    def record(self, kind, phase, module, tensor, output=0, source=None, op=None):
        record = self._new_record(kind, phase, module, tensor, output, source, op)
        if record is None:
            return
        last, self.last = self.last, None
        version = None
        if kind == "module-output":
            # A forward output is alive anyway while its parent's hook runs; no other tensor is held,
            # since a reference held past its hook changes what autograd may steal or reuse.
            try:
                version = tensor._version
            except RuntimeError:  # an inference tensor keeps no version: never reused
                pass
            if last is not None and last[0] is tensor and version is not None and last[1] == version:
                self.records.append((record, last[2], last[3]))
                self.last = last
                return
        device = tensor.device
        sums = self.sums.get(device)
        if sums is None:
            sums = self._sums_of(device)
        cell = []
        self.records.append((record, sums, cell))
        if version is not None:
            self.last = (tensor, version, sums, cell)
        # Its products now (one kernel: the tensor may be written again later), summed with the step's
        # others at the step boundary.
        sums.add_products(bitexact_probe_digest.products(self.torch, tensor, self.weights), cell)

    def _sums_of(self, device):
        sums = self.sums.get(device)
        if sums is None:
            sums = self.sums[device] = bitexact_probe_sums.DeviceSums(self.torch, device, self.weights)
        return sums

    def record_many(self, kind, phase, named):
        """Records (module, tensor) pairs of one kind at once, digested together per device (add_batch).

        _new_record's work, done in one loop: the optimizer's hooks record every parameter twice a step.
        """
        if not (self.low <= self.step <= self.high):
            return
        torch = self.torch
        Tensor = torch.Tensor
        step, full_hash, occurrences, records = self.step, self.full_hash, self.occurrences, self.records
        sequence = self.sequence
        by_device = {}
        batch = device = None
        for module, tensor in named:
            if not isinstance(tensor, Tensor):
                continue
            key = (kind, module, 0)
            occurrence = occurrences.get(key, 0)
            occurrences[key] = occurrence + 1
            sha = bitexact_probe_digest.sha256(torch, tensor) if full_hash else None
            cell = []
            if tensor.device != device:
                device = tensor.device
                batch = by_device.get(device)
                if batch is None:
                    batch = by_device[device] = (self._sums_of(device), [], [])
            records.append(((sequence, step, phase, kind, module, 0, occurrence, None, tensor.dtype, tensor.shape, None, sha), batch[0], cell))
            sequence += 1
            batch[1].append(tensor)
            batch[2].append(cell)
        self.sequence = sequence
        for sums, tensors, cells in by_device.values():
            sums.add_batch(tensors, cells)

    def flush(self, wait=False):
        """Moves the step's digests towards the host and writes the records whose digests arrived.

        Per device, the step's sums are copied in one transfer into pinned host memory without waiting
        (no host sync: under torch.cuda.set_sync_debug_mode("error") nothing raises); the records are
        written once the copies' events have completed, at a later step boundary, or at exit (`wait`),
        in execution order.
        """
        if self.file is None and (self.records or self.in_flight or wait):
            self.rank = rank_of(self.torch)
            os.makedirs(self.out_dir, exist_ok=True)
            self.file = open(os.path.join(self.out_dir, "rank_%d.jsonl" % self.rank), "a")
        if self.records:
            hosts = [(sums,) + sums.to_host() for sums in self.sums.values()]
            self.in_flight.append((self.records, hosts))
            self.records = []
            self.last = None
        # In order: a step is written only after every step before it.
        while self.in_flight:
            records, hosts = self.in_flight[0]
            waiting = [event for _, _, event in hosts if event is not None and not event.query()]
            if waiting:
                if not wait:
                    break
                for event in waiting:
                    event.synchronize()
            self.in_flight.pop(0)
            values = {id(sums): host.tolist() for sums, host, _ in hosts if host is not None}
            self.file.write("".join(self._lines(records, values)))
        if self.file is not None:
            self.file.flush()

    def _lines(self, records, values):
        """The JSON lines of a step's records (_format), their digests read from the host values."""
        value = bitexact_probe_sums.value
        formats, shapes, rank = self.formats, self.shapes, self.rank
        lines = []
        for record, sums, cell in records:
            sequence, step, phase, kind, module, output, occurrence, source, dtype, shape, op, sha = record
            key = (phase, kind, module, output, source and (source["path"], source["line"]), dtype, op, sha is None)
            form = formats.get(key)
            if form is None:
                form = formats[key] = self._format(record)
            shape_text = shapes.get(shape)
            if shape_text is None:
                shape_text = shapes[shape] = json.dumps(list(shape), separators=(",", ":"))
            values_row = (sequence, rank, step, occurrence, shape_text, value(values[id(sums)], cell))
            lines.append(form % (values_row if sha is None else values_row + (json.dumps(sha),)))
        return lines

    def _format(self, record):
        """A record's line format, as json.dumps(record dict, separators=(",", ":")) writes it.

        The fields that stay the same from step to step (phase, kind, module, output, source, dtype,
        op) are encoded once into a format, which the rest fills in.
        """
        sequence, step, phase, kind, module, output, occurrence, source, dtype, shape, op, sha = record
        if len(self.formats) >= 1 << 16:  # bounded, however many sites a program has
            self.formats.clear()
            self.shapes.clear()
        dtype_name = str(dtype).replace("torch.", "")
        fixed = lambda value: json.dumps(value, separators=(",", ":")).replace("%", "%%")
        return "".join([
            '{"sequence":%d,"rank":%d,"step":%d,"phase":', fixed(phase), ',"kind":', fixed(kind), ',"module":', fixed(module),
            ',"output":', fixed(output), ',"occurrence":%d,"source":', fixed(source), ',"dtype":', fixed(dtype_name),
            ',"shape":%s,"digest":"%016x"', "" if op is None else ',"op":' + fixed(op), "" if sha is None else ',"sha256":%s', "}\n",
        ])

    def close(self):
        self.flush(wait=True)

    def end_step(self):
        """optimizer.step() returned: the step's records go towards the host and the next step begins."""
        self.flush()
        self.step += 1
        self.occurrences = {}
        self.track_modules()

    def track_modules(self):
        """The module hooks are registered only while the window's steps run: outside it they cost a
        Python call per module call and record nothing (+17 % on the toy MoE's 19 ms step on an H200).
        Called between steps, where no module is running, so the stack starts empty each time."""
        import torch.nn.modules.module as modules

        if self.in_window() and not self.module_hooks:
            self.module_hooks = [modules.register_module_forward_pre_hook(self.forward_pre), modules.register_module_forward_hook(self.forward)]
        elif not self.in_window() and self.module_hooks:
            for handle in self.module_hooks:
                handle.remove()
            self.module_hooks = []
            self.stack = []

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

    # --- hooks (install_hooks); a mode overrides what it records at each ------------------------

    def forward_pre(self, module, args):
        self.stack.append(self.name_of(module))
        self.after_backward = False

    def forward(self, module, args, output):
        if self.stack:
            self.stack.pop()

    def before_backward(self, tensor):
        """Tensor.backward was called on `tensor` (the modules mode records the loss here)."""

    def before_step(self, optimizer, args, kwargs):
        pass

    def after_step(self, optimizer, args, kwargs):
        self.end_step()


def install_hooks(torch, probe):
    """Hooks every module (inside the step window), optimizer and Tensor.backward of the process to `probe`; returns it."""
    import torch.optim.optimizer as optimizers

    probe.track_modules()
    optimizers.register_optimizer_step_pre_hook(probe.before_step)
    optimizers.register_optimizer_step_post_hook(probe.after_step)
    original_backward = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        probe.before_backward(self)
        probe.in_backward += 1
        try:
            return original_backward(self, *args, **kwargs)
        finally:
            probe.in_backward -= 1
            probe.after_backward = True

    torch.Tensor.backward = backward
    atexit.register(probe.close)
    return probe
