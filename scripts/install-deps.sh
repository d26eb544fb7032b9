#!/usr/bin/env bash
# Installs the Debian packages mxp's build, tests and benchmarks need, only
# those that are missing.  Idempotent; safe to run before every build.
#   scripts/install-deps.sh            build + test packages
#   scripts/install-deps.sh bench      also the benchmark peers
#   scripts/install-deps.sh fuzz       also clang and libFuzzer (make check-fuzz)
#   scripts/install-deps.sh coverage   also gcovr (make coverage)
set -euo pipefail

pkgs=(gcc make cmake pkg-config libmpfr-dev libgmp-dev libcmocka-dev python3 python3-numpy python3-pytest)
if [ "${1:-}" = bench ]; then
  pkgs+=(libopenblas-dev libdnnl-dev python3-torch) # torch: mxp bench quant's peer
fi
if [ "${1:-}" = fuzz ]; then
  pkgs+=(clang-14 libclang-rt-14-dev)
fi
if [ "${1:-}" = coverage ]; then
  pkgs+=(gcovr)
fi

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
