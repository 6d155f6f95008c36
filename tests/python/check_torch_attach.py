#!/usr/bin/python3
"""asteria.torch attached to a PyTorch model (attach(): the step runs alongside the training
loop, from its forward and gradient hooks): each optimizer's trajectory equals the same optimizer
stepped after the backward bit for bit, at S = 0 and with asynchronous refreshes, with one and
with two micro-batches (gradient accumulation), and after a resume from state_dict(); a traced
run writes a native trace whose forward and backward ops are the loop's passes, which `asteria
replay` and `asteria calibrate --from-trace` read; a loop that breaks the contract (a gradient
clipped before step(), more forward passes than micro-batches, a trace without attach) is
refused naming what.

Usage: check_torch_attach.py ASTERIA_BINARY WORK_DIR   (PYTHONPATH holds <build>/python)
"""
import csv
import os
import shutil
import subprocess
import sys

import torch
import torch.nn.functional as F

import asteria.torch as at
from refusal import expect_refused

VOCAB, WIDTH, TOKENS, STEPS = 40, 16, 24, 6
OPTIMIZERS = {
    "adamw": lambda p, **s: at.AdamW(p, lr=1e-2, **s),
    "soap": lambda p, **s: at.SOAP(p, lr=1e-2, precondition_frequency=2, **s),
    "shampoo": lambda p, **s: at.Shampoo(p, lr=1e-2, precondition_frequency=2, **s),
    "kl-shampoo": lambda p, **s: at.KLShampoo(p, lr=1e-2, precondition_frequency=2, **s),
    "muon": lambda p, **s: at.Muon(p, lr=1e-2, **s),
}


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Embedding(VOCAB, WIDTH)
        self.up = torch.nn.Linear(WIDTH, 2 * WIDTH)
        self.norm = torch.nn.LayerNorm(2 * WIDTH)
        self.head = torch.nn.Linear(2 * WIDTH, VOCAB, bias=False)

    def forward(self, x):
        return self.head(self.norm(F.gelu(self.up(self.embed(x)))))


BATCHES = torch.randint(0, VOCAB, (STEPS + 2, TOKENS + 1), generator=torch.Generator().manual_seed(3))


def loss_of(model, t, part=slice(None)):
    x, y = BATCHES[t, :-1][part], BATCHES[t, 1:][part]
    return F.cross_entropy(model(x), y)


def train(make, attach, steps=STEPS, micro_batches=1, model=None, opt=None, first=0, **settings):
    model = model or Tiny()
    if opt is None:
        opt = make(model.parameters(), micro_batches=micro_batches, **settings)
        if attach:
            opt.attach(model, tokens_per_step=TOKENS)
    share = TOKENS // micro_batches
    for t in range(first, first + steps):
        for m in range(micro_batches):
            loss_of(model, t, slice(m * share, (m + 1) * share)).backward()
        with torch.no_grad():  # an evaluation between steps is no step
            loss_of(model, t + 1)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return model, opt


def weights(model):
    return [p.detach().clone() for p in model.parameters()]


def same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b))


