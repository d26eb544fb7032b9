#!/bin/sh
# The shared library's ABI as docs/abi.md states it: SONAME libmxp.so.1,
# every exported symbol an mxp_ function of the public headers with the
# version MXP_1.0, nothing else exported, and every function the headers
# declare (MXP_API) exported.
# usage: abi_symbols.sh SOURCE_DIR LIBMXP_SO
set -eu
src=$1 lib=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libmxp.so.1 ] || { echo "SONAME is '$soname', not libmxp.so.1" >&2; fail=1; }

# Defined dynamic symbols: "name@@VERSION" (default version) or "name@VERSION".
readelf --wide --dyn-syms "$lib" | awk '$7 != "UND" && $8 != "" && NR > 3 {print $8}' |
    grep -v '^MXP_1\.0$' | sort -u > "$tmp/exported"
[ -s "$tmp/exported" ] || { echo "no exported symbols found in $lib" >&2; exit 1; }
if grep -v '^mxp_[A-Za-z0-9_]*@@MXP_1\.0$' "$tmp/exported" > "$tmp/bad"; then
    echo "exported without the version MXP_1.0, or not mxp_*:" >&2
    sed 's/^/  /' "$tmp/bad" >&2
    fail=1
fi
sed 's/@.*//' "$tmp/exported" | sort -u > "$tmp/names"

# The functions the public headers declare.
perl -0777 -ne 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g;
    for (split /;/) { print "$1\n" if /\bMXP_API\b.*?\b(mxp_\w+)\s*\(/s }' \
    "$src"/include/mxp.h "$src"/include/mxp/*.h | sort -u > "$tmp/declared"
[ -s "$tmp/declared" ] || { echo "no MXP_API declarations found under $src/include" >&2; exit 1; }
if comm -23 "$tmp/declared" "$tmp/names" | grep . > "$tmp/missing"; then
    echo "declared MXP_API but not exported:" >&2; sed 's/^/  /' "$tmp/missing" >&2; fail=1
fi
if comm -13 "$tmp/declared" "$tmp/names" | grep . > "$tmp/extra"; then
    echo "exported but not declared in include/:" >&2; sed 's/^/  /' "$tmp/extra" >&2; fail=1
fi
[ $fail = 0 ] && echo "abi_symbols: $(wc -l < "$tmp/names") symbols, all mxp_*@@MXP_1.0, SONAME $soname"
exit $fail
