#!/usr/bin/env bash
# Installs Asteria's build and test dependencies from Debian packages.
# Idempotent: refreshes the package lists, then installs only what is missing.
set -euo pipefail

packages=(
  build-essential cmake make pkg-config git
  libopenblas-dev liblapacke-dev libglpk-dev
  libboost-program-options-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsimgrid-dev nlohmann-json3-dev libyaml-cpp-dev liburing-dev libjemalloc-dev
  libopenmpi-dev openmpi-bin
  python3 python3-numpy python3-matplotlib python3-yaml
  python3-dev pybind11-dev libdlpack-dev python3-torch python3-setuptools python3-wheel  # the Python binding (apps/python), its tests and pip install
  fio
  slurm-wlm munge  # a single-host Slurm for the study launcher's test (tests/slurm)
  clang libclang-rt-dev  # scripts/fuzz.sh: clang and its libFuzzer runtime
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
