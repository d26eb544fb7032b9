"""mxp.safetensors: safetensors files (model weights) on NumPy arrays.

    import mxp.safetensors as st
    w = st.load("model.safetensors", dtype="bfloat16")   # {name: ndarray}, converted once
    st.save("out.safetensors", w, metadata={"format": "np"})
    with st.safe_open("model.safetensors") as f:          # lazy: nothing read yet
        q = f.get_tensor("layer.0.q.weight", dtype=mxp.float8_e4m3fn, rounding="stochastic")

The C library does the format (docs/safetensors.md): the file is mapped,
its header checked before any tensor is read, each tensor converted once
from the file's dtype into the asked one in any rounding mode, and files
written byte for byte as the safetensors library writes them (atomically
for a path).  bfloat16 and float8 tensors load as mxp's dtypes, which the
safetensors library's own NumPy reader cannot do.  Errors: OSError for a
file that cannot be opened or written, ValueError for a malformed file or
argument (with the rule broken), KeyError for a missing name, TypeError
for a dtype mxp lacks.
"""
import os

import numpy as np

from . import _mxp

__all__ = ["load", "save", "save_bytes", "load_bytes", "safe_open", "cast"]


def _source(file):
    """A path (str, bytes, os.PathLike) or the file's bytes (bytes-like)."""
    if isinstance(file, (str, os.PathLike)):
        return os.fspath(file)
    if isinstance(file, (bytes, bytearray, memoryview)):
        return file
    raise TypeError("safetensors: a path or the file's bytes, not %s" % type(file).__name__)


class safe_open:
    """An open safetensors file; tensors are read when asked (get_tensor).

    keys() lists the tensors in the order of their data; dtype_name(k) is
    the file's dtype ("BF16", "F8_E4M3"), shape(k) its shape, metadata()
    the "__metadata__" strings.  get_tensor(k, dtype=None,
    rounding="nearest_even", overflow="inf", seed=0) returns a new array of
    the file's dtype or converted into dtype (stochastic rounding draws by
    element index, reproducible for a seed).  Usable as a context manager;
    close() releases the mapping (arrays already returned stay valid)."""

    def __init__(self, file, framework="np"):
        if framework not in ("np", "numpy"):
            raise ValueError("safetensors: mxp returns NumPy arrays (framework 'np')")
        self._cap = _mxp._st_open(_source(file))
        self._entries = {name: (i, dname, shape, dt)
                         for i, (name, dname, shape, dt) in enumerate(_mxp._st_entries(self._cap))}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._cap = None

    def _entry(self, key):
        if self._cap is None:
            raise ValueError("safetensors: the file is closed")
        try:
            return self._entries[key]
        except KeyError:
            raise KeyError("safetensors: no tensor named %r" % (key,)) from None

    def keys(self):
        return list(self._entries)

    def __contains__(self, key):
        return key in self._entries

    def __len__(self):
        return len(self._entries)

    def dtype_name(self, key):
        return self._entry(key)[1]

    def shape(self, key):
        return self._entry(key)[2]

    def dtype(self, key):
        """The NumPy dtype a tensor loads as (None: one mxp lacks, such as F6_E2M3, stored packed)."""
        return self._entry(key)[3]

    def metadata(self):
        if self._cap is None:
            raise ValueError("safetensors: the file is closed")
        return _mxp._st_metadata(self._cap)

    def get_tensor(self, key, dtype=None, rounding="nearest_even", overflow="inf", seed=0):
        i = self._entry(key)[0]
        return _mxp._st_read(self._cap, i, dtype, rounding, overflow, seed)


def load(file, dtype=None, rounding="nearest_even", overflow="inf", seed=0):
    """{name: array} of every tensor of a file (a path or its bytes), each
    of the file's dtype or converted into dtype.  A tensor of a dtype mxp
    lacks raises TypeError; safe_open reads the others one by one."""
    with safe_open(file) as f:
        return {k: f.get_tensor(k, dtype, rounding, overflow, seed) for k in f.keys()}


def load_bytes(data, dtype=None, rounding="nearest_even", overflow="inf", seed=0):
    """load() of a file's bytes (the safetensors library's ``load``)."""
    return load(memoryview(data), dtype, rounding, overflow, seed)


def _arguments(tensors, metadata):
    if not isinstance(tensors, dict):
        raise TypeError("safetensors: tensors must be a dict of name -> array")
    names = list(tensors)
    for n in names:
        if not isinstance(n, str):
            raise TypeError("safetensors: tensor names must be str, not %s" % type(n).__name__)
    arrays = [np.asarray(tensors[n]) for n in names]
    meta = dict(metadata or {})
    for k, v in meta.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("safetensors: metadata must map str to str")
    return names, arrays, list(meta), list(meta.values())


def save(file, tensors, metadata=None):
    """Writes {name: array} (any layout; NumPy's and mxp's dtypes) and the
    metadata strings as a safetensors file, byte for byte what the
    safetensors library writes; a path is replaced atomically (a failure
    leaves the old file).  Metadata keeps its order (the library's own is a
    hash map's, which changes from run to run)."""
    names, arrays, keys, values = _arguments(tensors, metadata)
    path = os.fspath(file)
    _mxp._st_save(path, names, arrays, keys, values)


def save_bytes(tensors, metadata=None):
    """save() into bytes (the safetensors library's ``save``)."""
    names, arrays, keys, values = _arguments(tensors, metadata)
    return _mxp._st_save(None, names, arrays, keys, values)


def cast(src, dst, dtype, rounding="nearest_even", overflow="inf", seed=0, index_offset=0):
    """Writes the safetensors file src to dst with every floating-point
    tensor converted to dtype (one rounding each; stochastic rounding: one
    stream across the tensors in the file's order, starting at element
    index_offset), the other tensors and the metadata as they are, a 6 MiB
    chunk at a time (memory bounded whatever the file's size; dst replaced
    atomically, it may be src).  Returns (tensors converted, their
    elements).  mxp_safetensors_cast; `mxp cast` on the command line."""
    cap = _mxp._st_open(os.fspath(src))
    return _mxp._st_cast(cap, os.fspath(dst), dtype, rounding, overflow, int(seed), int(index_offset))
