#!/usr/bin/python3
"""Quality against staleness: SOAP, KL-Shampoo and Shampoo at staleness S in {0, 1, 2, 5, 10} and
precondition frequency f in {10, 50}, against AdamW, over several seeds, on the validation loss
of held-out text; the publication policies (deterministic, opportunistic) compared at f = 10.

Every run is an `asteria train` of --model on the built-in corpus, with the same token budget
(steps, batch, batch order per seed); learning rates are given (--lrs), tuned beforehand
(convergence.py sweeps them) and stated in the table. Finished runs are kept and not run again,
so the grid can be spread over several invocations; --no-run rebuilds the tables and plots from the
runs already under --out. Runs go in an order that makes a partial grid useful: AdamW's seeds,
then f = 10 before f = 50, S = 0 and 5 before 1, 10 and 2, every seed of a configuration together.

Writes under --out: one directory per run, table.md and table.csv (per configuration: the final
validation loss, mean and 95% confidence interval over the seeds (Student's t), its difference to
AdamW's and to the same optimizer's at S = 0 on the same seed (paired: the seed also picks the
corpus split), and the steps and
tokens to each target loss, mean and interval over the seeds that reach it, with how many did),
and plots/staleness_quality.png (final loss against S, per optimizer and frequency, with
intervals) and plots/validation_curves.png (mean curves per configuration, against steps and
against the training's wall-clock).

Usage: staleness_quality.py [--asteria PATH] [--out DIR] [--model gpt-25m] [--steps N] [--batch B]
         [--seeds 1,2,3] [--optimizers soap,kl-shampoo,shampoo] [--staleness 0,1,2,5,10]
         [--frequencies 10,50] [--lrs adamw=3e-4,soap=3e-3,...] [--targets 2.2,2.0] [--jobs N]
         [--blas-threads N] [--device cpu|cuda] [--no-run]
"""
import argparse
import concurrent.futures
import csv
import math
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convergence import load, steps_to_reach, train_command  # noqa: E402  (one writer and reader of a train run)

import subprocess  # noqa: E402
import time  # noqa: E402

# Two-sided 95% Student t quantiles by degrees of freedom (n - 1).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
DEFAULT_LRS = {"adamw": 3e-4, "soap": 3e-3, "kl-shampoo": 3e-3, "shampoo": 3e-4}


def numbers(text, kind=float):
    return [kind(v) for v in text.split(",") if v]


def mean_interval(values):
    """(mean, half-width of the 95% interval); the half-width is None for fewer than two values."""
    if not values:
        return None, None
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, None
    return m, T95.get(len(values) - 1, 1.96) * statistics.stdev(values) / math.sqrt(len(values))


def configurations(args, lrs):
    """[(name, optimizer, lr, staleness, frequency, publish)], AdamW first."""
    out = [("adamw", "adamw", lrs["adamw"], 0, args.frequencies[0], "deterministic")]
    ordered_s = sorted(args.staleness, key=lambda s: ([0, 5, 1, 10, 2] + [s]).index(s))
    for f in args.frequencies:
        for s in ordered_s:
            for opt in args.optimizers:
                out.append((f"{opt}_f{f}_S{s}", opt, lrs[opt], s, f, "deterministic"))
    for s in [s for s in (1, 5) if s in args.staleness]:
        for opt in args.optimizers[:1]:  # the policies compared on the first optimizer
            out.append((f"{opt}_f{args.frequencies[0]}_S{s}_opportunistic", opt, lrs[opt], s, args.frequencies[0],
                        "opportunistic"))
    return out


