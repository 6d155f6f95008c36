#!/usr/bin/python3
"""The panel grid and axes of the scaling plots (scaling_plots.py): where each panel goes, the
figure's title and legend, the nodes axis (log 2, the node counts as ticks) and log value axes
whose ticks read as numbers."""
import itertools
import math
import textwrap

import matplotlib.lines

from plot_common import plt, SecondsTicks
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator  # after plot_common (Agg)

MAX_COLUMNS = 6  # panels per row of a figure; more wrap onto the next row
NODES_LABEL = "nodes (count)"


def layout(rows, block=lambda panel: None):
    """Panel positions for rows of panels [(row key, [panel key, ...])], at most MAX_COLUMNS a row:
    (figure rows, columns, [(grid row, grid column, row key, panel key)]). A longer row wraps,
    between blocks of panels (consecutive panels with the same block(panel): one optimizer's
    methods) where a block fits on a row of its own."""
    columns = min(MAX_COLUMNS, max((len(panels) for _, panels in rows), default=1)) or 1
    slots, grid_row = [], 0
    for row_key, panels in rows:
        row, column = grid_row, 0
        blocks = [list(members) for _, members in itertools.groupby(panels, key=block)]
        for members in blocks:
            if column and column + len(members) > columns:
                row, column = row + 1, 0
            for panel in members:
                if column == columns:
                    row, column = row + 1, 0
                slots.append((row, column, row_key, panel))
                column += 1
        grid_row = row + 1
    return grid_row, max((column for _, column, _, _ in slots), default=0) + 1, slots


def new_figure(figure_rows, columns):
    figure, grid = plt.subplots(figure_rows, columns, figsize=(3.3 * columns + 0.6, 2.9 * figure_rows + 0.7),
                                squeeze=False)
    return figure, grid


def finish(figure, grid, used, title, handles, legend_title):
    """Hides unused panels, lays out, titles and puts the legend right of the panels."""
    for axes in grid.flat:
        if axes not in used:
            axes.set_axis_off()
    # A title wider than the panels wraps (it would run into the legend).
    title = "\n".join(textwrap.wrap(title, width=max(40, int(figure.get_figwidth() * 10.5))))
    height = figure.get_figheight()
    top = 1.0 - (0.24 + 0.19 * (title.count("\n") + 1)) / height
    figure.suptitle(title)
    figure.tight_layout(rect=(0.0, 0.0, 1.0, top))
    figure.legend(handles, [handle.get_label() for handle in handles], loc="upper left", bbox_to_anchor=(1.0, top),
                  frameon=False, title=legend_title, alignment="left")
    return figure


def marker_size(order, parallelism):
    """Parallelisms that change nothing draw the same line: the earlier ones have larger markers, so
    that a line drawn over another still shows both."""
    return max(3.5, 7.5 - 1.3 * order.index(parallelism))


def legend_handles(styles, values):
    return [matplotlib.lines.Line2D([], [], color=styles[value][0], marker=styles[value][1], linewidth=1.5,
                                    markersize=6, label=styles[value][2]) for value in values]


def style_grid(axes):
    axes.grid(True, which="major", color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)


def nodes_axis(axes, counts):
    ticks = sorted(set(counts))
    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_locator(FixedLocator(ticks))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.set_xlim(min(ticks) / 2 ** 0.35, max(ticks) * 2 ** 0.35)
    axes.set_xlabel(NODES_LABEL)


def log_ticks(low, high):
    """Tick values in [low, high] (both > 0) for a log axis: powers of ten, or 1-2-5, or finer
    steps, whichever first gives at least three; on a range narrower than that, evenly spaced."""
    for mantissas in ((1.0,), (1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 5.0, 7.0),
                      (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)):
        ticks = [float(f"{mantissa * 10.0 ** exponent:.6g}")
                 for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
                 for mantissa in mantissas]
        ticks = [tick for tick in ticks if low <= tick <= high]
        if len(ticks) >= 3:
            return ticks
    return [float(f"{tick:.6g}") for tick in MaxNLocator(nbins=4).tick_values(low, high) if low <= tick <= high]


def log_values_axis(axes, values, label):
    """A log y axis over `values` (> 0), its ticks read as 3-significant-figure numbers."""
    values = [value for value in values if value is not None and value > 0 and math.isfinite(value)]
    axes.set_yscale("log")
    axes.yaxis.set_minor_locator(NullLocator())
    axes.yaxis.set_major_formatter(SecondsTicks())
    if values:
        low, high = min(values) / 1.25, max(values) * 1.25
        axes.set_ylim(low, high)
        axes.yaxis.set_major_locator(FixedLocator(log_ticks(low, high)))
    axes.set_ylabel(label)


def no_runs_panel(axes, text):
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes, fontsize=8, color="#555555")
    axes.set_xticks([])
    axes.set_yticks([])
