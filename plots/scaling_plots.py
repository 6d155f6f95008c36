#!/usr/bin/python3
"""The scaling plots of a data-parallel study: step time and throughput against the number
of nodes, and the visible optimizer time against staleness, per model, optimizer and parallelism.

Usage: scaling_plots.py STUDY_DIR

Reads STUDY_DIR/table.csv (one row per configuration: the columns config, fits, optimizer,
staleness, nodes, parallelism, p50_step_s, p99_step_s and visible_optimizer_s; where the table has
them, hw, model, refresh_on, exposed_communication_s and tokens_per_s) and writes
STUDY_DIR/plots/{scaling_step_time,scaling_throughput,visible_optimizer_vs_staleness}.png,
printing their paths. Every number comes from the table (per measured step). An empty
parallelism is ddp, an empty refresh_on host. Configurations that did not fit or failed are left
out, with a note on stderr; a line that misses a point has a gap there, also noted.

A method is an optimizer with its refresh mode: AdamW (no refresh; its staleness means nothing),
and for each matrix optimizer (soap, kl-shampoo, shampoo, ...) the native synchronous baseline
(refresh_on device: the refreshes run on the GPU stream within the step, S = 0) and Asteria at
each allowed staleness S (refresh_on host). The series of every plot are the parallelisms (ddp,
zero1, zero2, fsdp), each with its colour in all three plots.

- scaling_step_time.png: one row of panels per hw and model (at most six panels a row: a longer one
  wraps, keeping an optimizer's methods together), one panel per method (and setting of any other
  axis the study varies); p50 step time (solid, filled markers) and p99 step time (dashed, hollow
  markers) against the nodes, both axes logarithmic, the panels of a hw and model on one y range.
- scaling_throughput.png: the same panels; the tokens all units train on per second
  (tokens_per_s) against the nodes, with a dotted line of ideal linear scaling from each line's
  smallest node count. A table without tokens_per_s (written before it existed) skips this plot,
  with a note.
- visible_optimizer_vs_staleness.png: one row of panels per hw, model and matrix optimizer, one
  panel per node count; the mean visible optimizer time (solid, filled) and the mean exposed
  communication time (dashed, hollow) of the Asteria runs against S, and those of the native
  synchronous runs as stars at S = 0.

study_plots.py draws these plots after the data-parallel ones for a study whose table has a
parallelism column and a nodes column with at least two values.
"""
import argparse
import math
import os
import sys

import numpy

import distributed_plots
from plot_common import (InputProblem, PALETTE, boolean, empty_figure, number, read_csv, run_script, save_png,
                         split_config, SecondsTicks)
from scaling_layout import (finish, layout, legend_handles, log_values_axis, marker_size, new_figure, no_runs_panel,
                            nodes_axis, style_grid)
from matplotlib.ticker import MaxNLocator  # after plot_common (Agg)

REQUIRED_COLUMNS = ["config", "fits", "optimizer", "staleness", "nodes", "parallelism", "p50_step_s", "p99_step_s",
                    "visible_optimizer_s"]
# Read where the table has them: an older table lacks tokens_per_s (and exposed_communication_s).
OPTIONAL_METRICS = ("exposed_communication_s", "tokens_per_s")
PLOTS = ("scaling_step_time", "scaling_throughput", "visible_optimizer_vs_staleness")
# The parallelisms in the order of their colours (PALETTE[0], [1], ...); any other value takes the
# palette's next colours.
PARALLELISMS = ("ddp", "zero1", "zero2", "fsdp")
MARKERS = {"ddp": "o", "zero1": "s", "zero2": "D", "fsdp": "^"}
OTHER_MARKERS = ("v", "P", "X", "<", ">")
# Optimizers without a preconditioner refresh: one method each, whatever the staleness and refresh_on.
NO_REFRESH_OPTIMIZERS = ("adamw", "muon")
OPTIMIZER_TEXT = {"adamw": "AdamW", "muon": "Muon", "soap": "SOAP", "shampoo": "Shampoo", "kl-shampoo": "KL-Shampoo"}
REFRESH_SITES = ("host", "device")
# The columns that are not a setting of a run (or that the plots' axes, panels and lines show): any
# other column that differs between runs splits their panels (placement, sync_period, ...).
NOT_VARIANTS = {"config", "hw", "model", "optimizer", "staleness", "fits", "shortfall", "run_dir", "nodes", "units",
                "parallelism", "refresh_on", "p50_step_s", "p99_step_s", "p99_over_p50", "mean_step_s", "compute_s",
                "visible_optimizer_s", "exposed_communication_s", "refresh_wait_s", "state_move_wait_s",
                "max_staleness", "peak_device_bytes", "peak_host_bytes", "peak_nvme_bytes", "network_bytes",
                "tokens_per_s"}
