#!/usr/bin/env bash
# Builds the parser fuzz targets (cmake --preset fuzz: clang, libFuzzer, ASan + UBSan, in
# build/fuzz) and runs each on a scratch copy of its seed corpus tests/fuzz/corpus/<target>/ (the
# committed corpus is never modified). Prints executions, seconds and crashes per target; exits
# non-zero when any target crashed or reported (a crash, leak, timeout, out-of-memory or
# sanitizer report), leaving the input and the log under the scratch directory.
#
# Usage: scripts/fuzz.sh [TARGET...]     (default: every target; names as in tests/fuzz/CMakeLists.txt)
# Environment:
#   FUZZ_RUNS         executions per target (default 1000000)
#   FUZZ_WORK         scratch directory (default build/fuzz/work), emptied per target
#   FUZZ_BUILD_JOBS   parallel compile jobs (default: the number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${FUZZ_RUNS:-1000000}
work=${FUZZ_WORK:-build/fuzz/work}
build_jobs=${FUZZ_BUILD_JOBS:-$(nproc)}

# clang with its libFuzzer runtime: installs nothing, says what is missing.
if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz.sh: clang++ not found; install the Debian package clang (scripts/install-deps.sh does)" >&2
  exit 2
fi
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe_dir/probe.cpp"
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe_dir/probe.cpp" -o "$probe_dir/probe" 2>"$probe_dir/err"; then
  cat "$probe_dir/err" >&2
  echo "fuzz.sh: clang++ cannot link a libFuzzer target; install the Debian package libclang-rt-dev" \
       "(libclang-rt-14-dev for clang 14; scripts/install-deps.sh does)" >&2
  exit 2
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$build_jobs"

manifest=build/fuzz/fuzz_targets.txt  # "<name> <max_len> <binary>" per line
selected=("$@")
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# A smaller quarantine and shorter allocation stacks than ASan's defaults: the YAML parsers
# allocate much, and this keeps a target at about a third of the memory (well under
# -rss_limit_mb) and saves some time.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64:malloc_context_size=10}

failed=0
results=()
while read -r name max_len binary; do
  [ -n "$name" ] || continue
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " == *" $name "* ]]; then continue; fi
  dir=$work/$name
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp tests/fuzz/corpus/"$name"/* "$dir/corpus/"
  echo "fuzz.sh: $name: $runs runs, -max_len=$max_len (log: $dir/log.txt)"
  status=0
  start=$SECONDS
  # -jobs/-workers stay at 1: one process per target.
  "$binary" -runs="$runs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "$dir/corpus" </dev/null >"$dir/log.txt" 2>&1 || status=$?
  seconds=$((SECONDS - start))
  # libFuzzer's last line on success: "Done 1000000 runs in 612 second(s)".
  executions=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1/p' "$dir/log.txt" | tail -n 1)
  crashes=$(find "$dir/artifacts" -type f | wc -l)
  verdict=ok
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ] || [ -z "$executions" ]; then
    verdict="FAILED (exit $status)"
    failed=1
    tail -n 40 "$dir/log.txt" >&2
    find "$dir/artifacts" -type f -printf 'fuzz.sh: %p\n' >&2
  fi
  results+=("$(printf '%-14s %12s %8s %8s  %s' "$name" "${executions:--}" "$seconds" "$crashes" "$verdict")")
done <"$manifest"

if [ ${#results[@]} -eq 0 ]; then
  echo "fuzz.sh: no target named ${selected[*]}; the targets: $(cut -d' ' -f1 "$manifest" | tr '\n' ' ')" >&2
  exit 2
fi
printf '%-14s %12s %8s %8s  %s\n' target executions seconds crashes result
printf '%s\n' "${results[@]}"
exit "$failed"
