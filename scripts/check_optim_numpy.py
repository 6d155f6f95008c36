#!/usr/bin/python3
"""Cross-checks `asteria optim --optimizer adamw` against AdamW written in NumPy (float64).

Writes parameters and gradients with numpy.save (C and Fortran order, float32 and float64,
0-d to 3-d), runs the asteria binary given on the command line, reads its trajectory with
numpy.load and compares it with the NumPy reference. Also checks that a shape mismatch is
reported with both file names. Exits non-zero on any mismatch.

usage: check_optim_numpy.py PATH/TO/asteria
"""
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

# PyTorch AdamW defaults, which `asteria optim` uses when no option is given.
DEFAULTS = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01)


def adamw_reference(params, grads, lr, beta1, beta2, eps, weight_decay):
    """Parameters after every step, in float64."""
    w = params.astype(np.float64)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    out = []
    for t, g in enumerate(grads.astype(np.float64), start=1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1**t)
        v_hat = v / (1 - beta2**t)
        w = w - lr * m_hat / (np.sqrt(v_hat) + eps) - lr * weight_decay * w
        out.append(w.copy())
    return np.stack(out)


def run_asteria(binary, *args):
    return subprocess.run([binary, "optim", *args], capture_output=True, text=True, check=False)


def check_case(binary, workdir, name, shape, steps, dtype, grads_dtype, hyper, fortran, tolerance):
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # same data every run
    params = rng.standard_normal(shape).astype(dtype)
    grads = rng.standard_normal((steps, *shape)).astype(grads_dtype)
    params_file, grads_file, out_file = (workdir / f"{name}-{k}.npy" for k in ("params", "grads", "traj"))
    np.save(params_file, np.asfortranarray(params) if fortran else params)
    np.save(grads_file, np.asfortranarray(grads) if fortran else grads)

    options = []
    for key, value in hyper.items():
        options += [f"--{key.replace('_', '-')}", repr(value)]
    result = run_asteria(binary, "--optimizer", "adamw", "--params", str(params_file), "--grads", str(grads_file),
                         "--out", str(out_file), *options)
    if result.returncode != 0:
        return f"{name}: asteria exited with {result.returncode}: {result.stderr.strip()}"
    traj = np.load(out_file)
    if traj.dtype != np.dtype(dtype) or traj.shape != (steps, *shape):
        return f"{name}: got {traj.dtype} {traj.shape}, expected {np.dtype(dtype)} {(steps, *shape)}"
    # The computation runs in the dtype of the params: the reference sees the same rounded inputs.
    settings = {**DEFAULTS, **hyper}
    expected = adamw_reference(params, grads.astype(dtype), **settings)
    error = float(np.max(np.abs(traj.astype(np.float64) - expected))) if traj.size else 0.0
    print(f"{name}: {dtype.__name__} {shape} x {steps} steps, max |asteria - numpy| = {error:.3e} "
          f"(tolerance {tolerance:.0e})")
    if not error <= tolerance:
        return f"{name}: max error {error:.3e} exceeds {tolerance:.0e}"
    return None


def check_shape_mismatch(binary, workdir):
    params_file, grads_file, out_file = (workdir / f"mismatch-{k}.npy" for k in ("params", "grads", "traj"))
    np.save(params_file, np.zeros((3, 2), np.float32))
    np.save(grads_file, np.zeros((4, 2, 3), np.float32))
    result = run_asteria(binary, "--optimizer", "adamw", "--params", str(params_file), "--grads", str(grads_file),
                         "--out", str(out_file))
    wanted = [str(grads_file), str(params_file), "(steps, 3, 2)", "(4, 2, 3)"]
    if result.returncode != 1 or not all(w in result.stderr for w in wanted) or out_file.exists():
        return f"shape mismatch: exit {result.returncode}, stderr {result.stderr.strip()!r}"
    print("shape mismatch: reported as expected")
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    tuned = dict(lr=0.01, beta1=0.85, beta2=0.99, eps=1e-7, weight_decay=0.1)
    cases = [
        # name, shape, steps, params dtype, grads dtype, options, Fortran order, tolerance
        ("f32-3d", (5, 4, 3), 20, np.float32, np.float32, tuned, False, 1e-5),
        ("f64-3d", (5, 4, 3), 20, np.float64, np.float64, tuned, False, 1e-12),
        ("f64-defaults", (6, 7), 30, np.float64, np.float64, {}, False, 1e-12),
        ("f32-fortran", (4, 6), 10, np.float32, np.float32, tuned, True, 1e-5),
        ("f64-vector-f32-grads", (9,), 15, np.float64, np.float32, tuned, False, 1e-12),
        ("f32-scalar-f64-grads", (), 12, np.float32, np.float64, tuned, False, 1e-5),
    ]
    failures = []
    with tempfile.TemporaryDirectory(prefix="asteria-numpy-") as tmp:
        workdir = Path(tmp)
        for case in cases:
            failure = check_case(binary, workdir, *case)
            if failure:
                failures.append(failure)
        failure = check_shape_mismatch(binary, workdir)
        if failure:
            failures.append(failure)
    for failure in failures:
        print("FAIL " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