STALENESS_LABEL = distributed_plots.STALENESS_LABEL


def is_scaling(header):
    """Whether a table with these columns can be a scaling study: it has a nodes and a
    parallelism column (is_scaling_study also asks for two node counts)."""
    return "nodes" in header and "parallelism" in header


def is_scaling_study(study_dir):
    """Whether STUDY_DIR/table.csv has a parallelism column and a nodes column with at least two
    distinct values: the studies study_plots.py draws these plots for."""
    table_path = os.path.join(study_dir, "table.csv")
    if not is_scaling(distributed_plots.table_columns(table_path)):
        return False
    counts = {(row.get("nodes") or "").strip() for row in read_csv(table_path, ["nodes"])}
    counts.discard("")
    return len(counts) >= 2


def note(text):
    print(f"note: {text}", file=sys.stderr)


def non_negative_number(row, column, path, index, allow_empty=False):
    value = number(row, column, path, index, allow_empty=allow_empty)
    if value is not None and (not math.isfinite(value) or value < 0):
        raise InputProblem(f"{path}: row {index}, column '{column}': expected a finite number >= 0, "
                           f"found '{row[column].strip()}'")
    return value


def load_runs(study_dir):
    """(runs, header): every row of STUDY_DIR/table.csv that names its node count, as dicts:
    'config', 'fits', 'note' (why it has no numbers), 'group' ('hw · model'), 'optimizer',
    'refresh' (host or device), 'staleness', 'nodes', 'parallelism', 'variant' (((column, value)
    ...) of the other settings) and, for a run that fit, the metrics as floats (None for an
    optional one the row leaves empty)."""
    table_path = os.path.join(study_dir, "table.csv")
    header = distributed_plots.table_columns(table_path)
    rows = read_csv(table_path, REQUIRED_COLUMNS)
    variant_columns = [column for column in header if column not in NOT_VARIANTS]
    runs = []
    for index, row in enumerate(rows, start=1):
        config = (row.get("config") or "").strip() or f"row {index}"
        fits = boolean(row, "fits", table_path, index)
        nodes = number(row, "nodes", table_path, index, allow_empty=True)
        if nodes is None:
            note(f"{config}: no node count (column 'nodes' empty); left out of the scaling plots")
            continue
        if not math.isfinite(nodes) or nodes < 1 or nodes != round(nodes):
            raise InputProblem(f"{table_path}: row {index}, column 'nodes': expected a whole number >= 1, "
                               f"found '{row['nodes'].strip()}'")
        staleness = non_negative_number(row, "staleness", table_path, index)
        refresh = (row.get("refresh_on") or "").strip() or "host"
        if refresh not in REFRESH_SITES:
            raise InputProblem(f"{table_path}: row {index}, column 'refresh_on': expected host or device, "
                               f"found '{refresh}'")
        hw, model = (row.get("hw") or "").strip(), (row.get("model") or "").strip()
        group = f"{hw} · {model}" if hw and model else (split_config(config)[0] or "all runs")
        run = {
            "config": config, "fits": fits, "note": "", "group": group, "optimizer": row["optimizer"].strip(),
            "refresh": refresh, "staleness": staleness, "nodes": nodes,
            "parallelism": row["parallelism"].strip() or "ddp",
            "variant": tuple((column, (row.get(column) or "").strip()
                              or distributed_plots.SETTING_DEFAULTS.get(column, "")) for column in variant_columns),
        }
        if not fits:
            shortfall = (row.get("shortfall") or "").strip()
            run["note"] = "run failed" if shortfall.startswith("run failed") else "did not fit"
            note(f"{config}: {run['note']}; left out of the scaling plots")
        else:
            for column in REQUIRED_COLUMNS[6:]:
                run[column] = non_negative_number(row, column, table_path, index)
            for column in OPTIONAL_METRICS:
                if column in header:
                    run[column] = non_negative_number(row, column, table_path, index, allow_empty=True)
        runs.append(run)
    # Only the settings that differ between runs split panels; the others go without saying. A
    # setting that follows the nodes (one value per node count in each hw and model: a strong
    # scaling's per-GPU batch and micro-batches) is part of the scaling, not a panel of its own.
    def follows_nodes(position):
        seen = {}
        for run in runs:
            key = (run["group"], run.get("nodes"))
            seen.setdefault(key, set()).add(run["variant"][position][1])
        return all(len(values) == 1 for values in seen.values())

    varying = [position for position, column in enumerate(variant_columns)
               if len({run["variant"][position][1] for run in runs}) > 1 and not follows_nodes(position)]
    for run in runs:
        run["variant"] = tuple(run["variant"][position] for position in varying)
    return runs, header


