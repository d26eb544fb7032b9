"""mxp cast on safetensors files: floating-point tensors rounded once into
the target (bfloat16 here, checked against the round-to-nearest-even of
their float32 bits computed in NumPy), integer tensors and metadata kept,
one stochastic stream across the file, and failures that leave OUT as it
was.  Needs NumPy only (the files are built and parsed here)."""
import json
import os
import resource
import struct
import subprocess

import numpy as np
import pytest

MXP = os.environ.get("MXP_CLI", "build/mxp")


def write(path, tensors, metadata=None, raw=None):
    """A safetensors file: tensors {name: array} in the given order (raw:
    {name: (dtype name, shape, bytes)} for dtypes NumPy lacks)."""
    header, blobs, at = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    names = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16", np.dtype(np.int64): "I64",
             np.dtype(np.float64): "F64"}
    items = [(k, names[a.dtype], list(a.shape), a.tobytes()) for k, a in tensors.items()]
    items += [(k, d, list(s), b) for k, (d, s, b) in (raw or {}).items()]
    for k, d, s, b in items:
        header[k] = {"dtype": d, "shape": s, "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", None)
    return {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items()}, meta, data


def bf16_rne(x):
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def cast(*args):
    return subprocess.run([MXP, "cast"] + [str(a) for a in args], capture_output=True, text=True)


def test_cast_to_bfloat16(tmp_path):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 5)).astype(np.float32) * 3
    h = rng.standard_normal(7).astype(np.float16)
    ids = np.arange(5, dtype=np.int64) - 2
    write(tmp_path / "in.safetensors", {"w": w, "h": h, "ids": ids}, metadata={"format": "pt"})
    p = cast(tmp_path / "in.safetensors", tmp_path / "out.safetensors", "--to", "bf16")
    assert p.returncode == 0, p.stderr
    assert "3 tensors, 2 floating-point converted to bfloat16 (27 elements), 1 kept" in p.stdout
    out, meta, data = read(tmp_path / "out.safetensors")
    assert meta == {"format": "pt"}
    assert out["w"][:2] == ("BF16", [4, 5]) and out["h"][:2] == ("BF16", [7]) and out["ids"][:2] == ("I64", [5])
    assert np.array_equal(np.frombuffer(out["w"][2], np.uint16), bf16_rne(w).ravel())
    assert np.array_equal(np.frombuffer(out["h"][2], np.uint16), bf16_rne(h.astype(np.float32)))
    assert out["ids"][2] == ids.tobytes()
    assert struct.unpack("<Q", data[:8])[0] % 8 == 0  # the header padded as the library pads it


def test_stochastic_is_reproducible_and_one_stream(tmp_path):
    w = np.full(4096, 1.0 + 2.0 ** -8, dtype=np.float32)  # halfway between two bfloat16: a fair draw each
    write(tmp_path / "in.safetensors", {"a": w, "b": w})
    outs = []
    for k in range(2):
        p = cast(tmp_path / "in.safetensors", tmp_path / ("o%d.safetensors" % k), "--to", "bf16",
                 "--rounding", "stochastic", "--seed", 9)
        assert p.returncode == 0, p.stderr
        outs.append(read(tmp_path / ("o%d.safetensors" % k))[0])
    assert outs[0] == outs[1]
    a, b = outs[0]["a"][2], outs[0]["b"][2]
    assert a != b  # the second tensor continues the stream, it does not repeat it
    ups = np.count_nonzero(np.frombuffer(a, np.uint16) == 0x3F81)
    assert 1800 < ups < 2300  # about half round up


def test_packed_float6_and_float4_are_cast(tmp_path):
    # F6_E2M3 bytes 7f 80 01 = 111111 000001 011000 000000 from the low bit:
    # -7.5, 1/8 (subnormal), 4, 0; F4 byte 0x7c: 1100 (-2) then 0111 (6)
    write(tmp_path / "in.safetensors", {}, raw={"s": ("F6_E2M3", [4], b"\x7f\x80\x01"), "q": ("F4", [2], b"\x7c")})
    p = cast(tmp_path / "in.safetensors", tmp_path / "out.safetensors", "--to", "f16")
    assert p.returncode == 0, p.stderr
    out, _, _ = read(tmp_path / "out.safetensors")
    assert out["s"][:2] == ("F16", [4])
    assert np.frombuffer(out["s"][2], np.float16).tolist() == [-7.5, 0.125, 4.0, 0.0]
    assert np.frombuffer(out["q"][2], np.float16).tolist() == [-2.0, 6.0]


