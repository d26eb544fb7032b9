#!/usr/bin/env python3
"""Writes scikit-learn's "digits" data set as two .npy files for `mxp train`.

    /usr/bin/python3 scripts/export-digits.py [OUTDIR]     (default: data/digits)

digits_x.npy  uint8 (1797, 64): 8x8 images, gray levels 0..16, row by row
digits_y.npy  uint8 (1797,):    the digit 0..9

The data is the test part of the UCI "Optical Recognition of Handwritten
Digits" set (Alpaydin and Kaynak, 1998; CC BY 4.0) as scikit-learn ships it
(Debian: apt-get install python3-sklearn).  The repository carries the
output of this script (data/digits/, ~117 KB), so building and testing need
no scikit-learn; run it only to check or recreate those files.
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "data", "digits")
    os.makedirs(out, exist_ok=True)
    d = load_digits()
    x = d.data.astype(np.uint8)
    y = d.target.astype(np.uint8)
    assert x.shape == (1797, 64) and y.shape == (1797,)
    assert np.array_equal(x, d.data) and x.max() == 16 and y.max() == 9
    np.save(os.path.join(out, "digits_x.npy"), x)
    np.save(os.path.join(out, "digits_y.npy"), y)
    print("wrote %s/digits_x.npy %s and digits_y.npy %s" % (out, x.shape, y.shape))


if __name__ == "__main__":
    main()
