#!/usr/bin/env python3
"""Validates the simulator against real runs on this machine: record -> calibrate -> replay.

1. Profiles this machine as a CPU device (`asteria calibrate --device cpu`): the base profile.
2. Records real `asteria train` runs (--device cpu, --trace) over a grid: models x optimizers x
   staleness x placements (device; host; tiered with a device budget that spills to host and an
   NVMe directory).
   The tiered runs get budgets that spill about half of the state to NVMe.
3. Calibrates the profile from the trace of ONE run (`asteria calibrate --from-trace`).
4. Replays every other run (held out) on the calibrated profile (`asteria replay`) and reports per
   configuration the median and p99 |step time error|, the visible optimizer time error, and the
   geometric mean over configurations, overall and per model.
5. Every configuration is recorded --repeats times (default 3): the errors pool the steps of all
   recordings, and how far recordings 2.. differ from the first, step by step, is the machine's
   run-to-run noise, the floor under any prediction's error, reported beside it.

Usage: validate.py [--asteria PATH] [--work DIR] [--out DIR] [--steps N] [--repeats N] [--quick]
Writes OUT/table.csv, OUT/table.md, OUT/summary.json, OUT/errors.png (matplotlib, if present), the
base and the calibrated profiles and the calibration's report (OUT/calibrate-from-trace.txt).
"""
import argparse
import csv
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd, log):
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n")
        f.flush()
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n  see {log}")


def grid(quick):
    models = ["tiny"] if quick else ["tiny", "gpt-mini"]
    runs = []
    for model in models:
        for optimizer, stalenesses in (("adamw", [0]), ("shampoo", [0, 1, 5]), ("soap", [0, 1, 5])):
            for s in stalenesses:
                for placement in ("device", "host", "tiered"):
                    runs.append({"model": model, "optimizer": optimizer, "staleness": s, "placement": placement})
    return runs


def name_of(r):
    return f"{r['model']}-{r['optimizer']}-S{r['staleness']}-{r['placement']}"


def common_args(r):
    return ["--model", r["model"], "--optimizer", r["optimizer"], "--staleness", str(r["staleness"]),
            "--warmup-steps", "2", "--host-workers", "1", "--blas-threads", "1", "--precondition-frequency", "5",
            "--seed", "1"]


def tiered_budgets(asteria, r, work):
    """Device and host budgets that put about a quarter of the state on the device, a quarter on the
    host and the rest on NVMe, the host also keeping what the refresh snapshots need (read from the
    store's refusal of a probe run with a 1-byte host budget)."""
    probe = os.path.join(work, "probe")
    p = subprocess.run([asteria, "train", *common_args(r), "--steps", "1", "--placement", "tiered",
                        "--device-budget", "1", "--host-budget", "1", "--out", probe, "--overwrite", "--no-progress"],
                       capture_output=True, text=True)
    state = re.search(r"cannot place \d+ blocks \((\d+) B\)", p.stderr)
    shadow = re.search(r"keep (\d+) B of host memory", p.stderr)
    if not state:
        sys.exit(f"cannot size the tiered budgets of {name_of(r)}: {p.stderr.strip()}")
    state, shadow = int(state.group(1)), int(shadow.group(1)) if shadow else 0
    return state // 4, shadow + state // 4


def train_args(r, steps, nvme_dir, budgets):
    a = common_args(r) + ["--steps", str(steps)]
    if r["placement"] == "tiered":
        a += ["--placement", "tiered", "--device-budget", str(budgets[0]), "--host-budget", str(budgets[1]),
              "--nvme-dir", nvme_dir]
    else:
        a += ["--placement", r["placement"]]
    return a


def record_dir(work, r, k):
    """Where recording k (1-based) of configuration r goes."""
    return os.path.join(work, "record", name_of(r), f"rep{k}")


def percentile(values, q):
    """The q-quantile (0..1) by linear interpolation between order statistics."""
    v = sorted(values)
    x = q * (len(v) - 1)
    lo = math.floor(x)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (x - lo)


