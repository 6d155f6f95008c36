#!/usr/bin/env bash
# Prepares the GPU check for a machine with an NVIDIA GPU that has the CUDA runtime and
# libraries (libcudart, cuBLAS, cuSOLVER of the toolkit this tree was built with) but none of
# Asteria's other dependencies and no network: builds the check's programs, and packs them with
# the shared libraries they need that such a machine lacks (OpenBLAS, LAPACK, yaml-cpp, Google
# Benchmark...; not glibc, libstdc++ or CUDA's) into one archive, device-bundle.tar.xz.
# Then, on that machine, in a copy of this tree holding the archive: scripts/device-check.sh OUT.
#   scripts/device-bundle.sh [BUILD_DIR] [ARCHIVE]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
archive="${2:-device-bundle.tar.xz}"
programs=(tests/test_ops tests/test_cuda tests/test_platform bench/bench_cuda_ops apps/asteria/asteria)

cmake --build "$build" -j "$(nproc)" --target test_ops test_cuda test_platform bench_cuda_ops asteria
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/device-bundle/bin" "$stage/device-bundle/lib"
for p in "${programs[@]}"; do
  cp "$build/$p" "$stage/device-bundle/bin/"
  strip --strip-unneeded "$stage/device-bundle/bin/$(basename "$p")"
done
# Libraries resolved on this machine, less what every such machine has.
skip='^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux.*|libcuda|libcudart|libcublas|libcublasLt|libcusolver|libcusparse|libnvJitLink|libnccl)\.so'
for p in "${programs[@]}"; do ldd "$build/$p"; done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    if [[ "$name" =~ $skip ]]; then continue; fi
    cp -L "$path" "$stage/device-bundle/lib/$name"
  done
# A stand-in for NCCL, used there only when the machine has none: `asteria` links NCCL for
# data-parallel GPU ranks, which the check does not run; one rank never calls it. Every call
# fails with a message saying so.
mkdir -p "$stage/device-bundle/nccl-stand-in"
cat >"$stage/nccl_stand_in.c" <<'C'
static const char message[] = "NCCL is not installed on this machine (the device bundle's stand-in answered)";
const char* ncclGetErrorString(int result) { (void)result; return message; }
const char* ncclGetLastError(void* comm) { (void)comm; return message; }
int ncclGetVersion(int* version) { if (version) *version = 0; return 2; }
#define FAIL(name) int name() { return 2; }
FAIL(ncclAllGather) FAIL(ncclAllReduce) FAIL(ncclBroadcast) FAIL(ncclCommAbort) FAIL(ncclCommCount)
FAIL(ncclCommDestroy) FAIL(ncclCommGetAsyncError) FAIL(ncclCommInitRank) FAIL(ncclCommSplit)
FAIL(ncclCommUserRank) FAIL(ncclGetUniqueId) FAIL(ncclReduceScatter) FAIL(ncclGroupStart) FAIL(ncclGroupEnd)
C
cc -shared -fPIC -O1 -Wl,-soname,libnccl.so.2 -o "$stage/device-bundle/nccl-stand-in/libnccl.so.2" "$stage/nccl_stand_in.c"
# What the bundle was built from, for the record.
{
  echo "built $(date -u +%Y-%m-%dT%H:%MZ) from $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (modified)')"
  echo "host: $(uname -srm); $(ldd --version | head -1)"
  nvcc --version 2>/dev/null | tail -1 || true
} >"$stage/device-bundle/BUILD.txt"
tar -C "$stage" -cJf "$archive" device-bundle
echo "wrote $archive ($(du -h "$archive" | cut -f1)): $(ls "$stage/device-bundle/bin" | tr '\n' ' ')"
