#!/usr/bin/python3
"""Writes the fuzzers' seed corpora: tests/fuzz/corpus/ (fuzz_npy), small
valid .npy files covering each header form mxp reads; corpus_train_data/
and corpus_quant_gemm/ (fuzz_train_data, fuzz_quant_gemm_inputs), pairs of
.npy files one after the other (npy_pair.h), valid inputs of `mxp train
--data` and `mxp quant-gemm --a --b`, small (the default 4 KiB max_len).  Committed; rerun by hand after
changing the format support:  /usr/bin/python3 tests/fuzz/make_corpus.py"""
import io
import os

import numpy as np
from numpy.lib import format as npformat

FUZZ = os.path.dirname(os.path.abspath(__file__))
HERE = os.path.join(FUZZ, "corpus")
DIGITS = os.path.join(FUZZ, "..", "..", "data", "digits")


def npy(a, version=None, fortran=False):
    buf = io.BytesIO()
    if fortran:
        a = np.asfortranarray(a)
    npformat.write_array(buf, a, version=version)
    return buf.getvalue()


def save(name, a, version=None, fortran=False):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(npy(a, version, fortran))


def save_pair(folder, name, first, second):
    os.makedirs(os.path.join(FUZZ, folder), exist_ok=True)
    with open(os.path.join(FUZZ, folder, name), "wb") as f:
        f.write(npy(first) + npy(second))


def pairs():
    x = np.load(os.path.join(DIGITS, "digits_x.npy"))
    y = np.load(os.path.join(DIGITS, "digits_y.npy"))
    rng = np.random.default_rng(1)
    save_pair("corpus_train_data", "digits_40x64.bin", x[:40], y[:40])
    pooled = (x[:60].reshape(-1, 4, 2, 4, 2).astype(np.uint16).sum(axis=(2, 4)) // 4).astype(np.uint8)
    save_pair("corpus_train_data", "pooled_60x16.bin", pooled.reshape(-1, 16), y[:60])
    save_pair("corpus_train_data", "rows_10x3.bin", rng.integers(0, 17, (10, 3), dtype=np.uint8),
              np.arange(10, dtype=np.uint8))
    save_pair("corpus_train_data", "column_200x1.bin", rng.integers(0, 17, (200, 1), dtype=np.uint8),
              rng.integers(0, 10, 200, dtype=np.uint8))
    f32 = np.float32
    save_pair("corpus_quant_gemm", "f32_4x3_3x5.bin", rng.standard_normal((4, 3)).astype(f32),
              (rng.standard_normal((3, 5)) * 0.05).astype(f32))
    save_pair("corpus_quant_gemm", "f64_2x8_f32_8x2.bin", rng.standard_normal((2, 8)),
              rng.standard_normal((8, 2)).astype(f32))
    save_pair("corpus_quant_gemm", "f32_1x1_1x1.bin", np.array([[2.5]], f32), np.array([[-0.5]], f32))
    save_pair("corpus_quant_gemm", "fortran_be.bin", np.asfortranarray(rng.standard_normal((3, 2)).astype(f32)),
              rng.standard_normal((2, 4)).astype(">f8"))
    special = np.array([[0.0, -0.0, 1e-45, 3e38], [-3e38, 1.0, -1.0, 0.5]], f32)
    save_pair("corpus_quant_gemm", "extremes_2x4_4x3.bin", special, np.array([[1, 0, -1]] * 4, f32))


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
    pairs()


if __name__ == "__main__":
    main()
