"""Wraps PyTorch's scaled matmuls (_scaled_gemm.install) and adds the step and loss hooks (_torch_hooks.install) as
soon as the job has imported torch, without importing it first: `fp8scope record`'s sitecustomize calls
on_torch_import() at start-up (docs/python.md, "Scaled GEMMs" and "Steps and loss without code").
FP8SCOPE_TORCH_SCALED_MM=0 leaves out the first, FP8SCOPE_TORCH_HOOKS=0 the second."""

import importlib.abc
import importlib.machinery
import os
import sys
import warnings

from . import _collector


def _wanted(variable):
    return os.environ.get(variable, "1") != "0"


def scaled_mm_wanted():
    return _wanted("FP8SCOPE_TORCH_SCALED_MM")


def hooks_wanted():
    return _wanted("FP8SCOPE_TORCH_HOOKS")


def _install(torch):
    if _collector.api() is None and not _collector.undecided():
        return  # nothing records in this process: nothing to report to, so the job's ops stay untouched
    if scaled_mm_wanted():
        try:
            from . import _scaled_gemm

            _scaled_gemm.install(torch)
        except Exception as error:  # never fail the job's `import torch`
            warnings.warn(f"fp8scope: PyTorch's scaled matmuls will not be reported: {type(error).__name__}: "
                          f"{error}", _collector.Fp8scopeWarning)
    if hooks_wanted():
        try:
            from . import _torch_hooks

            _torch_hooks.install(torch)
        except Exception as error:
            warnings.warn(f"fp8scope: steps and the loss will not be recorded without code: {type(error).__name__}: "
                          f"{error}", _collector.Fp8scopeWarning)


class _Loader(importlib.abc.Loader):
    """torch's own loader, which after running torch/__init__.py installs the wrappers. Anything else it is asked
    (resource readers, get_data) goes to the loader it wraps."""

    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        _install(module)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Sees the import of the top-level `torch` once, and gives it the wrapping loader; finds nothing itself."""

    def find_spec(self, name, path, target=None):
        if name != "torch" or path is not None:
            return None
        try:
            sys.meta_path.remove(self)  # once: whatever happens next, torch is imported at most once
        except ValueError:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, None)
        if spec is None or spec.loader is None:
            return None  # not found here: the other finders decide, unwrapped
        spec.loader = _Loader(spec.loader)
        return spec


def on_torch_import():
    """Installs the wrappers now if torch is imported, else when it is."""
    torch = sys.modules.get("torch")
    if torch is not None:
        _install(torch)
        return
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
