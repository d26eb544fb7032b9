#!/bin/sh
# Installs the build into a temporary prefix and builds the README example
# against it twice: with pkg-config and with CMake's find_package(mxp).
# usage: install_check.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
awk '/^```c$/ {on=1; next} /^```$/ && on {exit} on {print}' "$src/README.md" > "$tmp/first.c"
pc="$(find "$tmp/prefix" -name mxp.pc)"
export PKG_CONFIG_PATH="$(dirname "$pc")"
cc -std=c11 "$tmp/first.c" $(pkg-config --cflags --libs mxp) -o "$tmp/first"
LD_LIBRARY_PATH="$(pkg-config --variable=libdir mxp)" "$tmp/first" | grep -q '0x3f80'
echo "pkg-config: ok"
mkdir "$tmp/consumer"
cp "$tmp/first.c" "$tmp/consumer/"
cat > "$tmp/consumer/CMakeLists.txt" <<'CMK'
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(mxp REQUIRED)
add_executable(first first.c)
target_link_libraries(first PRIVATE mxp::mxp)
CMK
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer/build" >/dev/null
"$tmp/consumer/build/first" | grep -q '0x3f80'
echo "find_package(mxp): ok"
test -x "$tmp/prefix/bin/mxp"
test -f "$tmp/prefix/share/mxp/mxp.supp"
"$tmp/prefix/bin/mxp" --version
