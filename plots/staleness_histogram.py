#!/usr/bin/python3
"""How stale the preconditioners were: a histogram of each step's max_staleness, per run.

Usage: staleness_histogram.py STEPS_CSV [STEPS_CSV...] OUT_PNG [--label L]...

Each STEPS_CSV has a max_staleness column (steps since the oldest preconditioner in use was
computed). Runs are drawn as side-by-side bars, one bin per whole number of steps.
"""
import argparse
import math

from plot_common import (InputProblem, column_numbers, plt, read_csv, run_labels, run_script, save_png,
                         split_runs_and_output)
from matplotlib.ticker import MaxNLocator  # after plot_common, which selects the Agg backend

REQUIRED_COLUMNS = ["max_staleness"]


def load_staleness(path):
    values = column_numbers(read_csv(path, REQUIRED_COLUMNS), "max_staleness", path)
    for index, value in enumerate(values, start=1):
        if not math.isfinite(value) or value < 0:
            raise InputProblem(f"{path}: row {index}, column 'max_staleness': expected a count >= 0, found {value}")
    return values


def staleness_counts(values, largest):
    """Counts of steps with staleness 0, 1, ..., largest (values rounded to whole steps)."""
    counts = [0] * (largest + 1)
    for value in values:
        counts[int(round(value))] += 1
    return counts


def render_staleness_histogram(runs, out_png):
    """runs: list of (label, load_staleness(...))."""
    largest = max((int(round(value)) for _, values in runs for value in values), default=0)
    figure, axes = plt.subplots(figsize=(min(16.0, max(6.0, 0.5 * (largest + 1) + 3.0)), 4.5))
    bar_width = 0.8 / max(1, len(runs))
    for position, (label, values) in enumerate(runs):
        offset = (position - (len(runs) - 1) / 2.0) * bar_width
        counts = staleness_counts(values, largest)
        axes.bar([bin_value + offset for bin_value in range(largest + 1)], counts, width=bar_width, label=label)
    if largest <= 30:
        axes.set_xticks(range(largest + 1))
    else:  # one tick per bin would be unreadable
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("max staleness in the step (steps)")
    axes.set_ylabel("steps")
    axes.set_title("Preconditioner staleness per step")
    axes.grid(axis="y", alpha=0.3)
    if runs:
        axes.legend(fontsize="small")
    save_png(figure, out_png)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", metavar="STEPS_CSV... OUT_PNG")
    parser.add_argument("--label", action="append", default=[])
    args = parser.parse_args()
    steps_paths, out_png = split_runs_and_output(args.paths, "staleness_histogram.py")
    labels = run_labels(steps_paths, args.label, "staleness_histogram.py")
    render_staleness_histogram([(label, load_staleness(path)) for label, path in zip(labels, steps_paths)], out_png)
    print(out_png)


if __name__ == "__main__":
    run_script(main)
