"""Shared pieces of check_plots.py and check_distributed_plots.py: synthetic studies, statistics
computed independently of the plotting code, and readers of what a figure drew (its series,
colours, legends, tick labels)."""
import csv
import math
import os
import re
import struct
import subprocess
import sys

import matplotlib.colors
import matplotlib.image
import numpy

import plot_common  # noqa: F401  (selects the Agg backend before pyplot is used)
import staleness_histogram  # noqa: F401
import step_breakdown  # noqa: F401
import study_plots  # noqa: F401

# The plotting scripts under test: where check_plots.py found them.
PLOTS_DIR = os.path.dirname(os.path.abspath(plot_common.__file__))
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
GIB = 1024 ** 3

TABLE_COLUMNS = [
    "config", "hw", "model", "optimizer", "placement", "staleness", "fits", "p50_step_s", "p99_step_s",
    "p99_over_p50", "mean_step_s", "compute_s", "visible_optimizer_s", "exposed_communication_s", "refresh_wait_s",
    "state_move_wait_s", "max_staleness", "peak_device_bytes", "peak_host_bytes", "peak_nvme_bytes", "shortfall", "run_dir", "steps",
]
STEPS_COLUMNS = [
    "step", "warmup", "step_time_s", "compute_s", "visible_optimizer_s", "exposed_communication_s", "refresh_wait_s",
    "state_move_wait_s", "optimizer_device_s", "refresh_backlog", "max_staleness", "refreshes_submitted", "refreshes_published",
    "shadow_bytes", "resident_device_bytes", "resident_host_bytes", "resident_nvme_bytes",
    "state_device_bytes", "state_host_bytes", "state_nvme_bytes",
    "moved_device_host_bytes", "moved_host_device_bytes", "moved_host_nvme_bytes", "moved_nvme_host_bytes",
    "moved_device_nvme_bytes", "moved_nvme_device_bytes", "extra_column_to_ignore",
]
# Warm-up steps of the synthetic runs are outliers in every column a plot reads: any of them
# counted would move the p50/p99, the shares and the histogram.
WARMUP_STEP_TIME = 5000.0
WARMUP_REFRESH_WAIT = 4000.0
WARMUP_STALENESS = 9

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}", file=sys.stderr)
    return condition


# ---------------------------------------------------------------------------------------------
# Synthetic studies


def write_csv(path, columns, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)


def synthetic_steps(scale, warmup, measured, staleness_cycle, device_gib, offload_from):
    """Rows of a steps.csv: `warmup` outlier warm-up steps, then `measured` steps whose times
    grow with the step (distinct order statistics), every 5th one with a refresh wait; the state
    moves half off the device at step `offload_from`."""
    rows = []
    for step in range(1, warmup + measured + 1):
        warm = step <= warmup
        index = step - warmup - 1
        compute = 0.5 * scale
        refresh = WARMUP_REFRESH_WAIT if warm else (0.4 * scale if index % 5 == 4 else 0.0)
        move = 0.05 * scale
        other = (0.1 + 0.01 * index) * scale if not warm else 0.1 * scale
        visible = other + refresh + move
        exposed = 0.02 * scale * (index % 3)  # collectives the step did not hide
        step_time = WARMUP_STEP_TIME if warm else compute + visible + exposed
        staleness = WARMUP_STALENESS if warm else index % staleness_cycle
        moved = step >= offload_from
        device = device_gib * GIB // (2 if moved else 1)
        host = device_gib * GIB // 4 if moved else 0
        nvme = device_gib * GIB // 4 if moved else 0
        shadow = device_gib * GIB // 8 if moved and step % 2 == 0 else 0  # refresh buffers, not state
        rows.append({
            "step": step, "warmup": 1 if warm else 0, "step_time_s": step_time, "compute_s": compute,
            "visible_optimizer_s": visible, "exposed_communication_s": exposed, "refresh_wait_s": refresh, "state_move_wait_s": move,
            "optimizer_device_s": other, "refresh_backlog": 0, "max_staleness": staleness,
            "refreshes_submitted": 0, "refreshes_published": 0, "shadow_bytes": shadow,
            "resident_device_bytes": device, "resident_host_bytes": host + shadow, "resident_nvme_bytes": nvme,
            "state_device_bytes": device, "state_host_bytes": host, "state_nvme_bytes": nvme,
            "moved_device_host_bytes": 0, "moved_host_device_bytes": 0, "moved_host_nvme_bytes": 0,
            "moved_nvme_host_bytes": 0, "moved_device_nvme_bytes": 0, "moved_nvme_device_bytes": 0,
            "extra_column_to_ignore": "x",
        })
    return rows


# (config, fits, shortfall, steps-arguments or None)
SMALL_STUDY = [  # the longer run first: every run's steps must fit on the shared step axis
    ("gh200_tiny_soap_nvme_s4", True, "", dict(scale=200.0, warmup=2, measured=40, staleness_cycle=5,
                                               device_gib=12, offload_from=10)),
    ("gh200_tiny_soap_host_s2", True, "", dict(scale=1.0, warmup=3, measured=20, staleness_cycle=3,
                                               device_gib=8, offload_from=5)),
    ("gh200_tiny_soap_device_s0", False, "device 1.0 GiB short", None),
]


