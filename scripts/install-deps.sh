#!/usr/bin/env bash
# Installs the Debian packages mxp's build, tests and benchmarks need, only
# those that are missing.  Idempotent; safe to run before every build.
#   scripts/install-deps.sh            build + test packages
#   scripts/install-deps.sh build      only what `make install` builds with: the
#                                      compiler, make, CMake, pkg-config, and
#                                      Python's headers + NumPy for the Python package
#   scripts/install-deps.sh bench      also the benchmark peers
#   scripts/install-deps.sh fuzz       also clang and libFuzzer (make check-fuzz)
#   scripts/install-deps.sh coverage   also gcovr (make coverage)
set -euo pipefail

build_pkgs=(gcc make cmake pkg-config python3 python3-dev python3-numpy
            libsleef-dev) # vector math (exp, log, tanh, sin, cos, activations); optional to CMake
test_pkgs=(libmpfr-dev libgmp-dev libcmocka-dev python3-pytest python3-setuptools python3-pip python3-venv
           python3-torch # torch: the Python tests' bfloat16/DLPack peer
           python3-dask python3-distributed python3-zarr # mxp.dask and its tests
           python3-matplotlib valgrind) # mxp.plot's figures; the leak checks
case "${1:-}" in
  build) pkgs=("${build_pkgs[@]}") ;;
  "") pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  bench) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}" libopenblas-dev libdnnl-dev) ;;
  fuzz) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}" clang-14 libclang-rt-14-dev) ;;
  coverage) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}" gcovr) ;;
  *) echo "install-deps: unknown set '$1' (build, bench, fuzz or coverage; none: build + test)" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo=sudo; else
    echo "install-deps: not root and no sudo; please install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# A new machine has no package lists yet; refresh them before installing.
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
