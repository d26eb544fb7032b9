#!/bin/sh
# Compiles and runs the first ```c block of README.md exactly as shown.
# usage: readme_example.sh SOURCE_DIR CC LIBMXP_A [EXTRA_CFLAGS]
set -eu
src=$1 cc=$2 lib=$3 extra=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '/^```c$/ {on=1; next} /^```$/ && on {exit} on {print}' "$src/README.md" > "$tmp/first.c"
test -s "$tmp/first.c"
"$cc" -std=c11 -Wall -Wextra -Werror $extra "$tmp/first.c" -I"$src/include" "$lib" -lpthread -lm -o "$tmp/first"
"$tmp/first" | tee "$tmp/out"
grep -q '^1 .*0x3f80 -> 1$' "$tmp/out"
grep -q 'bfloat16 0x0001 ' "$tmp/out"
