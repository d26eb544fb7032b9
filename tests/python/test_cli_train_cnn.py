"""`mxp train --model cnn`: the CNN of mxp.models.cnn trained in C.

The default run (10 epochs) meets the goal of issue 26: bfloat16 with
float32 masters and float16 with loss scaling within 0.5 pp of float32's
held-out accuracy (measured on this machine at every MXP_ISA level: 448,
448 and 447 of 450).  A 4-epoch run checks the rest: float32 above 95 %
(440 of 450 measured, 97.8 %), bf16 and fp16 within 1.5 pp of it (a
documented tolerance: after 4 epochs one run is noisier; measured gaps
0.67 pp at most over the ISA levels), every epoch's loss below the one
before, the held-out rows those of mxp.models.cnn.split() (NumPy's
default_rng(2026) permutation, its first 450), the same trained bits at 1
and 2 threads (weights_hash), and bad options refused with exit status 2
and one line naming the option.

Run by ctest (pytest_cli_train_cnn) with MXP_CLI naming the mxp binary.
"""
import json
import os
import subprocess

import numpy as np
import pytest

MXP = os.environ.get("MXP_CLI")
pytestmark = pytest.mark.skipif(not MXP, reason="MXP_CLI is not set (run through ctest)")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DIGITS = os.path.join(ROOT, "data", "digits")
KEYS = ["fp32", "bf16_master", "fp16_scaled"]
TIMES = {"epoch_seconds", "epoch_time", "bf16_epoch_time_ratio"}


def mxp(*args, threads=None):
    env = dict(os.environ)
    if threads:
        env["MXP_NUM_THREADS"] = str(threads)
    return subprocess.run([MXP, "train", "--model", "cnn", "--data", DIGITS, *map(str, args)], capture_output=True,
                          text=True, timeout=900, env=env)


def run_json(*args, threads=None):
    r = mxp(*args, "--json", threads=threads)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def untimed(doc):
    if isinstance(doc, dict):
        return {k: untimed(v) for k, v in doc.items() if k not in TIMES}
    if isinstance(doc, list):
        return [untimed(v) for v in doc]
    return doc


@pytest.fixture(scope="module")
def four():
    return run_json("--epochs", 4, threads=2)


def by_key(doc):
    return {t["key"]: t for t in doc["training"]}


def test_four_epochs_learn_in_every_precision(four):
    t = by_key(four)
    assert list(t) == KEYS
    fp32 = t["fp32"]["test_accuracy"]
    assert fp32 > 0.95, fp32
    for k in KEYS[1:]:
        assert abs(t[k]["test_accuracy"] - fp32) <= 0.015, (k, t[k]["test_accuracy"], fp32)
    for k in KEYS:
        loss = t[k]["epoch_loss"]
        assert len(loss) == 4 and all(b < a for a, b in zip(loss, loss[1:])), (k, loss)
        assert loss[0] < 2.3 and loss[-1] < 0.35, (k, loss)  # 2.30 = ln 10: guessing
        assert t[k]["steps"] == 4 * 22  # 1347 images in batches of 64
        assert t[k]["final_loss"] == loss[-1] and t[k]["test_accuracy"] == t[k]["epoch_test_accuracy"][-1]


def test_the_scaler_runs_only_for_float16(four):
    t = by_key(four)
    assert t["fp32"]["loss_scale"] == [] and t["bf16_master"]["loss_scale"] == []
    scale = t["fp16_scaled"]["loss_scale"]
    assert len(scale) == t["fp16_scaled"]["steps"]
    assert scale[0] == 65536 and max(scale) > 65536  # grows every 20 clean steps
    assert t["fp16_scaled"]["loss_scaling"] and t["fp16_scaled"]["skipped_steps"] < 5


def test_bytes_count_the_masters(four):
    t = by_key(four)
    # 19 088 conv weights and 330 head values in the matmul dtype (+ a float32 master when narrower), 288
    # batch norm parameters in float32
    assert t["fp32"]["weight_bytes"] == 19706 * 4
    assert t["bf16_master"]["weight_bytes"] == t["fp16_scaled"]["weight_bytes"] == (19088 + 330) * 6 + 288 * 4
    assert t["bf16_master"]["activation_bytes"] * 2 == t["fp32"]["activation_bytes"]


def test_setup_and_split(four):
    s = four["setup"]
    assert (s["model"], s["layout"], s["parameters"], s["batch"], s["epochs"]) == ("cnn", "NHWC", 19706, 64, 4)
    d = four["data"]
    assert (d["train"], d["test"]) == (1347, 450)
    # mxp.models.cnn.split()'s rule, repeated (this interpreter may lack the mxp extension)
    held_out = np.random.default_rng(2026).permutation(1797)[:450]
    assert d["test_rows"] == held_out.tolist()


