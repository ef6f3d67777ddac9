"""Put first on PYTHONPATH by `fp8scope record` (docs/python.md, "Scaled GEMMs"): Python imports this module at start-up,
before the job's own code. It runs any other sitecustomize that this one hides, then asks fp8scope to wrap PyTorch's
scaled matmuls and to add its step and loss hooks once the job imports torch. It imports neither torch nor CUDA, and
nothing it does can fail the job: errors become one warning. FP8SCOPE_TORCH_SCALED_MM=0 turns the first off,
FP8SCOPE_TORCH_HOOKS=0 the second (docs/python.md, "Steps and loss without code"); both off, torch is left alone."""


def _chain_hidden_sitecustomize():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or os.path.abspath(spec.origin or "") == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def _start():
    import os
    import warnings

    try:
        _chain_hidden_sitecustomize()
    except Exception as error:  # the hidden one failed as it would have without us; say so, carry on
        warnings.warn(f"fp8scope: the job's own sitecustomize failed: {type(error).__name__}: {error}")
    if all(os.environ.get(name, "1") == "0" for name in ("FP8SCOPE_TORCH_SCALED_MM", "FP8SCOPE_TORCH_HOOKS")):
        return
    try:
        from fp8scope import _autoload

        _autoload.on_torch_import()
    except Exception as error:
        warnings.warn(f"fp8scope: PyTorch will not be instrumented: {type(error).__name__}: {error}")


_start()
