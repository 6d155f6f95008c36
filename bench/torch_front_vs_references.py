#!/usr/bin/env python3
"""asteria.torch's SOAP and Shampoo against the torch optimizers they stand in for
(nikhilvyas/SOAP's SOAP, Distributed Shampoo's DistributedShampoo) on the same parameters, the
same hyperparameters and the same threads, on the CPU: every step's time over steps that include
refreshes (precondition frequency 10), reported as the mean (what a run pays), the median (a
step without a refresh) and the slowest step (a refresh on the critical path), in interleaved
rounds, one process per measurement. Asteria runs synchronously (S = 0) and with its refreshes
on a host worker thread published up to S steps late (S = 1, 5): a refresh leaves the critical
path once it takes less than S steps.

The references are imported from checkouts (neither is on PyPI; nothing of them is copied
here); run it with an interpreter that has torch and the asteria package (PYTHONPATH), e.g. a
virtual environment with torch from PyPI:

  PYTHONPATH=build/release/python python bench/torch_front_vs_references.py \\
      --soap-src ~/src/SOAP --shampoo-src ~/src/optimizers [--shapes 1024x1024,2048x512] [--steps 30]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

FREQUENCY = 10


def parse_shapes(text):
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",")]


def contenders(args):
    return [("nikhilvyas/SOAP", "soap-ref", {}),
            ("asteria SOAP S=0", "soap-asteria", {"staleness": 0}),
            ("asteria SOAP S=1", "soap-asteria", {"staleness": 1}),
            ("asteria SOAP S=5", "soap-asteria", {"staleness": 5}),
            ("Distributed Shampoo", "shampoo-ref", {}),
            ("asteria Shampoo S=0", "shampoo-asteria", {"staleness": 0}),
            ("asteria Shampoo S=1", "shampoo-asteria", {"staleness": 1}),
            ("asteria Shampoo S=5", "shampoo-asteria", {"staleness": 5})]


def measure(args):
    """One measurement in this process: prints a JSON record of every step's seconds."""
    import torch
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    shapes = parse_shapes(args.shapes)
    params = [torch.nn.Parameter(torch.randn(*s, generator=gen) * 0.02) for s in shapes]
    grads = [[torch.randn(*s, generator=gen) for s in shapes] for _ in range(4)]
    settings = json.loads(args.settings)
    max_dim = max(max(s) for s in shapes)
    if args.kind == "soap-ref":
        sys.path.insert(0, args.soap_src)
        from soap import SOAP
        opt = SOAP(params, lr=3e-3, betas=(0.95, 0.95), weight_decay=0.01, precondition_frequency=FREQUENCY,
                   max_precond_dim=max_dim)
    elif args.kind == "soap-asteria":
        import asteria.torch as at
        opt = at.SOAP(params, lr=3e-3, betas=(0.95, 0.95), weight_decay=0.01, precondition_frequency=FREQUENCY,
                      max_precond_dim=max_dim, placement="device", host_workers=1, blas_threads=args.threads,
                      **settings)
    elif args.kind == "shampoo-ref":
        sys.path.insert(0, args.shampoo_src)
        import distributed_shampoo as ds
        graft = getattr(ds, "AdamGraftingConfig", None) or getattr(ds, "AdamPreconditionerConfig")
        opt = ds.DistributedShampoo(params, lr=1e-3, betas=(0.9, 1.0), epsilon=1e-12, weight_decay=0.0,
                                    max_preconditioner_dim=max_dim, precondition_frequency=FREQUENCY,
                                    start_preconditioning_step=FREQUENCY,
                                    grafting_config=graft(beta2=0.999, epsilon=1e-10))
    else:
        import asteria.torch as at
        opt = at.Shampoo(params, lr=1e-3, betas=(0.9, 1.0), epsilon=1e-12, weight_decay=0.0,
                         max_preconditioner_dim=max_dim, precondition_frequency=FREQUENCY,
                         start_preconditioning_step=FREQUENCY, placement="device", host_workers=1,
                         blas_threads=args.threads, **settings)
    seconds = []
    for k in range(args.steps):
        for p, g in zip(params, grads[k % len(grads)]):
            p.grad = g
        start = time.perf_counter()
        opt.step()
        seconds.append(time.perf_counter() - start)
    if hasattr(opt, "close"):
        opt.close()
    if not all(torch.isfinite(p).all() for p in params):
        raise SystemExit("non-finite weights")
    print(json.dumps({"seconds": seconds}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--soap-src", required=True, help="a checkout of nikhilvyas/SOAP (holding soap.py)")
    ap.add_argument("--shampoo-src", required=True, help="a checkout of facebookresearch/optimizers")
    ap.add_argument("--shapes", default="1024x1024,2048x512")
    ap.add_argument("--steps", type=int, default=30, help="steps per measurement (the first is left out)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", help="write the records as JSON here")
    ap.add_argument("--kind", help=argparse.SUPPRESS)
    ap.add_argument("--settings", default="{}", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.kind:
        return measure(args)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
    samples = {name: [] for name, _, _ in contenders(args)}
    for r in range(args.rounds):
        for name, kind, settings in contenders(args):
            cmd = [sys.executable, __file__, "--kind", kind, "--settings", json.dumps(settings), "--soap-src",
                   args.soap_src, "--shampoo-src", args.shampoo_src, "--shapes", args.shapes, "--steps",
                   str(args.steps), "--threads", str(args.threads)]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                print(f"{name}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
                return 1
            samples[name].extend(json.loads(done.stdout.strip().splitlines()[-1])["seconds"][1:])
            print(f"round {r + 1}: {name} done", file=sys.stderr, flush=True)
    rows = {n: (statistics.mean(s), statistics.median(s), max(s)) for n, s in samples.items()}
    print(f"shapes {args.shapes}, {args.threads} thread(s), precondition frequency {FREQUENCY}, "
          f"{args.steps - 1} steps x {args.rounds} rounds each")
    print("| optimizer | mean step s | median step s | slowest step s | mean vs reference |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (mean, median, slowest) in rows.items():
        reference = rows["nikhilvyas/SOAP" if "SOAP" in name else "Distributed Shampoo"][0]
        print(f"| {name} | {mean:.4f} | {median:.4f} | {slowest:.4f} | {mean / reference:.2f} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "samples": samples}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
