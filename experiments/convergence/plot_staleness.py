#!/usr/bin/python3
"""SOAP's validation loss at staleness S = 0, 1, 5 per seed: the runs of convergence.py (whose
S > 0 runs made plain Adam steps before the first eigenbasis) beside the runs in
results/staleness/ (no update before the first eigenbasis, the default).

Usage: plot_staleness.py RUNS_SEED1 RUNS_SEED2 RUNS_SEED3 STALENESS_DIR OUT_PNG
(RUNS_SEEDk: the --out directory of convergence.py for seed k).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import convergence  # noqa: E402


def main():
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    *seed_dirs, staleness_dir, out = sys.argv[1:]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
    for seed, (ax, runs) in enumerate(zip(axes, seed_dirs), start=1):
        curves = [("S=0", os.path.join(runs, "soap_lr0.003"), "-"),
                  ("S=1, Adam before the first basis", os.path.join(runs, "soap_lr0.003_S1"), ":"),
                  ("S=5, Adam before the first basis", os.path.join(runs, "soap_lr0.003_S5"), ":"),
                  ("S=1, no update before it", os.path.join(staleness_dir, f"soap_lr0.003_s1-seed{seed}"), "--"),
                  ("S=5, no update before it", os.path.join(staleness_dir, f"soap_lr0.003_s5-seed{seed}"), "--")]
        for label, directory, style in curves:
            r = convergence.load(directory)
            ax.plot(r["steps"], r["loss"], style, marker=".", label=f"{label}: {r['final']:.3f}")
        ax.set_title(f"SOAP lr 3e-3, seed {seed}")
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("validation loss (nats per byte)")
    fig.tight_layout()
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