# ---------------------------------------------------------------------------------------------
# Methods, panels and series


def optimizer_text(optimizer):
    return OPTIMIZER_TEXT.get(optimizer, optimizer)


def refreshes(optimizer):
    return optimizer not in NO_REFRESH_OPTIMIZERS


def method_key(run):
    """(optimizer, refresh, S): AdamW's alone; native synchronous (device) runs at S = 0."""
    if not refreshes(run["optimizer"]):
        return (run["optimizer"], "", 0.0)
    if run["refresh"] == "device":
        return (run["optimizer"], "device", 0.0)
    return (run["optimizer"], "host", run["staleness"])


def method_text(key):
    optimizer, refresh, staleness = key
    if refresh == "":
        return optimizer_text(optimizer)
    if refresh == "device":
        return f"{optimizer_text(optimizer)}, native synchronous"
    return f"{optimizer_text(optimizer)}, Asteria S={staleness:g}"


def variant_text(variant):
    return ", ".join(distributed_plots.setting_text(column, value) for column, value in variant)


def ordered_methods(runs):
    """The methods of the runs: the optimizers without refreshes first, then each matrix
    optimizer's native synchronous runs and its Asteria runs by S, optimizers in first-seen order."""
    optimizers = list(dict.fromkeys(run["optimizer"] for run in runs))
    rank = {optimizer: (refreshes(optimizer), position) for position, optimizer in enumerate(optimizers)}
    keys = {method_key(run) for run in runs}
    return sorted(keys, key=lambda key: (rank[key[0]], key[1] != "device", key[2]))


def parallelism_order(runs):
    known = [value for value in PARALLELISMS if any(run["parallelism"] == value for run in runs)]
    others = sorted({run["parallelism"] for run in runs} - set(PARALLELISMS))
    return known + others


def parallelism_styles(runs):
    """{parallelism: (colour, marker, legend label)}: ddp, zero1, zero2 and fsdp the palette's first
    four colours whether or not the study has them, other values the next ones."""
    others = sorted({run["parallelism"] for run in runs} - set(PARALLELISMS))
    styles = {}
    for position, value in enumerate(list(PARALLELISMS) + others):
        marker = MARKERS.get(value) or OTHER_MARKERS[(position - len(PARALLELISMS)) % len(OTHER_MARKERS)]
        styles[value] = (PALETTE[position % len(PALETTE)], marker, distributed_plots.setting_text("parallelism", value))
    return styles


def along(xs, points):
    """The y of each x in `xs` from {x: y}; NaN (a gap in the line) where a point is missing."""
    return [points.get(x, numpy.nan) for x in xs]


def missing_reason(runs):
    """Why a line has no point where these runs (of that point) are: 'did not fit', 'run failed'."""
    notes = sorted({run["note"] for run in runs if run["note"]})
    return " / ".join(notes) if notes else "not in the study"


def panel_rows(runs):
    """[(group, [(method, variant), ...])] of the scaling figures, groups in first-seen order."""
    methods = ordered_methods(runs)
    variants = sorted({run["variant"] for run in runs}, key=lambda v: [distributed_plots.sort_value(x) for _, x in v])
    groups = list(dict.fromkeys(run["group"] for run in runs))
    rows = []
    for group in groups:
        mine = [run for run in runs if run["group"] == group]
        present = {(method_key(run), run["variant"]) for run in mine}
        rows.append((group, [(method, variant) for method in methods for variant in variants
                             if (method, variant) in present]))
    return rows


