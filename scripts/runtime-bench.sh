#!/usr/bin/env bash
# The runtime benchmark: `asteria synth --compare` (AdamW; Shampoo and SOAP with synchronous,
# S = 1 and S = 5 refreshes) in both numerics modes, results under <out>/<mode>/.
#   scripts/runtime-bench.sh [build-dir] [out-dir] [extra synth options...]
set -euo pipefail
build="${1:-build/release}"
out="${2:-$build/runtime-bench}"
asteria="$build/apps/asteria/asteria"
[ -x "$asteria" ] || { echo "no $asteria: build the asteria target first" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1
for mode in emulated full; do
  echo "== synth --compare --mode $mode"
  "$asteria" synth --compare --mode "$mode" --out "$out/$mode" "${@:3}"
done
