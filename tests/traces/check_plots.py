#!/usr/bin/python3
"""Checks the study plots (plots/*.py) on synthetic studies: what they draw (statistics over the
measured steps only, with warm-up steps that are outliers), how they draw it (legends outside
the data, distinct palette colours per series, labelled axes with units, tick labels that do not
collide, titles), the PNGs written by study_plots.py, and that bad input gives exit code 2 with a
message naming the file, the column and what was expected. The data-parallel plots have their
own checks: check_distributed_plots.py.

Usage: check_plots.py [PLOTS_DIR]   (default: the repository's plots/)
"""
import csv
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS_DIR = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "plots")
sys.path.insert(0, PLOTS_DIR)

sys.path.insert(0, HERE)

import plot_common  # noqa: E402  (selects the Agg backend before pyplot is used)
import staleness_histogram  # noqa: E402
import step_breakdown  # noqa: E402
import study_plots  # noqa: E402
import matplotlib.colors  # noqa: E402
import numpy  # noqa: E402
import plot_checks  # noqa: E402
from plot_checks import *  # noqa: E402,F401,F403  (the shared checks and synthetic studies)

def test_warmup_is_excluded(root):
    """p50/p99, the shares and the staleness counts come from the measured steps only."""
    all_steps = make_study(root)
    figures = study_plots.study_figures(root)
    drawn = breakdown_drawing(figures["step_breakdown"])
    columns, counts = histogram_drawing(figures["staleness_histogram"])
    largest_measured = 0
    for config, fits, _, _ in SMALL_STUDY:
        short = config.split("_", 2)[2]
        if not fits:
            check(short in drawn and not drawn[short], f"{config}: did not fit, but something is drawn: {drawn}")
            check(short not in counts, f"{config}: did not fit, but has a histogram row")
            continue
        rows = all_steps[config]
        measured = [row for row in rows if row["warmup"] == 0]
        times = [row["step_time_s"] for row in measured]
        p50, p99 = percentile(times, 50), percentile(times, 99)
        everything = [row["step_time_s"] for row in rows]
        check(not close(percentile(everything, 99), p99), f"{config}: the warm-up outliers must move the p99")
        got = drawn.get(short, {})
        check(close(got.get("p50", -1), p50), f"{config}: p50 drawn {got.get('p50')}, measured steps give {p50}")
        check(close(got.get("p99", -1), p99), f"{config}: p99 drawn {got.get('p99')}, measured steps give {p99}")
        check(close(got.get("mean", -1), sum(times) / len(times)), f"{config}: mean drawn {got.get('mean')}")
        check(got.get("p99", -1) >= got.get("p50", 0), f"{config}: p99 {got.get('p99')} < p50 {got.get('p50')}")
        step_total = sum(row["compute_s"] + row["visible_optimizer_s"] + row["exposed_communication_s"]
                         for row in measured)
        refresh = sum(row["refresh_wait_s"] for row in measured)
        check(close(got.get("refresh wait", -1), 100.0 * refresh / step_total, 1e-6),
              f"{config}: refresh-wait share drawn {got.get('refresh wait')}, "
              f"measured steps give {100.0 * refresh / step_total}")
        check(close(sum(got.get(label, 0) for _, label, _ in step_breakdown.PARTS), 100.0, 1e-6),
              f"{config}: the shares do not add up to 100 %: {got}")
        expected = [0] * columns
        for row in measured:
            if row["max_staleness"] < columns:
                expected[row["max_staleness"]] += 1
            largest_measured = max(largest_measured, row["max_staleness"])
        check(counts.get(short) == expected, f"{config}: staleness counts drawn {counts.get(short)}, "
                                             f"measured steps give {expected}")
        check(sum(counts.get(short, [])) == len(measured),
              f"{config}: {sum(counts.get(short, []))} steps in the histogram, {len(measured)} measured")
    check(columns == largest_measured + 1 and columns <= WARMUP_STALENESS,
          f"histogram has {columns} staleness columns; the measured steps reach {largest_measured}")
    for figure in figures.values():
        plot_common.plt.close(figure)


