"""`mxp train --data DIR` on data that is not the digits' 1797 x 64.

The network's input is as wide as digits_x.npy's columns (1..65536): 63, 1
and 100 columns train in every configuration (no read past the data: run
under ASan by `make check-sanitize`), and the digits pooled to 4x4 (16
columns) learn.  Data that breaks the rules (no columns, fewer than 10
rows, rows and labels that disagree, values out of range, other dtypes or
dimensions, Fortran order) is refused with one line naming the file and
the rule, exit status 1 (failed work, as for a missing file), before any
training.  Before: (200000, 0) crashed with SIGSEGV, (200, 63) read past a
heap buffer, (200, 1) failed with "source and destination overlap", 9 rows
said the files "disagree on the number of rows".

Run by ctest (pytest_cli_train_data) with MXP_CLI naming the mxp binary.
"""
import json
import os
import subprocess

import numpy as np
import pytest

MXP = os.environ.get("MXP_CLI")
pytestmark = pytest.mark.skipif(not MXP, reason="MXP_CLI is not set (run through ctest)")
DIGITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "digits")


def mxp(*args):
    return subprocess.run([MXP, *map(str, args)], capture_output=True, text=True, timeout=600)


def write(d, x, y):
    d.mkdir(exist_ok=True)
    if x is not None:
        np.save(d / "digits_x.npy", x)
    if y is not None:
        np.save(d / "digits_y.npy", y)
    return d


def data(rows, cols, seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 17, (rows, cols), dtype=np.uint8), rng.integers(0, 10, rows, dtype=np.uint8)


@pytest.mark.parametrize("cols", [63, 1, 100])
def test_input_width_follows_the_columns(tmp_path, cols):
    d = write(tmp_path / "d", *data(200, cols))
    r = mxp("train", "--data", d, "--epochs", "1", "--hidden", "16", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["setup"]["sizes"] == [cols, 16, 16, 10]
    assert (doc["data"]["train"], doc["data"]["test"]) == (160, 40)
    assert [t["key"] for t in doc["training"]] == ["fp32", "bf16_master", "fp16_scaled", "fp16_unscaled",
                                                   "bf16_pure_sr"]
    assert len(doc["inference"]) == 5
    assert f"MLP {cols}-16-16-10 (relu)" in r.stderr  # the progress


def test_digits_pooled_to_16_columns_learn(tmp_path):
    x = np.load(os.path.join(DIGITS, "digits_x.npy"))
    y = np.load(os.path.join(DIGITS, "digits_y.npy"))
    pooled = (x.reshape(-1, 4, 2, 4, 2).astype(np.uint16).sum(axis=(2, 4)) // 4).astype(np.uint8)
    d = write(tmp_path / "d", pooled.reshape(-1, 16), y)
    r = mxp("train", "--data", d, "--epochs", "10", "--hidden", "64", "--configs", "fp32", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["setup"]["sizes"] == [16, 64, 64, 10]
    assert doc["training"][0]["test_accuracy"] > 0.8  # 0.88 measured; 10 classes guessed: 0.1
    assert all(row["test_accuracy"] > 0.8 for row in doc["inference"])


def x_y(rows=200, cols=64):
    return data(rows, cols)


def with_x(x):
    return x, x_y(x.shape[0] if x.ndim else 1)[1]


BAD = [
    ("zero_columns", lambda: (np.zeros((200000, 0), np.uint8), np.zeros(200000, np.uint8)),
     "digits_x.npy has 0 columns; an image needs 1..65536 values (the digits have 64)"),
    ("too_many_columns", lambda: (np.zeros((10, 65537), np.uint8), np.zeros(10, np.uint8)),
     "digits_x.npy has 65537 columns; an image needs 1..65536 values"),
    ("nine_rows", lambda: x_y(9, 64),
     "digits_x.npy has 9 rows; mxp train needs at least 10 (a fifth are held out for testing)"),
    ("zero_rows", lambda: (np.zeros((0, 64), np.uint8), np.zeros(0, np.uint8)),
     "digits_x.npy has 0 rows; mxp train needs at least 10"),
    ("rows_disagree", lambda: (x_y(200)[0], x_y(199)[1]),
     ": digits_x.npy has 200 rows but digits_y.npy 199 labels; they must agree"),
    ("label_10", lambda: (x_y()[0], np.where(np.arange(200) == 7, 10, 0).astype(np.uint8)),
     "digits_y.npy: label 10 in row 7; labels must be 0..9"),
    ("gray_17", lambda: (np.where(np.arange(200 * 64).reshape(200, 64) == 3 * 64 + 5, 17, 0).astype(np.uint8),
                         x_y()[1]),
     "digits_x.npy: 17 in row 3, column 5; gray levels must be 0..16"),
    ("float32_x", lambda: with_x(np.zeros((200, 64), np.float32)),
     "digits_x.npy holds float32 (200, 64); expected a C-ordered uint8 array of 2 dimensions"),
    ("one_dimension_x", lambda: with_x(np.zeros(200, np.uint8)),
     "digits_x.npy holds uint8 (200,); expected a C-ordered uint8 array of 2 dimensions"),
    ("fortran_x", lambda: with_x(np.asfortranarray(np.zeros((200, 64), np.uint8))),
     "digits_x.npy holds uint8 (200, 64) in Fortran order; expected a C-ordered uint8 array of 2 dimensions"),
    ("two_dimension_y", lambda: (x_y()[0], np.zeros((200, 1), np.uint8)),
     "digits_y.npy holds uint8 (200, 1); expected a C-ordered uint8 array of 1 dimension"),
    ("int64_y", lambda: (x_y()[0], np.zeros(200, np.int64)),
     "digits_y.npy holds int64 (200,); expected a C-ordered uint8 array of 1 dimension"),
    ("no_y", lambda: (x_y()[0], None), "digits_y.npy: cannot open"),
]


@pytest.mark.parametrize("make,text", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_data_is_one_line_exit_1(tmp_path, make, text):
    x, y = make()
    d = write(tmp_path / "d", x, y)
    r = mxp("train", "--data", d, "--epochs", "1", "--hidden", "8")
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"mxp train: {d}"), r.stderr
    assert text in r.stderr, r.stderr


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_json_escapes_the_data_directory(tmp_path, model):
    """--json writes --data's path as a JSON string: a quote, a backslash and
    a tab in the folder's name stay valid JSON and come back as given."""
    x, y = np.load(os.path.join(DIGITS, "digits_x.npy")), np.load(os.path.join(DIGITS, "digits_y.npy"))
    d = write(tmp_path / 'dig"its\\ \t1', x, y)
    args = ["train", "--model", model, "--epochs", 1, "--configs", "fp32", "--json", "--data", d]
    r = mxp(*args)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["data"]["dir"] == str(d)
