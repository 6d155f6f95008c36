#!/usr/bin/python3
"""Convergence study: a small byte-level GPT trained on the built-in corpus with AdamW, Shampoo,
SOAP and KL-Shampoo (each at the best learning rate of a small sweep), then SOAP at staleness
S = 0, 1 and 5, all on the same token budget (same steps, batch and batch order).

Writes under --out: one `asteria train` run per directory, table.md / table.csv, summary.json
(steps for SOAP to reach AdamW's final validation loss, final-loss difference S = 5 vs S = 0),
and plots/validation_loss.png (against steps and against wall-clock).

Usage: convergence.py [--asteria PATH] [--out DIR] [--steps N] [--batch B] [--eval-every N]
                      [--lrs adamw=3e-3,1e-2 ...] [--device cpu|cuda] [--jobs N] [--blas-threads N]
                      [--soap-staleness-lr LR] [--soap-second-moment permute,rotate]

--jobs runs that many trainings at once (each with --blas-threads OpenBLAS threads); with
--soap-staleness-lr the staleness runs start with the sweep instead of after it. Each
--soap-second-moment variant other than the reference's (permute) adds SOAP runs at S = 0, 1, 5
under that variant, named soap-<variant>_lr<LR>_S<S>.
"""
import concurrent.futures
import argparse
import csv
import json
import os
import subprocess
import sys
import time

DEFAULT_LRS = {
    "adamw": [1e-3, 3e-3, 1e-2],
    "shampoo": [1e-3, 3e-3, 1e-2],
    "soap": [1e-3, 3e-3, 1e-2],
    "kl-shampoo": [1e-3, 3e-3, 1e-2],
}


def parse_lrs(items):
    """OPTIMIZER=LR[,LR...] overrides; OPTIMIZER= (no rates) leaves that optimizer out."""
    lrs = dict(DEFAULT_LRS)
    for item in items or []:
        name, sep, values = item.partition("=")
        if name not in lrs or not sep:
            raise SystemExit(f"error: --lrs {item}: expected OPTIMIZER=LR[,LR...] with OPTIMIZER in {sorted(lrs)}")
        lrs[name] = [float(v) for v in values.split(",") if v]
    return lrs


def train_command(asteria, out, model, optimizer, lr, staleness, frequency, steps, batch, eval_every, eval_sequences,
                  seed, device, blas_threads, extra=()):
    """The `asteria train` command of one convergence run (one host worker, no progress lines)."""
    return [asteria, "train", "--model", model, "--optimizer", optimizer, "--lr", str(lr),
            "--staleness", str(staleness), "--precondition-frequency", str(frequency), "--steps", str(steps),
            "--batch", str(batch), "--eval-every", str(eval_every), "--eval-sequences", str(eval_sequences),
            "--seed", str(seed), "--host-workers", "1", "--blas-threads", str(blas_threads), "--device", device,
            "--no-progress", "--out", out, *extra]


def run(args, name, optimizer, lr, staleness, extra=()):
    out = os.path.join(args.out, name)
    summary_file = os.path.join(out, "summary.json")
    if os.path.exists(summary_file) and not args.rerun:
        return load(out)
    if args.no_run:
        print(f"  {name}: no results in {out} (--no-run), left out", file=sys.stderr)
        return None
    command = train_command(args.asteria, out, args.model, optimizer, lr, staleness, args.frequency, args.steps,
                            args.batch, args.eval_every, args.eval_sequences, args.seed, args.device,
                            args.blas_threads, extra)
    if args.max_corpus_bytes:
        command += ["--max-corpus-bytes", args.max_corpus_bytes]
    start = time.time()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"  {name}: failed ({result.returncode}): {result.stderr.strip()[-400:]}", file=sys.stderr)
        return None
    r = load(out)
    print(f"  {name}: final validation loss {r['final']:.4f} ({time.time() - start:.0f} s)", file=sys.stderr)
    return r


