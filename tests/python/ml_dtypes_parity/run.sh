#!/bin/sh
# ml_dtypes' own Python tests of its float types, run against every float
# type mxp has, bfloat16 and the float8/float6/float4 types (the shim mxp_as_ml_dtypes.py
# stands for the module ml_dtypes), in the NumPy 2 environment with the
# ml_dtypes release installed there.  The tests come from that release's
# source archive on PyPI, kept under CACHE.  Passes when every failure is a
# deliberate difference listed in differences.txt, and prints the counts.
# usage: run.sh PYTHON PYTHONPATH CACHE
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=$1 path=$2 cache=$3
version=$("$py" -c 'import ml_dtypes; print(ml_dtypes.__version__)')
src=$cache/ml_dtypes-$version
if [ ! -d "$src/ml_dtypes/tests" ]; then
  mkdir -p "$cache"
  "$py" -m pip download --quiet --no-deps --no-binary ml_dtypes "ml_dtypes==$version" -d "$cache" > "$cache/download.log" 2>&1 ||
    { cat "$cache/download.log"; exit 1; }
  tar xzf "$cache/ml_dtypes-$version.tar.gz" -C "$cache" "ml_dtypes-$version/ml_dtypes/tests"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in custom_float_test.py finfo_test.py multi_thread_utils.py; do
  sed 's/^import ml_dtypes$/import mxp_as_ml_dtypes as ml_dtypes/' "$src/ml_dtypes/tests/$f" > "$tmp/$f"
done
cp "$here/mxp_as_ml_dtypes.py" "$tmp/"
cd "$tmp"
PYTHONPATH="$path:$tmp" "$py" -m pytest -q -p no:cacheprovider -rf custom_float_test.py finfo_test.py \
  > "$tmp/out" 2>&1 || true
tail -1 "$tmp/out"
grep '^FAILED' "$tmp/out" | sed 's/^FAILED //; s/ - .*//; s/_multi_threaded$//' |
  sed -E 's/_(bfloat16|float[0-9]_[a-z0-9]+)$//' | sort -u > "$tmp/failed"
grep -v '^#' "$here/differences.txt" | awk '{print $1}' | sort -u > "$tmp/allowed"
unexpected=$(comm -23 "$tmp/failed" "$tmp/allowed")
if [ -n "$unexpected" ]; then
  echo "ml_dtypes parity: failures that are not deliberate differences:"
  echo "$unexpected"
  grep -A30 -E "^_+ .*($(echo "$unexpected" | sed 's/.*:://' | paste -sd'|'))" "$tmp/out" | head -80
  exit 1
fi
grep -q ' passed' "$tmp/out" || { cat "$tmp/out"; exit 1; }
echo "ml_dtypes $version parity: every failure is a listed deliberate difference ($(wc -l < "$tmp/failed") tests)"
