#!/bin/sh
# Runs the first ```python block of README.md exactly as shown, against the
# fresh build, and checks what its comments promise.
# usage: readme_python.sh SOURCE_DIR PYTHON PYTHONPATH
set -eu
src=$1 py=$2 path=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '/^```python$/ {on=1; next} /^```$/ && on {exit} on {print}' "$src/README.md" > "$tmp/first.py"
test -s "$tmp/first.py"
PYTHONPATH="$path" "$py" "$tmp/first.py" | tee "$tmp/out"
grep -q '^bfloat16 (256, 256)$' "$tmp/out"
grep -q '^float32$' "$tmp/out"
grep -q '^448.0$' "$tmp/out"
grep -q '^410.0$' "$tmp/out"
