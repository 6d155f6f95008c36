#!/usr/bin/env python3
"""asteria runs its processor's BLAS kernels, records them in summary.json, and refuses a
fallback nobody chose. Usage: check_blas_kernels.py ASTERIA WORKDIR"""
import json
import os
import shutil
import subprocess
import sys

asteria, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
base = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "ASTERIA_OPENBLAS_CORETYPE_SET",
                                                          "ASTERIA_ALLOW_BLAS_FALLBACK")}


def synth(name, **env):
    out = os.path.join(work, name)
    p = subprocess.run([asteria, "synth", "--steps", "2", "--out", out], env={**base, **env},
                       capture_output=True, text=True, timeout=300)
    summary = json.load(open(os.path.join(out, "summary.json"))) if p.returncode == 0 else None
    return p, summary


failures = []
# 1. Left alone, asteria runs kernels of its processor's class (restarting itself when the
#    library picked a fallback) and says who chose them.
p, s = synth("default")
if p.returncode != 0:
    sys.exit(f"asteria synth failed: {p.stderr}")
math = s
print("default:", math)
if math["blas_fallback"] and "DYNAMIC_ARCH" in math["blas_library"]:
    failures.append(f"fallback kernels {math['blas_kernels']} on a {math['host_vector_isa']} processor")
if math["blas_chosen_by"] not in ("chosen by the library",) and "set by Asteria" not in math["blas_chosen_by"]:
    failures.append(f"unexpected chooser {math['blas_chosen_by']!r}")

# 2. The user's choice stands, even a fallback, and is recorded as theirs.
p, s = synth("user", OPENBLAS_CORETYPE="Prescott")
if p.returncode != 0:
    failures.append(f"a user's OPENBLAS_CORETYPE was refused: {p.stderr}")
elif s["blas_kernels"].lower() != "prescott" or "set by the user" not in s["blas_chosen_by"]:
    failures.append(f"the user's kernels were not recorded: {s}")

# 3. A fallback nobody chose is refused with the remedy; ASTERIA_ALLOW_BLAS_FALLBACK=1 runs it.
if math["host_vector_isa"] in ("avx2", "avx512"):
    p, _ = synth("refused", OPENBLAS_CORETYPE="Prescott", ASTERIA_OPENBLAS_CORETYPE_SET="Prescott")
    if p.returncode != 1 or "OPENBLAS_CORETYPE=" not in p.stderr or "ASTERIA_ALLOW_BLAS_FALLBACK" not in p.stderr:
        failures.append(f"an unchosen fallback was not refused (exit {p.returncode}): {p.stderr}")
    p, s = synth("allowed", OPENBLAS_CORETYPE="Prescott", ASTERIA_OPENBLAS_CORETYPE_SET="Prescott",
                 ASTERIA_ALLOW_BLAS_FALLBACK="1")
    if p.returncode != 0 or not s["blas_fallback"]:
        failures.append(f"ASTERIA_ALLOW_BLAS_FALLBACK=1 did not run the fallback: {p.stderr}")
else:
    print(f"refusal not checked: this processor runs {math['host_vector_isa']}, no kernel set is a fallback here")

if failures:
    sys.exit("\n".join(failures))
print("ok")