def point_table(runs, column, parallelisms, counts, report=None):
    """{parallelism: {nodes: value of column}} of the runs of one panel that fit and have a value.
    With report = (figure name, panel name), notes each gap (a node count of the panel's group that
    a line misses, and why) and each point that two runs give (the first is drawn)."""
    table = {}
    for parallelism in parallelisms:
        mine = [run for run in runs if run["parallelism"] == parallelism]
        if not mine:
            continue
        points, gaps = {}, []
        for count in counts:
            here = [run for run in mine if run["nodes"] == count]
            drawn = [run for run in here if run["fits"] and run.get(column) is not None]
            if drawn:
                if len(drawn) > 1 and report:
                    note(f"{report[0]}: {report[1]}, {parallelism} at {count:g} nodes: {len(drawn)} runs "
                         f"({', '.join(run['config'] for run in drawn)}); the first is drawn")
                points[count] = drawn[0][column]
            else:
                reason = f"no {column}" if any(run["fits"] for run in here) else missing_reason(here)
                gaps.append(f"{count:g} ({reason})")
        if gaps and report:
            note(f"{report[0]}: {report[1]}, {parallelism}: no point at {', '.join(gaps)} nodes; a gap in its line")
        table[parallelism] = points
    return table


def nodes_figure(runs, figure_name, title, metrics, label, legend_title, unit="seconds", ideal=False):
    """One row of panels per hw and model, one panel per method (and variant); per parallelism a
    line per metric of `metrics` ((column, line style, filled markers)) against the nodes, on log
    axes, the panels of a row sharing their y range so that methods compare at a glance. With
    `ideal`, a dotted line of linear scaling from each line's smallest node count."""
    rows = panel_rows(runs)
    styles = parallelism_styles(runs)
    order = parallelism_order(runs)
    figure_rows, columns, slots = layout(rows, block=lambda panel: panel[0][0])
    figure, grid = new_figure(figure_rows, columns)
    if unit == "tokens":
        largest = max((run[column] for run in runs if run["fits"] for column, _, _ in metrics
                       if run.get(column) is not None), default=0.0)
        units = ((1e9, "billion tokens/s"), (1e6, "million tokens/s"), (1e3, "thousand tokens/s"), (1.0, "tokens/s"))
        divisor, unit_name = next((scale, name) for scale, name in units if largest >= scale or scale == 1.0)
    else:
        divisor, unit_name = 1.0, "s"
    drawn_parallelisms, used, row_values = set(), set(), {}
    for grid_row, grid_column, group, (method, variant) in slots:
        axes = grid[grid_row][grid_column]
        used.add(axes)
        mine = [run for run in runs if run["group"] == group and method_key(run) == method
                and run["variant"] == variant]
        counts = sorted({run["nodes"] for run in runs if run["group"] == group})
        heading = [group, method_text(method)] + ([variant_text(variant)] if variant else [])
        axes.set_title("\n".join(heading))
        values = row_values.setdefault(group, [])
        for position, (column, linestyle, filled) in enumerate(metrics):
            report = (figure_name, " · ".join(heading)) if position == 0 else None
            for parallelism, points in point_table(mine, column, order, counts, report).items():
                if not points:
                    continue
                colour, marker, text = styles[parallelism]
                ys = [y / divisor for y in along(counts, points)]
                axes.plot(counts, ys, linestyle=linestyle, marker=marker, markersize=marker_size(order, parallelism),
                          linewidth=1.5,
                          color=colour, markerfacecolor=colour if filled else "white", markeredgecolor=colour,
                          label=text if position == 0 else f"_{column}: {text}", zorder=3 if filled else 2)
                values.extend(y for y in ys if not numpy.isnan(y))
                drawn_parallelisms.add(parallelism)
                if ideal:
                    start = min(points)
                    xs = [count for count in counts if count >= start]
                    reference = [points[start] / divisor * count / start for count in xs]
                    axes.plot(xs, reference, linestyle=":", linewidth=1.2, color=colour, label=f"_ideal: {text}",
                              zorder=1)
                    values.extend(reference)
        if not axes.get_lines():
            no_runs_panel(axes, "no run fits")
            continue
        nodes_axis(axes, counts)
        style_grid(axes)
    for grid_row, grid_column, group, _ in slots:
        axes = grid[grid_row][grid_column]
        if axes.get_lines():
            log_values_axis(axes, row_values[group], f"{label} ({unit_name})")
    handles = legend_handles(styles, [value for value in order if value in drawn_parallelisms])
    return finish(figure, grid, used, title, handles, legend_title)