def run_one(args, name, optimizer, lr, staleness, frequency, publish, seed):
    out = os.path.join(args.out, f"{name}-seed{seed}")
    if os.path.exists(os.path.join(out, "summary.json")):
        return load(out)
    if args.no_run:
        return None
    # A run stopped part-way (the process was killed) left only some of its files: it starts again.
    shutil.rmtree(out, ignore_errors=True)
    command = train_command(args.asteria, out, args.model, optimizer, lr, staleness, frequency, args.steps, args.batch,
                            args.eval_every, args.eval_sequences, seed, args.device, args.blas_threads,
                            ["--publish", publish])
    start = time.time()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"  {name} seed {seed}: failed ({result.returncode}): {result.stderr.strip()[-400:]}", file=sys.stderr)
        return None
    # The final weights are not part of the study (and weigh 4 bytes a parameter): dropped.
    shutil.rmtree(os.path.join(out, "checkpoint"), ignore_errors=True)
    r = load(out)
    print(f"  {name} seed {seed}: final validation loss {r['final']:.4f} ({time.time() - start:.0f} s)",
          file=sys.stderr, flush=True)
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--asteria", default="build/release/apps/asteria/asteria")
    p.add_argument("--out", default="experiments/convergence/results-staleness")
    p.add_argument("--model", default="gpt-25m")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--eval-every", type=int, default=25)
    p.add_argument("--eval-sequences", type=int, default=32)
    p.add_argument("--seeds", type=lambda t: numbers(t, int), default=[1, 2, 3])
    p.add_argument("--optimizers", type=lambda t: [v for v in t.split(",") if v], default=["soap", "kl-shampoo", "shampoo"])
    p.add_argument("--staleness", type=lambda t: numbers(t, int), default=[0, 1, 2, 5, 10])
    p.add_argument("--frequencies", type=lambda t: numbers(t, int), default=[10, 50])
    p.add_argument("--lrs", default="", help="OPTIMIZER=LR,... (defaults: " +
                   ", ".join(f"{k}={v:g}" for k, v in DEFAULT_LRS.items()) + ")")
    p.add_argument("--targets", type=lambda t: numbers(t), default=None,
                   help="validation losses to reach (default: AdamW's mean final loss, and 0.05 above it)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--blas-threads", type=int, default=1)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--no-run", action="store_true")
    args = p.parse_args()
    lrs = dict(DEFAULT_LRS)
    for item in filter(None, args.lrs.split(",")):
        key, _, value = item.partition("=")
        if key not in lrs:
            raise SystemExit(f"error: --lrs {item}: expected OPTIMIZER=LR with OPTIMIZER in {sorted(lrs)}")
        lrs[key] = float(value)
    os.makedirs(args.out, exist_ok=True)

    configs = configurations(args, lrs)
    jobs = [(c, seed) for c in configs for seed in args.seeds]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_one, args, *c, seed): (c[0], seed) for c, seed in jobs}
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()

    adamw_finals = [results[("adamw", s)]["final"] for s in args.seeds if results.get(("adamw", s))]
    targets = args.targets
    if targets is None:
        targets = [round(statistics.fmean(adamw_finals) + 0.05, 3), round(statistics.fmean(adamw_finals), 3)] \
            if adamw_finals else []
    rows = []
    for name, optimizer, lr, staleness, frequency, publish in configs:
        runs = [results.get((name, s)) for s in args.seeds]
        runs = [r for r in runs if r]
        final_mean, final_ci = mean_interval([r["final"] for r in runs])
        # The seed also picks the corpus split and the batch order: a difference to AdamW on the
        # same seed (paired) is far less noisy than two means over seeds.
        paired = [results[(name, s)]["final"] - results[("adamw", s)]["final"] for s in args.seeds
                  if results.get((name, s)) and results.get(("adamw", s))]
        diff_mean, diff_ci = mean_interval(paired)
        # What staleness (and the publication policy) costs: against the same optimizer and
        # frequency at S = 0 on the same seed.
        synchronous = f"{optimizer}_f{frequency}_S0"
        against_s0 = [results[(name, s)]["final"] - results[(synchronous, s)]["final"] for s in args.seeds
                      if name != synchronous and optimizer != "adamw" and results.get((name, s))
                      and results.get((synchronous, s))]
        s0_mean, s0_ci = mean_interval(against_s0)
        row = {"config": name, "optimizer": optimizer, "lr": lr, "staleness": staleness, "frequency": frequency,
               "publish": publish, "seeds": len(runs), "final_loss": final_mean, "final_loss_ci95": final_ci,
               "vs_adamw": diff_mean, "vs_adamw_ci95": diff_ci, "vs_s0": s0_mean, "vs_s0_ci95": s0_ci}
        for t in targets:
            reached = [steps_to_reach(r, t) for r in runs]
            reached = [s for s in reached if s is not None]
            m, ci = mean_interval(reached)
            tokens = runs[0]["summary"].get("tokens_per_step") if runs else None
            row[f"steps_to_{t}"] = m
            row[f"steps_to_{t}_ci95"] = ci
            row[f"tokens_to_{t}"] = m * tokens if m is not None and tokens else None
            row[f"reached_{t}"] = f"{len(reached)}/{len(runs)}"
        rows.append(row)
    write_tables(args, rows, targets)
    plot(args, rows, results, configs)
    print(f"wrote {args.out}/table.md, table.csv and plots/", file=sys.stderr)


