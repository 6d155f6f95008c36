#!/usr/bin/python3
"""A small GPT in plain PyTorch trained on the project's default corpus (the Python standard
library's sources, bytes as tokens, as `asteria train` reads them) with asteria.torch.SOAP (state
tiered, staleness 5, refreshes on host workers) against torch.optim.AdamW: the same model, data
and steps; writes losses.csv and losses.png.

With --record DIR it trains the same model with asteria.torch.SOAP attached to it (its step
runs alongside the loop's forward and backward, from hooks) and writes the run's native trace to
DIR, for `asteria calibrate --from-trace` and `asteria replay` (README.md here shows the
sequence); --optimizer-settings adds runtime settings to it ("placement=tiered,staleness=5").

--compare-attach times SOAP stepped after the backward against SOAP attached (2 rounds).

Usage: PYTHONPATH=build/release/python experiments/pytorch/gpt_soap_vs_adamw.py [--steps N] [--out DIR]
       PYTHONPATH=build/release/python experiments/pytorch/gpt_soap_vs_adamw.py --record DIR [--steps N]
       PYTHONPATH=build/release/python experiments/pytorch/gpt_soap_vs_adamw.py --compare-attach [--steps N]
"""
import argparse
import csv
import glob
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import asteria.torch as at


def corpus(limit_bytes):
    """The standard library's .py files, in sorted order, as bytes (the project's default corpus)."""
    root = os.path.dirname(os.__file__)
    data = bytearray()
    for path in sorted(glob.glob(os.path.join(root, "*.py"))):
        with open(path, "rb") as f:
            data += f.read()
        if len(data) >= limit_bytes:
            break
    return np.frombuffer(bytes(data[:limit_bytes]), dtype=np.uint8)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=2)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (y.view(shape).transpose(1, 2) for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        att = att.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float("-inf")).softmax(-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class GPT(nn.Module):
    def __init__(self, layers=2, d=128, heads=4, context=128):
        super().__init__()
        self.embed, self.position = nn.Embedding(256, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, 256, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def train(make_optimizer, data, steps, batch, context, seed, attach=False):
    torch.manual_seed(seed)
    model = GPT(context=context)
    opt = make_optimizer(model.parameters())
    if attach:
        opt.attach(model, tokens_per_step=batch * context)
    rng = np.random.default_rng(seed)
    losses = []
    start = time.perf_counter()
    for _ in range(steps):
        starts = rng.integers(0, len(data) - context - 1, batch)
        x = torch.tensor(np.stack([data[s:s + context] for s in starts]), dtype=torch.long)
        y = torch.tensor(np.stack([data[s + 1:s + context + 1] for s in starts]), dtype=torch.long)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).reshape(-1, 256), y.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if hasattr(opt, "close"):
        opt.close()
    return losses, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--out", default="experiments/pytorch/results")
    parser.add_argument("--record", metavar="DIR", help="train SOAP attached to the model and write its trace to DIR")
    parser.add_argument("--optimizer-settings", default="", help="runtime settings of the recorded SOAP: k=v,k=v")
    parser.add_argument("--compare-attach", action="store_true",
                        help="time SOAP stepped after the backward against SOAP attached to the model (2 rounds)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = corpus(4 << 20)
    if args.compare_attach:
        def soap(p):
            return at.SOAP(p, lr=3e-3, max_precond_dim=512, placement="device", staleness=1, host_workers=1)
        for r in range(2):
            for attach in (False, True):
                losses, seconds = train(soap, data, args.steps, args.batch, args.context, seed=1, attach=attach)
                print(f"round {r + 1}, SOAP {'attached' if attach else 'stepped after the backward'}: "
                      f"{1e3 * seconds / args.steps:.1f} ms a step, final loss {losses[-1]:.6f}", flush=True)
        return 0
    if args.record:
        settings = dict(placement="device", staleness=1, host_workers=1)
        for item in filter(None, args.optimizer_settings.split(",")):
            key, _, value = item.partition("=")
            settings[key.strip()] = value.strip()
        losses, seconds = train(lambda p: at.SOAP(p, lr=3e-3, max_precond_dim=512, trace=True, out=args.record,
                                                  overwrite=True, **settings),
                                data, args.steps, args.batch, args.context, seed=1, attach=True)
        print(f"SOAP attached ({settings}): loss {losses[0]:.3f} -> {losses[-1]:.3f} in {seconds:.1f} s; "
              f"trace in {args.record}", flush=True)
        return 0
    runs = {
        "torch.optim.AdamW lr 3e-3": lambda p: torch.optim.AdamW(p, lr=3e-3, weight_decay=0.01),
        "asteria.torch.SOAP lr 3e-3, tiered, S = 5": lambda p: at.SOAP(
            p, lr=3e-3, max_precond_dim=512, placement="tiered", staleness=5, host_workers=1),
    }
    results = {}
    for name, make in runs.items():
        losses, seconds = train(make, data, args.steps, args.batch, args.context, seed=1)
        results[name] = losses
        tail = sum(losses[-20:]) / 20
        print(f"{name}: loss {losses[0]:.3f} -> {tail:.3f} (mean of the last 20) in {seconds:.1f} s", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "losses.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step"] + list(results))
        for t in range(args.steps):
            w.writerow([t + 1] + [f"{results[n][t]:.6f}" for n in results])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, losses in results.items():
        smooth = np.convolve(losses, np.ones(10) / 10, mode="valid")
        ax.plot(np.arange(10, args.steps + 1), smooth, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (bytes, mean of 10 steps)")
    ax.set_title("a 2-layer GPT (d 128) in PyTorch on the standard library's sources")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "losses.png"), dpi=120)
    print(f"wrote {args.out}/losses.csv and losses.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
