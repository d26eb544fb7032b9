#!/bin/sh
# The package installed as users install it, then used from another folder.
#   pip_install.sh SOURCE_DIR PYTHON debian
#     `pip install --no-build-isolation --no-deps .` into a fresh virtual
#     environment that sees Debian's NumPy 1.24 (--system-site-packages).
#   pip_install.sh SOURCE_DIR PYTHON isolated
#     `pip install .` with build isolation (setuptools, NumPy 2 and CMake
#     from PyPI) into a fresh virtual environment; then `pip wheel .`, and
#     the wheel installed into a second fresh environment with NumPy alone;
#     `python -m mxp` runs the tour there.
set -eu
src=$1 py=$2 mode=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # check VENV: imports the installed package and computes with it
  (cd "$tmp" && "$1/bin/python" -c '
import sys, numpy as np, mxp
assert mxp.__file__.startswith(sys.prefix), (mxp.__file__, sys.prefix)
a = np.arange(6, dtype=np.float32).reshape(2, 3).astype(mxp.bfloat16)
b = np.array([1.5], mxp.bfloat16) * 0.5
print(np.__version__, mxp.__version__, (a @ a.T).tolist(), b, b.dtype)
from mxp.models import minilm  # the subpackage is installed too
assert "w8a8" in minilm.PRECISIONS
') | tee "$tmp/out"
  grep -q '\[\[5.0, 14.0\], \[14.0, 50.0\]\] \[0.75\]' "$tmp/out"
}

quiet() { "$@" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }; }

case "$mode" in
debian)
  "$py" -m venv --system-site-packages "$tmp/venv"
  quiet "$tmp/venv/bin/pip" install --no-build-isolation --no-deps "$src"
  check "$tmp/venv"
  grep -q '^1\.' "$tmp/out"
  ;;
isolated)
  "$py" -m venv "$tmp/venv"
  quiet "$tmp/venv/bin/pip" install "$src"
  check "$tmp/venv"
  grep -q '^2\.' "$tmp/out"
  grep -q 'bfloat16$' "$tmp/out" # NEP 50: bfloat16 * 0.5 stays bfloat16
  quiet "$tmp/venv/bin/pip" wheel --no-deps -w "$tmp/wheels" "$src"
  "$py" -m venv "$tmp/venv2"
  quiet "$tmp/venv2/bin/pip" install "$tmp/wheels"/mxp-*.whl
  "$tmp/venv2/bin/pip" list 2>/dev/null | awk 'NR > 2 {print $1}' | sort | tr '\n' ' ' > "$tmp/pkgs"
  grep -qx 'mxp numpy pip setuptools *' "$tmp/pkgs" || grep -qx 'mxp numpy pip *' "$tmp/pkgs" ||
    { echo "the wheel brought more than NumPy: $(cat "$tmp/pkgs")"; exit 1; }
  check "$tmp/venv2"
  (cd "$tmp" && "$tmp/venv2/bin/python" -m mxp) > "$tmp/tour" 2>&1 || { cat "$tmp/tour"; exit 1; }
  test -s "$tmp/tour"
  ;;
*) echo "pip_install.sh: mode debian or isolated" >&2; exit 2 ;;
esac