def many_runs_study():
    """14 runs in 3 groups whose step times span 1e-4 s to 1e3 s."""
    study = []
    for group, (hw, model) in enumerate((("gb10", "olmo-1b"), ("gh200-480gb", "olmo2-7b"), ("h100", "tiny"))):
        for index, placement in enumerate(("device", "host", "tiered", "nvme", "host-pinned")[: 5 - group % 2]):
            scale = 10.0 ** (-4 + (group * 5 + index) * 7.0 / 13.0)
            study.append((f"{hw}_{model}_kl-shampoo_{placement}_s{index}", True, "",
                          dict(scale=scale, warmup=2, measured=30, staleness_cycle=index + 1,
                               device_gib=1 + group * 40, offload_from=4)))
    return study


def make_study(root, study=SMALL_STUDY, table_columns=TABLE_COLUMNS, drop_steps_column=None, edit_steps=None):
    """table.csv and runs/<config>/steps.csv; returns {config: steps rows}."""
    table_rows, all_steps = [], {}
    for config, fits, shortfall, arguments in study:
        run_dir = f"runs/{config}"
        values = {column: "" for column in TABLE_COLUMNS}
        values.update(config=config, hw=config.split("_")[0], model=config.split("_")[1], optimizer="soap",
                      placement="host", staleness=0, fits="true" if fits else "false", shortfall=shortfall,
                      run_dir=run_dir, steps=20)
        table_rows.append([values[column] for column in table_columns])
        if arguments is None:
            continue
        rows = synthetic_steps(**arguments)
        all_steps[config] = rows
        columns = [column for column in STEPS_COLUMNS if column != drop_steps_column]
        lines = [[row[column] for column in columns] for row in rows]
        if edit_steps:
            edit_steps(columns, lines)
        write_csv(os.path.join(root, run_dir, "steps.csv"), columns, lines)
    write_csv(os.path.join(root, "table.csv"), table_columns, table_rows)
    return all_steps


def percentile(values, q):
    """Linear interpolation between order statistics (written out, not numpy's)."""
    ordered = sorted(values)
    rank = q / 100.0 * (len(ordered) - 1)
    low = int(math.floor(rank))
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def close(a, b, tolerance=1e-9):
    return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))


# ---------------------------------------------------------------------------------------------
# What a figure draws


def run_rows(axes):
    """{row position: configuration text} of the run rows (heading rows are bold)."""
    return {tick: label.get_text() for tick, label in zip(axes.get_yticks(), axes.get_yticklabels())
            if label.get_fontweight() not in ("bold", 700)}


def breakdown_drawing(figure):
    """{config row text: {'p50': x, 'mean': x, 'p99': x, shares by legend label}} as drawn."""
    times, parts = [axes for axes in figure.axes if axes.get_xlabel()][:2]
    rows = run_rows(times)
    drawn = {text: {} for text in rows.values()}
    for line in times.get_lines():
        if line.get_label() in ("p50", "mean", "p99"):
            for x, y in zip(line.get_xdata(), line.get_ydata()):
                drawn[rows[round(y)]][line.get_label()] = float(x)
    for container in parts.containers:
        for patch in container.patches:
            y = round(patch.get_y() + patch.get_height() / 2.0)
            drawn[rows[y]][container.get_label()] = patch.get_width()
    return drawn


def histogram_drawing(figure):
    """(number of staleness columns, {config row text: [count per column]}) from the cell texts."""
    axes = next(axes for axes in figure.axes if axes.images)
    image = axes.images[0]
    columns = image.get_array().shape[1]
    rows = run_rows(axes)
    counts = {text: [0] * columns for text in rows.values()}
    for text in axes.texts:
        x, y = text.get_position()
        counts[rows[round(y)]][int(round(x))] = int(text.get_text())
    return columns, counts


# ---------------------------------------------------------------------------------------------
# How a figure draws


def legends(figure):
    found = list(figure.legends)
    found += [axes.get_legend() for axes in figure.axes if axes.get_legend() is not None]
    return found


def handle_colour(handle):
    if hasattr(handle, "get_markerfacecolor") and handle.get_linestyle() in ("None", "none", "", " "):
        return matplotlib.colors.to_rgb(handle.get_markerfacecolor())
    if hasattr(handle, "get_color") and not hasattr(handle, "get_facecolor"):
        return matplotlib.colors.to_rgb(handle.get_color())
    colour = handle.get_facecolor()
    if isinstance(colour, numpy.ndarray) and colour.ndim == 2:
        colour = colour[0]
    return matplotlib.colors.to_rgb(colour)


def series_colours(figure):
    """[(legend label, RGB)] of every legend entry of the figure."""
    entries = []
    for legend in legends(figure):
        for handle, text in zip(legend.legend_handles if hasattr(legend, "legend_handles") else legend.legendHandles,
                                legend.get_texts()):
            entries.append((text.get_text(), handle_colour(handle)))
    return entries


