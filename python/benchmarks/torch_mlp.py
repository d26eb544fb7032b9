"""The peer of `mxp train`'s float32 epoch: the same MLP (64-256-256-10,
relu), data (data/digits, pixels / 16, the same 1438 training images by
count), batch (64, reshuffled every epoch), loss (softmax cross-entropy,
mean over the batch) and optimizer (SGD, lr 0.05, momentum 0.9) in
PyTorch, one thread.  An epoch is timed as mxp times its own: forward,
loss, backward and update over every batch (data already in memory).

Prints one JSON object: {"torch": version, "threads": 1, "epochs": N,
"epoch_seconds": the median, "epoch_time": [...], "test_accuracy": ...};
{"torch": null} when torch (or NumPy) is not importable.  goals.py runs it
with the interpreter it runs on (/usr/bin/python3: Debian's torch 1.13).

  python3 torch_mlp.py [--epochs N] [--data DIR]
"""
import argparse
import json
import os
import statistics
import sys
import time


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "data", "digits"))
    a = ap.parse_args(argv)
    try:
        import numpy as np
        import torch
    except ImportError:
        print(json.dumps({"torch": None}))
        return 0
    torch.set_num_threads(1)
    torch.manual_seed(1)
    x = np.load(os.path.join(a.data, "digits_x.npy")).astype(np.float32) / 16.0
    y = np.load(os.path.join(a.data, "digits_y.npy")).astype(np.int64)
    order = np.random.default_rng(1).permutation(len(x))
    n_test = int(round(0.2 * len(x)))  # mxp train's split: 1438 train, 359 test
    train, test = order[n_test:], order[:n_test]
    xt, yt = torch.from_numpy(x[train]), torch.from_numpy(y[train])
    xv, yv = torch.from_numpy(x[test]), torch.from_numpy(y[test])
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                              torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    times = []
    for _ in range(a.epochs):
        perm = torch.randperm(len(xt))
        t0 = time.perf_counter()
        for off in range(0, len(xt), 64):
            idx = perm[off:off + 64]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
        times.append(time.perf_counter() - t0)
    with torch.no_grad():
        acc = float((net(xv).argmax(1) == yv).float().mean())
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "epochs": a.epochs,
                      "train_images": len(xt), "epoch_seconds": statistics.median(times), "epoch_time": times,
                      "test_accuracy": acc}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
