#!/usr/bin/python3
"""Writes the fuzzer's seed corpus (tests/fuzz/corpus/): small valid .npy
files covering each header form mxp reads.  Committed; rerun by hand after
changing the format support:  /usr/bin/python3 tests/fuzz/make_corpus.py"""
import io
import os

import numpy as np
from numpy.lib import format as npformat

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def save(name, a, version=None, fortran=False):
    buf = io.BytesIO()
    if fortran:
        a = np.asfortranarray(a)
    npformat.write_array(buf, a, version=version)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(buf.getvalue())


def main():
    os.makedirs(HERE, exist_ok=True)
    save("f32_2x3.npy", np.arange(6, dtype="<f4").reshape(2, 3))
    save("f64_be_fortran.npy", np.arange(6, dtype=">f8").reshape(3, 2), fortran=True)
    save("i16_v2.npy", np.array([-1, 2, 300], dtype="<i2"), version=(2, 0))
    save("u8_v3_0d.npy", np.array(7, dtype="|u1"), version=(3, 0))
    save("bool_empty.npy", np.zeros((0, 4), dtype="|b1"))
    save("f16_3d.npy", np.linspace(-2, 2, 8, dtype="<f2").reshape(2, 2, 2))
    save("u64_be.npy", np.array([1, 2**63], dtype=">u8"))
    save("bf16.npy", np.array([0x3F80, 0x7FC0], dtype=[("bfloat16", "<u2")]))
    save("e4m3.npy", np.array([0x38, 0x7F], dtype=[("float8_e4m3fn", "|u1")]))
    save("bf16_be.npy", np.array([0x3F80, 0xFF80], dtype=[("bfloat16", ">u2")]))
    save("e5m2.npy", np.array([0x3C], dtype=[("float8_e5m2", "|u1")]))


if __name__ == "__main__":
    main()
