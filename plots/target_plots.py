#!/usr/bin/python3
"""Time and energy to target losses, and energy per step, from a study table.

Usage: target_plots.py STUDY_DIR

Reads STUDY_DIR/table.csv. Where it has time_to_loss_<L>_s columns (a study with a `targets`
section), draws time_to_target.png: per configuration, one bar per target loss (the simulated
time the run's tokens per second takes over the tokens its loss curve needs), and
energy_to_target.png the same in joules (energy_to_loss_<L>_j); a configuration without a curve
or that never reaches a loss has no bar there, named on stderr. Where it has an
energy_per_step_j column with values, draws energy_per_step.png: energy per measured step, every
unit together, one bar per configuration. Writes them to STUDY_DIR/plots/ and prints their
paths. study_plots.py draws them for every study that has the columns.

Where STUDY_DIR has loss_curves.csv (written by a study with targets), draws loss_vs_time.png:
the loss against time per configuration, a solid line where the run trained and the time is its
own simulated clock, dashed where the time is the curve's tokens over the run's simulated tokens
per second (the projection).
"""
import argparse
import os
import re
import sys

from plot_common import InputProblem, boolean, empty_figure, number, read_csv, run_script, save_png, wrap_name

TIME = re.compile(r"^time_to_loss_(.+)_s$")
ENERGY = re.compile(r"^energy_to_loss_(.+)_j$")


def table_path(study_dir):
    return os.path.join(study_dir, "table.csv")


def target_losses(header, pattern):
    """[(loss text, column)] of the columns matching `pattern`, in table order."""
    return [(m.group(1), c) for c in header for m in [pattern.match(c)] if m]


def is_target_study(header):
    return bool(target_losses(header, TIME))


def has_energy(rows):
    return any((row.get("energy_per_step_j") or "").strip() for row in rows)


def bars_figure(rows, path, columns, title, ylabel):
    """Grouped bars: configurations along x, one bar per (label, column)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    kept = []
    for index, row in enumerate(rows, start=1):
        if not boolean(row, "fits", path, index):
            print(f"{row['config']}: did not fit, left out", file=sys.stderr)
            continue
        values = [number(row, column, path, index, allow_empty=True) for _, column in columns]
        for (label, _), value in zip(columns, values):
            if value is None:
                print(f"{row['config']}: no value for {label}", file=sys.stderr)
        if any(v is not None for v in values):
            kept.append((row["config"], values))
    if not kept:
        return empty_figure(title, "no configuration has a value")
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(kept) * max(1, len(columns)) ** 0.5), 4.5))
    width = 0.8 / len(columns)
    for k, (label, _) in enumerate(columns):
        xs = [i + (k - (len(columns) - 1) / 2) * width for i in range(len(kept))]
        heights = [values[k] if values[k] is not None else 0.0 for _, values in kept]
        axes.bar(xs, heights, width, label=label)
    axes.set_xticks(range(len(kept)))
    axes.set_xticklabels([wrap_name(config, 22) for config, _ in kept], fontsize=6, rotation=0)
    axes.set_ylabel(ylabel)
    axes.set_yscale("log")
    axes.set_title(title)
    axes.grid(True, axis="y", alpha=0.3)
    if len(columns) > 1:
        axes.legend(fontsize=7)
    figure.tight_layout()
    return figure


def loss_vs_time_figure(path):
    """Loss against time, one line per configuration of loss_curves.csv."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = read_csv(path, ["config", "kind", "time_s", "loss"])
    lines = {}
    for index, row in enumerate(rows, start=1):
        if row["kind"] not in ("simulated", "projected"):
            raise InputProblem(f"{path}: row {index}, column 'kind': expected simulated or projected, "
                               f"found '{row['kind']}'")
        line = lines.setdefault(row["config"], (row["kind"], [], []))
        line[1].append(number(row, "time_s", path, index))
        line[2].append(number(row, "loss", path, index))
    title = "loss against time: solid, the run's own (simulated); dashed, projected"
    if not lines:
        return empty_figure(title, "no run has a loss curve")
    figure, axes = plt.subplots(figsize=(8.0, 5.0))
    for config, (kind, times, losses) in lines.items():
        # A curve's first point may sit at time 0: not drawable on a log axis.
        points = [(t, l) for t, l in zip(times, losses) if t > 0.0]
        axes.plot([t for t, _ in points], [l for _, l in points], "-" if kind == "simulated" else "--",
                  marker="." if kind == "simulated" else None, label=wrap_name(config, 48))
    axes.set_xscale("log")
    axes.set_xlabel("time (s, log)")
    axes.set_ylabel("loss")
    axes.set_title(title, fontsize=9)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=6)
    figure.tight_layout()
    return figure


def target_figures(study_dir):
    """{plot name: figure} of what the table holds."""
    path = table_path(study_dir)
    rows = read_csv(path, ["config", "fits"])
    header = list(rows[0].keys()) if rows else []
    figures = {}
    times = target_losses(header, TIME)
    if times:
        figures["time_to_target"] = bars_figure(rows, path, [(f"loss {l}", c) for l, c in times],
                                                "simulated time to each target loss", "seconds (log)")
        energies = target_losses(header, ENERGY)
        figures["energy_to_target"] = bars_figure(rows, path, [(f"loss {l}", c) for l, c in energies],
                                                  "energy to each target loss, every GPU together", "joules (log)")
    curves = os.path.join(study_dir, "loss_curves.csv")
    if os.path.isfile(curves):
        figures["loss_vs_time"] = loss_vs_time_figure(curves)
    if "energy_per_step_j" in header and has_energy(rows):
        figures["energy_per_step"] = bars_figure(rows, path, [("energy per step", "energy_per_step_j")],
                                                 "energy per measured step, every GPU together", "joules (log)")
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study_dir")
    args = parser.parse_args()
    for name, figure in target_figures(args.study_dir).items():
        out = os.path.join(args.study_dir, "plots", name + ".png")
        save_png(figure, out)
        print(out)


if __name__ == "__main__":
    run_script(main)
