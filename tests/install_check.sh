#!/bin/sh
# An installed mxp used as the README's "Installing" section says: the
# build is installed into a temporary prefix, then, in an environment that
# holds only the README's `export` lines (env -i), the README's first C
# program is built with pkg-config and run, the README's CMakeLists.txt
# builds it with find_package(mxp) + mxp::mxp, the mxp command runs from
# PATH, and the Python package (when it was installed) imports.
# usage: install_check.sh SOURCE_DIR BUILD_DIR        install BUILD_DIR (cmake --install)
#        install_check.sh SOURCE_DIR --prefix DIR     check DIR, filled by make install
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$2" = --prefix ]; then
    prefix=$(cd "$3" && pwd)
else
    prefix=$tmp/prefix
    cmake --install "$2" --prefix "$prefix" >/dev/null
fi

# From the README: the first ```c block, the first ```cmake block, and the
# export lines of the block that installs into $PREFIX.
block() { awk -v open="$1" '$0 == open {on=1; next} /^```$/ && on {exit} on {print}' "$src/README.md"; }
block '```c' > "$tmp/first.c"
mkdir "$tmp/consumer"
cp "$tmp/first.c" "$tmp/consumer/"
block '```cmake' > "$tmp/consumer/CMakeLists.txt"
awk '/^```sh$/ {on=1; n=0; next} /^```$/ {on=0; if (found) exit; next}
     on && /^make install PREFIX=\$PREFIX$/ {found=1}
     on && /^export / {keep[n++]=$0}
     END {for (i = 0; i < n; i++) print keep[i]}' "$src/README.md" > "$tmp/env.sh"
grep -q '^export PKG_CONFIG_PATH=' "$tmp/env.sh" || { echo "README: no export lines for another prefix" >&2; exit 1; }
grep -q 'find_package(mxp' "$tmp/consumer/CMakeLists.txt" || { echo "README: no CMake example" >&2; exit 1; }

cat > "$tmp/run.sh" <<'EOF'
set -eu
PREFIX=$1 tmp=$2
. "$tmp/env.sh"
cd "$tmp"
cc -std=c11 first.c $(pkg-config --cflags --libs mxp) -o first
./first | grep -q '0x3f80'
echo "pkg-config: ok"
cmake -S consumer -B consumer/build >/dev/null
cmake --build consumer/build >/dev/null
consumer/build/first | grep -q '0x3f80'
echo "find_package(mxp) + mxp::mxp: ok"
test -f "$PREFIX/share/mxp/mxp.supp"
echo "valgrind suppressions: ok"
mxp --version
if ls -d "$PREFIX"/lib/python3*/dist-packages/mxp >/dev/null 2>&1; then
    /usr/bin/python3 -c 'import mxp, sys; assert mxp.__file__.startswith(sys.argv[1]), mxp.__file__' "$PREFIX"
    echo "import mxp: ok"
fi
EOF
env -i HOME="$tmp" PATH=/usr/bin:/bin sh "$tmp/run.sh" "$prefix" "$tmp"
