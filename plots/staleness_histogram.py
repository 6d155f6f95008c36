#!/usr/bin/python3
"""How stale the preconditioners were: a histogram of each measured step's max_staleness, per run.

Usage: staleness_histogram.py STEPS_CSV [STEPS_CSV...] OUT_PNG [--label L]...

Each STEPS_CSV is a run's steps.csv, with the columns warmup and max_staleness (steps since the
oldest preconditioner in use was computed). Warm-up steps (warmup = 1) are left out. Runs are
labelled with --label (one per run, in order) or by the name of the directory holding their
steps.csv.

One row per run and one column per whole number of steps of staleness: each cell holds the
number of measured steps with that staleness, shaded by its share of the run's measured steps.
"""
import argparse

import numpy

from plot_common import (InputProblem, empty_figure, grouped_rows, plt, read_steps, run_labels, run_script,
                         save_png, split_runs_and_output, style_group_labels)
from matplotlib.colors import ListedColormap  # after plot_common (Agg)
from matplotlib.ticker import MaxNLocator

REQUIRED_COLUMNS = ["warmup", "max_staleness"]
TITLE = "Preconditioner staleness per measured step (warm-up excluded)"
# A single-hue sequential map (light to dark blue) reads the same with any colour vision and in
# grey print; it starts above white so that a single step stays visible against empty cells.
SHARE_COLOURS = ListedColormap(plt.get_cmap("Blues")(numpy.linspace(0.18, 1.0, 256)), name="share")
MOST_ANNOTATED_BINS = 30


def measured_staleness(steps, path):
    """The max_staleness of each measured step of read_steps(path, REQUIRED_COLUMNS)."""
    values = steps["max_staleness"]
    bad = numpy.flatnonzero(values < 0)
    if bad.size:
        raise InputProblem(f"{path}: row {bad[0] + 1}, column 'max_staleness': expected a count >= 0, "
                           f"found {values[bad[0]]:g}")
    return [float(value) for value in values[steps["measured"]]]


def load_staleness(path):
    return measured_staleness(read_steps(path, REQUIRED_COLUMNS), path)


def staleness_counts(values, largest):
    """Counts of steps with staleness 0, 1, ..., largest (values rounded to whole steps)."""
    counts = [0] * (largest + 1)
    for value in values:
        counts[int(round(value))] += 1
    return counts


def staleness_figure(runs, title=TITLE):
    """runs: list of (label, measured_staleness(...)). Returns the figure.

    A grid of counts (runs x staleness) rather than side-by-side bars: a study has more runs
    than a palette has distinct colours, and bars of a dozen runs per bin cannot be told apart."""
    if not runs:
        return empty_figure(title, "no configuration to show")
    largest = max((int(round(value)) for _, values in runs for value in values), default=0)
    rows = grouped_rows([label for label, _ in runs])
    counts = numpy.zeros((len(rows), largest + 1))
    shares = numpy.ma.masked_all((len(rows), largest + 1))
    for row, (kind, _, index) in enumerate(rows):
        if kind != "run":
            continue
        values = runs[index][1]
        counts[row] = staleness_counts(values, largest)
        shares[row] = 100.0 * counts[row] / max(1, len(values))
    shares = numpy.ma.masked_where(counts == 0, shares)  # empty cells stay white

    width = min(16.0, max(6.5, 0.45 * (largest + 1) + 4.5))
    figure, axes = plt.subplots(figsize=(width, max(3.0, 1.5 + 0.3 * len(rows))), constrained_layout=True)
    image = axes.imshow(shares, cmap=SHARE_COLOURS, vmin=0.0, vmax=100.0, aspect="auto", interpolation="nearest",
                        extent=(-0.5, largest + 0.5, len(rows) - 0.5, -0.5))
    if largest + 1 <= MOST_ANNOTATED_BINS:
        for row, (kind, _, _) in enumerate(rows):
            for column in range(largest + 1):
                if kind == "run" and counts[row, column] > 0:
                    dark = shares[row, column] > 55.0
                    axes.text(column, row, f"{int(counts[row, column])}", ha="center", va="center", fontsize=7.5,
                              color="white" if dark else "black")
        axes.set_xticks(range(largest + 1))
    else:  # one tick per bin would be unreadable
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xticks(numpy.arange(-0.5, largest + 1), minor=True)
    axes.set_yticks(numpy.arange(-0.5, len(rows)), minor=True)
    axes.grid(which="minor", color="white", linewidth=1.0)
    axes.tick_params(which="minor", length=0)
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([text for _, text, _ in rows])
    style_group_labels(axes, rows)
    axes.set_xlabel("max preconditioner staleness in the step (steps)")
    for spine in axes.spines.values():
        spine.set_visible(False)
    colour_bar = figure.colorbar(image, ax=axes, fraction=0.04, pad=0.02)
    colour_bar.set_label("share of the run's measured steps (%)")
    figure.suptitle(title)
    if largest + 1 <= MOST_ANNOTATED_BINS:
        axes.set_title("number in a cell: measured steps with that staleness", fontsize=8.5)
    return figure


def render_staleness_histogram(runs, out_png, title=TITLE):
    """Draws staleness_figure(runs) into out_png."""
    save_png(staleness_figure(runs, title), out_png)


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
