#!/usr/bin/env bash
# The GPU kernel check, run on a machine with an NVIDIA GPU from a tree holding the archive
# scripts/device-bundle.sh made (no build, no network; under 5 minutes on one H100):
#   1. the conformance harness (tests/ops) on the CUDA device: every operation and every
#      optimizer's step against the float64 reference;
#   2. the CUDA backend's other tests (tests/cuda);
#   3. the kernel benchmark (bench/cuda_ops.cpp): every rule's bandwidth against the measured
#      device-to-device copy, the products against cuBLAS, each optimizer's step.
# Results go to OUT (default device-check-results): logs, JSON, and summary.md.
#   scripts/device-check.sh [OUT] [ARCHIVE]
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-device-check-results}"
archive="${2:-device-bundle.tar.xz}"
mkdir -p "$out"
work="$(mktemp -d)"
tar -C "$work" -xJf "$archive" || { echo "cannot unpack $archive" >&2; exit 2; }
bundle="$work/device-bundle"
# CUDA's libraries: the toolkit's, or those of the Python wheels that bring them.
cuda_libs="$(dirname "$(find /usr/local/cuda*/ /usr/lib /opt -name 'libcublas.so.*' 2>/dev/null | head -1)" 2>/dev/null)"
export LD_LIBRARY_PATH="$bundle/lib:${cuda_libs:+$cuda_libs:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export OPENBLAS_NUM_THREADS=1

{
  cat "$bundle/BUILD.txt"
  echo "ran $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -srm), $(nproc) cores"
  echo "CUDA libraries from: ${cuda_libs:-/usr/local/cuda/lib64}"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
} >"$out/environment.txt"

status=0
"$bundle/bin/test_ops" --gtest_output="json:$out/test_ops.json" >"$out/test_ops.log" 2>&1 || status=1
"$bundle/bin/test_cuda" >"$out/test_cuda.log" 2>&1 || status=1
timeout 240 "$bundle/bin/bench_cuda_ops" --benchmark_out="$out/bench_cuda_ops.json" --benchmark_out_format=json \
  >"$out/bench_cuda_ops.txt" 2>&1 || status=1

python3 - "$out" <<'PY' || status=1
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
lines = ["# GPU kernel check", "", "```", (out / "environment.txt").read_text().strip(), "```", ""]
t = json.loads((out / "test_ops.json").read_text())
lines.append(f"Conformance (tests/ops): {t['tests']} tests, {t['failures']} failed, {t.get('disabled', 0)} disabled.")
cuda_cases = [c for s in t["testsuites"] for c in s["testsuite"] if c["name"].endswith("/cuda") or "/cuda_" in c["name"]]
ran = [c for c in cuda_cases if c.get("result") == "COMPLETED" and not c.get("skipped")]
failed = [c["name"] for c in cuda_cases if c.get("failures")]
lines += [f"CUDA cases: {len(cuda_cases)}, completed {len(ran)}, failed {len(failed)}", ""]
for c in cuda_cases:
    props = {k: v for k, v in c.items() if k.endswith("relative_deviation")}
    if props: lines.append(f"- {c['name'].split('/')[-1]}: " + ", ".join(f"{k} {v}" for k, v in props.items()))
b = json.loads((out / "bench_cuda_ops.json").read_text())
lines += ["", "| benchmark | time | GB/s | of copy | of cuBLAS |", "| --- | ---: | ---: | ---: | ---: |"]
for r in b["benchmarks"]:
    if r.get("error_occurred"): lines.append(f"| {r['name']} | error: {r.get('error_message')} | | | |"); continue
    t_ms = r["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3}[r["time_unit"]]
    f = lambda k, fmt: (fmt % r[k]) if k in r else ""
    lines.append(f"| {r['name']} {r.get('label', '')} | {t_ms:.3f} ms | {f('GBps', '%.0f')} | {f('fraction_of_copy', '%.2f')} | {f('of_cublas', '%.2f')} |")
(out / "summary.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
exit $status