def step_time_figure(runs):
    title = "Scaling: step time against the nodes"
    if not any(run["fits"] for run in runs):
        return empty_figure(title, "no run fits")
    return nodes_figure(runs, "scaling_step_time", title, (("p50_step_s", "-", True), ("p99_step_s", "--", False)),
                        "step time", "parallelism\n(p50: solid, filled markers;\n p99: dashed, hollow markers)")


def throughput_figure(runs):
    title = "Scaling: throughput (tokens per second, all units together) against the nodes"
    if not any(run["fits"] and run.get("tokens_per_s") is not None for run in runs):
        return empty_figure(title, "no run that fits has a tokens_per_s value", size=(7.0, 2.5))
    return nodes_figure(runs, "scaling_throughput", title, (("tokens_per_s", "-", True),), "throughput",
                        "parallelism\n(dotted: ideal linear scaling\n from the line's smallest node count)",
                        unit="tokens", ideal=True)


# ---------------------------------------------------------------------------------------------
# Against the staleness


def staleness_figure(runs, has_exposed):
    """One row of panels per hw, model and matrix optimizer (and variant), one panel per node
    count: visible optimizer and exposed communication time of the Asteria runs against S, per
    parallelism; the native synchronous runs as stars at S = 0."""
    title = "Visible optimizer time and exposed communication against the allowed staleness"
    if not has_exposed:
        title = "Visible optimizer time against the allowed staleness (the table has no exposed_communication_s)"
    matrix = [run for run in runs if refreshes(run["optimizer"])]
    if not any(run["fits"] for run in matrix):
        return empty_figure(title, "no run of a matrix optimizer (soap, kl-shampoo, shampoo, ...) fits",
                            size=(7.0, 2.5))
    styles = parallelism_styles(runs)
    order = parallelism_order(runs)
    metrics = [("visible_optimizer_s", "-", True)] + ([("exposed_communication_s", "--", False)] if has_exposed else [])
    optimizers = list(dict.fromkeys(run["optimizer"] for run in matrix))
    variants = sorted({run["variant"] for run in matrix}, key=lambda v: [distributed_plots.sort_value(x) for _, x in v])
    rows = []
    for group in dict.fromkeys(run["group"] for run in matrix):
        for optimizer in optimizers:
            for variant in variants:
                mine = [run for run in matrix if run["group"] == group and run["optimizer"] == optimizer
                        and run["variant"] == variant]
                if mine:
                    rows.append(((group, optimizer, variant), sorted({run["nodes"] for run in mine})))
    figure_rows, columns, slots = layout(rows)
    figure, grid = new_figure(figure_rows, columns)
    drawn_parallelisms, used, row_values = set(), set(), {}
    for grid_row, grid_column, row_key, count in slots:
        group, optimizer, variant = row_key
        axes = grid[grid_row][grid_column]
        used.add(axes)
        mine = [run for run in matrix if (run["group"], run["optimizer"], run["variant"]) == row_key]
        here = [run for run in mine if run["nodes"] == count]
        asteria = [run for run in here if run["refresh"] == "host"]
        native = [run for run in here if run["refresh"] == "device"]
        stalenesses = sorted({run["staleness"] for run in mine if run["refresh"] == "host"}
                             | ({0.0} if any(run["refresh"] == "device" for run in mine) else set()))
        head = f"{group}\n{optimizer_text(optimizer)}, {count:g} node{'s' if count != 1 else ''}"
        axes.set_title(head + (f"\n{variant_text(variant)}" if variant else ""))
        values = row_values.setdefault(row_key, [])
        for parallelism in order:
            colour, marker, text = styles[parallelism]
            lines = [run for run in asteria if run["parallelism"] == parallelism]
            fitting = [run for run in lines if run["fits"]]
            left_out = sorted(run["staleness"] for run in lines if not run["fits"])
            if left_out:
                note(f"visible_optimizer_vs_staleness: {head.replace(chr(10), ', ')}, {parallelism}: no point at "
                     f"S = {', '.join(f'{s:g}' for s in left_out)} ({missing_reason(lines)}); a gap in its line")
            for column, linestyle, filled in metrics:
                points = {run["staleness"]: run[column] for run in reversed(fitting) if run.get(column) is not None}
                if not points:
                    continue
                ys = along(stalenesses, points)
                axes.plot(stalenesses, ys, linestyle=linestyle, marker=marker,
                          markersize=marker_size(order, parallelism), linewidth=1.5,
                          color=colour, markerfacecolor=colour if filled else "white", markeredgecolor=colour,
                          label=text if filled else f"_{column}: {text}", zorder=3 if filled else 2)
                values.extend(y for y in ys if not numpy.isnan(y))
                drawn_parallelisms.add(parallelism)
            synchronous = [run for run in native if run["parallelism"] == parallelism]
            if synchronous and not any(run["fits"] for run in synchronous):
                note(f"visible_optimizer_vs_staleness: {head.replace(chr(10), ', ')}, {parallelism}: the native "
                     f"synchronous run {missing_reason(synchronous)}; no star")
            for run in [run for run in synchronous if run["fits"]][:1]:
                for column, _, filled in metrics:
                    if run.get(column) is None:
                        continue
                    axes.plot([0.0], [run[column]], linestyle="none", marker="*",
                              markersize=marker_size(order, parallelism) + 6.0, color=colour,
                              markerfacecolor=colour if filled else "white", markeredgecolor=colour,
                              label=f"_native {column}: {text}", zorder=4)
                    values.append(run[column])
                    drawn_parallelisms.add(parallelism)
        if not axes.get_lines():
            no_runs_panel(axes, "no run fits")
            continue
        distributed_plots.staleness_axis(axes, stalenesses)
        axes.set_xlabel(STALENESS_LABEL)
        style_grid(axes)
    for grid_row, grid_column, row_key, _ in slots:
        axes = grid[grid_row][grid_column]
        if axes.get_lines():
            top = max(row_values[row_key], default=0.0)
            axes.set_ylim(0.0, top * 1.08 if top > 0 else 1.0)
            axes.yaxis.set_major_locator(MaxNLocator(nbins=5))
            axes.yaxis.set_major_formatter(SecondsTicks())
            axes.set_ylabel("time per step (s)")
    handles = legend_handles(styles, [value for value in order if value in drawn_parallelisms])
    legend_title = "parallelism\n(visible optimizer: solid, filled;"
    legend_title += "\n exposed communication: dashed, hollow;" if has_exposed else ""
    if any(line.get_label().startswith("_native ") for axes in used for line in axes.get_lines()):
        legend_title += "\n stars at S = 0: native synchronous,\n refresh on the GPU stream"
    legend_title = legend_title.rstrip(";") + ")"
    return finish(figure, grid, used, title, handles, legend_title)


