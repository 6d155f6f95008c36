#!/usr/bin/python3
"""The data-parallel plots of a study: step time against staleness, network bytes per rank, owned
against replicated refreshes, and a straggler against none.

Usage: distributed_plots.py STUDY_DIR

Reads STUDY_DIR/table.csv (one row per configuration: the columns config, fits, optimizer,
staleness, p50_step_s, p99_step_s, visible_optimizer_s and network_bytes; the data-parallel axes
nodes, units, sync_period, parallelism, refresh_sharing and straggler where the study varies
them) and writes STUDY_DIR/plots/{distributed_step_time,network_bytes,owners_vs_replicated,
straggler}.png, printing their paths. Every number comes from the table (per measured step).
Configurations that did not fit or failed are left out, with a note on stderr.

- distributed_step_time.png: one row of panels per optimizer; p50 step time, p99 step time and
  the mean visible optimizer time against the allowed staleness S, one line per setting of the
  other axes (nodes, sync period, ...), for the baseline runs: owned refreshes, no straggler.
- network_bytes.png: the bytes of one rank's collectives per step against S, one panel per
  optimizer, one line per setting (the owned/replicated and straggler variants included).
- owners_vs_replicated.png and straggler.png: for each configuration run both ways (every other
  setting equal), bars of p50 and p99 step time, visible optimizer time and network bytes side by
  side.
"""
import argparse
import csv
import os
import sys

import numpy

from plot_common import (InputProblem, PALETTE, boolean, byte_unit, empty_figure, number, plt,
                         read_csv, run_script, save_png, SecondsTicks)
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator  # after plot_common (Agg)

REQUIRED_COLUMNS = ["config", "fits", "optimizer", "staleness", "p50_step_s", "p99_step_s", "visible_optimizer_s",
                    "network_bytes"]
# The study axes that make a study data-parallel: a table with any of these columns gets these plots.
DISTRIBUTED_AXES = ("nodes", "units", "sync_period", "parallelism", "refresh_sharing", "straggler")
# The columns that tell one line of a plot from another (besides optimizer and staleness), in the
# order their values are named in a legend.
SERIES_COLUMNS = ("hw", "model", "placement", "nodes", "units", "sync_period", "parallelism", "refresh_sharing",
                  "straggler", "publish", "steps", "warmup_steps", "numerics", "precondition_frequency",
                  "max_precond_dim")
PLOTS = ("distributed_step_time", "network_bytes", "owners_vs_replicated", "straggler")
# What a run does when its row leaves an axis empty (asteria sim's defaults): so that a run that
# does not name a setting compares and reads as one that names its default.
SETTING_DEFAULTS = {"refresh_sharing": "owners", "sync_period": "1", "parallelism": "ddp"}
# What each --parallelism shards among the data-parallel ranks, as a legend names it.
PARALLELISM_TEXT = {
    "ddp": "replicated",
    "zero1": "sharded state",
    "zero2": "sharded state, gradients",
    "fsdp": "sharded state, gradients, weights",
}
# The step-time panels: (table column, panel title).
TIME_PANELS = (
    ("p50_step_s", "p50 step time"),
    ("p99_step_s", "p99 step time"),
    ("visible_optimizer_s", "visible optimizer time (mean)"),
)
# The bars of a comparison: (table column, panel title, unit kind).
COMPARISON_PANELS = (
    ("p50_step_s", "p50 step time", "seconds"),
    ("p99_step_s", "p99 step time", "seconds"),
    ("visible_optimizer_s", "visible optimizer time (mean)", "seconds"),
    ("network_bytes", "network per rank per step", "bytes"),
)
STALENESS_LABEL = "allowed staleness S (steps)"
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")


def is_distributed(header):
    """Whether a table with these columns is a data-parallel study."""
    return any(column in header for column in DISTRIBUTED_AXES)


def table_columns(table_path):
    """The column names in the header of table_path (a CSV file)."""
    if not os.path.isfile(table_path):
        raise InputProblem(f"{table_path}: file: expected a CSV file, found none")
    try:
        with open(table_path, newline="", encoding="utf-8") as handle:
            return next(csv.reader(handle), [])
    except OSError as error:
        raise InputProblem(f"{table_path}: file: expected a readable CSV file ({error.strerror or error})") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise InputProblem(f"{table_path}: file: expected UTF-8 CSV text ({error})") from None