def test_same_bits_at_one_and_two_threads(four):
    again = run_json("--epochs", 4, threads=1)
    assert untimed(again["training"]) == untimed(four["training"])
    assert len({t["weights_hash"] for t in four["training"]}) == 3


def test_seed_changes_the_weights_not_the_split(four):
    other = run_json("--epochs", 1, "--configs", "fp32", "--seed", 2)
    first = run_json("--epochs", 1, "--configs", "fp32")
    assert other["data"]["test_rows"] == four["data"]["test_rows"]
    assert other["training"][0]["weights_hash"] != first["training"][0]["weights_hash"]
    assert [t["key"] for t in other["training"]] == ["fp32"]


def test_default_run_meets_the_goal():
    doc = run_json()
    t = by_key(doc)
    assert doc["setup"]["epochs"] == 10
    fp32 = t["fp32"]["test_accuracy"]
    assert fp32 >= 0.99, fp32  # 448 of 450 measured, as the torch-trained weights of data/cnn
    for k, goal in (("bf16_master", "bf16_accuracy_gap_pp"), ("fp16_scaled", "fp16_scaled_accuracy_gap_pp")):
        assert t[k]["test_accuracy"] >= fp32 - 0.005, (k, t[k]["test_accuracy"], fp32)
        assert doc["goals"][goal] >= -0.5


def test_table():
    r = mxp("--epochs", 1)
    assert r.returncode == 0, r.stderr
    assert "mxp train: CNN" in r.stdout and "(mxp.models.cnn.split())" in r.stdout
    for name in ("float32 ", "bfloat16 + fp32 master ", "float16 + loss scaling "):
        assert f"\n  {name}" in r.stdout
    assert "bfloat16 + master within 0.5 pp" in r.stdout and "float16 + loss scaling within 0.5 pp" in r.stdout
    assert "grad lost" not in r.stdout and "int8" not in r.stdout  # the MLP's columns and rows


BAD = [
    (["--model", "foo"], "--model wants mlp or cnn, not 'foo'"),
    (["--model"], "--model wants mlp or cnn"),
    (["--hidden", "64"], "--hidden 64: --hidden sets the MLP's width (--model mlp)"),
    (["--monitor"], "--monitor reports on the MLP's layers (--model mlp); it does not apply to --model cnn"),
    (["--configs", "int8"], "unknown configuration 'int8'"),
    (["--epochs", "0"], "--epochs wants 1..10000"),
]


@pytest.mark.parametrize("args,text", BAD, ids=[" ".join(b[0]) for b in BAD])
def test_bad_options_exit_2(args, text):
    r = mxp(*args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stdout == "" and text in r.stderr, r.stderr


def test_hidden_before_model_is_refused_too():
    r = subprocess.run([MXP, "train", "--hidden", "64", "--model", "cnn"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--hidden sets the MLP's width" in r.stderr, r.stderr


def test_images_must_be_8x8(tmp_path):
    rng = np.random.default_rng(1)
    tmp_path.joinpath("d").mkdir()
    np.save(tmp_path / "d" / "digits_x.npy", rng.integers(0, 17, (200, 63), dtype=np.uint8))
    np.save(tmp_path / "d" / "digits_y.npy", rng.integers(0, 10, 200, dtype=np.uint8))
    r = subprocess.run([MXP, "train", "--model", "cnn", "--data", tmp_path / "d", "--epochs", "1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert "digits_x.npy has 63 columns; the CNN reads 8x8 images (64 columns)" in r.stderr


def test_other_data_is_split_in_the_same_share(tmp_path):
    rng = np.random.default_rng(3)
    tmp_path.joinpath("d").mkdir()
    np.save(tmp_path / "d" / "digits_x.npy", rng.integers(0, 17, (100, 64), dtype=np.uint8))
    np.save(tmp_path / "d" / "digits_y.npy", rng.integers(0, 10, 100, dtype=np.uint8))
    r = subprocess.run([MXP, "train", "--model", "cnn", "--data", tmp_path / "d", "--epochs", "1", "--configs",
                        "fp32", "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)["data"]
    assert (d["train"], d["test"]) == (75, 25)  # round(100 * 450 / 1797) = 25
    assert d["test_rows"] == np.random.default_rng(2026).permutation(100)[:25].tolist()
