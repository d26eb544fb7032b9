#!/usr/bin/env python3
"""Trains the small ResNet-style CNN of mxp.models.cnn on scikit-learn's
digits (data/digits/, 8x8 gray images) in float32 with torch, one thread,
fixed seeds, and writes its weights for the accuracy table:

    build/venv-models/bin/python scripts/train-cnn.py [OUT]   (make cnn-weights)

OUT (default data/cnn/cnn-digits.safetensors) holds the torch state_dict's
float32 tensors (conv weights OIHW without bias, batch norm weight, bias,
running_mean, running_var, fc.weight, fc.bias) and in its metadata the
recipe (one key, "recipe", a JSON object); OUT.sha256 its checksum
(sha256sum's format), which the tests check.  The split (1347 training
images, 450 held out) is mxp.models.cnn.split()'s: the training never sees
the held-out images.  Deterministic: the same torch and CPU give the same
bytes (checked: two runs, one sha256).
"""
import hashlib
import json
import os
import sys

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EPOCHS, BATCH, LR, SEED = 40, 64, 3e-3, 0


def _split():
    # The same rule as mxp.models.cnn.split(), repeated so that training needs no mxp extension.
    x = np.load(os.path.join(ROOT, "data", "digits", "digits_x.npy"))
    y = np.load(os.path.join(ROOT, "data", "digits", "digits_y.npy"))
    perm = np.random.default_rng(2026).permutation(len(y))
    test, train = perm[:450], perm[450:]
    f = (x.astype(np.float32) / 16).reshape(-1, 1, 8, 8)
    return f[train], y[train].astype(np.int64), f[test], y[test].astype(np.int64)


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, k=3, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)


class Block(nn.Module):
    """relu(bn(conv(relu(bn(conv(x))))) + shortcut(x)); the shortcut a
    strided 1x1 conv + bn where the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a, self.b = ConvBN(cin, cout, 3, stride), ConvBN(cout, cout)
        self.down = ConvBN(cin, cout, 1, stride) if stride != 1 or cin != cout else None

    def forward(self, x):
        s = x if self.down is None else self.down(x)
        return torch.relu(self.b(torch.relu(self.a(x))) + s)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvBN(1, 16)
        self.block1, self.block2 = Block(16, 16, 1), Block(16, 32, 2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.block2(self.block1(torch.relu(self.stem(x))))
        return self.fc(x.mean(dim=(2, 3)))


def train():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    xtr, ytr, xte, yte = (torch.from_numpy(a) for a in _split())
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=1e-4)
    steps = EPOCHS * ((len(ytr) + BATCH - 1) // BATCH)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, LR, total_steps=steps)
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(EPOCHS):
        model.train()
        for idx in torch.randperm(len(ytr), generator=gen).split(BATCH):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            sched.step()
        model.eval()
        with torch.no_grad():
            correct = int((model(xte).argmax(1) == yte).sum())
        print(f"epoch {epoch + 1:2d}: loss {loss.item():.4f}, held-out {correct}/{len(yte)}")
    return model, correct


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "data", "cnn", "cnn-digits.safetensors")
    from safetensors.torch import save_file
    model, correct = train()
    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items() if "num_batches" not in k}
    meta = {"model": "mxp.models.cnn ResNet-style digits CNN", "split": "numpy default_rng(2026) permutation, "
            "first 450 held out", "epochs": str(EPOCHS), "batch": str(BATCH), "optimizer": f"AdamW lr {LR} "
            "one-cycle, weight decay 1e-4", "seed": str(SEED), "torch": torch.__version__,
            "held_out_correct_torch_fp32": str(correct)}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    # One metadata key, its JSON with sorted keys: safetensors writes several keys in a hash order that
    # changes from run to run, and the checksum must not.
    save_file(tensors, out, metadata={"recipe": json.dumps(meta, sort_keys=True)})
    with open(out, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(out + ".sha256", "w") as f:
        f.write(f"{digest}  {os.path.basename(out)}\n")
    print(f"wrote {out} ({os.path.getsize(out)} bytes), sha256 {digest}")


if __name__ == "__main__":
    main()