def test_tier_occupancy_draws_every_step(root):
    """Each run's panel: the stack's outline is its whole state at every step, warm-up included,
    the refresh buffers a band above it, and a line marks its first measured step."""
    all_steps = make_study(root)
    figure = study_plots.study_figures(root)["tier_occupancy"]
    panels = {axes.get_title().replace("\n", " "): axes for axes in figure.axes}
    for config, fits, _, _ in SMALL_STUDY:
        group, rest = plot_common.split_config(config)
        axes = panels.get(f"{group} {rest}")
        if not fits:
            check(axes is None, f"{config}: did not fit, but has a panel")
            continue
        if not check(axes is not None, f"{config}: no panel among {list(panels)}"):
            continue
        rows = all_steps[config]
        unit = UNIT.search(axes.get_ylabel())
        divisors = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": GIB, "TiB": 1024 ** 4}
        divisor = divisors.get(unit.group(1) if unit else "")
        if not check(divisor is not None, f"{config}: no byte unit in the label '{axes.get_ylabel()}'"):
            continue
        totals = [(row["state_device_bytes"] + row["state_host_bytes"] + row["state_nvme_bytes"]) / divisor
                  for row in rows]
        low, high = axes.get_xlim()
        check(low <= rows[0]["step"] and high >= rows[-1]["step"] + 1,
              f"{config}: steps {rows[0]['step']}-{rows[-1]['step']} do not all fit in the step axis {low}-{high}")
        outline = next(line for line in axes.get_lines() if line.get_label() == "_total")
        drawn = list(outline.get_ydata())
        check(len(drawn) == len(rows) + 1 and all(close(a, b) for a, b in zip(drawn, totals)),
              f"{config}: outline {drawn} is not the state per step {totals}")
        # The refresh buffers are a band of their own above the state, present exactly when the
        # run held some: not counted in the state's outline.
        bands = [c for c in axes.collections if c.get_label() == "_buffers"]
        held = any(row["shadow_bytes"] > 0 for row in rows)
        check(len(bands) == (1 if held else 0), f"{config}: {len(bands)} refresh-buffer bands, run held buffers: {held}")
        if bands:
            tops = bands[0].get_paths()[0].vertices[:, 1]
            most = max((row["state_device_bytes"] + row["state_host_bytes"] + row["state_nvme_bytes"] +
                        row["shadow_bytes"]) / divisor for row in rows)
            check(close(float(tops.max()), most), f"{config}: buffer band tops at {tops.max()}, expected {most}")
        first_measured = next(row["step"] for row in rows if row["warmup"] == 0)
        marks = [line.get_xdata()[0] for line in axes.get_lines() if line.get_label() == "_measured"]
        check(marks == [first_measured], f"{config}: first measured step marked at {marks}, expected "
                                         f"[{first_measured}]")
    plot_common.plt.close(figure)


def test_p99_is_never_below_p50():
    """Whatever the order of the steps, the drawn p99 is at least the drawn p50."""
    generator = numpy.random.default_rng(7)
    for trial in range(20):
        count = int(generator.integers(1, 60))
        times = generator.lognormal(0.0, 2.0, count)
        warmup = generator.integers(0, 2, count)
        warmup[generator.integers(0, count)] = 0
        steps = {"warmup": warmup.astype(float), "measured": warmup == 0, "step_time_s": times,
                 "compute_s": times * 0.3, "visible_optimizer_s": times * 0.7, "exposed_communication_s": times * 0.0,
                 "refresh_wait_s": times * 0.1,
                 "state_move_wait_s": times * 0.8}  # waits larger than the visible time: the rest clamps to 0
        stats = step_breakdown.step_stats(steps, f"trial {trial}")
        check(stats["p99_s"] >= stats["p50_s"], f"trial {trial}: p99 {stats['p99_s']} < p50 {stats['p50_s']}")
        check(stats["parts"]["other_optimizer_s"] == 0.0, f"trial {trial}: other optimizer time not clamped at 0")
        check(stats["measured_steps"] == int((warmup == 0).sum()), f"trial {trial}: measured step count")