def overlaps(a, b, slack=1.0):
    return a.x0 < b.x1 - slack and b.x0 < a.x1 - slack and a.y0 < b.y1 - slack and b.y0 < a.y1 - slack


def visible_tick_labels(axis):
    if not axis.get_visible():
        return []
    return [label for label in axis.get_ticklabels(which="both") if label.get_visible() and label.get_text()]


UNIT = re.compile(r"\(([^()]+)\)\s*$")


def is_number(text):
    try:
        float(text.replace("\u2212", "-"))  # matplotlib's minus sign
        return True
    except ValueError:
        return False


def check_figure_style(figure, name):
    """Properties every plot must have."""
    renderer = figure.canvas.get_renderer()
    figure.canvas.draw()
    axes_boxes = [axes.get_window_extent(renderer) for axes in figure.axes]

    # Titles.
    titles = [text.get_text() for text in figure.texts] + [axes.get_title() for axes in figure.axes]
    check(any(title.strip() for title in titles), f"{name}: no title")

    # Legends outside every axes' data area, and clear of tick and axis labels.
    texts = []
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            texts += visible_tick_labels(axis)
            if axis.label.get_text():
                texts.append(axis.label)
        texts += [text for text in axes.texts if text.get_visible() and text.get_text()]
    for legend in legends(figure):
        box = legend.get_window_extent(renderer)
        for axes, axes_box in zip(figure.axes, axes_boxes):
            check(not overlaps(box, axes_box), f"{name}: legend {[t.get_text() for t in legend.get_texts()]} "
                                                f"overlaps the data area of axes '{axes.get_title()}'")
        for text in texts:
            check(not overlaps(box, text.get_window_extent(renderer)),
                  f"{name}: legend overlaps the label '{text.get_text()}'")

    # Series colours: from the palette, one per series, distinct from each other.
    entries = series_colours(figure)
    palette = [matplotlib.colors.to_rgb(colour) for colour in plot_common.PALETTE]
    by_label = {}
    for label, colour in entries:
        check(any(numpy.allclose(colour, p, atol=0.01) for p in palette),
              f"{name}: series '{label}' has colour {colour}, not one of the palette's")
        if label in by_label:
            check(numpy.allclose(by_label[label], colour, atol=0.01), f"{name}: series '{label}' has two colours")
        by_label[label] = colour
    labels = list(by_label)
    for i, first in enumerate(labels):
        for second in labels[i + 1:]:
            distance = float(numpy.linalg.norm(numpy.subtract(by_label[first], by_label[second])))
            check(distance > 0.2, f"{name}: series '{first}' and '{second}' have colours too close "
                                  f"({by_label[first]}, {by_label[second]})")

    # Axis labels with units on every quantitative axis that shows tick labels; no tick labels that
    # collide on one axis.
    for axes in figure.axes:
        for axis, which in ((axes.xaxis, "x"), (axes.yaxis, "y")):
            ticks = visible_tick_labels(axis)
            if not ticks:
                continue
            label = axis.label.get_text().strip()
            if all(is_number(tick.get_text()) for tick in ticks):  # quantitative, not rows named by run
                check(label != "", f"{name}: {which} axis of '{axes.get_title()}' has no label")
                check(UNIT.search(label) is not None, f"{name}: {which} axis label '{label}' has no unit in ()")
            boxes = [tick.get_window_extent(renderer) for tick in ticks]
            for i in range(len(boxes)):
                for j in range(i + 1, len(boxes)):
                    check(not overlaps(boxes[i], boxes[j]),
                          f"{name}: tick labels '{ticks[i].get_text()}' and '{ticks[j].get_text()}' overlap")
    return entries


# ---------------------------------------------------------------------------------------------
# PNG files


def png_size(path):
    """(width, height) from the IHDR chunk, or None when the file is not a PNG."""
    with open(path, "rb") as handle:
        head = handle.read(24)
    if len(head) < 24 or head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def colours_present(path, colours, tolerance=6):
    """Which of `colours` (RGB 0-1) appear on some pixel of the PNG."""
    pixels = (matplotlib.image.imread(path)[:, :, :3] * 255.0).reshape(-1, 3)
    return [bool((numpy.abs(pixels - numpy.array(colour) * 255.0).max(axis=1) <= tolerance).any())
            for colour in colours]


def check_png(path, colours):
    if not check(os.path.isfile(path), f"{path} was not written"):
        return
    size = png_size(path)
    check(size is not None, f"{path} is not a PNG (signature or IHDR)")
    check(size is not None and size[0] >= 400 and size[1] >= 250, f"{path}: image too small: {size}")
    present = colours_present(path, colours)
    check(all(present), f"{path}: series colours {colours} present: {present}")


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(PLOTS_DIR, script), *args],
                          capture_output=True, text=True, timeout=300)


# ---------------------------------------------------------------------------------------------
# Tests


def expect_bad_input(root, what, result, *fragments):
    check(result.returncode == 2, f"{what}: exit {result.returncode}, expected 2 ({result.stderr!r})")
    for fragment in fragments:
        check(fragment in result.stderr, f"{what}: '{fragment}' not in the message: {result.stderr!r}")
