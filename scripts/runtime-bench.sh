#!/usr/bin/env bash
# The runtime benchmark: `asteria synth --compare` (AdamW; Shampoo and SOAP with synchronous,
# S = 1 and S = 5 refreshes) on the real backend with modelled device time, with refresh numerics
# (the device's numerics skipped after the warm-up: the CPU stays free for the refresh workers)
# and with values (every number computed, the device's numerics on this machine's cores too).
# Results under <out>/<numerics>/.
#   scripts/runtime-bench.sh [build-dir] [out-dir] [extra synth options...]
set -euo pipefail
build="${1:-build/release}"
out="${2:-$build/runtime-bench}"
asteria="$build/apps/asteria/asteria"
[ -x "$asteria" ] || { echo "no $asteria: build the asteria target first" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1
for numerics in refresh values; do
  echo "== synth --compare --numerics $numerics"
  "$asteria" synth --compare --time modelled --numerics "$numerics" --out "$out/$numerics" --overwrite "${@:3}"
done
