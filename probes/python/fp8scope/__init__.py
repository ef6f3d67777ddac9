"""fp8scope: explicit tensor statistics, step markers and scalars for the fp8scope collector (libfp8scope.so).

    import fp8scope
    fp8scope.step()                                   # beginning of the next training step
    fp8scope.probe("fc1.input", x, scale=s, target="e4m3")
    fp8scope.log_scalar("loss", loss)                 # a CUDA tensor: read in stream order, no .item()
    handle = fp8scope.torch.annotate(model)           # NVTX module names, statistics at FP8 casts

Every call is a silent no-op unless the collector is loaded in this process (`fp8scope record -- python ...`,
LD_PRELOAD or CUDA_INJECTION64_PATH) and speaks C API version 1. Importing this package imports no torch,
initializes no CUDA and loads no library. Reference: docs/python.md.
"""

from . import torch  # fp8scope.torch: the PyTorch helpers; it imports torch itself only when annotate() runs
from ._api import enabled, log_scalar, probe, recording, stats_wanted, step
from ._collector import C_API_VERSION, Fp8scopeWarning

__version__ = "0.1.0"  # the project's version (CMakeLists.txt project())

__all__ = ["C_API_VERSION", "Fp8scopeWarning", "enabled", "log_scalar", "probe", "recording", "stats_wanted", "step",
           "torch", "__version__"]
