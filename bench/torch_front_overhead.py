#!/usr/bin/python3
"""The cost of the PyTorch front: asteria.torch's step() against the runtime's own step over the
same parameters, side by side in one run.

For each optimizer and set of shapes, N steps are timed twice: the wall time of
`optimizer.step()` as a training loop sees it (the torch.optim wrapper, the checks, the arrays
handed over, the GIL released), and the runtime's own step time, which the driver measures on its
clock around the same step (`optimizer.last_step["step_time_s"]`). Their difference is the
front's overhead; divided by the parameters, its cost per parameter.

Usage: PYTHONPATH=build/release/python bench/torch_front_overhead.py [--steps N] [--threads T]
"""
import argparse
import statistics
import time

import torch

import asteria.torch as at

SETS = [  # (name, shapes)
    ("8 x 1024x1024", [(1024, 1024)] * 8),
    ("64 x 256x256", [(256, 256)] * 64),
    ("512 x 64x64", [(64, 64)] * 512),
    ("512 x (64,) vectors", [(64,)] * 512),
]
OPTIMIZERS = [("AdamW", at.AdamW, {}), ("SOAP", at.SOAP, dict(max_precond_dim=1024, precondition_frequency=10))]


def measure(cls, hp, shapes, steps, threads):
    params = [torch.randn(*s) for s in shapes]
    for p in params:
        p.grad = torch.randn(*p.shape) * 1e-2
    opt = cls(params, **hp, placement="device", staleness=1, host_workers=threads)
    for _ in range(2):  # warm-up: the first steps set up state
        opt.step()
    wall, runtime = [], []
    for _ in range(steps):
        start = time.perf_counter()
        opt.step()
        wall.append(time.perf_counter() - start)
        runtime.append(opt.last_step["step_time_s"])
    opt.close()
    return statistics.median(wall), statistics.median(runtime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="host workers")
    args = parser.parse_args()
    print("| optimizer | parameters | step() ms | runtime step ms | overhead | per parameter µs |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name, cls, hp in OPTIMIZERS:
        for set_name, shapes in SETS:
            wall, runtime = measure(cls, hp, shapes, args.steps, args.threads)
            overhead = wall - runtime
            print(f"| {name} | {set_name} | {wall * 1e3:.3f} | {runtime * 1e3:.3f} | {100 * overhead / runtime:.1f}% "
                  f"| {1e6 * overhead / len(shapes):.2f} |", flush=True)


if __name__ == "__main__":
    main()