def load_runs(study_dir):
    """The runs of STUDY_DIR/table.csv that fit, as dicts: 'config', 'settings' ({column: text}
    for the series columns present), 'optimizer', 'staleness' and the metrics as floats."""
    table_path = os.path.join(study_dir, "table.csv")
    rows = read_csv(table_path, REQUIRED_COLUMNS)
    runs = []
    for index, row in enumerate(rows, start=1):
        config = (row.get("config") or "").strip() or f"row {index}"
        if not boolean(row, "fits", table_path, index):
            shortfall = (row.get("shortfall") or "").strip()
            note = "run failed" if shortfall.startswith("run failed") else "did not fit"
            print(f"note: {config}: {note}; left out of the data-parallel plots", file=sys.stderr)
            continue
        run = {
            "config": config,
            "optimizer": row["optimizer"].strip(),
            "staleness": number(row, "staleness", table_path, index),
            "settings": {column: (row.get(column) or "").strip() or SETTING_DEFAULTS.get(column, "")
                         for column in SERIES_COLUMNS if column in row},
        }
        for column in REQUIRED_COLUMNS[4:]:
            value = number(row, column, table_path, index)
            if not numpy.isfinite(value) or value < 0:
                raise InputProblem(f"{table_path}: row {index}, column '{column}': expected a finite number >= 0, "
                                   f"found '{row[column].strip()}'")
            run[column] = value
        if run["staleness"] < 0:
            raise InputProblem(f"{table_path}: row {index}, column 'staleness': expected a whole number >= 0, "
                               f"found '{row['staleness'].strip()}'")
        runs.append(run)
    return runs


# ---------------------------------------------------------------------------------------------
# Naming the lines


def owned(settings):
    return settings.get("refresh_sharing", "") in ("", "owners")


def baseline(run):
    """Owned refreshes (asteria sim's default) and no straggler."""
    return owned(run["settings"]) and run["settings"].get("straggler", "") == ""


def setting_text(column, value):
    """How a legend names one setting's value: '16 nodes', 'K=5', 'rank 1 at 3x', ..."""
    if column == "nodes":
        return f"{value} node{'s' if value != '1' else ''}"
    if column == "units":
        return f"{value} GPU{'s' if value != '1' else ''}"
    if column == "sync_period":
        return f"K={value}"
    if column == "parallelism":
        value = value or "ddp"
        return f"{value} ({PARALLELISM_TEXT[value]})" if value in PARALLELISM_TEXT else value
    if column == "refresh_sharing":
        return f"{value or 'owners'} refresh"
    if column == "straggler":
        if not value:
            return "no straggler"
        rank, _, factor = value.partition(":")
        return f"rank {rank} {factor}x slower"
    if column in ("steps", "warmup_steps", "precondition_frequency", "max_precond_dim"):
        return f"{column.replace('_', ' ')} {value}"
    return value


def series_key(run, columns):
    return tuple(run["settings"].get(column, "") for column in columns)


def varying_columns(runs, ignore=()):
    """The series columns whose value differs between some of `runs`."""
    return [column for column in SERIES_COLUMNS if column not in ignore
            and len({run["settings"].get(column, "") for run in runs}) > 1]


def sort_value(text):
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def series_of(runs, columns):
    """[(label, key)] of the distinct settings of `columns` among the runs, in a stable order
    (numbers numerically), each labelled by the values that vary."""
    keys = sorted({series_key(run, columns) for run in runs}, key=lambda key: [sort_value(v) for v in key])
    labels = []
    for key in keys:
        parts = [setting_text(column, value) for column, value in zip(columns, key)]
        labels.append(", ".join(part for part in parts if part) or "all runs")
    return list(zip(labels, keys))


def colours_for(count):
    """`count` palette colours, in order (repeated past the palette's eight)."""
    return [PALETTE[index % len(PALETTE)] for index in range(count)]


def optimizers_of(runs):
    return list(dict.fromkeys(run["optimizer"] for run in runs))