def test_dtypes_mxp_lacks_are_kept(tmp_path):
    """A tensor of a dtype mxp has no type for (C64) is copied as it is,
    beside the converted ones, and counted as kept."""
    raw = bytes(range(8))
    write(tmp_path / "odd.safetensors", {"w": np.ones(2, np.float32)}, raw={"s": ("C64", [1], raw)})
    p = cast(tmp_path / "odd.safetensors", tmp_path / "out.safetensors", "--to", "bf16")
    assert p.returncode == 0, p.stderr
    assert "2 tensors, 1 floating-point converted to bfloat16 (2 elements), 1 kept" in p.stdout
    out, _, _ = read(tmp_path / "out.safetensors")
    assert out["s"] == ("C64", [1], raw)
    assert out["w"][:2] == ("BF16", [2]) and out["w"][2] == bytes.fromhex("803f803f")


def test_failures_leave_out_alone(tmp_path):
    (tmp_path / "out.safetensors").write_bytes(b"old")
    data = (tmp_path / "in.safetensors")
    write(data, {"w": np.ones(4, np.float32)})
    (tmp_path / "cut.safetensors").write_bytes(data.read_bytes()[:-3])
    p = cast(tmp_path / "cut.safetensors", tmp_path / "out.safetensors", "--to", "f16")
    assert p.returncode == 1
    assert "cut.safetensors: the tensors' data ends at byte 16 of the data, the file's at 13" in p.stderr
    assert (tmp_path / "out.safetensors").read_bytes() == b"old"


SANITIZED = os.environ.get("MXP_SANITIZE", "").upper() in ("ON", "1", "TRUE", "YES")


@pytest.mark.skipif(SANITIZED, reason="ASan's shadow memory is private anonymous memory: ulimit -d cannot bound it")
def test_cast_memory_stays_bounded(tmp_path):
    """A cast under a data limit (ulimit -d: heap and anonymous mappings;
    the input stays a file mapping) smaller than its output: 96 MB of
    float32 zeros (a sparse file) into 48 MB of bfloat16 under 24 MiB
    succeeds, a chunk at a time (holding the converted tensors, as mxp cast
    did before, failed for want of 48 MB)."""
    n = 24_000_000
    hdr = json.dumps({"big": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]},
                      "ids": {"dtype": "I64", "shape": [3], "data_offsets": [4 * n, 4 * n + 24]}}).encode()
    hdr += b" " * (-len(hdr) % 8)
    src = tmp_path / "big.safetensors"
    with open(src, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr)
        f.seek(4 * n, os.SEEK_CUR)  # zeros, never written
        f.write(struct.pack("<3q", 1, 2, 3))

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (24 << 20, 24 << 20))

    out = tmp_path / "out.safetensors"
    p = subprocess.run([MXP, "cast", str(src), str(out), "--to", "bf16"], capture_output=True, text=True,
                       preexec_fn=limit)
    assert p.returncode == 0, p.stderr
    assert "2 tensors, 1 floating-point converted to bfloat16 (24000000 elements), 1 kept" in p.stdout
    with open(out, "rb") as f:
        k = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(k))
        assert head["ids"] == {"dtype": "I64", "shape": [3], "data_offsets": [0, 24]}
        assert head["big"] == {"dtype": "BF16", "shape": [n], "data_offsets": [24, 24 + 2 * n]}
        assert struct.unpack("<3q", f.read(24)) == (1, 2, 3)
        zeros = bytes(1 << 20)
        left = 2 * n
        while left:
            chunk = f.read(min(left, 1 << 20))
            assert chunk == zeros[:len(chunk)]
            left -= len(chunk)
        assert f.read() == b""


