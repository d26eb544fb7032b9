"""mxp.dlpack(a): the DLPack protocol object for consumers that take only
objects with __dlpack__ (jax.numpy.from_dlpack); torch takes the capsule
of mxp.to_dlpack as well.  The export itself is C (python/src/dlpack.c)."""
import numpy as np

from . import _mxp

_CPU = 1  # DLDeviceType kDLCPU


def _aligned(a):
    """a's address and strides are multiples of its item size, and NumPy
    calls it aligned (what mxp.to_dlpack exports without a copy)."""
    s = a.itemsize
    return a.size == 0 or s <= 1 or (a.flags.aligned and a.__array_interface__["data"][0] % s == 0 and
                                     all(st % s == 0 for n, st in zip(a.shape, a.strides) if n > 1))


class DLPackView:
    """A view of a NumPy array (bfloat16/float8 included) for the DLPack
    protocol: __dlpack__ gives a capsule viewing the array's memory (no
    copy unless copy=True is asked for, or the array has a negative stride,
    which DLPack consumers need not take, or is unaligned: an address or a
    stride not a multiple of the item size), __dlpack_device__ the CPU."""

    __slots__ = ("_array",)

    def __init__(self, array):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"dlpack: expected a numpy.ndarray, got a {type(array).__name__}")
        self._array = array

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if stream is not None:
            raise BufferError("dlpack: a CPU array takes no stream")
        if dl_device is not None and tuple(dl_device) != (_CPU, 0):
            raise BufferError(f"dlpack: the array is on the CPU, not on device {tuple(dl_device)}")
        a = self._array
        reversed_axis = any(n > 1 and st < 0 for n, st in zip(a.shape, a.strides))
        if reversed_axis and copy is False:
            raise BufferError("dlpack: the array has a negative stride and copy=False: no view can be exported")
        unaligned = not _aligned(a)
        if unaligned and copy is False:
            raise BufferError("dlpack: the array is not aligned (an address or a stride not a multiple of the item "
                              "size) and copy=False: no view can be exported")
        return _mxp.to_dlpack(a.copy() if copy or reversed_axis or unaligned else a)

    def __dlpack_device__(self):
        return (_CPU, 0)


def dlpack(array):
    """An object with __dlpack__/__dlpack_device__ viewing array, for
    jax.numpy.from_dlpack(mxp.dlpack(a)) and other protocol consumers."""
    return DLPackView(array)
