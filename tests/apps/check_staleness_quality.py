#!/usr/bin/python3
"""experiments/convergence/staleness_quality.py on the toy model: every configuration of a small
grid runs once per seed, the table's mean and 95% interval of the final validation loss, and of its
differences to AdamW's and to S = 0's on the same seed, are the runs' own (worked here from their summary.json), a second call runs nothing new, and --no-run
rebuilds the same table.

Usage: check_staleness_quality.py ASTERIA_BINARY WORK_DIR
"""
import csv
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "experiments", "convergence", "staleness_quality.py")


def main():
    binary, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    command = [sys.executable, SCRIPT, "--asteria", binary, "--out", work, "--model", "tiny", "--steps", "4",
               "--eval-every", "2", "--eval-sequences", "2", "--seeds", "1,2,3", "--staleness", "0,1",
               "--frequencies", "2", "--optimizers", "soap", "--jobs", "2"]
    first = subprocess.run(command, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    runs = sorted(d for d in os.listdir(work) if "-seed" in d)
    # adamw, soap S = 0 and 1, soap S = 1 opportunistic: 4 configurations x 3 seeds.
    assert len(runs) == 12, runs
    assert not any(os.path.exists(os.path.join(work, d, "checkpoint")) for d in runs), "final weights kept"
    rows = {r["config"]: r for r in csv.DictReader(open(os.path.join(work, "table.csv")))}
    assert set(rows) == {"adamw", "soap_f2_S0", "soap_f2_S1", "soap_f2_S1_opportunistic"}, sorted(rows)
    finals = [json.load(open(os.path.join(work, f"soap_f2_S1-seed{s}", "summary.json")))["final_validation_loss"]
              for s in (1, 2, 3)]
    mean = statistics.fmean(finals)
    half = 4.303 * statistics.stdev(finals) / math.sqrt(3)  # Student t, 2 degrees of freedom
    row = rows["soap_f2_S1"]
    assert abs(float(row["final_loss"]) - mean) < 1e-12, (row["final_loss"], mean)
    assert abs(float(row["final_loss_ci95"]) - half) < 1e-12, (row["final_loss_ci95"], half)
    assert row["seeds"] == "3" and row["publish"] == "deterministic"
    adamw = [json.load(open(os.path.join(work, f"adamw-seed{s}", "summary.json")))["final_validation_loss"]
             for s in (1, 2, 3)]
    paired = [a - b for a, b in zip(finals, adamw)]  # the same seed: the same corpus split and batches
    assert abs(float(row["vs_adamw"]) - statistics.fmean(paired)) < 1e-12, (row["vs_adamw"], paired)
    assert abs(float(row["vs_adamw_ci95"]) - 4.303 * statistics.stdev(paired) / math.sqrt(3)) < 1e-12
    synchronous = [json.load(open(os.path.join(work, f"soap_f2_S0-seed{s}", "summary.json")))["final_validation_loss"]
                   for s in (1, 2, 3)]
    staleness_cost = [a - b for a, b in zip(finals, synchronous)]  # S = 1 against S = 0, seed by seed
    assert abs(float(row["vs_s0"]) - statistics.fmean(staleness_cost)) < 1e-12, (row["vs_s0"], staleness_cost)
    assert rows["soap_f2_S0"]["vs_s0"] == "" and rows["adamw"]["vs_s0"] == ""
    assert rows["soap_f2_S1_opportunistic"]["publish"] == "opportunistic"
    table = open(os.path.join(work, "table.csv")).read()
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 0 and "final validation loss" not in again.stderr, again.stderr  # nothing rerun
    rebuilt = subprocess.run(command + ["--no-run"], capture_output=True, text=True)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert open(os.path.join(work, "table.csv")).read() == table, "--no-run built another table"
    for plot in ("staleness_quality.png", "validation_curves.png"):
        assert os.path.getsize(os.path.join(work, "plots", plot)) > 5000, plot
    print("staleness quality: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