def contention_evidence(work, runs, repeats):
    """Per recording of a refreshing configuration with work on the host workers: the median
    forward+backward of the steps a refresh overlapped (more than half of its time) over the
    median of those nothing overlapped. About 1: the worker's core does not slow the device's."""
    lines = ["| recording | steps overlapped | steps alone | overlapped / alone (medians) |", "|---|---|---|---|"]
    ratios = []
    for r in runs:
        if r["optimizer"] == "adamw" or r["staleness"] == 0 or r["placement"] == "tiered":
            continue  # at S = 0 the step waits for its refresh: nothing overlaps
        for k in range(1, repeats + 1):
            with open(os.path.join(record_dir(work, r, k), "trace.csv")) as f:
                rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
            spans = [(float(x["start_s"]), float(x["end_s"])) for x in rows if " worker " in x["resource"]]
            over, alone = [], []
            for x in rows:
                if " stream" not in x["resource"] or x["kind"] not in ("forward", "backward"):
                    continue
                a, b = float(x["start_s"]), float(x["end_s"])
                if b - a < 1e-3:
                    continue  # a marker: the model computes in one record
                share = sum(max(0.0, min(b, e) - max(a, s)) for s, e in spans) / (b - a)
                if share > 0.5:
                    over.append(b - a)
                elif share == 0.0:
                    alone.append(b - a)
            if over and alone:
                ratio = statistics.median(over) / statistics.median(alone)
                ratios.append(ratio)
                lines.append(f"| {name_of(r)} #{k} | {len(over)} | {len(alone)} | {ratio:.3f} |")
    if ratios:
        lines += ["", f"Median over {len(ratios)} recordings {statistics.median(ratios):.3f} "
                      f"(min {min(ratios):.3f}, max {max(ratios):.3f})."]
    return lines, ratios


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--asteria", default=os.path.join(ROOT, "build", "release", "apps", "asteria", "asteria"))
    p.add_argument("--work", default=os.path.join(ROOT, "build", "validation"))
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--calibrate-on", default="gpt-mini-soap-S1-tiered",
                   help="the one run whose trace calibrates the profile (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=3,
                   help="recordings of every configuration: the errors pool their steps, and recordings 2.. against "
                        "the first give the run-to-run noise (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="one model (tiny): a smoke test")
    p.add_argument("--reuse-records", action="store_true",
                   help="keep the recorded runs and the base profile of an earlier run in --work: calibrate and "
                        "replay again")
    a = p.parse_args()
    if a.quick and a.calibrate_on.startswith("gpt-mini"):
        a.calibrate_on = a.calibrate_on.replace("gpt-mini", "tiny")
    asteria = a.asteria
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(os.path.join(a.work, "scratch"), exist_ok=True)

    base = os.path.join(a.work, "cpu-device.yaml")
    if not a.reuse_records:
        run([asteria, "calibrate", "--device", "cpu", "--device-threads", "1", "--out", base,
             "--overwrite", "--scratch", os.path.join(a.work, "scratch")], os.path.join(a.work, "calibrate-base.log"))

    runs = grid(a.quick)
    names = [name_of(r) for r in runs]
    if a.calibrate_on not in names:
        sys.exit(f"--calibrate-on {a.calibrate_on}: not a run of the grid ({', '.join(names)})")
    # Every configuration recorded --repeats times, back to back.
    for r in [] if a.reuse_records else runs:
        budgets = tiered_budgets(asteria, r, a.work) if r["placement"] == "tiered" else None
        for k in range(1, a.repeats + 1):
            d = record_dir(a.work, r, k)
            nvme = os.path.join(a.work, "nvme", name_of(r))
            shutil.rmtree(nvme, ignore_errors=True)
            os.makedirs(nvme, exist_ok=True)
            run([asteria, "train", *train_args(r, a.steps, nvme, budgets), "--trace", "--out", d, "--overwrite",
                 "--no-progress"],
                os.path.join(a.work, f"record-{name_of(r)}-{k}.log"))

    calibrated = os.path.join(a.work, "calibrated.yaml")
    calibration_run = next(r for r in runs if name_of(r) == a.calibrate_on)
    run([asteria, "calibrate", "--from-trace", os.path.join(record_dir(a.work, calibration_run, 1), "trace.csv"),
         "--base", base, "--out", calibrated, "--overwrite"], os.path.join(a.work, "calibrate-trace.log"))

    for f in (base, calibrated):
        shutil.copy(f, os.path.join(a.out, os.path.basename(f)))
    with open(os.path.join(a.work, "calibrate-trace.log")) as f, \
            open(os.path.join(a.out, "calibrate-from-trace.txt"), "w") as g:
        g.writelines(f.readlines()[1:])  # the report, without the command line

    rows = []
    for r in runs:
        n = name_of(r)
        errors, recorded, predicted, noise, visible = [], [], [], [], []
        first = None
        for k in range(1, a.repeats + 1):
            d = os.path.join(a.work, "replay", f"{n}-{k}")
            run([asteria, "replay", os.path.join(record_dir(a.work, r, k), "trace.csv"), "--hw", calibrated, "--out", d,
                 "--overwrite", "--no-progress"], os.path.join(a.work, f"replay-{n}-{k}.log"))
            with open(os.path.join(d, "replay.json")) as f:
                visible.append(json.load(f)["visible_optimizer_error_of_step"])
            with open(os.path.join(d, "replay.csv")) as f:
                steps = {int(s["step"]): (float(s["recorded_step_s"]), float(s["predicted_step_s"]))
                         for s in csv.DictReader(f)}
            errors += [abs(p / t - 1.0) for t, p in steps.values()]
            recorded += [t for t, _ in steps.values()]
            predicted += [p for _, p in steps.values()]
            # Run-to-run noise: this recording against the first, step by step, as a prediction is.
            if first is None:
                first = steps
            else:
                common = sorted(set(first) & set(steps))
                noise.append(statistics.median(abs(steps[s][0] / first[s][0] - 1.0) for s in common))
        rows.append({"config": n, "held_out": n != a.calibrate_on, **r, "recordings": a.repeats,
                     "steps": len(errors),
                     "recorded_p50_step_s": statistics.median(recorded),
                     "predicted_p50_step_s": statistics.median(predicted),
                     "median_abs_step_error": statistics.median(errors),
                     "p99_abs_step_error": percentile(errors, 0.99),
                     "run_to_run_median_abs_difference": statistics.median(noise) if noise else float("nan"),
                     "run_to_run_max_abs_difference": max(noise) if noise else float("nan"),
                     "visible_optimizer_error_of_step": statistics.median(visible)})

    held = [x for x in rows if x["held_out"]]

    def geomean(key, among=None):
        values = [max(x[key], 1e-6) for x in (held if among is None else among)]
        return math.exp(sum(math.log(v) for v in values) / len(values))

    def median_of(key, among):
        values = [x[key] for x in among if not math.isnan(x[key])]
        return statistics.median(values) if values else float("nan")

    summary = {
        "machine": os.uname().nodename, "cores": os.cpu_count(), "steps_per_run": a.steps,
        "recordings_per_configuration": a.repeats,
        "calibrated_on": a.calibrate_on + " (recording 1)", "held_out_configurations": len(held),
        "geomean_median_abs_step_error": geomean("median_abs_step_error"),
        "geomean_p99_abs_step_error": geomean("p99_abs_step_error"),
        "median_of_median_abs_step_error": median_of("median_abs_step_error", held),
        "max_median_abs_step_error": max(x["median_abs_step_error"] for x in held),
        "median_p99_abs_step_error": median_of("p99_abs_step_error", held),
        "median_run_to_run_abs_difference": median_of("run_to_run_median_abs_difference", held),
        "geomean_abs_visible_optimizer_error_of_step": geomean("visible_optimizer_error_of_step"),
        "held_out_within_3pct": sum(1 for x in held if x["median_abs_step_error"] <= 0.03),
        "held_out_p99_within_10pct": sum(1 for x in held if x["p99_abs_step_error"] <= 0.10),
        "per_model": {},
    }
    for model in sorted({x["model"] for x in held}):
        mine = [x for x in held if x["model"] == model]
        summary["per_model"][model] = {
            "held_out_configurations": len(mine),
            "geomean_median_abs_step_error": geomean("median_abs_step_error", mine),
            "median_of_median_abs_step_error": median_of("median_abs_step_error", mine),
            "geomean_p99_abs_step_error": geomean("p99_abs_step_error", mine),
            "median_p99_abs_step_error": median_of("p99_abs_step_error", mine),
            "median_run_to_run_abs_difference": median_of("run_to_run_median_abs_difference", mine),
            "held_out_within_3pct": sum(1 for x in mine if x["median_abs_step_error"] <= 0.03),
            "held_out_p99_within_10pct": sum(1 for x in mine if x["p99_abs_step_error"] <= 0.10),
        }
    columns = list(rows[0].keys())
    with open(os.path.join(a.out, "table.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)
    pct = lambda v: "-" if math.isnan(v) else f"{100 * v:.1f}%"
    lines = [f"Every configuration recorded {a.repeats} times; errors pool the steps of all recordings; run-to-run: "
             "median over steps of |recording k / recording 1 - 1|, the median over k (a floor under the error).", "",
             "| config | held out | recorded p50 step | predicted p50 step | median abs err | p99 abs err | "
             "run-to-run (median, max) | visible opt err (of step) |", "|---|---|---|---|---|---|---|---|"]
    for x in rows:
        lines.append(f"| {x['config']} | {'yes' if x['held_out'] else 'calibration run'} | "
                     f"{1e3 * x['recorded_p50_step_s']:.2f} ms | {1e3 * x['predicted_p50_step_s']:.2f} ms | "
                     f"{pct(x['median_abs_step_error'])} | {pct(x['p99_abs_step_error'])} | "
                     f"{pct(x['run_to_run_median_abs_difference'])}, {pct(x['run_to_run_max_abs_difference'])} | "
                     f"{pct(x['visible_optimizer_error_of_step'])} |")
    lines += ["", "| model | held out | median of median abs err | geomean median abs err | within 3% | "
              "median p99 | geomean p99 | p99 within 10% | run-to-run median |", "|---|---|---|---|---|---|---|---|---|"]
    for model, m in [*summary["per_model"].items(), ("all", {**summary, "median_of_median_abs_step_error":
                                                             summary["median_of_median_abs_step_error"]})]:
        lines.append(f"| {model} | {m['held_out_configurations']} | {pct(m['median_of_median_abs_step_error'])} | "
                     f"{pct(m['geomean_median_abs_step_error'])} | {m['held_out_within_3pct']} | "
                     f"{pct(m['median_p99_abs_step_error'])} | {pct(m['geomean_p99_abs_step_error'])} | "
                     f"{m['held_out_p99_within_10pct']} | {pct(m['median_run_to_run_abs_difference'])} |")
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    evidence, ratios = contention_evidence(a.work, runs, a.repeats)
    with open(os.path.join(a.out, "contention.md"), "w") as f:
        f.write("Forward+backward beside a refresh on the other core against alone, per recording.\n\n")
        f.write("\n".join(evidence) + "\n")
    if ratios:
        summary["forward_backward_beside_refresh_over_alone"] = {
            "recordings": len(ratios), "median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(10, 3.2))
        xs = range(len(rows))
        ax.bar([x - 0.2 for x in xs], [100 * r["median_abs_step_error"] for r in rows], 0.4, label="median |error|")
        ax.bar([x + 0.2 for x in xs], [100 * r["p99_abs_step_error"] for r in rows], 0.4, label="p99 |error|")
        ax.axhline(3, color="k", lw=0.8, ls="--")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r["config"] for r in rows], rotation=90, fontsize=6)
        ax.set_ylabel("step time error (%)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "errors.png"), dpi=90)
    except ImportError:
        pass
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
