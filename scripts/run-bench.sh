#!/usr/bin/env bash
# Runs every benchmark program of a build tree; results also land in <build>/bench-results/*.json.
set -euo pipefail
build="${1:-build/release}"
out="$build/bench-results"
mkdir -p "$out"
for exe in "$build"/bench/bench_*; do
  [ -x "$exe" ] || continue
  name="$(basename "$exe")"
  echo "== $name"
  "$exe" --benchmark_out="$out/$name.json" --benchmark_out_format=json "${@:2}"
done