def main():
    binary, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(("ok   " if ok else "FAIL ") + what)
        failures += 0 if ok else 1

    runtime = dict(placement="tiered", host_workers=2)
    for kind, make in OPTIMIZERS.items():
        for staleness in (0, 1):
            settings = dict(runtime, staleness=staleness, publish="deterministic")
            plain, _ = train(make, False, **settings)
            attached, opt = train(make, True, **settings)
            opt.close()
            check(same(weights(plain), weights(attached)),
                  f"{kind} at S = {staleness}: attached equals stepped after the backward, bit for bit")
            check(not same(weights(plain), weights(Tiny())), f"{kind} at S = {staleness}: the weights moved")
    plain, _ = train(OPTIMIZERS["soap"], False, micro_batches=2, staleness=1, **runtime)
    attached, _ = train(OPTIMIZERS["soap"], True, micro_batches=2, staleness=1, **runtime)
    check(same(weights(plain), weights(attached)), "soap, 2 micro-batches: attached equals plain, bit for bit")

    # Resume: the state after 3 attached steps into a new attached optimizer, 3 more steps.
    straight, _ = train(OPTIMIZERS["soap"], True, steps=6, staleness=1, **runtime)
    model, opt = train(OPTIMIZERS["soap"], True, steps=3, staleness=1, **runtime)
    state, saved = opt.state_dict(), weights(model)
    opt.close()
    resumed = Tiny()
    with torch.no_grad():
        for p, w in zip(resumed.parameters(), saved):
            p.copy_(w)
    opt = OPTIMIZERS["soap"](resumed.parameters(), staleness=1, **runtime)
    opt.attach(resumed, tokens_per_step=TOKENS)
    opt.load_state_dict(state)
    train(None, True, steps=3, model=resumed, opt=opt, first=3)
    check(same(weights(straight), weights(resumed)), "soap attached: resumed from state_dict() equals straight")

    # A traced run: its trace holds the loop's passes, per layer, and replays.
    trace_dir = os.path.join(work, "trace")
    model, opt = train(OPTIMIZERS["soap"], True, steps=4, staleness=1, trace=True, out=trace_dir, **runtime)
    opt.close()
    with open(os.path.join(trace_dir, "trace.csv")) as f:
        lines = f.read().splitlines()
    meta = dict(l[2:].split("=", 1) for l in lines if l.startswith("# ") and "=" in l)
    check(meta.get("model_pass") == "per_micro_batch" and meta.get("layers") == "6",
          f"the trace records the model's 6 layers and its pass ({meta.get('model_pass')})")
    check("--steps 4" in meta.get("run_arguments", ""), "the trace records the loop's 4 steps")
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    passes = [r for r in rows if r["kind"] in ("forward", "backward") and r["step"] == "2"]
    check(len(passes) == 12, f"step 2 holds a forward and a backward op per layer ({len(passes)} found)")
    check(sum(float(r["end_s"]) - float(r["start_s"]) for r in passes) > 0.0, "the passes have measured lengths")
    replay = subprocess.run([binary, "replay", os.path.join(trace_dir, "trace.csv"), "--hw", "gh200", "--out",
                             os.path.join(work, "replay"), "--no-progress"], capture_output=True, text=True)
    check(replay.returncode == 0 and "the same plan" in replay.stdout,
          f"asteria replay rebuilds the traced plan: {replay.stdout.strip().splitlines()[-4:] or replay.stderr}")
    fit = subprocess.run([binary, "calibrate", "--from-trace", os.path.join(trace_dir, "trace.csv"), "--base", "gb10",
                          "--out", os.path.join(work, "fitted.yaml"), "--force"], capture_output=True, text=True)
    check(fit.returncode == 0 and os.path.exists(os.path.join(work, "fitted.yaml")),
          f"asteria calibrate --from-trace fits a profile to it: {fit.stderr.strip()[-300:]}")

    # The step runs from the loop's hooks, and the parameters change in step() only.
    model = Tiny()
    opt = at.SOAP(model.parameters(), lr=1e-2, staleness=0).attach(model, tokens_per_step=TOKENS)
    before = weights(model)
    loss_of(model, 0).backward()
    in_flight = opt._session.step_in_flight
    unchanged = same(before, weights(model))
    opt.step()
    check(in_flight and unchanged and not same(before, weights(model)),
          "an attached step starts with the forward, and the parameters change in step()")
    opt.close()

    # The contract of an attached loop.
    model = Tiny()
    opt = at.SOAP(model.parameters(), lr=1e-2).attach(model)
    loss_of(model, 0).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.01)
    expect_refused(opt.step, ["parameter 0", "gradient changed"])
    model = Tiny()
    opt = at.SOAP(model.parameters(), lr=1e-2).attach(model)
    loss_of(model, 0).backward()
    expect_refused(opt.state_dict, ["between steps"], (RuntimeError,))
    expect_refused(lambda: loss_of(model, 1), ["micro_batches=1", "torch.no_grad()"], (RuntimeError,))
    expect_refused(lambda: at.SOAP(Tiny().parameters(), trace=True, out=os.path.join(work, "t2")).step(),
                   ["attach(model, tokens_per_step)"])
    expect_refused(lambda: at.SOAP(Tiny().parameters(), trace=True, out=os.path.join(work, "t3")).attach(Tiny()),
                   ["tokens_per_step > 0"])
    model, opt = train(OPTIMIZERS["adamw"], False, steps=1)
    expect_refused(lambda: opt.attach(model), ["before the first step"])
    expect_refused(lambda: at.SOAP([torch.zeros(3, 3, device="meta")]), ["parameter 0", "meta"])
    print("ok   loops breaking the contract are refused naming what")
    if failures:
        print(f"{failures} failure(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
