#!/usr/bin/python3
"""asteria.torch against `asteria optim`: each optimizer's trajectory from PyTorch, through the
runtime (staleness 0, state on the device tier), equals the synchronous optimizer of `asteria
optim` on the same gradients bit for bit, for a matrix, a vector and an order-3 parameter; two runs are
identical, at S = 0 and with asynchronous refreshes; bad parameters and settings are refused
naming them.

Usage: check_torch_front.py ASTERIA_BINARY WORK_DIR   (PYTHONPATH holds <build>/python)
"""
import os
import subprocess
import sys

import numpy as np
import torch

import asteria
import asteria.torch as at
from refusal import expect_refused

STEPS = 5
SHAPES = [(12, 8), (8,), (6, 2, 3)]
# Each optimizer: its class, its keyword hyperparameters, and the same as `asteria optim` options.
CASES = [
    ("adamw", at.AdamW, dict(lr=1e-2, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01),
     ["--lr", "0.01", "--beta1", "0.9", "--beta2", "0.99", "--eps", "1e-08", "--weight-decay", "0.01"]),
    ("soap", at.SOAP, dict(lr=3e-3, betas=(0.95, 0.95), eps=1e-8, weight_decay=0.01, precondition_frequency=2,
                           max_precond_dim=8),
     ["--lr", "0.003", "--beta1", "0.95", "--beta2", "0.95", "--eps", "1e-08", "--weight-decay", "0.01",
      "--precondition-frequency", "2", "--max-precond-dim", "8", "--shampoo-beta", "-1"]),
    ("shampoo", at.Shampoo, dict(lr=1e-2, betas=(0.9, 1.0), epsilon=1e-12, weight_decay=0.0,
                                 max_preconditioner_dim=8, precondition_frequency=2),
     ["--lr", "0.01", "--beta1", "0.9", "--beta2", "1.0", "--eps", "1e-12", "--weight-decay", "0.0",
      "--max-precond-dim", "8", "--precondition-frequency", "2"]),
    ("kl-shampoo", at.KLShampoo, dict(lr=3e-3, betas=(0.95, 0.95), eps=1e-8, weight_decay=0.01,
                                      precondition_frequency=2, max_precond_dim=8),
     ["--lr", "0.003", "--beta1", "0.95", "--beta2", "0.95", "--eps", "1e-08", "--weight-decay", "0.01",
      "--precondition-frequency", "2", "--max-precond-dim", "8", "--shampoo-beta", "-1"]),
    ("muon", at.Muon, dict(lr=0.02, momentum=0.95, nesterov=True, weight_decay=0.0),
     ["--lr", "0.02", "--beta1", "0.95", "--nesterov", "true", "--weight-decay", "0.0"]),
]
RUNTIME = dict(placement="device", staleness=0, host_workers=1)


def data(seed):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [rng.standard_normal((STEPS,) + s).astype(np.float32) for s in SHAPES]
    return params, grads


def torch_trajectory(cls, hp, params, grads):
    tensors = [torch.tensor(p.copy()) for p in params]
    opt = cls(tensors, **hp, **RUNTIME)
    out = [[] for _ in tensors]
    for t in range(STEPS):
        for p, g in zip(tensors, grads):
            p.grad = torch.tensor(g[t].copy())
        opt.step()
        for k, p in enumerate(tensors):
            out[k].append(p.detach().numpy().copy())
    opt.close()
    return [np.stack(o) for o in out]


def optim_trajectory(binary, work, kind, options, params, grads):
    out = []
    for k, (p, g) in enumerate(zip(params, grads)):
        pf, gf, of = (os.path.join(work, f"{kind}-{k}-{n}.npy") for n in ("p", "g", "out"))
        np.save(pf, p)
        np.save(gf, g)
        if os.path.exists(of):
            os.remove(of)
        subprocess.run([binary, "optim", "--optimizer", kind, "--params", pf, "--grads", gf, "--out", of] + options,
                       check=True, capture_output=True)
        out.append(np.load(of))
    return out