def test_figures_are_readable(root):
    """Style properties of every plot, on a small study and on one with many runs and a wide spread."""
    for label, study in (("small", SMALL_STUDY), ("many runs", many_runs_study())):
        directory = os.path.join(root, label.replace(" ", "-"))
        make_study(directory, study)
        figures = study_plots.study_figures(directory)
        for name, figure in figures.items():
            entries = check_figure_style(figure, f"{label}/{name}")
            if name == "step_breakdown":
                check(len(entries) == 8, f"{label}/{name}: expected p50, mean, p99 and five parts in the "
                                         f"legends, found {[entry for entry, _ in entries]}")
            if name == "tier_occupancy":
                check({"device", "host memory", "NVMe"} <= {entry for entry, _ in entries},
                      f"{label}/{name}: tiers missing from the legend: {entries}")
        times = next(axes for axes in figures["step_breakdown"].axes if axes.get_xscale() == "log")
        low, high = times.get_xlim()
        for config, values in breakdown_drawing(figures["step_breakdown"]).items():
            for key in ("p50", "mean", "p99"):
                if key in values:
                    check(low <= values[key] <= high, f"{label}: {config} {key} {values[key]} outside {low}-{high}")
        if label == "many runs":
            check(high / low >= 1e6, f"{label}: the time axis must span the runs' 7 decades, spans {low}-{high}")
        for figure in figures.values():
            plot_common.plt.close(figure)


def test_study_renders(root):
    make_study(root)
    figures = study_plots.study_figures(root)
    colours = {name: [colour for _, colour in series_colours(figure)] for name, figure in figures.items()}
    for figure in figures.values():
        plot_common.plt.close(figure)
    result = run("study_plots.py", root)
    check(result.returncode == 0, f"study_plots.py failed ({result.returncode}): {result.stderr}")
    expected = [os.path.join(root, "plots", name + ".png") for name in study_plots.PLOTS]
    printed = [os.path.abspath(line) for line in result.stdout.split()]
    check(printed == [os.path.abspath(path) for path in expected], f"printed paths: {result.stdout!r}")
    check("gh200_tiny_soap_device_s0" in result.stderr and "did not fit" in result.stderr,
          f"no note about the configuration that did not fit: {result.stderr!r}")
    for name, path in zip(study_plots.PLOTS, expected):
        check_png(path, colours[name])
    # The histogram has no legend: its colour bar runs up to the darkest of its blues.
    check_png(expected[2], [staleness_histogram.SHARE_COLOURS(1.0)[:3]])
    plots_dir = os.path.join(root, "plots")
    leftovers = [name for name in os.listdir(plots_dir) if not name.endswith(".png")]
    check(not leftovers, f"temporary files left in plots/: {leftovers}")


def test_nothing_fits(root):
    make_study(root, [(config, False, "device 9.0 GiB short", None) for config, _, _, _ in SMALL_STUDY])
    result = run("study_plots.py", root)
    check(result.returncode == 0, f"a study where nothing fits: exit {result.returncode}: {result.stderr}")
    for name in study_plots.PLOTS:
        check(os.path.isfile(os.path.join(root, "plots", name + ".png")), f"nothing fits: no {name}.png")


def test_missing_table_column(root):
    make_study(root, table_columns=[column for column in TABLE_COLUMNS if column != "run_dir"])
    expect_bad_input(root, "missing table column", run("study_plots.py", root), "table.csv", "'run_dir'", "missing")


def test_missing_steps_columns(root):
    for column in ("refresh_wait_s", "warmup", "state_host_bytes", "shadow_bytes", "max_staleness"):
        directory = os.path.join(root, column)
        make_study(directory, drop_steps_column=column)
        expect_bad_input(directory, f"steps.csv without {column}", run("study_plots.py", directory),
                         "steps.csv", f"'{column}'", "missing")


