"""python3 -m mxp.dask: convert or quantize an array out of core.

  python3 -m mxp.dask convert IN OUT --to bfloat16 [--rounding stochastic --seed 1]
  python3 -m mxp.dask quantize IN OUT [--qtype int8] [--axis 1] [--observer percentile]

IN: a zarr array (NAME.zarr), a folder of .npy shards or one .npy file;
OUT: NAME.zarr, or else a folder of .npy shards.  convert also takes a
folder of safetensors shards (a checkpoint), cast shard by shard into the
folder OUT with the other files and the index.  Runs on a LocalCluster
(--workers processes, --memory-limit each) unless --scheduler names a
running Dask scheduler (tcp://host:8786).  A progress bar on stderr."""
import argparse
import contextlib
import os
import sys
import time


from .._api import ROUNDINGS
from .._quant import QTYPES
from . import OBSERVERS, astype, calibrate, cast_safetensors, quantize
from ._blocks import resolve_dtype
from ._io import open_array, save_quantized, store_array


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m mxp.dask", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    def common(s):
        s.add_argument("input", help="NAME.zarr, a folder of .npy shards, or a .npy file")
        s.add_argument("output", help="NAME.zarr, or a folder for .npy shards")
        s.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (default: a LocalCluster)")
        s.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
        s.add_argument("--threads", type=int, default=1, help="threads per LocalCluster worker (default 1)")
        s.add_argument("--memory-limit", default="2GiB", help="memory per LocalCluster worker (default 2GiB)")
        s.add_argument("--rows-per-chunk", type=int, help="rechunk the input along axis 0 (default: its own chunks)")
        s.add_argument("--rounding", default="nearest_even", choices=ROUNDINGS)
        s.add_argument("--seed", type=int, default=0, help="stochastic rounding's seed")
        s.add_argument("--no-progress", action="store_true", help="no progress bar")

    c = sub.add_parser("convert", help="convert to another dtype")
    common(c)
    c.add_argument("--to", required=True, metavar="DTYPE", help="bfloat16, float8_e4m3fn, float16, ...")
    c.add_argument("--overflow", default="inf", choices=("inf", "saturate"))
    q = sub.add_parser("quantize", help="quantize (codes + scales + zero points)")
    common(q)
    q.add_argument("--qtype", default="int8", choices=QTYPES)
    q.add_argument("--asymmetric", action="store_true")
    q.add_argument("--axis", type=int, help="per channel along this axis (default: per tensor)")
    q.add_argument("--group-size", type=int)
    q.add_argument("--observer", default="minmax", choices=OBSERVERS)
    q.add_argument("--percentile", type=float, default=99.99)
    q.add_argument("--bins", type=int, default=2048)
    q.add_argument("--momentum", type=float, default=0.9)
    return p


@contextlib.contextmanager
def _client(args):
    from distributed import Client, LocalCluster
    if args.scheduler:
        with Client(args.scheduler) as client:
            yield client
        return
    with LocalCluster(n_workers=args.workers, threads_per_worker=args.threads, memory_limit=args.memory_limit,
                      processes=True, dashboard_address=":0") as cluster, Client(cluster) as client:
        yield client


def _run(client, writes, progress):
    from distributed import progress as bar, wait
    futures = client.compute(writes)
    if progress:
        with contextlib.redirect_stdout(sys.stderr):  # distributed's text bar writes to stdout
            bar(futures)
        print(file=sys.stderr)
    wait(futures)
    for f in futures:
        f.result()  # raises the first failure


def _convert_checkpoint(args):
    """A folder of safetensors shards: one task a shard (cast_safetensors)."""
    try:
        with _client(args):
            t0 = time.perf_counter()
            done = cast_safetensors(args.input, args.output, resolve_dtype(args.to, "convert"), args.rounding,
                                    args.overflow, args.seed)
            dt = time.perf_counter() - t0
    except (ValueError, TypeError, OSError) as e:
        print(f"python3 -m mxp.dask: {e}", file=sys.stderr)
        return 1
    tensors, elements = sum(c for c, _ in done.values()), sum(e for _, e in done.values())
    print(f"{args.input} ({len(done)} safetensors shards) -> {args.output}: {tensors} tensors, {elements} elements "
          f"converted to {args.to} in {dt:.2f} s")
    return 0


def _gb(nbytes):
    return f"{nbytes / 1e9:.3g} GB"


def main(argv=None):
    args = _parser().parse_args(argv)
    if not os.path.exists(args.input):
        print(f"python3 -m mxp.dask: {args.input}: no such file or folder", file=sys.stderr)
        return 2
    if args.command == "convert" and os.path.isdir(args.input) and \
            any(f.endswith(".safetensors") for f in os.listdir(args.input)):
        return _convert_checkpoint(args)
    try:
        x = open_array(args.input, args.rows_per_chunk)
        kw = dict(rounding=args.rounding, seed=args.seed)
        if args.command == "convert":
            y = astype(x, resolve_dtype(args.to, "convert"), overflow=args.overflow, **kw)
        with _client(args) as client:
            t0 = time.perf_counter()
            if args.command == "convert":
                writes = store_array(y, args.output)
                what = f"{y.dtype}"
            else:
                qp = calibrate(x, args.qtype, symmetric=not args.asymmetric, axis=args.axis,
                               group_size=args.group_size, observer=args.observer, **_observer_kw(args))
                t = quantize(x, qparams=qp, **kw)
                writes = save_quantized(t, args.output)
                what = f"{args.qtype} ({qp.scales.size} scale{'s' if qp.scales.size > 1 else ''})"
            _run(client, writes, not args.no_progress)
            dt = time.perf_counter() - t0
    except (ValueError, TypeError, OSError) as e:
        print(f"python3 -m mxp.dask: {e}", file=sys.stderr)
        return 1
    print(f"{args.input} ({x.dtype}, shape {x.shape}, {_gb(x.nbytes)}, {x.npartitions} chunks) -> "
          f"{args.output} ({what}) in {dt:.2f} s: {x.nbytes / dt / 1e6:.1f} MB/s read")
    return 0


def _observer_kw(args):
    if args.observer == "percentile":
        return dict(percentile=args.percentile, bins=args.bins)
    if args.observer in ("mse", "kl"):
        return dict(bins=args.bins)
    if args.observer == "moving_average":
        return dict(momentum=args.momentum)
    return {}


if __name__ == "__main__":
    sys.exit(main())
