#!/usr/bin/python3
"""Benchmark of the simulator itself: wall seconds per simulated step and simulated activities per
wall second, for one workload on a growing number of simulated GPUs (every GPU runs the same
single-GPU step), side by side in one run.

Usage: sim-bench.py [--asteria PATH] [--units 1,4,16,64] [--out DIR] [-- extra asteria sim options]
Default workload: OLMo-2-7B-like with SOAP, data-free, on gh200-alps nodes (4 GPUs per node).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asteria", default="build/release/apps/asteria/asteria")
    parser.add_argument("--units", default="1,4,16,64")
    parser.add_argument("--out", default=None, help="keep each run's summary.json here")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("extra", nargs="*", help="more `asteria sim` options (after --)")
    args = parser.parse_args()
    if not os.access(args.asteria, os.X_OK):
        print(f"error: {args.asteria}: not an executable (build the asteria target first)", file=sys.stderr)
        return 2
    base = ["sim", "--hw", "gh200-alps", "--model", "olmo2-7b", "--optimizer", "soap", "--placement", "tiered",
            "--staleness", "1", "--numerics", "shapes", "--steps", str(args.steps), "--no-progress"]
    out_root = args.out or tempfile.mkdtemp(prefix="sim-bench-")
    rows = []
    for units in [int(u) for u in args.units.split(",")]:
        out_dir = os.path.join(out_root, f"units{units}")
        command = [args.asteria] + base + ["--units", str(units), "--out", out_dir] + args.extra
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            print(f"error: {' '.join(command)} exited with {result.returncode}:\n{result.stderr}", file=sys.stderr)
            return 1
        with open(os.path.join(out_dir, "summary.json"), encoding="utf-8") as f:
            s = json.load(f)
        if not s["fits"]:
            print(f"error: the workload does not fit: {s.get('fit_message', '')}", file=sys.stderr)
            return 1
        steps = s["steps"] + s["warmup_steps"]
        rows.append((units, steps, s["wall_seconds"], s["wall_seconds"] / steps, s["activities"],
                     s["activities"] / s["wall_seconds"], s["p50_step_s"]))
    print("| GPUs | simulated steps | wall s | wall s per step | activities | activities per wall s | "
          "simulated p50 step s | wall per step / 1-GPU wall per step |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for units, steps, wall, per_step, activities, rate, p50 in rows:
        print(f"| {units} | {steps} | {wall:.2f} | {per_step:.4f} | {activities} | {rate:.0f} | {p50:.3f} | "
              f"{per_step / rows[0][3]:.2f} |")
    print(f"(runs kept under {out_root})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