@pytest.mark.skipif(SANITIZED, reason="ASan's shadow memory is private anonymous memory: ulimit -d cannot bound it")
@pytest.mark.parametrize("command", [["quantize", "--to", "int8"], ["cast", "--to", "e4m3", "--scale", "per-channel"]])
def test_quantize_memory_stays_bounded(tmp_path, command):
    """mxp quantize and mxp cast --scale under a data limit (24 MiB)
    smaller than their output: 40 float16 weights of 1024 x 1024 (zeros, a
    sparse file of 84 MB) into 42 MB of int8 or float8 codes and scales,
    made one tensor at a time while the file is written (holding the
    quantized tensors until the end, as both did before, needs 42 MB)."""
    n, shape = 40, [1024, 1024]
    hdr, at = {}, 0
    for i in range(n):
        hdr[f"l{i:02d}.weight"] = {"dtype": "F16", "shape": shape, "data_offsets": [at, at + (2 << 20)]}
        at += 2 << 20
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    src = tmp_path / "big.safetensors"
    with open(src, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.truncate(8 + len(h) + at)

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (24 << 20, 24 << 20))

    out = tmp_path / "q.safetensors"
    p = subprocess.run([MXP, command[0], str(src), str(out)] + command[1:], capture_output=True, text=True,
                       preexec_fn=limit)
    assert p.returncode == 0, p.stderr
    if command[0] == "quantize":
        assert "40 tensors, 40 quantized to int8 per-channel" in p.stdout
        assert "83886080 -> 42106880 bytes of tensors" in p.stdout
    else:
        assert "40 tensors, 40 floating-point converted to float8_e4m3fn with a scale per row" in p.stdout
    got, meta, data = read(out)
    assert len(got) == 80 and len(data) == out.stat().st_size
    for i in range(n):
        d, s, codes = got[f"l{i:02d}.weight"]
        assert (d, s) == ("I8" if command[0] == "quantize" else "F8_E4M3", shape) and codes == bytes(1 << 20)
        d, s, scale = got[f"l{i:02d}.weight_scale"]
        assert (d, s) == ("F32", [1024, 1]) and len(scale) == 4096


def test_analyze_tensor_by_tensor(tmp_path):
    rng = np.random.default_rng(3)
    big = (rng.standard_normal(64) * 1e5).astype(np.float32)  # beyond float16 and float8 e4m3
    small = rng.standard_normal((8, 8)).astype(np.float32)
    write(tmp_path / "m.safetensors", {"big": big, "small": small, "ids": np.arange(3, dtype=np.int64)})
    p = subprocess.run([MXP, "analyze", str(tmp_path / "m.safetensors"), "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    t = {x["name"]: x for x in doc["tensors"]}
    assert t["ids"]["kept"] and "recommended" not in t["ids"]
    rows = {r["dtype"]: r for r in t["big"]["candidates"]}
    assert rows["float8_e4m3fn"]["overflow"] == int(np.count_nonzero(np.abs(big) > 464))  # past 448 + half an ulp
    assert rows["float16"]["overflow"] == int(np.count_nonzero(np.abs(big) >= 65520))
    assert t["big"]["recommended"] == "bfloat16"
    assert doc["float_bytes"] == 64 * 4 + 64 * 4
    assert doc["float_bytes_recommended"] < doc["float_bytes"]
    p = subprocess.run([MXP, "analyze", str(tmp_path / "m.safetensors")], capture_output=True, text=True)
    assert p.returncode == 0 and "2 floating-point tensors: 512 B now" in p.stdout
    assert "ids                                      I64      (kept" in p.stdout


# ---- mxp quantize: model files in the common quantized layouts -------------------------------------------------

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6])


def quantize(*args):
    return subprocess.run([MXP, "quantize"] + [str(a) for a in args], capture_output=True, text=True)


def model(path):
    rng = np.random.default_rng(5)
    t = {"a.weight": (rng.standard_normal((8, 64)) * [[10.0 ** (i % 4 - 2)] for i in range(8)]).astype(np.float32),
         "b.weight": rng.standard_normal((4, 32)).astype(np.float16),
         "a.bias": rng.standard_normal(8).astype(np.float32),
         "ids": np.arange(3, dtype=np.int64),
         "tiny.weight": rng.standard_normal((2, 16)).astype(np.float32)}
    write(path, t, metadata={"format": "pt"})
    return t


def e2m1_codes(t):
    """|t| (already divided by the block scale) to E2M1 indices: nearest, ties to the even index, saturated."""
    t = np.minimum(np.abs(t), 6.0)
    lo = np.searchsorted(E2M1, t, side="right") - 1
    hi = np.minimum(lo + 1, 7)
    dl, dh = t - E2M1[lo], E2M1[hi] - t
    return np.where(dl < dh, lo, np.where(dl > dh, hi, np.where(lo % 2 == 0, lo, hi)))


def nibbles(b):
    b = np.asarray(b, np.uint8)
    return np.stack([b & 15, b >> 4], axis=-1).reshape(*b.shape[:-1], -1)


