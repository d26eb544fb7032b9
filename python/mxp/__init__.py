"""mxp: exact, fast low-precision numerics for NumPy.

``import mxp`` gives NumPy real ``bfloat16``, float8 (``float8_e4m3fn``,
``float8_e5m2``, ``float8_e4m3``, ``float8_e3m4``, ``float8_e4m3fnuz``,
``float8_e5m2fnuz``, ``float8_e4m3b11fnuz``, ``float8_e8m0fnu``), float6
(``float6_e2m3fn``, ``float6_e3m2fn``), ``float4_e2m1fn`` and ``int4``,
``uint4``, ``int2``, ``uint2``, ``int1``, ``uint1`` dtypes (the names
ml_dtypes uses), computed by the mxp C library: casts rounded once, ufuncs through its SIMD paths, sums accumulated
in float64 and rounded once, ``a @ b`` through ``mxp_gemm``.  On top:
``astype`` in every rounding mode, ``matmul``/``gemm`` with epilogues and
int8, quantization and observers, OCP MX blocks, mixed-precision training
(optimizers with master weights, loss scaling, a monitor), neural-network
operations (``mxp.nn``: softmax, norms, embeddings, row products), precision
analysis and plots (``mxp.plot``).  ``python3 -m mxp`` runs a short tour.  See
docs/python.md.
"""
from . import _mxp
from ._mxp import (bfloat16, float8_e4m3fn, float8_e5m2, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz,
                   float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu, float6_e2m3fn, float6_e3m2fn, float4_e2m1fn,
                   int4, uint4, int2, uint2, int1, uint1, from_dlpack, to_dlpack, promote_types)
from ._dlpack import DLPackView, dlpack
from ._info import finfo, iinfo
from ._reduce import mean, prod, std, sum, var  # noqa: A004 (numpy's names)
from ._npy import load, save
from ._api import (Result, result_type, astype, convert_stats, matmul, gemm, gemm_safe, info, memory_stats, set_num_threads,
                   get_num_threads, hugepages, release_workspaces)
from ._quant import (QParams, QuantizedTensor, calibrate, quantize, quantize_rows, dequantize, fake_quantize, pack_int4,
                     unpack_int4, pack, unpack, packed_bytes, quantize_weight, qlinear, MinMaxObserver, MovingAverageObserver,
                     PercentileObserver, MSEObserver, KLObserver, MXTensor, mx_quantize, mx_dequantize,
                     mx_matmul)
from ._analysis import CompareResult, RoundtripTable, compare, roundtrip, recommend_dtype
from ._train import (SGD, Adam, AdamW, clip_grad_norm, LossScaler, Autocast, autocast_policy, Monitor,
                     AUTOCAST_OPS)
from ._plugins import Op, OpLibrary, CheckReport, load_ops, list_ops, check_op
from .profile import Profile, profile
from . import nn
from . import fft

__version__ = _mxp.__version__

# np.dtype("bfloat16"), np.ones(2, "float8_e4m3fn"), a.astype("float8_e5m2"):
# the names resolve to mxp's types unless another package (ml_dtypes)
# registered them first (docs/python.md).
import numpy as _np  # noqa: E402

for _t in _mxp._TYPES:
    _np.sctypeDict.setdefault(_t.__name__, _t)

# ml_dtypes' types of the same formats: casts both ways (bit copies) and
# mxp's functions take their arrays, when ml_dtypes is installed.  Done when
# ml_dtypes is imported (now, if it already is): importing it here would
# add its own ~0.7 s to `import mxp` for users who never touch it.
del _t


def _register_ml_dtypes(module):
    for t in _mxp._TYPES:
        if hasattr(module, t.__name__):
            _mxp._register_foreign(_np.dtype(getattr(module, t.__name__)), t.__name__)


class _MlDtypesHook:
    """A meta-path finder that registers ml_dtypes' types once its module
    has run (the import itself is ml_dtypes' own, unchanged)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "ml_dtypes":
            return None
        _sys.meta_path[:] = [f for f in _sys.meta_path if f is not _MlDtypesHook]
        spec = None
        for finder in _sys.meta_path:  # the finders after this one, as the import system asks them
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            try:
                _register_ml_dtypes(module)
            except Exception:  # built for another NumPy: its types stay foreign
                pass
        spec.loader.exec_module = exec_module
        return spec


import sys as _sys  # noqa: E402

if "ml_dtypes" in _sys.modules:
    try:
        _register_ml_dtypes(_sys.modules["ml_dtypes"])
    except Exception:
        pass
else:
    _sys.meta_path.insert(0, _MlDtypesHook)

__all__ = [
    "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
    "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
    "int4", "uint4", "int2", "uint2", "int1", "uint1", "promote_types", "result_type", "finfo", "iinfo", "from_dlpack", "to_dlpack", "dlpack", "DLPackView", "sum", "mean", "prod", "var", "std", "load", "save",
    "astype", "convert_stats", "matmul", "gemm", "gemm_safe", "info", "memory_stats", "set_num_threads",
    "get_num_threads", "hugepages", "release_workspaces", "QParams", "QuantizedTensor", "calibrate", "quantize", "quantize_rows", "dequantize", "fake_quantize",
    "pack_int4", "unpack_int4", "pack", "unpack", "packed_bytes", "quantize_weight", "qlinear", "MinMaxObserver", "MovingAverageObserver",
    "PercentileObserver", "MSEObserver",
    "KLObserver", "MXTensor", "mx_quantize", "mx_dequantize", "mx_matmul", "compare", "roundtrip", "recommend_dtype",
    "CompareResult", "RoundtripTable", "Result", "SGD", "Adam", "AdamW", "clip_grad_norm", "LossScaler",
    "Autocast", "autocast_policy", "Monitor", "AUTOCAST_OPS",
    "Op", "OpLibrary", "CheckReport", "load_ops", "list_ops", "check_op", "Profile", "profile",
]
