#!/usr/bin/env python3
"""Refresh results travel at the first step end on the sync period's grid from their snapshot on,
and at the latest at the last step end before they are due.

The tiny model with SOAP on 2 simulated GH200s (data-free), refreshes every 4 steps (from step 1:
1, 5, 9, 13), owned refreshes, a trace of every activity. Each owner's result broadcast is
recorded ("refresh result ...") in the step at whose end it is sent:
- K = 1, S = 5: in the refresh's own step (as soon as the owner has it);
- K = 3, S = 5: in the first step from the refresh's on that is a multiple of 3 (3, 6, 9, 15);
- K = 3, S = 1: SOAP's refresh is due delay + S = 2 steps after its snapshot, so a result is
  sent at the latest one step after it: 2, 6, 9, 14.

Usage: check_sync_period.py ASTERIA WORKDIR
"""
import csv
import os
import shutil
import subprocess
import sys

SOAP_DELAY = 1  # optim::activation_delay(soap)


def result_steps(asteria, out, sync_period, staleness):
    command = [asteria, "sim", "--hw", "gh200-alps", "--model", "tiny", "--optimizer", "soap", "--units", "2",
               "--staleness", str(staleness), "--sync-period", str(sync_period), "--precondition-frequency", "4",
               "--steps", "16", "--warmup-steps", "0", "--trace", "--no-progress", "--out", out]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {done.returncode}:\n{done.stdout[-3000:]}")
    with open(os.path.join(out, "trace.csv"), newline="") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    refreshed = sorted({int(r["step"]) for r in rows
                        if r["unit"] == "0" and r["kind"] == "refresh_job" and "worker" in r["resource"]})
    sent = sorted({int(r["step"]) for r in rows if r["unit"] == "0" and r["label"].startswith("refresh result")})
    return refreshed, sent


def main():
    asteria, work = sys.argv[1:3]
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    failures = []
    for sync_period, staleness in ((1, 5), (3, 5), (3, 1)):
        refreshed, sent = result_steps(asteria, os.path.join(work, f"k{sync_period}s{staleness}"), sync_period,
                                       staleness)
        # Due at snapshot + delay + S (SOAP activates one step late: delay 1); sent at the latest at
        # the step end before that.
        expected = [min(s + SOAP_DELAY + staleness - 1, (s + sync_period - 1) // sync_period * sync_period)
                    for s in refreshed]
        print(f"K = {sync_period}, S = {staleness}: refreshes in steps {refreshed}, results sent in steps {sent}")
        if len(refreshed) < 3:
            failures.append(f"K = {sync_period}, S = {staleness}: only {len(refreshed)} refresh rounds: {refreshed}")
        elif sent != sorted(set(expected)):
            failures.append(f"K = {sync_period}, S = {staleness}: results sent in steps {sent}, expected {expected}")
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
