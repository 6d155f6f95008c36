#!/usr/bin/env python3
"""A slow rank delays the others only when the staleness bound would be exceeded.

OLMo-1B-like, SOAP, 4 simulated GH200s (data-free), rank 1's host workers 1.5x slower. Its share
of the refreshes (it owns a quarter of the blocks) then takes 1.5 times as long: at S = 5 the
results still arrive before they are due (at 2x they arrive just late: a round then takes about
five steps), so every rank's step time is unchanged (within 0.5%); at
S = 0 the others wait for it (mean step time up by more than 10%, the wait counted as refresh wait).

Usage: check_straggler.py ASTERIA WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys


def run(asteria, out, staleness, straggler):
    command = [asteria, "sim", "--hw", "gh200-alps", "--model", "olmo-1b", "--optimizer", "soap", "--units", "4",
               "--steps", "20", "--warmup-steps", "3", "--staleness", str(staleness), "--no-progress", "--out", out]
    if straggler:
        command += ["--straggler", "1:1.5"]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {done.returncode}:\n{done.stdout[-3000:]}")
    return json.load(open(os.path.join(out, "summary.json")))


def main():
    asteria, work = sys.argv[1:3]
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    figures = {}
    for staleness in (0, 5):
        for straggler in (False, True):
            name = f"S{staleness}{'-straggler' if straggler else ''}"
            figures[(staleness, straggler)] = run(asteria, os.path.join(work, name), staleness, straggler)
    for staleness in (0, 5):
        base, slow = figures[(staleness, False)], figures[(staleness, True)]
        ratio = slow["mean_step_s"] / base["mean_step_s"]
        print(f"S = {staleness}: mean step {base['mean_step_s']:.6g} s, with the straggler {slow['mean_step_s']:.6g} s "
              f"(x{ratio:.4f}); refresh wait {base['refresh_wait_s']:.4g} -> {slow['refresh_wait_s']:.4g} s/step")
        if staleness == 5 and not (ratio < 1.005):
            sys.exit("FAIL: within the bound (S = 5) the straggler delayed the others")
        if staleness == 0 and not (ratio > 1.10 and slow["refresh_wait_s"] > base["refresh_wait_s"]):
            sys.exit("FAIL: beyond the bound (S = 0) the straggler did not delay the others")
    print("OK")


if __name__ == "__main__":
    main()