def scaling_figures(study_dir):
    """{plot name: figure} of the scaling plots of the study in study_dir, in PLOTS order;
    scaling_throughput is left out (with a note) when the table has no tokens_per_s column.
    Nothing is written."""
    runs, header = load_runs(study_dir)
    figures = {"scaling_step_time": step_time_figure(runs)}
    if "tokens_per_s" in header:
        figures["scaling_throughput"] = throughput_figure(runs)
    else:
        note("table.csv has no tokens_per_s column (written before it existed); scaling_throughput.png is skipped")
    if "exposed_communication_s" not in header:
        note("table.csv has no exposed_communication_s column; visible_optimizer_vs_staleness.png shows the "
             "visible optimizer time only")
    figures["visible_optimizer_vs_staleness"] = staleness_figure(runs, "exposed_communication_s" in header)
    return figures


def write_scaling_plots(study_dir):
    """Draws and writes the plots of scaling_figures to STUDY_DIR/plots/; returns their paths."""
    paths = []
    for name, figure in scaling_figures(study_dir).items():
        path = os.path.join(study_dir, "plots", name + ".png")
        save_png(figure, path)
        paths.append(path)
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study_dir")
    args = parser.parse_args()
    for path in write_scaling_plots(args.study_dir):
        print(path)


if __name__ == "__main__":
    run_script(main)
