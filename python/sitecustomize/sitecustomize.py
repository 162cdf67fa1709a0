"""Deterministic torch for `bitexact pair --preset det` (and the probe), without touching the user's code.

bitexact puts this directory first on PYTHONPATH, so Python runs this file at startup (see the `site`
module). It must cost nothing for programs that never import torch, so it does not import torch: it
adds a finder to sys.meta_path that waits for the top-level `import torch`, lets the real loader run
torch/__init__.py, and then calls torch.use_deterministic_algorithms(True). The finder removes itself
after that one import.

A sitecustomize found later on sys.path (a distribution's or a virtual environment's) would be hidden
by this one, so it is looked up and run after the hook is installed.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# What to do once torch is imported: "deterministic" (`--preset det`, the default when unset), "nofill"
# (a variant with `fill=off`: torch.utils.deterministic.fill_uninitialized_memory = False, so the
# deterministic mode stops filling new tensors with NaN), and/or "probe" (`--probe`: bitexact_probe.py,
# next to this file, reads its own settings from the environment).
_HOOKS = [h for h in os.environ.get("BITEXACT_TORCH_HOOKS", "deterministic").split(",") if h]


def _on_torch(torch):
    if "deterministic" in _HOOKS:
        _make_deterministic(torch)
    if "nofill" in _HOOKS:
        _no_fill(torch)
    if "probe" in _HOOKS:
        try:
            import bitexact_probe

            bitexact_probe.install_from_environment(torch)
        except Exception as error:  # a probe that cannot install must not stop the program
            sys.stderr.write("bitexact sitecustomize: the probe could not be installed: %r\n" % (error,))


def _make_deterministic(torch):
    try:
        torch.use_deterministic_algorithms(True)
    except Exception as error:  # an old torch, or a stub: say so, never stop the program
        sys.stderr.write("bitexact sitecustomize: torch.use_deterministic_algorithms(True) failed: %r\n" % (error,))
        return
    # Deterministic algorithms can still differ between runs if cuDNN benchmarks and picks another
    # (deterministic) algorithm per run; PyTorch's reproducibility notes ask for benchmark off too.
    try:
        torch.backends.cudnn.benchmark = False
    except Exception:
        pass


def _no_fill(torch):
    try:
        import torch.utils.deterministic

        torch.utils.deterministic.fill_uninitialized_memory = False
    except Exception as error:  # a torch before 2.1 has no such switch: say so, never stop the program
        sys.stderr.write("bitexact sitecustomize: fill_uninitialized_memory = False failed: %r\n" % (error,))


class _TorchLoader(object):
    """Runs the real loader, then the hook; the module keeps the real loader as its __loader__."""

    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._inner
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._inner
        self._inner.exec_module(module)
        _uninstall()
        _on_torch(module)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _TorchImportHook(object):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        for finder in list(sys.meta_path):
            if finder is self:
                continue
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _TorchLoader(spec.loader)
        return spec


_HOOK = _TorchImportHook()


def _uninstall():
    try:
        sys.meta_path.remove(_HOOK)
    except ValueError:
        pass


def _run_next_sitecustomize():
    import importlib.machinery
    import importlib.util

    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["_bitexact_next_sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the same leniency as site.py shows a failing sitecustomize
        sys.stderr.write("Error in sitecustomize (%s): %r\n" % (spec.origin, error))


if not _HOOKS:
    pass
elif "torch" in sys.modules:
    _on_torch(sys.modules["torch"])
else:
    sys.meta_path.insert(0, _HOOK)
_run_next_sitecustomize()
