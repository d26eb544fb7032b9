#!/bin/sh
# `pip install --no-build-isolation .` from the source tree into a fresh
# virtual environment (Debian's NumPy through --system-site-packages), then
# the installed package imports and works from another folder.
# usage: pip_install.sh SOURCE_DIR PYTHON
set -eu
src=$1 py=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-build-isolation "$src" > "$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; exit 1; }
cd "$tmp"
"$tmp/venv/bin/python" -c '
import numpy as np, mxp
assert mxp.__file__.startswith("'"$tmp"'/venv"), mxp.__file__
a = np.arange(6, dtype=np.float32).reshape(2, 3).astype(mxp.bfloat16)
print(mxp.__version__, (a @ a.T).tolist())
' | tee "$tmp/out"
grep -q '\[\[5.0, 14.0\], \[14.0, 50.0\]\]' "$tmp/out"