# ---------------------------------------------------------------------------------------------
# Lines against staleness


def staleness_axis(axes, values):
    ticks = sorted(set(values))
    axes.xaxis.set_major_locator(FixedLocator(ticks))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    if ticks:
        span = max(ticks) - min(ticks)
        pad = max(0.5, 0.05 * span)
        axes.set_xlim(min(ticks) - pad, max(ticks) + pad)
    axes.set_xlabel(STALENESS_LABEL)


def lines_figure(runs, panels, title, empty_message, unit="seconds"):
    """One row of panels per optimizer, one panel per (column, title) of `panels`; in each, one
    line per series (the settings that vary besides optimizer and staleness) against S."""
    if not runs:
        return empty_figure(title, empty_message)
    optimizers = optimizers_of(runs)
    columns = varying_columns(runs)
    series = series_of(runs, columns)
    colours = colours_for(len(series))
    figure, grid = plt.subplots(len(optimizers), len(panels), figsize=(4.0 * len(panels) + 2.6,
                                                                         2.9 * len(optimizers) + 0.6),
                                squeeze=False)
    if unit == "bytes":
        largest = max((run[column] for run in runs for column, _ in panels), default=0.0)
        divisor, unit_name = byte_unit(largest)
    else:
        divisor, unit_name = 1.0, "s"
    handles = {}
    for row, optimizer in enumerate(optimizers):
        mine = [run for run in runs if run["optimizer"] == optimizer]
        for col, (column, panel_title) in enumerate(panels):
            axes = grid[row][col]
            for index, ((label, key), colour) in enumerate(zip(series, colours)):
                points = sorted((run["staleness"], run[column] / divisor) for run in mine
                                if series_key(run, columns) == key)
                if not points:
                    continue
                xs, ys = zip(*points)
                # Settings that change nothing draw the same line: each series has its own marker,
                # the earlier ones larger, so that a line drawn over another still shows both.
                (line,) = axes.plot(xs, ys, marker=MARKERS[index % len(MARKERS)],
                                    markersize=max(3.0, 8.0 - 1.2 * index), linewidth=1.5, color=colour,
                                    label=label, zorder=2 + index * 0.01)
                handles.setdefault(label, line)
            staleness_axis(axes, [run["staleness"] for run in runs])
            if unit == "bytes":
                axes.set_ylim(bottom=0.0)
            axes.yaxis.set_major_locator(MaxNLocator(nbins=5))
            if unit == "seconds":
                axes.yaxis.set_major_formatter(SecondsTicks())
            axes.set_ylabel(f"{panel_title} ({unit_name})" if unit == "bytes" else f"time ({unit_name})")
            axes.set_title(f"{optimizer}: {panel_title}")
            axes.grid(True, color="#dddddd", linewidth=0.6)
            axes.set_axisbelow(True)
    ordered = [handles[label] for label, _ in series if label in handles]
    figure.suptitle(title)
    figure.tight_layout(rect=(0.0, 0.0, 1.0, 0.96))
    figure.legend(ordered, [handle.get_label() for handle in ordered], loc="upper left",
                  bbox_to_anchor=(1.0, 0.93), frameon=False)
    return figure


def step_time_figure(runs):
    return lines_figure([run for run in runs if baseline(run)], TIME_PANELS,
                        "Step time and visible optimizer time against staleness (owned refreshes, no straggler)",
                        "no run with owned refreshes and no straggler fits")


def network_figure(runs):
    return lines_figure(runs, [("network_bytes", "network per rank per step")],
                        "Bytes of one rank's collectives per step (gradients, refresh results, weights)",
                        "no run fits", unit="bytes")


# ---------------------------------------------------------------------------------------------
# Two ways of running the same configuration


