#!/usr/bin/env bash
# The GPU check, run on a machine with an NVIDIA GPU from a tree holding the archive
# scripts/device-bundle.sh made (no build, no network; about 8 minutes on one H100):
#   1. the conformance harness (tests/ops) on the CUDA device: every operation and every
#      optimizer's step against the float64 reference;
#   2. the CUDA backend's other tests (tests/cuda: the model, the inverse root, the step driver
#      with its state in GPU memory) and the device tier in GPU memory (tests/platform);
#   3. the kernel benchmark (bench/cuda_ops.cpp): every rule's bandwidth against the measured
#      device-to-device copy, the products against cuBLAS, each optimizer's step;
#   4. Asteria on the GPU: `asteria train --device cuda` (MODEL, default gpt-25m) with AdamW,
#      Shampoo and SOAP at S = 0 and 5, state on the device and tiered, each with its trace; and
#      the native synchronous Shampoo and SOAP (refreshes on the device by cuSOLVER, S = 0);
#   5. an H100 profile: `calibrate --quick` of this GPU, then its coefficients fitted to one
#      trace (`calibrate --from-trace`), and `replay` of every other trace on it; each run's
#      energy per step from the machine's counters (NVML, RAPL) beside the replay's simulated one.
# Results go to OUT (default device-check-results): logs, JSON, and summary.md.
#   scripts/device-check.sh [OUT] [ARCHIVE]    (MODEL, STEPS, BATCH, DEVICE, FIT in the environment)
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
# NCCL only for data-parallel GPU ranks (not run here): the bundle's stand-in where none is found.
nccl="$( (ldconfig -p 2>/dev/null | grep -o '/[^ ]*libnccl\.so\.2$'; find ${cuda_libs:-} /usr/local/cuda*/ -name 'libnccl.so.2' 2>/dev/null) | head -1)"
[[ -z "$nccl" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$bundle/nccl-stand-in"
export OPENBLAS_NUM_THREADS=1
# The programs were built in another tree: models and profiles are read from this one.
export ASTERIA_SOURCE_DIR="$PWD"
# The training corpus: the Python standard library where the machine has one (train's default),
# else this tree's C++ sources.
corpus=()
compgen -G '/usr/lib/python3.*/os.py' >/dev/null || corpus=(--data "$PWD/core")

{
  cat "$bundle/BUILD.txt"
  echo "ran $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -srm), $(nproc) cores"
  echo "CUDA libraries from: ${cuda_libs:-/usr/local/cuda/lib64}"
  echo "NCCL: ${nccl:-none found, the stand-in of the bundle answers (no data-parallel GPU runs)}"
  echo "corpus: ${corpus[1]:-the Python standard library of this machine}"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
} >"$out/environment.txt"

status=0
"$bundle/bin/test_ops" --gtest_output="json:$out/test_ops.json" >"$out/test_ops.log" 2>&1 || status=1
"$bundle/bin/test_cuda" >"$out/test_cuda.log" 2>&1 || status=1
timeout 60 "$bundle/bin/test_platform" --gtest_filter='RealGpuMemory*:FencedDeviceStream*' \
  >"$out/test_platform_gpu.log" 2>&1 || status=1
timeout 150 "$bundle/bin/bench_cuda_ops" --benchmark_out="$out/bench_cuda_ops.json" --benchmark_out_format=json \
  >"$out/bench_cuda_ops.txt" 2>&1 || status=1

# 4. Asteria on the GPU. Every run records its trace; the first AdamW one calibrates the profile.
model="${MODEL:-gpt-25m}"
device="${DEVICE:-cuda}"  # cpu: the same runs without a GPU (to try the script itself)
steps="${STEPS:-30}"
batch="${BATCH:-16}"
workers=$(( $(nproc) > 2 ? $(nproc) - 2 : 1 ))
asteria="$bundle/bin/asteria"
mkdir -p "$out/train"
for optimizer in adamw shampoo soap; do
  for staleness in 0 5; do
    for placement in device tiered; do
      run="$optimizer-s$staleness-$placement"
      timeout 90 "$asteria" train --device "$device" --model "$model" --optimizer "$optimizer" --staleness "$staleness" \
        --placement "$placement" --steps "$steps" --warmup-steps 3 --batch "$batch" --host-workers "$workers" \
        "${corpus[@]}" --max-corpus-bytes 16MB --eval-every 0 --trace --no-progress --out "$out/train/$run" \
        >"$out/train/$run.log" 2>&1 || { echo "train $run failed" >>"$out/failures.txt"; status=1; }
      rm -rf "$out/train/$run/checkpoint"
    done
  done
done
# The native synchronous optimizer: refreshes on the device stream (cuSOLVER), S = 0.
for optimizer in shampoo soap; do
  run="$optimizer-native-device"
  timeout 90 "$asteria" train --device "$device" --model "$model" --optimizer "$optimizer" --staleness 0 \
    --refresh-on device --placement device --steps "$steps" --warmup-steps 3 --batch "$batch" --host-workers "$workers" \
    "${corpus[@]}" --max-corpus-bytes 16MB --eval-every 0 --trace --no-progress --out "$out/train/$run" \
    >"$out/train/$run.log" 2>&1 || { echo "train $run failed" >>"$out/failures.txt"; status=1; }
  rm -rf "$out/train/$run/checkpoint"
done

# 5. The profile: this GPU measured, its coefficients fitted to one run, the others replayed on it.
timeout 120 "$asteria" calibrate --quick --out "$out/h100-measured.yaml" >"$out/calibrate.log" 2>&1 || status=1
fit="$out/train/${FIT:-adamw-s0-device}/trace.csv"
timeout 60 "$asteria" calibrate --from-trace "$fit" --base "$out/h100-measured.yaml" --out "$out/h100-fitted.yaml" \
  >"$out/calibrate-from-trace.log" 2>&1 || status=1
mkdir -p "$out/replay"
for trace in "$out"/train/*/trace.csv; do
  run="$(basename "$(dirname "$trace")")"
  [[ "$trace" == "$fit" ]] && continue
  timeout 60 "$asteria" replay --trace "$trace" --hw "$out/h100-fitted.yaml" --out "$out/replay/$run" --no-progress \
    >"$out/replay/$run.log" 2>&1 || { echo "replay $run failed" >>"$out/failures.txt"; status=1; }
  rm -f "$out/replay/$run/trace.json"
done

python3 - "$out" "$fit" <<'PY' || status=1
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
lines = ["# GPU check", "", "```", (out / "environment.txt").read_text().strip(), "```", ""]
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
train = sorted((out / "train").glob("*/summary.json"))
if train:
    lines += ["", "## asteria train --device cuda", "",
              "| run | p50 step | p99/p50 | forward+backward | p50 visible optimizer | final loss | platform |",
              "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    p50 = {}
    for f in train:
        s = json.loads(f.read_text())
        run = f.parent.name
        p50[run] = s["p50_step_s"]
        compute = s["compute_s"] / max(s["steps"], 1)
        lines.append(f"| {run} | {s['p50_step_s']*1e3:.1f} ms | {s['p99_over_p50']:.2f} | {compute*1e3:.1f} ms | "
                     f"{s['p50_visible_optimizer_s']*1e3:.1f} ms | {s['final_loss']:.3f} | {s.get('platform', '')} |")
    lines.append("")
    for placement in ("device", "tiered"):
        base = p50.get(f"adamw-s5-{placement}") or p50.get(f"adamw-s0-{placement}")
        for opt in ("shampoo", "soap"):
            r = p50.get(f"{opt}-s5-{placement}")
            if base and r: lines.append(f"- {opt} S=5, {placement}: p50 step {r/base:.3f}x AdamW's (target <= 1.05)")
    spread = {}
    for f in train:
        s = json.loads(f.read_text())
        spread[f.parent.name] = (s["p50_step_s"], s["p99_over_p50"])
    for opt in ("shampoo", "soap"):
        native, ours = spread.get(f"{opt}-native-device"), spread.get(f"{opt}-s5-device")
        if native and ours:
            lines.append(f"- {opt}, native (refreshes on the device, S=0) against Asteria (S=5), state on the device: "
                         f"p50 {native[0]*1e3:.1f} vs {ours[0]*1e3:.1f} ms, p99/p50 {native[1]:.2f} vs {ours[1]:.2f} "
                         "(target for Asteria <= 1.1)")
replays = sorted((out / "replay").glob("*/replay.json"))
if replays:
    lines += ["", f"## Replay on the profile fitted to {pathlib.Path(sys.argv[2]).parent.name}", "",
              "| run | median |step error| | p99 |", "| --- | ---: | ---: |"]
    for f in replays:
        r = json.loads(f.read_text())
        lines.append(f"| {f.parent.name} | {r['median_abs_step_error']*100:.1f}% | {r['p99_abs_step_error']*100:.1f}% |")
# Energy: the GPU's and CPU's own counters over each run's measured steps (NVML, RAPL) beside the
# replay's simulated figure on the fitted profile (whose power section is copied from its base
# profile unless measured: the comparison checks the energy model's busy/idle accounting).
energy_rows = []
for f in train:
    s = json.loads(f.read_text())
    r = out / "replay" / f.parent.name / "summary.json"
    simulated = json.loads(r.read_text()).get("energy_per_step_j") if r.exists() else None
    measured = s.get("measured_energy_per_step_j")
    power = s.get("measured_power_w")
    cell = lambda v, fmt: "" if v is None else fmt % v
    ratio = f"{simulated / measured:.2f}" if measured and simulated else ""
    energy_rows.append(f"| {f.parent.name} | {s.get('energy_counters', '')} | {cell(measured, '%.1f')} | "
                       f"{cell(power, '%.0f')} | {cell(simulated, '%.1f')} | {ratio} |")
if energy_rows:
    lines += ["", "## Energy per step: measured (counters) against simulated (replay on the fitted profile)", "",
              "| run | counters | measured J/step | measured W | simulated J/step | simulated / measured |",
              "| --- | --- | ---: | ---: | ---: | ---: |"] + energy_rows
failures = out / "failures.txt"
if failures.exists(): lines += ["", "Failures: " + ", ".join(failures.read_text().split("\n")).strip(", ")]
(out / "summary.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
exit $status
