#!/bin/sh
# The top-level Makefile's promises, with cmake, ctest, ldconfig, id and the
# deps script replaced by stubs that log their arguments (nothing is built):
#  - make demo / make check print no "Entering directory" lines (the stub
#    cmake --build runs make within make, as CMake's makefiles do);
#  - make install configures its own build directory without the tests,
#    installs only the build packages, and runs ldconfig only as root into
#    /usr or /usr/local.
#  - make check makes the virtual environments (scripts/make-venv.sh) and
#    configures the build for their Pythons;
# usage: makefile_check.sh SOURCE_DIR
set -eu
src=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work/scripts" "$tmp/inner" "$tmp/b"
log=$tmp/log
export LOG="$log" INNER="$tmp/inner" FAKE_UID=1000

stub() { # stub NAME BODY
    printf '#!/bin/sh\necho "%s $*" >> "$LOG"\n%s\n' "$1" "$2" > "$tmp/bin/$1"
    chmod +x "$tmp/bin/$1"
}
stub cmake 'if [ "$1" = --build ]; then make -C "$INNER"; fi'
stub ctest ''
stub ldconfig ''
stub id 'echo "$FAKE_UID"'
printf 'all:\n\t@$(MAKE) -C .. -f inner/Makefile leaf\nleaf:\n\t@echo compiled\n' > "$tmp/inner/Makefile"
printf '#!/bin/sh\necho "install-deps.sh $*" >> "$LOG"\n' > "$tmp/work/scripts/install-deps.sh"
printf '#!/bin/sh\necho "mxp $*" >> "$LOG"\n' > "$tmp/b/mxp"
printf '#!/bin/sh\necho "make-venv.sh $*" >> "$LOG"\n' > "$tmp/work/scripts/make-venv.sh"
chmod +x "$tmp/work/scripts/install-deps.sh" "$tmp/work/scripts/make-venv.sh" "$tmp/b/mxp"
export PATH="$tmp/bin:$PATH"

run() { # run TARGET ARGS...: make's output on stdout, fails if it failed
    (cd "$tmp/work" && make -f "$src/Makefile" BUILD="$tmp/b" JOBS=1 "$@" 2>&1)
}
fail() { echo "makefile_check: $*" >&2; echo "--- log:" >&2; cat "$log" >&2; exit 1; }

for target in demo check; do
    : > "$log"
    out=$(run "$target") || fail "make $target failed: $out"
    echo "$out" | grep -q compiled || fail "make $target: the stub build did not run"
    if echo "$out" | grep -q 'Entering directory'; then fail "make $target is noisy: $out"; fi
    [ $target = check ] || grep -q '^mxp tour' "$log" || fail "make demo did not run mxp tour"
    if [ $target = check ]; then
        grep -qx "make-venv.sh python3 $tmp/b/venv python/requirements/venv.txt" "$log" ||
            fail "make check does not make the NumPy 2 environment"
        grep -q "^cmake -S \. -B $tmp/b .*-DMXP_PYTHON_VENVS=$tmp/b/venv/bin/python;$tmp/b/venv-numpy2.0/bin/python" "$log" ||
            fail "make check does not build for the environments' Pythons"
    fi
done
echo "make demo, make check: quiet"

: > "$log"
run install PREFIX="$tmp/prefix" INSTALL_BUILD="$tmp/bi" > /dev/null || fail "make install failed"
grep -qx 'install-deps.sh build' "$log" || fail "make install does not install only the build packages"
grep -q "^cmake -S \. -B $tmp/bi .*-DMXP_BUILD_TESTS=OFF .*-DCMAKE_INSTALL_PREFIX=$tmp/prefix" "$log" ||
    fail "make install does not configure $tmp/bi without tests for the prefix"
grep -qx "cmake --build $tmp/bi -j 1" "$log" || fail "make install does not build $tmp/bi"
grep -qx "cmake --install $tmp/bi" "$log" || fail "make install does not install $tmp/bi"
if grep -q "$tmp/b " "$log"; then fail "make install touched the test build $tmp/b"; fi
if grep -q '^ldconfig' "$log"; then fail "ldconfig ran for a private prefix"; fi
for uid in 0 1000; do
    : > "$log"
    FAKE_UID=$uid run install PREFIX=/usr/local/ INSTALL_BUILD="$tmp/bi" > /dev/null || fail "make install failed"
    if [ $uid = 0 ]; then
        grep -q '^ldconfig' "$log" || fail "ldconfig did not run as root into /usr/local"
    elif grep -q '^ldconfig' "$log"; then
        fail "ldconfig ran as a user"
    fi
done
echo "make install: library build only, ldconfig as root into /usr/local"
