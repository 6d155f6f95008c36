"""Trajectories of Distributed Shampoo with its constructor's defaults against `asteria optim
--optimizer shampoo`, with --preset distributed-shampoo and with Asteria's own defaults.

For each parameter shape (vectors, small matrices that Distributed Shampoo merges into vectors,
a column it squeezes, matrices it blocks), the same fp32 initial parameters and gradients go
through DistributedShampoo([param]) (nothing else given: lr 1e-2, betas (0.9, 1.0), epsilon
1e-12, no grafting, precondition_frequency 1, max_preconditioner_dim 1024) and through the two
Asteria runs. Reported per shape and run: the largest deviation of the parameters from the
reference's over all steps, relative to how far the reference moved them
(max |w - w_ref| / max |w_ref - w0|).

Each comparison runs twice: with the constructor's epsilon 1e-12, and with epsilon 1e-3 given
to both. With 1e-12 the first steps' statistics are singular (a vector's first factor has rank
one) and the root amplifies rounding in their null space by up to 1e6: two correct fp32
implementations (or an fp64 one) then differ by O(1), so only epsilon 1e-3 checks the equations.

    build/refbench-venv/bin/python -m bench.references.shampoo_trajectories \
        --src DIR --asteria build/release/apps/asteria/asteria [--steps 12] [--out DIR]

DIR is a checkout of facebookresearch/optimizers (the distributed_shampoo package).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy

from bench.references.shampoo_refs import import_shampoo

SHAPES = ((64,), (1500,), (24, 32), (32, 32), (40, 1), (64, 48), (1100, 40))
RUNS = (("preset", ["--preset", "distributed-shampoo"]), ("asteria-defaults", []))


def parse_shapes(text: str):
    return tuple(tuple(int(d) for d in shape.split("x")) for shape in text.split(","))


EPSILONS = (None, 1e-3)  # None: the constructor's own (1e-12)


def reference_trajectory(ds, torch, w0: numpy.ndarray, grads: numpy.ndarray, epsilon) -> numpy.ndarray:
    param = torch.nn.Parameter(torch.from_numpy(w0.copy()))
    opt = ds.DistributedShampoo([param]) if epsilon is None else ds.DistributedShampoo([param], epsilon=epsilon)
    out = []
    for g in grads:
        param.grad = torch.from_numpy(g.copy())
        opt.step()
        out.append(param.detach().numpy().copy())
    return numpy.stack(out)


def asteria_trajectory(asteria: str, work: Path, options: list[str], w0, grads) -> numpy.ndarray:
    numpy.save(work / "p.npy", w0)
    numpy.save(work / "g.npy", grads)
    subprocess.run([asteria, "optim", "--optimizer", "shampoo", "--params", str(work / "p.npy"), "--grads",
                    str(work / "g.npy"), "--out", str(work / "t.npy"), *options], check=True,
                   stdout=subprocess.DEVNULL)
    return numpy.load(work / "t.npy")


def deviation(trajectory: numpy.ndarray, reference: numpy.ndarray, w0: numpy.ndarray) -> float:
    moved = float(numpy.abs(reference - w0).max())
    return float(numpy.abs(trajectory.astype(numpy.float64) - reference).max()) / moved


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, type=Path, help="a checkout of facebookresearch/optimizers")
    ap.add_argument("--asteria", required=True, help="the asteria program")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--shapes", type=parse_shapes, default=SHAPES, help="e.g. 64,24x32,64x48")
    ap.add_argument("--out", type=Path, help="folder for results.json (default: print only)")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    ds, _, _, version = import_shampoo(args.src)
    rng = numpy.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for shape in args.shapes:
            w0 = (rng.standard_normal(shape) * 0.1).astype(numpy.float32)
            grads = rng.standard_normal((args.steps, *shape)).astype(numpy.float32)
            for epsilon in EPSILONS:
                reference = reference_trajectory(ds, torch, w0, grads, epsilon).astype(numpy.float64)
                row = {"shape": "x".join(map(str, shape)), "epsilon": epsilon if epsilon is not None else 1e-12}
                given = [] if epsilon is None else ["--eps", repr(epsilon)]
                for name, options in RUNS:
                    row[name] = deviation(asteria_trajectory(args.asteria, work, options + given, w0, grads),
                                          reference, w0.astype(numpy.float64))
                rows.append(row)
                print(f"{row['shape']:>10} epsilon {row['epsilon']:g}: preset {row['preset']:.3g}, "
                      f"Asteria's defaults {row['asteria-defaults']:.3g}", flush=True)
    result = {"reference": version, "steps": args.steps, "metric": "max |w - w_ref| / max |w_ref - w0| over all steps",
              "shapes": rows}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
