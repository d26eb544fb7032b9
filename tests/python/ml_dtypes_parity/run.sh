#!/bin/sh
# ml_dtypes' own Python tests of its float and integer types
# (custom_float_test.py, finfo_test.py, intn_test.py, iinfo_test.py), run
# against every type mxp shares with it: bfloat16, the float8/float6/float4
# types, int1/2/4 and uint1/2/4 (the shim mxp_as_ml_dtypes.py stands for the
# module ml_dtypes), in the NumPy 2 environment with the ml_dtypes release
# installed there.  Not run: custom_complex_test.py (complex32/bcomplex32,
# which mxp lacks) and metadata_test.py (the package's own metadata).  The
# tests come from that release's source archive on PyPI, kept under CACHE.
# Passes when every failure is a deliberate difference listed in
# differences.txt and every listed test still fails, and prints the counts.
# usage: run.sh PYTHON PYTHONPATH CACHE
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=$1 path=$2 cache=$3
version=$("$py" -c 'import ml_dtypes; print(ml_dtypes.__version__)')
src=$cache/ml_dtypes-$version
if [ ! -d "$src/ml_dtypes/tests" ]; then
  mkdir -p "$cache"
  "$py" -m pip download --quiet --no-deps --no-binary ml_dtypes "ml_dtypes==$version" -d "$cache" \
    > "$cache/download.log" 2>&1 ||
    { cat "$cache/download.log"; exit 1; }
  tar xzf "$cache/ml_dtypes-$version.tar.gz" -C "$cache" "ml_dtypes-$version/ml_dtypes/tests"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tests="custom_float_test.py finfo_test.py intn_test.py iinfo_test.py"
for f in $tests multi_thread_utils.py; do
  sed 's/^import ml_dtypes$/import mxp_as_ml_dtypes as ml_dtypes/' "$src/ml_dtypes/tests/$f" > "$tmp/$f"
done
cp "$here/mxp_as_ml_dtypes.py" "$tmp/"
cd "$tmp"
PYTHONPATH="$path:$tmp" "$py" -m pytest -q -p no:cacheprovider -rf $tests \
  > "$tmp/out" 2>&1 || true
tail -1 "$tmp/out"
# failed tests and failed subtests (SUBFAILED[float16] file::class::test),
# named without their parameters: the dtype suffix of named cases
# (testRepr_bfloat16), intn_test.py's product index (testCanCast42)
grep -E '^(SUB)?FAILED' "$tmp/out" | sed -E 's/^SUBFAILED\[[^]]*\] //; s/^FAILED //; s/ - .*//; s/_multi_threaded$//' |
  sed -E 's/_(bfloat16|float[0-9]_[a-z0-9]+|u?int[124])$//; /^intn_test\.py::/ s/[0-9]+$//' | sort -u > "$tmp/failed"
grep -v -e '^#' -e '^[[:space:]]' -e '^$' "$here/differences.txt" | awk '{print $1}' | sort -u > "$tmp/allowed"
unexpected=$(comm -23 "$tmp/failed" "$tmp/allowed")
if [ -n "$unexpected" ]; then
  echo "ml_dtypes parity: failures that are not deliberate differences:"
  echo "$unexpected"
  grep -A30 -E "^_+ .*($(echo "$unexpected" | sed 's/.*:://' | paste -sd'|'))" "$tmp/out" | head -80
  exit 1
fi
stale=$(comm -13 "$tmp/failed" "$tmp/allowed")
if [ -n "$stale" ]; then
  echo "ml_dtypes parity: differences.txt lists tests that now pass (remove them):"
  echo "$stale"
  exit 1
fi
grep -q ' passed' "$tmp/out" || { cat "$tmp/out"; exit 1; }
echo "ml_dtypes $version parity: every failure is listed in differences.txt" \
  "($(grep -cE '^(SUB)?FAILED' "$tmp/out") failed cases of $(wc -l < "$tmp/failed") listed tests)"
