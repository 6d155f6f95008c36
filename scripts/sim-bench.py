#!/usr/bin/python3
"""Benchmark of the simulator itself: wall seconds per simulated step and simulated activities per
wall second, for one workload on a growing number of simulated GPUs, side by side in one run.

Usage: sim-bench.py [--asteria PATH] [--units 4,16,64,256,1024] [--full-max-units 64]
                    [--simulated-nodes 1] [--parallelism zero1] [--out DIR] [-- extra asteria sim options]
Default workload: OLMo-2-7B-like with SOAP, data-free, tiered, S = 1, on gh200-alps nodes (4 GPUs
per node), the optimizer state sharded among the data-parallel ranks (--parallelism zero1: with
ddp, 165 GiB a GPU does not fit a node) and each group's collectives run in order
(the simulator's default; --concurrent-collectives overlaps them). Up to --full-max-units GPUs every unit is simulated; above, only the
first --simulated-nodes nodes run and the other units mirror them (representative ranks: exact
when every rank runs the same work, an approximation with sharded state). bench/sim_scale.cpp
runs the same comparison in-process with each shortcut's error against the full run.
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
    parser.add_argument("--units", default="4,16,64,256,1024")
    parser.add_argument("--full-max-units", type=int, default=64,
                        help="above this many GPUs, simulate only --simulated-nodes nodes")
    parser.add_argument("--simulated-nodes", type=int, default=1)
    parser.add_argument("--parallelism", default="zero1", choices=("ddp", "zero1", "zero2", "fsdp"),
                        help="asteria sim --parallelism")
    parser.add_argument("--out", default=None, help="keep each run's summary.json here")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="more `asteria sim` options (after --)")
    args = parser.parse_args()
    if not os.access(args.asteria, os.X_OK):
        print(f"error: {args.asteria}: not an executable (build the asteria target first)", file=sys.stderr)
        return 2
    base = ["sim", "--hw", "gh200-alps", "--model", "olmo2-7b", "--optimizer", "soap", "--placement", "tiered",
            "--staleness", "1", "--parallelism", args.parallelism, "--numerics", "shapes",
            "--steps", str(args.steps), "--no-progress"]
    out_root = args.out or tempfile.mkdtemp(prefix="sim-bench-")
    rows = []
    for units in [int(u) for u in args.units.split(",")]:
        out_dir = os.path.join(out_root, f"units{units}")
        shortcut = [] if units <= args.full_max_units else ["--simulated-nodes", str(args.simulated_nodes)]
        command = [args.asteria] + base + ["--units", str(units), "--out", out_dir] + shortcut + args.extra
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
        # The steady stepping: without the setup (every unit's driver), the first step and the run's end.
        per_step = s.get("wall_seconds_per_step_steady", s["wall_seconds"] / steps)
        rows.append((units, s.get("simulated_units", units), steps, s["wall_seconds"], per_step,
                     s["activities"], s["activities"] / s["wall_seconds"], s["p50_step_s"]))
    print("| GPUs | simulated GPUs | simulated steps | wall s | wall s per step | activities | "
          "activities per wall s | simulated p50 step s | wall ms per step and GPU |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for units, simulated, steps, wall, per_step, activities, rate, p50 in rows:
        print(f"| {units} | {simulated} | {steps} | {wall:.2f} | {per_step:.4f} | {activities} | {rate:.0f} | "
              f"{p50:.3f} | {1e3 * per_step / units:.2f} |")
    print(f"(runs kept under {out_root})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
