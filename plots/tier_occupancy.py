#!/usr/bin/python3
"""Optimizer-state bytes per memory tier (and the refresh buffers beside them) over the steps of one or several runs.

Usage: tier_occupancy.py STEPS_CSV [STEPS_CSV...] OUT_PNG [--label L]...

Each STEPS_CSV is a run's steps.csv, with the columns step, warmup, state_device_bytes,
state_host_bytes, state_nvme_bytes (the optimizer state on each tier) and shadow_bytes (refresh
snapshot and result buffers, held in host memory). Runs are labelled with --label (one per run,
in order) or by the name of the directory holding their steps.csv.

One small panel per run, each with its own byte scale, stacking the optimizer state on the
device, in host memory and on NVMe at each step, so the outline is the whole optimizer state;
the refresh buffers sit above it as a hatched band of their own (they are not state: they come
and go with the refreshes in flight). A dashed line marks the first measured step when warm-up
steps come before it.
"""
import argparse
import math

import numpy

from plot_common import (OKABE_ITO, byte_unit, empty_figure, non_negative, plt, read_steps, run_labels, run_script,
                         save_png, split_config, split_runs_and_output, wrap_name)
from matplotlib.lines import Line2D  # after plot_common (Agg)
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

# (steps.csv column, legend label, colour), bottom of the stack first.
TIERS = (
    ("state_device_bytes", "device", OKABE_ITO["blue"]),
    ("state_host_bytes", "host memory", OKABE_ITO["orange"]),
    ("state_nvme_bytes", "NVMe", OKABE_ITO["reddish purple"]),
)
BUFFERS = ("shadow_bytes", "refresh buffers\n(host memory)", OKABE_ITO["yellow"])
REQUIRED_COLUMNS = ["step", "warmup"] + [column for column, _, _ in TIERS] + [BUFFERS[0]]
MEASURED_LINE = OKABE_ITO["black"]  # the first measured step
TITLE = "Optimizer state per memory tier, and the refresh buffers beside it"
COLUMNS_OF_PANELS = 4


def occupancy(steps, path):
    """{'step', 'warmup', tier column...} of read_steps(path, REQUIRED_COLUMNS), checked."""
    for column in REQUIRED_COLUMNS[2:]:
        non_negative(steps[column], column, path)
    return {column: steps[column] for column in REQUIRED_COLUMNS + ["measured"]}


def load_occupancy(path):
    return occupancy(read_steps(path, REQUIRED_COLUMNS), path)


def step_edges(steps):
    """Each step drawn over [step, next step); the last one over one more step."""
    steps = numpy.asarray(steps, dtype=float)
    last = steps[-1] + (steps[-1] - steps[-2] if len(steps) > 1 else 1.0)
    return numpy.append(steps, last)


def occupancy_figure(runs, title=TITLE):
    """runs: list of (label, occupancy(...)). Returns the figure.

    A study's runs hold from a few MiB to hundreds of GiB of state, so the runs get a panel each
    with its own scale and byte unit rather than lines on shared axes, where the small runs would
    lie flat on zero and runs with the same occupancy would hide each other; within a panel the
    tiers are stacked, as together they are the run's whole state. The step axis is shared."""
    if not runs:
        return empty_figure(title, "no configuration to show")
    columns = min(COLUMNS_OF_PANELS, len(runs))
    rows = math.ceil(len(runs) / columns)
    figure, panels = plt.subplots(rows, columns, figsize=(3.1 * columns, 0.4 + 2.25 * rows), sharex=True,
                                  squeeze=False, constrained_layout=True)
    flat = panels.ravel()
    for index, (axes, (label, run)) in enumerate(zip(flat, runs)):
        x = step_edges(run["step"])
        divisor, unit = byte_unit(float((sum(run[column] for column, _, _ in TIERS) + run[BUFFERS[0]]).max()))
        bottom = numpy.zeros(len(x))
        for column, tier, colour in TIERS:
            values = numpy.append(run[column], run[column][-1]) / divisor
            axes.fill_between(x, bottom, bottom + values, step="post", color=colour, linewidth=0, label=tier)
            bottom = bottom + values
        axes.step(x, bottom, where="post", color="#333333", linewidth=0.8, label="_total")
        buffers = numpy.append(run[BUFFERS[0]], run[BUFFERS[0]][-1]) / divisor
        if buffers.any():
            axes.fill_between(x, bottom, bottom + buffers, step="post", facecolor=BUFFERS[2], edgecolor="white",
                              hatch="////", linewidth=0, label="_buffers")
        top = float((bottom + buffers).max())
        measured = numpy.flatnonzero(run["measured"])
        if measured[0] > 0:  # warm-up steps first: mark where the measured steps begin
            axes.axvline(x[measured[0]], color=MEASURED_LINE, linestyle="--", linewidth=1.1, label="_measured")
        axes.set_ylim(0.0, top * 1.12 if top > 0 else 1.0)
        axes.yaxis.set_major_locator(MaxNLocator(nbins=4))
        axes.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 5, 10], integer=True))
        group, rest = split_config(label)
        axes.set_title(f"{group}\n{rest}" if group else wrap_name(label), fontsize=8.5)
        axes.set_ylabel(f"memory ({unit})")
        axes.grid(alpha=0.25)
        axes.set_axisbelow(True)
        if index + columns >= len(runs):  # nothing below: this panel carries the step axis
            axes.xaxis.set_tick_params(labelbottom=True)
            axes.set_xlabel("training step (#)")
    edges = [step_edges(run["step"]) for _, run in runs]
    flat[0].set_xlim(min(x[0] for x in edges), max(x[-1] for x in edges))  # shared by every panel
    for axes in flat[len(runs):]:
        axes.remove()
    handles = [Patch(color=colour, label=tier) for _, tier, colour in reversed(TIERS)]
    if any(run[BUFFERS[0]].any() for _, run in runs):
        handles.insert(0, Patch(facecolor=BUFFERS[2], edgecolor="white", hatch="////", label=BUFFERS[1]))
    if any(not run["measured"][0] for _, run in runs):
        handles.append(Line2D([], [], color=MEASURED_LINE, linestyle="--", linewidth=1.1,
                              label="first measured step\n(warm-up before it)"))
    figure.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    figure.suptitle(title)
    return figure


def render_tier_occupancy(runs, out_png, title=TITLE):
    """Draws occupancy_figure(runs) into out_png."""
    save_png(occupancy_figure(runs, title), out_png)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", metavar="STEPS_CSV... OUT_PNG")
    parser.add_argument("--label", action="append", default=[])
    args = parser.parse_args()
    steps_paths, out_png = split_runs_and_output(args.paths, "tier_occupancy.py")
    labels = run_labels(steps_paths, args.label, "tier_occupancy.py")
    render_tier_occupancy([(label, load_occupancy(path)) for label, path in zip(labels, steps_paths)], out_png)
    print(out_png)


if __name__ == "__main__":
    run_script(main)