def test_quantize_int8_and_int4(tmp_path):
    t = model(tmp_path / "m.safetensors")
    for kind, qmax in (("int8", 127), ("int4", 7)):
        out = tmp_path / f"{kind}.safetensors"
        p = quantize(tmp_path / "m.safetensors", out, "--to", kind, "--min-elements", "100")
        assert p.returncode == 0, p.stderr
        assert f"5 tensors, 2 quantized to {kind} per-channel" in p.stdout
        got, meta, _ = read(out)
        assert meta == {"format": "pt", "mxp_quantize": f"{kind} per-channel; layout: mxp docs/safetensors.md"}
        for k in ("a.bias", "ids", "tiny.weight"):  # kept as they are
            assert got[k][2] == t[k].tobytes()
        for k in ("a.weight", "b.weight"):
            w = t[k].astype(np.float64)
            d, shape, scale = got[k + "_scale"]
            assert (d, shape) == ("F32", [w.shape[0], 1])
            s = np.frombuffer(scale, np.float32).astype(np.float64)[:, None]
            assert np.array_equal(s, (np.abs(w).max(axis=1, keepdims=True) / qmax).astype(np.float32))
            want = np.clip(np.rint(w / s), -qmax, qmax)
            if kind == "int8":
                d, shape, codes = got[k]
                assert (d, shape) == ("I8", list(w.shape))
                q = np.frombuffer(codes, np.int8).reshape(w.shape)
            else:
                d, shape, packed = got[k + "_packed"]
                assert (d, shape) == ("U8", [w.shape[0], w.shape[1] // 2])
                n = nibbles(np.frombuffer(packed, np.uint8).reshape(shape)).astype(np.int8)
                q = np.where(n > 7, n - 16, n)
                assert got[k + "_shape"] == ("I64", [2], np.array(w.shape, np.int64).tobytes())
            assert np.array_equal(q, want)
            assert np.abs(q).max(axis=1).tolist() == [qmax] * w.shape[0]
    p = quantize(tmp_path / "m.safetensors", tmp_path / "pt.safetensors", "--to", "int8", "--per-tensor",
                 "--min-elements", "100")
    assert p.returncode == 0, p.stderr
    got, _, _ = read(tmp_path / "pt.safetensors")
    assert got["a.weight_scale"][:2] == ("F32", [1])
    w = t["a.weight"].astype(np.float64)
    s = float(np.frombuffer(got["a.weight_scale"][2], np.float32)[0])
    assert s == np.float32(np.abs(w).max() / 127)
    assert np.array_equal(np.frombuffer(got["a.weight"][2], np.int8).reshape(w.shape), np.rint(w / s))
    assert "tiny.weight_scale" not in got and got["tiny.weight"][2] == t["tiny.weight"].tobytes()  # < 100 values


def test_quantize_mxfp4_nvfp4(tmp_path):
    t = model(tmp_path / "m.safetensors")
    p = quantize(tmp_path / "m.safetensors", tmp_path / "mx.safetensors", "--to", "mxfp4", "--min-elements", "0")
    assert p.returncode == 0, p.stderr
    assert "5 tensors, 2 quantized to mxfp4" in p.stdout  # tiny.weight: 16 columns, not whole blocks of 32
    got, _, _ = read(tmp_path / "mx.safetensors")
    assert got["tiny.weight"][2] == t["tiny.weight"].tobytes()
    for k in ("a.weight", "b.weight"):
        w = t[k].astype(np.float32).astype(np.float64)
        r, c = w.shape
        d, shape, blocks = got[k + "_blocks"]
        assert (d, shape) == ("U8", [r, c // 32, 16])
        d, shape, scales = got[k + "_scales"]
        assert (d, shape) == ("U8", [r, c // 32])
        e = np.frombuffer(scales, np.uint8).reshape(r, c // 32).astype(np.int64)
        amax = np.abs(w.reshape(r, c // 32, 32)).max(axis=2)
        assert np.array_equal(e, np.frexp(amax)[1] - 1 - 2 + 127)  # floor(log2 amax) - emax(E2M1)
        x = np.exp2(e - 127.0)[:, :, None]
        n = nibbles(np.frombuffer(blocks, np.uint8).reshape(r, c // 32, 16))
        t_ = w.reshape(r, c // 32, 32) / x
        assert np.array_equal(n & 7, e2m1_codes(t_))
        nz = e2m1_codes(t_) > 0  # the sign bit of every nonzero code (a zero may carry either)
        assert np.array_equal((n >> 3)[nz], (t_ < 0)[nz])
    p = quantize(tmp_path / "m.safetensors", tmp_path / "nv.safetensors", "--to", "nvfp4", "--min-elements", "0")
    assert p.returncode == 0, p.stderr
    got, _, _ = read(tmp_path / "nv.safetensors")
    for k in ("a.weight", "b.weight", "tiny.weight"):
        w = t[k].astype(np.float32).astype(np.float64)
        r, c = w.shape
        d, shape, codes = got[k]
        assert (d, shape) == ("U8", [r, c // 2])
        d, shape, s8 = got[k + "_scale"]
        assert (d, shape) == ("F8_E4M3", [r, c // 16])
        d, shape, s2 = got[k + "_scale_2"]
        assert (d, shape) == ("F32", [])
        g = float(np.frombuffer(s2, np.float32)[0])
        b = np.frombuffer(s8, np.uint8).astype(np.int64)
        ex, m = (b >> 3) & 15, b & 7
        bs = np.where(ex == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * np.exp2(ex - 7.0)).reshape(r, c // 16, 1)
        n = nibbles(np.frombuffer(codes, np.uint8).reshape(r, c // 2)).reshape(r, c // 16, 16)
        deq = np.where(n >> 3, -1, 1) * E2M1[n & 7] * bs * g
        err = np.abs(deq - w.reshape(r, c // 16, 16))
        assert np.all(err <= bs * g * 1.0 + 1e-12)  # half the widest E2M1 gap (4 to 6) in block units
        amax = np.abs(w.reshape(r, c // 16, 16)).max(axis=2, keepdims=True)
        assert np.all(np.abs(deq).max(axis=2, keepdims=True) >= amax * 0.85)


def test_quantize_refuses(tmp_path):
    model(tmp_path / "m.safetensors")
    p = quantize(tmp_path / "m.safetensors", tmp_path / "o.safetensors", "--to", "int3")
    assert p.returncode == 2 and "--to int3: use int8, int4, mxfp4 or nvfp4" in p.stderr
    p = quantize(tmp_path / "m.safetensors", tmp_path / "o.safetensors")
    assert p.returncode == 2 and "missing --to" in p.stderr
    (tmp_path / "o.safetensors").write_bytes(b"old")
    p = quantize(tmp_path / "missing.safetensors", tmp_path / "o.safetensors", "--to", "int8")
    assert p.returncode == 1 and "cannot open" in p.stderr
    assert (tmp_path / "o.safetensors").read_bytes() == b"old"


def e4m3(b):
    b = np.asarray(b, np.uint8).astype(np.int64)
    ex, m = (b >> 3) & 15, b & 7
    v = np.where(ex == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * np.exp2(ex - 7.0))
    return np.where(b >> 7, -v, v)


def test_cast_with_a_scale(tmp_path):
    t = model(tmp_path / "m.safetensors")
    for mode in ("per-channel", "per-tensor"):
        out = tmp_path / f"{mode}.safetensors"
        p = cast(tmp_path / "m.safetensors", out, "--to", "e4m3", "--scale", mode)
        assert p.returncode == 0, p.stderr
        assert "5 tensors, 3 floating-point converted to float8_e4m3fn with a scale per " in p.stdout
        got, meta, _ = read(out)
        assert meta == {"format": "pt"}
        assert got["a.bias"][2] == t["a.bias"].tobytes() and got["ids"][2] == t["ids"].tobytes()  # kept
        for k in ("a.weight", "b.weight", "tiny.weight"):
            w = t[k].astype(np.float64)
            d, shape, codes = got[k]
            assert (d, shape) == ("F8_E4M3", list(w.shape))
            d, shape, sc = got[k + "_scale"]
            s = np.frombuffer(sc, np.float32).astype(np.float64)
            amax = np.abs(w).max(axis=1) if mode == "per-channel" else np.array([np.abs(w).max()])
            assert shape == ([w.shape[0], 1] if mode == "per-channel" else [1])
            assert np.array_equal(s, (amax / 448).astype(np.float32))
            s = s.reshape(-1, 1)
            q = e4m3(np.frombuffer(codes, np.uint8)).reshape(w.shape)
            ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(q), 2.0 ** -6))) - 3)
            assert np.all(np.abs(w / s - q) <= ulp / 2 * (1 + 1e-9))  # rounded to nearest
            assert np.abs(q).max() == 448
    p = cast(tmp_path / "m.safetensors", tmp_path / "o.safetensors", "--to", "bf16", "--scale", "per-tensor")
    assert p.returncode == 2 and "--scale needs a float8, float6 or float4 --to, not bfloat16" in p.stderr
    p = cast(tmp_path / "x.npy", tmp_path / "y.npy", "--to", "e4m3", "--scale", "per-tensor")
    assert p.returncode == 2 and "--scale is for safetensors files" in p.stderr
    p = cast(tmp_path / "m.safetensors", tmp_path / "o.safetensors", "--to", "e4m3", "--scale", "per-row")
    assert p.returncode == 2 and "--scale per-row: use per-tensor or per-channel" in p.stderr


def test_scaled_outputs_apart_in_the_file(tmp_path):
    """Two weights whose codes and scales lie apart in the output (a_scale,
    b_scale, then a, b: each tensor quantized twice) count their flags
    once and draw stochastic rounding's one stream as a lone tensor does:
    b's codes are those of a file holding b after a's 256 elements; the
    C64 tensor (a dtype mxp lacks) is kept as it is; float4 codes are
    written packed (F4, element 2i in the low nibble)."""
    rng = np.random.default_rng(9)
    a, b = (rng.standard_normal((4, 64)) * 3).astype(np.float32), rng.standard_normal((2, 32)).astype(np.float32)
    raw = {"z": ("C64", [1], bytes(range(8)))}
    write(tmp_path / "one.safetensors", {"a": a})
    write(tmp_path / "two.safetensors", {"a": a, "b": b}, raw=raw)
    flags = {}
    for name in ("one", "two"):
        p = cast(tmp_path / f"{name}.safetensors", tmp_path / f"{name}-q.safetensors", "--to", "e4m3", "--scale",
                 "per-channel", "--rounding", "stochastic", "--seed", "3")
        assert p.returncode == 0, p.stderr
        flags[name] = int(p.stdout.split("inexact ")[1].split(",")[0])
    one, _, _ = read(tmp_path / "one-q.safetensors")
    two, _, _ = read(tmp_path / "two-q.safetensors")
    assert two["a"] == one["a"] and two["a_scale"] == one["a_scale"] and two["z"] == raw["z"]
    write(tmp_path / "b.safetensors", {"b": b})
    p = cast(tmp_path / "b.safetensors", tmp_path / "b-q.safetensors", "--to", "e4m3", "--scale", "per-channel",
             "--rounding", "stochastic", "--seed", "3")
    lone = int(p.stdout.split("inexact ")[1].split(",")[0])
    assert flags["two"] == flags["one"] + lone  # once each
    assert 0 < lone and 0 < flags["one"]
    for k in ("a", "b"):  # b's stream starts 256 elements in: not a lone b's
        w = {"a": a, "b": b}[k].astype(np.float64)
        s = np.frombuffer(two[k + "_scale"][2], np.float32).astype(np.float64)[:, None]
        q = e4m3(np.frombuffer(two[k][2], np.uint8)).reshape(w.shape)
        ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(w / s), 2.0 ** -6))) - 3)
        assert np.all(np.abs(w / s - q) < ulp * (1 + 1e-9))  # one of the two neighbours
    lone_b, _, _ = read(tmp_path / "b-q.safetensors")
    assert lone_b["b"][2] != two["b"][2]
    p = quantize(tmp_path / "two.safetensors", tmp_path / "i8.safetensors", "--to", "int8", "--min-elements", "0")
    assert p.returncode == 0, p.stderr
    assert read(tmp_path / "i8.safetensors")[0]["z"] == raw["z"]
    # float4 codes, packed
    p = cast(tmp_path / "one.safetensors", tmp_path / "f4.safetensors", "--to", "float4_e2m1fn", "--scale",
             "per-channel")
    assert p.returncode == 0, p.stderr
    f4, _, _ = read(tmp_path / "f4.safetensors")
    d, shape, codes = f4["a"]
    assert (d, shape, len(codes)) == ("F4", [4, 64], 128)
    s = np.frombuffer(f4["a_scale"][2], np.float32).astype(np.float64)[:, None]
    n = nibbles(np.frombuffer(codes, np.uint8).reshape(4, 32))
    t = a.astype(np.float64) / s
    assert np.array_equal(n & 7, e2m1_codes(t))
    assert np.array_equal((n >> 3).astype(bool) | (e2m1_codes(t) == 0), (t < 0) | (e2m1_codes(t) == 0))