def test_bad_steps_values(root):
    def cell(column, row, value):
        def edit(columns, lines):
            lines[row][columns.index(column)] = value
        return edit

    def all_warmup(columns, lines):
        for line in lines:
            line[columns.index("warmup")] = 1

    cases = (
        ("warmup 2", cell("warmup", 4, 2), ["steps.csv", "row 5", "'warmup'", "expected 0 or 1"]),
        ("a word for a time", cell("step_time_s", 6, "fast"), ["steps.csv", "row 7", "'step_time_s'",
                                                                "expected a number", "fast"]),
        ("a negative wait", cell("refresh_wait_s", 8, -1.0), ["steps.csv", "row 9", "'refresh_wait_s'", ">= 0"]),
        ("warm-up only", all_warmup, ["steps.csv", "'warmup'", "at least one measured step"]),
    )
    for index, (what, edit, fragments) in enumerate(cases):
        directory = os.path.join(root, str(index))
        make_study(directory, edit_steps=edit)
        expect_bad_input(directory, what, run("study_plots.py", directory), *fragments)

    directory = os.path.join(root, "binary")
    make_study(directory)
    with open(os.path.join(directory, "runs", "gh200_tiny_soap_host_s2", "steps.csv"), "wb") as handle:
        handle.write(b"step,warmup\n\xff\xfe\x00\x01\n")
    expect_bad_input(directory, "a binary steps.csv", run("study_plots.py", directory),
                     "gh200_tiny_soap_host_s2/steps.csv", "file", "expected UTF-8 CSV text")


def test_single_scripts(root):
    make_study(root)
    steps_a = os.path.join(root, "runs", "gh200_tiny_soap_host_s2", "steps.csv")
    steps_b = os.path.join(root, "runs", "gh200_tiny_soap_nvme_s4", "steps.csv")
    for script in ("step_breakdown.py", "tier_occupancy.py", "staleness_histogram.py"):
        out = os.path.join(root, script.replace(".py", ".png"))
        result = run(script, steps_a, steps_b, out, "--label", "A", "--label", "B")
        check(result.returncode == 0, f"{script} failed: {result.stderr}")
        check(os.path.isfile(out) and png_size(out) is not None, f"{script}: no PNG at {out}")
        result = run(script, steps_a, out, "--label", "A", "--label", "B")
        expect_bad_input(root, f"{script} with two labels for one run", result, "--label")
        result = run(script, os.path.join(root, "none.csv"), out)
        expect_bad_input(root, f"{script} on a missing file", result, "none.csv", "file")


def test_helpers():
    check(staleness_histogram.staleness_counts([0, 1, 2, 0, 1.0], 3) == [2, 2, 1, 0],
          "staleness_counts bins whole steps")
    check(plot_common.split_config("gh200-480gb_olmo2-7b_soap_tiered_s0") == ("gh200-480gb · olmo2-7b",
                                                                            "soap_tiered_s0"),
          "split_config: hw and model make the group")
    check(plot_common.split_config("host-s2") == ("", "host-s2"), "split_config: a name that is not a run name")
    rows = plot_common.grouped_rows(["a_b_x", "c_d_y", "a_b_z"])
    check(rows == [("group", "a · b", None), ("run", "x", 0), ("run", "z", 2), ("group", "c · d", None),
                   ("run", "y", 1)], f"grouped_rows keeps first-seen group order: {rows}")
    wrapped = plot_common.wrap_name("gh200-480gb_olmo2-7b_soap_tiered_s0_steps30_warmup2", 20)
    check(wrapped.replace("\n", "") == "gh200-480gb_olmo2-7b_soap_tiered_s0_steps30_warmup2"
          and max(len(line) for line in wrapped.split("\n")) <= 21, f"wrap_name: {wrapped!r}")
    check([plot_common.seconds_text(v) for v in (0.0001, 0.002, 0.5, 20.0, 1000.0)] ==
          ["0.0001", "0.002", "0.5", "20", "1000"], "seconds_text")


# ---------------------------------------------------------------------------------------------
def main():
    test_helpers()
    test_p99_is_never_below_p50()
    for test in (test_warmup_is_excluded, test_tier_occupancy_draws_every_step, test_figures_are_readable,
                 test_study_renders, test_nothing_fits, test_missing_table_column, test_missing_steps_columns,
                 test_bad_steps_values, test_single_scripts):
        with tempfile.TemporaryDirectory(prefix="asteria-plots-") as root:
            test(root)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("plots: all checks passed")


if __name__ == "__main__":
    main()