def main():
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    failures = 0
    for kind, cls, hp, options in CASES:
        params, grads = data(7)
        ours = torch_trajectory(cls, hp, params, grads)
        again = torch_trajectory(cls, hp, params, grads)
        reference = optim_trajectory(binary, work, kind, options, params, grads)
        for k in range(len(SHAPES)):
            if not np.array_equal(ours[k], again[k]):
                print(f"FAIL {kind} parameter {k}: two runs differ")
                failures += 1
            if not np.array_equal(ours[k], reference[k]):
                diff = np.max(np.abs(ours[k].astype(np.float64) - reference[k]))
                print(f"FAIL {kind} parameter {k} {SHAPES[k]}: differs from asteria optim (max |diff| {diff:.3g})")
                failures += 1
            else:
                print(f"ok   {kind} parameter {k} {SHAPES[k]}: {STEPS} steps bit for bit as asteria optim")

    # Asynchronous refreshes on host workers, state tiered: deterministic publication makes two
    # runs identical.
    params, grads = data(11)
    hp = dict(CASES[1][2])
    runs = []
    for _ in range(2):
        tensors = [torch.tensor(p.copy()) for p in params]
        opt = at.SOAP(tensors, **hp, placement="tiered", staleness=1, host_workers=2)
        for t in range(STEPS):
            for p, g in zip(tensors, grads):
                p.grad = torch.tensor(g[t].copy())
            opt.step()
        opt.close()
        runs.append([p.numpy().copy() for p in tensors])
    if all(np.array_equal(a, b) for a, b in zip(runs[0], runs[1])):
        print("ok   soap at S = 1, tiered, 2 host workers: two runs identical")
    else:
        print("FAIL soap at S = 1, tiered, 2 host workers: two runs differ")
        failures += 1

    # state_dict() mid-run with a refresh in flight, load_state_dict() into a fresh optimizer over
    # the same parameters: the resumed run equals the straight one bit for bit.
    params, grads = data(13)
    steps = 6

    def soap(tensors):
        return at.SOAP(tensors, **hp, placement="tiered", staleness=1, host_workers=2)

    straight = [torch.tensor(p.copy()) for p in params]
    opt = soap(straight)
    saved = None
    for t in range(steps):
        if t == 3:
            saved = (opt.state_dict(), [p.detach().clone() for p in straight])
        for p, g in zip(straight, grads):
            p.grad = torch.tensor(g[t % STEPS].copy())
        opt.step()
    opt.close()
    resumed = [p.clone() for p in saved[1]]
    opt = soap(resumed)
    opt.load_state_dict(saved[0])
    for t in range(3, steps):
        for p, g in zip(resumed, grads):
            p.grad = torch.tensor(g[t % STEPS].copy())
        opt.step()
    opt.close()
    if all(torch.equal(a, b) for a, b in zip(straight, resumed)):
        print("ok   soap at S = 1: resumed from state_dict() equals straight bit for bit")
    else:
        print("FAIL soap at S = 1: resumed from state_dict() differs from straight")
        failures += 1
    expect_refused(lambda: soap([torch.zeros(3, 3), torch.zeros(8), torch.zeros(6, 2, 3)]).load_state_dict(saved[0]),
                   ["parameter 0", "shape"])
    expect_refused(lambda: soap([torch.zeros(12, 8), torch.zeros(8)]).load_state_dict(saved[0]),
                   ["holds 3 parameters", "this optimizer 2"])
    expect_refused(lambda: at.AdamW([torch.tensor(p.copy()) for p in params]).load_state_dict(saved[0]),
                   ["soap"])

    # Bad parameters and settings: a ValueError naming them.
    good = torch.zeros(4, 4)
    expect_refused(lambda: at.SOAP([good, torch.zeros(4, dtype=torch.float64)]), ["parameter 1", "float32"])
    expect_refused(lambda: at.SOAP([torch.zeros(4, 6).t()]), ["parameter 0", "contiguous"])
    expect_refused(lambda: at.SOAP([torch.zeros(4, 4).to_sparse()]), ["parameter 0", "sparse"])
    expect_refused(lambda: at.SOAP([good], placement="somewhere"), ["placement"])
    expect_refused(lambda: at.SOAP([good], colour="blue"), ["colour"])
    no_grad = at.SOAP([torch.zeros(3, 3), torch.zeros(3)])
    expect_refused(no_grad.step, ["parameter 0", "no gradient"])
    expect_refused(lambda: at.SOAP([torch.zeros(3, 3)]).add_param_group({"params": [torch.zeros(3)]}),
                   ["cannot be added"])
    strided = at.SOAP([torch.zeros(3, 3)])
    strided.param_groups[0]["params"][0].grad = torch.randn(3, 3).t()
    expect_refused(strided.step, ["parameter 0", "contiguous"])
    swapped = at.SOAP([torch.zeros(3, 3)])  # a parameter whose values became float64 after construction
    p = swapped.param_groups[0]["params"][0]
    p.data = torch.zeros(3, 3, dtype=torch.float64)
    p.grad = torch.zeros(3, 3, dtype=torch.float64)
    expect_refused(swapped.step, ["parameter 0", "float32"])
    print("ok   bad parameters and settings are refused naming them")
    if failures:
        print(f"{failures} failure(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