def load(out):
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    steps, wall, loss = [], [], []
    elapsed = 0.0
    with open(os.path.join(out, "steps.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            elapsed += float(row["step_time_s"])
            if row["validation_loss"]:
                steps.append(int(row["step"]))
                wall.append(elapsed)
                loss.append(float(row["validation_loss"]))
    # Runs recorded before the flat summary named the mean visible optimizer time differently.
    summary.setdefault("visible_optimizer_s", summary.get("mean_visible_optimizer_s", 0.0))
    return {"dir": out, "summary": summary, "steps": steps, "wall": wall, "loss": loss,
            "final": summary["final_validation_loss"]}


def steps_to_reach(r, target):
    """First step (linearly interpolated between evaluations) at which the validation loss is <= target."""
    previous = None
    for step, loss in zip(r["steps"], r["loss"]):
        if loss <= target:
            if previous is None:
                return float(step)
            (s0, l0) = previous
            return s0 + (step - s0) * (l0 - target) / (l0 - loss) if l0 != loss else float(step)
        previous = (step, loss)
    return None


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (by_step, by_wall) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, r in results:
        by_step.plot(r["steps"], r["loss"], marker=".", label=label)
        by_wall.plot(r["wall"], r["loss"], marker=".", label=label)
    by_step.set_xlabel("step")
    by_wall.set_xlabel("training wall-clock (s, sum of step times)")
    for ax in (by_step, by_wall):
        ax.set_ylabel("validation loss (nats per byte)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--asteria", default="build/release/apps/asteria/asteria")
    p.add_argument("--out", default="results/convergence")
    p.add_argument("--model", default="gpt-mini")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--eval-every", type=int, default=25)
    p.add_argument("--eval-sequences", type=int, default=64)
    p.add_argument("--frequency", type=int, default=10, help="precondition frequency")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-corpus-bytes", default="")
    p.add_argument("--lrs", nargs="*", help="OPTIMIZER=LR[,LR...] overrides of the sweep")
    p.add_argument("--rerun", action="store_true", help="rerun runs whose results exist")
    p.add_argument("--no-run", action="store_true",
                   help="train nothing: tables and plots from the runs already under --out (e.g. run elsewhere)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the model runs")
    p.add_argument("--jobs", type=int, default=1, help="trainings run at once")
    p.add_argument("--blas-threads", type=int, default=0, help="OpenBLAS threads per training (0: all cores)")
    p.add_argument("--soap-staleness-lr", type=float, help="SOAP lr of the staleness runs (default: the best)")
    p.add_argument("--soap-second-moment", default="permute",
                   help="comma-separated SOAP second-moment variants (permute, rotate) for the staleness runs")
    args = p.parse_args()
    if not args.no_run and not os.access(args.asteria, os.X_OK):
        raise SystemExit(f"error: {args.asteria}: not an executable (build the asteria target first)")
    os.makedirs(args.out, exist_ok=True)
    lrs = parse_lrs(args.lrs)

    variants = [v for v in args.soap_second_moment.split(",") if v]
    for v in variants:
        if v not in ("permute", "rotate"):
            raise SystemExit(f"error: --soap-second-moment {v}: expected permute or rotate")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))

    def staleness_jobs(soap_lr, include_reference_s0):
        jobs = {}
        for v in variants:
            extra = ("--soap-second-moment", v)
            prefix = "soap" if v == "permute" else f"soap-{v}"
            for s in (0, 1, 5):
                if v == "permute" and s == 0 and not include_reference_s0:
                    continue  # the sweep's run
                name = f"{prefix}_lr{soap_lr:g}" + (f"_S{s}" if s else "")
                jobs[(v, s)] = pool.submit(run, args, name, "soap", soap_lr, s, extra)
        return jobs

    sweep = {(optimizer, lr): pool.submit(run, args, f"{optimizer}_lr{lr:g}", optimizer, lr, 0)
             for optimizer, values in lrs.items() for lr in values}
    early = (staleness_jobs(args.soap_staleness_lr, args.soap_staleness_lr not in lrs.get("soap", []))
             if args.soap_staleness_lr else None)
    best = {}
    sweep_rows = []
    for (optimizer, lr), future in sweep.items():
        r = future.result()
        if r is None:
            continue
        sweep_rows.append((optimizer, lr, 0, r))
        if optimizer not in best or r["final"] < best[optimizer][1]["final"]:
            best[optimizer] = (lr, r)
    if "adamw" not in best or ("soap" not in best and not args.soap_staleness_lr):
        raise SystemExit("error: the study needs a successful AdamW run and a SOAP run (or --soap-staleness-lr)")
    soap_lr = args.soap_staleness_lr or best["soap"][0]
    jobs = early if early is not None else staleness_jobs(soap_lr, False)
    by_variant = {}
    for (v, s), future in jobs.items():
        r = future.result()
        if r is None:
            continue
        by_variant.setdefault(v, {})[s] = r
        sweep_rows.append(("soap" if v == "permute" else f"soap-{v}", soap_lr, s, r))
    reference_s0 = next((r for (o, lr, s, r) in sweep_rows if o == "soap" and lr == soap_lr and s == 0), None)
    if reference_s0 is not None and "permute" in variants:
        by_variant.setdefault("permute", {})[0] = reference_s0
    stale = by_variant.get("permute", {})
    pool.shutdown()

    adamw_final = best["adamw"][1]["final"]
    soap_steps = steps_to_reach(best["soap"][1], adamw_final) if "soap" in best else None
    # Every run's first step at AdamW's (best) final validation loss, by run directory.
    steps_to_adamw = {os.path.basename(r["dir"]): steps_to_reach(r, adamw_final) for (_, _, _, r) in sweep_rows}
    summary = {
        "model": args.model, "steps": args.steps, "batch": args.batch, "precondition_frequency": args.frequency,
        "best_lr": {k: v[0] for k, v in best.items()},
        "final_validation_loss": {k: v[1]["final"] for k, v in best.items()},
        "adamw_final_validation_loss": adamw_final,
        "soap_steps_to_adamw_final": soap_steps,
        "soap_fewer_steps_fraction": None if soap_steps is None else 1.0 - soap_steps / args.steps,
        "steps_to_adamw_final_by_run": steps_to_adamw,
        "soap_staleness_lr": soap_lr,
        "soap_final_by_staleness": {str(s): r["final"] for s, r in sorted(stale.items())},
        "soap_final_difference_s5_minus_s0": (stale[5]["final"] - stale[0]["final"])
        if 5 in stale and 0 in stale else None,
        "soap_final_by_second_moment_and_staleness": {
            v: {str(s): r["final"] for s, r in sorted(runs.items())} for v, runs in by_variant.items()},
        "device": args.device,
    }
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    with open(os.path.join(args.out, "table.csv"), "w", encoding="utf-8") as f:
        f.write("optimizer,lr,staleness,final_validation_loss,mean_step_s,p99_over_p50,mean_visible_optimizer_s\n")
        for optimizer, lr, s, r in sweep_rows:
            m = r["summary"]
            f.write(f"{optimizer},{lr:g},{s},{r['final']:.6f},{m['mean_step_s']:.6f},{m['p99_over_p50']:.4f},"
                    f"{m['visible_optimizer_s']:.6f}\n")
    lines = ["| optimizer | lr | S | final validation loss | mean step ms | p99/p50 | visible optimizer ms |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for optimizer, lr, s, r in sweep_rows:
        m = r["summary"]
        mark = " (best)" if s == 0 and best.get(optimizer, (None,))[0] == lr else ""
        lines.append(f"| {optimizer}{mark} | {lr:g} | {s} | {r['final']:.4f} | {m['mean_step_s'] * 1e3:.0f} | "
                     f"{m['p99_over_p50']:.2f} | {m['visible_optimizer_s'] * 1e3:.0f} |")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "table.md"), "w", encoding="utf-8") as f:
        f.write(table)
    curves = [(f"{k} lr {v[0]:g}", v[1]) for k, v in best.items()]
    for v, runs in by_variant.items():
        name = "soap" if v == "permute" else f"soap-{v}"
        curves += [(f"{name} S={s} lr {soap_lr:g}", r) for s, r in sorted(runs.items())
                   if not (v == "permute" and s == 0 and best.get("soap", (None,))[0] == soap_lr)]
    plot(curves, os.path.join(args.out, "plots", "validation_loss.png"))
    print(table)
    if "soap" not in best:
        print("no SOAP run at S = 0 (steps to AdamW's final loss: see the runs below)")
    elif soap_steps is None:
        print(f"SOAP did not reach AdamW's final validation loss {adamw_final:.4f} within {args.steps} steps")
    else:
        print(f"SOAP reaches AdamW's final validation loss {adamw_final:.4f} at step {soap_steps:.0f} of "
              f"{args.steps} ({100 * summary['soap_fewer_steps_fraction']:.0f}% fewer steps)")
    for run_name, steps in steps_to_adamw.items():
        if steps is not None:
            print(f"  {run_name}: AdamW's final validation loss at step {steps:.0f}")
    if summary["soap_final_difference_s5_minus_s0"] is not None:
        print(f"SOAP final validation loss, S = 5 minus S = 0: {summary['soap_final_difference_s5_minus_s0']:+.4f}")
    print(f"wrote {args.out}/table.md, table.csv, summary.json, plots/validation_loss.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