def comparison_pairs(runs, column, reference):
    """[(group label, {value: run})] of the configurations run with `reference` and at least one
    other value of `column`, every other setting equal; the values in first-seen order."""
    groups = {}
    for run in runs:
        others = tuple((c, v) for c, v in sorted(run["settings"].items()) if c != column)
        key = (run["optimizer"], run["staleness"], others)
        value = run["settings"].get(column, "")
        if column == "refresh_sharing" and value == "":
            value = "owners"
        groups.setdefault(key, {})[value] = run
    matched = {key: by_value for key, by_value in groups.items() if reference in by_value and len(by_value) > 1}
    if not matched:
        return [], []
    # Label each configuration by its optimizer, S and the settings that differ among the matches.
    members = [run for by_value in matched.values() for run in by_value.values()]
    differ = varying_columns(members, ignore=(column,))
    values = list(dict.fromkeys(value for by_value in matched.values() for value in by_value))
    values.remove(reference)
    values.insert(0, reference)
    pairs = []
    for (optimizer, staleness, _), by_value in matched.items():
        settings = by_value[reference]["settings"]
        rest = ", ".join(setting_text(c, settings.get(c, "")) for c in differ)
        pairs.append((f"{optimizer}, S={staleness:g}" + (f"\n{rest}" if rest else ""), by_value))
    return pairs, values


def comparison_figure(runs, column, reference, title, empty_message):
    pairs, values = comparison_pairs(runs, column, reference)
    if not pairs:
        return empty_figure(title, empty_message, size=(7.0, 2.5))
    colours = colours_for(len(values))
    width = 0.8 / len(values)
    positions = numpy.arange(len(pairs))
    figure, grid = plt.subplots(2, 2, figsize=(2.0 * max(4.0, 0.75 * len(pairs) * len(values) + 1.4) + 2.4, 7.4),
                                squeeze=False)
    handles = {}
    for axes, (metric, panel_title, unit) in zip(grid.flat, COMPARISON_PANELS):
        if unit == "bytes":
            divisor, unit_name = byte_unit(max(run[metric] for _, by in pairs for run in by.values()))
        else:
            divisor, unit_name = 1.0, "s"
        for index, (value, colour) in enumerate(zip(values, colours)):
            heights = [by[value][metric] / divisor if value in by else numpy.nan for _, by in pairs]
            label = setting_text(column, value)
            bars = axes.bar(positions + (index - (len(values) - 1) / 2.0) * width, heights, width * 0.92,
                            color=colour, label=label)
            handles.setdefault(label, bars)
        axes.xaxis.set_major_locator(FixedLocator(list(positions)))
        axes.set_xticklabels([label for label, _ in pairs], fontsize=7.5)
        axes.set_xlim(-0.6, len(pairs) - 0.4)
        axes.set_ylim(bottom=0.0)
        axes.yaxis.set_major_locator(MaxNLocator(nbins=5))
        if unit == "seconds":
            axes.yaxis.set_major_formatter(SecondsTicks())
            axes.set_ylabel(f"time ({unit_name})")
        else:
            axes.set_ylabel(f"bytes ({unit_name})")
        axes.set_title(panel_title)
        axes.grid(True, axis="y", color="#dddddd", linewidth=0.6)
        axes.set_axisbelow(True)
    figure.suptitle(title)
    figure.tight_layout(rect=(0.0, 0.0, 1.0, 0.95))
    figure.legend(list(handles.values()), list(handles), loc="upper left", bbox_to_anchor=(1.0, 0.93),
                  frameon=False)
    return figure


def sharing_figure(runs):
    return comparison_figure(runs, "refresh_sharing", "owners",
                             "Owned refreshes (one rank each, results broadcast) against replicated (every rank)",
                             "no configuration run both with owned and with replicated refreshes")


def straggler_figure(runs):
    return comparison_figure(runs, "straggler", "",
                             "A straggler (one rank's refresh workers slowed down) against none",
                             "no configuration run both with and without a straggler")


def distributed_figures(study_dir):
    """{plot name: figure} of the data-parallel plots of the study in study_dir; nothing is written."""
    runs = load_runs(study_dir)
    return {
        "distributed_step_time": step_time_figure(runs),
        "network_bytes": network_figure(runs),
        "owners_vs_replicated": sharing_figure(runs),
        "straggler": straggler_figure(runs),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study_dir")
    args = parser.parse_args()
    figures = distributed_figures(args.study_dir)
    for name in PLOTS:
        path = os.path.join(args.study_dir, "plots", name + ".png")
        save_png(figures[name], path)
        print(path)


if __name__ == "__main__":
    run_script(main)
