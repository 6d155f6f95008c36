#!/usr/bin/env python3
"""`mpirun -np 2 asteria study` against `asteria study --jobs 1`: the ranks run disjoint points
and rank 0 writes the same table.csv and table.md, byte for byte; --resume runs only what is
missing; a results directory that rank 0 cannot prepare stops every rank (none waits forever);
runs that fail on either rank are failed rows of rank 0's table and a non-zero exit.

Usage: check_mpi_study.py ASTERIA MPIRUN WORKDIR
"""
import os
import shutil
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
STUDY = """name: mpi-check
description: three quick runs of the toy model
defaults:
  steps: 4
  warmup_steps: 1
  precondition_frequency: 2
  max_precond_dim: 64
  numerics: shapes
grid:
  - hw: [gb10]
    model: [tiny]
    optimizer: [soap]
    placement: [device]
    staleness: [0, 1, 2]
"""


def run(command, expect_ok=True, timeout=300):
    result = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=timeout)
    if expect_ok and result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    asteria, mpirun, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    study = os.path.join(work, "study.yaml")
    with open(study, "w") as f:
        f.write(STUDY)
    mpi = [mpirun, "--oversubscribe", "--allow-run-as-root", "-np", "2", asteria, "study", study, "--no-plots"]

    one = os.path.join(work, "one")
    run([asteria, "study", study, "--no-plots", "--jobs", "1", "--out", one])
    two = os.path.join(work, "two")
    result = run(mpi + ["--jobs", "1", "--out", two])
    for name in ("table.csv", "table.md"):
        if read(os.path.join(one, name)) != read(os.path.join(two, name)):
            sys.exit(f"FAIL: {name} differs between --jobs 1 and mpirun -np 2")
    # Disjoint points: rank 0 ran points 0 and 2, rank 1 point 1.
    for rank, points in ((0, 2), (1, 1)):
        if result.stderr.count(f"rank {rank} [") != points:
            sys.exit(f"FAIL: rank {rank} should have run {points} points:\n{result.stderr}")
    print("ok: mpirun -np 2 writes the table --jobs 1 writes, the ranks' points disjoint")

    # Interrupted (a run without its summary): --resume runs that point alone, on its rank.
    os.remove(os.path.join(two, "runs", "gb10_tiny_soap_device_s1", "summary.json"))
    resumed = run(mpi + ["--jobs", "1", "--out", two, "--resume"])
    if read(os.path.join(one, "table.csv")) != read(os.path.join(two, "table.csv")) or \
            resumed.stderr.count("kept from the earlier run") != 2 or resumed.stderr.count("rank 1 [1/1]") != 1:
        sys.exit(f"FAIL: --resume under mpirun should rerun only the missing point:\n{resumed.stderr}")
    print("ok: mpirun --resume runs only the missing point and writes the same table")

    # An earlier study's results, no --overwrite: every rank stops, none hangs.
    again = run(mpi + ["--out", two], expect_ok=False, timeout=120)
    if again.returncode == 0 or "--overwrite" not in again.stderr:
        sys.exit(f"FAIL: a used results directory was not refused on every rank:\n{again.stderr}")
    print("ok: a results directory rank 0 refuses stops every rank")

    # Runs that fail (the program given exits 1) on both ranks: failed rows, exit non-zero.
    failing = os.path.join(work, "failing")
    bad = run(mpi + ["--asteria", "/bin/false", "--out", failing], expect_ok=False)
    table = read(os.path.join(failing, "table.csv")).decode()
    if bad.returncode == 0 or table.count(",false,") != 3:
        sys.exit(f"FAIL: failed runs on either rank should be failed rows and a non-zero exit:\n{table}\n{bad.stderr}")
    print("ok: runs failed on either rank are failed rows of rank 0's table")


if __name__ == "__main__":
    main()