def text(value, digits=4):
    if value is None:
        return ""
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def write_tables(args, rows, targets):
    columns = list(rows[0].keys()) if rows else []
    with open(os.path.join(args.out, "table.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r[c] is None else r[c] for c in columns])
    lines = [f"Model {args.model}, {args.steps} steps of batch {args.batch}, seeds {args.seeds}; validation loss "
             f"(nats per byte) at the end, mean ± 95% interval over the seeds run; steps to each target: mean ± "
             "interval over the seeds that reach it.", "",
             "| config | lr | seeds | final loss | vs AdamW (same seed) | vs S = 0 (same seed) | " +
             " | ".join(f"steps to {t}" for t in targets) + " |",
             "| --- | ---: | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in targets) + " |"]
    for r in rows:
        if not r["seeds"]:
            continue
        final = text(r["final_loss"]) + (f" ± {text(r['final_loss_ci95'], 2)}" if r["final_loss_ci95"] else "")
        cells = []
        for t in targets:
            m, ci = r[f"steps_to_{t}"], r[f"steps_to_{t}_ci95"]
            cells.append((text(m, 3) + (f" ± {text(ci, 2)}" if ci else "") if m is not None else "—") +
                         f" ({r[f'reached_{t}']})")
        versus = ("" if r["config"] == "adamw" or r["vs_adamw"] is None else
                  f"{r['vs_adamw']:+.4f}" + (f" ± {text(r['vs_adamw_ci95'], 2)}" if r["vs_adamw_ci95"] else ""))
        against_s0 = ("" if r["vs_s0"] is None else
                      f"{r['vs_s0']:+.4f}" + (f" ± {text(r['vs_s0_ci95'], 2)}" if r["vs_s0_ci95"] else ""))
        lines.append(f"| {r['config']} | {r['lr']:g} | {r['seeds']} | {final} | {versus} | {against_s0} | " +
                     " | ".join(cells) + " |")
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(args, rows, results, configs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(os.path.join(args.out, "plots"), exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    adamw = next((r for r in rows if r["config"] == "adamw" and r["seeds"]), None)
    if adamw:
        ax.axhline(adamw["final_loss"], color="k", linestyle=":", label="AdamW")
    for opt in args.optimizers:
        for f in args.frequencies:
            points = [r for r in rows if r["optimizer"] == opt and r["frequency"] == f and r["publish"] == "deterministic"
                      and r["seeds"]]
            if not points:
                continue
            points.sort(key=lambda r: r["staleness"])
            ax.errorbar([r["staleness"] for r in points], [r["final_loss"] for r in points],
                        yerr=[r["final_loss_ci95"] or 0.0 for r in points], marker="o", capsize=3,
                        label=f"{opt}, f = {f}")
    ax.set_xlabel("staleness bound S (steps)")
    ax.set_ylabel("final validation loss (mean, 95% interval)")
    ax.set_title(f"{args.model}: quality against staleness")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "plots", "staleness_quality.png"), dpi=120)
    plt.close(fig)
    # Mean curves over the seeds against steps and against the training's wall-clock (the sum of
    # the measured step times), one line per configuration.
    fig, (by_step, by_wall) = plt.subplots(1, 2, figsize=(13, 4.5))
    for name, *_ in configs:
        runs = [results.get((name, s)) for s in args.seeds]
        runs = [r for r in runs if r]
        if not runs:
            continue
        steps = runs[0]["steps"]
        same = [r for r in runs if r["steps"] == steps]
        loss = [statistics.fmean(v) for v in zip(*(r["loss"] for r in same))]
        wall = [statistics.fmean(v) for v in zip(*(r["wall"] for r in same))]
        by_step.plot(steps, loss, label=name)
        by_wall.plot(wall, loss, label=name)
    by_step.set_xlabel("step")
    by_wall.set_xlabel("training wall-clock (s, sum of step times, mean over seeds)")
    for ax in (by_step, by_wall):
        ax.set_ylabel("validation loss (mean over seeds)")
        ax.grid(alpha=0.3)
    by_step.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "plots", "validation_curves.png"), dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
